//! Connection identity: ids, the observer hook, and the id of the call being processed.
//!
//! Owns [`ConnectionId`], [`ConnectionObserver`], [`current_connection`] and the guards
//! that set the thread-local around a processor call and report a connection's close.
//! It does not accept, read or write connections.

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Identifies one client connection, unique within the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(pub u64);

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "conn-{}", self.0)
    }
}

static NEXT_CONNECTION_ID: AtomicU64 = AtomicU64::new(1);

impl ConnectionId {
    /// Allocates a fresh id (ids start at 1 and are never reused in a process).
    pub(crate) fn allocate() -> Self {
        ConnectionId(NEXT_CONNECTION_ID.fetch_add(1, Ordering::Relaxed))
    }
}

/// Told when connections open and close, e.g. to release per-connection scanners.
///
/// Both methods run on the server's async tasks: keep them short and non-blocking.
/// `on_close` is called exactly once per opened connection, after its last call finished
/// (or when the server gives up waiting for it at shutdown).
pub trait ConnectionObserver: Send + Sync {
    /// A connection was accepted.
    fn on_open(&self, id: ConnectionId) {
        let _ = id;
    }

    /// A connection was closed.
    fn on_close(&self, id: ConnectionId);
}

thread_local! {
    static CURRENT: Cell<Option<ConnectionId>> = const { Cell::new(None) };
}

/// The connection whose call the current thread is processing, if any.
///
/// Set while the server runs the processor for a call; `None` elsewhere.
pub fn current_connection() -> Option<ConnectionId> {
    CURRENT.with(Cell::get)
}

/// Makes [`current_connection`] answer `id` on this thread until dropped.
pub(crate) struct CallScope {
    previous: Option<ConnectionId>,
}

impl CallScope {
    pub(crate) fn enter(id: ConnectionId) -> Self {
        let previous = CURRENT.with(|current| current.replace(Some(id)));
        CallScope { previous }
    }
}

impl Drop for CallScope {
    fn drop(&mut self) {
        CURRENT.with(|current| current.set(self.previous));
    }
}

/// Reports `on_close` when dropped, so a connection's close is seen even if its task is
/// cancelled.
pub(crate) struct OpenConnection {
    id: ConnectionId,
    observer: Option<Arc<dyn ConnectionObserver>>,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
}

impl OpenConnection {
    /// Reports `on_open` now; `on_drop` runs after `on_close`.
    pub(crate) fn open(
        id: ConnectionId,
        observer: Option<Arc<dyn ConnectionObserver>>,
        on_drop: Box<dyn FnOnce() + Send>,
    ) -> Self {
        if let Some(observer) = &observer {
            observer.on_open(id);
        }
        OpenConnection {
            id,
            observer,
            on_drop: Some(on_drop),
        }
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        if let Some(observer) = &self.observer {
            observer.on_close(self.id);
        }
        if let Some(on_drop) = self.on_drop.take() {
            on_drop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    #[test]
    fn call_scope_sets_and_restores_current_connection() {
        assert_eq!(current_connection(), None);
        {
            let _outer = CallScope::enter(ConnectionId(7));
            assert_eq!(current_connection(), Some(ConnectionId(7)));
            {
                let _inner = CallScope::enter(ConnectionId(8));
                assert_eq!(current_connection(), Some(ConnectionId(8)));
            }
            assert_eq!(current_connection(), Some(ConnectionId(7)));
        }
        assert_eq!(current_connection(), None);
    }

    #[test]
    fn allocated_ids_are_distinct() {
        let a = ConnectionId::allocate();
        let b = ConnectionId::allocate();
        assert_ne!(a, b);
    }

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl ConnectionObserver for Recorder {
        fn on_open(&self, id: ConnectionId) {
            self.0.lock().push(format!("open {id}"));
        }
        fn on_close(&self, id: ConnectionId) {
            self.0.lock().push(format!("close {id}"));
        }
    }

    #[test]
    fn open_connection_reports_open_then_close_then_runs_hook() {
        let recorder = Arc::new(Recorder::default());
        let hook_log = Arc::clone(&recorder);
        let guard = OpenConnection::open(
            ConnectionId(3),
            Some(recorder.clone() as Arc<dyn ConnectionObserver>),
            Box::new(move || hook_log.0.lock().push("hook".into())),
        );
        assert_eq!(*recorder.0.lock(), vec!["open conn-3".to_string()]);
        drop(guard);
        assert_eq!(
            *recorder.0.lock(),
            vec![
                "open conn-3".to_string(),
                "close conn-3".to_string(),
                "hook".to_string()
            ]
        );
    }
}
