//! One hook invocation. Being written.
