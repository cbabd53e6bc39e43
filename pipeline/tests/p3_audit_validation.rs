//! The reading of P3's counted signals on real task histories (issue 17): the judged sheets in
//! `tests/data/p3-audit/` cover every sampled signal, and the precision VALIDATION.md reports is what they give.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p3-audit")
}

fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn every_sampled_signal_is_judged_and_the_precision_is_the_documented_one() {
    let key = |r: &BTreeMap<String, String>| {
        ["repo", "task", "signal", "at", "commit"]
            .map(|k| r[k].clone())
            .join(",")
    };
    let mut tally: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut samples = 0;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(repo) = name.strip_suffix(".sample.csv") else {
            continue;
        };
        let sampled: Vec<String> = rows(&path).iter().map(key).collect();
        let judged = rows(&dir().join(format!("{repo}.judged.csv")));
        assert_eq!(
            judged.iter().map(key).collect::<Vec<_>>(),
            sampled,
            "{repo}: judged rows = sampled rows"
        );
        for row in &judged {
            assert!(
                !row["evidence"].trim().is_empty(),
                "{repo} {}: no evidence",
                row["task"]
            );
            *tally
                .entry((row["signal"].clone(), row["genuine"].clone()))
                .or_default() += 1;
        }
        samples += sampled.len();
    }
    assert_eq!(samples, 40);
    let count = |genuine: &str| {
        tally
            .iter()
            .filter(|((_, g), _)| g == genuine)
            .map(|(_, n)| n)
            .sum::<u32>()
    };
    assert_eq!((count("yes"), count("no"), count("unclear")), (5, 33, 2));
    assert_eq!(tally[&("wrong.commit".to_string(), "no".to_string())], 27);
}
