//! Linear CSV exports, 30 or 34 columns (the latter with `Related to`, `Blocked by`, `Duplicate of`).

use std::path::Path;

use csv::StringRecord;
use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::status::category_of_status;
use super::table::{Table, cell, split_list};
use super::time::parse_instant;
use super::{Board, BoardError, Link, LinkDirection, LinkKind, Record, StatusCategory, Task};

pub(super) fn read(path: &Path, bytes: &[u8], tz: &TimeZone, board: &mut Board) -> Result<(), BoardError> {
    let table = Table::read(path, bytes)?;
    let columns = Columns {
        id: table.required(path, &["ID"])?,
        status: table.required(path, &["Status"])?,
        title: table.column(&["Title"]),
        labels: table.column(&["Labels"]),
        // Every Linear export has it; without it follow-ups cannot be dated (a base rate of 0% instead of an error).
        created: Some(table.required(path, &["Created"])?),
        started: table.column(&["Started"]),
        completed: table.column(&["Completed"]),
        canceled: table.column(&["Canceled", "Cancelled"]),
        links: [
            ("Parent issue", LinkKind::Parent, LinkDirection::Inward),
            ("Related to", LinkKind::Relates, LinkDirection::Outward),
            ("Blocked by", LinkKind::Blocks, LinkDirection::Inward),
            ("Duplicate of", LinkKind::Duplicates, LinkDirection::Outward),
        ]
        .into_iter()
        .filter_map(|(name, kind, direction)| Some((table.column(&[name])?, name, kind, direction)))
        .collect(),
    };
    if !["Related to", "Blocked by", "Duplicate of"]
        .iter()
        .any(|name| table.column(&[name]).is_some())
    {
        board.capabilities.links = false;
        board.notes.push(
            "the 30-column Linear export has no Related to, Blocked by or Duplicate of columns: links between \
             issues (other than parents) are unknown"
                .to_owned(),
        );
    }
    for (line, row) in &table.rows {
        if row.iter().all(|v| v.trim().is_empty()) {
            continue;
        }
        let task = read_row(&table, &columns, *line, row, tz)
            .map_err(|message| BoardError::invalid(path, Record::Line(*line), message))?;
        board.tasks.push(task);
    }
    Ok(())
}

struct Columns {
    id: usize,
    status: usize,
    title: Option<usize>,
    labels: Option<usize>,
    created: Option<usize>,
    started: Option<usize>,
    completed: Option<usize>,
    canceled: Option<usize>,
    links: Vec<(usize, &'static str, LinkKind, LinkDirection)>,
}

fn read_row(table: &Table, columns: &Columns, line: u64, row: &StringRecord, tz: &TimeZone) -> Result<Task, String> {
    let id = cell(row, Some(columns.id));
    if id.is_empty() {
        return Err(format!("column {:?} is empty", table.headers[columns.id]));
    }
    let date = |column: Option<usize>| -> Result<Option<Timestamp>, String> {
        let value = cell(row, column);
        match (column, value) {
            (_, "") | (None, _) => Ok(None),
            (Some(i), value) => parse_instant(value, tz).map(Some).ok_or_else(|| {
                format!(
                    "column {:?}: {value:?} is not a timestamp (expected e.g. 2024-05-14T08:53:33Z)",
                    table.headers[i]
                )
            }),
        }
    };
    let mut task = Task::new(id, Record::Line(line));
    task.title = cell(row, columns.title).to_owned();
    task.status = cell(row, Some(columns.status)).to_owned();
    task.labels = split_list(cell(row, columns.labels)).map(str::to_owned).collect();
    task.created = date(columns.created)?;
    let started = date(columns.started)?;
    let completed = date(columns.completed)?;
    let canceled = date(columns.canceled)?;
    let by_name = category_of_status(&task.status);
    task.status_category = if canceled.is_some() {
        StatusCategory::Cancelled
    } else if completed.is_some() {
        StatusCategory::Done
    } else {
        match by_name {
            StatusCategory::Unknown if started.is_some() => StatusCategory::InProgress,
            StatusCategory::Unknown => StatusCategory::Todo,
            category => category,
        }
    };
    task.completed = match task.status_category {
        StatusCategory::Cancelled => canceled,
        StatusCategory::Done => completed,
        _ => None,
    };
    for &(column, name, kind, direction) in &columns.links {
        for target in split_list(cell(row, Some(column))) {
            task.links.push(Link {
                kind,
                name: name.to_owned(),
                direction,
                target: target.to_owned(),
            });
        }
    }
    Ok(task)
}
