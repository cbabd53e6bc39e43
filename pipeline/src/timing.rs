//! Where a run's time goes, for whoever measures it: with `PHASE0_TIMINGS` set, each phase of a P2 run prints its
//! end on stderr, in seconds since the first mark (`[  0.118] walked`). Never in a report; off by default.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<Instant>> = OnceLock::new();

/// Marks the end of phase `what` (the first mark starts the clock).
pub fn mark(what: &str) {
    let start = START.get_or_init(|| std::env::var_os("PHASE0_TIMINGS").map(|_| Instant::now()));
    if let Some(start) = start {
        eprintln!("[{:7.3}] {what}", start.elapsed().as_secs_f64());
    }
}
