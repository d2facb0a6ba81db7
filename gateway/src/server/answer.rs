//! Running one request message and preparing its reply bytes, the same way on a
//! connection's own thread (`threaded`) and on an event loop (`event_loop`).
//!
//! Owns: [`Route`] (what the options say about a request's method: may it defer its
//! synced writes, may it run on an event loop), [`CallSite::answer`] (run the call
//! in a deferral scope when it may defer, then hand its reply to the acknowledger or
//! give it back framed) and the framing of reply bytes.
//! Must not: read or write sockets, or wait for the acknowledger.

use std::sync::Arc;

use bytes::Bytes;
use thrift::protocol::TMessageType;

use tabula_storage::deferred::{DeferScope, DeferredWrite};

use crate::server::ack::{ConnAck, FailureReply, Handoff, ReplyTo};
use crate::server::call::protocol_error_reply;
use crate::server::conn::{ConnError, ConnShared};
use crate::server::detect::{Transport, WireMode};
use crate::server::identity::ConnectionId;
use crate::server::options::ServerOptions;
use crate::server::wire::{peek_header, MessageHeader, WireProtocol};

/// Bytes of a frame's length prefix.
pub(crate) const FRAME_PREFIX: usize = 4;
/// Longest method name looked at when routing a request.
const MAX_ROUTED_NAME: usize = 64;

/// What the server's options say about one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Route {
    /// The method (as the options spell it) and sequence id, if the call may defer
    /// its synced writes to the acknowledger.
    pub(crate) deferrable: Option<(&'static str, i32)>,
    /// Whether the call is quick enough to run on an event loop.
    pub(crate) on_loop: bool,
}

impl Route {
    /// Routes `request` by its method name ([`ServerOptions::deferrable_calls`] and
    /// [`ServerOptions::loop_calls`]; a call that may defer may also run on a loop). A request whose header cannot be read runs
    /// where it is (the processor answers it with an exception).
    pub(crate) fn of(opts: &ServerOptions, protocol: WireProtocol, request: &[u8]) -> Route {
        let Ok(header) = peek_header(protocol, request, MAX_ROUTED_NAME) else {
            return Route {
                deferrable: None,
                on_loop: true,
            };
        };
        let deferrable = match header.kind {
            TMessageType::Call => opts
                .deferrable_calls
                .iter()
                .find(|c| **c == header.name)
                .map(|method| (*method, header.seqid)),
            _ => None,
        };
        Route {
            deferrable,
            on_loop: deferrable.is_some() || opts.loop_calls.contains(&header.name),
        }
    }
}

/// How a call was answered.
pub(crate) enum Answer {
    /// The reply, framed, to be sent now.
    Reply(Vec<u8>),
    /// The reply went to the acknowledger with the call's deferred writes; the
    /// connection must settle its [`ConnAck`] before its next call.
    HandedOver,
    /// No reply (a oneway call); the buffer comes back for reuse.
    Nothing(Vec<u8>),
}

/// Where calls of one connection run: what [`CallSite::answer`] needs of it.
pub(crate) struct CallSite<'a> {
    pub(crate) shared: &'a ConnShared,
    pub(crate) connection: ConnectionId,
    pub(crate) mode: WireMode,
    pub(crate) runtime: &'a tokio::runtime::Handle,
    pub(crate) ack: &'a Arc<ConnAck>,
}

impl CallSite<'_> {
    /// Runs `request` on the calling thread with `reply` (cleared here) as the reply
    /// buffer. A call listed in `route.deferrable` runs in a deferral scope; if it
    /// answered and deferred writes, its reply goes to the acknowledger.
    pub(crate) fn answer(
        &self,
        protocol: WireProtocol,
        request: Bytes,
        route: Route,
        mut reply: Vec<u8>,
    ) -> Result<Answer, ConnError> {
        reply.clear();
        let prefix = frame_prefix_len(self.mode);
        reply.resize(prefix, 0);
        let (answered, deferred) = run_deferring(
            route,
            || {
                self.shared.dispatcher.call_blocking(
                    self.connection,
                    protocol,
                    request,
                    self.runtime,
                    &mut reply,
                )
            },
            |answered| matches!(answered, Ok(true)),
        );
        if !answered? {
            return Ok(Answer::Nothing(reply));
        }
        set_frame_length(self.mode, &mut reply)?;
        match route.deferrable {
            Some(call) if !deferred.is_empty() => {
                let failure = FailureReply::of(call, protocol, self.mode);
                let to = ReplyTo::Connection(Arc::clone(self.ack));
                self.shared
                    .ack
                    .hand_over(Handoff::new(deferred, reply, failure, to));
                Ok(Answer::HandedOver)
            }
            _ => Ok(Answer::Reply(reply)),
        }
    }
}

/// Runs `call`, in a deferral scope when `route` may defer its synced writes, and
/// returns its outcome with the writes it deferred when `replied` says the outcome
/// is a reply (they go to the acknowledger with it). Writes a failed or oneway
/// call deferred are completed as the scope drops, before this returns.
pub(crate) fn run_deferring<T>(
    route: Route,
    call: impl FnOnce() -> T,
    replied: impl FnOnce(&T) -> bool,
) -> (T, Vec<DeferredWrite>) {
    let scope = route.deferrable.map(|_| DeferScope::enter());
    let outcome = call();
    let deferred = match &scope {
        Some(scope) if replied(&outcome) => scope.take(),
        _ => Vec::new(),
    };
    drop(scope);
    (outcome, deferred)
}

/// Bytes a reply buffer starts with before the message: a frame's length.
pub(crate) fn frame_prefix_len(mode: WireMode) -> usize {
    match mode.transport {
        Transport::Framed => FRAME_PREFIX,
        Transport::Unframed | Transport::Http => 0,
    }
}

/// Fills in a framed reply's length prefix (nothing for other transports).
pub(crate) fn set_frame_length(mode: WireMode, reply: &mut [u8]) -> Result<(), ConnError> {
    if let Transport::Framed = mode.transport {
        let body = reply.len().saturating_sub(FRAME_PREFIX);
        let len = u32::try_from(body)
            .ok()
            .filter(|len| i32::try_from(*len).is_ok())
            .ok_or(ConnError::ReplyTooLarge(body))?;
        if let Some(prefix) = reply.get_mut(..FRAME_PREFIX) {
            prefix.copy_from_slice(&len.to_be_bytes());
        }
    }
    Ok(())
}

/// The framed exception answering a malformed message whose header could be read
/// (`None` when there is nothing to answer: no header, or a oneway message).
pub(crate) fn malformed_reply(
    mode: WireMode,
    protocol: WireProtocol,
    header: Option<&MessageHeader>,
    error: &str,
) -> Result<Option<Vec<u8>>, ConnError> {
    let Some(mut reply) = header.and_then(|h| protocol_error_reply(protocol, h, error)) else {
        return Ok(None);
    };
    reply.splice(0..0, std::iter::repeat_n(0, frame_prefix_len(mode)));
    set_frame_length(mode, &mut reply)?;
    Ok(Some(reply))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::detect::WireMode;

    fn call(name: &str, kind: TMessageType) -> Vec<u8> {
        use thrift::protocol::{TBinaryOutputProtocol, TMessageIdentifier, TOutputProtocol};
        let mut out = Vec::new();
        {
            let mut p = TBinaryOutputProtocol::new(&mut out, true);
            let _ = p.write_message_begin(&TMessageIdentifier::new(name, kind, 7));
        }
        out
    }

    fn opts() -> ServerOptions {
        ServerOptions {
            deferrable_calls: &["mutateRow"],
            loop_calls: &["get"],
            ..ServerOptions::default()
        }
    }

    #[test]
    fn routes_follow_the_option_lists() {
        let o = opts();
        let r = Route::of(
            &o,
            WireProtocol::Binary,
            &call("mutateRow", TMessageType::Call),
        );
        assert_eq!(r.deferrable, Some(("mutateRow", 7)));
        assert!(r.on_loop);
        let r = Route::of(&o, WireProtocol::Binary, &call("get", TMessageType::Call));
        assert_eq!(r.deferrable, None);
        assert!(r.on_loop);
        let r = Route::of(
            &o,
            WireProtocol::Binary,
            &call("scannerGet", TMessageType::Call),
        );
        assert!(!r.on_loop);
        // Only calls defer: a oneway message has no reply to hand over.
        let r = Route::of(
            &o,
            WireProtocol::Binary,
            &call("mutateRow", TMessageType::OneWay),
        );
        assert_eq!(r.deferrable, None);
    }

    #[test]
    fn frame_length_is_written_only_for_framed_replies() {
        let framed = WireMode {
            transport: Transport::Framed,
            protocol: WireProtocol::Binary,
        };
        let mut reply = vec![0, 0, 0, 0, 9, 9, 9];
        set_frame_length(framed, &mut reply).unwrap();
        assert_eq!(reply, vec![0, 0, 0, 3, 9, 9, 9]);
        let unframed = WireMode {
            transport: Transport::Unframed,
            protocol: WireProtocol::Binary,
        };
        let mut reply = vec![9, 9];
        set_frame_length(unframed, &mut reply).unwrap();
        assert_eq!(reply, vec![9, 9]);
    }
}
