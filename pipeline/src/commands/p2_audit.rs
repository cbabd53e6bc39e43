//! `phase0 p2 audit` (write a sample sheet for a reader) and `phase0 p2 --audit SHEET` (read a filled one back):
//! the I/O around [`crate::experiments::p2_audit`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::CommandError;
use super::p2::{P2Args, Scanned, scan};
use crate::experiments::p2::{self, P2Analysis, P2Spec, report_subject};
pub use crate::experiments::p2_audit::P2Audit;
use crate::experiments::p2_audit::{self as audit, ReadRow, SheetRow};
use crate::scan::commits::{CommitDiff, DiffDetail, DiffRequest, ObjectId};
use crate::scan::git;

/// The repository's name in sheets: `--name`, else from its path: `…/owner+name/repo` (this project's mirrors)
/// or `…/name.git` or `…/name` give `owner/name` or `name`.
pub fn repo_name(path: &Path, name: Option<&str>) -> String {
    if let Some(name) = name {
        return name.to_string();
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut parts: Vec<String> = absolute
        .components()
        .filter_map(|c| c.as_os_str().to_str().map(str::to_string))
        .filter(|c| c != "." && c != "/")
        .collect();
    if matches!(parts.last().map(String::as_str), Some("repo" | ".git")) {
        parts.pop();
    }
    let last = parts.pop().unwrap_or_else(|| "repository".to_string());
    last.trim_end_matches(".git").replace('+', "/")
}

/// Reads a sheet given to `--audit`.
pub fn read_sheet(path: &Path) -> Result<(PathBuf, Vec<ReadRow>), CommandError> {
    let rows = audit::read_sheet_file(path).map_err(|e| CommandError::Input(e.to_string()))?;
    Ok((path.to_path_buf(), rows))
}

/// Evaluates a read sheet against the run's failures and decides the verdict on the corrected share.
pub fn read_back(
    path: PathBuf,
    rows: Vec<ReadRow>,
    repo: &Path,
    name: Option<&str>,
    analysis: &mut P2Analysis,
    spec: &P2Spec,
) -> P2Audit {
    let matched = audit::match_run(rows, &repo_name(repo, name), &analysis.failures);
    let summary = audit::evaluate(
        vec![path.display().to_string()],
        &matched.rows,
        &matched.population,
        matched.notes,
        &spec.audit,
        spec.alpha,
    );
    let raw_verdict = analysis.verdict.clone();
    analysis.verdict = audit::decide_on_corrected(&raw_verdict, &summary.corrected, analysis.threshold);
    P2Audit { summary, raw_verdict }
}

#[derive(Debug, Clone, Default)]
pub struct P2AuditArgs {
    pub p2: P2Args,
    /// Overrides `[audit] per_stratum`.
    pub per_stratum: Option<usize>,
    pub sheet: PathBuf,
}

/// What `phase0 p2 audit` wrote.
#[derive(Debug)]
pub struct P2AuditOutcome {
    pub summary: String,
    pub written: Vec<PathBuf>,
}

/// `12 files +340 -12: a.rs, b.rs, c.rs, d.rs, e.rs, …`: what a reader needs to find the change's size at a glance.
fn diffstat(diff: Option<&CommitDiff>) -> String {
    const PATHS: usize = 5;
    let Some(diff) = diff else {
        return String::new();
    };
    let added: u64 = diff.files.iter().map(|f| u64::from(f.lines_added)).sum();
    let removed: u64 = diff.files.iter().map(|f| u64::from(f.lines_removed)).sum();
    let mut paths: Vec<&str> = diff.files.iter().take(PATHS).map(|f| f.path.as_str()).collect();
    if diff.files.len() > PATHS {
        paths.push("…");
    }
    let files = diff.files.len();
    let text = format!(
        "{files} file{} +{added} -{removed}: {}",
        if files == 1 { "" } else { "s" },
        paths.join(", ")
    );
    capture::redact(&text).into_owned()
}

/// The link evidence a sheet shows: what the link rests on (`sha`, `subject`, `lines`, `adjacent`, `files`, `none`).
fn evidence(failure: &p2::Failure) -> &'static str {
    failure.evidence.id()
}

pub fn write(args: &P2AuditArgs) -> Result<P2AuditOutcome, CommandError> {
    let input = |error: &dyn std::fmt::Display| CommandError::Input(error.to_string());
    if let Some(refused) = crate::prereg::per_stratum_refused(args.per_stratum) {
        return Err(input(&refused));
    }
    let Scanned {
        saves,
        prereg,
        repo,
        history,
        known,
        analysis,
        ..
    } = scan(&args.p2)?;
    // The sheet does not depend on the caches; what they saved is not reported here.
    let _ = saves.save(&history);
    let mut spec = prereg.spec.audit.clone();
    if let Some(n) = args.per_stratum {
        spec.per_stratum = n;
    }
    let name = repo_name(&args.p2.repo, args.p2.name.as_deref());
    let sampled = audit::sample(&analysis.failures, &name, &spec);

    let mut ids: Vec<ObjectId> = Vec::new();
    for (failure, _, _) in &sampled {
        for sha in [Some(failure.remedy.as_str()), failure.failing.as_deref()]
            .into_iter()
            .flatten()
        {
            ids.extend(ObjectId::from_hex(sha.as_bytes()).ok());
        }
    }
    ids.sort_unstable();
    ids.dedup();
    let requests: Vec<DiffRequest> = ids.iter().map(|&id| DiffRequest::whole(id)).collect();
    // A commit whose diff needs a missing object (a partial clone) gets an empty diffstat, as in the report.
    let diffs: BTreeMap<String, CommitDiff> = git::diffs_skipping_missing(&repo, &known, &requests, DiffDetail::Lines)
        .map_err(|e| input(&e))?
        .0
        .into_iter()
        .map(|d| (d.id.to_string(), d))
        .collect();
    let subjects: BTreeMap<String, &str> = history
        .commits
        .iter()
        .map(|c| (c.id.to_string(), c.subject.as_str()))
        .collect();
    let subject = |sha: Option<&str>| {
        sha.and_then(|s| subjects.get(s))
            .map(|s| report_subject(s))
            .unwrap_or_default()
    };
    let rows: Vec<SheetRow> = sampled
        .iter()
        .map(|(failure, stratum, size)| SheetRow {
            repo: name.clone(),
            remedy: failure.remedy.clone(),
            failing: audit::failing_key(failure).to_string(),
            detection: failure.link_rule.id().to_string(),
            evidence: evidence(failure).to_string(),
            class_rule: failure.rule.id().to_string(),
            tool_bucket: failure.bucket.id().to_string(),
            remedy_subject: subject(Some(&failure.remedy)),
            failing_subject: subject(failure.failing.as_deref()),
            remedy_diffstat: diffstat(diffs.get(&failure.remedy)),
            failing_diffstat: diffstat(failure.failing.as_ref().and_then(|f| diffs.get(f))),
            stratum: stratum.id(),
            stratum_size: *size,
            is_failure: String::new(),
            failing_ok: String::new(),
            bucket: String::new(),
            note: String::new(),
        })
        .collect();
    let bytes = audit::write_sheet(&rows).map_err(|e| input(&e))?;
    let written = super::write_file_atomically(&args.sheet, bytes)?;
    let strata = rows
        .iter()
        .map(|r| &r.stratum)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let summary = format!(
        "P2 audit sheet — {} of {} failures of {name} in {strata} strata (tool bucket × detection), at most {} per \
         stratum, seed {}\n  written         {}\n  next            fill is_failure, failing_ok, bucket, note; then \
         `phase0 p2 --audit {}` with the same history options\n",
        rows.len(),
        analysis.failures.len(),
        spec.per_stratum,
        spec.seed,
        args.sheet.display(),
        args.sheet.display(),
    );
    Ok(P2AuditOutcome { summary, written })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_names_from_paths() {
        let name = |p: &str| repo_name(Path::new(p), None);
        assert_eq!(name("/work/.mirror/vitejs+vite/repo"), "vitejs/vite");
        assert_eq!(name("/src/git.git"), "git");
        assert_eq!(name("/src/cargo/"), "cargo");
        assert_eq!(name("/src/cargo/.git"), "cargo");
        assert_eq!(repo_name(Path::new("."), Some("o/n")), "o/n");
    }
}
