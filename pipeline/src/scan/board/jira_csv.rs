//! Jira CSV exports: raw records, columns by name (repeated `Labels` and link columns), dates in `--tz`.

use std::collections::HashMap;
use std::path::Path;

use csv::StringRecord;
use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::status::jira_status;
use super::table::{Table, cell, split_list};
use super::time::parse_jira_date;
use super::{BoardError, Link, LinkDirection, LinkKind, Record, Task};

const INWARD: &str = "inward issue link (";
const OUTWARD: &str = "outward issue link (";

pub(super) fn read(path: &Path, bytes: &[u8], tz: &TimeZone) -> Result<Vec<Task>, BoardError> {
    let table = Table::read(path, bytes)?;
    let key = table.required(path, &["Issue key", "Work item key"])?;
    let status = table.required(path, &["Status"])?;
    // Every Jira export has these; without them follow-ups and completions cannot be dated, and a run would report
    // a base rate of 0% instead of saying what it cannot see.
    table.required(path, &["Created"])?;
    table.required(path, &["Resolved", "Status Category Changed"])?;
    let columns = Columns {
        summary: table.column(&["Summary"]),
        issue_id: table.column(&["Issue id", "Work item id"]),
        kind: table.column(&["Issue Type", "Work item Type", "Work Type"]),
        category: table.column(&["Status Category"]),
        resolution: table.column(&["Resolution"]),
        created: table.column(&["Created"]),
        resolved: table.column(&["Resolved"]),
        category_changed: table.column(&["Status Category Changed"]),
        parent: table.column(&["Parent", "Parent key", "Parent id"]),
        labels: table.columns("Labels"),
        links: table
            .headers
            .iter()
            .enumerate()
            .filter_map(|(i, header)| {
                let lower = header.to_ascii_lowercase();
                let (rest, direction) = if lower.starts_with(INWARD) {
                    (&header[INWARD.len()..], LinkDirection::Inward)
                } else if lower.starts_with(OUTWARD) {
                    (&header[OUTWARD.len()..], LinkDirection::Outward)
                } else {
                    return None;
                };
                let name = rest.strip_suffix(')').unwrap_or(rest).trim().to_owned();
                Some((i, name, direction))
            })
            .collect(),
    };

    // Issue ids to keys, to resolve a `Parent` given as an id.
    let keys_by_id: HashMap<&str, &str> = match columns.issue_id {
        Some(id) => table
            .rows
            .iter()
            .map(|(_, row)| (cell(row, Some(id)), cell(row, Some(key))))
            .filter(|(id, key)| !id.is_empty() && !key.is_empty())
            .collect(),
        None => HashMap::new(),
    };

    let mut tasks = Vec::with_capacity(table.rows.len());
    for (line, row) in &table.rows {
        if row.iter().all(|v| v.trim().is_empty()) {
            continue;
        }
        let task = read_row(&table, &columns, key, status, *line, row, tz, &keys_by_id)
            .map_err(|message| BoardError::invalid(path, Record::Line(*line), message))?;
        tasks.push(task);
    }
    Ok(tasks)
}

struct Columns {
    summary: Option<usize>,
    issue_id: Option<usize>,
    kind: Option<usize>,
    category: Option<usize>,
    resolution: Option<usize>,
    created: Option<usize>,
    resolved: Option<usize>,
    category_changed: Option<usize>,
    parent: Option<usize>,
    labels: Vec<usize>,
    links: Vec<(usize, String, LinkDirection)>,
}

#[allow(clippy::too_many_arguments)]
fn read_row(
    table: &Table,
    columns: &Columns,
    key: usize,
    status: usize,
    line: u64,
    row: &StringRecord,
    tz: &TimeZone,
    keys_by_id: &HashMap<&str, &str>,
) -> Result<Task, String> {
    let id = cell(row, Some(key));
    if id.is_empty() {
        return Err(format!("column {:?} is empty", table.headers[key]));
    }
    let date = |column: Option<usize>| -> Result<Option<Timestamp>, String> {
        let value = cell(row, column);
        match (column, value) {
            (_, "") | (None, _) => Ok(None),
            (Some(i), value) => parse_jira_date(value, tz).map(Some).ok_or_else(|| {
                format!(
                    "column {:?}: {value:?} is not a date (expected e.g. 21/Nov/25 10:32 AM)",
                    table.headers[i]
                )
            }),
        }
    };

    let mut task = Task::new(id, Record::Line(line));
    task.title = cell(row, columns.summary).to_owned();
    task.kind = Some(cell(row, columns.kind))
        .filter(|k| !k.is_empty())
        .map(str::to_owned);
    task.status = cell(row, Some(status)).to_owned();
    task.resolution = Some(cell(row, columns.resolution))
        .filter(|r| !r.is_empty() && !r.eq_ignore_ascii_case("unresolved"))
        .map(str::to_owned);
    let category = Some(cell(row, columns.category)).filter(|c| !c.is_empty());
    task.status_category = jira_status(&task.status, category, task.resolution.as_deref());
    task.created = date(columns.created)?;
    let resolved = date(columns.resolved)?;
    let changed = date(columns.category_changed)?;
    if task.status_category.is_closed() {
        task.completed = resolved.or(changed);
    }
    task.labels = columns
        .labels
        .iter()
        .map(|&i| cell(row, Some(i)))
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    for (i, name, direction) in &columns.links {
        for target in split_list(cell(row, Some(*i))) {
            task.links.push(Link {
                kind: LinkKind::from_name(name),
                name: name.clone(),
                direction: *direction,
                target: target.to_owned(),
            });
        }
    }
    let parent = cell(row, columns.parent);
    if !parent.is_empty() {
        task.links.push(Link {
            kind: LinkKind::Parent,
            name: "Parent".to_owned(),
            direction: LinkDirection::Inward,
            target: keys_by_id.get(parent).copied().unwrap_or(parent).to_owned(),
        });
    }
    Ok(task)
}
