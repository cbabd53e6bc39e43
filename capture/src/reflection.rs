//! Serde types for `reflection.v1` (`reflection.v1.schema.json` in this crate, embedded by [`crate::schema`]).
//!
//! The types mirror the schema exactly: every `required` property is a non-optional field, the optional ones are
//! `Option` (always written, as `null` when absent, which the schema allows), `additionalProperties: false` is
//! `deny_unknown_fields`, enums and constants are Rust enums, and ranges are newtypes that refuse out-of-range
//! values while deserialising. A document that fails the schema therefore fails to deserialise.

use std::fmt;
use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

/// One sidecar: what an agent turn changed, how risky that surface is, and the agent's optional self-report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct Reflection {
    pub schema: SchemaVersion,
    pub task_ref: String,
    pub agent: String,
    pub session_id: String,
    pub timestamp: jiff::Timestamp,
    pub repo: String,
    #[serde(default)]
    pub confidence: Option<UnitInterval>,
    #[serde(default)]
    pub most_likely_wrong: Option<MostLikelyWrong>,
    #[serde(default)]
    pub known_not_in_diff: Option<String>,
    pub risk: RiskVerdict,
    pub files_changed: Vec<String>,
    pub provenance: Provenance,
}

/// serde's derive also reads a struct from a JSON *array* of its fields in order, which the schema refuses (its
/// objects are `type: object`). `remote = "Self"` makes the derived code inherent functions; these trait impls
/// admit maps only and hand them to it, without buffering.
macro_rules! objects_only {
    ($($ty:ident),+) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $ty::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct ObjectVisitor;
                impl<'de> serde::de::Visitor<'de> for ObjectVisitor {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a JSON object (", stringify!($ty), ")"))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<$ty, A::Error> {
                        $ty::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    }
                }
                deserializer.deserialize_map(ObjectVisitor)
            }
        }
    )+};
}
pub(crate) use objects_only;

objects_only!(Reflection, MostLikelyWrong, RiskVerdict, Provenance);

/// The literal `"reflection.v1"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SchemaVersion {
    #[default]
    #[serde(rename = "reflection.v1")]
    V1,
}

/// SELF-REPORTED: the single most likely way the work is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct MostLikelyWrong {
    pub surface: Surface,
    pub description: String,
}

/// MECHANICAL: the verdict of the diff risk floor ([`crate::risk::evaluate_risk_floor`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct RiskVerdict {
    pub needs_review: bool,
    pub score: UnitInterval,
    pub surface: Surface,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct Provenance {
    pub source: Source,
    pub reflection_attempt: NonZeroU32,
    pub degraded: bool,
    pub reflection_mode: ReflectionMode,
}

/// The literal `"stop-hook"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Source {
    #[default]
    #[serde(rename = "stop-hook")]
    StopHook,
}

/// A change surface of the risk floor, ordered from least to most risky.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Surface {
    None,
    Docs,
    Test,
    Ui,
    Build,
    Infra,
    Data,
    Auth,
}

impl Surface {
    /// Every surface, most risky first (the order the risk floor reports them in).
    pub const ALL: [Surface; 8] = [
        Surface::Auth,
        Surface::Data,
        Surface::Infra,
        Surface::Build,
        Surface::Ui,
        Surface::Test,
        Surface::Docs,
        Surface::None,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Auth => "auth",
            Surface::Data => "data",
            Surface::Infra => "infra",
            Surface::Build => "build",
            Surface::Ui => "ui",
            Surface::Test => "test",
            Surface::Docs => "docs",
            Surface::None => "none",
        }
    }

    /// The risk weight of the PRD §6 table.
    pub fn weight(self) -> f64 {
        match self {
            Surface::Auth => 1.0,
            Surface::Data => 0.9,
            Surface::Infra => 0.85,
            Surface::Build => 0.6,
            Surface::Ui => 0.4,
            Surface::Test => 0.2,
            Surface::Docs => 0.1,
            Surface::None => 0.0,
        }
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Surface {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Surface::ALL
            .into_iter()
            .find(|surface| surface.as_str() == s)
            .ok_or_else(|| {
                format!("unknown surface `{s}` (expected one of auth, data, infra, build, ui, test, docs, none)")
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReflectionMode {
    Off,
    Solo,
    Orchestrated,
}

impl ReflectionMode {
    /// Parses `REFLECTION_MODE`; anything unknown is `None`, which the hook treats as off.
    pub fn from_env_value(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "off" => Some(Self::Off),
            "solo" => Some(Self::Solo),
            "orchestrated" => Some(Self::Orchestrated),
            _ => None,
        }
    }
}

/// A finite number in `[0, 1]` (the schema's `minimum: 0, maximum: 1`).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct UnitInterval(f64);

impl UnitInterval {
    pub fn new(value: f64) -> Result<Self, OutOfRange> {
        if (0.0..=1.0).contains(&value) {
            Ok(Self(value))
        } else {
            Err(OutOfRange(value))
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for UnitInterval {
    type Error = OutOfRange;
    fn try_from(value: f64) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<UnitInterval> for f64 {
    fn from(value: UnitInterval) -> f64 {
        value.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("{0} is outside [0, 1]")]
pub struct OutOfRange(pub f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surfaces_order_by_weight() {
        let mut by_weight = Surface::ALL;
        by_weight.sort_by(|a, b| b.weight().total_cmp(&a.weight()));
        assert_eq!(by_weight, Surface::ALL);
        let mut by_ord = Surface::ALL;
        by_ord.sort_by(|a, b| b.cmp(a));
        assert_eq!(by_ord, Surface::ALL);
    }

    #[test]
    fn unit_interval_refuses_out_of_range() {
        assert_eq!(UnitInterval::new(1.5), Err(OutOfRange(1.5)));
        assert!(UnitInterval::new(f64::NAN).is_err());
        assert!(UnitInterval::new(-0.01).is_err());
        assert_eq!(UnitInterval::new(1.0).unwrap().get(), 1.0);
        assert!(serde_json::from_str::<UnitInterval>("1.5").is_err());
        assert_eq!(serde_json::from_str::<UnitInterval>("0.25").unwrap().get(), 0.25);
    }

    #[test]
    fn mode_parsing_is_strict_about_values() {
        assert_eq!(ReflectionMode::from_env_value("solo"), Some(ReflectionMode::Solo));
        assert_eq!(
            ReflectionMode::from_env_value(" Orchestrated "),
            Some(ReflectionMode::Orchestrated)
        );
        assert_eq!(ReflectionMode::from_env_value("on"), None);
        assert_eq!(ReflectionMode::from_env_value(""), None);
    }
}
