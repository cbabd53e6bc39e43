//! The experiments' per-row tables as polars DataFrames (issue 21): P2's failures and P3's completed tasks, with
//! the columns of `p2-failures.csv` and `p3-tasks.csv` in the same order and the same rows, typed. The report layer
//! writes them as Parquet (`report::parquet`); docs/p2.md and docs/p3.md document each schema.
//!
//! Every column is built in one chunk, so that the Parquet bytes depend on the rows alone.

use polars::prelude::*;

use super::p2::Failure;
use super::p3::{P3Analysis, TaskRow};

/// A frame could not be built (a polars error; not the input's fault).
#[derive(Debug, thiserror::Error)]
#[error("{table}: cannot build the table: {source}")]
pub struct FrameError {
    pub table: &'static str,
    pub source: PolarsError,
}

/// The id a serde enum serialises to (`fix.files`, `ci.paths`, `code`), as `p2-failures.csv` writes it.
fn serde_id(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// P2's failures, one row per failure in report order (remedies newest first), the columns of `p2-failures.csv`:
/// `remedy`, `failing`, `failing_ref` (String, the last two nullable), `kind`, `link_rule`, `evidence` (String),
/// `evidence_lines` (UInt32, nullable), `bucket`, `rule` (String), `time_to_remedy_seconds` (Int64, nullable),
/// `failing_surface` (String, nullable), `floor_flagged` (Boolean, nullable), `subject` (String, redacted).
pub fn p2_failures(failures: &[Failure]) -> Result<DataFrame, FrameError> {
    let error = |source| FrameError {
        table: "p2-failures",
        source,
    };
    let strings = |name: &str, f: &dyn Fn(&Failure) -> &str| -> Column {
        Column::new(name.into(), failures.iter().map(f).collect::<Vec<&str>>())
    };
    let optional = |name: &str, f: &dyn Fn(&Failure) -> Option<&str>| -> Column {
        Column::new(name.into(), failures.iter().map(f).collect::<Vec<Option<&str>>>())
    };
    let columns = vec![
        strings("remedy", &|f| &f.remedy),
        optional("failing", &|f| f.failing.as_deref()),
        optional("failing_ref", &|f| f.failing_ref.as_deref()),
        strings("kind", &|f| f.kind.id()),
        Column::new(
            "link_rule".into(),
            failures.iter().map(|f| serde_id(f.link_rule)).collect::<Vec<String>>(),
        ),
        strings("evidence", &|f| f.evidence.id()),
        Column::new(
            "evidence_lines".into(),
            failures.iter().map(|f| f.evidence_lines).collect::<Vec<Option<u32>>>(),
        ),
        strings("bucket", &|f| f.bucket.id()),
        Column::new(
            "rule".into(),
            failures.iter().map(|f| serde_id(f.rule)).collect::<Vec<String>>(),
        ),
        Column::new(
            "time_to_remedy_seconds".into(),
            failures
                .iter()
                .map(|f| f.time_to_remedy_seconds)
                .collect::<Vec<Option<i64>>>(),
        ),
        Column::new(
            "failing_surface".into(),
            failures
                .iter()
                .map(|f| f.failing_surface.map(serde_id))
                .collect::<Vec<Option<String>>>(),
        ),
        Column::new(
            "floor_flagged".into(),
            failures.iter().map(|f| f.floor_flagged).collect::<Vec<Option<bool>>>(),
        ),
        strings("subject", &|f| &f.subject),
    ];
    DataFrame::new(failures.len(), columns).map_err(error)
}

/// P3's completed tasks (eligible or censored), by input then id, the columns of `p3-tasks.csv`: `input` (String,
/// the input file's path as the report names it), `id` (String), `completed` (String, the first completion,
/// RFC 3339 in UTC), `censored` (Boolean), `signals` (List of String, the signal ids in report order; the CSV
/// joins them with `;`).
pub fn p3_tasks(analysis: &P3Analysis) -> Result<DataFrame, FrameError> {
    let error = |source| FrameError {
        table: "p3-tasks",
        source,
    };
    let tasks = &analysis.tasks;
    let inputs: Vec<String> = analysis.inputs.iter().map(|input| input.path.clone()).collect();
    let input = Column::new(
        "input".into(),
        tasks
            .iter()
            .map(|t| inputs.get(t.input).cloned().unwrap_or_else(|| t.input.to_string()))
            .collect::<Vec<String>>(),
    );
    let id = Column::new("id".into(), tasks.iter().map(|t| t.id.as_str()).collect::<Vec<&str>>());
    let completed = Column::new(
        "completed".into(),
        tasks.iter().map(|t| t.completed.as_str()).collect::<Vec<&str>>(),
    );
    let censored = Column::new(
        "censored".into(),
        tasks.iter().map(|t| t.censored).collect::<Vec<bool>>(),
    );
    let values: usize = tasks.iter().map(|t| t.signals.len()).sum();
    let mut signals = ListStringChunkedBuilder::new("signals".into(), tasks.len(), values);
    for task in tasks {
        signals.append_values_iter(task.signals.iter().copied());
    }
    let signals = signals.finish().into_series().into_column();
    DataFrame::new(tasks.len(), vec![input, id, completed, censored, signals]).map_err(error)
}

/// The eligible (not censored) tasks carrying each signal, as a polars group-by: the tasks' `censored` and
/// `signals` columns, the censored rows filtered out, the signal lists exploded (a task without signals leaves no
/// row), grouped by signal and counted. A task counts once per signal it carries. Only signals some eligible task
/// carries appear, in no particular order.
pub fn eligible_tasks_by_signal(tasks: &[TaskRow]) -> PolarsResult<Vec<(String, u64)>> {
    let censored: BooleanChunked = tasks.iter().map(|t| t.censored).collect();
    let mut signals = ListStringChunkedBuilder::new("signal".into(), tasks.len(), tasks.len());
    for task in tasks {
        signals.append_values_iter(task.signals.iter().copied());
    }
    let frame = DataFrame::new(
        tasks.len(),
        vec![
            censored.clone().with_name("censored".into()).into_column(),
            signals.finish().into_series().into_column(),
        ],
    )?;
    let exploded = frame.filter(&!&censored)?.explode(
        ["signal"],
        ExplodeOptions {
            empty_as_null: false,
            keep_nulls: false,
        },
    )?;
    let counted = exploded.group_by(["signal"])?.select(["censored"]).count()?;
    let keys = counted.column("signal")?.str()?;
    let counts = counted.column("censored_count")?.idx()?;
    Ok(keys
        .iter()
        .zip(counts.iter())
        .filter_map(|(key, count)| Some((key?.to_string(), u64::from(count?))))
        .collect())
}

/// The rows of each distinct value of `keys` (`None`: the value is absent; those rows are one group), as a polars
/// group-by over a one-column frame: the breakdowns' groups (P1 `--by`, P2 by surface and by kind), whose
/// statistics the kernels then compute over each group's rows. Rows ascending within a group; groups in no
/// particular order (callers sort them as their reports list them).
pub fn rows_by_key(keys: &[Option<&str>]) -> PolarsResult<Vec<(Option<String>, Vec<usize>)>> {
    let frame = DataFrame::new(keys.len(), vec![Column::new("key".into(), keys.to_vec())])?;
    let grouped = frame.group_by(["key"])?;
    let values = frame.column("key")?.str()?;
    let mut out = Vec::new();
    for group in grouped.get_groups().iter() {
        let mut rows: Vec<usize> = match group {
            GroupsIndicator::Idx((_, all)) => all.iter().map(|&row| row as usize).collect(),
            GroupsIndicator::Slice([first, len]) => (first as usize..(first + len) as usize).collect(),
        };
        rows.sort_unstable();
        let Some(&first) = rows.first() else { continue };
        out.push((values.get(first).map(str::to_string), rows));
    }
    Ok(out)
}

/// Bucket counts per repository from the failure tables of many (`phase0 pool`, `phase0 p2 --repo A --repo B`):
/// `failures` holds a `repo` column (String) beside each table's `bucket` (String) and `floor_flagged` (Boolean,
/// nullable). Two polars group-bys: rows by repository and bucket, and the rows the risk floor flagged by
/// repository. A bucket id this version does not know is an error naming it (a table from another tool).
pub fn buckets_by_repository(
    failures: &DataFrame,
) -> Result<std::collections::BTreeMap<String, super::p2::Buckets>, FrameError> {
    use super::p2::{Bucket, Buckets};
    let error = |source| FrameError {
        table: "p2-failures",
        source,
    };
    let mut by_repo: std::collections::BTreeMap<String, Buckets> = std::collections::BTreeMap::new();
    let counted = failures
        .group_by(["repo", "bucket"])
        .and_then(|g| g.select(["floor_flagged"]).count())
        .map_err(error)?;
    let repos = counted.column("repo").and_then(|c| c.str()).map_err(error)?;
    let buckets = counted.column("bucket").and_then(|c| c.str()).map_err(error)?;
    let counts = counted
        .column("floor_flagged_count")
        .and_then(|c| c.idx())
        .map_err(error)?;
    for ((repo, bucket), count) in repos.iter().zip(buckets.iter()).zip(counts.iter()) {
        let (Some(repo), Some(count)) = (repo, count) else {
            continue;
        };
        let count = u64::from(count);
        let entry = by_repo.entry(repo.to_string()).or_default();
        match Bucket::ALL.iter().find(|b| Some(b.id()) == bucket) {
            Some(Bucket::Ci) => entry.ci += count,
            Some(Bucket::HumanReview) => entry.human_review += count,
            Some(Bucket::SelfReflection) => entry.self_reflection += count,
            Some(Bucket::Ambiguous) => entry.ambiguous += count,
            None => {
                return Err(error(PolarsError::ComputeError(
                    format!("repository {repo}: unknown bucket {:?}", bucket.unwrap_or("null")).into(),
                )));
            }
        }
        entry.total += count;
        entry.classified = entry.total - entry.ambiguous;
    }
    let flags = failures.column("floor_flagged").and_then(|c| c.bool()).map_err(error)?;
    let flagged = failures
        .filter(&flags.fill_null_with_values(false).map_err(error)?)
        .map_err(error)?;
    let flagged = flagged
        .group_by(["repo"])
        .and_then(|g| g.select(["bucket"]).count())
        .map_err(error)?;
    let repos = flagged.column("repo").and_then(|c| c.str()).map_err(error)?;
    let counts = flagged.column("bucket_count").and_then(|c| c.idx()).map_err(error)?;
    for (repo, count) in repos.iter().zip(counts.iter()) {
        if let (Some(repo), Some(count)) = (repo, count) {
            by_repo.entry(repo.to_string()).or_default().floor_flagged += u64::from(count);
        }
    }
    Ok(by_repo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, censored: bool, signals: &[&'static str]) -> TaskRow {
        TaskRow {
            input: 0,
            id: id.into(),
            completed: "2026-01-01T00:00:00Z".into(),
            censored,
            signals: signals.to_vec(),
        }
    }

    #[test]
    fn buckets_by_repository_counts_every_row_whether_the_floor_saw_it_or_not() {
        // A failure without a failing change has no floor flag (null): it still counts in its bucket.
        let frame = DataFrame::new(
            5,
            vec![
                Column::new("repo".into(), ["a", "a", "a", "b", "b"]),
                Column::new(
                    "bucket".into(),
                    ["ambiguous", "ambiguous", "ci", "self-reflection", "human-review"],
                ),
                Column::new(
                    "floor_flagged".into(),
                    [None, None, Some(true), Some(false), Some(true)],
                ),
            ],
        )
        .unwrap();
        let counted = buckets_by_repository(&frame).unwrap();
        let a = counted["a"];
        assert_eq!(
            (a.total, a.ambiguous, a.ci, a.classified, a.floor_flagged),
            (3, 2, 1, 1, 1)
        );
        let b = counted["b"];
        assert_eq!(
            (
                b.total,
                b.self_reflection,
                b.human_review,
                b.classified,
                b.floor_flagged
            ),
            (2, 1, 1, 2, 1)
        );
        let unknown = DataFrame::new(
            1,
            vec![
                Column::new("repo".into(), ["a"]),
                Column::new("bucket".into(), ["gate"]),
                Column::new("floor_flagged".into(), [Some(true)]),
            ],
        )
        .unwrap();
        assert!(
            buckets_by_repository(&unknown)
                .unwrap_err()
                .to_string()
                .contains("unknown bucket \"gate\"")
        );
    }

    #[test]
    fn rows_are_grouped_by_key_with_the_absent_ones_together() {
        let mut groups = rows_by_key(&[Some("b"), None, Some("a"), Some("b"), None]).unwrap();
        groups.sort();
        assert_eq!(
            groups,
            [
                (None, vec![1, 4]),
                (Some("a".to_string()), vec![2]),
                (Some("b".to_string()), vec![0, 3]),
            ]
        );
        assert_eq!(rows_by_key(&[]).unwrap(), []);
    }

    #[test]
    fn eligible_tasks_are_counted_once_per_signal_they_carry() {
        let tasks = [
            task("A", false, &["wrong.follow-up", "wrong.reopened"]),
            task("B", false, &["wrong.reopened"]),
            task("C", false, &[]),
            // Censored: its signals are not counted.
            task("D", true, &["wrong.reopened", "right.explicit"]),
            task("E", false, &["right.explicit"]),
        ];
        let mut counted = eligible_tasks_by_signal(&tasks).unwrap();
        counted.sort();
        assert_eq!(
            counted,
            [
                ("right.explicit".to_string(), 1),
                ("wrong.follow-up".to_string(), 1),
                ("wrong.reopened".to_string(), 2),
            ]
        );
        assert_eq!(eligible_tasks_by_signal(&[]).unwrap(), []);
        assert_eq!(
            eligible_tasks_by_signal(&[task("D", true, &["wrong.reopened"])]).unwrap(),
            []
        );
    }
}
