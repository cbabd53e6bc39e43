use super::*;
use crate::prereg::VerdictKind;

const HAND_MADE: &str = include_str!("../../../tests/data/p2-audit/hand-made.csv");

fn hand_made() -> AuditSummary {
    let rows = read_sheet("hand-made.csv", HAND_MADE.as_bytes()).unwrap();
    let population = population_of_sheets(&rows).unwrap();
    evaluate(
        vec!["hand-made.csv".into()],
        &rows,
        &population,
        MatchNotes::default(),
        &AuditSpec::default(),
        0.05,
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn the_hand_made_sheet_matches_the_reference_script() {
    // Values from pipeline/tests/data/p2-audit/kappa_reference.py (scikit-learn's cohen_kappa_score).
    let audit = hand_made();
    assert_eq!((audit.rows, audit.audited, audit.unaudited), (14, 13, 1));
    assert!(close(audit.agreement.observed.unwrap(), 5.0 / 11.0));
    assert!(close(audit.agreement.kappa.unwrap(), 0.2142857142857143));
    assert_eq!((audit.link_ok, audit.link_judged), (7, 10));
    let repos: Vec<(&str, u64, u64, u64, u64, f64, f64)> = audit
        .by_repo
        .iter()
        .map(|r| {
            (
                r.repo.as_str(),
                r.audited,
                r.failures,
                r.link_ok,
                r.link_judged,
                r.agreement.observed.unwrap(),
                r.agreement.kappa.unwrap(),
            )
        })
        .collect();
    assert_eq!(
        (repos[0].0, repos[0].1, repos[0].2, repos[0].3, repos[0].4),
        ("a/a", 8, 7, 5, 6)
    );
    assert!(close(repos[0].5, 0.5714285714285714) && close(repos[0].6, 0.38235294117647056));
    assert_eq!(
        (repos[1].0, repos[1].1, repos[1].2, repos[1].3, repos[1].4),
        ("b/b", 5, 4, 2, 4)
    );
    assert!(close(repos[1].5, 0.25) && close(repos[1].6, 0.0));
    // Σ N·sr/a ÷ Σ N·classified/a = 39.1667 / 76.6667 = 47/92.
    let share = audit.corrected.share.unwrap();
    assert!(close(share.estimate, 0.5108695652173914));
    assert_eq!(format!("{:.4} {:.4}", share.lo, share.hi), "0.1852 0.8626");
    assert_eq!(audit.corrected.undefined_replicates, 0);
}

#[test]
fn the_hand_made_confusion_matrix_and_precisions() {
    let audit = hand_made();
    // Rows: tool ci, human-review, self-reflection, ambiguous; columns: reader's four buckets, not a failure.
    assert_eq!(
        audit.confusion.counts,
        vec![
            vec![1, 0, 1, 0, 1],
            vec![0, 1, 0, 1, 0],
            vec![1, 1, 3, 0, 0],
            vec![1, 0, 1, 0, 1]
        ]
    );
    let ci = &audit.by_tool_bucket[0];
    assert_eq!((ci.audited, ci.failures, ci.agreeing), (3, 2, 1));
    let sr = &audit.by_tool_bucket[2];
    assert_eq!((sr.audited, sr.failures, sr.agreeing), (5, 5, 3));
    let precision = sr.bucket_precision.unwrap();
    // Wilson 3/5 at 95%: [0.2307, 0.8824].
    assert_eq!(
        format!("{:.4} {:.4} {:.4}", precision.estimate, precision.lo, precision.hi),
        "0.6000 0.2307 0.8824"
    );
    assert_eq!(audit.population_unaudited, 0);
    assert_eq!(
        audit
            .strata
            .iter()
            .map(|s| (s.stratum.as_str(), s.population, s.audited))
            .collect::<Vec<_>>(),
        vec![
            ("ci/fix-after-change", 40, 3),
            ("human-review/revert", 10, 2),
            ("self-reflection/fix-after-change", 20, 3),
            ("self-reflection/fixes-trailer", 5, 2),
            ("ambiguous/fix-after-change", 30, 3),
        ]
    );
}

#[test]
fn the_validation_table_of_the_hand_made_sheet() {
    assert_eq!(
        validation_table(&hand_made()),
        // The bucketed columns as kappa_reference.py (scikit-learn) gives them: b/b's two ambiguous failures leave.
        "| repository | audited | failures | failure precision | link precision (ok/judged) | bucket agreement | kappa \
         | bucketed (of failures) | link precision, bucketed | agreement, bucketed | kappa, bucketed |\n\
         |---|---:|---:|---|---|---:|---:|---:|---|---:|---:|\n\
         | a/a | 8 | 7 | 0.88 [0.53, 0.98] | 0.83 [0.44, 0.97] (5/6) | 0.571 | 0.382 | 7 of 7 | 0.83 [0.44, 0.97] (5/6) \
         | 0.571 | 0.382 |\n\
         | b/b | 5 | 4 | 0.80 [0.38, 0.96] | 0.50 [0.15, 0.85] (2/4) | 0.250 | 0.000 | 2 of 4 | 0.50 [0.09, 0.91] (1/2) \
         | 0.500 | 0.000 |\n\
         | all | 13 | 11 | 0.85 [0.58, 0.96] | 0.70 [0.40, 0.89] (7/10) | 0.455 | 0.214 | 9 of 11 | 0.75 [0.41, 0.93] \
         (6/8) | 0.556 | 0.321 |\n"
    );
}

fn with_line(line: usize, from: &str, to: &str) -> String {
    HAND_MADE
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == line {
                l.replacen(from, to, 1)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn bad_sheets_name_the_file_and_line() {
    let error = |text: String| read_sheet("s.csv", text.as_bytes()).unwrap_err().to_string();
    assert_eq!(
        error(with_line(2, ",yes,yes,ci,", ",yes,yes,CI-ish,")),
        "s.csv:2: bucket \"CI-ish\" is not ci, human-review, self-reflection or ambiguous (required when is_failure \
         is yes)"
    );
    assert_eq!(
        error(with_line(3, ",yes,no,", ",maybe,no,")),
        "s.csv:3: is_failure \"maybe\" is not yes, no or empty"
    );
    assert_eq!(
        error(with_line(4, ",no,,,", ",no,yes,,")),
        "s.csv:4: failing_ok is filled but is_failure is no"
    );
    assert_eq!(
        error(with_line(
            5,
            "ci/fix-after-change,40,,,,",
            "ci/fix-after-change,40,,,ci,"
        )),
        "s.csv:5: failing_ok or bucket is filled but is_failure is empty"
    );
    assert_eq!(
        error(with_line(2, "ci/fix-after-change", "ci/revert")),
        "s.csv:2: stratum \"ci/revert\" does not match tool_bucket and detection (ci/fix-after-change)"
    );
    assert_eq!(
        error(with_line(1, ",note", ",notes")),
        "s.csv:1: the column \"note\" is missing"
    );
    let repeated = format!("{HAND_MADE}{}\n", HAND_MADE.lines().nth(2).unwrap());
    assert_eq!(
        error(repeated),
        "s.csv:16: the same remedy and failing change as line 3"
    );
    let rows = read_sheet("s.csv", with_line(3, ",40,", ",41,").as_bytes()).unwrap();
    assert_eq!(
        population_of_sheets(&rows).unwrap_err().to_string(),
        "s.csv:3: stratum_size 41 of a/a ci/fix-after-change differs from 40 at s.csv:2"
    );
}

#[test]
fn the_verdict_follows_the_corrected_interval() {
    let raw = ShareVerdict {
        kind: VerdictKind::Pass,
        reasons: vec!["raw".into()],
        n_required: 50,
        n_still_needed: 0,
    };
    let corrected = |estimate, lo, hi| CorrectedShare {
        method: CORRECTED_METHOD,
        share: Some(Interval { estimate, lo, hi }),
        replicates: 10,
        seed: 1,
        undefined_replicates: 0,
    };
    let kill = decide_on_corrected(&raw, &corrected(0.02, 0.01, 0.04), 0.05);
    assert_eq!(kill.kind, VerdictKind::Kill);
    assert_eq!(
        kill.reasons,
        vec![
            "decided on the audit-corrected interval: audit-corrected only-self-reflection share 2.0% [1.0%, 4.0%] \
             lies below 5.0%"
        ]
    );
    assert_eq!(
        decide_on_corrected(&raw, &corrected(0.2, 0.06, 0.3), 0.05).kind,
        VerdictKind::Pass
    );
    assert_eq!(
        decide_on_corrected(&raw, &corrected(0.06, 0.03, 0.1), 0.05).kind,
        VerdictKind::Inconclusive
    );
    let few = ShareVerdict {
        kind: VerdictKind::Inconclusive,
        n_still_needed: 7,
        ..raw.clone()
    };
    assert_eq!(decide_on_corrected(&few, &corrected(0.2, 0.06, 0.3), 0.05), few);
}

/// Coverage of the corrected share's interval against a simulated truth: six strata (tool bucket × family) with
/// known stratum probabilities and known reader-label probabilities; each simulation draws a run of 400 failures
/// and an audit of up to 10 rows per stratum, then checks whether the 95% interval holds the true share.
#[test]
fn corrected_share_interval_coverage() {
    use rand::RngExt;
    use rand_distr::{Binomial, Distribution};
    // (stratum probability, P(reader: self-reflection), P(reader: other classified)); the rest is not a failure
    // or ambiguous.
    let truth = [
        (0.35, 0.10, 0.70),
        (0.10, 0.05, 0.60),
        (0.15, 0.20, 0.60),
        (0.20, 0.55, 0.30),
        (0.05, 0.60, 0.25),
        (0.15, 0.30, 0.30),
    ];
    let sr: f64 = truth.iter().map(|t| t.0 * t.1).sum();
    let classified: f64 = truth.iter().map(|t| t.0 * (t.1 + t.2)).sum();
    let true_share = sr / classified;
    let (simulations, run, per_stratum) = (400, 400u64, 10u64);
    let spec = AuditSpec {
        per_stratum: per_stratum as usize,
        seed: 7,
        replicates: 400,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_124);
    let mut covered = 0;
    for _ in 0..simulations {
        let mut left = run;
        let mut left_p = 1.0;
        let mut tallies = Vec::new();
        for (i, &(p, p_sr, p_other)) in truth.iter().enumerate() {
            let size = if i + 1 == truth.len() {
                left
            } else {
                Binomial::new(left, (p / left_p).min(1.0)).unwrap().sample(&mut rng)
            };
            left -= size;
            left_p -= p;
            let audited = size.min(per_stratum);
            let (mut s, mut c) = (0, 0);
            for _ in 0..audited {
                let u: f64 = rng.random();
                s += u64::from(u < p_sr);
                c += u64::from(u < p_sr + p_other);
            }
            tallies.push((size, audited, s, c));
        }
        let interval = corrected_share(&tallies, &spec, 0.05).share;
        covered += u32::from(interval.is_some_and(|i| i.lo <= true_share && true_share <= i.hi));
    }
    let coverage = f64::from(covered) / f64::from(simulations);
    // Nominal 95%; the figure is in docs/p2.md ("Auditing P2").
    // 372 of 400 = 93.0% (the binomial standard error of a coverage of 95% over 400 simulations is 1.1 points).
    assert_eq!(covered, 372, "coverage {coverage}");
}

use crate::experiments::p2::{ClassRule, LinkRule};

fn failure(i: u32, bucket: Bucket, rule: ClassRule, kind: FailureKind, link: LinkRule) -> Failure {
    Failure {
        remedy: format!("{i:040x}"),
        remedy_short: format!("{i:012x}"),
        failing: Some(format!("{:040x}", i + 1000)),
        failing_short: None,
        failing_ref: None,
        kind,
        link_rule: link,
        evidence: crate::experiments::p2::Evidence::Lines,
        evidence_lines: Some(1),
        bucket,
        rule,
        time_to_remedy_seconds: None,
        failing_surface: None,
        floor_flagged: None,
        subject: String::new(),
    }
}

#[test]
fn sheet_rows_meet_the_run_exactly_relinked_or_not_at_all() {
    let ci = |i| {
        failure(
            i,
            Bucket::Ci,
            ClassRule::CiMessage,
            FailureKind::FixAfterChange,
            LinkRule::FixLines,
        )
    };
    let mut two = ci(3);
    two.failing = Some(format!("{:040x}", 7777));
    let failures = vec![ci(1), ci(2), ci(3), two];
    let row = |remedy: u32, failing: u32, tool: Bucket| ReadRow {
        file: "s.csv".into(),
        line: remedy as u64 + 1,
        stratum: Stratum {
            repo: "o/r".into(),
            tool,
            family: FailureKind::FixAfterChange,
        },
        stratum_size: 1,
        remedy: format!("{remedy:040x}"),
        failing: format!("{failing:040x}"),
        judgement: Judgement::Failure {
            failing_ok: Some(true),
            bucket: Bucket::SelfReflection,
        },
    };
    let rows = vec![
        row(1, 1001, Bucket::SelfReflection), // exact, but the tool's bucket changed since
        row(2, 5, Bucket::Ci),                // the run links remedy 2 to another change
        row(3, 5, Bucket::Ci),                // remedy 3 has two failures now: which one is unknown
        row(9, 1009, Bucket::Ci),             // not a failure of this run
    ];
    let matched = match_run(rows, "o/r", &failures);
    assert_eq!(
        matched.notes,
        MatchNotes {
            unmatched: vec![
                "s.csv:4: 000000000000 -> 000000000000".into(),
                "s.csv:10: 000000000000 -> 000000000000".into(),
            ],
            relinked: 1,
            restratified: 1,
        }
    );
    let kept: Vec<(String, Option<bool>, Bucket)> = matched
        .rows
        .iter()
        .map(|r| match r.judgement {
            Judgement::Failure { failing_ok, .. } => (r.failing[36..].to_string(), failing_ok, r.stratum.tool),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        kept,
        vec![
            ("03e9".into(), Some(true), Bucket::Ci),
            ("03ea".into(), None, Bucket::Ci)
        ]
    );
    assert_eq!(matched.population.values().sum::<u64>(), 4);
}

#[test]
fn samples_are_stratified_seeded_and_capped() {
    let mut failures: Vec<Failure> = (0..7)
        .map(|i| {
            failure(
                i,
                Bucket::Ci,
                ClassRule::CiMessage,
                FailureKind::FixAfterChange,
                LinkRule::FixLines,
            )
        })
        .collect();
    failures.push(failure(
        99,
        Bucket::SelfReflection,
        ClassRule::SelfOtherFiles,
        FailureKind::Revert,
        LinkRule::RevertSha,
    ));
    let spec = AuditSpec {
        per_stratum: 3,
        ..AuditSpec::default()
    };
    // The order is that of sha256("20261124\0<remedy>\0<failing>") (checked with Python's hashlib).
    let picked: Vec<(String, String, u64)> = sample(&failures, "o/r", &spec)
        .into_iter()
        .map(|(f, s, n)| (f.remedy[36..].to_string(), s.id(), n))
        .collect();
    assert_eq!(
        picked,
        vec![
            ("0006".into(), "ci/fix-after-change".into(), 7),
            ("0000".into(), "ci/fix-after-change".into(), 7),
            ("0005".into(), "ci/fix-after-change".into(), 7),
            ("0063".into(), "self-reflection/revert".into(), 1),
        ]
    );
}
