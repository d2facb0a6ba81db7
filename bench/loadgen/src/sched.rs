//! The scheduling policy of the load generator's own threads.
//!
//! Owns: asking the kernel for the policy `--client-sched` names, for the calling
//! thread, before the client's runtime starts (threads created afterwards inherit
//! it), and giving the calling thread its own policy back when the run is over.
//! Must not: touch the server's threads or any process-wide setting.
//!
//! Why: the client and the server it measures share the machine's cores. Under the
//! normal policy a reply wakes the client thread waiting for it, and the kernel
//! switches to that thread at once, in the middle of the server thread's send;
//! the server pays a context switch per call that a client on another machine
//! would never cost it. Under `SCHED_BATCH` the woken client waits for the server
//! thread to block or for its time slice to end, and gets the same share of the
//! processors as before.

use crate::args::ClientSchedArg;
use crate::error::BenchError;

/// The calling thread under a policy until this is dropped, when it gets the
/// policy it had before back.
#[must_use = "dropping it restores the previous policy at once"]
pub struct PolicyScope {
    #[cfg(target_os = "linux")]
    previous: Option<(libc::c_int, libc::sched_param)>,
}

impl Drop for PolicyScope {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some((policy, param)) = self.previous.take() {
            // Best effort: a thread that could change its policy can change it back.
            // Pid 0 is the calling thread; `param` lives across the call.
            let _ = unsafe { libc::sched_setscheduler(0, policy, &param) };
        }
    }
}

/// Puts the calling thread under `policy` until the returned scope is dropped.
#[cfg(target_os = "linux")]
pub fn apply(policy: ClientSchedArg) -> Result<PolicyScope, BenchError> {
    let refused = |what: &str| {
        BenchError::InvalidOption(format!(
            "cannot {what} the {} scheduling policy: {}",
            policy.name(),
            std::io::Error::last_os_error()
        ))
    };
    // Pid 0 is the calling thread; every pointer passed lives across its call.
    let previous_policy = unsafe { libc::sched_getscheduler(0) };
    let mut previous_param = libc::sched_param { sched_priority: 0 };
    if previous_policy < 0 || unsafe { libc::sched_getparam(0, &mut previous_param) } != 0 {
        return Err(refused("read the thread's policy before setting"));
    }
    let code = match policy {
        ClientSchedArg::Batch => libc::SCHED_BATCH,
        ClientSchedArg::Normal => libc::SCHED_OTHER,
    };
    let param = libc::sched_param { sched_priority: 0 };
    if unsafe { libc::sched_setscheduler(0, code, &param) } != 0 {
        return Err(refused("set"));
    }
    Ok(PolicyScope {
        previous: Some((previous_policy, previous_param)),
    })
}

/// Other systems keep their default policy.
#[cfg(not(target_os = "linux"))]
pub fn apply(_policy: ClientSchedArg) -> Result<PolicyScope, BenchError> {
    Ok(PolicyScope {})
}

/// The calling thread's policy, as the kernel reports it.
#[cfg(target_os = "linux")]
pub fn current() -> Option<ClientSchedArg> {
    let code = unsafe { libc::sched_getscheduler(0) };
    match code {
        libc::SCHED_BATCH => Some(ClientSchedArg::Batch),
        libc::SCHED_OTHER => Some(ClientSchedArg::Normal),
        _ => None,
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_takes_the_policy_its_children_inherit_it_and_it_ends_with_the_scope() {
        let outcome = std::thread::spawn(|| {
            let before = current();
            let scope = apply(ClientSchedArg::Batch).map_err(|e| e.to_string())?;
            let own = current();
            let child = std::thread::spawn(current)
                .join()
                .map_err(|_| "child panicked".to_string())?;
            drop(scope);
            Ok::<_, String>((before, own, child, current()))
        })
        .join()
        .expect("the test thread ran");
        let (before, own, child, after) = outcome.expect("the policy could be set");
        assert_eq!(own, Some(ClientSchedArg::Batch));
        assert_eq!(child, Some(ClientSchedArg::Batch));
        assert_eq!(
            after, before,
            "the scope's end gives the thread its policy back"
        );
    }
}
