//! A mutation fuzzer for every input reader: the P1 corpus (JSONL, CSV, Parquet), each board format, sidecars, the hook's payload and
//! self-report. Each reader gets mutations of the seeds committed under `tests/fuzz-seeds/<reader>/` (byte flips,
//! insertions, deletions, duplicated and spliced ranges, JSON/CSV tokens, truncation), from a seeded ChaCha stream
//! so a finding replays exactly. A reader may accept or refuse an input; it must not panic, and a refusal must name
//! the input. A panicking input is written to `target/fuzz-findings/` and the test fails naming it.
//!
//! `cargo test` runs a few hundred cases per reader; `just fuzz` runs each for `PHASE0_FUZZ_SECONDS` (default 60).
//! `PHASE0_FUZZ_SEED` picks another stream.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pipeline::scan::board::{self, Format};
use pipeline::scan::corpus::{CorpusFormat, InvalidPolicy, parse_corpus, parse_corpus_as};
use pipeline::scan::reflections;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a reader did with one input.
enum Outcome {
    Accepted,
    /// Refused, with the message the user would see.
    Refused(String),
}

/// Tokens that tend to reach parser corners.
const TOKENS: &[&[u8]] = &[
    b"\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\n",
    b"\r\n",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b"null",
    b"true",
    b"-0",
    b"1e999",
    b"-1e-999",
    b"99999999999999999999999",
    b"NaN",
    b"\xff",
    b"\xEF\xBB\xBF",
    b"\"\"",
    b",,,",
    b"2026-13-45T25:61:61Z",
    b"0000-01-01T00:00:00Z",
    b"9999-12-31T23:59:59Z",
    b"\t",
    b"\0",
];

fn seeds(reader: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-seeds")
        .join(reader);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    let seeds: Vec<Vec<u8>> = paths.iter().map(|path| std::fs::read(path).unwrap()).collect();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    seeds
}

fn mutate(rng: &mut ChaCha8Rng, input: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    for _ in 0..rng.random_range(1..=4) {
        let len = input.len();
        let at = if len == 0 { 0 } else { rng.random_range(0..len) };
        match rng.random_range(0..8) {
            0 if len > 0 => input[at] ^= 1 << rng.random_range(0..8),
            1 => input.insert(at, rng.random()),
            2 if len > 0 => {
                let end = (at + rng.random_range(1..=16)).min(len);
                input.drain(at..end);
            }
            3 if len > 0 => {
                let end = (at + rng.random_range(1..=64)).min(len);
                let copy = input[at..end].to_vec();
                let to = rng.random_range(0..=input.len());
                input.splice(to..to, copy);
            }
            4 => {
                let token = TOKENS[rng.random_range(0..TOKENS.len())];
                input.splice(at..at, token.iter().copied());
            }
            5 => {
                let other = &seeds[rng.random_range(0..seeds.len())];
                if !other.is_empty() {
                    let from = rng.random_range(0..other.len());
                    let end = (from + rng.random_range(1..=256)).min(other.len());
                    input.splice(at..at, other[from..end].iter().copied());
                }
            }
            6 => input.truncate(at),
            _ => {
                // A long run of one byte: very long lines, numbers and strings.
                let byte = [b'9', b'a', b'[', b' ', b'"'][rng.random_range(0..5)];
                let run = vec![byte; rng.random_range(1..=4096)];
                input.splice(at..at, run);
            }
        }
    }
}

/// Runs `reader` on mutations of its seeds for `cases` cases or until `deadline`, whichever comes first.
/// `refuses`: whether the reader refuses some inputs (a check that mutations reach its parser at all).
fn fuzz(name: &str, cases: u64, refuses: bool, read: impl Fn(&[u8]) -> Outcome) {
    let seeds = seeds(name);
    let stream: u64 = std::env::var("PHASE0_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261124);
    let seconds: Option<u64> = std::env::var("PHASE0_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok());
    let deadline = seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let mut rng = ChaCha8Rng::seed_from_u64(stream ^ name.bytes().fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(b)));
    let (mut accepted, mut refused, mut case) = (0u64, 0u64, 0u64);
    // The seeds themselves first, unmutated.
    let mut next_input = seeds.iter().cloned().collect::<std::collections::VecDeque<_>>();
    loop {
        let done = match deadline {
            Some(deadline) => Instant::now() >= deadline,
            None => case >= cases,
        };
        if done {
            break;
        }
        let input = next_input.pop_front().unwrap_or_else(|| {
            let mut input = seeds[rng.random_range(0..seeds.len())].clone();
            mutate(&mut rng, &mut input, &seeds);
            input
        });
        match catch_unwind(AssertUnwindSafe(|| read(&input))) {
            Ok(Outcome::Accepted) => accepted += 1,
            Ok(Outcome::Refused(message)) => {
                assert!(
                    message.starts_with("fuzz-input") || message.contains("fuzz-input"),
                    "{name}: a refusal that does not name the input: {message:?}"
                );
                refused += 1;
            }
            Err(_) => {
                let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-findings");
                std::fs::create_dir_all(&dir).unwrap();
                let path = dir.join(format!("{name}-{stream}-{case}"));
                std::fs::write(&path, &input).unwrap();
                panic!(
                    "{name}: case {case} of stream {stream} panicked; input in {}",
                    path.display()
                );
            }
        }
        case += 1;
    }
    eprintln!("{name}: {case} cases, {accepted} accepted, {refused} refused");
    if refuses {
        assert!(
            refused > 0,
            "{name}: no mutation was refused; the fuzzer is not reaching the parser"
        );
        assert!(
            accepted > 0 || case < 50,
            "{name}: nothing accepted, not even the seeds"
        );
    }
}

/// Cases per reader in `cargo test` (each is a few microseconds to a millisecond).
const CASES: u64 = 400;

#[test]
fn corpus_reader() {
    fuzz("corpus", CASES, true, |bytes| {
        match parse_corpus("fuzz-input", bytes, InvalidPolicy::Fail) {
            Ok(_) => Outcome::Accepted,
            Err(error) => Outcome::Refused(error.to_string()),
        }
    });
    // The skipping policy reads the same inputs without failing on a row.
    fuzz("corpus", CASES, false, |bytes| {
        match parse_corpus("fuzz-input", bytes, InvalidPolicy::Skip) {
            Ok(_) => Outcome::Accepted,
            Err(error) => Outcome::Refused(error.to_string()),
        }
    });
}

#[test]
fn corpus_table_readers() {
    for (seeds, format) in [
        ("corpus-csv", CorpusFormat::Csv),
        ("corpus-parquet", CorpusFormat::Parquet),
    ] {
        for policy in [InvalidPolicy::Fail, InvalidPolicy::Skip] {
            fuzz(
                seeds,
                CASES,
                policy == InvalidPolicy::Fail,
                |bytes| match parse_corpus_as("fuzz-input", bytes, format, policy) {
                    Ok(_) => Outcome::Accepted,
                    Err(error) => Outcome::Refused(error.to_string()),
                },
            );
        }
    }
}

fn board_reader(seeds: &str, format: Format) {
    let tz = jiff::tz::TimeZone::UTC;
    fuzz(seeds, CASES, true, |bytes| {
        match board::read(Path::new("fuzz-input"), bytes, format, &tz) {
            Ok(_) => Outcome::Accepted,
            Err(error) => Outcome::Refused(error.to_string()),
        }
    });
}

#[test]
fn board_jsonl_reader() {
    board_reader("board-jsonl", Format::Jsonl);
}

#[test]
fn jira_csv_reader() {
    board_reader("jira-csv", Format::JiraCsv);
}

#[test]
fn jira_json_reader() {
    board_reader("jira-json", Format::JiraJson);
}

#[test]
fn linear_csv_reader() {
    board_reader("linear-csv", Format::LinearCsv);
}

#[test]
fn github_json_reader() {
    board_reader("github-json", Format::GithubJson);
}

#[test]
fn trello_json_reader() {
    board_reader("trello-json", Format::TrelloJson);
}

#[test]
fn beads_reader() {
    board_reader("beads", Format::Beads);
}

#[test]
fn board_parquet_reader() {
    board_reader("board-parquet", Format::Parquet);
}

#[test]
fn sniffing_any_input() {
    let tz = jiff::tz::TimeZone::UTC;
    for seeds in ["board-jsonl", "jira-csv", "github-json", "beads"] {
        fuzz(seeds, CASES / 2, true, |bytes| {
            match board::sniff(Path::new("fuzz-input"), bytes) {
                Ok(sniffed) => match board::read(Path::new("fuzz-input"), bytes, sniffed.format, &tz) {
                    Ok(_) => Outcome::Accepted,
                    Err(error) => Outcome::Refused(error.to_string()),
                },
                Err(error) => Outcome::Refused(error.to_string()),
            }
        });
    }
}

#[test]
fn sidecar_reader() {
    // A sidecar is named by its directory listing, not by its bytes: the reason is reported beside the file name.
    fuzz("sidecar", CASES, true, |bytes| match reflections::parse(bytes) {
        Ok(_) => Outcome::Accepted,
        Err(reason) => Outcome::Refused(format!("fuzz-input: {reason}")),
    });
}

#[test]
fn hook_payload_reader() {
    // The hook never refuses a payload: what it cannot read becomes an empty payload (a sidecar is still written).
    fuzz("payload", CASES, false, |bytes| {
        let _ = capture::hook::payload::Payload::parse(bytes);
        Outcome::Accepted
    });
}

#[test]
fn self_report_reader() {
    fuzz(
        "self-report",
        CASES,
        true,
        |bytes| match capture::hook::self_report::parse(bytes) {
            Ok(_) => Outcome::Accepted,
            Err(reason) => Outcome::Refused(format!("fuzz-input: {reason}")),
        },
    );
}

#[test]
fn assistant_message_block_reader() {
    // The ```reflection block of Claude Code's `last_assistant_message` (or Codex's): text, any bytes as lossy UTF-8.
    fuzz(
        "assistant-message",
        CASES,
        true,
        |bytes| match capture::hook::self_report::from_message(&String::from_utf8_lossy(bytes)) {
            Ok(_) | Err(capture::hook::self_report::NotMerged::Missing) => Outcome::Accepted,
            Err(reason) => Outcome::Refused(format!("fuzz-input: {reason}")),
        },
    );
}
