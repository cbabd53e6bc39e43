//! Golden tests of the report plots: each plot of a small fixed input is compared byte for byte with its file
//! under `tests/data/plots/`, and specific marks are checked against values worked out here by hand.
//!
//! After a deliberate change to a plot, rewrite the golden files with
//! `PHASE0_BLESS=1 cargo test -p pipeline --test plots`, look at them (e.g. `rsvg-convert -o x.png x.svg`),
//! and commit them with the change.

use std::path::PathBuf;

use pipeline::commands::suite::{Experiment, RunStatus};
use pipeline::experiments::p1::Metrics;
use pipeline::experiments::p2::{Buckets, Shares};
use pipeline::experiments::p3::{Counts, SignalRow, TaskRow};
use pipeline::prereg::Prereg;
use pipeline::report::weekly::{ConfigRef, ExperimentWeek, Metric, MetricKind, WEEK_SCHEMA, WeekStatus, WeekSummary};
use pipeline::report::{p1, p2, plots, weekly};
use pipeline::stats::{roc_curve, wilson};

/// z of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// Compares `svg` with the golden file `name`, or writes it when `PHASE0_BLESS` is set.
fn golden(name: &str, svg: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/plots")
        .join(name);
    if std::env::var_os("PHASE0_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, svg).unwrap();
        return;
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (PHASE0_BLESS=1 writes it)", path.display()));
    assert!(
        expected == svg,
        "{name} differs from {} (PHASE0_BLESS=1 rewrites it after a deliberate change):\n{svg}",
        path.display()
    );
}

/// Twelve rows: one wrong row alone in [0.1, 0.2), then bins of 3, 3 and 5 rows.
fn p1_rows() -> (Vec<f64>, Vec<bool>) {
    let rows = [
        (0.15, false),
        (0.35, true),
        (0.35, false),
        (0.35, false),
        (0.55, true),
        (0.55, true),
        (0.55, false),
        (0.85, true),
        (0.85, true),
        (0.85, true),
        (0.9, true),
        (0.9, false),
    ];
    rows.iter().copied().unzip()
}

fn p1_plots() -> Vec<(&'static str, String)> {
    let prereg = Prereg::p1(None).unwrap();
    let (confidence, correct) = p1_rows();
    let metrics = Metrics::compute(&confidence, &correct, &prereg.spec).unwrap();
    let points = roc_curve(&confidence, &correct).unwrap().unwrap();
    p1::plots(&points, &metrics, &prereg.spec)
}

#[test]
fn p1_reliability_shows_sizes_wilson_bars_and_a_histogram() {
    let plots = p1_plots();
    let (name, svg) = &plots[1];
    assert_eq!(*name, "p1-reliability.svg");
    golden(name, svg);
    // The bin of one wrong row: accuracy 0, its Wilson interval [0, z²/(1 + z²)] = [0, 0.7935]. The panel maps
    // [0, 1] to y 356..56 and x 64..384, so the whisker at confidence 0.15 (x 112) runs from y 356 up to
    // 56 + (1 − 0.7935)·300.
    let hi = Z95 * Z95 / (1.0 + Z95 * Z95);
    assert!((hi - 0.793_45).abs() < 1e-5, "{hi}");
    let interval = wilson(0, 1, Z95).unwrap().unwrap();
    assert_eq!((interval.lo, interval.hi), (0.0, hi));
    let top = 56.0 + (1.0 - hi) * 300.0;
    assert_eq!(format!("{top:.2}"), "117.96");
    assert!(
        svg.contains(r##"<line x1="112.00" y1="356.00" x2="112.00" y2="117.96" stroke="#222" stroke-width="1.50"/>"##),
        "{svg}"
    );
    // Its bar has no height (accuracy 0) and is pale (0.08 + 0.32·sqrt(1/3): one row of the fullest bin's 3),
    // its size is printed, and the tooltip gives the interval.
    assert!(svg.contains(
        r##"<rect x="96.00" y="356.00" width="32.00" height="0.00" fill="#1f77b4" fill-opacity="0.26" stroke="#1f77b4"><title>[0.1, 0.2]: n = 1, accuracy 0.000 [0.000, 0.793], mean confidence 0.150</title>"##
    ));
    assert!(svg.contains(r#"<text x="112.00" y="50.00" text-anchor="middle" font-size="10">1</text>"#));
    // The sizes of the other bins: 0.35 ×3, 0.55 ×3, 0.85 ×3 in [0.8, 0.9), 0.9 ×2 in [0.9, 1.0] (closed).
    for (x, size) in [(176.0, 3), (240.0, 3), (336.0, 3), (368.0, 2)] {
        assert!(svg.contains(&format!(
            r#"<text x="{x:.2}" y="50.00" text-anchor="middle" font-size="10">{size}</text>"#
        )));
    }
    // The histogram: one bar per non-empty bin (4 rows of counts 1, 3, 3, 3, 2 → 5 bins).
    assert_eq!(
        svg.matches(r##"fill="#7f7f7f" fill-opacity="0.5" stroke="#7f7f7f"/>"##)
            .count(),
        5 + 1
    );
    for label in [
        "bar: share correct of the bin&#39;s rows (its rows above it; paler: fewer rows)",
        "dot, whisker: that share at the bin&#39;s mean confidence, Wilson 95% interval",
        "histogram: rows per confidence bin (equal-width bins of 0.1)",
    ] {
        let label = label.replace("&#39;", "'");
        assert!(svg.contains(&label), "legend {label:?} missing");
    }
}

#[test]
fn p1_roc_has_a_pointwise_band_and_the_high_cut() {
    let plots = p1_plots();
    let (name, svg) = &plots[0];
    assert_eq!(*name, "p1-roc.svg");
    golden(name, svg);
    // high = 0.8: rows 0.85 ×3 (all correct) and 0.9 ×2 (one correct): 4 of the 7 correct rows (TPR 4/7), 1 of
    // the 5 wrong ones (FPR 0.2). In pixels: x 64 + 0.2·320 = 128, y 40 + (1 − 4/7)·320 = 177.14.
    assert!(
        svg.contains(r##"<circle cx="128.00" cy="177.14" r="5" fill="#ff7f0e""##),
        "{svg}"
    );
    assert!(svg.contains("the pre-registered cut, confidence &gt;= 0.8: 5 rows, TPR 0.571, FPR 0.200"));
    assert!(svg.contains("pointwise Wilson 95% interval of the TPR at each cut (not a simultaneous band)"));
    // The band at the origin (0 of 7 correct rows) reaches z²/(7 + z²) = 0.3543: y 40 + (1 − 0.3543)·320.
    let hi = Z95 * Z95 / (7.0 + Z95 * Z95);
    assert_eq!(format!("{:.2}", 40.0 + (1.0 - hi) * 320.0), "246.61");
    assert!(svg.contains(r##"<polygon fill="#1f77b4" fill-opacity="0.18" stroke="none" points="64.00,246.61 "##));
}

#[test]
fn p2_bucket_shares_have_wilson_bars_and_the_threshold() {
    let counts = Buckets {
        total: 24,
        ci: 12,
        human_review: 5,
        self_reflection: 3,
        ambiguous: 4,
        classified: 20,
        floor_flagged: 2,
    };
    let w = |k, n| wilson(k, n, Z95).unwrap();
    let shares = Shares {
        ci: w(12, 20),
        human_review: w(5, 20),
        self_reflection: w(3, 20),
        ambiguous: w(4, 24),
    };
    let svg = p2::buckets_svg_of(&counts, &shares, 0.10, 0.05);
    golden("p2-buckets.svg", &svg);
    // 3 of 20: 15.0%, Wilson [5.2%, 36.0%]; the panel maps [0, 1] to x 190..490, the third row's middle is at
    // y 44 + 2.5·34.
    let s = shares.self_reflection.unwrap();
    assert_eq!(format!("{:.1} {:.1}", s.lo * 100.0, s.hi * 100.0), "5.2 36.0");
    assert!(svg.contains(">15.0% [5.2%, 36.0%] (3/20)</text>"), "{svg}");
    let (lo, hi) = (190.0 + s.lo * 300.0, 190.0 + s.hi * 300.0);
    assert!(svg.contains(&format!(
        r##"<line x1="{lo:.2}" y1="129.00" x2="{hi:.2}" y2="129.00" stroke="#222""##
    )));
    // The threshold at 10% (x 220) across the only-self-reflection row (y 112..146).
    assert!(svg.contains(r##"<line x1="220.00" y1="114.00" x2="220.00" y2="144.00" stroke="#d62728""##));
    assert!(svg.contains(">ambiguous (of all)</text>") && svg.contains(">16.7% [6.7%, 35.9%] (4/24)</text>"));
}

#[test]
fn p2_forest_has_a_whisker_per_repository_a_diamond_for_the_pool_and_the_threshold_across() {
    use pipeline::experiments::p2_pool::{RepositoryCounts, pool};
    let spec = pipeline::prereg::Prereg::p2(None).unwrap().spec;
    let repo = |name: &str, self_reflection: u64, classified: u64| RepositoryCounts {
        name: name.into(),
        path: format!("/src/{name}"),
        status: "ok".into(),
        error_code: None,
        commits_walked: 1000,
        counts: Buckets {
            total: classified + 3,
            ci: classified - self_reflection,
            human_review: 0,
            self_reflection,
            ambiguous: 3,
            classified,
            floor_flagged: 0,
        },
    };
    // The five-repository case of scripts/reference/pooled_share.py, and one without classified failures.
    let analysis = pool(
        vec![
            repo("acme/api", 12, 200),
            repo("acme/web", 40, 90),
            repo("cli", 3, 60),
            repo("git", 150, 300),
            repo("tools", 30, 45),
            repo("empty", 0, 0),
        ],
        &spec,
    );
    let svg = pipeline::report::p2_pool::forest_svg(&analysis);
    golden("p2-forest.svg", &svg);
    // Six repositories, then the pooled row (y 44 + 6.5·28 = 226): a diamond from 7.5% to 76.4% (x 242.36..449.26)
    // with its point at 33.8% (x 321.44).
    assert!(svg.contains(">33.8% [7.5%, 76.4%] (235/695)</text>"), "{svg}");
    assert!(
        svg.contains(r#"<polygon points="242.36,226.00 321.44,218.00 449.26,226.00 321.44,234.00""#),
        "{svg}"
    );
    // The repository without classified failures is drawn as undefined; the threshold (5%: x 235) spans every row.
    assert!(svg.contains(">undefined (0/0)</text>"));
    assert!(
        svg.contains(r##"<line x1="235.00" y1="44.00" x2="235.00" y2="240.00" stroke="#d62728""##),
        "{svg}"
    );
}

fn task(id: &str, censored: bool) -> TaskRow {
    TaskRow {
        input: 0,
        id: id.to_string(),
        completed: "2025-11-01T12:00:00Z".to_string(),
        censored,
        signals: Vec::new(),
    }
}

fn signal(task: &str, at: &str, excluded_by: Option<&'static str>) -> SignalRow {
    SignalRow {
        input: 0,
        task: task.to_string(),
        signal: "wrong.reopened",
        at: at.to_string(),
        commit: String::new(),
        excluded_by,
        completed: "2025-11-01T12:00:00Z".to_string(),
        detail: String::new(),
    }
}

/// Eight eligible tasks, first signals on days 0, 2, 10 and 29 (day 29.5); two censored tasks.
fn p3_input() -> (Vec<TaskRow>, Vec<SignalRow>, Counts) {
    let mut tasks: Vec<TaskRow> = (1..=8).map(|i| task(&format!("T-{i}"), false)).collect();
    tasks.push(task("T-9", true));
    tasks.push(task("T-10", true));
    let evidence = vec![
        signal("T-1", "2025-11-01T12:00:00Z", None),
        signal("T-2", "2025-11-03T13:00:00Z", None),
        // A second, later signal of T-2 does not move the curve.
        signal("T-2", "2025-11-05T13:00:00Z", None),
        // T-3's first signal is excluded by a rule; its counted one is on day 10.
        signal("T-3", "2025-11-02T12:00:00Z", Some("implementing-commit")),
        signal("T-3", "2025-11-11T12:00:01Z", None),
        signal("T-4", "2025-12-01T00:00:00Z", None),
        // Excluded only: T-5 has no signal.
        signal("T-5", "2025-11-04T00:00:00Z", Some("passing-mention")),
        // A censored task's signal is not counted.
        signal("T-9", "2025-11-02T00:00:00Z", None),
    ];
    let counts = Counts {
        tasks: 12,
        censored: 2,
        eligible: 8,
        with_signal: 4,
        removed_before_window: 1,
        ..Counts::default()
    };
    (tasks, evidence, counts)
}

#[test]
fn p3_detection_steps_by_day_and_notes_the_censored() {
    let (tasks, evidence, counts) = p3_input();
    let by_day = plots::detection_by_day(&tasks, &evidence, 30, Z95);
    let detected: Vec<f64> = by_day.iter().map(|i| i.estimate * 8.0).collect();
    let mut expected = vec![0.0; 31];
    for (day, value) in expected.iter_mut().enumerate() {
        *value = match day {
            0..=1 => 1.0,
            2..=9 => 2.0,
            10..=28 => 3.0,
            _ => 4.0,
        };
    }
    assert_eq!(detected, expected);
    // The last day is the base rate: 4 of 8.
    assert_eq!(by_day[30], wilson(4, 8, Z95).unwrap().unwrap());

    let svg = plots::detection_svg_of(&tasks, &evidence, &counts, 30, 0.2, 0.05);
    golden("p3-detection.svg", &svg);
    assert!(svg.contains("Censored: 2 tasks still inside their window, left out (not all their days are observed)."));
    assert!(svg.contains("Also left out: 1 task removed from the task file before their window elapsed."));
    assert!(svg.contains(">day 30: 50.0%</text>"));
    // y runs 0..100% (the band's top, 4/8's Wilson upper bound 0.785, padded and rounded up to a tick) over
    // 300..40; x 0..30 over 64..464. Days 0 and 1 at 1/8 (y 267.5), from day 2 at 2/8 (y 235).
    assert!(
        svg.contains(r#"points="64.00,267.50 90.67,267.50 90.67,235.00 "#),
        "{svg}"
    );
}

/// A headline number: key, kind, value, interval, threshold.
type Headline<'a> = (&'a str, MetricKind, Option<f64>, Option<[f64; 2]>, Option<f64>);

fn experiment(experiment: Experiment, verdict: Option<&str>, headline: Vec<Headline<'_>>) -> ExperimentWeek {
    let number = |v: f64| serde_json::Number::from_f64(v).unwrap();
    ExperimentWeek {
        experiment,
        title: experiment.title().to_string(),
        status: if verdict.is_some() {
            RunStatus::Ok
        } else {
            RunStatus::Missing
        },
        reason: None,
        verdict: verdict.map(str::to_string),
        report_status: verdict.map(|_| "ok".to_string()),
        report: None,
        headline: headline
            .into_iter()
            .map(|(key, kind, value, interval, threshold)| Metric {
                key: key.to_string(),
                label: key.to_string(),
                kind,
                value: value.map(number),
                interval: interval.map(|[lo, hi]| [number(lo), number(hi)]),
                threshold: threshold.map(number),
            })
            .collect(),
        still_needed: None,
    }
}

fn week(name: &str, auc: f64, share: Option<(f64, f64, f64)>, p3: (&str, f64, f64, f64)) -> WeekSummary {
    WeekSummary {
        schema: WEEK_SCHEMA.to_string(),
        week: name.to_string(),
        as_of: None,
        config: ConfigRef {
            path: "weekly.toml".to_string(),
            sha256: "0".repeat(64),
        },
        status: WeekStatus::Ok,
        experiments: vec![
            experiment(
                Experiment::P1,
                Some("INCONCLUSIVE"),
                vec![
                    ("n", MetricKind::Count, Some(400.0), None, None),
                    (
                        "auc",
                        MetricKind::Score,
                        Some(auc),
                        Some([auc - 0.06, auc + 0.06]),
                        None,
                    ),
                    ("lift_pp", MetricKind::Points, Some(4.0), Some([-2.0, 9.7]), None),
                ],
            ),
            match share {
                Some((value, lo, hi)) => experiment(
                    Experiment::P2,
                    Some("KILL"),
                    vec![
                        ("classified", MetricKind::Count, Some(40.0), None, None),
                        (
                            "self_reflection_share",
                            MetricKind::Share,
                            Some(value),
                            Some([lo, hi]),
                            Some(0.1),
                        ),
                    ],
                ),
                None => experiment(Experiment::P2, None, Vec::new()),
            },
            experiment(
                Experiment::P3,
                Some(p3.0),
                vec![
                    ("eligible", MetricKind::Count, Some(7.0), None, None),
                    (
                        "base_rate",
                        MetricKind::Share,
                        Some(p3.1),
                        Some([p3.2, p3.3]),
                        Some(0.2),
                    ),
                ],
            ),
        ],
    }
}

#[test]
fn weekly_trend_plots_each_number_with_its_interval_by_week() {
    let index = weekly::index(vec![
        week("2026-W46", 0.62, Some((0.05, 0.02, 0.12)), ("PASS", 0.43, 0.28, 0.6)),
        week("2026-W45", 0.60, None, ("INCONCLUSIVE", 0.43, 0.16, 0.75)),
        week("2026-W47", 0.64, Some((0.04, 0.02, 0.09)), ("PASS", 0.45, 0.33, 0.58)),
    ]);
    let svg = weekly::trend_svg(&index);
    golden("index-trend.svg", &svg);
    // Four panels (AUC, lift, P2 share, P3 share): counts are not plotted.
    for title in [
        ">P1 calibration — AUC</text>",
        ">P1 calibration — high-subset lift (percentage points)</text>",
        ">P2 gate buckets — only-self-reflection share</text>",
        ">P3 detectability — detectable share</text>",
    ] {
        assert!(svg.contains(title), "{title} missing in\n{svg}");
    }
    assert!(!svg.contains("rows</text>"));
    // P2 did not run in W45: no point, a note; KILL weeks are red, PASS green, INCONCLUSIVE grey.
    assert_eq!(svg.matches(">not run</text>").count(), 1);
    assert!(svg.contains("<title>2026-W47 KILL: 4.0% [2.0%, 9.0%]</title>"));
    assert_eq!(svg.matches(r##"r="4" fill="#d62728""##).count(), 2 + 1);
    assert_eq!(svg.matches(r##"r="4" fill="#2ca02c""##).count(), 2 + 1);
    assert!(svg.contains(">kill threshold 20.0%</text>"));
    // Weeks oldest first along x: W45 at 72 + 420/6.
    assert!(svg.contains(r##"<text x="142.00" y=""##) && svg.contains(">2026-W45</text>"));
}

#[test]
fn plots_are_byte_identical_for_the_same_input() {
    assert_eq!(p1_plots(), p1_plots());
    let (tasks, evidence, counts) = p3_input();
    assert_eq!(
        plots::detection_svg_of(&tasks, &evidence, &counts, 30, 0.2, 0.05),
        plots::detection_svg_of(&tasks, &evidence, &counts, 30, 0.2, 0.05)
    );
}
