//! Rows grouped by distinct score: the one pass over a corpus that every ranking and calibration metric reads.
//!
//! The AUC and its DeLong variance, average precision, the ROC curve, the Brier score, the equal-width
//! reliability table and (with one extra scan for tied boundary rows) the equal-mass table depend on the rows only
//! through `(score, correct rows, wrong rows)` per distinct score. Agents report confidence on a coarse grid, so a
//! corpus of millions of rows usually has a few dozen distinct scores: the groups are then built by counting in a
//! hash table, in parallel, instead of sorting. Past [`MAX_COUNTED`] distinct scores they are built by one sort.

use std::collections::HashMap;

use rayon::prelude::*;

use super::{StatsError, check_finite, check_same_len};

/// Above this many distinct scores the groups are built by sorting instead of counting.
pub const MAX_COUNTED: usize = 4096;

/// Rows per parallel counting task.
const COUNT_CHUNK: usize = 1 << 20;

/// The rows sharing one score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreGroup {
    /// The score; `-0.0` is stored as `0.0` (the two tie).
    pub score: f64,
    /// Positive (correct) rows.
    pub pos: u64,
    /// Negative (wrong) rows.
    pub neg: u64,
}

impl ScoreGroup {
    pub fn rows(&self) -> u64 {
        self.pos + self.neg
    }
}

/// Every distinct score with its class counts, ascending by score (`total_cmp`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScoreGroups {
    groups: Vec<ScoreGroup>,
    pos: u64,
    neg: u64,
}

impl ScoreGroups {
    /// Groups `scores` paired with `labels` (`true` = correct = positive).
    ///
    /// # Errors
    /// Length mismatch or a non-finite score.
    pub fn new(scores: &[f64], labels: &[bool]) -> Result<Self, StatsError> {
        Self::with_limit(scores, labels, MAX_COUNTED)
    }

    /// [`ScoreGroups::new`], counting up to `limit` distinct scores before falling back to sorting (tests use
    /// it to run both paths on the same data).
    #[doc(hidden)]
    pub fn with_limit(scores: &[f64], labels: &[bool], limit: usize) -> Result<Self, StatsError> {
        check_same_len(scores.len(), labels.len())?;
        check_finite("score", scores)?;
        let groups = count(scores, labels, limit).unwrap_or_else(|| sort(scores, labels));
        Ok(Self::from_sorted(groups))
    }

    /// Groups already ascending by score with distinct scores (empty groups are dropped).
    pub(crate) fn from_sorted(mut groups: Vec<ScoreGroup>) -> Self {
        groups.retain(|g| g.rows() > 0);
        let pos = groups.iter().map(|g| g.pos).sum();
        let neg = groups.iter().map(|g| g.neg).sum();
        Self { groups, pos, neg }
    }

    /// Ascending by score.
    pub fn groups(&self) -> &[ScoreGroup] {
        &self.groups
    }

    pub fn positives(&self) -> u64 {
        self.pos
    }

    pub fn negatives(&self) -> u64 {
        self.neg
    }

    pub fn rows(&self) -> u64 {
        self.pos + self.neg
    }

    /// The rows with a score of at least `threshold`: a suffix of the groups.
    pub fn at_least(&self, threshold: f64) -> ScoreGroups {
        let from = self.groups.partition_point(|g| g.score < threshold);
        Self::from_sorted(self.groups[from..].to_vec())
    }
}

/// `-0.0` becomes `0.0` so that the two zeros form one group.
fn key(score: f64) -> f64 {
    score + 0.0
}

/// Counting: per-chunk hash tables merged; `None` once any chunk (or the merge) passes `limit` distinct scores.
fn count(scores: &[f64], labels: &[bool], limit: usize) -> Option<Vec<ScoreGroup>> {
    let tables: Option<Vec<HashMap<u64, (u64, u64)>>> = scores
        .par_chunks(COUNT_CHUNK)
        .zip(labels.par_chunks(COUNT_CHUNK))
        .map(|(scores, labels)| {
            let mut table: HashMap<u64, (u64, u64)> = HashMap::new();
            for (&score, &label) in scores.iter().zip(labels) {
                let entry = table.entry(key(score).to_bits()).or_default();
                if label {
                    entry.0 += 1;
                } else {
                    entry.1 += 1;
                }
                if table.len() > limit {
                    return None;
                }
            }
            Some(table)
        })
        .collect();
    let mut merged: HashMap<u64, (u64, u64)> = HashMap::new();
    for table in tables? {
        for (bits, (pos, neg)) in table {
            let entry = merged.entry(bits).or_default();
            entry.0 += pos;
            entry.1 += neg;
        }
        if merged.len() > limit {
            return None;
        }
    }
    let mut groups: Vec<ScoreGroup> = merged
        .into_iter()
        .map(|(bits, (pos, neg))| ScoreGroup {
            score: f64::from_bits(bits),
            pos,
            neg,
        })
        .collect();
    groups.sort_unstable_by(|a, b| a.score.total_cmp(&b.score));
    Some(groups)
}

/// Sorting: one parallel sort of the scores with their labels, then runs of equal scores.
fn sort(scores: &[f64], labels: &[bool]) -> Vec<ScoreGroup> {
    let mut pairs: Vec<(f64, bool)> = scores.iter().zip(labels).map(|(&s, &l)| (key(s), l)).collect();
    pairs.par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut groups: Vec<ScoreGroup> = Vec::new();
    for (score, label) in pairs {
        match groups.last_mut() {
            Some(last) if last.score.total_cmp(&score).is_eq() => {
                last.pos += u64::from(label);
                last.neg += u64::from(!label);
            }
            _ => groups.push(ScoreGroup {
                score,
                pos: u64::from(label),
                neg: u64::from(!label),
            }),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_and_sorting_agree_and_zeros_tie() {
        let scores = [0.5, -0.0, 0.0, 0.5, 0.25, 1.0, 0.5];
        let labels = [true, false, true, false, true, true, true];
        let counted = ScoreGroups::new(&scores, &labels).unwrap();
        let sorted = ScoreGroups::with_limit(&scores, &labels, 1).unwrap();
        assert_eq!(counted, sorted);
        let g = counted.groups();
        assert_eq!(g.len(), 4);
        assert_eq!((g[0].score.to_bits(), g[0].pos, g[0].neg), (0.0f64.to_bits(), 1, 1));
        assert_eq!((g[1].score, g[1].pos, g[1].neg), (0.25, 1, 0));
        assert_eq!((g[2].score, g[2].pos, g[2].neg), (0.5, 2, 1));
        assert_eq!((g[3].score, g[3].pos, g[3].neg), (1.0, 1, 0));
        assert_eq!((counted.positives(), counted.negatives(), counted.rows()), (5, 2, 7));
        let high = counted.at_least(0.5);
        assert_eq!((high.groups().len(), high.positives(), high.negatives()), (2, 3, 1));
        assert_eq!(counted.at_least(2.0).rows(), 0);
    }

    #[test]
    fn invalid_input() {
        assert!(ScoreGroups::new(&[f64::NAN], &[true]).is_err());
        assert!(ScoreGroups::new(&[0.1], &[]).is_err());
        assert_eq!(ScoreGroups::new(&[], &[]).unwrap().rows(), 0);
    }
}
