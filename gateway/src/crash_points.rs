//! Crash points of the `tabula` binary, for crash tests of a whole server.
//!
//! Owns: [`arm_from_env`], which reads `TABULA_CRASH_AT` (`point` or `point:hit`,
//! the name of one of the engine's or coordinator's `fail::fail_point!`s) and makes
//! that hit of that point end the process at once, as a crash there would: no
//! destructor, no flush, no reply. Only with the crate's `failpoints` feature;
//! without it the points are no code and a set `TABULA_CRASH_AT` is refused.
//! Must not: be compiled into a release build anyone serves data with (the feature
//! is off unless a test build asks for it).

/// The environment variable naming the crash point.
pub const CRASH_AT_VAR: &str = "TABULA_CRASH_AT";

/// The exit status of a process that stopped at its crash point.
pub const CRASH_EXIT_CODE: i32 = 86;

/// Arms the crash point `TABULA_CRASH_AT` names, if any. An error names what is
/// wrong with the setting (or that this build has no crash points).
pub fn arm_from_env() -> Result<(), String> {
    match std::env::var_os(CRASH_AT_VAR) {
        Some(spec) => {
            let (point, hit) = parse_spec(&spec.to_string_lossy())?;
            arm(point, hit)
        }
        None => Ok(()),
    }
}

/// `point` or `point:hit` -> (point, hit); the hit counts from 1.
fn parse_spec(spec: &str) -> Result<(String, u32), String> {
    let (point, hit) = match spec.split_once(':') {
        Some((point, hit)) => (
            point,
            hit.parse::<u32>()
                .ok()
                .filter(|h| *h > 0)
                .ok_or_else(|| format!("{CRASH_AT_VAR}: hit {hit:?} is not a positive number"))?,
        ),
        None => (spec, 1),
    };
    if point.is_empty() {
        return Err(format!("{CRASH_AT_VAR}: no crash point named"));
    }
    Ok((point.to_string(), hit))
}

#[cfg(feature = "failpoints")]
fn arm(point: String, hit: u32) -> Result<(), String> {
    use std::sync::atomic::{AtomicU32, Ordering};

    let hits = AtomicU32::new(0);
    tracing::warn!(point, hit, "crash point armed: the process ends there");
    fail::cfg_callback(point, move || {
        if hits.fetch_add(1, Ordering::SeqCst) + 1 == hit {
            end_process();
        }
    })
}

#[cfg(feature = "failpoints")]
#[allow(unsafe_code)]
fn end_process() -> ! {
    // SAFETY: `_exit` ends the process at once, which is the point; nothing after
    // it runs and nothing it skips (destructors, buffered output) is needed.
    unsafe { libc::_exit(CRASH_EXIT_CODE) }
}

#[cfg(not(feature = "failpoints"))]
fn arm(point: String, _hit: u32) -> Result<(), String> {
    Err(format!(
        "{CRASH_AT_VAR}={point}: this build has no crash points (build with the \
         `failpoints` feature)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_names_a_point_and_optionally_its_hit() {
        assert_eq!(
            parse_spec("flush-installed"),
            Ok(("flush-installed".into(), 1))
        );
        assert_eq!(
            parse_spec("flush-installed:3"),
            Ok(("flush-installed".into(), 3))
        );
        for bad in ["p:0", "p:x", "p:", "", ":2"] {
            assert!(parse_spec(bad).is_err(), "{bad:?} is refused");
        }
    }
}
