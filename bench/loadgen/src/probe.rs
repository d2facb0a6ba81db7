//! Server resource sampling through Linux `/proc`.
//!
//! Owns reading and parsing `/proc/<pid>/status` (resident set size) and `/proc/<pid>/stat`
//! (user + system CPU time) and a background thread that samples them at a fixed interval.
//! It only reads `/proc`: it never signals, starts or waits for the observed process.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Shortest sampling interval accepted; shorter ones are raised to it.
const MIN_INTERVAL: Duration = Duration::from_millis(1);

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("no {what} in {path}")]
    Parse { path: PathBuf, what: &'static str },
    #[error("cannot determine clock ticks per second (sysconf returned {0})")]
    ClockTicks(libc::c_long),
    #[error("cannot start the sampling thread: {0}")]
    Spawn(io::Error),
}

/// Resource use of the observed process between [`ServerProbe::start`] and
/// [`ServerProbe::stop`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProbeReport {
    pub pid: u32,
    pub samples: u64,
    pub rss_start_bytes: u64,
    pub rss_max_bytes: u64,
    pub rss_mean_bytes: u64,
    /// RSS at the last successful sample (the process may have exited since).
    pub rss_end_bytes: u64,
    /// CPU time (user + system, all threads) consumed between start and the last sample.
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    /// `cpu_seconds / wall_seconds`.
    pub cpu_cores_used: f64,
}

/// Resident set size of `pid` in bytes.
pub fn rss_bytes(pid: u32) -> Result<u64, ProbeError> {
    let path = proc_path(pid, "status");
    let text = read_proc(&path)?;
    parse_status_rss(&text).ok_or(ProbeError::Parse {
        path,
        what: "VmRSS line",
    })
}

/// CPU time (utime + stime) of `pid` in clock ticks.
pub fn cpu_ticks(pid: u32) -> Result<u64, ProbeError> {
    let path = proc_path(pid, "stat");
    let text = read_proc(&path)?;
    parse_stat_cpu_ticks(&text).ok_or(ProbeError::Parse {
        path,
        what: "utime and stime fields",
    })
}

/// Clock ticks per second, the unit of the CPU times in `/proc/<pid>/stat`.
pub fn clock_ticks_per_second() -> Result<u64, ProbeError> {
    // SAFETY: sysconf has no preconditions and only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks)
        .ok()
        .filter(|&ticks| ticks > 0)
        .ok_or(ProbeError::ClockTicks(ticks))
}

/// Resident set size in bytes from the text of `/proc/<pid>/status` (the `VmRSS:` line,
/// in kB). `None` when the line is absent (kernel threads, zombies) or malformed.
pub fn parse_status_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let mut fields = line["VmRSS:".len()..].split_whitespace();
    let value: u64 = fields.next()?.parse().ok()?;
    let multiplier = match fields.next() {
        Some(unit) if unit.eq_ignore_ascii_case("kB") => 1024,
        Some(unit) if unit.eq_ignore_ascii_case("mB") => 1024 * 1024,
        Some(_) => return None,
        None => 1,
    };
    value.checked_mul(multiplier)
}

/// utime + stime (fields 14 and 15, in clock ticks) from the text of `/proc/<pid>/stat`.
/// The command name (field 2) is in parentheses and may hold spaces and parentheses, so
/// fields are counted from the last `)`.
pub fn parse_stat_cpu_ticks(stat: &str) -> Option<u64> {
    let after_comm = &stat[stat.rfind(')')? + 1..];
    // After the command name come the fields from 3 (state) on.
    let mut fields = after_comm.split_whitespace().skip(14 - 3);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    utime.checked_add(stime)
}

/// Samples the RSS and CPU time of a process in a background thread.
#[derive(Debug)]
pub struct ServerProbe {
    pid: u32,
    started: Instant,
    ticks_per_second: u64,
    stop_signal: Sender<()>,
    sampler: JoinHandle<Samples>,
    /// What was gathered before the thread started, kept in case the thread panics.
    initial: Samples,
}

impl ServerProbe {
    /// Takes a first sample of `pid` now (failing if the process cannot be read) and then one
    /// every `interval` until [`ServerProbe::stop`].
    pub fn start(pid: u32, interval: Duration) -> Result<ServerProbe, ProbeError> {
        let ticks_per_second = clock_ticks_per_second()?;
        let started = Instant::now();
        let first = Sample::take(pid)?;
        let initial = Samples::new(first);
        let (stop_signal, stop_wait) = mpsc::channel();
        let interval = interval.max(MIN_INTERVAL);
        let mut samples = initial.clone();
        let sampler = thread::Builder::new()
            .name(format!("probe-{pid}"))
            .spawn(move || {
                samples.gather(pid, interval, &stop_wait);
                samples
            })
            .map_err(ProbeError::Spawn)?;
        Ok(ServerProbe {
            pid,
            started,
            ticks_per_second,
            stop_signal,
            sampler,
            initial,
        })
    }

    /// Stops sampling, takes a last sample if the process is still there, and reports.
    pub fn stop(self) -> ProbeReport {
        // A send error means the thread already ended (process gone): nothing to signal.
        let _ = self.stop_signal.send(());
        let mut samples = self.sampler.join().unwrap_or(self.initial);
        if !samples.process_gone {
            samples.sample_once(self.pid);
        }
        samples.report(self.pid, self.started.elapsed(), self.ticks_per_second)
    }
}

/// One reading of the observed process.
#[derive(Debug, Clone, Copy)]
struct Sample {
    rss_bytes: u64,
    cpu_ticks: u64,
}

impl Sample {
    fn take(pid: u32) -> Result<Sample, ProbeError> {
        Ok(Sample {
            cpu_ticks: cpu_ticks(pid)?,
            rss_bytes: rss_bytes(pid)?,
        })
    }
}

/// Running aggregate of the samples taken so far.
#[derive(Debug, Clone)]
struct Samples {
    count: u64,
    first: Sample,
    last: Sample,
    rss_max: u64,
    rss_sum: u128,
    process_gone: bool,
}

impl Samples {
    fn new(first: Sample) -> Samples {
        Samples {
            count: 1,
            first,
            last: first,
            rss_max: first.rss_bytes,
            rss_sum: u128::from(first.rss_bytes),
            process_gone: false,
        }
    }

    /// Samples every `interval` until told to stop (or the sender is dropped) or the
    /// process can no longer be read.
    fn gather(&mut self, pid: u32, interval: Duration, stop_wait: &Receiver<()>) {
        while let Err(RecvTimeoutError::Timeout) = stop_wait.recv_timeout(interval) {
            if !self.sample_once(pid) {
                break;
            }
        }
    }

    /// Adds one sample; returns false (and remembers it) if the process is gone.
    fn sample_once(&mut self, pid: u32) -> bool {
        match Sample::take(pid) {
            Ok(sample) => {
                self.add(sample);
                true
            }
            Err(_) => {
                self.process_gone = true;
                false
            }
        }
    }

    fn add(&mut self, sample: Sample) {
        self.count += 1;
        self.last = sample;
        self.rss_max = self.rss_max.max(sample.rss_bytes);
        self.rss_sum += u128::from(sample.rss_bytes);
    }

    fn report(&self, pid: u32, wall: Duration, ticks_per_second: u64) -> ProbeReport {
        let ticks = self.last.cpu_ticks.saturating_sub(self.first.cpu_ticks);
        let cpu_seconds = ticks as f64 / ticks_per_second as f64;
        let wall_seconds = wall.as_secs_f64();
        let cpu_cores_used = if wall_seconds > 0.0 {
            cpu_seconds / wall_seconds
        } else {
            0.0
        };
        ProbeReport {
            pid,
            samples: self.count,
            rss_start_bytes: self.first.rss_bytes,
            rss_max_bytes: self.rss_max,
            rss_mean_bytes: u64::try_from(self.rss_sum / u128::from(self.count.max(1)))
                .unwrap_or(u64::MAX),
            rss_end_bytes: self.last.rss_bytes,
            cpu_seconds,
            wall_seconds,
            cpu_cores_used,
        }
    }
}

fn proc_path(pid: u32, file: &str) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/{file}"))
}

fn read_proc(path: &Path) -> Result<String, ProbeError> {
    fs::read_to_string(path).map_err(|source| ProbeError::Read {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    const STATUS: &str = "Name:\ttabula\nUmask:\t0022\nState:\tS (sleeping)\n\
        VmPeak:\t  812345 kB\nVmSize:\t  800000 kB\nVmHWM:\t   40000 kB\n\
        VmRSS:\t   35120 kB\nRssAnon:\t   30000 kB\nThreads:\t9\n";

    const STAT: &str = "4242 (tabula) S 1 4242 4242 0 -1 4194560 5071 0 0 0 \
        1234 567 0 0 20 0 9 0 123456 819200000 8780 18446744073709551615 1 1 0 0 0 0 0 \
        4096 17991 0 0 0 17 1 0 0 0 0 0";

    #[test]
    fn parses_rss_from_status() {
        assert_eq!(parse_status_rss(STATUS), Some(35_120 * 1024));
    }

    #[test]
    fn status_without_rss_gives_none() {
        let kernel_thread = "Name:\tkworker/0:1\nState:\tI (idle)\nThreads:\t1\n";
        assert_eq!(parse_status_rss(kernel_thread), None);
        assert_eq!(parse_status_rss("VmRSS:\tmany kB\n"), None);
        assert_eq!(parse_status_rss(""), None);
    }

    #[test]
    fn parses_cpu_ticks_from_stat() {
        assert_eq!(parse_stat_cpu_ticks(STAT), Some(1234 + 567));
    }

    #[test]
    fn command_name_with_spaces_and_parentheses() {
        let stat = STAT.replace("(tabula)", "(my (odd) server 2)");
        assert_eq!(parse_stat_cpu_ticks(&stat), Some(1234 + 567));
    }

    #[test]
    fn truncated_stat_gives_none() {
        assert_eq!(parse_stat_cpu_ticks("4242 (tabula) S 1 4242"), None);
        assert_eq!(parse_stat_cpu_ticks("no parenthesis here"), None);
        assert_eq!(parse_stat_cpu_ticks(""), None);
    }

    #[test]
    fn parses_the_real_files_of_this_process() {
        let pid = std::process::id();
        assert!(rss_bytes(pid).is_ok_and(|rss| rss > 0));
        assert!(cpu_ticks(pid).is_ok());
        assert!(clock_ticks_per_second().is_ok_and(|ticks| ticks > 0));
    }

    #[test]
    fn missing_process_is_an_error() {
        assert!(matches!(rss_bytes(u32::MAX), Err(ProbeError::Read { .. })));
        assert!(ServerProbe::start(u32::MAX, Duration::from_millis(10)).is_err());
    }

    /// CPU time consumed so far by the calling thread.
    fn thread_cpu_time() -> Duration {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid, writable timespec for the duration of the call.
        let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
        assert_eq!(status, 0, "clock_gettime failed");
        Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
    }

    /// Spins until this thread has used `cpu` of CPU time (not wall time, so a busy
    /// machine only makes it take longer).
    fn burn_cpu(cpu: Duration) -> u64 {
        let until = thread_cpu_time() + cpu;
        let mut accumulator = 0u64;
        while thread_cpu_time() < until {
            for i in 0..10_000u64 {
                accumulator = std::hint::black_box(accumulator.wrapping_mul(31).wrapping_add(i));
            }
        }
        accumulator
    }

    #[test]
    fn probes_this_process_while_it_burns_cpu() {
        let probe = ServerProbe::start(std::process::id(), Duration::from_millis(20));
        let probe = match probe {
            Ok(probe) => probe,
            Err(error) => panic!("probe did not start: {error}"),
        };
        std::hint::black_box(burn_cpu(Duration::from_millis(200)));
        let report = probe.stop();
        assert_eq!(report.pid, std::process::id());
        assert!(report.samples >= 3, "{report:?}");
        assert!(report.rss_start_bytes > 0, "{report:?}");
        assert!(report.rss_max_bytes >= report.rss_mean_bytes, "{report:?}");
        assert!(report.rss_mean_bytes > 0, "{report:?}");
        assert!(report.rss_end_bytes > 0, "{report:?}");
        assert!(report.cpu_seconds > 0.05, "{report:?}");
        assert!(report.wall_seconds >= 0.2, "{report:?}");
        assert!(report.cpu_cores_used > 0.0, "{report:?}");
    }

    #[test]
    fn process_that_exits_mid_run_keeps_its_samples() {
        let mut child = match Command::new("sleep").arg("0.2").spawn() {
            Ok(child) => child,
            Err(error) => panic!("cannot run sleep: {error}"),
        };
        let probe = match ServerProbe::start(child.id(), Duration::from_millis(10)) {
            Ok(probe) => probe,
            Err(error) => panic!("probe did not start: {error}"),
        };
        assert!(child.wait().is_ok_and(|status| status.success()));
        thread::sleep(Duration::from_millis(50));
        let report = probe.stop();
        assert!(report.samples >= 2, "{report:?}");
        assert!(report.rss_max_bytes > 0, "{report:?}");
        assert!(report.rss_end_bytes > 0, "{report:?}");
        assert!(report.wall_seconds >= 0.2, "{report:?}");
    }
}
