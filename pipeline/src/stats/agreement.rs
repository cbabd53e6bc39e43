//! Agreement between two raters on nominal labels: the confusion matrix, the observed agreement and Cohen's
//! kappa, `κ = (p_o − p_e) / (1 − p_e)` with `p_e = Σ_k row_k · col_k / n²` (scikit-learn's
//! `cohen_kappa_score` without weights; reference values in `pipeline/tests/data/p2-audit/kappa_reference.py`).

use serde::Serialize;

/// Counts of (first rater's label, second rater's label) over `k` labels, indexed `[first][second]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfusionMatrix {
    pub counts: Vec<Vec<u64>>,
}

/// The agreement of a confusion matrix's two raters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Agreement {
    pub n: u64,
    /// `p_o`, the share of items on which they agree; `None` without items.
    pub observed: Option<f64>,
    /// `None` without items or when chance agreement is 1 (both raters used one and the same label: scikit-learn
    /// returns NaN there).
    pub kappa: Option<f64>,
}

impl ConfusionMatrix {
    /// An empty `k × k` matrix.
    pub fn new(k: usize) -> Self {
        Self {
            counts: vec![vec![0; k]; k],
        }
    }

    /// Counts the pairs `(first, second)`; labels must be below `k`.
    pub fn of(k: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut matrix = Self::new(k);
        for (first, second) in pairs {
            matrix.counts[first][second] += 1;
        }
        matrix
    }

    pub fn agreement(&self) -> Agreement {
        let k = self.counts.len();
        let n: u64 = self.counts.iter().flatten().sum();
        if n == 0 {
            return Agreement {
                n,
                observed: None,
                kappa: None,
            };
        }
        let total = n as f64;
        let diagonal: u64 = (0..k).map(|i| self.counts[i][i]).sum();
        let observed = diagonal as f64 / total;
        let chance: f64 = (0..k)
            .map(|i| {
                let row: u64 = self.counts[i].iter().sum();
                let col: u64 = self.counts.iter().map(|r| r[i]).sum();
                row as f64 * col as f64
            })
            .sum::<f64>()
            / (total * total);
        Agreement {
            n,
            observed: Some(observed),
            kappa: (chance < 1.0).then(|| (observed - chance) / (1.0 - chance)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_matches_a_textbook_table() {
        // Cohen's 2 × 2 example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no → p_o 0.7, p_e 0.5, κ 0.4.
        let pairs = [(0, 0); 20]
            .into_iter()
            .chain([(0, 1); 5])
            .chain([(1, 0); 10])
            .chain([(1, 1); 15]);
        let agreement = ConfusionMatrix::of(2, pairs).agreement();
        assert_eq!(agreement.n, 50);
        assert_eq!(agreement.observed, Some(0.7));
        assert!((agreement.kappa.unwrap() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn one_shared_label_has_no_kappa() {
        let agreement = ConfusionMatrix::of(3, [(1, 1), (1, 1)]).agreement();
        assert_eq!((agreement.observed, agreement.kappa), (Some(1.0), None));
        assert_eq!(ConfusionMatrix::new(3).agreement().observed, None);
    }
}
