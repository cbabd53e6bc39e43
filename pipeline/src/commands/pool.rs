//! P2 over many repositories.
//!
//! - `phase0 p2 --repo A --repo B …` (or `--repos FILE`) scans the repositories one after the other (each scan uses
//!   every core; one repository's caches at a time, so memory stays that of the largest), writes each one's own
//!   report set into a partition `OUT/repo=<name>/`, then pools those partitions into `OUT`.
//! - `phase0 pool DIR…` pools partitions written elsewhere (a CI matrix, one job per repository): each DIR is a
//!   report set of `phase0 p2` (it holds `p2.json`) or a directory of `repo=<name>/` partitions.
//!
//! Pooling reads each partition's `p2.json` (the pre-registration it was decided under, its status) and its
//! `p2-failures.parquet` (the rows), counts the buckets per repository with a polars group-by, checks them against
//! the report, and decides the pooled verdict (`experiments::p2_pool`). Partitions decided under different
//! pre-registrations are never pooled. The partition directories are Hive-style, so DuckDB or Spark read
//! `OUT/repo=*/p2-failures.parquet` with a `repo` column unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::p2::{P2Args, P2Outcome};
use super::{CommandError, write_report_set};
use crate::experiments::p2_pool::{self, RepositoryCounts};
use crate::prereg::Prereg;
use crate::report::envelope::{self, Envelope, InputFile, PreregRef, Status};
use crate::report::p2 as single;
use crate::report::p2_pool::{self as render, PooledReport};

/// The options of `phase0 pool`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PoolArgs {
    /// Report sets of `phase0 p2` (holding p2.json and p2-failures.parquet), or directories of `repo=<name>/`
    /// partitions.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// The pre-registration the partitions were decided under, when it is not the embedded experiments/p2.toml.
    #[arg(long)]
    pub prereg: Option<PathBuf>,
    /// Where p2-pooled.json, p2-pooled.md, p2-repositories.csv/.parquet and p2-forest.svg go.
    #[arg(long, default_value = "reports/p2-pooled", help_heading = "Output")]
    pub out: PathBuf,
    /// The report date (YYYY-MM-DD or RFC 3339); default SOURCE_DATE_EPOCH, else the newest partition's date.
    #[arg(long)]
    pub as_of: Option<String>,
    /// `SOURCE_DATE_EPOCH` (Unix seconds), read by clap from the environment.
    #[arg(long = "source-date-epoch", env = "SOURCE_DATE_EPOCH", hide = true)]
    pub source_date_epoch: Option<String>,
    /// A directory with a p2-pooled.md.j2 that replaces the embedded template.
    #[arg(long, help_heading = "Output")]
    pub templates: Option<PathBuf>,
}

/// What a pooled run produced.
#[derive(Debug)]
pub struct PoolOutcome {
    pub summary: String,
    pub json: Vec<u8>,
    pub written: Vec<PathBuf>,
    /// Problems with the repositories' diff caches, for stderr (the reports do not depend on them).
    pub warnings: Vec<String>,
    /// How many diffs the repositories' caches answered, a line for stdout (empty without a cache).
    pub cache_line: String,
}

/// A repository to scan: its name (the partition's key) and path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRepo {
    pub name: String,
    pub path: PathBuf,
}

/// `NAME=PATH` when no file `NAME=PATH` exists and what precedes the first `=` is a name (letters, digits, `.`, `_`, `+`, `-`, at most one
/// inner `/`, not starting with `.`), else the whole value is a path and the name comes from it
/// ([`super::p2_audit::repo_name`]).
pub fn parse_repo(value: &str) -> NamedRepo {
    // A path that exists is a path, whatever it contains.
    if let Some((name, path)) = value.split_once('=').filter(|_| !Path::new(value).exists()) {
        let valid = !name.is_empty()
            && !path.is_empty()
            && !name.starts_with(['.', '/'])
            && !name.ends_with('/')
            && name.matches('/').count() <= 1
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-' | '/'));
        if valid {
            return NamedRepo {
                name: name.to_string(),
                path: PathBuf::from(path),
            };
        }
    }
    let path = PathBuf::from(value);
    NamedRepo {
        name: super::p2_audit::repo_name(&path, None),
        path,
    }
}

/// The repositories of `--repo` values and a `--repos` file (one per line, `NAME=PATH` or `PATH`; blank lines and
/// `#` comments skipped). Every path must exist and every name be unique: checked before any scan starts, with
/// the file and line of the offending entry.
pub fn repositories(values: &[String], file: Option<&Path>) -> Result<Vec<NamedRepo>, CommandError> {
    let mut entries: Vec<(String, NamedRepo)> = values.iter().map(|v| (format!("--repo {v}"), parse_repo(v))).collect();
    if let Some(file) = file {
        let text = crate::scan::input::read_text(file)
            .map_err(|e| CommandError::Input(format!("{}: cannot read the repository list: {e}", file.display())))?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            entries.push((format!("{}:{}", file.display(), i + 1), parse_repo(line)));
        }
        if entries.len() == values.len() {
            return Err(CommandError::Input(format!(
                "{}: lists no repository (one path, or NAME=PATH, per line)",
                file.display()
            )));
        }
    }
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (source, repo) in &entries {
        if !repo.path.exists() {
            return Err(CommandError::Input(format!(
                "{source}: {} does not exist",
                repo.path.display()
            )));
        }
        if let Some(first) = seen.insert(repo.name.clone(), source.clone()) {
            return Err(CommandError::Input(format!(
                "{source}: the repository name {:?} is already taken by {first}; name them apart with NAME=PATH",
                repo.name
            )));
        }
    }
    Ok(entries.into_iter().map(|(_, repo)| repo).collect())
}

/// The partition directory's name for a repository: `repo=` and the name, percent-encoded outside letters,
/// digits, `-`, `_` and an inner `.` (Hive's escaping: DuckDB and Spark decode `steveyegge%2Fbeads`).
pub fn partition_dir(name: &str) -> String {
    let mut out = String::from("repo=");
    for (i, byte) in name.bytes().enumerate() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_') || (byte == b'.' && i > 0) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The name a partition directory encodes (`None` when it is not `repo=…` or not valid percent-encoded UTF-8).
fn name_of_partition_dir(dir: &Path) -> Option<String> {
    let encoded = dir.file_name()?.to_str()?.strip_prefix("repo=")?;
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `phase0 p2` over several repositories: each one's report set into `OUT/repo=<name>/`, then the pooled report
/// into `OUT`.
pub fn run_many(args: &P2Args, repos: &[NamedRepo]) -> Result<PoolOutcome, CommandError> {
    if args.audit.is_some() {
        return Err(CommandError::Input(
            "--audit reads one repository's sheet: run it on that repository alone".to_string(),
        ));
    }
    if args.name.is_some() {
        return Err(CommandError::Input(
            "--name names one repository; with several, give each as NAME=PATH".to_string(),
        ));
    }
    // Every template is read before the first scan, so a bad one fails at once.
    super::template(args.templates.as_deref(), "p2.md.j2", single::P2_TEMPLATE)?;
    super::template(args.templates.as_deref(), "p2-pooled.md.j2", render::POOLED_TEMPLATE)?;
    // Each repository's report set is written, its caches saved and its partition read back (the pooling's input,
    // as `phase0 pool` reads it) while the next repository is scanned: one at a time, so that at most one finished
    // repository's reports (and, until its caches are saved, its history) are held beside a scan.
    type Finished = Result<(P2Outcome, Partition), CommandError>;
    let join = |finishing: std::thread::JoinHandle<Finished>| {
        finishing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    };
    let mut finishing: Option<(&str, std::thread::JoinHandle<Finished>)> = None;
    let mut finished: Vec<(&str, P2Outcome, Partition)> = Vec::with_capacity(repos.len());
    for (i, repo) in repos.iter().enumerate() {
        if args.progress {
            eprintln!(
                "phase0: [{}/{}] {} ({})",
                i + 1,
                repos.len(),
                repo.name,
                repo.path.display()
            );
        }
        let dir = args.out.join(partition_dir(&repo.name));
        let one = P2Args {
            repo: repo.path.clone(),
            name: Some(repo.name.clone()),
            out: dir.clone(),
            ..args.clone()
        };
        let rendered = super::p2::render_reports(&one).map_err(|error| match error {
            CommandError::Input(message) => CommandError::Input(format!("{}: {message}", repo.name)),
            other => other,
        });
        // The repository before this one is finished first, as if they ran one after the other: its error first.
        if let Some((name, handle)) = finishing.take() {
            let (outcome, partition) = join(handle)?;
            finished.push((name, outcome, partition));
        }
        let unwritten = rendered?;
        let writing = move || -> Finished {
            let outcome = unwritten.write()?;
            Ok((outcome, read_partition(&dir)?))
        };
        finishing = Some((&repo.name, std::thread::spawn(writing)));
    }
    if let Some((name, handle)) = finishing.take() {
        let (outcome, partition) = join(handle)?;
        finished.push((name, outcome, partition));
    }
    let mut warnings = Vec::new();
    let (mut hits, mut computed, mut remembered, mut read) = (0, 0, 0, 0);
    let mut partitions = Vec::with_capacity(finished.len());
    for (name, outcome, partition) in finished {
        warnings.extend(outcome.warnings.into_iter().map(|w| format!("{name}: {w}")));
        if let Some((h, c)) = outcome.cache {
            hits += h;
            computed += c;
        }
        if let Some((r, n)) = outcome.commits_cached {
            remembered += r;
            read += n;
        }
        partitions.push(partition);
    }
    let read_back = || Ok(partitions);
    let mut pooled = pool_partitions(
        read_back,
        &PoolArgs {
            dirs: vec![args.out.clone()],
            prereg: args.prereg.clone(),
            out: args.out.clone(),
            as_of: args.as_of.clone(),
            source_date_epoch: args.source_date_epoch.clone(),
            templates: args.templates.clone(),
        },
    )?;
    if args.cache.is_some() {
        pooled.cache_line.push_str(&format!(
            "  commit cache    {remembered} of {} commits from the repositories' caches, {read} read\n",
            remembered + read
        ));
        pooled.cache_line.push_str(&format!(
            "  diff cache      {hits} of {} diffs from the repositories' caches, {computed} computed\n",
            hits + computed
        ));
    }
    pooled.warnings = warnings;
    Ok(pooled)
}

/// `phase0 pool DIR…`.
pub fn run(args: &PoolArgs) -> Result<PoolOutcome, CommandError> {
    let mut partitions = Vec::new();
    for dir in &args.dirs {
        partitions.extend(find_partitions(dir)?);
    }
    pool_partitions(|| partitions.iter().map(|dir| read_partition(dir)).collect(), args)
}

/// `dir` itself when it holds a `p2.json`, else its `repo=*` subdirectories that do, by name.
fn find_partitions(dir: &Path) -> Result<Vec<PathBuf>, CommandError> {
    if !dir.exists() {
        return Err(CommandError::Input(format!("{} does not exist", dir.display())));
    }
    if dir.join("p2.json").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CommandError::Input(format!("{}: cannot list the directory: {e}", dir.display())))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("repo="))
                && p.join("p2.json").is_file()
        })
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(CommandError::Input(format!(
            "{}: no p2.json in it and no repo=<name>/p2.json partition under it (write them with phase0 p2 --out)",
            dir.display()
        )));
    }
    Ok(found)
}

/// One partition, read and checked.
struct Partition {
    dir: PathBuf,
    counts: RepositoryCounts,
    prereg: PreregRef,
    generated_at: Option<String>,
    inputs: [InputFile; 2],
}

/// The parts of a partition's `p2.json` that pooling reads. The rest (the failures and samples, most of its bytes) is
/// skipped without being built into values: on five repositories parsing whole reports was most of the pooling's
/// time. A missing part reads as `null`.
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct PartitionJson {
    command: serde_json::Value,
    status: serde_json::Value,
    error_code: serde_json::Value,
    generated_at: serde_json::Value,
    prereg: PartitionPrereg,
    report: PartitionReport,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct PartitionPrereg {
    path: serde_json::Value,
    sha256: serde_json::Value,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct PartitionReport {
    repository: PartitionRepository,
    analysis: PartitionAnalysis,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct PartitionRepository {
    path: serde_json::Value,
    name: serde_json::Value,
    commits_walked: serde_json::Value,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct PartitionAnalysis {
    counts: serde_json::Map<String, serde_json::Value>,
}

fn read_partition(dir: &Path) -> Result<Partition, CommandError> {
    let bad = |file: &str, message: String| CommandError::Input(format!("{}: {message}", dir.join(file).display()));
    let json_path = dir.join("p2.json");
    let json_bytes = std::fs::read(&json_path).map_err(|e| bad("p2.json", format!("cannot read it: {e}")))?;
    let report: PartitionJson =
        serde_json::from_slice(&json_bytes).map_err(|e| bad("p2.json", format!("not JSON: {e}")))?;
    if report.command != "phase0 p2" {
        return Err(bad("p2.json", "not a report of phase0 p2".to_string()));
    }
    let text = |value: &serde_json::Value, what: &str| -> Result<String, CommandError> {
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| bad("p2.json", format!("{what} is missing")))
    };
    let prereg = PreregRef {
        path: text(&report.prereg.path, "prereg.path")?,
        sha256: text(&report.prereg.sha256, "prereg.sha256")?,
    };
    let repository = &report.report.repository;
    let path = text(&repository.path, "report.repository.path")?;
    let name = repository
        .name
        .as_str()
        .map(str::to_string)
        .or_else(|| name_of_partition_dir(dir))
        .unwrap_or_else(|| super::p2_audit::repo_name(Path::new(&path), None));
    let parquet_path = dir.join(single::FAILURES_PARQUET);
    let parquet_bytes =
        std::fs::read(&parquet_path).map_err(|e| bad(single::FAILURES_PARQUET, format!("cannot read it: {e}")))?;
    let wanted = ["bucket", "floor_flagged"];
    let (columns, mut frame) = crate::scan::input::read_parquet_columns(&parquet_bytes, &wanted)
        .ok_or_else(|| bad(single::FAILURES_PARQUET, "not a readable Parquet file".to_string()))?
        .map_err(|e| bad(single::FAILURES_PARQUET, format!("not a readable Parquet file: {e}")))?;
    if let Some(missing) = wanted.iter().find(|c| !columns.iter().any(|n| n == *c)) {
        return Err(bad(single::FAILURES_PARQUET, format!("has no column {missing:?}")));
    }
    let rows = frame.height();
    frame
        .with_column(Column::new("repo".into(), vec![name.as_str(); rows]))
        .map_err(|e| bad(single::FAILURES_PARQUET, e.to_string()))?;
    let counted = crate::experiments::frames::buckets_by_repository(&frame)
        .map_err(|e| bad(single::FAILURES_PARQUET, e.to_string()))?;
    let counts = counted.get(&name).copied().unwrap_or_default();
    // The table and the report must tell the same story: a partition whose files come from two runs is refused.
    let reported = &report.report.analysis.counts;
    for (key, value) in [
        ("total", counts.total),
        ("ci", counts.ci),
        ("human_review", counts.human_review),
        ("self_reflection", counts.self_reflection),
        ("ambiguous", counts.ambiguous),
    ] {
        let said = reported.get(key).unwrap_or(&serde_json::Value::Null);
        if said.as_u64() != Some(value) {
            return Err(bad(
                single::FAILURES_PARQUET,
                format!(
                    "counts {value} {key} failures, but p2.json says {said}: the two files come from different runs"
                ),
            ));
        }
    }
    let status = text(&report.status, "status")?;
    Ok(Partition {
        dir: dir.to_path_buf(),
        counts: RepositoryCounts {
            name,
            path,
            status,
            error_code: report.error_code.as_str().map(str::to_string),
            commits_walked: repository.commits_walked.as_u64().unwrap_or(0),
            counts,
        },
        prereg,
        generated_at: report.generated_at.as_str().map(str::to_string),
        inputs: [
            InputFile::new(&json_path, &json_bytes, None),
            InputFile::new(&parquet_path, &parquet_bytes, Some(rows as u64)),
        ],
    })
}

/// Pools the partitions `read` gives (called once the template and the as-of date are known good).
fn pool_partitions(
    read: impl FnOnce() -> Result<Vec<Partition>, CommandError>,
    args: &PoolArgs,
) -> Result<PoolOutcome, CommandError> {
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    let template = super::template(args.templates.as_deref(), "p2-pooled.md.j2", render::POOLED_TEMPLATE)?;
    let as_of = envelope::generated_at(args.as_of.as_deref(), args.source_date_epoch.as_deref(), None)
        .map_err(|e| input(&e))?;
    let partitions = read()?;
    let mut names: BTreeMap<&str, &Path> = BTreeMap::new();
    for p in &partitions {
        if let Some(first) = names.insert(&p.counts.name, &p.dir) {
            return Err(CommandError::Input(format!(
                "repository {:?} appears twice: {} and {}",
                p.counts.name,
                first.display(),
                p.dir.display()
            )));
        }
    }
    let prereg = Prereg::p2(args.prereg.as_deref()).map_err(|e| input(&e))?;
    if let Some(other) = partitions.iter().find(|p| p.prereg.sha256 != prereg.sha256) {
        return Err(CommandError::Input(format!(
            "{}: decided under {} (sha256 {}), not {} (sha256 {}): partitions are pooled only under the \
             pre-registration they were decided under (pass it with --prereg)",
            other.dir.display(),
            other.prereg.path,
            other.prereg.sha256,
            prereg.source,
            prereg.sha256
        )));
    }
    let generated_at = as_of.or_else(|| partitions.iter().filter_map(|p| p.generated_at.clone()).max());
    let partial = partitions.iter().any(|p| p.counts.status != "ok");
    let mut ordered: Vec<&Partition> = partitions.iter().collect();
    ordered.sort_by(|a, b| a.counts.name.cmp(&b.counts.name));
    let analysis = p2_pool::pool(partitions.iter().map(|p| p.counts.clone()).collect(), &prereg.spec);
    let mut report = Envelope::new(
        "phase0 pool",
        PreregRef {
            path: prereg.source.clone(),
            sha256: prereg.sha256.clone(),
        },
        generated_at,
        PooledReport {
            partitions: ordered.iter().map(|p| p.dir.display().to_string()).collect(),
            analysis,
        },
    );
    report.inputs = partitions.iter().flat_map(|p| p.inputs.iter().cloned()).collect();
    if partial {
        report.status = Status::Partial;
        report.error_code = Some("partial-repositories".to_string());
    }
    report.artifacts = vec![
        render::POOLED_JSON.into(),
        render::POOLED_MD.into(),
        render::REPOSITORIES_CSV.into(),
        render::REPOSITORIES_PARQUET.into(),
        render::FOREST_SVG.into(),
    ];
    report.sort_lists();
    let analysis = &report.report.analysis;
    let markdown = render::markdown(&template, &report, &prereg.spec).map_err(|e| input(&e))?;
    let csv = render::repositories_csv(analysis).map_err(|e| CommandError::Runtime(e.to_string()))?;
    let parquet = render::repositories_parquet(analysis).map_err(|e| CommandError::Runtime(e.to_string()))?;
    let json = report.json().map_err(CommandError::serialise(render::POOLED_JSON))?;
    let files = vec![
        (render::POOLED_JSON.to_string(), json.clone()),
        (render::POOLED_MD.to_string(), markdown.into_bytes()),
        (render::REPOSITORIES_CSV.to_string(), csv),
        (render::REPOSITORIES_PARQUET.to_string(), parquet),
        (
            render::FOREST_SVG.to_string(),
            render::forest_svg(analysis).into_bytes(),
        ),
    ];
    let written = write_report_set(&args.out, &files)?;
    Ok(PoolOutcome {
        summary: render::stdout_block(&report, &prereg.spec),
        json,
        written,
        warnings: Vec::new(),
        cache_line: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_are_named_by_name_equals_path_or_by_their_path() {
        assert_eq!(
            parse_repo("beads=/work/.mirror/steveyegge+beads/repo"),
            NamedRepo {
                name: "beads".into(),
                path: "/work/.mirror/steveyegge+beads/repo".into()
            }
        );
        assert_eq!(parse_repo("o/n=../x").name, "o/n");
        assert_eq!(
            parse_repo("/work/.mirror/steveyegge+beads/repo").name,
            "steveyegge/beads"
        );
        // Not a name before the `=`: the whole value is a path.
        assert_eq!(parse_repo("./a=b").path, PathBuf::from("./a=b"));
        assert_eq!(parse_repo("/src/x=y").path, PathBuf::from("/src/x=y"));
        assert_eq!(parse_repo("a b=c").path, PathBuf::from("a b=c"));
    }

    #[test]
    fn partition_directories_are_hive_escaped_and_read_back() {
        assert_eq!(partition_dir("steveyegge/beads"), "repo=steveyegge%2Fbeads");
        assert_eq!(partition_dir("git"), "repo=git");
        assert_eq!(partition_dir(".hidden+x.y"), "repo=%2Ehidden%2Bx.y");
        for name in ["steveyegge/beads", "git", ".hidden+x.y", "ünï"] {
            assert_eq!(
                name_of_partition_dir(Path::new(&partition_dir(name))).as_deref(),
                Some(name)
            );
        }
        assert_eq!(name_of_partition_dir(Path::new("x")), None);
        assert_eq!(name_of_partition_dir(Path::new("repo=%zz")), None);
    }

    #[test]
    fn a_repository_list_is_checked_before_any_scan() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("repos.txt");
        let a = dir.path().join("a");
        std::fs::create_dir(&a).unwrap();
        std::fs::write(&list, format!("# mine\n\nfirst={}\n{}\n", a.display(), a.display())).unwrap();
        let repos = repositories(&[], Some(&list)).unwrap();
        assert_eq!(
            repos.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["first", "a"]
        );
        std::fs::write(
            &list,
            format!("{}\nother={}\n", a.display(), dir.path().join("nope").display()),
        )
        .unwrap();
        let error = repositories(&[], Some(&list)).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "{}:2: {} does not exist",
                list.display(),
                dir.path().join("nope").display()
            )
        );
        std::fs::write(&list, format!("{}\n", a.display())).unwrap();
        let error = repositories(&[a.display().to_string()], Some(&list))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!(
                "{}:1: the repository name \"a\" is already taken by --repo {}; name them apart with NAME=PATH",
                list.display(),
                a.display()
            )
        );
        std::fs::write(&list, "# nothing\n").unwrap();
        assert!(
            repositories(&[], Some(&list))
                .unwrap_err()
                .to_string()
                .ends_with("lists no repository (one path, or NAME=PATH, per line)")
        );
    }
}
