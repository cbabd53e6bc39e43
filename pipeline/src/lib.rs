//! `pipeline`: the Phase-0 experiments behind the `phase0` binary.
//!
//! Data flows one way: scanners ([`scan`]) read inputs into typed rows, experiments compute metrics with the exact
//! statistics of [`stats`] and decide a verdict under a pre-registration ([`prereg`]), renderers write reports.
//! The experiments (P1 calibration, P2 gate buckets, P3 detectability) land here one by one; until then
//! `phase0 demo` prints the capture overview ([`demo`]): the change surface of a repository and its risk-floor
//! verdict, computed by the same `capture` code the Stop hook runs.

pub mod commands;
pub mod demo;
pub mod experiments;
pub mod prereg;
pub mod report;
pub mod scan;
pub mod stats;
