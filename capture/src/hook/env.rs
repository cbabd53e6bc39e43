//! The hook's environment contract (upstream's, plus a time budget, a base override and debug output).

use std::path::PathBuf;
use std::time::Duration;

use crate::reflection::ReflectionMode;
use crate::risk::DEFAULT_RISK_THRESHOLD;

/// Default time budget of one hook run.
pub const DEFAULT_BUDGET: Duration = Duration::from_millis(2000);

/// Everything the hook reads from its environment, read once.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEnv {
    /// `REFLECTION_MODE`: `solo` or `orchestrated` (off and unknown values never produce a `HookEnv`).
    pub mode: ReflectionMode,
    /// `REFLECTION_DIR`; relative paths are relative to the repository root. Default `<repo>/.mosaic/reflections`.
    pub dir: Option<PathBuf>,
    /// `REFLECTION_INPUT`; relative paths are relative to the repository root.
    /// Default `<repo>/.mosaic/reflection-input.json`.
    pub input: Option<PathBuf>,
    /// `REFLECTION_TASK_REF`; default `<repo>#<branch>`.
    pub task_ref: Option<String>,
    /// `REFLECTION_AGENT`; default the payload's `agent_type`, else `unknown`.
    pub agent: Option<String>,
    /// `REFLECTION_RISK_THRESHOLD` in `[0, 1]`; anything else falls back to 0.5.
    pub risk_threshold: f64,
    /// `REFLECTION_BASE`: the revision committed work is compared against.
    pub base: Option<String>,
    /// `REFLECTION_BUDGET_MS`: how long the run may take before it writes what it knows, degraded.
    pub budget: Duration,
    /// `REFLECTION_DEBUG`: `1` for diagnostics on stderr, `file` for a bounded log in the reflections directory.
    pub debug: DebugSink,
    /// `CLAUDE_PROJECT_DIR`: where to look for the repository when the payload's `cwd` is not in one.
    pub project_dir: Option<PathBuf>,
    /// `CLAUDE_CODE_SESSION_ID`: the session when the payload does not name one.
    pub session_id: Option<String>,
    /// `REFLECTION_INSTRUCTIONS`: a file whose text replaces the embedded self-report request.
    pub instructions: Option<PathBuf>,
}

/// The variable naming a file that replaces the embedded self-report request.
pub const INSTRUCTIONS_VAR: &str = "REFLECTION_INSTRUCTIONS";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugSink {
    Off,
    Stderr,
    File,
}

impl HookEnv {
    /// Reads the process environment. `None` when the hook is off: `REFLECTION_MODE` unset, `off` or unknown.
    pub fn from_process() -> Option<Self> {
        Self::from_lookup(|name| std::env::var_os(name).and_then(|value| value.into_string().ok()))
    }

    /// Reads the contract through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let mode = ReflectionMode::from_env_value(&lookup("REFLECTION_MODE")?)?;
        if mode == ReflectionMode::Off {
            return None;
        }
        let non_empty = |name: &str| {
            lookup(name)
                .map(|value| value.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let risk_threshold = non_empty("REFLECTION_RISK_THRESHOLD")
            .and_then(|value| value.parse::<f64>().ok())
            .filter(|value| (0.0..=1.0).contains(value))
            .unwrap_or(DEFAULT_RISK_THRESHOLD);
        let budget = non_empty("REFLECTION_BUDGET_MS")
            .and_then(|value| value.parse::<u64>().ok())
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_BUDGET);
        let debug = match non_empty("REFLECTION_DEBUG").as_deref() {
            None | Some("0") | Some("false") | Some("off") => DebugSink::Off,
            Some("file") => DebugSink::File,
            Some(_) => DebugSink::Stderr,
        };
        Some(Self {
            mode,
            dir: non_empty("REFLECTION_DIR").map(PathBuf::from),
            input: non_empty("REFLECTION_INPUT").map(PathBuf::from),
            task_ref: non_empty("REFLECTION_TASK_REF"),
            agent: non_empty("REFLECTION_AGENT"),
            risk_threshold,
            base: non_empty("REFLECTION_BASE"),
            budget,
            debug,
            project_dir: non_empty("CLAUDE_PROJECT_DIR").map(PathBuf::from),
            session_id: non_empty("CLAUDE_CODE_SESSION_ID"),
            instructions: non_empty(INSTRUCTIONS_VAR).map(PathBuf::from),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> Option<HookEnv> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        HookEnv::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn off_unset_and_unknown_modes_disable_the_hook() {
        assert_eq!(env(&[]), None);
        assert_eq!(env(&[("REFLECTION_MODE", "off")]), None);
        assert_eq!(env(&[("REFLECTION_MODE", "yes")]), None);
    }

    #[test]
    fn defaults_and_overrides() {
        let defaults = env(&[("REFLECTION_MODE", "solo")]).unwrap();
        assert_eq!(defaults.mode, ReflectionMode::Solo);
        assert_eq!(defaults.risk_threshold, 0.5);
        assert_eq!(defaults.budget, Duration::from_millis(2000));
        assert_eq!(defaults.debug, DebugSink::Off);
        assert_eq!(defaults.dir, None);

        let set = env(&[
            ("REFLECTION_MODE", "orchestrated"),
            ("REFLECTION_RISK_THRESHOLD", "0.3"),
            ("REFLECTION_BUDGET_MS", "50"),
            ("REFLECTION_DEBUG", "1"),
            ("REFLECTION_DIR", "out/refl"),
            ("REFLECTION_AGENT", "  "),
        ])
        .unwrap();
        assert_eq!(set.risk_threshold, 0.3);
        assert_eq!(set.budget, Duration::from_millis(50));
        assert_eq!(set.debug, DebugSink::Stderr);
        assert_eq!(set.dir, Some(PathBuf::from("out/refl")));
        assert_eq!(set.agent, None, "blank values count as unset");
    }

    #[test]
    fn out_of_range_threshold_falls_back_to_default() {
        for bad in ["1.5", "-0.1", "NaN", "high"] {
            let parsed = env(&[("REFLECTION_MODE", "solo"), ("REFLECTION_RISK_THRESHOLD", bad)]).unwrap();
            assert_eq!(parsed.risk_threshold, 0.5, "{bad}");
        }
    }
}
