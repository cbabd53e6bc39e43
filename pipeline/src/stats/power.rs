//! Sample-size (power) planning for P1: the AUC against a threshold (Obuchowski-style, with the
//! Hanley–McNeil variance) and single proportions (normal approximation).
//!
//! These are planning approximations, not exact power: they use asymptotic normal variances evaluated at the
//! hypothesised values. Their reference values come from a Python transcription of the same formulas
//! (`scripts/reference/p1_stats.py`), so they check the arithmetic, not the formulas themselves.

use super::{StatsError, check_open_unit, z_one_sided, z_two_sided};

/// A required sample size: the real-valued solution of the formula and its ceiling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleSize {
    pub exact: f64,
    pub n: u64,
}

impl SampleSize {
    fn new(exact: f64) -> Self {
        // `exact` is finite and positive here (all inputs are validated); saturate just in case.
        let n = exact.ceil();
        let n = if n >= u64::MAX as f64 { u64::MAX } else { n as u64 };
        SampleSize { exact, n }
    }
}

/// Required rows per class for an AUC study.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AucSampleSize {
    /// Positives (correct rows), real-valued and rounded up.
    pub positives: SampleSize,
    /// Negatives (wrong rows): `ceil(kappa · positives.n)`.
    pub n_neg: u64,
    /// `positives.n + n_neg`.
    pub total: u64,
}

fn check_positive(name: &'static str, value: f64) -> Result<(), StatsError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(StatsError::Parameter {
            name,
            value,
            expected: "finite and > 0",
        })
    }
}

/// Hanley & McNeil (1982) variance factor `f(A, κ)` such that `Var(AUC) ≈ f(A, κ) / n_pos`:
///
/// `Q1 = A / (2 − A)`, `Q2 = 2A² / (1 + A)`, `f(A, κ) = (Q2 − A²) + (Q1 − A²) / κ`,
///
/// where `κ = n_neg / n_pos` (wrong rows per correct row). This is the large-sample form of Hanley–McNeil's
/// `Var = [A(1−A) + (n_pos−1)(Q1−A²) + (n_neg−1)(Q2−A²)] / (n_pos·n_neg)`
/// ≈ `(Q2−A²)/n_pos + (Q1−A²)/n_neg` (their `Q1`, `Q2` assume exponentially distributed scores).
///
/// # Errors
/// `A` outside `(0, 1)` or `κ` not finite and positive.
pub fn hanley_mcneil_variance_factor(auc: f64, kappa: f64) -> Result<f64, StatsError> {
    check_open_unit("auc", auc)?;
    check_positive("kappa", kappa)?;
    let a2 = auc * auc;
    let q1 = auc / (2.0 - auc);
    let q2 = 2.0 * a2 / (1.0 + auc);
    Ok((q2 - a2) + (q1 - a2) / kappa)
}

/// Positives needed for a one-sided test at level `alpha` with the given `power` to show that the AUC exceeds
/// `threshold` (e.g. 0.60) when it truly is `target` (Obuchowski 1998 form, Hanley–McNeil variances):
///
/// `n_pos = ( z_{1−α}·sqrt(f(θ0, κ)) + z_{power}·sqrt(f(θ1, κ)) )² / (θ1 − θ0)²`,
///
/// with `θ0 = threshold`, `θ1 = target`, `f` from [`hanley_mcneil_variance_factor`] and `κ = n_neg/n_pos`
/// (for an accuracy `π`, `κ = (1 − π)/π`). `n_neg = ceil(κ · ceil(n_pos))`.
///
/// # Errors
/// `target <= threshold`, either outside `(0, 1)`, `alpha` or `power` outside `(0, 1)`, bad `kappa`.
pub fn auc_sample_size_test(
    target: f64,
    threshold: f64,
    kappa: f64,
    alpha: f64,
    power: f64,
) -> Result<AucSampleSize, StatsError> {
    let f0 = hanley_mcneil_variance_factor(threshold, kappa)?;
    let f1 = hanley_mcneil_variance_factor(target, kappa)?;
    if target <= threshold {
        return Err(StatsError::Parameter {
            name: "target",
            value: target,
            expected: "> threshold",
        });
    }
    check_open_unit("power", power)?;
    let za = z_one_sided(alpha)?;
    let zb = z_one_sided(1.0 - power)?;
    let num = za * f0.sqrt() + zb * f1.sqrt();
    let exact = (num / (target - threshold)).powi(2);
    Ok(auc_size(exact, kappa))
}

/// Positives needed so that the two-sided `1 − alpha` Wald interval of an AUC of `auc` has half-width at
/// most `half_width`: `n_pos = z_{1−α/2}² · f(A, κ) / w²` (Hanley–McNeil variance, see
/// [`hanley_mcneil_variance_factor`]); `n_neg = ceil(κ · ceil(n_pos))`.
///
/// # Errors
/// `auc`, `half_width` or `alpha` outside `(0, 1)`, bad `kappa`.
pub fn auc_sample_size_ci(auc: f64, half_width: f64, kappa: f64, alpha: f64) -> Result<AucSampleSize, StatsError> {
    let f = hanley_mcneil_variance_factor(auc, kappa)?;
    check_open_unit("half_width", half_width)?;
    let z = z_two_sided(alpha)?;
    Ok(auc_size(z * z * f / (half_width * half_width), kappa))
}

fn auc_size(exact: f64, kappa: f64) -> AucSampleSize {
    let positives = SampleSize::new(exact);
    let n_neg = SampleSize::new(kappa * positives.n as f64).n;
    AucSampleSize {
        positives,
        n_neg,
        total: positives.n.saturating_add(n_neg),
    }
}

/// Rows needed for a one-sided one-sample test at level `alpha` with the given `power` to show that a
/// proportion exceeds `p0` when it truly is `p1` (normal approximation, no continuity correction):
///
/// `n = ( z_{1−α}·sqrt(p0(1−p0)) + z_{power}·sqrt(p1(1−p1)) )² / (p1 − p0)²`.
///
/// # Errors
/// `p1 <= p0`, either outside `(0, 1)`, `alpha` or `power` outside `(0, 1)`.
pub fn proportion_sample_size_test(p1: f64, p0: f64, alpha: f64, power: f64) -> Result<SampleSize, StatsError> {
    check_open_unit("p0", p0)?;
    check_open_unit("p1", p1)?;
    if p1 <= p0 {
        return Err(StatsError::Parameter {
            name: "p1",
            value: p1,
            expected: "> p0",
        });
    }
    check_open_unit("power", power)?;
    let za = z_one_sided(alpha)?;
    let zb = z_one_sided(1.0 - power)?;
    let num = za * (p0 * (1.0 - p0)).sqrt() + zb * (p1 * (1.0 - p1)).sqrt();
    Ok(SampleSize::new((num / (p1 - p0)).powi(2)))
}

/// Rows needed so that the two-sided `1 − alpha` Wald interval of a proportion `p` has half-width at most
/// `half_width`: `n = z_{1−α/2}² · p(1−p) / w²` (normal approximation; the Wilson interval used for reporting
/// is close to it at these sizes).
///
/// # Errors
/// `p`, `half_width` or `alpha` outside `(0, 1)`.
pub fn proportion_sample_size_ci(p: f64, half_width: f64, alpha: f64) -> Result<SampleSize, StatsError> {
    check_open_unit("p", p)?;
    check_open_unit("half_width", half_width)?;
    let z = z_two_sided(alpha)?;
    Ok(SampleSize::new(z * z * p * (1.0 - p) / (half_width * half_width)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variance_factor_at_one_half() {
        // A = ½: Q1 = Q2 = 1/3, so f = (1/3 − 1/4)(1 + 1/κ) = (1 + 1/κ)/12.
        let f = hanley_mcneil_variance_factor(0.5, 1.0).unwrap();
        assert!((f - 2.0 / 12.0).abs() < 1e-15);
    }

    #[test]
    fn test_sizes_grow_as_the_gap_shrinks() {
        let wide = auc_sample_size_test(0.75, 0.60, 0.5, 0.05, 0.8).unwrap();
        let narrow = auc_sample_size_test(0.65, 0.60, 0.5, 0.05, 0.8).unwrap();
        assert!(narrow.positives.n > wide.positives.n);
        assert_eq!(wide.n_neg, (0.5 * wide.positives.n as f64).ceil() as u64);
        assert_eq!(wide.total, wide.positives.n + wide.n_neg);
    }

    #[test]
    fn proportion_ci_size_textbook() {
        // p = ½, w = 0.05, 95 %: 1.959964² · ¼ / 0.0025 = 384.15 → 385.
        let s = proportion_sample_size_ci(0.5, 0.05, 0.05).unwrap();
        assert_eq!(s.n, 385);
    }

    #[test]
    fn bad_parameters() {
        assert!(auc_sample_size_test(0.6, 0.6, 1.0, 0.05, 0.8).is_err());
        assert!(auc_sample_size_test(0.7, 0.6, 0.0, 0.05, 0.8).is_err());
        assert!(auc_sample_size_test(0.7, 0.6, 1.0, 0.05, 1.0).is_err());
        assert!(auc_sample_size_ci(1.0, 0.05, 1.0, 0.05).is_err());
        assert!(proportion_sample_size_test(0.5, 0.6, 0.05, 0.8).is_err());
        assert!(proportion_sample_size_ci(0.5, f64::NAN, 0.05).is_err());
    }
}
