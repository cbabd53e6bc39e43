//! The P2 validation table is reproduced from the committed audit sheets (`tests/data/p2-audit/validation/`;
//! its README says how to add one). `UPDATE_VALIDATION_TABLE=1` rewrites `validation-table.md` instead of failing.

use std::path::{Path, PathBuf};

use pipeline::experiments::p2_audit::{self, AuditSpec};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p2-audit/validation")
}

fn sheets(dir: &Path) -> Vec<PathBuf> {
    let mut sheets: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "csv"))
        .collect();
    sheets.sort();
    sheets
}

/// The table of `sheets`, as `validation_table` renders it.
fn table(sheets: &[PathBuf]) -> String {
    let mut rows = Vec::new();
    for sheet in sheets {
        rows.extend(p2_audit::read_sheet_file(sheet).unwrap_or_else(|e| panic!("{e}")));
    }
    let population = p2_audit::population_of_sheets(&rows).unwrap_or_else(|e| panic!("{e}"));
    let names = sheets.iter().map(|s| s.display().to_string()).collect();
    let summary = p2_audit::evaluate(
        names,
        &rows,
        &population,
        p2_audit::MatchNotes::default(),
        &AuditSpec::default(),
        0.05,
    );
    p2_audit::validation_table(&summary)
}

/// Checks `dir`'s `validation-table.md` against the table of its sheets (or writes it, with
/// `UPDATE_VALIDATION_TABLE`).
fn check_table(dir: &Path) {
    let expected_path = dir.join("validation-table.md");
    let sheets = sheets(dir);
    if sheets.is_empty() {
        // No sheets committed yet: then no table either (a table without its sheets cannot be reproduced).
        assert!(
            !expected_path.exists(),
            "{} has no sheets beside it",
            expected_path.display()
        );
        return;
    }
    let actual = table(&sheets);
    if std::env::var_os("UPDATE_VALIDATION_TABLE").is_some() {
        std::fs::write(&expected_path, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    assert_eq!(
        actual,
        expected,
        "the sheets give another table; see {}",
        dir.join("README.md").display()
    );
}

#[test]
fn the_validation_table_is_reproduced_from_the_committed_sheets() {
    check_table(&dir());
}

#[test]
fn the_round_three_table_is_reproduced_from_its_sheets() {
    // The fresh reading of 60 line-linked failures of four repositories (2026-11-26), none read before.
    let round3 = dir().parent().unwrap().join("round3/validation");
    check_table(&round3);
    let table = std::fs::read_to_string(round3.join("validation-table.md")).unwrap();
    assert!(
        table.contains("| all | 60 | 50 |") && table.contains("(21/50)"),
        "{table}"
    );
}

#[test]
fn the_hand_made_sheet_gives_its_table() {
    // The same computation on the hand-made sheet, whose figures come from kappa_reference.py.
    let sheet = dir().parent().unwrap().join("hand-made.csv");
    let table = table(&[sheet]);
    assert!(
        table.ends_with(
            "| all | 13 | 11 | 0.85 [0.58, 0.96] | 0.70 [0.40, 0.89] (7/10) | 0.455 | 0.214 | 9 of 11 \
             | 0.75 [0.41, 0.93] (6/8) | 0.556 | 0.321 |\n"
        ),
        "{table}"
    );
}
