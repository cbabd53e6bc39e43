//! P2 over many repositories: each repository's bucket counts (from its failure table), the share pooled over all
//! their classified failures, and the pre-registered kill rule decided on the pooled share's interval with the
//! repositories as clusters (`stats::pooled_share`: failures within one repository are not independent).
//!
//! The kill rule, the threshold, the minimum number of classified failures and alpha are the partitions' own
//! pre-registration's; only the interval differs from one repository's: a design-effect Wilson interval over the
//! repositories instead of the binomial Wilson interval over failures. With one repository (or one with classified
//! failures) the pooled verdict is that repository's own.

use serde::Serialize;

use super::p2::{Buckets, P2Spec, Verdict};
use super::{ShareRule, decide_share_on};
use crate::stats::{self, Interval, PooledShare};

/// One repository's part of a pooled run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepositoryRow {
    #[serde(flatten)]
    pub repository: RepositoryCounts,
    /// Of its classified failures, with the Wilson interval.
    pub self_reflection: Option<Interval>,
    /// Its own verdict under the same pre-registration.
    pub verdict: Verdict,
}

/// How the pooled interval was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolMethod {
    /// Design-effect Wilson interval over at least two repositories with classified failures.
    DesignEffectWilson,
    /// One repository with classified failures: its own Wilson interval.
    OneRepository,
    /// No classified failure anywhere.
    Undefined,
}

impl PoolMethod {
    pub fn meaning(self) -> &'static str {
        match self {
            PoolMethod::DesignEffectWilson => {
                "design-effect Wilson interval with the repositories as clusters (CR3 variance of the ratio, Student's \
                 t on repositories - 1 degrees of freedom)"
            }
            PoolMethod::OneRepository => {
                "one repository has classified failures: its own Wilson interval (no variance between repositories \
                 can be estimated)"
            }
            PoolMethod::Undefined => "no classified failure in any repository: no share",
        }
    }
}

/// The body of `p2-pooled.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PooledAnalysis {
    pub kill_rule: String,
    pub threshold: f64,
    pub min_classified: u64,
    pub alpha: f64,
    /// Sorted by name.
    pub repositories: Vec<RepositoryRow>,
    /// Summed over the repositories.
    pub counts: Buckets,
    pub method: PoolMethod,
    pub method_meaning: &'static str,
    /// The pooled only-self-reflection share and its interval (by `method`).
    pub self_reflection: Option<Interval>,
    /// What the design-effect interval rests on (`method` = design-effect-wilson).
    pub design: Option<PooledShare>,
    /// The binomial Wilson interval over all classified failures as if they were independent, for comparison.
    pub naive: Option<Interval>,
    pub verdict: Verdict,
}

/// A repository's name, path, status and bucket counts, before pooling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepositoryCounts {
    /// `owner/name` or `name`: the partition's key.
    pub name: String,
    /// The repository's path as its own run was given it.
    pub path: String,
    /// Its report's status (`ok`, `partial`) and error code.
    pub status: String,
    pub error_code: Option<String>,
    pub commits_walked: u64,
    pub counts: Buckets,
}

fn rule(spec: &P2Spec) -> ShareRule<'_> {
    ShareRule {
        statistic: "only-self-reflection share",
        unit: "classified failures",
        below: spec.kill.self_reflection_share_below,
        min_n: spec.kill.min_classified,
        alpha: spec.alpha,
    }
}

fn wilson(successes: u64, n: u64, alpha: f64) -> Option<Interval> {
    let z = stats::z_two_sided(alpha).ok()?;
    stats::wilson(successes, n, z).ok().flatten()
}

/// Pools the repositories under `spec` (names must be unique; the caller checks).
pub fn pool(mut repositories: Vec<RepositoryCounts>, spec: &P2Spec) -> PooledAnalysis {
    repositories.sort_by(|a, b| a.name.cmp(&b.name));
    let mut counts = Buckets::default();
    for r in &repositories {
        counts.total += r.counts.total;
        counts.ci += r.counts.ci;
        counts.human_review += r.counts.human_review;
        counts.self_reflection += r.counts.self_reflection;
        counts.ambiguous += r.counts.ambiguous;
        counts.classified += r.counts.classified;
        counts.floor_flagged += r.counts.floor_flagged;
    }
    let clusters: Vec<(u64, u64)> = repositories
        .iter()
        .map(|r| (r.counts.self_reflection, r.counts.classified))
        .collect();
    // Invalid counts cannot come from a report phase0 wrote (the reader checks them): no interval, never a panic.
    let design = stats::pooled_share(&clusters, spec.alpha).ok().flatten();
    let naive = wilson(counts.self_reflection, counts.classified, spec.alpha);
    let (method, self_reflection) = match design {
        Some(d) => (PoolMethod::DesignEffectWilson, Some(d.share)),
        None if counts.classified > 0 => (PoolMethod::OneRepository, naive),
        None => (PoolMethod::Undefined, None),
    };
    let verdict = decide_share_on(counts.self_reflection, counts.classified, self_reflection, &rule(spec));
    let rows = repositories
        .into_iter()
        .map(|r| RepositoryRow {
            self_reflection: wilson(r.counts.self_reflection, r.counts.classified, spec.alpha),
            verdict: super::p2::decide(r.counts.self_reflection, r.counts.classified, spec),
            repository: r,
        })
        .collect();
    PooledAnalysis {
        kill_rule: spec.kill.text.clone(),
        threshold: spec.kill.self_reflection_share_below,
        min_classified: spec.kill.min_classified,
        alpha: spec.alpha,
        repositories: rows,
        counts,
        method,
        method_meaning: method.meaning(),
        self_reflection,
        design,
        naive,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prereg::Prereg;

    fn repo(name: &str, self_reflection: u64, ci: u64, ambiguous: u64) -> RepositoryCounts {
        RepositoryCounts {
            name: name.into(),
            path: format!("/src/{name}"),
            status: "complete".into(),
            error_code: None,
            commits_walked: 100,
            counts: Buckets {
                total: self_reflection + ci + ambiguous,
                ci,
                human_review: 0,
                self_reflection,
                ambiguous,
                classified: self_reflection + ci,
                floor_flagged: 0,
            },
        }
    }

    #[test]
    fn the_pooled_interval_is_wider_than_the_naive_one_when_repositories_differ() {
        let spec = Prereg::p2(None).unwrap().spec;
        // The five-repository case of scripts/reference/pooled_share.py: shares 6%, 44%, 5%, 50%, 67%.
        let pooled = pool(
            vec![
                repo("e", 30, 15, 4),
                repo("a", 12, 188, 0),
                repo("b", 40, 50, 2),
                repo("c", 3, 57, 0),
                repo("d", 150, 150, 9),
            ],
            &spec,
        );
        let names: Vec<&str> = pooled.repositories.iter().map(|r| r.repository.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        assert_eq!(pooled.method, PoolMethod::DesignEffectWilson);
        assert_eq!(
            (
                pooled.counts.self_reflection,
                pooled.counts.classified,
                pooled.counts.ambiguous
            ),
            (235, 695, 15)
        );
        let share = pooled.self_reflection.unwrap();
        assert!((share.lo - 0.0745221296318).abs() < 1e-9 && (share.hi - 0.764215604789).abs() < 1e-9);
        let naive = pooled.naive.unwrap();
        assert!(naive.lo > 0.30 && naive.hi < 0.38, "{naive:?}");
        assert_eq!(pooled.verdict.kind, crate::prereg::VerdictKind::Pass);
        // Each repository keeps its own verdict: `a` (12 of 200 = 6.0%) straddles the threshold, `d` passes.
        assert_eq!(
            pooled.repositories[0].verdict.kind,
            crate::prereg::VerdictKind::Inconclusive
        );
        assert_eq!(pooled.repositories[3].verdict.kind, crate::prereg::VerdictKind::Pass);
    }

    #[test]
    fn one_repository_with_classified_failures_keeps_its_own_interval() {
        let spec = Prereg::p2(None).unwrap().spec;
        let pooled = pool(vec![repo("a", 2, 98, 0), repo("b", 0, 0, 5)], &spec);
        assert_eq!(pooled.method, PoolMethod::OneRepository);
        assert_eq!(pooled.self_reflection, pooled.naive);
        assert_eq!(pooled.verdict, pooled.repositories[0].verdict);
        let none = pool(vec![repo("a", 0, 0, 1)], &spec);
        assert_eq!(none.method, PoolMethod::Undefined);
        assert_eq!(none.verdict.kind, crate::prereg::VerdictKind::Inconclusive);
    }
}
