//! Watches: a stream of the changes under a path prefix.
//!
//! Owns: [`WatchEvent`], the consumer side [`Watcher`], [`WatchHub`], the fan-out
//! an implementation publishes committed changes through, and [`follow_changes`],
//! the loop of a reader that reconciles its view whenever a prefix changes. Must
//! not: decide what changed (implementations do) or buffer history (a watch sees
//! changes after it opens).

use std::fmt;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

use super::error::{LockError, LockResult};
use super::types::Versioned;
use super::LockService;

/// One change to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// The file was created or replaced; `file` is its new state.
    Put { path: String, file: Versioned },
    /// The file was deleted at `revision` (by a delete, or because its owning session
    /// ended).
    Delete { path: String, revision: u64 },
}

impl WatchEvent {
    /// The changed file's path.
    pub fn path(&self) -> &str {
        match self {
            WatchEvent::Put { path, .. } | WatchEvent::Delete { path, .. } => path,
        }
    }

    /// The revision of the change.
    pub fn revision(&self) -> u64 {
        match self {
            WatchEvent::Put { file, .. } => file.revision,
            WatchEvent::Delete { revision, .. } => *revision,
        }
    }
}

/// The receiving end of a watch.
///
/// Events arrive in revision order; the events of one revision arrive in the order of
/// the transaction's operations (for a session's end, in path order).
/// Every change committed after the watch opened is delivered, none is skipped. When
/// the service ends the watch, reads fail with [`LockError::WatchClosed`]. Dropping the
/// watcher cancels the watch.
///
/// To track a set of files without missing a change: open the watch, then
/// [`list`](super::LockService::list), then apply only events whose revision is above
/// the listing's revision.
pub struct Watcher {
    events: Receiver<WatchEvent>,
    /// Dropped with the watcher: a remote implementation's signal to cancel the watch
    /// on the server instead of waiting for the next event to find no receiver.
    _on_drop: Option<Box<dyn Send>>,
}

impl fmt::Debug for Watcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl Watcher {
    /// A watcher fed through `events` (for implementations).
    pub fn from_receiver(events: Receiver<WatchEvent>) -> Self {
        Self {
            events,
            _on_drop: None,
        }
    }

    /// A watcher fed through `events` that drops `on_drop` when it is dropped (for
    /// implementations whose watch must be cancelled somewhere else).
    pub fn with_drop_guard(events: Receiver<WatchEvent>, on_drop: Box<dyn Send>) -> Self {
        Self {
            events,
            _on_drop: Some(on_drop),
        }
    }

    /// The next event, waiting at most `timeout`; `Ok(None)` when none came in time.
    pub fn next_timeout(&self, timeout: Duration) -> LockResult<Option<WatchEvent>> {
        match self.events.recv_timeout(timeout) {
            Ok(event) => Ok(Some(event)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(LockError::WatchClosed),
        }
    }

    /// The next event if one is already waiting.
    pub fn try_next(&self) -> LockResult<Option<WatchEvent>> {
        match self.events.try_recv() {
            Ok(event) => Ok(Some(event)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(LockError::WatchClosed),
        }
    }

    /// Every event already waiting, in order.
    pub fn drain(&self) -> LockResult<Vec<WatchEvent>> {
        let mut out = Vec::new();
        while let Some(event) = self.try_next()? {
            out.push(event);
        }
        Ok(out)
    }
}

/// The publishing side: every open watch with its prefix.
#[derive(Debug, Default)]
pub struct WatchHub {
    subscribers: Vec<(String, Sender<WatchEvent>)>,
}

impl WatchHub {
    /// Opens a watch on every path starting with `prefix`.
    pub fn subscribe(&mut self, prefix: &str) -> Watcher {
        let (sender, receiver) = mpsc::channel();
        self.subscribers.push((prefix.to_owned(), sender));
        Watcher::from_receiver(receiver)
    }

    /// Sends each event to the watches whose prefix matches it, and forgets watches
    /// whose watcher was dropped.
    pub fn publish(&mut self, events: &[WatchEvent]) {
        if events.is_empty() {
            return;
        }
        self.subscribers.retain(|(prefix, sender)| {
            events
                .iter()
                .filter(|event| event.path().starts_with(prefix.as_str()))
                .all(|event| sender.send(event.clone()).is_ok())
        });
    }

    /// Ends every watch: their watchers report [`LockError::WatchClosed`].
    pub fn close_all(&mut self) {
        self.subscribers.clear();
    }

    /// Number of open watches.
    pub fn len(&self) -> usize {
        self.subscribers.len()
    }

    /// True when no watch is open.
    pub fn is_empty(&self) -> bool {
        self.subscribers.is_empty()
    }
}

/// Runs `pass` now, then again after each batch of changes under `prefix` (one
/// pass covers the changes that arrive together) and at least every `recheck`,
/// until `pass` returns false. A watch that fails (the service restarted, the
/// connection dropped) is opened again before the next pass; meanwhile the
/// recheck keeps the passes going.
pub fn follow_changes(
    lock: &dyn LockService,
    prefix: &str,
    recheck: Duration,
    mut pass: impl FnMut() -> bool,
) {
    let mut watcher = None;
    loop {
        if watcher.is_none() {
            watcher = lock.watch(prefix).ok();
        }
        if !pass() {
            return;
        }
        match &watcher {
            Some(w) => match w.next_timeout(recheck) {
                Ok(_) => {
                    let _ = w.drain();
                }
                Err(_) => watcher = None,
            },
            None => std::thread::sleep(recheck),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(path: &str, revision: u64) -> WatchEvent {
        WatchEvent::Put {
            path: path.into(),
            file: Versioned {
                value: Vec::new(),
                revision,
                create_revision: revision,
                owner: None,
            },
        }
    }

    #[test]
    fn events_reach_matching_prefixes_only() {
        let mut hub = WatchHub::default();
        let servers = hub.subscribe("/servers/");
        let all = hub.subscribe("");
        hub.publish(&[put("/servers/a", 1), put("/root", 2)]);
        let got: Vec<_> = servers
            .drain()
            .unwrap()
            .iter()
            .map(|e| e.revision())
            .collect();
        assert_eq!(got, vec![1]);
        let got: Vec<_> = all.drain().unwrap().iter().map(|e| e.revision()).collect();
        assert_eq!(got, vec![1, 2]);
    }

    #[test]
    fn dropped_watchers_are_forgotten_and_closing_ends_watches() {
        let mut hub = WatchHub::default();
        let kept = hub.subscribe("/");
        drop(hub.subscribe("/"));
        hub.publish(&[put("/x", 1)]);
        assert_eq!(hub.len(), 1);
        hub.close_all();
        assert!(hub.is_empty());
        assert_eq!(kept.try_next().unwrap(), Some(put("/x", 1)));
        assert!(matches!(kept.try_next(), Err(LockError::WatchClosed)));
        assert!(matches!(
            kept.next_timeout(Duration::from_millis(1)),
            Err(LockError::WatchClosed)
        ));
    }
}
