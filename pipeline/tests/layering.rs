//! The library's layers point one way (issue 20): a module may use its own layer and the layers below it, never one
//! above. Read from the source: every `crate::<module>` path in code (comments aside) of every file under
//! `src/<module>`. A new upward import fails here, naming the file and line.
//!
//! Layers, lowest first: `stats` (exact statistics) → `scan` (inputs into typed rows) → `prereg` (the
//! pre-registrations: specs, verdict kinds, how reports name them) → `experiments` (metrics and verdicts) →
//! `report` (JSON, markdown, SVG) → `commands` and `demo` (what each `phase0` command does) → `cli` (the command
//! line).

use std::path::{Path, PathBuf};

const LAYERS: &[(&str, u8)] = &[
    ("stats", 0),
    ("scan", 1),
    ("prereg", 2),
    ("experiments", 3),
    ("report", 4),
    ("commands", 5),
    ("demo", 5),
    ("cli", 6),
];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(name, _)| *name == module).map(|(_, rank)| *rank)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(file, line, from, to)` for every `crate::<to>` in the code of a file of module `from` whose layer is above.
fn upward_imports(src: &Path) -> Vec<(String, usize, String, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        let Some(own) = layer(&module) else {
            continue; // lib.rs, main.rs: the top
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            for (at, _) in code.match_indices("crate::") {
                let rest = &code[at + "crate::".len()..];
                let to: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // `$crate::` in a macro is not a module path.
                if code[..at].ends_with('$') {
                    continue;
                }
                if let Some(theirs) = layer(&to)
                    && theirs > own
                {
                    found.push((relative.display().to_string(), number + 1, module.clone(), to));
                }
            }
        }
    }
    found
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = upward_imports(&src);
    assert!(
        found.is_empty(),
        "imports from a higher layer (file:line: from -> to):\n{}",
        found
            .iter()
            .map(|(file, line, from, to)| format!("  src/{file}:{line}: {from} -> {to}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The check itself can fail: a scratch tree with one upward import is caught, with its file and line.
#[test]
fn an_upward_import_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("experiments")).unwrap();
    std::fs::write(
        dir.path().join("experiments/p9.rs"),
        "use crate::stats::wilson;\n// crate::commands in a comment is fine\nuse crate::report::envelope::Envelope;\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("stats.rs"), "use crate::scan::input;\n").unwrap();
    assert_eq!(
        upward_imports(dir.path()),
        [
            ("experiments/p9.rs".into(), 3, "experiments".into(), "report".into()),
            ("stats.rs".into(), 1, "stats".into(), "scan".into()),
        ]
    );
}
