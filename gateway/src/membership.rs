//! The coordinator's view of the regionservers in other processes: it follows their
//! registrations in the lock service (`/tabula/servers/<name>`, a lock whose value is
//! the server's RPC address), connects to the ones that join and hands the ones
//! that go away to the coordinator, which splits their logs and moves their tablets.
//!
//! Owns: reading registrations, connecting clients, the membership thread. Must not:
//! decide where tablets go (the coordinator does).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tabula_coordinator::lock::{follow_changes, LockResult, LockService};
use tabula_coordinator::{Coordinator, SERVERS_PREFIX};
use tabula_regionserver::rpc::client::RemoteOptions;
use tabula_regionserver::rpc::RemoteTabletService;
use tabula_regionserver::{RsError, TabletService};

use crate::regionserver_process::registered_address;

/// How often registrations are read again even without a watch event.
const RECHECK: Duration = Duration::from_secs(2);

/// The registered regionservers: name -> RPC address.
pub fn registered(lock: &dyn LockService) -> LockResult<BTreeMap<String, String>> {
    Ok(lock
        .list(SERVERS_PREFIX)?
        .files
        .into_iter()
        .filter(|(_, file)| file.owner.is_some())
        .filter_map(|(path, file)| {
            let name = path.strip_prefix(SERVERS_PREFIX)?.to_owned();
            let addr = registered_address(&file.value)?.to_owned();
            Some((name, addr))
        })
        .collect())
}

/// The last failure to connect to each registered regionserver, so that the same
/// failure, met again at every refresh, is logged at warn once.
static LAST_FAILURES: parking_lot::Mutex<BTreeMap<String, String>> =
    parking_lot::Mutex::new(BTreeMap::new());

/// Notes how connecting to `name` went; true when this is news worth a warning
/// (a failure not seen last time).
fn note_outcome(name: &str, failure: Option<&str>) -> bool {
    let mut last = LAST_FAILURES.lock();
    match failure {
        None => {
            if last.remove(name).is_some() {
                tracing::info!(
                    server = name,
                    "a registered regionserver is reachable again"
                );
            }
            false
        }
        Some(f) => last.insert(name.to_owned(), f.to_owned()).as_deref() != Some(f),
    }
}

pub(crate) fn connect(
    name: &str,
    addr: &str,
    options: &RemoteOptions,
) -> Option<Arc<dyn TabletService>> {
    // A cluster on rpc TLS refuses a process without its settings at the
    // handshake (and the other way round): a refusal says so.
    let refused = if options.tls.is_some() {
        "it refused this process: does the cluster use rpc TLS with this authority?"
    } else {
        "it refused this process: does the cluster use rpc TLS (rpc_tls_* settings)?"
    };
    let (failure, hint) = match RemoteTabletService::connect(addr, options.clone()) {
        Ok(client) if client.name() == name => {
            note_outcome(name, None);
            return Some(Arc::new(client));
        }
        Ok(client) => (
            format!("it answers to the name {}", client.name()),
            "another server took its address",
        ),
        Err(e @ RsError::Unreachable { .. }) => (e.to_string(), "nothing answers at its address"),
        Err(e) => (e.to_string(), refused),
    };
    if !note_outcome(name, Some(&failure)) {
        tracing::debug!(server = name, addr, error = %failure, "still cannot reach a registered regionserver");
        return None;
    }
    tracing::warn!(server = name, addr, error = %failure, hint, "cannot reach a registered regionserver (logged again when the failure changes)");
    None
}

/// Clients of every registered regionserver except `local` (for the coordinator's
/// start: the tablets they serve stay there).
pub fn connect_registered(
    lock: &dyn LockService,
    local: &str,
    options: &RemoteOptions,
) -> Vec<Arc<dyn TabletService>> {
    match registered(lock) {
        Ok(servers) => servers
            .iter()
            .filter(|(name, _)| name.as_str() != local)
            .filter_map(|(name, addr)| connect(name, addr, options))
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "cannot read regionserver registrations");
            Vec::new()
        }
    }
}

/// One pass: connects servers that joined, hands gone ones (and those whose
/// recovery failed before, in `retry`) to the coordinator.
fn reconcile(coordinator: &Coordinator, retry: &mut BTreeSet<String>, options: &RemoteOptions) {
    let registered = match registered(&**coordinator.lock_service()) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read regionserver registrations");
            return;
        }
    };
    let known: BTreeSet<String> = coordinator.remote_server_names().into_iter().collect();
    for (name, addr) in &registered {
        if !known.contains(name) && coordinator.server(name).is_none() {
            if let Some(client) = connect(name, addr, options) {
                retry.remove(name);
                coordinator.add_server(client);
            }
        }
    }
    for name in known {
        if !registered.contains_key(&name) {
            retry.insert(name);
        }
    }
    let pending: Vec<String> = retry.iter().cloned().collect();
    for name in pending {
        if registered.contains_key(&name) && coordinator.server(&name).is_some() {
            retry.remove(&name);
            continue;
        }
        match coordinator.server_lost(&name) {
            Ok(_) => {
                retry.remove(&name);
            }
            Err(e) => {
                tracing::warn!(server = %name, error = %e, "moving a lost regionserver's tablets failed; retrying")
            }
        }
    }
}

/// Follows registrations until `stop` is set, connecting to servers that join with
/// `options`.
pub fn spawn(
    coordinator: Arc<Coordinator>,
    stop: Arc<AtomicBool>,
    options: RemoteOptions,
) -> Option<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("tabula-membership".into())
        .spawn(move || {
            let mut retry = BTreeSet::new();
            let lock = Arc::clone(coordinator.lock_service());
            follow_changes(&*lock, SERVERS_PREFIX, RECHECK, || {
                if stop.load(Ordering::Acquire) {
                    return false;
                }
                reconcile(&coordinator, &mut retry, &options);
                true
            });
        })
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_news_once_until_it_changes_or_ends() {
        let name = "membership-test-server";
        assert!(note_outcome(name, Some("refused")));
        assert!(
            !note_outcome(name, Some("refused")),
            "the same failure again"
        );
        assert!(note_outcome(name, Some("reset")), "another failure");
        assert!(!note_outcome(name, None), "a success is no warning");
        assert!(
            note_outcome(name, Some("reset")),
            "news again after a success"
        );
    }
}
