//! Exact statistics core of the P1 calibration experiment: a pure library (no I/O, no data frames).
//!
//! Conventions shared by every function here:
//!
//! * **Invalid input is an error** ([`StatsError`]): a NaN or infinite value, slices of different lengths, a
//!   confidence outside `[0, 1]`, `successes > n`, an `alpha` or `z` out of range
//!   (`z` must lie in `[0, 1e6]`). Such input is a caller bug.
//! * **A statistically undefined quantity is not an error** and never NaN: it is `None` (or, for the AUC, an
//!   [`AucOutcome::Undefined`] carrying the reason), e.g. a proportion of zero rows or an AUC with fewer than
//!   two rows in one class.
//! * Labels are `bool` with `true` = the answer was correct = the positive class (as scikit-learn's
//!   `pos_label=1` on `correct`).
//! * Everything is deterministic: sorts use [`f64::total_cmp`] (stable), and `-0.0` is treated as `0.0`.
//! * Interval functions take the two-sided normal quantile `z`; get it from [`z_two_sided`]
//!   (`z_two_sided(DEFAULT_ALPHA)` ≈ 1.959964 for a 95 % interval).
//!
//! Reference values from an independent Python implementation (`scripts/reference/p1_stats.py`) are checked
//! by `pipeline/tests/stats_reference.rs`.

mod agreement;
mod auc;
pub(crate) mod bootstrap;
mod calibration;
mod cluster;
mod groups;
mod power;
mod proportion;
mod roc;

pub use agreement::{Agreement, ConfusionMatrix};
pub use auc::{Auc, AucOutcome, UndefinedAuc, auc, auc_of_groups};
pub use bootstrap::{BootstrapIntervals, stratified_bootstrap};
pub use calibration::{
    Binning, ReliabilityBin, average_precision, average_precision_of_groups, brier, brier_of_groups, ece,
    ece_equal_mass, ece_equal_width, equal_mass_table, equal_width_table, reliability_table,
};
pub use cluster::{PooledShare, pooled_share};
pub use groups::{MAX_COUNTED, ScoreGroup, ScoreGroups};
pub use power::{
    AucSampleSize, SampleSize, auc_sample_size_ci, auc_sample_size_test, hanley_mcneil_variance_factor,
    proportion_sample_size_ci, proportion_sample_size_test,
};
pub use proportion::{Interval, katz_ratio, newcombe_difference, wilson};
pub use roc::{roc_curve, roc_curve_of_groups};

use statrs::distribution::{ContinuousCDF, Normal};

/// The default significance level: 0.05, i.e. 95 % two-sided intervals.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Invalid input to a statistics function (see the module documentation for what is *not* an error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// A value was NaN or infinite.
    #[error("{what}[{index}] is not finite ({value})")]
    NonFinite {
        what: &'static str,
        index: usize,
        value: f64,
    },
    /// Two slices that must pair up row by row have different lengths.
    #[error("length mismatch: {left} scores/confidences but {right} labels")]
    LengthMismatch { left: usize, right: usize },
    /// A confidence (probability) was outside `[0, 1]`.
    #[error("confidence[{index}] = {value} is outside [0, 1]")]
    ConfidenceOutOfRange { index: usize, value: f64 },
    /// A count of successes exceeded its number of trials.
    #[error("successes ({successes}) exceed trials ({n})")]
    SuccessesExceedTrials { successes: u64, n: u64 },
    /// A parameter (alpha, power, z, a target proportion or AUC, a class ratio, a width) was out of its range.
    #[error("parameter {name} = {value} is out of range ({expected})")]
    Parameter {
        name: &'static str,
        value: f64,
        expected: &'static str,
    },
}

/// The standard normal quantile at `1 − alpha/2` (`statrs`), the `z` of a two-sided `1 − alpha` interval.
///
/// # Errors
/// [`StatsError::Parameter`] unless `0 < alpha < 1`.
pub fn z_two_sided(alpha: f64) -> Result<f64, StatsError> {
    check_open_unit("alpha", alpha)?;
    Ok(normal_quantile(1.0 - alpha / 2.0))
}

/// The standard normal quantile at `1 − alpha` (`statrs`), the critical value of a one-sided test.
///
/// # Errors
/// [`StatsError::Parameter`] unless `0 < alpha < 1`.
pub fn z_one_sided(alpha: f64) -> Result<f64, StatsError> {
    check_open_unit("alpha", alpha)?;
    Ok(normal_quantile(1.0 - alpha))
}

fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// `0 < value < 1`, else a parameter error.
fn check_open_unit(name: &'static str, value: f64) -> Result<(), StatsError> {
    if value.is_finite() && value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(StatsError::Parameter {
            name,
            value,
            expected: "0 < value < 1",
        })
    }
}

/// The largest accepted `z`. Far beyond any meaningful quantile (`z = 40` is already `alpha ≈ 1e-349`), and
/// small enough that `z²` cannot overflow in the Wilson formula.
const MAX_Z: f64 = 1e6;

/// `0 <= z <= MAX_Z`.
fn check_z(z: f64) -> Result<(), StatsError> {
    if (0.0..=MAX_Z).contains(&z) {
        Ok(())
    } else {
        Err(StatsError::Parameter {
            name: "z",
            value: z,
            expected: "0 <= z <= 1e6",
        })
    }
}

fn check_same_len(left: usize, right: usize) -> Result<(), StatsError> {
    if left == right {
        Ok(())
    } else {
        Err(StatsError::LengthMismatch { left, right })
    }
}

fn check_finite(what: &'static str, values: &[f64]) -> Result<(), StatsError> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(index) => Err(StatsError::NonFinite {
            what,
            index,
            value: values[index],
        }),
    }
}

/// Finite and within `[0, 1]`.
fn check_confidences(values: &[f64]) -> Result<(), StatsError> {
    check_finite("confidence", values)?;
    match values.iter().position(|v| !(0.0..=1.0).contains(v)) {
        None => Ok(()),
        Some(index) => Err(StatsError::ConfidenceOutOfRange {
            index,
            value: values[index],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_values() {
        assert!((z_two_sided(0.05).unwrap() - 1.959_963_984_540_054).abs() < 1e-12);
        assert!((z_one_sided(0.05).unwrap() - 1.644_853_626_951_472_2).abs() < 1e-12);
        assert!(z_two_sided(0.0).is_err());
        assert!(z_two_sided(1.0).is_err());
        assert!(z_two_sided(f64::NAN).is_err());
    }
}
