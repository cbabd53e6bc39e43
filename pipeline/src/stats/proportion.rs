//! Intervals for proportions: Wilson score, Newcombe's hybrid score difference, Katz log ratio.

use super::{StatsError, check_z};

/// A point estimate with a two-sided interval `[lo, hi]`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
}

fn check_counts(successes: u64, n: u64) -> Result<(), StatsError> {
    if successes <= n {
        Ok(())
    } else {
        Err(StatsError::SuccessesExceedTrials { successes, n })
    }
}

/// Wilson score interval for `successes / n`:
///
/// `(p̂ + z²/2n ± z·sqrt(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)`.
///
/// The bounds are clipped to `[0, 1]`; at `successes = 0` the lower bound is exactly 0 and at `successes = n`
/// the upper bound is exactly 1. `None` when `n = 0` (no data: undefined).
///
/// # Errors
/// `successes > n`, or a negative / non-finite `z`.
pub fn wilson(successes: u64, n: u64, z: f64) -> Result<Option<Interval>, StatsError> {
    check_counts(successes, n)?;
    check_z(z)?;
    if n == 0 {
        return Ok(None);
    }
    Ok(Some(wilson_on(
        successes as f64 / n as f64,
        n as f64,
        z,
        successes == 0,
        successes == n,
    )))
}

/// The Wilson score interval of the share `p` on `n` trials (a real number: an effective size) with the critical
/// value `z`; `none` / `all` pin the bound at 0 / 1 (no success / only successes), where rounding must not move it.
pub(crate) fn wilson_on(p: f64, n: f64, z: f64, none: bool, all: bool) -> Interval {
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let lo = if none { 0.0 } else { (center - half).clamp(0.0, 1.0) };
    let hi = if all { 1.0 } else { (center + half).clamp(0.0, 1.0) };
    Interval { estimate: p, lo, hi }
}

/// Difference `p1 − p2` of two proportions with Newcombe's hybrid score interval (method 10 of Newcombe 1998,
/// "Interval estimation for the difference between independent proportions", Stat. Med. 17:873–890).
///
/// With `(l1, u1)`, `(l2, u2)` the [`wilson`] intervals of `p1 = x1/n1` and `p2 = x2/n2` and `d = p1 − p2`:
///
/// `lo = d − sqrt((p1 − l1)² + (u2 − p2)²)`, `hi = d + sqrt((u1 − p1)² + (p2 − l2)²)`.
///
/// The result is in proportion units; multiply by 100 for percentage points. In P1 this is the *lift* of the
/// high-confidence subset (`x1/n1`) over the whole corpus (`x2/n2`).
///
/// **Independence caveat.** The method assumes two *independent* samples. When the high subset is part of the
/// whole (as in P1) the two proportions are positively correlated (`Cov(p1, p2) = (n1/n2)·Var(p1)`), so
/// this interval ignores the `−2·Cov` term of `Var(p1 − p2)` and is conservative (wider than necessary, by the
/// normal-approximation argument); it is reported as such, not as an exact interval for nested samples. (Comparing the subset with its complement would make the samples
/// disjoint and the assumption exact.)
///
/// `None` when `n1 = 0` or `n2 = 0`.
///
/// # Errors
/// As [`wilson`].
pub fn newcombe_difference(x1: u64, n1: u64, x2: u64, n2: u64, z: f64) -> Result<Option<Interval>, StatsError> {
    let (Some(a), Some(b)) = (wilson(x1, n1, z)?, wilson(x2, n2, z)?) else {
        return Ok(None);
    };
    let d = a.estimate - b.estimate;
    let lo = d - ((a.estimate - a.lo).powi(2) + (b.hi - b.estimate).powi(2)).sqrt();
    let hi = d + ((a.hi - a.estimate).powi(2) + (b.estimate - b.lo).powi(2)).sqrt();
    Ok(Some(Interval {
        estimate: d,
        lo: lo.max(-1.0),
        hi: hi.min(1.0),
    }))
}

/// Ratio `p1 / p2` of two proportions with the log-scale (Katz et al. 1978) interval
///
/// `exp(ln(p1/p2) ± z·sqrt(1/x1 − 1/n1 + 1/x2 − 1/n2))`.
///
/// Same independence caveat as [`newcombe_difference`] when sample 1 is a subset of sample 2.
/// `None` when either `n` or either success count is 0 (the log ratio or its variance is undefined).
///
/// # Errors
/// As [`wilson`].
pub fn katz_ratio(x1: u64, n1: u64, x2: u64, n2: u64, z: f64) -> Result<Option<Interval>, StatsError> {
    check_counts(x1, n1)?;
    check_counts(x2, n2)?;
    check_z(z)?;
    if x1 == 0 || x2 == 0 {
        return Ok(None);
    }
    let (x1, n1, x2, n2) = (x1 as f64, n1 as f64, x2 as f64, n2 as f64);
    let ratio = (x1 / n1) / (x2 / n2);
    let se = (1.0 / x1 - 1.0 / n1 + 1.0 / x2 - 1.0 / n2).max(0.0).sqrt();
    let log_r = ratio.ln();
    Ok(Some(Interval {
        estimate: ratio,
        lo: (log_r - z * se).exp(),
        hi: (log_r + z * se).exp(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::z_two_sided;

    fn z95() -> f64 {
        z_two_sided(0.05).unwrap()
    }

    #[test]
    fn wilson_at_zero_and_all() {
        let z = z95();
        let zero = wilson(0, 10, z).unwrap().unwrap();
        assert_eq!(zero.estimate, 0.0);
        assert_eq!(zero.lo, 0.0);
        // Upper bound at 0/n: z²/(n + z²).
        assert!((zero.hi - z * z / (10.0 + z * z)).abs() < 1e-15);
        let all = wilson(10, 10, z).unwrap().unwrap();
        assert_eq!(all.estimate, 1.0);
        assert_eq!(all.hi, 1.0);
        assert!((all.lo - 10.0 / (10.0 + z * z)).abs() < 1e-15);
    }

    #[test]
    fn wilson_empty_and_invalid() {
        assert_eq!(wilson(0, 0, 1.96).unwrap(), None);
        assert!(matches!(
            wilson(3, 2, 1.96),
            Err(StatsError::SuccessesExceedTrials { .. })
        ));
        assert!(wilson(1, 2, -1.0).is_err());
        assert!(wilson(1, 2, f64::INFINITY).is_err());
    }

    #[test]
    fn wilson_z_zero_is_the_point() {
        let w = wilson(3, 4, 0.0).unwrap().unwrap();
        assert_eq!((w.lo, w.estimate, w.hi), (0.75, 0.75, 0.75));
    }

    #[test]
    fn newcombe_equal_proportions_straddles_zero() {
        let d = newcombe_difference(30, 50, 60, 100, z95()).unwrap().unwrap();
        assert_eq!(d.estimate, 0.0);
        assert!(d.lo < 0.0 && d.hi > 0.0);
        assert_eq!(newcombe_difference(1, 0, 1, 2, 1.96).ok(), None);
        assert_eq!(newcombe_difference(0, 0, 1, 2, 1.96).unwrap(), None);
    }

    #[test]
    fn katz_undefined_and_equal() {
        assert_eq!(katz_ratio(0, 10, 5, 10, 1.96).unwrap(), None);
        assert_eq!(katz_ratio(0, 0, 5, 10, 1.96).unwrap(), None);
        let r = katz_ratio(5, 10, 5, 10, 1.96).unwrap().unwrap();
        assert_eq!(r.estimate, 1.0);
        assert!((r.lo * r.hi - 1.0).abs() < 1e-12);
    }
}
