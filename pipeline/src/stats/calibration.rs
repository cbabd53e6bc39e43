//! Calibration and ranking summaries of (confidence, correct) pairs: Brier score, expected calibration error
//! with equal-width or equal-mass bins, the reliability table, and average precision.

use super::{ScoreGroups, StatsError, check_confidences, check_same_len};

/// Number of bins of both ECE variants.
const BINS: usize = 10;

/// How rows are grouped into bins for the reliability table and the ECE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binning {
    /// 10 bins of width 0.1 by confidence: bin `k` (0-based) is `[k/10, (k+1)/10)`, the last one is
    /// `[0.9, 1.0]` (closed, so a confidence of exactly 1.0 lands in it). The edges are the `f64` nearest to
    /// `k/10` (`k as f64 / 10.0`), so a confidence written as `0.3` lands in `[0.3, 0.4)`.
    EqualWidth,
    /// 10 bins of (as nearly as possible) equal row counts: rows are stably sorted by confidence
    /// (`total_cmp`, ties keep input order) and split into 10 consecutive groups, the first `N mod 10` groups
    /// holding `⌊N/10⌋ + 1` rows and the rest `⌊N/10⌋` (the rule of `numpy.array_split`). Tied confidences may
    /// be split across two adjacent bins; empty groups (when `N < 10`) are dropped.
    EqualMass,
}

/// One non-empty bin of a reliability table.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ReliabilityBin {
    /// Lower edge. Equal-width: `k/10`. Equal-mass: the smallest confidence in the bin.
    pub lo: f64,
    /// Upper edge. Equal-width: `(k+1)/10` (exclusive except for the last bin). Equal-mass: the largest
    /// confidence in the bin (inclusive).
    pub hi: f64,
    /// Rows in the bin (> 0).
    pub n: usize,
    /// Mean confidence of the rows.
    pub mean_confidence: f64,
    /// Fraction of the rows that are correct.
    pub accuracy: f64,
}

fn check_pairs(confidence: &[f64], correct: &[bool]) -> Result<(), StatsError> {
    check_same_len(confidence.len(), correct.len())?;
    check_confidences(confidence)
}

fn edge(k: usize) -> f64 {
    k as f64 / BINS as f64
}

/// The equal-width bin of a confidence in `[0, 1]`: the `k` with `edge(k) <= c < edge(k+1)`, or the last bin.
fn width_bin(c: f64) -> usize {
    let mut k = ((c * BINS as f64) as usize).min(BINS - 1);
    while k > 0 && c < edge(k) {
        k -= 1;
    }
    while k < BINS - 1 && c >= edge(k + 1) {
        k += 1;
    }
    k
}

/// The reliability table: every non-empty bin in increasing confidence order.
///
/// Empty input gives an empty table.
///
/// # Errors
/// Length mismatch, or a confidence that is not finite or outside `[0, 1]`.
pub fn reliability_table(
    confidence: &[f64],
    correct: &[bool],
    binning: Binning,
) -> Result<Vec<ReliabilityBin>, StatsError> {
    check_pairs(confidence, correct)?;
    let groups = ScoreGroups::new(confidence, correct)?;
    Ok(match binning {
        Binning::EqualWidth => equal_width_table(&groups),
        Binning::EqualMass => equal_mass_table(&groups, confidence, correct),
    })
}

/// The [`Binning::EqualWidth`] table of rows grouped by confidence (every score must lie in `[0, 1]`).
pub fn equal_width_table(groups: &ScoreGroups) -> Vec<ReliabilityBin> {
    let mut n = [0u64; BINS];
    let mut sum_conf = [0.0f64; BINS];
    let mut hits = [0u64; BINS];
    for g in groups.groups() {
        let k = width_bin(g.score);
        n[k] += g.rows();
        sum_conf[k] += g.rows() as f64 * g.score;
        hits[k] += g.pos;
    }
    (0..BINS)
        .filter(|&k| n[k] > 0)
        .map(|k| ReliabilityBin {
            lo: edge(k),
            hi: edge(k + 1),
            n: n[k] as usize,
            mean_confidence: sum_conf[k] / n[k] as f64,
            accuracy: hits[k] as f64 / n[k] as f64,
        })
        .collect()
}

/// The [`Binning::EqualMass`] table. `groups` must be the grouping of exactly these rows.
///
/// Bins are consecutive runs of the stably sorted rows, so a bin's count and confidence sum follow from the
/// groups. Only a tie group cut by a bin edge needs the rows themselves: which of its rows fall on each side
/// depends on their input order, so one scan counts the correct ones among the first rows of that score.
pub fn equal_mass_table(groups: &ScoreGroups, confidence: &[f64], correct: &[bool]) -> Vec<ReliabilityBin> {
    let total = groups.rows();
    let (base, extra) = (total / BINS as u64, total % BINS as u64);
    let mut bins: Vec<ReliabilityBin> = Vec::with_capacity(BINS);
    let mut bounds: Vec<(u64, u64)> = Vec::with_capacity(BINS);
    let mut start = 0;
    for g in 0..BINS as u64 {
        let len = base + u64::from(g < extra);
        if len > 0 {
            bounds.push((start, start + len));
            start += len;
        }
    }
    let mut sums = vec![0.0f64; bounds.len()];
    let mut hits = vec![0u64; bounds.len()];
    // (score bits, first and last+1 offset among the group's rows in input order, bin)
    let mut cut: Vec<(u64, u64, u64, usize)> = Vec::new();
    let (mut at, mut b) = (0u64, 0usize);
    for g in groups.groups() {
        let (gs, ge) = (at, at + g.rows());
        while b < bounds.len() && bounds[b].0 < ge {
            let (bs, be) = bounds[b];
            let (from, to) = (bs.max(gs), be.min(ge));
            if from < to {
                if bins.len() == b {
                    bins.push(ReliabilityBin {
                        lo: g.score,
                        hi: g.score,
                        n: (be - bs) as usize,
                        mean_confidence: 0.0,
                        accuracy: 0.0,
                    });
                }
                bins[b].hi = g.score;
                sums[b] += (to - from) as f64 * g.score;
                if (from, to) == (gs, ge) {
                    hits[b] += g.pos;
                } else {
                    cut.push((g.score.to_bits(), from - gs, to - gs, b));
                }
            }
            if be <= ge {
                b += 1;
            } else {
                break;
            }
        }
        at = ge;
    }
    if !cut.is_empty() {
        let mut seen: Vec<(u64, u64)> = cut.iter().map(|&(bits, ..)| (bits, 0)).collect();
        seen.dedup();
        for (&c, &ok) in confidence.iter().zip(correct) {
            let bits = (c + 0.0).to_bits();
            if let Some(slot) = seen.iter_mut().find(|(s, _)| *s == bits) {
                if ok {
                    let offset = slot.1;
                    for &(_, from, to, bin) in cut.iter().filter(|&&(s, ..)| s == bits) {
                        hits[bin] += u64::from((from..to).contains(&offset));
                    }
                }
                slot.1 += 1;
            }
        }
    }
    for (k, bin) in bins.iter_mut().enumerate() {
        bin.mean_confidence = sums[k] / bin.n as f64;
        bin.accuracy = hits[k] as f64 / bin.n as f64;
    }
    bins
}

/// Expected calibration error of a reliability table: `Σ (n_b / N) · |accuracy_b − mean_confidence_b|`.
/// `None` for an empty table.
pub fn ece(table: &[ReliabilityBin]) -> Option<f64> {
    let total: usize = table.iter().map(|b| b.n).sum();
    if total == 0 {
        return None;
    }
    let weighted: f64 = table
        .iter()
        .map(|b| b.n as f64 * (b.accuracy - b.mean_confidence).abs())
        .sum();
    Some(weighted / total as f64)
}

/// ECE over 10 equal-width bins ([`Binning::EqualWidth`]). `None` for empty input.
///
/// # Errors
/// As [`reliability_table`].
pub fn ece_equal_width(confidence: &[f64], correct: &[bool]) -> Result<Option<f64>, StatsError> {
    Ok(ece(&reliability_table(confidence, correct, Binning::EqualWidth)?))
}

/// ECE over 10 equal-mass bins ([`Binning::EqualMass`]). `None` for empty input.
///
/// # Errors
/// As [`reliability_table`].
pub fn ece_equal_mass(confidence: &[f64], correct: &[bool]) -> Result<Option<f64>, StatsError> {
    Ok(ece(&reliability_table(confidence, correct, Binning::EqualMass)?))
}

/// Brier score `mean((confidence − correct)²)`, as scikit-learn's `brier_score_loss`. `None` for empty input.
///
/// # Errors
/// As [`reliability_table`].
pub fn brier(confidence: &[f64], correct: &[bool]) -> Result<Option<f64>, StatsError> {
    check_pairs(confidence, correct)?;
    Ok(brier_of_groups(&ScoreGroups::new(confidence, correct)?))
}

/// [`brier`] of rows grouped by confidence.
pub fn brier_of_groups(groups: &ScoreGroups) -> Option<f64> {
    if groups.rows() == 0 {
        return None;
    }
    let sum: f64 = groups
        .groups()
        .iter()
        .map(|g| g.pos as f64 * (1.0 - g.score) * (1.0 - g.score) + g.neg as f64 * g.score * g.score)
        .sum();
    Some(sum / groups.rows() as f64)
}

/// Average precision, as scikit-learn's `average_precision_score` (positive = correct):
/// `AP = Σ_k (R_k − R_{k−1}) · P_k` over the distinct score thresholds in decreasing order, tied scores
/// entering together (no interpolation).
///
/// Scores may be any finite values (not only probabilities). `None` when there is no positive row (recall is
/// undefined), including empty input; with no negative row the AP is 1.
///
/// # Errors
/// Length mismatch or a non-finite score.
pub fn average_precision(scores: &[f64], labels: &[bool]) -> Result<Option<f64>, StatsError> {
    Ok(average_precision_of_groups(&ScoreGroups::new(scores, labels)?))
}

/// [`average_precision`] of rows grouped by score.
pub fn average_precision_of_groups(groups: &ScoreGroups) -> Option<f64> {
    let total_pos = groups.positives();
    if total_pos == 0 {
        return None;
    }
    let (mut tp, mut seen) = (0u64, 0u64);
    let mut ap = 0.0;
    for g in groups.groups().iter().rev() {
        tp += g.pos;
        seen += g.rows();
        if g.pos > 0 {
            ap += (g.pos as f64 / total_pos as f64) * (tp as f64 / seen as f64);
        }
    }
    Some(ap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_equal_width_bin_includes_one() {
        let t = reliability_table(&[1.0, 0.95, 0.9], &[true, true, false], Binning::EqualWidth).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].lo, t[0].hi, t[0].n), (0.9, 1.0, 3));
        assert!((t[0].mean_confidence - 0.95).abs() < 1e-15);
        assert!((t[0].accuracy - 2.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn equal_width_edges_are_left_closed() {
        for k in 0..10 {
            assert_eq!(width_bin(edge(k)), k);
        }
        assert_eq!(width_bin(0.0), 0);
        assert_eq!(width_bin(0.3), 3);
        assert_eq!(width_bin(0.7), 7);
        assert_eq!(width_bin(0.099_999_999_999), 0);
        assert_eq!(width_bin(f64::from_bits(0.3f64.to_bits() - 1)), 2);
    }

    #[test]
    fn ece_exact_values() {
        // Bin [0.2,0.3): conf 0.2, 0.2, correct 1 of 2 → |0.5 − 0.2| = 0.3, weight 2/4.
        // Bin [0.9,1.0]: conf 1.0, 0.9, both correct → |1 − 0.95| = 0.05, weight 2/4.
        let conf = [0.2, 0.2, 1.0, 0.9];
        let ok = [true, false, true, true];
        let e = ece_equal_width(&conf, &ok).unwrap().unwrap();
        assert!((e - 0.175).abs() < 1e-15);
        // Equal mass with 4 rows: 4 singleton bins: |1−0.2| + |0−0.2| + |1−0.9| + |1−1| over 4.
        let m = ece_equal_mass(&conf, &ok).unwrap().unwrap();
        assert!((m - (0.8 + 0.2 + 0.1 + 0.0) / 4.0).abs() < 1e-15);
        let perfect = ece_equal_width(&[1.0, 0.0], &[true, false]).unwrap().unwrap();
        assert_eq!(perfect, 0.0);
    }

    /// The equal-mass table from groups equals a direct stable sort of the rows split `numpy.array_split`
    /// style, on data with heavy ties cut by bin edges.
    #[test]
    fn equal_mass_from_groups_matches_a_stable_sort() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (rows, grid) in [(7usize, 2u64), (103, 3), (1_000, 11), (2_017, 5_000)] {
            let conf: Vec<f64> = (0..rows).map(|_| (next() % grid) as f64 / (grid - 1) as f64).collect();
            let ok: Vec<bool> = (0..rows).map(|_| next() % 3 != 0).collect();
            let mut order: Vec<usize> = (0..rows).collect();
            order.sort_by(|&a, &b| conf[a].total_cmp(&conf[b]));
            let (base, extra) = (rows / BINS, rows % BINS);
            let mut expected = Vec::new();
            let mut start = 0;
            for g in 0..BINS {
                let len = base + usize::from(g < extra);
                if len == 0 {
                    continue;
                }
                let bin = &order[start..start + len];
                start += len;
                let hits = bin.iter().filter(|&&i| ok[i]).count();
                let sum: f64 = bin.iter().map(|&i| conf[i]).sum();
                expected.push((
                    conf[bin[0]],
                    conf[bin[len - 1]],
                    len,
                    hits as f64 / len as f64,
                    sum / len as f64,
                ));
            }
            let table = reliability_table(&conf, &ok, Binning::EqualMass).unwrap();
            assert_eq!(table.len(), expected.len(), "{rows}/{grid}");
            for (bin, (lo, hi, n, accuracy, mean)) in table.iter().zip(expected) {
                assert_eq!(
                    (bin.lo, bin.hi, bin.n, bin.accuracy),
                    (lo, hi, n, accuracy),
                    "{rows}/{grid}"
                );
                assert!((bin.mean_confidence - mean).abs() < 1e-12, "{rows}/{grid}");
            }
        }
    }

    #[test]
    fn equal_mass_sizes_follow_array_split() {
        let conf: Vec<f64> = (0..23).map(|i| f64::from(i) / 23.0).collect();
        let ok = vec![true; 23];
        let t = reliability_table(&conf, &ok, Binning::EqualMass).unwrap();
        let sizes: Vec<usize> = t.iter().map(|b| b.n).collect();
        assert_eq!(sizes, vec![3, 3, 3, 2, 2, 2, 2, 2, 2, 2]);
        assert_eq!(t[0].lo, 0.0);
        assert_eq!(t[9].hi, 22.0 / 23.0);
    }

    #[test]
    fn empty_input() {
        assert_eq!(brier(&[], &[]).unwrap(), None);
        assert_eq!(ece_equal_width(&[], &[]).unwrap(), None);
        assert_eq!(ece_equal_mass(&[], &[]).unwrap(), None);
        assert!(reliability_table(&[], &[], Binning::EqualMass).unwrap().is_empty());
        assert_eq!(average_precision(&[], &[]).unwrap(), None);
    }

    #[test]
    fn invalid_input() {
        assert!(matches!(
            brier(&[1.5], &[true]),
            Err(StatsError::ConfidenceOutOfRange { index: 0, .. })
        ));
        assert!(matches!(
            ece_equal_mass(&[0.5, f64::NAN], &[true, true]),
            Err(StatsError::NonFinite { index: 1, .. })
        ));
        assert!(brier(&[0.5], &[true, false]).is_err());
        assert!(average_precision(&[f64::NEG_INFINITY], &[true]).is_err());
    }

    #[test]
    fn brier_and_ap_exact() {
        let b = brier(&[1.0, 0.0, 0.5], &[true, true, false]).unwrap().unwrap();
        assert!((b - 1.25 / 3.0).abs() < 1e-15);
        // Scores 0.9 (+), 0.8 (−), 0.7 (+): AP = ½·1 + ½·⅔.
        let ap = average_precision(&[0.9, 0.8, 0.7], &[true, false, true])
            .unwrap()
            .unwrap();
        assert!((ap - (0.5 + 1.0 / 3.0)).abs() < 1e-15);
        // All tied: AP = prevalence.
        let tied = average_precision(&[0.5; 4], &[true, false, false, false])
            .unwrap()
            .unwrap();
        assert_eq!(tied, 0.25);
        assert_eq!(average_precision(&[0.1, 0.2], &[false, false]).unwrap(), None);
        assert_eq!(average_precision(&[0.1, 0.2], &[true, true]).unwrap(), Some(1.0));
    }
}
