//! A share pooled over clusters (P2's repositories): failures within a repository are not independent, so the
//! interval of the pooled share must widen with the differences between repositories.
//!
//! The estimate is the ratio `X / M` (all successes over all trials, each failure weighing the same). Its interval
//! is a **design-effect Wilson interval**:
//! 1. the variance of the ratio by the CR3 cluster-robust estimator, `Σ e_i² / (1 − h_i)² / M²` with the residual
//!    `e_i = x_i − p·m_i` and the leverage `h_i = m_i / M` (close to the delete-one-cluster jackknife; the plain
//!    linearisation estimator, CR1, covers far below its nominal rate when one cluster dominates);
//! 2. the design effect, that variance over the binomial one `p(1 − p) / M`, never below 1;
//! 3. the Wilson score interval on the effective size `M / deff`, with Student's t on `k − 1` degrees of freedom
//!    as the critical value (Korn and Graubard 1998, "Confidence intervals for proportions with small expected
//!    number of positive counts estimated from survey data").
//!
//! Clusters with no trials are left out. With fewer than two clusters left there is no between-cluster variance to
//! estimate: [`pooled_share`] returns `None`, and callers use the one cluster's own Wilson interval.
//! `scripts/reference/pooled_share.py` computes the same apart from this code; docs/p2.md gives its coverage by
//! simulation, and `pipeline/tests/pool.rs` pins one simulated scenario.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::{Interval, StatsError};

/// The pooled share and what its interval rests on.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PooledShare {
    pub share: Interval,
    /// Clusters with at least one trial.
    pub clusters: usize,
    pub successes: u64,
    pub trials: u64,
    /// The cluster-robust variance over the binomial one (at least 1).
    pub design_effect: f64,
    /// `trials / design_effect`.
    pub effective_n: f64,
    /// Student's t quantile at `1 − alpha/2` on `clusters − 1` degrees of freedom.
    pub critical: f64,
}

/// The share of `(successes, trials)` pooled over clusters, with its design-effect Wilson `1 − alpha` interval
/// (module documentation). `None` with fewer than two clusters that have trials.
///
/// # Errors
/// [`StatsError::SuccessesExceedTrials`] for a cluster with more successes than trials, [`StatsError::Parameter`]
/// unless `0 < alpha < 1`.
pub fn pooled_share(clusters: &[(u64, u64)], alpha: f64) -> Result<Option<PooledShare>, StatsError> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(StatsError::Parameter {
            name: "alpha",
            value: alpha,
            expected: "0 < alpha < 1",
        });
    }
    if let Some(&(successes, n)) = clusters.iter().find(|(x, m)| x > m) {
        return Err(StatsError::SuccessesExceedTrials { successes, n });
    }
    let kept: Vec<(f64, f64)> = clusters
        .iter()
        .filter(|(_, m)| *m > 0)
        .map(|&(x, m)| (x as f64, m as f64))
        .collect();
    if kept.len() < 2 {
        return Ok(None);
    }
    let successes: u64 = clusters.iter().map(|c| c.0).sum();
    let trials: u64 = clusters.iter().map(|c| c.1).sum();
    let total = trials as f64;
    let p = successes as f64 / total;
    let variance = kept
        .iter()
        .map(|&(x, m)| {
            let residual = x - p * m;
            let leverage = m / total;
            (residual / (1.0 - leverage)).powi(2)
        })
        .sum::<f64>()
        / (total * total);
    let binomial = p * (1.0 - p) / total;
    let design_effect = if binomial > 0.0 {
        (variance / binomial).max(1.0)
    } else {
        1.0
    };
    let effective_n = total / design_effect;
    let degrees = (kept.len() - 1) as f64;
    let critical = StudentsT::new(0.0, 1.0, degrees)
        .map_err(|_| StatsError::Parameter {
            name: "degrees of freedom",
            value: degrees,
            expected: "> 0",
        })?
        .inverse_cdf(1.0 - alpha / 2.0);
    let share = super::proportion::wilson_on(p, effective_n, critical, successes == 0, successes == trials);
    Ok(Some(PooledShare {
        share,
        clusters: kept.len(),
        successes,
        trials,
        design_effect,
        effective_n,
        critical,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    /// Values from `python3 scripts/reference/pooled_share.py` (numpy, scipy).
    #[test]
    fn matches_the_reference_script() {
        let five = pooled_share(&[(12, 200), (40, 90), (3, 60), (150, 300), (30, 45)], 0.05)
            .unwrap()
            .unwrap();
        close(five.share.estimate, 0.338129496403);
        close(five.share.lo, 0.0745221296318);
        close(five.share.hi, 0.764215604789);
        close(five.design_effect, 90.8385957843);
        close(five.effective_n, 7.65093288816);
        close(five.critical, 2.7764451052);
        assert_eq!((five.clusters, five.successes, five.trials), (5, 235, 695));

        let homogeneous = pooled_share(&[(10, 100), (20, 200), (30, 300)], 0.05).unwrap().unwrap();
        close(homogeneous.share.lo, 0.0587076011622);
        close(homogeneous.share.hi, 0.16523734536);
        close(homogeneous.design_effect, 1.0);

        let two = pooled_share(&[(0, 50), (8, 40)], 0.05).unwrap().unwrap();
        close(two.share.lo, 0.000194939992844);
        close(two.share.hi, 0.979926330321);
        close(two.design_effect, 22.5);

        let none = pooled_share(&[(0, 10), (0, 20), (0, 30)], 0.05).unwrap().unwrap();
        assert_eq!(none.share.lo, 0.0);
        close(none.share.hi, 0.235793598955);
    }

    #[test]
    fn clusters_without_trials_are_left_out_and_one_cluster_has_no_pooled_interval() {
        assert_eq!(pooled_share(&[(3, 10), (0, 0)], 0.05).unwrap(), None);
        assert_eq!(pooled_share(&[], 0.05).unwrap(), None);
        let with_empty = pooled_share(&[(10, 100), (0, 0), (20, 200), (30, 300)], 0.05)
            .unwrap()
            .unwrap();
        let without = pooled_share(&[(10, 100), (20, 200), (30, 300)], 0.05).unwrap().unwrap();
        assert_eq!(with_empty, without);
    }

    #[test]
    fn invalid_input_is_an_error() {
        assert!(matches!(
            pooled_share(&[(11, 10), (1, 2)], 0.05),
            Err(StatsError::SuccessesExceedTrials { successes: 11, n: 10 })
        ));
        assert!(matches!(
            pooled_share(&[(1, 10), (1, 2)], 1.0),
            Err(StatsError::Parameter { .. })
        ));
    }
}
