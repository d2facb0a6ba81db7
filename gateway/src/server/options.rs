//! Tunables of the Thrift connection server.
//!
//! Owns [`ServerOptions`] and its defaults. It holds configuration only; reading it from
//! files or flags belongs to the binary.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::server::identity::ConnectionObserver;
use crate::server::tls::TlsConfig;

/// Default limit on one message (frame, unframed message or HTTP body): 64 MiB.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 64 * 1024 * 1024;
/// Default number of calls processed at once across all connections.
pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 256;
/// Default bound on waiting for connections to finish at shutdown.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// Default number of event-loop threads serving framed and unframed connections.
pub const DEFAULT_EVENT_LOOPS: usize = 2;
/// Default idle time before TCP keepalive probes start.
pub const DEFAULT_TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// Options of [`crate::server::ThriftServer`].
#[derive(Clone)]
pub struct ServerOptions {
    /// Largest message accepted, in bytes. A bigger frame, unframed message or HTTP body
    /// closes its connection (HTTP: answered 413 first). Default 64 MiB.
    pub max_frame_size: usize,
    /// Close a connection after it has sent nothing for this long while no call of it is
    /// running. Default `None`: idle connections are kept open forever.
    pub idle_timeout: Option<Duration>,
    /// Calls processed at once across all connections (at least 1); further calls wait
    /// for a slot, so a flood cannot exhaust the blocking pool. Default 256.
    pub max_concurrent_calls: usize,
    /// How long shutdown waits for in-flight calls and connections before cutting them
    /// off. Default 10 s.
    pub shutdown_grace: Duration,
    /// TCP keepalive idle time on accepted sockets; `None` leaves keepalive off.
    /// Default 60 s.
    pub tcp_keepalive: Option<Duration>,
    /// Told about every connection's open and close. Default `None`.
    pub observer: Option<Arc<dyn ConnectionObserver>>,
    /// Methods whose synced writes may be acknowledged by the server's acknowledger
    /// thread (see `server::ack`) instead of the connection's thread waiting for the
    /// commit log: only calls that end with their writes, reading nothing after
    /// them. Framed and unframed connections only. Default: none.
    pub deferrable_calls: &'static [&'static str],
    /// Methods quick enough to run on an event loop (see `server::event_loop`)
    /// besides the [`ServerOptions::deferrable_calls`], which always may: calls
    /// that touch one row or a few and never wait on the network. A framed or
    /// unframed connection is served by an event loop until it makes a call not
    /// listed here (or one that ran slowly); from then on it has a thread of its
    /// own. Default: none (with no deferrable calls either, every connection has
    /// its own thread).
    pub loop_calls: &'static [&'static str],
    /// Event-loop threads per server (0: every connection has its own thread).
    /// Default 2.
    pub event_loops: usize,
    /// Says whether writes must wait for memtable room right now (the storage
    /// engine over its memtable budget). HTTP mode runs a single-row write on the
    /// runtime worker serving its connection only while this says no: a write
    /// waiting there would hold up every connection that worker serves. `None`:
    /// writes never wait (no engine in this process). Default `None`.
    pub writes_stalled: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
    /// TLS for the port (HBase's `hbase.thrift.ssl.enabled`): with it, every
    /// connection must open with a TLS handshake and speaks HBase's HTTP mode
    /// inside (HTTPS); one that does not is closed. Default `None`: no TLS.
    pub tls: Option<TlsConfig>,
}

impl ServerOptions {
    /// Whether framed and unframed connections start on an event loop: there are
    /// loops, and some call may run on one (a loop call or a deferrable one).
    pub(crate) fn serves_on_loops(&self) -> bool {
        self.event_loops > 0 && !(self.loop_calls.is_empty() && self.deferrable_calls.is_empty())
    }

    /// Whether writes would wait for memtable room now (see
    /// [`ServerOptions::writes_stalled`]).
    pub(crate) fn writes_stall(&self) -> bool {
        self.writes_stalled
            .as_ref()
            .is_some_and(|stalled| stalled())
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            idle_timeout: None,
            max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            tcp_keepalive: Some(DEFAULT_TCP_KEEPALIVE),
            observer: None,
            deferrable_calls: &[],
            loop_calls: &[],
            event_loops: DEFAULT_EVENT_LOOPS,
            writes_stalled: None,
            tls: None,
        }
    }
}

impl fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerOptions")
            .field("max_frame_size", &self.max_frame_size)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_concurrent_calls", &self.max_concurrent_calls)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("tcp_keepalive", &self.tcp_keepalive)
            .field("observer", &self.observer.as_ref().map(|_| "set"))
            .field("deferrable_calls", &self.deferrable_calls)
            .field("loop_calls", &self.loop_calls)
            .field("event_loops", &self.event_loops)
            .field(
                "writes_stalled",
                &self.writes_stalled.as_ref().map(|_| "set"),
            )
            .field("tls", &self.tls)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_values() {
        let opts = ServerOptions::default();
        assert_eq!(opts.max_frame_size, 64 * 1024 * 1024);
        assert_eq!(opts.idle_timeout, None);
        assert_eq!(opts.max_concurrent_calls, 256);
        assert_eq!(opts.shutdown_grace, Duration::from_secs(10));
        assert_eq!(opts.tcp_keepalive, Some(Duration::from_secs(60)));
        assert!(opts.observer.is_none());
        assert!(opts.loop_calls.is_empty());
        assert_eq!(opts.event_loops, 2);
        assert!(format!("{opts:?}").contains("max_frame_size"));
    }

    #[test]
    fn connections_start_on_loops_when_some_call_may_run_there() {
        let none = ServerOptions::default();
        assert!(!none.serves_on_loops(), "no call may run on a loop");
        let loop_calls = ServerOptions {
            loop_calls: &["get"],
            ..ServerOptions::default()
        };
        assert!(loop_calls.serves_on_loops());
        let deferrable = ServerOptions {
            deferrable_calls: &["mutateRow"],
            ..ServerOptions::default()
        };
        assert!(
            deferrable.serves_on_loops(),
            "deferrable calls run on loops"
        );
        let no_loops = ServerOptions {
            event_loops: 0,
            ..loop_calls
        };
        assert!(!no_loops.serves_on_loops());
    }

    #[test]
    fn writes_stall_only_when_the_probe_says_so() {
        use std::sync::atomic::{AtomicBool, Ordering};
        assert!(
            !ServerOptions::default().writes_stall(),
            "no probe: no stall"
        );
        let over = Arc::new(AtomicBool::new(false));
        let probe = Arc::clone(&over);
        let opts = ServerOptions {
            writes_stalled: Some(Arc::new(move || probe.load(Ordering::Relaxed))),
            ..ServerOptions::default()
        };
        assert!(!opts.writes_stall());
        over.store(true, Ordering::Relaxed);
        assert!(opts.writes_stall());
        assert!(format!("{opts:?}").contains("writes_stalled"));
    }
}
