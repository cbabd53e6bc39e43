//! `pipeline`: the Phase-0 experiments behind the `phase0` binary.
//!
//! Data flows one way: scanners ([`scan`]) read inputs into typed rows, experiments compute metrics with the exact
//! statistics of [`stats`] and decide a verdict under a pre-registration ([`prereg`]), renderers write reports.
//! The experiments (P1 calibration, P2 gate buckets, P3 detectability) are [`commands`] of their own; `phase0
//! demo` ([`demo`]) and `phase0 weekly` ([`commands::weekly`]) run all three side by side ([`commands::suite`]).

pub mod cli;
pub mod commands;
pub mod demo;
pub mod experiments;
pub mod prereg;
pub mod report;
pub mod scan;
pub mod stats;
pub mod timing;
