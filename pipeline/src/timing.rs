//! Where a run's time goes, for whoever measures it: with `PHASE0_TIMINGS` set, each phase of a P2 run prints its
//! end on stderr, in seconds since the first mark, with the process's CPU time so far and its anonymous resident
//! memory in MiB (`[  0.118 cpu   0.116 anon   143] walked`: a phase whose CPU time grew by less than twice its wall
//! time left a core idle; memory the process touches for the first time is paid for in page faults, the kernel
//! zeroing each page). Never in a report; off by default.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<(Instant, f64)>> = OnceLock::new();

/// Marks the end of phase `what` (the first mark starts the clock).
pub fn mark(what: &str) {
    let start = START.get_or_init(|| std::env::var_os("PHASE0_TIMINGS").map(|_| (Instant::now(), cpu_seconds())));
    if let Some((start, cpu)) = start {
        eprintln!(
            "[{:7.3} cpu {:7.3} anon {:5}] {what}",
            start.elapsed().as_secs_f64(),
            cpu_seconds() - cpu,
            anonymous_mib()
        );
    }
}

/// The process's resident memory that no file backs (its heap, mostly), in MiB: resident less shared pages, from
/// `/proc/self/statm` (Linux; 0 elsewhere).
fn anonymous_mib() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
        let pages: Vec<u64> = statm.split_whitespace().map(|v| v.parse().unwrap_or(0)).collect();
        let (resident, shared) = (pages.get(1).copied().unwrap_or(0), pages.get(2).copied().unwrap_or(0));
        // SAFETY: sysconf reads a constant of the system.
        let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        resident.saturating_sub(shared) * page / (1024 * 1024)
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// The CPU time of every thread of the process so far (user and system); 0 where it cannot be read.
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes one timespec, which lives on this stack frame.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) } == 0 {
            return now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9;
        }
    }
    0.0
}
