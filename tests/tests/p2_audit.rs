//! `phase0 p2 audit` and `phase0 p2 --audit SHEET` end to end, on the fixture history of `tests/fixtures/p2-history.sh`.

use std::path::{Path, PathBuf};
use std::process::Output;

use e2e::{Sandbox, stdout_of_success as ok};

fn fixture(sandbox: &Sandbox) -> PathBuf {
    let repo = sandbox.path().join("history");
    sandbox.script("fixtures/p2-history.sh", &[&repo]);
    repo
}

fn phase0(args: &[&str]) -> Output {
    e2e::phase0()
        .args(args)
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .expect("phase0 runs")
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

const HEADER: &str = "repo,remedy,failing,detection,evidence,class_rule,tool_bucket,remedy_subject,failing_subject,\
                      remedy_diffstat,failing_diffstat,stratum,stratum_size,is_failure,failing_ok,bucket,note";

/// Fills every row as the tool has it: a failure, the right failing change, the tool's bucket.
fn agree_everywhere(sheet: &str) -> String {
    let mut reader = csv::Reader::from_reader(sheet.as_bytes());
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(reader.headers().unwrap()).unwrap();
    for record in reader.records() {
        let mut row: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        row[13] = "yes".into();
        row[14] = if row[2].is_empty() { String::new() } else { "yes".into() };
        row[15] = row[6].clone();
        writer.write_record(&row).unwrap();
    }
    String::from_utf8(writer.into_inner().unwrap()).unwrap()
}

#[test]
fn a_sheet_is_written_deterministically_and_read_back() {
    let sandbox = Sandbox::new();
    let repo = fixture(&sandbox);
    let sheet = sandbox.path().join("sheets/a.csv");
    let again = sandbox.path().join("b.csv");
    let write = |to: &Path| {
        phase0(&[
            "p2",
            "audit",
            "--repo",
            s(&repo),
            "--name",
            "fixture/history",
            "--per-stratum",
            "2",
            "--out",
            s(to),
        ])
    };
    let summary = ok(&write(&sheet));
    assert!(summary.starts_with("P2 audit sheet — "), "{summary}");
    ok(&write(&again));
    let text = std::fs::read_to_string(&sheet).unwrap();
    assert_eq!(text, std::fs::read_to_string(&again).unwrap());
    assert_eq!(text.lines().next(), Some(HEADER));

    // Every stratum's size is the run's count: they add up to the failures of the report.
    let out = sandbox.path().join("out");
    let report: serde_json::Value =
        serde_json::from_str(&ok(&phase0(&["p2", "--repo", s(&repo), "--json", "--out", s(&out)]))).unwrap();
    let analysis = &report["report"]["analysis"];
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let mut sizes = std::collections::BTreeMap::new();
    let mut rows = 0;
    for record in reader.records() {
        let record = record.unwrap();
        assert_eq!(&record[0], "fixture/history");
        assert_eq!(record.iter().skip(13).collect::<Vec<_>>(), ["", "", "", ""]);
        sizes.insert(record[11].to_string(), record[12].parse::<u64>().unwrap());
        rows += 1;
    }
    assert_eq!(
        sizes.values().sum::<u64>(),
        analysis["counts"]["total"].as_u64().unwrap()
    );
    assert_eq!(rows as u64, sizes.values().map(|&n| n.min(2)).sum::<u64>());

    // A reader who agrees with the tool everywhere: kappa 1, and the corrected share is the raw one.
    let filled = sandbox.path().join("filled.csv");
    std::fs::write(&filled, agree_everywhere(&text)).unwrap();
    let read_back = |to: &Path| {
        phase0(&[
            "p2",
            "--repo",
            s(&repo),
            "--name",
            "fixture/history",
            "--audit",
            s(&filled),
            "--out",
            s(to),
        ])
    };
    let block = ok(&read_back(&out));
    let line = |prefix: &str| {
        block
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("  agreement").starts_with(&format!("  agreement       1.000 over {rows} failures, kappa 1.000")),
        "{block}"
    );
    let raw = analysis["shares"]["self_reflection"]["estimate"].as_f64().unwrap();
    assert!(
        line("  corrected").starts_with(&format!("  corrected       only-self-reflection {:.1}% [", raw * 100.0)),
        "{block}"
    );
    // The fixture has too few classified failures for any verdict: the audit does not make one.
    assert!(
        line("  corrected").ends_with("; too few classified failures for any verdict"),
        "{block}"
    );
    assert!(
        line("  verdict").starts_with("  verdict         INCONCLUSIVE: n = "),
        "{block}"
    );
    let markdown = std::fs::read_to_string(out.join("p2.md")).unwrap();
    assert!(markdown.contains("## Audit (read back from "), "{markdown}");
    assert!(
        markdown.contains(&format!(
            "Agreement of tool and reader buckets over the {rows} audited failures: 1.000,\nCohen's kappa 1.000."
        )),
        "{markdown}"
    );
    assert!(
        markdown.contains("The history has too few classified failures for any verdict, audited or not."),
        "{markdown}"
    );
    // The bootstrap is seeded from the prereg: a second run writes the same bytes.
    let out_again = sandbox.path().join("out-again");
    ok(&read_back(&out_again));
    for name in ["p2.json", "p2.md"] {
        assert_eq!(
            std::fs::read(out.join(name)).unwrap(),
            std::fs::read(out_again.join(name)).unwrap()
        );
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("p2.json")).unwrap()).unwrap();
    assert_eq!(
        json["report"]["audit"]["summary"]["audited"].as_u64(),
        Some(rows as u64)
    );
    assert_eq!(
        json["report"]["audit"]["summary"]["matching"]["unmatched"],
        serde_json::json!([])
    );
}

#[test]
fn a_bad_sheet_names_its_line_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let repo = fixture(&sandbox);
    let sheet = sandbox.path().join("a.csv");
    ok(&phase0(&["p2", "audit", "--repo", s(&repo), "--out", s(&sheet)]));
    let text = agree_everywhere(&std::fs::read_to_string(&sheet).unwrap());
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2] = lines[2].replacen(",yes,", ",perhaps,", 1);
    std::fs::write(&sheet, lines.join("\n") + "\n").unwrap();
    let out = sandbox.path().join("out");
    let output = phase0(&["p2", "--repo", s(&repo), "--audit", s(&sheet), "--out", s(&out)]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "phase0: {}:3: is_failure \"perhaps\" is not yes, no or empty\n",
            sheet.display()
        )
    );
    assert!(!out.exists());
}

#[test]
fn a_sample_of_nothing_is_refused_before_the_scan() {
    let sandbox = Sandbox::new();
    let repo = fixture(&sandbox);
    let sheet = sandbox.path().join("a.csv");
    for (n, expected) in [
        ("0", "phase0: --per-stratum 0 is outside [1, 1000]\n"),
        ("1001", "phase0: --per-stratum 1001 is outside [1, 1000]\n"),
    ] {
        let output = phase0(&[
            "p2",
            "--repo",
            s(&repo),
            "audit",
            "--per-stratum",
            n,
            "--out",
            s(&sheet),
        ]);
        assert_eq!(output.status.code(), Some(2));
        assert_eq!(String::from_utf8_lossy(&output.stderr), expected);
        assert!(!sheet.exists());
    }
}
