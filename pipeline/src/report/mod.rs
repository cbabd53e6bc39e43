//! The shared report layer: the JSON envelope every experiment's report sits in, and the SVG plots.
//! Renderers turn a finished report into bytes; they never compute.

pub mod envelope;
pub mod p1;
pub mod svg;
