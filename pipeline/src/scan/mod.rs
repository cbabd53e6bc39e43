//! Scanners: read and normalise inputs into typed rows. They know nothing about experiments.

pub mod board;
pub mod changed_paths;
pub mod commits;
pub mod corpus;
pub mod diff_cache;
pub mod git;
pub mod input;
pub mod reflections;
pub mod task_history;
