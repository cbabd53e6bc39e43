//! The git history scanner (P2): being written.
