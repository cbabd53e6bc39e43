//! Experiments: pure functions from rows and a pre-registration to metrics and a verdict (no I/O, no clock).

pub mod corpus;
pub mod frames;
pub mod p1;
pub mod p2;
pub mod p2_audit;
pub mod p2_pool;
pub mod p3;
pub mod p3_audit;

use serde::Serialize;

pub use p1::VerdictKind;

/// The verdict on a proportion against a pre-registered floor (P2's only-self-reflection share, P3's base rate).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShareVerdict {
    pub kind: VerdictKind,
    /// Why, one sentence per deciding fact.
    pub reasons: Vec<String>,
    /// The denominator the prereg asks for at least.
    pub n_required: u64,
    /// More of it needed before the data can decide (`INCONCLUSIVE` by n), else 0.
    pub n_still_needed: u64,
}

/// How a share verdict names its numbers: `only-self-reflection share` of `classified failures`.
pub struct ShareRule<'a> {
    pub statistic: &'a str,
    pub unit: &'a str,
    /// The kill rule fires below this share.
    pub below: f64,
    pub min_n: u64,
    pub alpha: f64,
}

/// The pre-registered decision on `successes` of `n`, on the Wilson interval of the share: INCONCLUSIVE below
/// `min_n`; KILL when the share is below the floor and so is its whole interval; PASS when the share and its whole
/// interval are at or above it; INCONCLUSIVE when the interval straddles the floor.
pub fn decide_share(successes: u64, n: u64, rule: &ShareRule<'_>) -> ShareVerdict {
    let share = crate::stats::z_two_sided(rule.alpha)
        .ok()
        .and_then(|z| crate::stats::wilson(successes.min(n), n, z).ok().flatten());
    decide_share_on(successes, n, share, rule)
}

/// The verdict decided on an audit-corrected interval of `statistic` instead of the raw one's, under the same rule:
/// KILL when the whole interval lies below `threshold`, PASS when it lies at or above, else INCONCLUSIVE (`None`: the
/// audit gives no interval, for the reason `without_interval`). A raw verdict INCONCLUSIVE for lack of `n` stays so.
pub fn decide_on_corrected(
    raw: &ShareVerdict,
    corrected: Option<crate::stats::Interval>,
    statistic: &str,
    without_interval: &str,
    threshold: f64,
) -> ShareVerdict {
    if raw.n_still_needed > 0 {
        return raw.clone();
    }
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let (kind, reason) = match corrected {
        None => (VerdictKind::Inconclusive, without_interval.to_string()),
        Some(value) => {
            let numbers = format!(
                "audit-corrected {statistic} {} [{}, {}]",
                pct(value.estimate),
                pct(value.lo),
                pct(value.hi)
            );
            let t = pct(threshold);
            if value.estimate < threshold && value.hi < threshold {
                (VerdictKind::Kill, format!("{numbers} lies below {t}"))
            } else if value.estimate >= threshold && value.lo >= threshold {
                (VerdictKind::Pass, format!("{numbers} lies at or above {t}"))
            } else {
                (VerdictKind::Inconclusive, format!("{numbers} straddles {t}"))
            }
        }
    };
    ShareVerdict {
        kind,
        reasons: vec![format!("decided on the audit-corrected interval: {reason}")],
        n_required: raw.n_required,
        n_still_needed: 0,
    }
}

/// [`decide_share`] on a given interval of the share (`None`: it has none), such as a share pooled over
/// repositories with an interval that accounts for them.
pub fn decide_share_on(
    successes: u64,
    n: u64,
    share: Option<crate::stats::Interval>,
    rule: &ShareRule<'_>,
) -> ShareVerdict {
    let verdict = |kind, reason: String, n_still_needed| ShareVerdict {
        kind,
        reasons: vec![reason],
        n_required: rule.min_n,
        n_still_needed,
    };
    if n < rule.min_n {
        return verdict(
            VerdictKind::Inconclusive,
            format!(
                "n = {n} {} is below the pre-registered minimum of {}",
                rule.unit, rule.min_n
            ),
            rule.min_n - n,
        );
    }
    let Some(share) = share else {
        return verdict(
            VerdictKind::Inconclusive,
            format!(
                "the share of {successes} in {n} has no interval (alpha = {})",
                rule.alpha
            ),
            0,
        );
    };
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let (lo, hi, t) = (pct(share.lo), pct(share.hi), pct(rule.below));
    let numbers = format!("{} {} ({successes} of {n})", rule.statistic, pct(share.estimate));
    if share.estimate < rule.below {
        if share.hi < rule.below {
            verdict(
                VerdictKind::Kill,
                format!("{numbers} < {t} and its interval [{lo}, {hi}] lies below it"),
                0,
            )
        } else {
            verdict(
                VerdictKind::Inconclusive,
                format!("{numbers} < {t}, but its interval [{lo}, {hi}] straddles it"),
                0,
            )
        }
    } else if share.lo >= rule.below {
        verdict(
            VerdictKind::Pass,
            format!("{numbers} >= {t} and its interval [{lo}, {hi}] lies at or above it"),
            0,
        )
    } else {
        verdict(
            VerdictKind::Inconclusive,
            format!("{numbers} >= {t}, but its interval [{lo}, {hi}] straddles it"),
            0,
        )
    }
}
