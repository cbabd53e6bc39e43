//! Scanners: read and normalise inputs into typed rows. They know nothing about experiments.

pub mod board;
pub mod cache_file;
pub mod changed_paths;
pub mod commit_cache;
pub mod commits;
pub mod corpus;
pub mod diff_cache;
pub mod git;
pub mod input;
pub mod reflections;
pub mod remedy_cache;
pub mod task_history;

/// A hasher for keys that already are well-mixed 64-bit hashes (line hashes, corpus duplicate keys): it passes
/// them through unchanged.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdentityHasher(u64);

impl std::hash::Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
