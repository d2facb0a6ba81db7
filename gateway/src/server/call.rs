//! Running one request message through the synchronous Thrift processor.
//!
//! Owns [`Dispatcher`]: it bounds concurrent calls with a semaphore, runs the processor
//! on tokio's blocking pool or, for quick ones, the runtime worker at hand (HTTP), or
//! on the connection's own thread (framed and unframed) with in-memory transports holding exactly one message, sets the
//! current connection id around it, and hands back the reply bytes. It also builds the
//! EXCEPTION replies the server itself sends for malformed messages. It does not touch
//! sockets or framing.

use std::sync::Arc;

use bytes::Bytes;
use tabula_thrift::input::{binary_input, compact_input};
use thrift::protocol::{
    TBinaryOutputProtocol, TCompactOutputProtocol, TFieldIdentifier, TMessageIdentifier,
    TMessageType, TOutputProtocol, TStructIdentifier, TType,
};
use thrift::server::TProcessor;
use thrift::{ApplicationError, ApplicationErrorKind};
use tokio::sync::Semaphore;

use crate::server::frame::{scan_message, Scan};
use crate::server::identity::{CallScope, ConnectionId};
use crate::server::stats::ServerStats;
use crate::server::wire::{MessageHeader, WireProtocol};

/// The processor type the server runs.
pub type SharedProcessor = Arc<dyn TProcessor + Send + Sync>;

/// What a call produced.
#[derive(Debug)]
pub(crate) enum CallReply {
    /// One reply message to send back.
    Message(Vec<u8>),
    /// Nothing to send (a oneway call).
    Nothing,
}

/// Why a call produced no usable reply.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    #[error("processor failed without writing a reply: {0}")]
    NoReply(String),
    #[error("processor panicked")]
    Panicked,
    #[error("the server is no longer running calls")]
    Closed,
}

/// Runs calls on the blocking pool, at most `max_concurrent_calls` at a time.
pub(crate) struct Dispatcher {
    processor: SharedProcessor,
    permits: Arc<Semaphore>,
    stats: Arc<ServerStats>,
}

impl Dispatcher {
    pub(crate) fn new(
        processor: SharedProcessor,
        max_concurrent_calls: usize,
        stats: Arc<ServerStats>,
    ) -> Self {
        let slots = max_concurrent_calls.clamp(1, Semaphore::MAX_PERMITS);
        Dispatcher {
            processor,
            permits: Arc::new(Semaphore::new(slots)),
            stats,
        }
    }

    /// Processes one whole request message and returns its reply.
    pub(crate) async fn call(
        &self,
        connection: ConnectionId,
        protocol: WireProtocol,
        request: Bytes,
    ) -> Result<CallReply, CallError> {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| CallError::Closed)?;
        let processor = Arc::clone(&self.processor);
        self.stats.call_started();
        let joined = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let _scope = CallScope::enter(connection);
            process_one(processor.as_ref(), protocol, request)
        })
        .await;
        self.stats.call_finished();
        let outcome = match joined {
            Ok(outcome) => outcome,
            Err(err) if err.is_panic() => Err(CallError::Panicked),
            Err(_) => Err(CallError::Closed),
        };
        if outcome.is_err() {
            self.stats.call_failed();
        }
        outcome
    }
}

impl Dispatcher {
    /// Runs `request` on the calling thread, a runtime worker, if a call slot is free
    /// right now (for quick calls only: the worker serves other connections too);
    /// gives `request` back otherwise, for [`Dispatcher::call`].
    pub(crate) fn call_here(
        &self,
        connection: ConnectionId,
        protocol: WireProtocol,
        request: Bytes,
    ) -> Result<Result<CallReply, CallError>, Bytes> {
        let Ok(permit) = self.permits.try_acquire() else {
            return Err(request);
        };
        Ok(self.run_counted(permit, connection, || {
            process_one(self.processor.as_ref(), protocol, request)
        }))
    }

    /// Processes one whole request message on the calling thread (a connection's own
    /// thread, not a runtime worker) and appends its reply to `output` (which the
    /// connection reuses from call to call, so a reply does not grow a new buffer).
    /// Returns whether a reply was written. `runtime` is used only to wait for a call
    /// slot.
    pub(crate) fn call_blocking(
        &self,
        connection: ConnectionId,
        protocol: WireProtocol,
        request: Bytes,
        runtime: &tokio::runtime::Handle,
        output: &mut Vec<u8>,
    ) -> Result<bool, CallError> {
        // A borrowed permit: cloning the semaphore's `Arc` would bump its shared
        // reference count on every call.
        let permit = match self.permits.try_acquire() {
            Ok(p) => p,
            Err(tokio::sync::TryAcquireError::NoPermits) => runtime
                .block_on(self.permits.acquire())
                .map_err(|_| CallError::Closed)?,
            Err(tokio::sync::TryAcquireError::Closed) => return Err(CallError::Closed),
        };
        self.run_counted(permit, connection, || {
            process_into(self.processor.as_ref(), protocol, request, output)
        })
    }

    /// Runs `call` on this thread holding `permit`, as `connection`'s call, counted
    /// in the stats; a panic is the call's failure.
    fn run_counted<T>(
        &self,
        permit: tokio::sync::SemaphorePermit<'_>,
        connection: ConnectionId,
        call: impl FnOnce() -> Result<T, CallError>,
    ) -> Result<T, CallError> {
        self.stats.call_started();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _scope = CallScope::enter(connection);
            call()
        }))
        .unwrap_or(Err(CallError::Panicked));
        drop(permit);
        self.stats.call_finished();
        if outcome.is_err() {
            self.stats.call_failed();
        }
        outcome
    }
}

/// Runs the processor over one message held in memory.
fn process_one(
    processor: &(dyn TProcessor + Send + Sync),
    protocol: WireProtocol,
    request: Bytes,
) -> Result<CallReply, CallError> {
    let mut output = Vec::new();
    match process_into(processor, protocol, request, &mut output)? {
        true => Ok(CallReply::Message(output)),
        false => Ok(CallReply::Nothing),
    }
}

/// Runs the processor over one message held in memory, appending its reply to
/// `output`; returns whether there is one. Bytes already in `output` (a frame's length
/// prefix) are left alone, and a failed call leaves only them.
fn process_into(
    processor: &(dyn TProcessor + Send + Sync),
    protocol: WireProtocol,
    request: Bytes,
    output: &mut Vec<u8>,
) -> Result<bool, CallError> {
    let start = output.len();
    // The hardened readers decode straight from the message's bytes, checking every
    // length against what is left before allocating, and copy a string's bytes once
    // (no zero-filled buffer read into).
    let result = match protocol {
        WireProtocol::Binary => {
            // Both header forms are accepted; replies are always strict.
            let mut i_prot = binary_input(&request);
            let mut o_prot = TBinaryOutputProtocol::new(&mut *output, true);
            processor.process(&mut i_prot, &mut o_prot)
        }
        WireProtocol::Compact => {
            let mut i_prot = compact_input(&request);
            let mut o_prot = TCompactOutputProtocol::new(&mut *output);
            processor.process(&mut i_prot, &mut o_prot)
        }
    };
    let reply = output.get(start..).unwrap_or_default();
    match result {
        Ok(()) => Ok(!reply.is_empty()),
        Err(err) => {
            // The processor may have written an EXCEPTION before failing; send it only if
            // it is one whole message, so the client's stream stays in sync.
            let whole = !reply.is_empty()
                && matches!(
                    scan_message(protocol, reply, usize::MAX),
                    Scan::Complete(n) if n == reply.len()
                );
            if whole {
                tracing::debug!(error = %err, "processor failed after writing an exception");
                Ok(true)
            } else {
                output.truncate(start);
                Err(CallError::NoReply(err.to_string()))
            }
        }
    }
}

/// Encodes an EXCEPTION reply (`TApplicationException` of kind PROTOCOL_ERROR) answering
/// the message whose header is `header`. `None` for oneway messages, which get no reply.
pub(crate) fn protocol_error_reply(
    protocol: WireProtocol,
    header: &MessageHeader,
    reason: &str,
) -> Option<Vec<u8>> {
    if header.kind == TMessageType::OneWay {
        return None;
    }
    let mut output: Vec<u8> = Vec::new();
    let error = ApplicationError::new(
        ApplicationErrorKind::ProtocolError,
        format!("malformed {} message: {reason}", header.name),
    );
    let ident = TMessageIdentifier::new(header.name.clone(), TMessageType::Exception, header.seqid);
    let written = match protocol {
        WireProtocol::Binary => write_exception(
            &mut TBinaryOutputProtocol::new(&mut output, true),
            &ident,
            &error,
        ),
        WireProtocol::Compact => write_exception(
            &mut TCompactOutputProtocol::new(&mut output),
            &ident,
            &error,
        ),
    };
    written.ok().map(|()| output)
}

/// Encodes the REPLY of a call that failed with HBase's IOError (`TIOError` in
/// Thrift2): a result struct whose field 1 is the exception, with its message in its
/// field 1. Every HBase call that writes declares its IOError as field 1 in both
/// services. `None` only if encoding fails.
pub(crate) fn io_error_reply(
    protocol: WireProtocol,
    method: &str,
    seqid: i32,
    message: &str,
) -> Option<Vec<u8>> {
    let mut output: Vec<u8> = Vec::new();
    let ident = TMessageIdentifier::new(method, TMessageType::Reply, seqid);
    let written = match protocol {
        WireProtocol::Binary => write_io_error(
            &mut TBinaryOutputProtocol::new(&mut output, true),
            &ident,
            message,
        ),
        WireProtocol::Compact => write_io_error(
            &mut TCompactOutputProtocol::new(&mut output),
            &ident,
            message,
        ),
    };
    written.ok().map(|()| output)
}

fn write_io_error(
    o_prot: &mut dyn TOutputProtocol,
    ident: &TMessageIdentifier,
    message: &str,
) -> thrift::Result<()> {
    o_prot.write_message_begin(ident)?;
    o_prot.write_struct_begin(&TStructIdentifier::new("result"))?;
    o_prot.write_field_begin(&TFieldIdentifier::new("io", TType::Struct, 1))?;
    o_prot.write_struct_begin(&TStructIdentifier::new("IOError"))?;
    o_prot.write_field_begin(&TFieldIdentifier::new("message", TType::String, 1))?;
    o_prot.write_string(message)?;
    o_prot.write_field_end()?;
    o_prot.write_field_stop()?;
    o_prot.write_struct_end()?;
    o_prot.write_field_end()?;
    o_prot.write_field_stop()?;
    o_prot.write_struct_end()?;
    o_prot.write_message_end()?;
    o_prot.flush()
}

fn write_exception(
    o_prot: &mut dyn TOutputProtocol,
    ident: &TMessageIdentifier,
    error: &ApplicationError,
) -> thrift::Result<()> {
    o_prot.write_message_begin(ident)?;
    thrift::Error::write_application_error_to_out_protocol(error, o_prot)?;
    o_prot.write_message_end()?;
    o_prot.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use thrift::protocol::{TBinaryInputProtocol, TInputProtocol, TType};

    struct Echo;

    impl TProcessor for Echo {
        fn process(
            &self,
            i: &mut dyn TInputProtocol,
            o: &mut dyn TOutputProtocol,
        ) -> thrift::Result<()> {
            let ident = i.read_message_begin()?;
            i.skip(TType::Struct)?;
            i.read_message_end()?;
            if ident.name == "silent" {
                return Ok(());
            }
            let reply =
                TMessageIdentifier::new(ident.name, TMessageType::Reply, ident.sequence_number);
            o.write_message_begin(&reply)?;
            o.write_struct_begin(&thrift::protocol::TStructIdentifier::new("r"))?;
            o.write_field_stop()?;
            o.write_struct_end()?;
            o.write_message_end()?;
            o.flush()
        }
    }

    fn request(name: &str, seqid: i32, strict: bool) -> Bytes {
        let mut buf = Vec::new();
        let mut o = TBinaryOutputProtocol::new(&mut buf, strict);
        let ident = TMessageIdentifier::new(name, TMessageType::Call, seqid);
        let _ = o.write_message_begin(&ident);
        let _ = o.write_field_stop();
        Bytes::from(buf)
    }

    fn parse_reply(bytes: &[u8]) -> TMessageIdentifier {
        let mut i = TBinaryInputProtocol::new(bytes, true);
        match i.read_message_begin() {
            Ok(ident) => ident,
            Err(err) => panic!("reply header unreadable: {err}"),
        }
    }

    #[test]
    fn non_strict_requests_get_strict_replies() {
        let reply = process_one(&Echo, WireProtocol::Binary, request("ping", 41, false));
        let Ok(CallReply::Message(bytes)) = reply else {
            panic!("expected a reply, got {reply:?}");
        };
        assert_eq!(bytes.get(..2), Some(&[0x80, 0x01][..]));
        let ident = parse_reply(&bytes);
        assert_eq!(ident.name, "ping");
        assert_eq!(ident.sequence_number, 41);
        assert_eq!(ident.message_type, TMessageType::Reply);
    }

    #[test]
    fn processor_writing_nothing_yields_no_reply() {
        let reply = process_one(&Echo, WireProtocol::Binary, request("silent", 1, true));
        assert!(matches!(reply, Ok(CallReply::Nothing)));
    }

    #[test]
    fn processor_error_without_output_is_reported() {
        let garbage = Bytes::from_static(&[0x80, 0x01, 0x00, 0x01, 0, 0]);
        let reply = process_one(&Echo, WireProtocol::Binary, garbage);
        assert!(matches!(reply, Err(CallError::NoReply(_))));
    }

    #[test]
    fn protocol_error_reply_is_a_strict_exception_with_the_request_identity() {
        let header = MessageHeader {
            name: "scannerGet".into(),
            kind: TMessageType::Call,
            seqid: 9,
            strict: false,
            len: 0,
        };
        let Some(bytes) = protocol_error_reply(WireProtocol::Binary, &header, "bad type") else {
            panic!("no reply");
        };
        let mut i = TBinaryInputProtocol::new(&bytes[..], true);
        let ident = i.read_message_begin().map_err(|e| e.to_string());
        let ident = match ident {
            Ok(ident) => ident,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(ident.message_type, TMessageType::Exception);
        assert_eq!(ident.sequence_number, 9);
        let error = thrift::Error::read_application_error_from_in_protocol(&mut i);
        match error {
            Ok(app) => {
                assert_eq!(app.kind, ApplicationErrorKind::ProtocolError);
                assert!(app.message.contains("bad type"));
            }
            Err(err) => panic!("{err}"),
        }
    }

    #[test]
    fn oneway_messages_get_no_protocol_error_reply() {
        let header = MessageHeader {
            name: "fire".into(),
            kind: TMessageType::OneWay,
            seqid: 0,
            strict: true,
            len: 0,
        };
        assert!(protocol_error_reply(WireProtocol::Compact, &header, "x").is_none());
    }

    /// Reads an IOError reply back: (method, seqid, message).
    fn read_io_error(i: &mut dyn TInputProtocol) -> (String, i32, String) {
        let mut step = || -> thrift::Result<(String, i32, String)> {
            let ident = i.read_message_begin()?;
            assert_eq!(ident.message_type, TMessageType::Reply);
            i.read_struct_begin()?;
            let outer = i.read_field_begin()?;
            assert_eq!((outer.id, outer.field_type), (Some(1), TType::Struct));
            i.read_struct_begin()?;
            let inner = i.read_field_begin()?;
            assert_eq!((inner.id, inner.field_type), (Some(1), TType::String));
            let message = i.read_string()?;
            i.read_field_end()?;
            assert_eq!(i.read_field_begin()?.field_type, TType::Stop);
            i.read_struct_end()?;
            i.read_field_end()?;
            assert_eq!(i.read_field_begin()?.field_type, TType::Stop);
            i.read_struct_end()?;
            i.read_message_end()?;
            Ok((ident.name, ident.sequence_number, message))
        };
        match step() {
            Ok(parts) => parts,
            Err(err) => panic!("not an IOError reply: {err}"),
        }
    }

    #[test]
    fn io_error_replies_carry_the_exception_as_field_one_in_both_protocols() {
        for protocol in [WireProtocol::Binary, WireProtocol::Compact] {
            let Some(bytes) = io_error_reply(protocol, "mutateRow", 77, "disk gone") else {
                panic!("no reply");
            };
            assert!(
                matches!(scan_message(protocol, &bytes, usize::MAX), Scan::Complete(n) if n == bytes.len()),
                "one whole message"
            );
            let parts = match protocol {
                WireProtocol::Binary => {
                    read_io_error(&mut TBinaryInputProtocol::new(&bytes[..], true))
                }
                WireProtocol::Compact => read_io_error(
                    &mut thrift::protocol::TCompactInputProtocol::new(&bytes[..]),
                ),
            };
            assert_eq!(
                parts,
                ("mutateRow".to_string(), 77, "disk gone".to_string())
            );
        }
    }
}
