//! Server counters for metrics: connections, calls and the transport/protocol mix.
//!
//! Owns [`ServerStats`] (lock-free counters updated by the server) and the plain
//! [`StatsSnapshot`] read from it. It does not export metrics anywhere itself.

use std::sync::atomic::{AtomicU64, Ordering};

use tabula_storage::striped::StripedCounter;

use crate::server::detect::{Transport, WireMode};
use crate::server::wire::WireProtocol;

/// Live counters of one server. Shared as `Arc<ServerStats>`.
#[derive(Debug, Default)]
pub struct ServerStats {
    connections_open: AtomicU64,
    connections_total: AtomicU64,
    /// Bumped by every call on its thread's stripe (a shared counter would be a
    /// cache line the threads serving calls pass back and forth twice a call);
    /// calls in flight are the started ones not yet finished.
    calls_started: StripedCounter,
    calls_finished: StripedCounter,
    calls_failed: StripedCounter,
    malformed_messages: AtomicU64,
    oversized_messages: AtomicU64,
    unrecognized_connections: AtomicU64,
    tls_handshake_failures: AtomicU64,
    unframed_binary: AtomicU64,
    framed_binary: AtomicU64,
    unframed_compact: AtomicU64,
    framed_compact: AtomicU64,
    http: AtomicU64,
}

/// Connections by detected mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModeCounts {
    /// Unframed ("buffered") binary protocol.
    pub unframed_binary: u64,
    /// Framed binary protocol.
    pub framed_binary: u64,
    /// Unframed compact protocol.
    pub unframed_compact: u64,
    /// Framed compact protocol.
    pub framed_compact: u64,
    /// HTTP POST mode.
    pub http: u64,
}

/// A point-in-time copy of [`ServerStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Connections currently open.
    pub connections_open: u64,
    /// Connections accepted since start.
    pub connections_total: u64,
    /// Calls currently being processed.
    pub calls_in_flight: u64,
    /// Calls handed to the processor since start.
    pub calls_total: u64,
    /// Calls whose processor failed without a usable reply.
    pub calls_failed: u64,
    /// Messages that were not well-formed Thrift.
    pub malformed_messages: u64,
    /// Frames, messages or HTTP bodies over the size limit.
    pub oversized_messages: u64,
    /// Connections whose first bytes matched no supported mode (on a TLS port:
    /// were not a TLS handshake).
    pub unrecognized_connections: u64,
    /// TLS handshakes that failed or timed out (a client certificate refused, no
    /// common protocol version, a client gone quiet).
    pub tls_handshake_failures: u64,
    /// Connections by detected mode (since start).
    pub modes: ModeCounts,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

fn drop_one(counter: &AtomicU64) {
    // Saturating: a gauge never wraps below zero even if calls are unbalanced.
    let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_sub(1));
}

impl ServerStats {
    /// A zeroed set of counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Copies every counter.
    pub fn snapshot(&self) -> StatsSnapshot {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        StatsSnapshot {
            connections_open: load(&self.connections_open),
            connections_total: load(&self.connections_total),
            calls_in_flight: self.calls_in_flight(),
            calls_total: self.calls_started.sum(),
            calls_failed: self.calls_failed.sum(),
            malformed_messages: load(&self.malformed_messages),
            oversized_messages: load(&self.oversized_messages),
            unrecognized_connections: load(&self.unrecognized_connections),
            tls_handshake_failures: load(&self.tls_handshake_failures),
            modes: ModeCounts {
                unframed_binary: load(&self.unframed_binary),
                framed_binary: load(&self.framed_binary),
                unframed_compact: load(&self.unframed_compact),
                framed_compact: load(&self.framed_compact),
                http: load(&self.http),
            },
        }
    }

    pub(crate) fn connection_opened(&self) {
        bump(&self.connections_open);
        bump(&self.connections_total);
    }

    pub(crate) fn connection_closed(&self) {
        drop_one(&self.connections_open);
    }

    pub(crate) fn mode_detected(&self, mode: WireMode) {
        let counter = match (mode.transport, mode.protocol) {
            (Transport::Http, _) => &self.http,
            (Transport::Unframed, WireProtocol::Binary) => &self.unframed_binary,
            (Transport::Framed, WireProtocol::Binary) => &self.framed_binary,
            (Transport::Unframed, WireProtocol::Compact) => &self.unframed_compact,
            (Transport::Framed, WireProtocol::Compact) => &self.framed_compact,
        };
        bump(counter);
    }

    pub(crate) fn unrecognized_connection(&self) {
        bump(&self.unrecognized_connections);
    }

    pub(crate) fn tls_handshake_failed(&self) {
        bump(&self.tls_handshake_failures);
    }

    pub(crate) fn call_started(&self) {
        self.calls_started.add_one();
    }

    pub(crate) fn call_finished(&self) {
        self.calls_finished.add_one();
    }

    pub(crate) fn call_failed(&self) {
        self.calls_failed.add_one();
    }

    /// Calls started and not finished. Finished is read first: a call finishing
    /// between the two reads is then counted as in flight, never below zero.
    fn calls_in_flight(&self) -> u64 {
        let finished = self.calls_finished.sum();
        self.calls_started.sum().saturating_sub(finished)
    }

    pub(crate) fn malformed_message(&self) {
        bump(&self.malformed_messages);
    }

    pub(crate) fn oversized_message(&self) {
        bump(&self.oversized_messages);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_track_connections_calls_and_modes() {
        let stats = ServerStats::new();
        stats.connection_opened();
        stats.connection_opened();
        stats.connection_closed();
        stats.mode_detected(WireMode {
            transport: Transport::Framed,
            protocol: WireProtocol::Compact,
        });
        stats.call_started();
        stats.call_finished();
        stats.call_started();
        let snap = stats.snapshot();
        assert_eq!(snap.connections_open, 1);
        assert_eq!(snap.connections_total, 2);
        assert_eq!(snap.calls_total, 2);
        assert_eq!(snap.calls_in_flight, 1);
        assert_eq!(snap.modes.framed_compact, 1);
        assert_eq!(snap.modes.unframed_binary, 0);
    }

    #[test]
    fn gauges_do_not_wrap_below_zero() {
        let stats = ServerStats::new();
        stats.connection_closed();
        stats.call_finished();
        let snap = stats.snapshot();
        assert_eq!(snap.connections_open, 0);
        assert_eq!(snap.calls_in_flight, 0);
    }
}
