//! The change surface of a repository. Being written.
