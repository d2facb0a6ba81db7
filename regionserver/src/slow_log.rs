//! The slow-call log: the latest tablet calls that took too long or answered too
//! much (HBase's online slow log and large log, kept when
//! `hbase.regionserver.slowlog.buffer.enabled` is set).
//!
//! Owns: [`SlowLogSettings`], the ring of [`SlowCall`]s (the oldest dropped once
//! full), what goes in it, and the caller's address of the call running on this
//! thread ([`with_caller`], set by the RPC server). Must not: filter records for
//! clients (region names are the gateway's to make) or time anything but the
//! calls handed to it.

use std::cell::Cell;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

/// When calls are logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowLogSettings {
    /// Whether the log is kept at all (off: nothing is recorded, and clearing it
    /// reports false, as HBase's does with its buffer off).
    pub enabled: bool,
    /// A call running at least this long is slow (HBase's
    /// `hbase.ipc.warn.response.time`, 10 s).
    pub slow_after: Duration,
    /// A call answering at least this many bytes is large (HBase's
    /// `hbase.ipc.warn.response.size`, 100 MiB).
    pub large_after_bytes: u64,
    /// Calls kept; the oldest go first (HBase's
    /// `hbase.regionserver.slowlog.ringbuffer.size`, 256).
    pub capacity: usize,
}

impl Default for SlowLogSettings {
    fn default() -> Self {
        SlowLogSettings {
            enabled: false,
            slow_after: Duration::from_secs(10),
            large_after_bytes: 100 << 20,
            capacity: 256,
        }
    }
}

/// Why a call was logged (HBase's log types; `Both` is its ALL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowKind {
    Slow,
    Large,
    Both,
}

impl SlowKind {
    /// Whether a query for slow calls (`large == false`) or large calls
    /// (`large == true`) returns calls of this kind.
    pub fn answers(self, large: bool) -> bool {
        match self {
            SlowKind::Both => true,
            SlowKind::Slow => !large,
            SlowKind::Large => large,
        }
    }
}

/// One logged call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowCall {
    /// When it started, ms since the epoch.
    pub start_ms: i64,
    /// How long it ran, ms.
    pub processing_ms: i32,
    /// About how many bytes it answered (cells: row, column and value).
    pub response_bytes: u64,
    /// Who called (`host:port`; this server's host for calls from its own process).
    pub client: String,
    /// HBase's RPC method: Get, Mutate, Multi or Scan.
    pub method: String,
    /// The method and its request type.
    pub details: String,
    /// What the call was about (tablet and row, or scanner).
    pub param: String,
    /// The user the server runs as (every call to a regionserver comes from the
    /// cluster's own processes).
    pub user: String,
    /// Gets and mutations of a Multi call.
    pub multi_gets: i32,
    pub multi_mutations: i32,
    /// The tablet it served (the first one of a Multi), and its table.
    pub tablet: u64,
    pub table: String,
    pub kind: SlowKind,
}

/// What a call was, for its record if it turns out slow or large.
#[derive(Debug, Clone, Copy)]
pub struct CallKind<'a> {
    pub method: &'static str,
    pub request: &'static str,
    pub tablet: u64,
    /// The row it was about (empty for scans and batches).
    pub row: &'a [u8],
    pub multi_mutations: usize,
}

impl<'a> CallKind<'a> {
    /// A call on one row (or scanner) of one tablet.
    pub fn single(method: &'static str, request: &'static str, tablet: u64, row: &'a [u8]) -> Self {
        CallKind {
            method,
            request,
            tablet,
            row,
            multi_mutations: 0,
        }
    }
}

thread_local! {
    static CALLER: Cell<Option<SocketAddr>> = const { Cell::new(None) };
}

/// Runs `call` with `caller` as the address its slow-log records name.
pub fn with_caller<T>(caller: Option<SocketAddr>, call: impl FnOnce() -> T) -> T {
    let previous = CALLER.with(|c| c.replace(caller));
    let out = call();
    CALLER.with(|c| c.set(previous));
    out
}

/// The ring of logged calls.
pub struct SlowLog {
    settings: SlowLogSettings,
    /// The address recorded for calls made from this server's own process.
    own_host: String,
    user: String,
    ring: Mutex<VecDeque<SlowCall>>,
}

impl SlowLog {
    /// A log with `settings`; `server_name` (`host:port`) names calls from this
    /// process.
    pub fn new(settings: SlowLogSettings, server_name: &str) -> SlowLog {
        let own_host = server_name
            .rsplit_once(':')
            .map_or(server_name, |(host, _)| host)
            .to_owned();
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .unwrap_or_else(|_| "tabula".to_owned());
        SlowLog {
            settings,
            own_host,
            user,
            ring: Mutex::new(VecDeque::new()),
        }
    }

    /// Whether calls are logged.
    pub fn enabled(&self) -> bool {
        self.settings.enabled
    }

    /// Runs `call`, logging it when it ran too long or its answer (sized by
    /// `size`) is too large.
    pub fn timed<T>(
        &self,
        kind: CallKind<'_>,
        table: impl FnOnce() -> String,
        call: impl FnOnce() -> T,
        size: impl FnOnce(&T) -> u64,
    ) -> T {
        if !self.settings.enabled {
            return call();
        }
        let started = Instant::now();
        let wall = SystemTime::now();
        let out = call();
        let took = started.elapsed();
        let bytes = size(&out);
        let slow = took >= self.settings.slow_after;
        let large = bytes >= self.settings.large_after_bytes;
        let logged = match (slow, large) {
            (true, true) => SlowKind::Both,
            (true, false) => SlowKind::Slow,
            (false, true) => SlowKind::Large,
            (false, false) => return out,
        };
        let start_ms = wall
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let mut param = format!("tablet={}", kind.tablet);
        if !kind.row.is_empty() {
            param.push_str(", row=");
            param.push_str(&printable(kind.row));
        }
        self.push(SlowCall {
            start_ms,
            processing_ms: i32::try_from(took.as_millis()).unwrap_or(i32::MAX),
            response_bytes: bytes,
            client: CALLER
                .with(Cell::get)
                .map_or_else(|| self.own_host.clone(), |a| a.to_string()),
            method: kind.method.to_owned(),
            details: format!("{}(tabula.tablet.{})", kind.method, kind.request),
            param,
            user: self.user.clone(),
            multi_gets: 0,
            multi_mutations: i32::try_from(kind.multi_mutations).unwrap_or(i32::MAX),
            tablet: kind.tablet,
            table: table(),
            kind: logged,
        });
        out
    }

    fn push(&self, call: SlowCall) {
        let capacity = self.settings.capacity.max(1);
        let mut ring = self.ring.lock();
        while ring.len() >= capacity {
            ring.pop_front();
        }
        ring.push_back(call);
    }

    /// The logged calls, newest first.
    pub fn calls(&self) -> Vec<SlowCall> {
        self.ring.lock().iter().rev().cloned().collect()
    }

    /// Forgets every logged call; false when the log is not kept.
    pub fn clear(&self) -> bool {
        self.ring.lock().clear();
        self.settings.enabled
    }
}

/// Bytes as HBase prints binary keys: printable ASCII as is, others `\xNN`.
fn printable(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x20..0x7f).contains(&b) && b != b'\\' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(slow_after_ms: u64, large_after_bytes: u64, capacity: usize) -> SlowLog {
        SlowLog::new(
            SlowLogSettings {
                enabled: true,
                slow_after: Duration::from_millis(slow_after_ms),
                large_after_bytes,
                capacity,
            },
            "10.0.0.7:16020",
        )
    }

    fn get(row: &[u8]) -> CallKind<'_> {
        CallKind {
            method: "Get",
            request: "GetRequest",
            tablet: 17,
            row,
            multi_mutations: 0,
        }
    }

    fn run(log: &SlowLog, row: &[u8], sleep_ms: u64, bytes: u64) {
        let out: Result<u64, ()> = log.timed(
            get(row),
            || "t1".to_owned(),
            || {
                std::thread::sleep(Duration::from_millis(sleep_ms));
                Ok(bytes)
            },
            |b| *b.as_ref().unwrap_or(&0),
        );
        assert_eq!(out, Ok(bytes));
    }

    #[test]
    fn slow_and_large_calls_are_kept_newest_first_and_quick_small_ones_not() {
        let log = log(30, 1000, 8);
        run(&log, b"quick", 0, 10);
        run(&log, b"slow", 40, 10);
        run(&log, b"large", 0, 5000);
        run(&log, b"both\x01", 40, 5000);
        let calls = log.calls();
        let kinds: Vec<_> = calls.iter().map(|c| (c.param.clone(), c.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("tablet=17, row=both\\x01".to_owned(), SlowKind::Both),
                ("tablet=17, row=large".to_owned(), SlowKind::Large),
                ("tablet=17, row=slow".to_owned(), SlowKind::Slow),
            ]
        );
        let slow = &calls[2];
        assert!(slow.processing_ms >= 40, "{slow:?}");
        assert_eq!(slow.method, "Get");
        assert_eq!(slow.details, "Get(tabula.tablet.GetRequest)");
        assert_eq!(slow.client, "10.0.0.7", "a call from this process");
        assert_eq!(slow.table, "t1");
        assert!(slow.start_ms > 1_600_000_000_000);
        assert!(SlowKind::Both.answers(true) && SlowKind::Both.answers(false));
        assert!(SlowKind::Slow.answers(false) && !SlowKind::Slow.answers(true));
        assert!(log.clear());
        assert!(log.calls().is_empty());
    }

    #[test]
    fn the_ring_keeps_the_latest_and_callers_are_named() {
        let log = log(0, u64::MAX, 3);
        for i in 0..5u8 {
            let row = [b'a' + i];
            let caller = SocketAddr::from(([10, 0, 0, 9], u16::from(i)));
            with_caller(Some(caller), || run(&log, &row, 0, 0));
        }
        let calls = log.calls();
        let rows: Vec<_> = calls.iter().map(|c| c.param.clone()).collect();
        assert_eq!(
            rows,
            vec!["tablet=17, row=e", "tablet=17, row=d", "tablet=17, row=c"]
        );
        assert_eq!(calls[0].client, "10.0.0.9:4");
        // The caller is forgotten after the call.
        run(&log, b"f", 0, 0);
        assert_eq!(log.calls()[0].client, "10.0.0.7");
    }

    #[test]
    fn an_off_log_records_nothing_and_says_so_when_cleared() {
        let log = SlowLog::new(SlowLogSettings::default(), "rs");
        let out = log.timed(get(b"r"), String::new, || 1u64 << 40, |b| *b);
        assert_eq!(out, 1 << 40);
        assert!(log.calls().is_empty());
        assert!(!log.clear());
    }
}
