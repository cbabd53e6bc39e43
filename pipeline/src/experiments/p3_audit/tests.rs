use super::*;
use crate::prereg::VerdictKind;

fn spec(replicates: u32) -> AuditSpec {
    AuditSpec {
        per_stratum: 20,
        seed: 7,
        replicates,
    }
}

const HEADER: &str = "input,task,stratum,stratum_size,completed,signals,set_aside_by,genuine,note\n";

#[test]
fn a_filled_sheet_reads_back_and_bad_rows_name_their_line() {
    let sheet = format!(
        "{HEADER}.beads,bd-1,counted,3,2026-01-01T00:00:00Z,s,,yes,\n.beads,bd-2,set-aside,9,,s,bulk-commit,no,x\n\
         .beads,bd-3,set-aside,9,,s,,unclear,\n.beads,bd-4,counted,3,,s,,,\n"
    );
    let rows = read_sheet("a.csv", sheet.as_bytes()).unwrap();
    let judged: Vec<(&str, Stratum, Judgement, u64)> = rows
        .iter()
        .map(|r| (r.task.as_str(), r.stratum, r.judgement, r.line))
        .collect();
    assert_eq!(
        judged,
        [
            ("bd-1", Stratum::Counted, Judgement::Genuine(true), 2),
            ("bd-2", Stratum::SetAside, Judgement::Genuine(false), 3),
            ("bd-3", Stratum::SetAside, Judgement::Unclear, 4),
            ("bd-4", Stratum::Counted, Judgement::Unaudited, 5),
        ]
    );
    let error = |text: &str| read_sheet("a.csv", text.as_bytes()).unwrap_err().to_string();
    assert_eq!(
        error(&format!("{HEADER}.beads,bd-1,counted,3,,s,,maybe,\n")),
        "a.csv:2: genuine \"maybe\" is not yes, no, unclear or empty"
    );
    assert_eq!(
        error(&format!("{HEADER}.beads,bd-1,reopened,3,,s,,yes,\n")),
        "a.csv:2: stratum \"reopened\" is not counted or set-aside"
    );
    assert_eq!(
        error(&format!(
            "{HEADER}.beads,bd-1,counted,3,,s,,yes,\n.beads,bd-1,counted,3,,s,,no,\n"
        )),
        "a.csv:3: the same input and task as line 2"
    );
    assert_eq!(
        error("input,task,stratum\n"),
        "a.csv:1: the column \"genuine\" is missing"
    );
    assert_eq!(
        error(&format!("{HEADER}.beads,bd-1,counted\n")),
        "a.csv:2: not a CSV row: CSV error: record 1 (line: 2, byte: 76): found record with 3 fields, but the previous \
         record has 9 fields"
    );
    // Rows are read in order: a bad value is named before a malformed row below it (the shared sheet reader).
    assert_eq!(
        error(&format!(
            "{HEADER}.beads,bd-1,counted,3,,s,,maybe,\n.beads,bd-2,counted\n"
        )),
        "a.csv:2: genuine \"maybe\" is not yes, no, unclear or empty"
    );
}

#[test]
fn the_corrected_rate_weighs_each_stratum_by_its_reading() {
    // 200 eligible, 20 counted (10 of 20 read genuine), 50 set aside (2 of 10 genuine): (20·0.5 + 50·0.2) / 200.
    let rate = corrected_rate(200, [(20, 10, 20), (50, 2, 10)], &spec(4000), 0.05)
        .rate
        .unwrap();
    assert!((rate.estimate - 0.1).abs() < 1e-12, "{rate:?}");
    assert!(
        rate.lo < 0.1 && rate.hi > 0.1 && rate.lo > 0.03 && rate.hi < 0.2,
        "{rate:?}"
    );
    // Unaudited strata keep the rules' decision: the raw rate, 20 of 200.
    let raw = corrected_rate(200, [(20, 0, 0), (50, 0, 0)], &spec(200), 0.05)
        .rate
        .unwrap();
    assert!((raw.estimate - 0.1).abs() < 1e-12);
    // A reading that finds none genuine still leaves room for some: the interval does not collapse to the point.
    let none = corrected_rate(200, [(0, 0, 0), (50, 0, 8)], &spec(4000), 0.05)
        .rate
        .unwrap();
    assert_eq!(none.estimate, 0.0);
    assert!(none.hi > 0.01, "{none:?}");
    // The same seed gives the same interval; no eligible task gives none.
    assert_eq!(
        corrected_rate(200, [(20, 10, 20), (50, 2, 10)], &spec(500), 0.05),
        corrected_rate(200, [(20, 10, 20), (50, 2, 10)], &spec(500), 0.05)
    );
    assert_eq!(corrected_rate(0, [(0, 0, 0), (0, 0, 0)], &spec(10), 0.05).rate, None);
}

#[test]
fn the_verdict_is_decided_on_the_corrected_interval() {
    let raw = Verdict {
        kind: VerdictKind::Inconclusive,
        reasons: vec!["raw".into()],
        n_required: 50,
        n_still_needed: 0,
    };
    let audit = |raw: &Verdict, audited: u64| P3Audit {
        sheet: "a.csv".into(),
        rows: audited,
        unmatched: 0,
        unmatched_examples: Vec::new(),
        strata: vec![StratumAudit {
            stratum: Stratum::Counted,
            population: 10,
            rows: audited,
            audited,
            genuine: 0,
            unclear: 0,
            precision: None,
        }],
        unaudited_strata: Vec::new(),
        corrected: CorrectedRate {
            method: CORRECTED_METHOD,
            rate: Some(Interval {
                estimate: 0.05,
                lo: 0.02,
                hi: 0.12,
            }),
            draws: 1,
            seed: 1,
        },
        raw_verdict: raw.clone(),
    };
    let kill = decide_on_corrected(&audit(&raw, 3), 0.2);
    assert_eq!(kill.kind, VerdictKind::Kill);
    assert_eq!(
        kill.reasons,
        [
            "decided on the audit-corrected interval: audit-corrected detectable-outcome base rate 5.0% [2.0%, 12.0%] \
          lies below 20.0%"
        ]
    );
    // PASS and INCONCLUSIVE are the shared rule's (`experiments::decide_on_corrected`), tested with P2's audit.
    let small = Verdict {
        n_still_needed: 40,
        ..raw.clone()
    };
    assert_eq!(decide_on_corrected(&audit(&small, 3), 0.2), small);
    // A sheet with no row read decides nothing, whatever its interval says.
    let unread = decide_on_corrected(&audit(&raw, 0), 0.2);
    assert_eq!(unread.kind, VerdictKind::Inconclusive);
    assert_eq!(
        unread.reasons,
        [
            "raw",
            "the audit sheet has no row read (genuine yes or no), so it decides nothing"
        ]
    );
}

/// Reading every counted task and finding all genuine (a census) gives the raw rate's own interval, not a lower one;
/// finding all of a sample genuine keeps the point and leaves room below it for the tasks not read.
#[test]
fn confirming_the_counted_signals_does_not_lower_the_rate() {
    let jeffreys = corrected_rate(60, [(6, 0, 0), (0, 0, 0)], &spec(4000), 0.05)
        .rate
        .unwrap();
    let census = corrected_rate(60, [(6, 6, 6), (0, 0, 0)], &spec(4000), 0.05)
        .rate
        .unwrap();
    assert_eq!(census, jeffreys);
    assert!((census.estimate - 0.1).abs() < 1e-12);
    let sampled = corrected_rate(100, [(25, 20, 20), (0, 0, 0)], &spec(4000), 0.05)
        .rate
        .unwrap();
    assert!((sampled.estimate - 0.25).abs() < 1e-12);
    let unread = corrected_rate(100, [(25, 0, 0), (0, 0, 0)], &spec(4000), 0.05)
        .rate
        .unwrap();
    // The first form of the draws (a share drawn for the whole stratum) put 20 of 20 at [16.7%, 33.0%] against the
    // rules' [17.5%, 34.3%]; drawing only the 5 not read keeps it within a fraction of a point.
    assert!(
        (sampled.lo - unread.lo).abs() < 0.005 && (sampled.hi - unread.hi).abs() < 0.005,
        "{sampled:?} {unread:?}"
    );
}

/// The interval's coverage against a simulation with known truth: each run draws `n` tasks into counted / set aside
/// / neither, a reader's sample of each stratum (genuine with a known probability), and asks whether the corrected
/// interval covers the true rate `π_c·p_c + π_s·p_s`. Three set-ups, one with genuine set-aside tasks rare (most
/// readings find none).
#[test]
fn corrected_rate_interval_coverage() {
    use rand_distr::Binomial;
    let setups: [(u64, f64, f64, f64, f64, u64); 3] = [
        // n, π_c, π_s, p_c, p_s, read per stratum
        (400, 0.10, 0.15, 0.6, 0.10, 20),
        (1500, 0.01, 0.30, 0.7, 0.02, 8),
        (300, 0.25, 0.05, 0.4, 0.30, 10),
    ];
    let sims = 300;
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_128);
    for (n, pi_c, pi_s, p_c, p_s, read) in setups {
        let truth = pi_c * p_c + pi_s * p_s;
        let mut covered = 0;
        for sim in 0..sims {
            let k = Binomial::new(n, pi_c).unwrap().sample(&mut rng);
            let m = Binomial::new(n - k, pi_s / (1.0 - pi_c)).unwrap().sample(&mut rng);
            let reading = |size: u64, p: f64, rng: &mut ChaCha8Rng| {
                let a = size.min(read);
                (Binomial::new(a, p).unwrap().sample(rng), a)
            };
            let (t_c, a_c) = reading(k, p_c, &mut rng);
            let (t_s, a_s) = reading(m, p_s, &mut rng);
            let draws = AuditSpec {
                per_stratum: 0,
                seed: sim,
                replicates: 400,
            };
            let rate = corrected_rate(n, [(k, t_c, a_c), (m, t_s, a_s)], &draws, 0.05)
                .rate
                .unwrap();
            covered += u32::from(rate.lo <= truth && truth <= rate.hi);
        }
        let coverage = f64::from(covered) / f64::from(sims as u32);
        assert!((0.91..=0.995).contains(&coverage), "n {n}: coverage {coverage}");
    }
}
