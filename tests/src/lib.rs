//! Helpers live in the test files; this crate exists to run the real binaries end to end.
