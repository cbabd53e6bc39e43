//! ROC AUC (Mann–Whitney) with the DeLong variance computed by the Sun & Xu (2014) placement-value algorithm.

use super::{ScoreGroups, StatsError, check_z};

/// A defined AUC with its DeLong standard error and normal-approximation interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Auc {
    /// Mann–Whitney AUC with average ranks: P(score of a correct row > score of a wrong row), ties counting ½.
    /// Equals scikit-learn's `roc_auc_score(correct, score)`.
    pub value: f64,
    /// DeLong variance `S10/m + S01/n`.
    pub variance: f64,
    /// `sqrt(variance)`.
    pub se: f64,
    /// `value ± z·se`, clipped to `[0, 1]`.
    pub ci: (f64, f64),
    /// Number of positive (correct) rows, `m`.
    pub n_pos: usize,
    /// Number of negative (wrong) rows, `n`.
    pub n_neg: usize,
}

/// Why an AUC is undefined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndefinedAuc {
    /// The DeLong variance needs at least two rows in each class (a sample variance per class).
    TooFewInClass { n_pos: usize, n_neg: usize },
}

/// The AUC of a sample, or the reason it is undefined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AucOutcome {
    Defined(Auc),
    Undefined(UndefinedAuc),
}

impl AucOutcome {
    /// The AUC if defined.
    pub fn defined(&self) -> Option<&Auc> {
        match self {
            AucOutcome::Defined(a) => Some(a),
            AucOutcome::Undefined(_) => None,
        }
    }
}

/// ROC AUC of `scores` for `labels` (`true` = correct = positive) with DeLong standard error and the
/// interval `AUC ± z·SE` clipped to `[0, 1]` (`z` from [`super::z_two_sided`]).
///
/// Algorithm (Sun & Xu 2014, "Fast implementation of DeLong's algorithm", IEEE SPL 21(11)), `O(N log N)`:
/// with `Tz` the midranks in the pooled sample, `Tx` the midranks among the `m` positives and `Ty` among the `n`
/// negatives,
///
/// * `V10_i = (Tz_i − Tx_i) / n` for each positive (fraction of negatives below it, ties ½),
/// * `V01_j = 1 − (Tz_j − Ty_j) / m` for each negative (fraction of positives above it, ties ½),
/// * `AUC = mean(V10) = mean(V01)`, `S10`, `S01` their sample variances (denominator `m−1`, `n−1`),
/// * `var = S10/m + S01/n`.
///
/// The midranks only depend on each row's score group, so the computation runs over [`ScoreGroups`] (one sort,
/// or counting when there are few distinct scores): every row of a group has the same placement value and
/// contributes `count · (V − AUC)²` to the sample variances. The AUC itself is accumulated exactly in integers
/// (twice the placement counts), so it is exact up to the final division.
///
/// Returns [`AucOutcome::Undefined`] when either class has fewer than 2 rows (this includes empty input).
///
/// # Errors
/// Non-finite scores, `scores.len() != labels.len()`, or a negative / non-finite `z`.
pub fn auc(scores: &[f64], labels: &[bool], z: f64) -> Result<AucOutcome, StatsError> {
    auc_of_groups(&ScoreGroups::new(scores, labels)?, z)
}

/// [`auc`] of rows already grouped by score.
///
/// # Errors
/// A negative or non-finite `z`.
pub fn auc_of_groups(groups: &ScoreGroups, z: f64) -> Result<AucOutcome, StatsError> {
    check_z(z)?;
    let (m, n) = (groups.positives(), groups.negatives());
    if m < 2 || n < 2 {
        return Ok(AucOutcome::Undefined(UndefinedAuc::TooFewInClass {
            n_pos: m as usize,
            n_neg: n as usize,
        }));
    }
    let value = auc_value(groups);
    let (mf, nf) = (m as f64, n as f64);
    let mut neg_below = 0u64;
    let mut pos_above = m;
    let (mut ss10, mut ss01) = (0.0, 0.0);
    for g in groups.groups() {
        pos_above -= g.pos;
        let v10 = (2 * neg_below + g.neg) as f64 / (2.0 * nf);
        let v01 = (2 * pos_above + g.pos) as f64 / (2.0 * mf);
        ss10 += g.pos as f64 * (v10 - value) * (v10 - value);
        ss01 += g.neg as f64 * (v01 - value) * (v01 - value);
        neg_below += g.neg;
    }
    let variance = ss10 / (mf - 1.0) / mf + ss01 / (nf - 1.0) / nf;
    Ok(AucOutcome::Defined(with_interval(
        value, variance, m as usize, n as usize, z,
    )))
}

/// The Mann–Whitney AUC alone (no variance): `Σ pos · (2·neg_below + neg_tied) / (2mn)`, exact in integers up to
/// the division. NaN when a class is empty; callers check first.
pub(crate) fn auc_value(groups: &ScoreGroups) -> f64 {
    let mut neg_below = 0u64;
    let mut twice_sum = 0u128;
    for g in groups.groups() {
        twice_sum += u128::from(g.pos) * u128::from(2 * neg_below + g.neg);
        neg_below += g.neg;
    }
    twice_sum as f64 / (2.0 * groups.positives() as f64 * groups.negatives() as f64)
}

/// The AUC with its DeLong standard error and `value ± z·se` clipped to `[0, 1]`.
fn with_interval(value: f64, variance: f64, m: usize, n: usize, z: f64) -> Auc {
    let se = variance.sqrt();
    let ci = ((value - z * se).clamp(0.0, 1.0), (value + z * se).clamp(0.0, 1.0));
    Auc {
        value,
        variance,
        se,
        ci,
        n_pos: m,
        n_neg: n,
    }
}

#[cfg(test)]
mod per_row_oracle {
    //! The per-row formulation of Sun & Xu (sort each class, midranks per row), kept as an oracle for the
    //! grouped computation.
    use super::*;

    /// The Sun & Xu computation over the sorted classes.
    fn auc_by_sorting(mut pos: Vec<f64>, mut neg: Vec<f64>, z: f64) -> Auc {
        let (m, n) = (pos.len(), neg.len());
        pos.sort_unstable_by(f64::total_cmp);
        neg.sort_unstable_by(f64::total_cmp);

        let tx = midranks_sorted(&pos);
        let ty = midranks_sorted(&neg);
        let (tz_pos, tz_neg) = pooled_midranks(&pos, &neg);

        // Twice the placement counts are integers: 2·(Tz_i − Tx_i) = 2·#{neg < x_i} + #{neg == x_i}.
        let twice_placement_pos: Vec<u64> = tz_pos
            .iter()
            .zip(&tx)
            .map(|(&a, &b)| (2.0 * (a - b)).round() as u64)
            .collect();
        let twice_sum: u128 = twice_placement_pos.iter().map(|&c| u128::from(c)).sum();
        let (mf, nf) = (m as f64, n as f64);
        let value = twice_sum as f64 / (2.0 * mf * nf);

        let v10 = twice_placement_pos.iter().map(|&c| c as f64 / (2.0 * nf));
        let v01 = tz_neg.iter().zip(&ty).map(|(&a, &b)| 1.0 - (a - b) / mf);
        let s10 = sample_variance(v10, value, m);
        let s01 = sample_variance(v01, value, n);
        let variance = s10 / mf + s01 / nf;
        with_interval(value, variance, m, n, z)
    }

    /// Sample variance (denominator `len − 1`) around a known mean; `len >= 2`.
    fn sample_variance(values: impl Iterator<Item = f64>, mean: f64, len: usize) -> f64 {
        let ss: f64 = values.map(|v| (v - mean) * (v - mean)).sum();
        ss / (len as f64 - 1.0)
    }

    /// Midranks (1-based, ties averaged) of an already sorted slice.
    fn midranks_sorted(sorted: &[f64]) -> Vec<f64> {
        let mut ranks = vec![0.0; sorted.len()];
        let mut i = 0;
        while i < sorted.len() {
            let mut j = i + 1;
            while j < sorted.len() && sorted[j].total_cmp(&sorted[i]).is_eq() {
                j += 1;
            }
            // Ranks i+1 ..= j share their mean.
            let mid = (i + 1 + j) as f64 / 2.0;
            ranks[i..j].fill(mid);
            i = j;
        }
        ranks
    }

    /// Midranks in the pooled sample of two sorted slices, returned per element of each slice (same order).
    /// The merge of the two sorted slices is the sorted pool, so no further sort is needed.
    fn pooled_midranks(a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let mut ra = vec![0.0; a.len()];
        let mut rb = vec![0.0; b.len()];
        let (mut i, mut j) = (0, 0);
        let mut before = 0usize; // pooled elements strictly below the current tie group
        while i < a.len() || j < b.len() {
            let v = match (a.get(i), b.get(j)) {
                (Some(&x), Some(&y)) => {
                    if x.total_cmp(&y).is_le() {
                        x
                    } else {
                        y
                    }
                }
                (Some(&x), None) => x,
                (None, Some(&y)) => y,
                (None, None) => unreachable!("loop condition"),
            };
            let i_end = i + a[i..].iter().take_while(|x| x.total_cmp(&v).is_eq()).count();
            let j_end = j + b[j..].iter().take_while(|y| y.total_cmp(&v).is_eq()).count();
            let group = (i_end - i) + (j_end - j);
            let mid = (2 * before + group + 1) as f64 / 2.0;
            ra[i..i_end].fill(mid);
            rb[j..j_end].fill(mid);
            before += group;
            i = i_end;
            j = j_end;
        }
        (ra, rb)
    }

    /// Grouped (counted or sorted) and per-row on the same data: the AUC bit for bit, the variance to rounding.
    #[test]
    fn grouped_and_per_row_agree() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (rows, grid) in [
            (50usize, 3u64),
            (1_000, 21),
            (5_000, 101),
            (20_000, 4_000),
            (20_000, 1 << 40),
        ] {
            let scores: Vec<f64> = (0..rows).map(|_| (next() % grid) as f64 / (grid - 1) as f64).collect();
            let labels: Vec<bool> = scores
                .iter()
                .map(|&s| (next() % 1000) as f64 / 1000.0 < 0.3 + 0.5 * s)
                .collect();
            let pos: Vec<f64> = scores
                .iter()
                .zip(&labels)
                .filter(|(_, l)| **l)
                .map(|(s, _)| *s)
                .collect();
            let neg: Vec<f64> = scores
                .iter()
                .zip(&labels)
                .filter(|(_, l)| !**l)
                .map(|(s, _)| *s)
                .collect();
            let oracle = auc_by_sorting(pos, neg, 1.96);
            for limit in [usize::MAX, 0] {
                let groups = ScoreGroups::with_limit(&scores, &labels, limit).unwrap();
                let grouped = *auc_of_groups(&groups, 1.96).unwrap().defined().unwrap();
                assert_eq!(grouped.value, oracle.value, "{rows} rows on a grid of {grid}");
                assert!(
                    (grouped.variance - oracle.variance).abs() <= 1e-12 * oracle.variance,
                    "{rows}/{grid}: {} vs {}",
                    grouped.variance,
                    oracle.variance
                );
            }
        }
    }

    #[test]
    fn midranks() {
        assert_eq!(midranks_sorted(&[1.0, 2.0, 2.0, 3.0]), vec![1.0, 2.5, 2.5, 4.0]);
        let (a, b) = pooled_midranks(&[1.0, 2.0], &[2.0, 3.0]);
        assert_eq!(a, vec![1.0, 2.5]);
        assert_eq!(b, vec![2.5, 4.0]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::z_two_sided;

    fn z95() -> f64 {
        z_two_sided(0.05).unwrap()
    }

    #[test]
    fn all_tied_is_one_half_with_zero_variance() {
        let scores = [0.7; 6];
        let labels = [true, false, true, false, true, true];
        let a = *auc(&scores, &labels, z95()).unwrap().defined().unwrap();
        assert_eq!(a.value, 0.5);
        assert_eq!(a.variance, 0.0);
        assert_eq!(a.ci, (0.5, 0.5));
        assert_eq!((a.n_pos, a.n_neg), (4, 2));
    }

    #[test]
    fn perfect_separation_is_one_with_degenerate_ci() {
        let scores = [0.9, 0.8, 0.7, 0.2, 0.1];
        let labels = [true, true, true, false, false];
        let a = *auc(&scores, &labels, z95()).unwrap().defined().unwrap();
        assert_eq!(a.value, 1.0);
        assert_eq!(a.se, 0.0);
        assert_eq!(a.ci, (1.0, 1.0));
        // Reversed: AUC 0.
        let flipped: Vec<bool> = labels.iter().map(|l| !l).collect();
        let b = *auc(&scores, &flipped, z95()).unwrap().defined().unwrap();
        assert_eq!(b.value, 0.0);
        assert_eq!(b.ci, (0.0, 0.0));
    }

    #[test]
    fn hand_checked_small_case() {
        // Positives {0.8, 0.4}, negatives {0.4, 0.2}: pairs (0.8>0.4)=1, (0.8>0.2)=1, (0.4=0.4)=½, (0.4>0.2)=1.
        let scores = [0.8, 0.4, 0.4, 0.2];
        let labels = [true, true, false, false];
        let a = *auc(&scores, &labels, z95()).unwrap().defined().unwrap();
        assert_eq!(a.value, 3.5 / 4.0);
        // V10 = (1, 0.75), V01 = (0.75, 1): S10 = S01 = 0.03125, var = 0.03125.
        assert!((a.variance - 0.03125).abs() < 1e-15);
        assert_eq!(a.ci.1, 1.0);
    }

    #[test]
    fn negative_zero_ties_with_zero() {
        let a = auc(&[0.0, -0.0, 0.0, -0.0], &[true, true, false, false], 1.96).unwrap();
        assert_eq!(a.defined().unwrap().value, 0.5);
    }

    #[test]
    fn too_few_in_a_class_is_undefined() {
        let u = |s: &[f64], l: &[bool]| auc(s, l, 1.96).unwrap();
        assert_eq!(
            u(&[], &[]),
            AucOutcome::Undefined(UndefinedAuc::TooFewInClass { n_pos: 0, n_neg: 0 })
        );
        assert_eq!(
            u(&[0.1, 0.2, 0.3], &[true, false, false]),
            AucOutcome::Undefined(UndefinedAuc::TooFewInClass { n_pos: 1, n_neg: 2 })
        );
        assert_eq!(
            u(&[0.1, 0.2, 0.3], &[true, true, true]),
            AucOutcome::Undefined(UndefinedAuc::TooFewInClass { n_pos: 3, n_neg: 0 })
        );
        assert!(
            u(&[0.1, 0.2, 0.3, 0.4], &[true, true, false, false])
                .defined()
                .is_some()
        );
    }

    #[test]
    fn invalid_input_is_an_error() {
        assert!(matches!(
            auc(&[0.1, f64::NAN], &[true, false], 1.96),
            Err(StatsError::NonFinite { index: 1, .. })
        ));
        assert!(matches!(
            auc(&[0.1, f64::INFINITY], &[true, false], 1.96),
            Err(StatsError::NonFinite { .. })
        ));
        assert!(matches!(
            auc(&[0.1], &[true, false], 1.96),
            Err(StatsError::LengthMismatch { .. })
        ));
        assert!(auc(&[0.1, 0.2], &[true, false], f64::NAN).is_err());
    }
}
