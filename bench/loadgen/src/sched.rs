//! The scheduling policy of the load generator's own threads.
//!
//! Owns: asking the kernel for the policy `--client-sched` names, for the calling
//! thread, before the client's runtime starts (threads created afterwards inherit
//! it).
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

/// Puts the calling thread under `policy`.
#[cfg(target_os = "linux")]
pub fn apply(policy: ClientSchedArg) -> Result<(), BenchError> {
    let code = match policy {
        ClientSchedArg::Batch => libc::SCHED_BATCH,
        ClientSchedArg::Normal => libc::SCHED_OTHER,
    };
    let param = libc::sched_param { sched_priority: 0 };
    // Pid 0 is the calling thread; `param` lives across the call.
    let rc = unsafe { libc::sched_setscheduler(0, code, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(BenchError::InvalidOption(format!(
            "cannot set the {} scheduling policy: {}",
            policy.name(),
            std::io::Error::last_os_error()
        )))
    }
}

/// Other systems keep their default policy.
#[cfg(not(target_os = "linux"))]
pub fn apply(_policy: ClientSchedArg) -> Result<(), BenchError> {
    Ok(())
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
    fn a_thread_takes_the_policy_and_its_children_inherit_it() {
        let outcome = std::thread::spawn(|| {
            apply(ClientSchedArg::Batch).map_err(|e| e.to_string())?;
            let own = current();
            let child = std::thread::spawn(current)
                .join()
                .map_err(|_| "child panicked".to_string())?;
            apply(ClientSchedArg::Normal).map_err(|e| e.to_string())?;
            Ok::<_, String>((own, child, current()))
        })
        .join()
        .expect("the test thread ran");
        let (own, child, back) = outcome.expect("the policies could be set");
        assert_eq!(own, Some(ClientSchedArg::Batch));
        assert_eq!(child, Some(ClientSchedArg::Batch));
        assert_eq!(back, Some(ClientSchedArg::Normal));
    }
}
