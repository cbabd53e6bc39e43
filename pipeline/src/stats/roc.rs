//! The ROC curve: one point per distinct score threshold, as scikit-learn's `roc_curve` with
//! `drop_intermediate=False` (plus the origin).

use super::{ScoreGroups, StatsError};

/// `(false-positive rate, true-positive rate)` points from `(0, 0)` to `(1, 1)`, thresholds descending; `None`
/// when a class is empty (the rates are undefined).
///
/// # Errors
/// Length mismatch or a non-finite score.
pub fn roc_curve(scores: &[f64], labels: &[bool]) -> Result<Option<Vec<(f64, f64)>>, StatsError> {
    Ok(roc_curve_of_groups(&ScoreGroups::new(scores, labels)?))
}

/// [`roc_curve`] of rows grouped by score: one point per group, so tied rows move the curve together (a
/// diagonal step).
pub fn roc_curve_of_groups(groups: &ScoreGroups) -> Option<Vec<(f64, f64)>> {
    let (positives, negatives) = (groups.positives(), groups.negatives());
    if positives == 0 || negatives == 0 {
        return None;
    }
    let mut points = Vec::with_capacity(groups.groups().len() + 1);
    points.push((0.0, 0.0));
    let (mut tp, mut fp) = (0u64, 0u64);
    for g in groups.groups().iter().rev() {
        tp += g.pos;
        fp += g.neg;
        points.push((fp as f64 / negatives as f64, tp as f64 / positives as f64));
    }
    Some(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_per_distinct_threshold_with_ties_moving_together() {
        let scores = [0.9, 0.8, 0.8, 0.3];
        let labels = [true, true, false, false];
        let points = roc_curve(&scores, &labels).unwrap().unwrap();
        assert_eq!(points, vec![(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)]);
        assert_eq!(roc_curve(&[0.1, 0.2], &[true, true]).unwrap(), None);
        assert!(roc_curve(&[f64::NAN], &[true]).is_err());
    }
}
