//! `capture`: the shared vocabulary of phase0 and the `reflect-hook` Claude Code Stop hook.
//!
//! - [`reflection`]: serde types for `reflection.v1`, exact to the schema;
//! - [`schema`]: the embedded JSON Schema and a validator for it;
//! - [`risk`]: the diff risk floor (PRD §6), a pure function of the changed paths;
//! - [`mod@redact`]: the secret redactor every writer of copied text uses;
//! - [`surface`]: the change surface of a repository (committed-but-unpushed, staged, unstaged, untracked);
//! - [`hook`]: what one Stop/SubagentStop invocation does, and [`install`]: registering it in Claude Code settings.
//!
//! The risk floor is a *floor*, a minimum review requirement: consumers treat CI and tests as authoritative above
//! it (precedence: CI/tests > human merge > reviewer verdict > self-reflection).
//!
//! Light dependencies only (no polars): the hook's start-up time is a product feature.

pub mod hook;
pub mod install;
pub mod redact;
pub mod reflection;
pub mod regular_file;
pub mod risk;
pub mod schema;
pub mod surface;

pub use redact::redact;
pub use reflection::{Reflection, RiskVerdict, Surface};
pub use risk::{DEFAULT_RISK_THRESHOLD, evaluate_risk_floor};
