//! P2 over many repositories (issue 21, item 3): `phase0 p2 --repo A --repo B` writes each repository's report set
//! into a Hive partition and pools them; `phase0 pool` pools the same partitions to the same bytes; bad partitions
//! are refused with the file named; and the pooled interval's coverage on a simulated set of repositories.

use std::path::{Path, PathBuf};

mod common;

use pipeline::commands::p2::P2Args;
use pipeline::commands::pool::{self, NamedRepo, PoolArgs};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Beta, Binomial, Distribution, LogNormal};

fn p2_args(out: &Path) -> P2Args {
    P2Args {
        rev: Some("HEAD".into()),
        out: out.to_path_buf(),
        as_of: Some("2026-11-21".into()),
        ..P2Args::default()
    }
}

fn named(name: &str, path: PathBuf) -> NamedRepo {
    NamedRepo {
        name: name.into(),
        path,
    }
}

fn pool_args(dirs: Vec<PathBuf>, out: &Path) -> PoolArgs {
    PoolArgs {
        dirs,
        out: out.to_path_buf(),
        as_of: Some("2026-11-21".into()),
        ..PoolArgs::default()
    }
}

const POOLED_FILES: [&str; 5] = [
    "p2-pooled.json",
    "p2-pooled.md",
    "p2-repositories.csv",
    "p2-repositories.parquet",
    "p2-forest.svg",
];

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn several_repositories_are_scanned_into_partitions_and_pooled_and_pool_gives_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let out = dir.path().join("out");
    // The same history under two names.
    let repos = [named("acme/whole", repo.clone()), named("second", repo.clone())];
    let outcome = pool::run_many(&p2_args(&out), &repos).unwrap();
    for partition in ["repo=acme%2Fwhole", "repo=second"] {
        for file in [
            "p2.json",
            "p2.md",
            "p2-failures.csv",
            "p2-failures.parquet",
            "manifest.json",
        ] {
            assert!(out.join(partition).join(file).is_file(), "{partition}/{file}");
        }
    }
    let whole = json(&out.join("repo=acme%2Fwhole/p2.json"));
    assert_eq!(whole["report"]["repository"]["name"], "acme/whole");
    let pooled = json(&out.join("p2-pooled.json"));
    assert_eq!(pooled["command"], "phase0 pool");
    let analysis = &pooled["report"]["analysis"];
    let single = &whole["report"]["analysis"]["counts"];
    assert_eq!(analysis["counts"]["total"], 2 * single["total"].as_u64().unwrap());
    assert_eq!(
        analysis["counts"]["self_reflection"],
        2 * single["self_reflection"].as_u64().unwrap()
    );
    assert_eq!(analysis["method"], "design-effect-wilson");
    // Two identical repositories: no variance between them, the design effect is its floor of 1.
    assert_eq!(analysis["design"]["design_effect"], 1.0);
    assert_eq!(analysis["design"]["clusters"], 2);
    let names: Vec<&str> = analysis["repositories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["acme/whole", "second"]);
    assert!(
        outcome.summary.contains("P2 gate buckets over 2 repositories"),
        "{}",
        outcome.summary
    );
    assert_eq!(
        std::fs::read_to_string(out.join("p2-repositories.csv"))
            .unwrap()
            .lines()
            .next(),
        Some(
            "repository,path,status,commits,failures,classified,ci,human_review,self_reflection,ambiguous,share,\
             share_lo,share_hi,verdict"
        )
    );

    // `phase0 pool` on the run's directory: the same pooled files, byte for byte.
    let again = dir.path().join("again");
    pool::run(&pool_args(vec![out.clone()], &again)).unwrap();
    for file in POOLED_FILES {
        assert_eq!(
            std::fs::read(out.join(file)).unwrap(),
            std::fs::read(again.join(file)).unwrap(),
            "{file} differs between phase0 p2 --repo A --repo B and phase0 pool"
        );
    }
    // And from the partitions named one by one (a CI matrix's report sets).
    let named = dir.path().join("named");
    pool::run(&pool_args(
        vec![out.join("repo=second"), out.join("repo=acme%2Fwhole")],
        &named,
    ))
    .unwrap();
    assert_eq!(
        std::fs::read(out.join("p2-repositories.csv")).unwrap(),
        std::fs::read(named.join("p2-repositories.csv")).unwrap()
    );
}

/// A repository's report set is written while the next one is scanned: when it cannot be written, the run stops
/// with that error (naming the path) before the next one is written, and pools nothing.
#[test]
fn a_partition_that_cannot_be_written_stops_the_run_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // A file where the first repository's partition directory should go.
    std::fs::write(out.join("repo=first"), "not a directory").unwrap();
    let repos = [named("first", repo.clone()), named("second", repo.clone())];
    let error = pool::run_many(&p2_args(&out), &repos).unwrap_err();
    assert!(
        matches!(&error, pipeline::commands::CommandError::Write { path, .. } if path.starts_with(out.join("repo=first"))),
        "{error}"
    );
    assert!(
        !out.join("repo=second").exists(),
        "as when they run one after the other, nothing after the failing repository is written"
    );
    assert!(!out.join("p2-pooled.json").exists(), "nothing is pooled");
}

/// A repository that cannot be walked stops the run in its turn, as if they ran one after the other (the one
/// before it written, since it is written while the next is scanned; none after it; nothing pooled).
#[test]
fn a_repository_that_cannot_be_walked_stops_the_run_in_its_turn() {
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let out = dir.path().join("out");
    let repos = [
        named("first", repo.clone()),
        named("second", dir.path().join("not-a-repository")),
        named("third", repo.clone()),
    ];
    let error = pool::run_many(&p2_args(&out), &repos).unwrap_err().to_string();
    assert!(error.starts_with("second: "), "{error}");
    assert!(error.contains("not-a-repository"), "{error}");
    assert!(
        out.join("repo=first").join("p2.json").exists(),
        "the repository before it is written"
    );
    assert!(!out.join("repo=third").exists(), "nothing after it is written");
    assert!(!out.join("p2-pooled.json").exists(), "nothing is pooled");
}

#[test]
fn bad_partitions_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let repo = common::p2_fixture(dir.path());
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    for (out, name) in [(&a, "one"), (&b, "two")] {
        pipeline::commands::p2::run(&P2Args {
            repo: repo.clone(),
            name: Some(name.into()),
            ..p2_args(out)
        })
        .unwrap();
    }
    let pooled = dir.path().join("pooled");
    let error = |dirs: Vec<PathBuf>| pool::run(&pool_args(dirs, &pooled)).unwrap_err().to_string();

    // The same repository twice.
    assert_eq!(
        error(vec![a.clone(), a.clone()]),
        format!("repository \"one\" appears twice: {} and {}", a.display(), a.display())
    );
    // A directory with nothing to pool.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(error(vec![empty.clone()]).starts_with(&format!("{}: no p2.json in it", empty.display())));
    // Files of two runs: a failure table that does not match its report.
    let failures = b.join("p2-failures.parquet");
    let original = std::fs::read(&failures).unwrap();
    let frame = polars::prelude::DataFrame::new(
        1,
        vec![
            polars::prelude::Column::new("bucket".into(), ["ci"]),
            polars::prelude::Column::new("floor_flagged".into(), [Some(false)]),
        ],
    )
    .unwrap();
    let mut other = frame;
    std::fs::write(&failures, pipeline::report::parquet::bytes(&mut other).unwrap()).unwrap();
    let message = error(vec![a.clone(), b.clone()]);
    assert!(
        message.starts_with(&format!(
            "{}: counts 1 total failures, but p2.json says",
            failures.display()
        )),
        "{message}"
    );
    // A damaged table.
    std::fs::write(&failures, &original[..original.len() / 2]).unwrap();
    assert_eq!(
        error(vec![a.clone(), b.clone()]),
        format!(
            "{}: not a readable Parquet file: parquet: File out of specification: The file must end with PAR1",
            failures.display()
        )
    );
    std::fs::write(&failures, &original).unwrap();
    // Another pre-registration than the one given (here: the embedded one).
    let json_path = b.join("p2.json");
    let mut report = json(&json_path);
    report["prereg"]["sha256"] = "0".repeat(64).into();
    std::fs::write(&json_path, serde_json::to_vec(&report).unwrap()).unwrap();
    assert!(error(vec![a.clone(), b.clone()]).starts_with(&format!(
        "{}: decided under experiments/p2.toml (embedded) (sha256 {})",
        b.display(),
        "0".repeat(64)
    )));
    assert!(
        !pooled.join("p2-pooled.json").exists(),
        "nothing is written when a partition is refused"
    );
}

/// The interval's coverage on simulated repositories with a known between-repository effect: 10 repositories with
/// log-normal numbers of classified failures (median 200, sigma 0.5), each one's share drawn from a Beta with mean
/// 0.3 and intra-class correlation 0.1, binomial failures. docs/p2.md has the full grid from the Python reference
/// (`scripts/reference/pooled_share.py --coverage`).
#[test]
fn the_pooled_interval_covers_a_known_share_at_about_its_nominal_rate() {
    let (repositories, mean, icc, simulations) = (10, 0.3, 0.1, 2000);
    let (a, b) = (mean * (1.0 - icc) / icc, (1.0 - mean) * (1.0 - icc) / icc);
    let shares = Beta::new(a, b).unwrap();
    let sizes = LogNormal::new(200f64.ln(), 0.5).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(20261126);
    let (mut covered, mut naive_covered) = (0, 0);
    for _ in 0..simulations {
        let clusters: Vec<(u64, u64)> = (0..repositories)
            .map(|_| {
                let n = (sizes.sample(&mut rng).round() as u64).max(5);
                let x = Binomial::new(n, shares.sample(&mut rng)).unwrap().sample(&mut rng);
                (x, n)
            })
            .collect();
        let pooled = pipeline::stats::pooled_share(&clusters, 0.05).unwrap().unwrap();
        covered += u32::from(pooled.share.lo <= mean && mean <= pooled.share.hi);
        let (x, n) = clusters.iter().fold((0, 0), |(x, n), c| (x + c.0, n + c.1));
        let z = pipeline::stats::z_two_sided(0.05).unwrap();
        let naive = pipeline::stats::wilson(x, n, z).unwrap().unwrap();
        naive_covered += u32::from(naive.lo <= mean && mean <= naive.hi);
    }
    let rate = f64::from(covered) / f64::from(simulations);
    // 2000 simulations: a 95% rate would be read within about ±1 point.
    assert!((0.92..=0.97).contains(&rate), "coverage {rate}");
    assert_eq!(covered, COVERED);
    // The binomial interval, as if failures were independent, misses most of the time.
    assert!(
        f64::from(naive_covered) / f64::from(simulations) < 0.5,
        "{naive_covered}"
    );
}

/// Pinned: the count of covering intervals the seeded simulation gives (a change to the interval shows here).
const COVERED: u32 = 1880;
