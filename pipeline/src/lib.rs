//! `pipeline`: the Phase-0 experiments behind the `phase0` binary.
//!
//! The experiments (P1 calibration, P2 gate buckets, P3 detectability) land here one by one; until then the
//! library offers the capture overview that `phase0 demo` prints: the change surface of a repository and its
//! risk-floor verdict, computed by the same `capture` code the Stop hook runs.

pub mod demo;
pub mod stats;
