//! Checks `pipeline::stats` against the reference values written by `scripts/reference/p1_stats.py`
//! (scikit-learn, statsmodels, and an O(m·n) DeLong; see that script).
//!
//! Tolerance: the AUC must equal scikit-learn's within 1e-12 (absolute); every other real value must satisfy `|actual − expected| <= 1e-9 · max(1, |expected|)`, i.e. an
//! absolute 1e-9 for values of magnitude at most 1 (AUCs, probabilities, interval bounds, ECE, Brier) and a
//! relative 1e-9 above that (ratios, real-valued sample sizes). The DeLong variance, which is small, is in
//! addition checked to a relative 1e-9. Counts and rounded-up sample sizes must match exactly.

use pipeline::stats::{
    self, AucOutcome, Binning, Interval, ReliabilityBin, UndefinedAuc, auc_sample_size_ci, auc_sample_size_test,
    proportion_sample_size_ci, proportion_sample_size_test,
};
use serde::Deserialize;

const TOL: f64 = 1e-9;
const DATA: &str = include_str!("data/p1_stats_reference.json");

#[derive(Deserialize)]
struct Reference {
    alpha: f64,
    z: f64,
    fixtures: Vec<Fixture>,
    proportions: Vec<ProportionCase>,
    power: Power,
}

#[derive(Deserialize)]
struct Fixture {
    name: String,
    confidence: Vec<f64>,
    correct: Vec<bool>,
    expected: Expected,
}

#[derive(Deserialize)]
struct Expected {
    auc: AucRef,
    brier: f64,
    ece_equal_width: f64,
    ece_equal_mass: f64,
    reliability_equal_width: Vec<BinRef>,
    reliability_equal_mass: Vec<BinRef>,
    average_precision: Option<f64>,
    roc_curve: Option<Vec<(f64, f64)>>,
}

#[derive(Deserialize)]
struct AucRef {
    defined: bool,
    n_pos: usize,
    n_neg: usize,
    value: Option<f64>,
    variance: Option<f64>,
    se: Option<f64>,
    ci: Option<(f64, f64)>,
}

#[derive(Deserialize)]
struct BinRef {
    lo: f64,
    hi: f64,
    n: usize,
    mean_confidence: f64,
    accuracy: f64,
}

#[derive(Deserialize)]
struct IntervalRef {
    estimate: f64,
    lo: f64,
    hi: f64,
}

#[derive(Deserialize)]
struct ProportionCase {
    x1: u64,
    n1: u64,
    x2: u64,
    n2: u64,
    wilson1: Option<IntervalRef>,
    wilson2: Option<IntervalRef>,
    newcombe_difference: Option<IntervalRef>,
    katz_ratio: Option<IntervalRef>,
}

#[derive(Deserialize)]
struct Power {
    auc_test: Vec<AucTestCase>,
    auc_ci: Vec<AucCiCase>,
    proportion_test: Vec<PropTestCase>,
    proportion_ci: Vec<PropCiCase>,
}

#[derive(Deserialize)]
struct AucSizeRef {
    positives_exact: f64,
    positives: u64,
    n_neg: u64,
    total: u64,
}

#[derive(Deserialize)]
struct AucTestCase {
    target: f64,
    threshold: f64,
    kappa: f64,
    alpha: f64,
    power: f64,
    #[serde(flatten)]
    size: AucSizeRef,
}

#[derive(Deserialize)]
struct AucCiCase {
    auc: f64,
    half_width: f64,
    kappa: f64,
    alpha: f64,
    #[serde(flatten)]
    size: AucSizeRef,
}

#[derive(Deserialize)]
struct PropTestCase {
    p1: f64,
    p0: f64,
    alpha: f64,
    power: f64,
    exact: f64,
    n: u64,
}

#[derive(Deserialize)]
struct PropCiCase {
    p: f64,
    half_width: f64,
    alpha: f64,
    exact: f64,
    n: u64,
}

fn reference() -> Reference {
    serde_json::from_str(DATA).expect("reference JSON parses")
}

#[track_caller]
fn close(actual: f64, expected: f64, what: &str) {
    let tol = TOL * expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: actual {actual:e}, expected {expected:e} (diff {:e})",
        (actual - expected).abs()
    );
}

#[track_caller]
fn close_rel(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= TOL * expected.abs(),
        "{what}: actual {actual:e}, expected {expected:e} (relative)"
    );
}

#[track_caller]
fn same_interval(actual: Option<Interval>, expected: &Option<IntervalRef>, what: &str) {
    match (actual, expected) {
        (None, None) => {}
        (Some(a), Some(e)) => {
            close(a.estimate, e.estimate, &format!("{what}.estimate"));
            close(a.lo, e.lo, &format!("{what}.lo"));
            close(a.hi, e.hi, &format!("{what}.hi"));
        }
        (a, e) => panic!("{what}: actual {a:?}, expected defined = {}", e.is_some()),
    }
}

#[track_caller]
fn same_table(actual: &[ReliabilityBin], expected: &[BinRef], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: number of bins");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_eq!(a.n, e.n, "{what}[{i}].n");
        close(a.lo, e.lo, &format!("{what}[{i}].lo"));
        close(a.hi, e.hi, &format!("{what}[{i}].hi"));
        close(
            a.mean_confidence,
            e.mean_confidence,
            &format!("{what}[{i}].mean_confidence"),
        );
        close(a.accuracy, e.accuracy, &format!("{what}[{i}].accuracy"));
    }
}

#[test]
fn z_matches_scipy() {
    let r = reference();
    close(stats::z_two_sided(r.alpha).unwrap(), r.z, "z");
}

#[test]
fn fixtures_cover_the_required_shapes() {
    let r = reference();
    let names: Vec<&str> = r.fixtures.iter().map(|f| f.name.as_str()).collect();
    for required in ["tiny", "ties_0.1_grid", "n2000", "single_class_all_correct"] {
        assert!(names.contains(&required), "missing fixture {required}");
    }
    let big = r.fixtures.iter().find(|f| f.name == "n2000").unwrap();
    assert_eq!(big.confidence.len(), 2000);
}

#[test]
fn auc_and_delong_match_sklearn_and_pairwise_delong() {
    let r = reference();
    let z = stats::z_two_sided(r.alpha).unwrap();
    for f in &r.fixtures {
        let e = &f.expected.auc;
        let name = &f.name;
        match stats::auc(&f.confidence, &f.correct, z).unwrap() {
            AucOutcome::Defined(a) => {
                assert!(e.defined, "{name}: AUC should be undefined");
                assert_eq!((a.n_pos, a.n_neg), (e.n_pos, e.n_neg), "{name}: class sizes");
                // P1's acceptance: the AUC equals scikit-learn's `roc_auc_score` within 1e-12.
                let expected = e.value.unwrap();
                assert!(
                    (a.value - expected).abs() <= 1e-12,
                    "{name}: auc {} vs sklearn {expected}",
                    a.value
                );
                let var = e.variance.unwrap();
                close(a.variance, var, &format!("{name}: variance"));
                if var == 0.0 {
                    assert_eq!(a.variance, 0.0, "{name}: variance");
                } else {
                    close_rel(a.variance, var, &format!("{name}: variance"));
                }
                close(a.se, e.se.unwrap(), &format!("{name}: se"));
                let (lo, hi) = e.ci.unwrap();
                close(a.ci.0, lo, &format!("{name}: ci.lo"));
                close(a.ci.1, hi, &format!("{name}: ci.hi"));
            }
            AucOutcome::Undefined(UndefinedAuc::TooFewInClass { n_pos, n_neg }) => {
                assert!(!e.defined, "{name}: AUC should be defined");
                assert_eq!((n_pos, n_neg), (e.n_pos, e.n_neg), "{name}: class sizes");
            }
        }
    }
}

#[test]
fn calibration_matches_reference() {
    let r = reference();
    for f in &r.fixtures {
        let (c, y, name) = (&f.confidence, &f.correct, &f.name);
        let e = &f.expected;
        close(stats::brier(c, y).unwrap().unwrap(), e.brier, &format!("{name}: brier"));
        close(
            stats::ece_equal_width(c, y).unwrap().unwrap(),
            e.ece_equal_width,
            &format!("{name}: ece_equal_width"),
        );
        close(
            stats::ece_equal_mass(c, y).unwrap().unwrap(),
            e.ece_equal_mass,
            &format!("{name}: ece_equal_mass"),
        );
        same_table(
            &stats::reliability_table(c, y, Binning::EqualWidth).unwrap(),
            &e.reliability_equal_width,
            &format!("{name}: reliability_equal_width"),
        );
        same_table(
            &stats::reliability_table(c, y, Binning::EqualMass).unwrap(),
            &e.reliability_equal_mass,
            &format!("{name}: reliability_equal_mass"),
        );
        match (stats::average_precision(c, y).unwrap(), e.average_precision) {
            (Some(a), Some(x)) => close(a, x, &format!("{name}: average_precision")),
            (None, None) => {}
            (a, x) => panic!("{name}: average_precision {a:?} vs {x:?}"),
        }
        match (stats::roc_curve(c, y).unwrap(), &e.roc_curve) {
            (Some(points), Some(expected)) => {
                assert_eq!(points.len(), expected.len(), "{name}: roc_curve points");
                for (i, (&(fpr, tpr), &(efpr, etpr))) in points.iter().zip(expected).enumerate() {
                    close(fpr, efpr, &format!("{name}: roc_curve[{i}].fpr"));
                    close(tpr, etpr, &format!("{name}: roc_curve[{i}].tpr"));
                }
            }
            (None, None) => {}
            (a, x) => panic!("{name}: roc_curve {a:?} vs {x:?}"),
        }
    }
}

#[test]
fn proportions_match_statsmodels_and_textbook() {
    let r = reference();
    let z = stats::z_two_sided(r.alpha).unwrap();
    for p in &r.proportions {
        let what = format!("({}/{}) vs ({}/{})", p.x1, p.n1, p.x2, p.n2);
        same_interval(
            stats::wilson(p.x1, p.n1, z).unwrap(),
            &p.wilson1,
            &format!("{what} wilson1"),
        );
        same_interval(
            stats::wilson(p.x2, p.n2, z).unwrap(),
            &p.wilson2,
            &format!("{what} wilson2"),
        );
        same_interval(
            stats::newcombe_difference(p.x1, p.n1, p.x2, p.n2, z).unwrap(),
            &p.newcombe_difference,
            &format!("{what} newcombe"),
        );
        same_interval(
            stats::katz_ratio(p.x1, p.n1, p.x2, p.n2, z).unwrap(),
            &p.katz_ratio,
            &format!("{what} katz"),
        );
    }
}

#[test]
fn power_matches_python_transcription() {
    let p = reference().power;
    for c in &p.auc_test {
        let s = auc_sample_size_test(c.target, c.threshold, c.kappa, c.alpha, c.power).unwrap();
        let what = format!("auc_test {} vs {}", c.target, c.threshold);
        close(s.positives.exact, c.size.positives_exact, &what);
        assert_eq!(
            (s.positives.n, s.n_neg, s.total),
            (c.size.positives, c.size.n_neg, c.size.total),
            "{what}"
        );
    }
    for c in &p.auc_ci {
        let s = auc_sample_size_ci(c.auc, c.half_width, c.kappa, c.alpha).unwrap();
        let what = format!("auc_ci {} ± {}", c.auc, c.half_width);
        close(s.positives.exact, c.size.positives_exact, &what);
        assert_eq!(
            (s.positives.n, s.n_neg, s.total),
            (c.size.positives, c.size.n_neg, c.size.total),
            "{what}"
        );
    }
    for c in &p.proportion_test {
        let s = proportion_sample_size_test(c.p1, c.p0, c.alpha, c.power).unwrap();
        close(s.exact, c.exact, "proportion_test");
        assert_eq!(s.n, c.n, "proportion_test");
    }
    for c in &p.proportion_ci {
        let s = proportion_sample_size_ci(c.p, c.half_width, c.alpha).unwrap();
        close(s.exact, c.exact, "proportion_ci");
        assert_eq!(s.n, c.n, "proportion_ci");
    }
}
