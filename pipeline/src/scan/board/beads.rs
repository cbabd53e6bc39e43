//! beads `.beads/issues.jsonl`: one issue per line, dependencies as links.

use std::path::Path;

use jiff::tz::TimeZone;
use serde_json::Value;

use super::json::{Obj, invalid_json};
use super::lines::{CHUNK_SIZE, parse_lines};
use super::status::{category_of_status, reason_cancels};
use super::{BoardError, Link, LinkDirection, LinkKind, Record, StatusCategory, Task};

const EXAMPLE: &str = "2025-11-03T09:15:00+01:00";

pub(super) fn read(path: &Path, bytes: &[u8], tz: &TimeZone) -> Result<Vec<Task>, BoardError> {
    parse_lines(bytes, CHUNK_SIZE, |number, text| {
        let value: Value = serde_json::from_str(text).map_err(|e| invalid_json(&e))?;
        // Beads 1.x writes other records into the export beside its issues (`"_type": "memory"`: an agent's
        // remembered notes, with no id): they are not tasks.
        if value
            .get("_type")
            .and_then(Value::as_str)
            .is_some_and(|kind| kind != "issue")
        {
            return Ok(None);
        }
        read_issue(&value, number, tz).map(Some)
    })
    .map_err(|(line, message)| BoardError::invalid(path, Record::Line(line), message))
}

fn read_issue(value: &Value, number: u64, tz: &TimeZone) -> Result<Task, String> {
    let issue = Obj::root(value)?;
    let id = issue.req_str("id")?;
    let mut task = Task::new(id, Record::Line(number));
    task.title = issue.str("title")?.unwrap_or_default().to_owned();
    task.kind = issue.text("issue_type")?.map(str::to_owned);
    task.status = issue.str("status")?.unwrap_or_default().to_owned();
    task.resolution = issue.text("close_reason")?.map(str::to_owned);
    task.status_category = status_category(&task.status, task.resolution.as_deref());
    task.created = issue.time("created_at", tz, EXAMPLE)?;
    // Read leniently: only histories use it, and a version must not be refused for it. Some tools write a
    // camelCase `updatedAt` beside a `updated_at` they never touch again (45ck/Portarium): the later one holds.
    let updated_at = issue.time("updated_at", tz, EXAMPLE).ok().flatten();
    let updated_camel = issue.time("updatedAt", tz, EXAMPLE).ok().flatten();
    task.updated = updated_at.max(updated_camel);
    let closed = issue.time("closed_at", tz, EXAMPLE)?;
    if task.status_category.is_closed() {
        task.completed = closed;
    }
    task.labels = issue.strings("labels")?;
    for (i, item) in issue.arr("dependencies")?.unwrap_or_default().iter().enumerate() {
        // Some exporters of beads JSONL (`"schema_version": 1`, agentic-research's repositories) write a dependency
        // as the bare id it depends on: a link with no type, as an object without `type` would be.
        let (target, name) = if let Value::String(target) = item {
            let target = target.trim();
            if target.is_empty() || target == id {
                continue;
            }
            (target.to_owned(), "")
        } else {
            let dependency = Obj::element(item, &format!("{}[{i}]", issue.name("dependencies")))?;
            let of = dependency.text("issue_id")?;
            if of.is_some_and(|of| of != id) {
                continue; // a dependency of another issue
            }
            let target = dependency
                .id("depends_on_id")?
                .ok_or_else(|| dependency.missing("depends_on_id"))?;
            (target, dependency.str("type")?.unwrap_or_default())
        };
        let (kind, direction) = match name {
            "blocks" => (LinkKind::Blocks, LinkDirection::Inward),
            "parent-child" => (LinkKind::Parent, LinkDirection::Inward),
            "related" => (LinkKind::Relates, LinkDirection::Outward),
            "discovered-from" => (LinkKind::FollowUp, LinkDirection::Inward),
            "duplicates" | "duplicate-of" => (LinkKind::Duplicates, LinkDirection::Outward),
            other => (LinkKind::from_name(other), LinkDirection::Outward),
        };
        task.links.push(Link {
            kind,
            name: name.to_owned(),
            direction,
            target,
        });
    }
    Ok(task)
}

/// beads statuses: open, in_progress, blocked, closed (Cancelled when the close reason cancels), deferred,
/// pinned, hooked, tombstone; anything else by keywords.
fn status_category(status: &str, close_reason: Option<&str>) -> StatusCategory {
    match status {
        "open" | "deferred" | "pinned" | "hooked" => StatusCategory::Todo,
        "in_progress" | "blocked" => StatusCategory::InProgress,
        "tombstone" => StatusCategory::Cancelled,
        "closed" if close_reason.is_some_and(reason_cancels) => StatusCategory::Cancelled,
        "closed" => StatusCategory::Done,
        other => category_of_status(other),
    }
}
