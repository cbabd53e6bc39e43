//! P1 calibration: the pre-registered decision.
//!
//! The kill rule (`AUC <= 0.60 OR high-subset lift <= +5pp`, thresholds from the prereg) is evaluated on point
//! estimates. The verdict is then:
//!
//! 1. **INCONCLUSIVE** when the AUC is undefined (a class has fewer than 2 rows), or when `n` is below the
//!    pre-registered power analysis (`max(min_n, n for target_auc vs the kill threshold)`); it says how many more
//!    rows are needed.
//! 2. **KILL** when a statistic that triggers the rule does so decisively: its interval lies entirely on the kill
//!    side of its threshold (AUC: upper bound `<= auc_at_most`; lift: upper bound `<= lift_pp_at_most`). One
//!    decisive trigger is enough, since the rule is an OR.
//! 3. **PASS** when neither statistic triggers the rule and both intervals lie entirely on the pass side
//!    (lower bound above the threshold).
//! 4. **INCONCLUSIVE** otherwise: an interval straddles its threshold (or the lift is undefined because no row is
//!    rated high), so the data cannot support either answer.
//!
//! The lift is the high subset's correct-rate minus the whole corpus's, in percentage points, with Newcombe's
//! interval for a difference of proportions (conservative here: the subset is part of the whole, see
//! [`crate::stats::newcombe_difference`]).

use crate::prereg::P1Spec;
pub use crate::prereg::VerdictKind;
use crate::stats::{self, Auc, AucOutcome, Interval, ScoreGroups, StatsError};

/// What the decision looks at.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    pub n: u64,
    pub n_correct: u64,
    /// Rows with `confidence >= high`, and how many of them are correct.
    pub n_high: u64,
    pub n_high_correct: u64,
    pub auc: AucOutcome,
    /// High-subset correct-rate minus overall correct-rate, in percentage points; `None` without high rows.
    pub lift_pp: Option<Interval>,
}

impl Evidence {
    /// Computes the evidence from paired confidences and outcomes under `spec`.
    pub fn from_rows(confidence: &[f64], correct: &[bool], spec: &P1Spec) -> Result<Self, StatsError> {
        Self::from_groups(&ScoreGroups::new(confidence, correct)?, spec)
    }

    /// The evidence of rows grouped by confidence.
    pub fn from_groups(groups: &ScoreGroups, spec: &P1Spec) -> Result<Self, StatsError> {
        let z = stats::z_two_sided(spec.alpha)?;
        let auc = stats::auc_of_groups(groups, z)?;
        let high = groups.at_least(spec.high);
        let (n, n_correct) = (groups.rows(), groups.positives());
        let (n_high, n_high_correct) = (high.rows(), high.positives());
        let lift_pp = stats::newcombe_difference(n_high_correct, n_high, n_correct, n, z)?.map(|interval| Interval {
            estimate: interval.estimate * 100.0,
            lo: interval.lo * 100.0,
            hi: interval.hi * 100.0,
        });
        Ok(Self {
            n,
            n_correct,
            n_high,
            n_high_correct,
            auc,
            lift_pp,
        })
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Verdict {
    pub kind: VerdictKind,
    /// Why, one sentence per deciding fact, in the order they were checked.
    pub reasons: Vec<String>,
    /// Rows the power analysis asks for.
    pub n_required: u64,
    /// More rows needed before the data can decide (`INCONCLUSIVE` by n or undefined AUC), else 0.
    pub n_still_needed: u64,
    /// The power analysis by class: correct and wrong rows it asks for (summing to `n_required`) ...
    pub n_required_correct: u64,
    pub n_required_wrong: u64,
    /// ... and how many more of each class the corpus lacks (0 when it has enough).
    pub correct_still_needed: u64,
    pub wrong_still_needed: u64,
}

/// Rows the decision needs: `max(min_n, total of the one-sided AUC test of target_auc against the kill
/// threshold)`, with the observed ratio of wrong to correct rows (the prereg's assumed correct-rate when a class
/// is missing).
pub fn required_n(evidence: &Evidence, spec: &P1Spec) -> u64 {
    required_rows(evidence, spec).total
}

/// [`required_n`] split by class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequiredRows {
    pub total: u64,
    pub correct: u64,
    pub wrong: u64,
}

/// [`required_n`] with its split into correct and wrong rows: the AUC test's own split, or, when `min_n`
/// dominates, `min_n` split in the same ratio (correct rows rounded up).
pub fn required_rows(evidence: &Evidence, spec: &P1Spec) -> RequiredRows {
    let n_wrong = evidence.n - evidence.n_correct;
    let kappa = if evidence.n_correct > 0 && n_wrong > 0 {
        n_wrong as f64 / evidence.n_correct as f64
    } else {
        (1.0 - spec.power.assumed_correct_rate) / spec.power.assumed_correct_rate
    };
    let planned = stats::auc_sample_size_test(
        spec.power.target_auc,
        spec.kill.auc_at_most,
        kappa,
        spec.alpha,
        spec.power.power,
    )
    .map_or(
        RequiredRows {
            total: 0,
            correct: 0,
            wrong: 0,
        },
        |size| RequiredRows {
            total: size.total,
            correct: size.positives.n,
            wrong: size.n_neg,
        },
    );
    if planned.total >= spec.power.min_n {
        return planned;
    }
    // The tolerance keeps an exact split (700 of 1000 at 3 wrong : 7 correct) from rounding up on float noise.
    let correct = ((spec.power.min_n as f64 / (1.0 + kappa) - 1e-9).ceil() as u64).min(spec.power.min_n);
    RequiredRows {
        total: spec.power.min_n,
        correct,
        wrong: spec.power.min_n - correct,
    }
}

/// The pre-registered verdict for `evidence`.
pub fn decide(evidence: &Evidence, spec: &P1Spec) -> Verdict {
    let required = required_rows(evidence, spec);
    let n_required = required.total;
    let verdict = |kind: VerdictKind, reasons: Vec<String>, n_still_needed: u64| Verdict {
        kind,
        reasons,
        n_required,
        n_still_needed,
        n_required_correct: required.correct,
        n_required_wrong: required.wrong,
        correct_still_needed: required.correct.saturating_sub(evidence.n_correct),
        wrong_still_needed: required.wrong.saturating_sub(evidence.n - evidence.n_correct),
    };
    let inconclusive =
        |reasons: Vec<String>, n_still_needed: u64| verdict(VerdictKind::Inconclusive, reasons, n_still_needed);
    let auc: &Auc = match &evidence.auc {
        AucOutcome::Defined(auc) => auc,
        AucOutcome::Undefined(_) => {
            let n_wrong = evidence.n - evidence.n_correct;
            return inconclusive(
                vec![format!(
                    "AUC undefined: {} correct and {n_wrong} wrong rows; each class needs at least 2",
                    evidence.n_correct
                )],
                n_required
                    .saturating_sub(evidence.n)
                    .max(u64::from(evidence.n_correct < 2 || n_wrong < 2)),
            );
        }
    };
    if evidence.n < n_required {
        return inconclusive(
            vec![format!(
                "n = {} is below the {n_required} rows the pre-registered power analysis needs",
                evidence.n
            )],
            n_required - evidence.n,
        );
    }

    let auc_threshold = spec.kill.auc_at_most;
    let lift_threshold = spec.kill.lift_pp_at_most;
    let (auc_lo, auc_hi) = auc.ci;
    let mut kill_reasons = Vec::new();
    let mut open_questions = Vec::new();

    if auc.value <= auc_threshold {
        if auc_hi <= auc_threshold {
            kill_reasons.push(format!(
                "AUC {:.3} <= {auc_threshold} and its interval [{auc_lo:.3}, {auc_hi:.3}] lies at or below it",
                auc.value
            ));
        } else {
            open_questions.push(format!(
                "AUC {:.3} <= {auc_threshold}, but its interval [{auc_lo:.3}, {auc_hi:.3}] straddles it",
                auc.value
            ));
        }
    } else if auc_lo <= auc_threshold {
        open_questions.push(format!(
            "AUC {:.3} > {auc_threshold}, but its interval [{auc_lo:.3}, {auc_hi:.3}] straddles it",
            auc.value
        ));
    }

    match &evidence.lift_pp {
        None => open_questions.push(format!("lift undefined: no row has confidence >= {}", spec.high)),
        Some(lift) if lift.estimate <= lift_threshold => {
            if lift.hi <= lift_threshold {
                kill_reasons.push(format!(
                    "lift {:+.1}pp <= +{lift_threshold}pp and its interval [{:+.1}, {:+.1}]pp lies at or below it",
                    lift.estimate, lift.lo, lift.hi
                ));
            } else {
                open_questions.push(format!(
                    "lift {:+.1}pp <= +{lift_threshold}pp, but its interval [{:+.1}, {:+.1}]pp straddles it",
                    lift.estimate, lift.lo, lift.hi
                ));
            }
        }
        Some(lift) if lift.lo <= lift_threshold => open_questions.push(format!(
            "lift {:+.1}pp > +{lift_threshold}pp, but its interval [{:+.1}, {:+.1}]pp straddles it",
            lift.estimate, lift.lo, lift.hi
        )),
        Some(_) => {}
    }

    if !kill_reasons.is_empty() {
        verdict(VerdictKind::Kill, kill_reasons, 0)
    } else if open_questions.is_empty() {
        let lift = evidence.lift_pp.as_ref().expect("a defined lift when nothing is open");
        verdict(
            VerdictKind::Pass,
            vec![format!(
                "AUC {:.3} [{auc_lo:.3}, {auc_hi:.3}] > {auc_threshold} and lift {:+.1}pp [{:+.1}, {:+.1}] > +{lift_threshold}pp",
                auc.value, lift.estimate, lift.lo, lift.hi
            )],
            0,
        )
    } else {
        inconclusive(open_questions, 0)
    }
}

/// The body of `p1.json`: what was read, every metric with the verdict, and the breakdowns asked for.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct P1Report {
    pub corpus: CorpusSummary,
    pub metrics: Metrics,
    /// Per field given with `--by` (`agent`, `surface`, …), one entry per value, sorted by value.
    pub breakdowns: std::collections::BTreeMap<String, Vec<Group>>,
    /// Does the mechanical risk floor predict failures? Only when some row has a `risk_score`; descriptive, it
    /// does not change the verdict.
    pub risk_floor: Option<RiskFloor>,
    /// How the corpus was built, when `phase0 p1 --reflections DIR --repo PATH` joined it in memory.
    pub corpus_join: Option<CorpusJoin>,
}

/// The in-memory join of `phase0 p1 --reflections --repo` (see [`crate::experiments::corpus`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CorpusJoin {
    pub reflections: String,
    pub repo: String,
    pub rev: String,
    pub as_of: String,
    pub window_days: u32,
    pub prereg: crate::prereg::PreregRef,
    pub counts: crate::experiments::corpus::Counts,
    pub invalid_sidecars: u64,
}

/// The risk floor as a predictor of failure, over every row with a `risk_score` (rows with a null confidence
/// included): positive class = wrong.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RiskFloor {
    pub n: u64,
    pub n_wrong: u64,
    /// AUC of `risk_score` for predicting a wrong row (Mann–Whitney, ties ½; DeLong interval).
    pub auc: RiskAuc,
    /// Failure rates of the rows the floor flagged (`needs_review`) and the others, over rows that have the flag.
    pub needs_review: Option<ReviewSplit>,
}

/// An AUC with wrong rows as the positive class.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RiskAuc {
    pub value: Option<f64>,
    pub se: Option<f64>,
    pub ci: Option<(f64, f64)>,
    /// Why the AUC is undefined, when it is.
    pub undefined: Option<String>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReviewSplit {
    pub n_flagged: u64,
    pub wrong_flagged: u64,
    /// Wrong / flagged, Wilson interval; `None` when no row is flagged.
    pub failure_rate_flagged: Option<Interval>,
    pub n_unflagged: u64,
    pub wrong_unflagged: u64,
    pub failure_rate_unflagged: Option<Interval>,
    /// Flagged minus unflagged failure rate, in percentage points (Newcombe).
    pub difference_pp: Option<Interval>,
}

impl RiskFloor {
    /// `None` when no row has a risk score (`risk_score` all `NaN` or empty). `needs_review` may be empty.
    pub fn compute(
        risk_score: &[f64],
        needs_review: &[Option<bool>],
        correct: &[bool],
        spec: &P1Spec,
    ) -> Result<Option<Self>, StatsError> {
        let z = stats::z_two_sided(spec.alpha)?;
        let (mut scores, mut wrong) = (Vec::new(), Vec::new());
        for (row, &score) in risk_score.iter().enumerate() {
            if !score.is_nan() {
                scores.push(score);
                wrong.push(!correct[row]);
            }
        }
        if scores.is_empty() {
            return Ok(None);
        }
        let auc = match stats::auc(&scores, &wrong, z)? {
            AucOutcome::Defined(auc) => RiskAuc {
                value: Some(auc.value),
                se: Some(auc.se),
                ci: Some(auc.ci),
                undefined: None,
            },
            AucOutcome::Undefined(stats::UndefinedAuc::TooFewInClass { n_pos, n_neg }) => RiskAuc {
                value: None,
                se: None,
                ci: None,
                undefined: Some(format!(
                    "{n_pos} wrong and {n_neg} correct rows with a risk score; each class needs at least 2"
                )),
            },
        };
        let mut counts = [[0u64; 2]; 2]; // [flagged][wrong]
        let mut any_flag = false;
        for (row, flag) in needs_review.iter().enumerate() {
            if let Some(flag) = flag {
                any_flag = true;
                counts[usize::from(*flag)][usize::from(!correct[row])] += 1;
            }
        }
        let needs_review = if any_flag {
            let (wf, nf) = (counts[1][1], counts[1][0] + counts[1][1]);
            let (wu, nu) = (counts[0][1], counts[0][0] + counts[0][1]);
            Some(ReviewSplit {
                n_flagged: nf,
                wrong_flagged: wf,
                failure_rate_flagged: stats::wilson(wf, nf, z)?,
                n_unflagged: nu,
                wrong_unflagged: wu,
                failure_rate_unflagged: stats::wilson(wu, nu, z)?,
                difference_pp: stats::newcombe_difference(wf, nf, wu, nu, z)?.map(|i| Interval {
                    estimate: i.estimate * 100.0,
                    lo: i.lo * 100.0,
                    hi: i.hi * 100.0,
                }),
            })
        } else {
            None
        };
        Ok(Some(Self {
            n: scores.len() as u64,
            n_wrong: wrong.iter().filter(|&&w| w).count() as u64,
            auc,
            needs_review,
        }))
    }
}

/// The headline numbers of one group of a breakdown (descriptive: the verdict is for the whole corpus).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Group {
    /// The field's value; `null` for rows without it.
    pub value: Option<String>,
    pub n: u64,
    pub n_correct: u64,
    pub base_rate: Option<Interval>,
    pub auc: AucSummary,
    pub n_high: u64,
    pub lift_pp: Option<Interval>,
}

/// Groups rows by `key` (`None` = the field is absent) and computes each group's headline numbers. Groups come
/// sorted by value, absent last.
pub fn breakdown(
    confidence: &[f64],
    correct: &[bool],
    key: impl Fn(usize) -> Option<String>,
    spec: &P1Spec,
) -> Result<Vec<Group>, StatsError> {
    let z = stats::z_two_sided(spec.alpha)?;
    let keys: Vec<Option<String>> = (0..confidence.len()).map(key).collect();
    let keys: Vec<Option<&str>> = keys.iter().map(Option::as_deref).collect();
    // A group-by over an in-memory column of strings fails only on a polars bug.
    let mut groups = super::frames::rows_by_key(&keys).expect("polars groups a column of strings");
    // Sorted by value, absent last.
    groups.sort_by(|(a, _), (b, _)| (a.is_none(), a).cmp(&(b.is_none(), b)));
    groups
        .into_iter()
        .map(|(value, rows)| {
            let confidence: Vec<f64> = rows.iter().map(|&row| confidence[row]).collect();
            let correct: Vec<bool> = rows.iter().map(|&row| correct[row]).collect();
            let evidence = Evidence::from_rows(&confidence, &correct, spec)?;
            Ok(Group {
                value,
                n: evidence.n,
                n_correct: evidence.n_correct,
                base_rate: stats::wilson(evidence.n_correct, evidence.n, z)?,
                auc: AucSummary::from(&evidence.auc),
                n_high: evidence.n_high,
                lift_pp: evidence.lift_pp,
            })
        })
        .collect()
}

/// How the corpus was read: every line accounted for (`lines = blank_lines + rows + skipped`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CorpusSummary {
    pub lines: u64,
    pub blank_lines: u64,
    pub rows: u64,
    pub duplicate_lines: u64,
    /// Rows with a null confidence: left out of every confidence metric, kept for the risk-floor evaluation.
    pub null_confidence: u64,
    /// Invalid lines skipped with `--skip-invalid`, by reason id.
    pub skipped: std::collections::BTreeMap<String, u64>,
}

impl From<&crate::scan::corpus::ReadStats> for CorpusSummary {
    fn from(stats: &crate::scan::corpus::ReadStats) -> Self {
        Self {
            lines: stats.lines,
            blank_lines: stats.blank_lines,
            rows: stats.rows,
            duplicate_lines: stats.duplicate_lines,
            null_confidence: stats.null_confidence,
            skipped: stats
                .skipped
                .iter()
                .map(|(reason, count)| (reason.id().to_string(), *count))
                .collect(),
        }
    }
}

/// An AUC as a report states it: the value and interval, or why it is undefined.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AucSummary {
    pub n_correct: usize,
    pub n_wrong: usize,
    pub value: Option<f64>,
    pub se: Option<f64>,
    pub ci: Option<(f64, f64)>,
    /// Why the AUC is undefined, when it is.
    pub undefined: Option<String>,
}

impl From<&AucOutcome> for AucSummary {
    fn from(outcome: &AucOutcome) -> Self {
        match outcome {
            AucOutcome::Defined(auc) => Self {
                n_correct: auc.n_pos,
                n_wrong: auc.n_neg,
                value: Some(auc.value),
                se: Some(auc.se),
                ci: Some(auc.ci),
                undefined: None,
            },
            AucOutcome::Undefined(stats::UndefinedAuc::TooFewInClass { n_pos, n_neg }) => Self {
                n_correct: *n_pos,
                n_wrong: *n_neg,
                value: None,
                se: None,
                ci: None,
                undefined: Some(format!(
                    "{n_pos} correct and {n_neg} wrong rows; each class needs at least 2"
                )),
            },
        }
    }
}

/// ROC curve points `(false-positive rate, true-positive rate)`, as [`stats::roc_curve`] gives them.
pub type RocPoints = Vec<(f64, f64)>;

/// Every P1 metric of a corpus, and the verdict: the body of `p1.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Metrics {
    pub n: u64,
    pub n_correct: u64,
    /// Correct-rate with its Wilson interval; `None` for an empty corpus.
    pub base_rate: Option<Interval>,
    pub high: f64,
    pub n_high: u64,
    /// The high subset's correct-rate (Wilson).
    pub high_rate: Option<Interval>,
    pub auc: AucSummary,
    /// The AUC within the self-rated-high subset.
    pub auc_high: AucSummary,
    /// High-subset correct-rate minus overall, in percentage points (Newcombe).
    pub lift_pp: Option<Interval>,
    /// High-subset correct-rate over overall (Katz log interval).
    pub lift_ratio: Option<Interval>,
    pub brier: Option<f64>,
    pub ece_equal_width: Option<f64>,
    pub ece_equal_mass: Option<f64>,
    pub average_precision: Option<f64>,
    pub reliability_equal_width: Vec<stats::ReliabilityBin>,
    pub reliability_equal_mass: Vec<stats::ReliabilityBin>,
    /// Stratified bootstrap percentile intervals, when the prereg asks for replicates (descriptive: the verdict
    /// uses the analytic intervals above).
    pub bootstrap: Option<stats::BootstrapIntervals>,
    pub verdict: Verdict,
}

impl Metrics {
    /// Computes every metric of the paired rows under `spec`.
    pub fn compute(confidence: &[f64], correct: &[bool], spec: &P1Spec) -> Result<Self, StatsError> {
        Ok(Self::compute_with_roc(confidence, correct, spec)?.0)
    }

    /// [`Metrics::compute`], plus the ROC curve's points (for the plot), from the same grouping of the rows.
    pub fn compute_with_roc(
        confidence: &[f64],
        correct: &[bool],
        spec: &P1Spec,
    ) -> Result<(Self, Option<RocPoints>), StatsError> {
        let z = stats::z_two_sided(spec.alpha)?;
        // Every metric reads the rows through one grouping by confidence; only the equal-mass table's tied
        // bin edges look at the rows again.
        let groups = stats::ScoreGroups::new(confidence, correct)?;
        if let Some(g) = groups.groups().iter().find(|g| !(0.0..=1.0).contains(&g.score)) {
            let index = confidence.iter().position(|&c| c + 0.0 == g.score).unwrap_or(0);
            return Err(StatsError::ConfidenceOutOfRange { index, value: g.score });
        }
        let evidence = Evidence::from_groups(&groups, spec)?;
        let auc_high = stats::auc_of_groups(&groups.at_least(spec.high), z)?;
        let width = stats::equal_width_table(&groups);
        let mass = stats::equal_mass_table(&groups, confidence, correct);
        let roc = stats::roc_curve_of_groups(&groups);
        let bootstrap = match spec.bootstrap.replicates {
            0 => None,
            replicates => Some(stats::stratified_bootstrap(
                &groups,
                spec.high,
                replicates,
                spec.bootstrap.seed,
                spec.alpha,
            )?),
        };
        let metrics = Self {
            n: evidence.n,
            n_correct: evidence.n_correct,
            base_rate: stats::wilson(evidence.n_correct, evidence.n, z)?,
            high: spec.high,
            n_high: evidence.n_high,
            high_rate: stats::wilson(evidence.n_high_correct, evidence.n_high, z)?,
            auc: AucSummary::from(&evidence.auc),
            auc_high: AucSummary::from(&auc_high),
            lift_pp: evidence.lift_pp,
            lift_ratio: stats::katz_ratio(
                evidence.n_high_correct,
                evidence.n_high,
                evidence.n_correct,
                evidence.n,
                z,
            )?,
            brier: stats::brier_of_groups(&groups),
            ece_equal_width: stats::ece(&width),
            ece_equal_mass: stats::ece(&mass),
            average_precision: stats::average_precision_of_groups(&groups),
            reliability_equal_width: width,
            reliability_equal_mass: mass,
            bootstrap,
            verdict: decide(&evidence, spec),
        };
        Ok((metrics, roc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prereg::Prereg;
    use crate::stats::UndefinedAuc;

    // Reference values: scikit-learn roc_auc_score([1,1,1,0,0,0,0], risk) = 0.708333…, statsmodels
    // proportion_confint(2, 3, method="wilson") = (0.2076596008020477, 0.9385080552796037) and
    // (1, 4) = (0.0455872608097006, 0.6993581574175982).
    #[test]
    fn risk_floor_auc_and_needs_review_split() {
        let spec = Prereg::p1(None).unwrap().spec;
        let risk = [1.0, 0.9, 0.0, 0.1, 0.4, 0.85, 0.0, f64::NAN];
        let flags = [
            Some(true),
            Some(true),
            Some(false),
            Some(false),
            Some(false),
            Some(true),
            Some(false),
            None,
        ];
        let correct = [false, false, false, true, true, true, true, false];
        let floor = RiskFloor::compute(&risk, &flags, &correct, &spec).unwrap().unwrap();
        assert_eq!((floor.n, floor.n_wrong), (7, 3));
        assert!((floor.auc.value.unwrap() - 8.5 / 12.0).abs() < 1e-15);
        let split = floor.needs_review.unwrap();
        assert_eq!(
            (
                split.n_flagged,
                split.wrong_flagged,
                split.n_unflagged,
                split.wrong_unflagged
            ),
            (3, 2, 4, 1)
        );
        let flagged = split.failure_rate_flagged.unwrap();
        assert!((flagged.lo - 0.2076596008020477).abs() < 1e-12 && (flagged.hi - 0.9385080552796037).abs() < 1e-12);
        let unflagged = split.failure_rate_unflagged.unwrap();
        assert!((unflagged.lo - 0.0455872608097006).abs() < 1e-12);
        assert!((split.difference_pp.unwrap().estimate - (200.0 / 3.0 - 25.0)).abs() < 1e-9);
        // No risk score anywhere: no evaluation; one class only: the AUC is undefined, the split still shown.
        assert_eq!(RiskFloor::compute(&[], &[], &[], &spec).unwrap(), None);
        let one_class = RiskFloor::compute(&[0.5, 0.2], &[Some(true), Some(false)], &[true, true], &spec)
            .unwrap()
            .unwrap();
        assert_eq!(
            one_class.auc.undefined.as_deref(),
            Some("0 wrong and 2 correct rows with a risk score; each class needs at least 2")
        );
        assert_eq!(
            one_class.needs_review.unwrap().failure_rate_flagged.unwrap().estimate,
            0.0
        );
    }

    fn spec() -> P1Spec {
        Prereg::p1(None).unwrap().spec
    }

    fn auc(value: f64, lo: f64, hi: f64) -> AucOutcome {
        AucOutcome::Defined(Auc {
            value,
            variance: 0.0,
            se: 0.0,
            ci: (lo, hi),
            n_pos: 700,
            n_neg: 300,
        })
    }

    fn lift(estimate: f64, lo: f64, hi: f64) -> Option<Interval> {
        Some(Interval { estimate, lo, hi })
    }

    fn evidence(auc: AucOutcome, lift_pp: Option<Interval>) -> Evidence {
        Evidence {
            n: 1000,
            n_correct: 700,
            n_high: 300,
            n_high_correct: 270,
            auc,
            lift_pp,
        }
    }

    #[test]
    fn kill_by_auc() {
        let verdict = decide(&evidence(auc(0.55, 0.50, 0.59), lift(12.0, 8.0, 16.0)), &spec());
        assert_eq!(verdict.kind, VerdictKind::Kill);
        assert_eq!(
            verdict.reasons,
            vec!["AUC 0.550 <= 0.6 and its interval [0.500, 0.590] lies at or below it"]
        );
    }

    #[test]
    fn kill_by_lift() {
        let verdict = decide(&evidence(auc(0.75, 0.71, 0.79), lift(1.0, -2.0, 4.0)), &spec());
        assert_eq!(verdict.kind, VerdictKind::Kill);
        assert_eq!(
            verdict.reasons,
            vec!["lift +1.0pp <= +5pp and its interval [-2.0, +4.0]pp lies at or below it"]
        );
    }

    #[test]
    fn pass_when_both_clear_their_thresholds() {
        let verdict = decide(&evidence(auc(0.75, 0.71, 0.79), lift(12.0, 8.0, 16.0)), &spec());
        assert_eq!(verdict.kind, VerdictKind::Pass);
        assert_eq!(
            verdict.reasons,
            vec!["AUC 0.750 [0.710, 0.790] > 0.6 and lift +12.0pp [+8.0, +16.0] > +5pp"]
        );
        assert_eq!(verdict.n_still_needed, 0);
    }

    #[test]
    fn inconclusive_by_n() {
        let mut small = evidence(auc(0.75, 0.71, 0.79), lift(12.0, 8.0, 16.0));
        small.n = 150;
        small.n_correct = 105;
        let verdict = decide(&small, &spec());
        assert_eq!(verdict.kind, VerdictKind::Inconclusive);
        assert_eq!(verdict.n_required, required_n(&small, &spec()));
        assert!(verdict.n_required >= 200);
        assert_eq!(verdict.n_still_needed, verdict.n_required - 150);
        // By class: the AUC test's own split at the observed ratio 45 wrong : 105 correct (62 = ceil(144·45/105)).
        assert_eq!(
            (verdict.n_required, verdict.n_required_correct, verdict.n_required_wrong),
            (206, 144, 62)
        );
        assert_eq!((verdict.correct_still_needed, verdict.wrong_still_needed), (39, 17));
        // When min_n dominates, it is split in the observed ratio.
        let mut strict = spec();
        strict.power.min_n = 1000;
        let verdict = decide(&small, &strict);
        assert_eq!(
            (verdict.n_required, verdict.n_required_correct, verdict.n_required_wrong),
            (1000, 700, 300)
        );
        assert_eq!((verdict.correct_still_needed, verdict.wrong_still_needed), (595, 255));
        assert_eq!(
            verdict.reasons,
            vec![format!(
                "n = 150 is below the {} rows the pre-registered power analysis needs",
                verdict.n_required
            )]
        );
    }

    #[test]
    fn inconclusive_by_interval() {
        let verdict = decide(&evidence(auc(0.63, 0.58, 0.68), lift(12.0, 8.0, 16.0)), &spec());
        assert_eq!(verdict.kind, VerdictKind::Inconclusive);
        assert_eq!(
            verdict.reasons,
            vec!["AUC 0.630 > 0.6, but its interval [0.580, 0.680] straddles it"]
        );
        // A triggered but indecisive lift is inconclusive too, not a kill.
        let verdict = decide(&evidence(auc(0.75, 0.71, 0.79), lift(4.0, -1.0, 9.0)), &spec());
        assert_eq!(verdict.kind, VerdictKind::Inconclusive);
        assert_eq!(
            verdict.reasons,
            vec!["lift +4.0pp <= +5pp, but its interval [-1.0, +9.0]pp straddles it"]
        );
        assert_eq!(verdict.n_still_needed, 0);
    }

    #[test]
    fn inconclusive_when_the_auc_is_undefined_with_one_class() {
        let mut one_class = evidence(
            AucOutcome::Undefined(UndefinedAuc::TooFewInClass { n_pos: 1000, n_neg: 0 }),
            None,
        );
        one_class.n_correct = 1000;
        let verdict = decide(&one_class, &spec());
        assert_eq!(verdict.kind, VerdictKind::Inconclusive);
        assert_eq!(
            verdict.reasons,
            vec!["AUC undefined: 1000 correct and 0 wrong rows; each class needs at least 2"]
        );
        assert_eq!(
            verdict.n_still_needed, 1,
            "n suffices, but the missing class still needs rows"
        );
    }

    #[test]
    fn metrics_of_an_empty_corpus_are_defined_and_inconclusive() {
        let metrics = Metrics::compute(&[], &[], &spec()).unwrap();
        assert_eq!(
            (metrics.n, metrics.base_rate, metrics.lift_pp, metrics.brier),
            (0, None, None, None)
        );
        assert_eq!(
            metrics.auc.undefined.as_deref(),
            Some("0 correct and 0 wrong rows; each class needs at least 2")
        );
        assert_eq!(metrics.verdict.kind, VerdictKind::Inconclusive);
        assert!(metrics.reliability_equal_width.is_empty());
    }

    #[test]
    fn metrics_serialise_deterministically() {
        let confidence = [0.9, 0.85, 0.8, 0.95, 0.3, 0.4, 0.5, 0.2, 0.6, 0.1];
        let correct = [true, true, false, true, true, false, true, false, true, false];
        let metrics = Metrics::compute(&confidence, &correct, &spec()).unwrap();
        assert_eq!(metrics.n_high, 4);
        assert_eq!(metrics.high_rate.unwrap().estimate, 0.75);
        assert_eq!(metrics.auc_high.n_correct, 3);
        assert_eq!(
            metrics.auc_high.undefined.as_deref(),
            Some("3 correct and 1 wrong rows; each class needs at least 2")
        );
        let json = serde_json::to_string(&metrics).unwrap();
        assert_eq!(
            json,
            serde_json::to_string(&Metrics::compute(&confidence, &correct, &spec()).unwrap()).unwrap()
        );
        assert!(json.contains(r#""verdict":{"kind":"INCONCLUSIVE""#), "{json}");
    }

    #[test]
    fn breakdown_groups_by_value_with_absent_last() {
        let confidence = [0.9, 0.2, 0.8, 0.3, 0.95, 0.1];
        let correct = [true, false, true, false, true, true];
        let agents = [Some("b"), Some("a"), None, Some("b"), Some("a"), Some("a")];
        let groups = breakdown(&confidence, &correct, |row| agents[row].map(String::from), &spec()).unwrap();
        let summary: Vec<(Option<&str>, u64, u64, u64)> = groups
            .iter()
            .map(|g| (g.value.as_deref(), g.n, g.n_correct, g.n_high))
            .collect();
        assert_eq!(
            summary,
            vec![(Some("a"), 3, 2, 1), (Some("b"), 2, 1, 1), (None, 1, 1, 1)]
        );
        assert_eq!(groups[1].auc.value, None, "one row per class is too few for an AUC");
    }

    #[test]
    fn evidence_from_rows_matches_hand_counts() {
        // 10 rows: high subset (>= 0.8) has 4 rows, 3 correct; overall 6 correct.
        let confidence = [0.9, 0.85, 0.8, 0.95, 0.3, 0.4, 0.5, 0.2, 0.6, 0.1];
        let correct = [true, true, false, true, true, false, true, false, true, false];
        let evidence = Evidence::from_rows(&confidence, &correct, &spec()).unwrap();
        assert_eq!(
            (evidence.n, evidence.n_correct, evidence.n_high, evidence.n_high_correct),
            (10, 6, 4, 3)
        );
        let lift = evidence.lift_pp.unwrap();
        assert!(
            (lift.estimate - 15.0).abs() < 1e-9,
            "75% - 60% = +15pp, got {}",
            lift.estimate
        );
        assert!(lift.lo < 15.0 && lift.hi > 15.0);
        assert!(evidence.auc.defined().is_some());
    }
}
