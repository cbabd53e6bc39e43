//! The ROC curve: one point per distinct score threshold, as scikit-learn's `roc_curve` with
//! `drop_intermediate=False` (plus the origin).

use super::{StatsError, check_finite, check_same_len};

/// `(false-positive rate, true-positive rate)` points from `(0, 0)` to `(1, 1)`, thresholds descending; `None`
/// when a class is empty (the rates are undefined).
pub fn roc_curve(scores: &[f64], labels: &[bool]) -> Result<Option<Vec<(f64, f64)>>, StatsError> {
    check_same_len(scores.len(), labels.len())?;
    check_finite("score", scores)?;
    let positives = labels.iter().filter(|&&label| label).count();
    let negatives = labels.len() - positives;
    if positives == 0 || negatives == 0 {
        return Ok(None);
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    // Ties are emitted together, so their order among themselves does not matter.
    order.sort_unstable_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let mut points = vec![(0.0, 0.0)];
    let (mut tp, mut fp) = (0usize, 0usize);
    for (at, &row) in order.iter().enumerate() {
        if labels[row] {
            tp += 1;
        } else {
            fp += 1;
        }
        // Emit once per distinct score: tied rows move the curve together (a diagonal step).
        let last_of_tie = order.get(at + 1).is_none_or(|&next| scores[next] != scores[row]);
        if last_of_tie {
            points.push((fp as f64 / negatives as f64, tp as f64 / positives as f64));
        }
    }
    Ok(Some(points))
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
