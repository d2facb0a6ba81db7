//! What a call tells the connection layer about how it ran: whether it waited on
//! another process over the network (a regionserver's RPC).
//!
//! Owns: a per-thread flag the cluster backend sets when it sends a call to a
//! regionserver of another process, and the connection layer takes after each
//! call: such a call holds its thread for a network round trip, so an event loop
//! must not run the connection's calls inline (every other connection of the loop
//! would wait). Must not: carry anything else between the layers.

use std::cell::Cell;

thread_local! {
    static WAITED_ON_NETWORK: Cell<bool> = const { Cell::new(false) };
}

/// Notes that the call running on this thread waits on the network.
pub fn waited_on_network() {
    WAITED_ON_NETWORK.with(|w| w.set(true));
}

/// Whether the call that ran on this thread since the last take waited on the
/// network; clears the note.
pub fn take_waited_on_network() -> bool {
    WAITED_ON_NETWORK.with(|w| w.replace(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_taken_once_and_stays_on_its_thread() {
        assert!(!take_waited_on_network());
        waited_on_network();
        let elsewhere = std::thread::spawn(take_waited_on_network)
            .join()
            .unwrap_or(true);
        assert!(!elsewhere);
        assert!(take_waited_on_network());
        assert!(!take_waited_on_network());
    }
}
