//! Scanners: read and normalise inputs into typed rows. They know nothing about experiments.

pub mod corpus;
