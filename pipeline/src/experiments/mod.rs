//! Experiments: pure functions from rows and a pre-registration to metrics and a verdict (no I/O, no clock).

pub mod p1;
pub mod p2;
pub mod p3;
