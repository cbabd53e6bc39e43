//! Jira REST search responses with `expand=changelog`: `{"issues": [{"key", "fields", "changelog"}]}`.

use std::collections::HashMap;
use std::path::Path;

use jiff::tz::TimeZone;
use serde_json::Value;

use super::json::{Obj, parse_document};
use super::status::{category_of_status, jira_category, jira_status};
use super::{
    Board, BoardError, Link, LinkDirection, LinkKind, Record, StatusCategory, StatusChange, Task,
    closed_at_from_history, reopens,
};

const EXAMPLE: &str = "2025-11-03T09:15:00.000+0100";

pub(super) fn read(path: &Path, bytes: &[u8], tz: &TimeZone, board: &mut Board) -> Result<(), BoardError> {
    let doc = parse_document(path, bytes)?;
    let root = Obj::root(&doc).map_err(|m| BoardError::format(path, format!("not a Jira REST response: {m}")))?;
    let issues = match root.arr("issues") {
        Ok(Some(issues)) => issues,
        Ok(None) => {
            return Err(BoardError::format(
                path,
                "no \"issues\" array: not a Jira REST search response",
            ));
        }
        Err(message) => return Err(BoardError::format(path, message)),
    };

    // The category of each status name that is some issue's current status (histories only name statuses).
    let mut categories: HashMap<String, StatusCategory> = HashMap::new();
    for issue in issues {
        let status = issue.pointer("/fields/status/name").and_then(Value::as_str);
        let category = issue
            .pointer("/fields/status/statusCategory/key")
            .or_else(|| issue.pointer("/fields/status/statusCategory/name"))
            .and_then(Value::as_str)
            .and_then(jira_category);
        if let (Some(status), Some(category)) = (status, category) {
            categories.entry(status.to_lowercase()).or_insert(category);
        }
    }
    let category_of = |name: &str| {
        categories
            .get(&name.to_lowercase())
            .copied()
            .unwrap_or_else(|| category_of_status(name))
    };

    let mut without_changelog = 0;
    for (index, issue) in issues.iter().enumerate() {
        let record = Record::Item { array: "issues", index };
        let task = read_issue(issue, record, tz, &category_of)
            .map_err(|message| BoardError::invalid(path, record, message))?;
        without_changelog += usize::from(task.history.is_none());
        board.tasks.push(task);
    }
    if without_changelog > 0 {
        board.notes.push(format!(
            "{without_changelog} of {} issues have no changelog (export with expand=changelog): their status \
             history and reopens are unknown",
            issues.len()
        ));
    }
    Ok(())
}

fn read_issue(
    value: &Value,
    record: Record,
    tz: &TimeZone,
    category_of: &impl Fn(&str) -> StatusCategory,
) -> Result<Task, String> {
    let issue = Obj::root(value)?;
    let key = issue.req_str("key")?;
    let fields = issue.obj("fields")?.ok_or_else(|| issue.missing("fields"))?;
    let mut task = Task::new(key, record);
    task.title = fields.str("summary")?.unwrap_or_default().to_owned();
    task.kind = match fields.obj("issuetype")? {
        Some(kind) => kind.text("name")?.map(str::to_owned),
        None => None,
    };
    let status = fields.obj("status")?.ok_or_else(|| fields.missing("status"))?;
    task.status = status.req_str("name")?.to_owned();
    let category = match status.obj("statusCategory")? {
        Some(category) => category.text("key")?.or(category.text("name")?),
        None => None,
    };
    task.resolution = match fields.obj("resolution")? {
        Some(resolution) => resolution.text("name")?.map(str::to_owned),
        None => None,
    };
    task.status_category = jira_status(&task.status, category, task.resolution.as_deref());
    task.created = fields.time("created", tz, EXAMPLE)?;
    let resolved = fields.time("resolutiondate", tz, EXAMPLE)?;
    let changed = fields.time("statuscategorychangedate", tz, EXAMPLE)?;
    task.labels = fields.strings("labels")?;

    for link in fields.objects("issuelinks")? {
        let kind = link.obj("type")?;
        let name = match &kind {
            Some(kind) => kind.text("name")?.unwrap_or_default(),
            None => "",
        };
        let mut link_kind = LinkKind::from_name(name);
        if link_kind == LinkKind::Other
            && let Some(kind) = &kind
        {
            let wording = format!(
                "{} {}",
                kind.text("outward")?.unwrap_or(""),
                kind.text("inward")?.unwrap_or("")
            );
            link_kind = LinkKind::from_name(&wording);
        }
        for (side, direction) in [
            ("outwardIssue", LinkDirection::Outward),
            ("inwardIssue", LinkDirection::Inward),
        ] {
            if let Some(other) = link.obj(side)? {
                task.links.push(Link {
                    kind: link_kind,
                    name: name.to_owned(),
                    direction,
                    target: other.req_str("key")?.to_owned(),
                });
            }
        }
    }
    if let Some(parent) = fields.obj("parent")? {
        task.links.push(Link {
            kind: LinkKind::Parent,
            name: "parent".to_owned(),
            direction: LinkDirection::Inward,
            target: parent.req_str("key")?.to_owned(),
        });
    }
    for subtask in fields.objects("subtasks")? {
        task.links.push(Link {
            kind: LinkKind::Parent,
            name: "subtasks".to_owned(),
            direction: LinkDirection::Outward,
            target: subtask.req_str("key")?.to_owned(),
        });
    }

    if let Some(changelog) = issue.obj("changelog")? {
        let mut history = Vec::new();
        for entry in changelog.objects("histories")? {
            let items = entry.objects("items")?;
            let is_status = |item: &Obj<'_>| -> Result<bool, String> {
                Ok(item.str("field")? == Some("status") || item.str("fieldId")? == Some("status"))
            };
            for item in &items {
                if !is_status(item)? {
                    continue;
                }
                let at = entry
                    .time("created", tz, EXAMPLE)?
                    .ok_or_else(|| entry.missing("created"))?;
                let to = item.str("toString")?.unwrap_or_default().to_owned();
                history.push(StatusChange {
                    at,
                    from: item.text("fromString")?.map(str::to_owned),
                    to_category: category_of(&to),
                    to,
                    provenance: None,
                });
            }
        }
        history.sort_by_key(|c| c.at);
        // The last change leads to the current status, whose category also knows the resolution.
        if let Some(last) = history.last_mut()
            && last.to == task.status
        {
            last.to_category = task.status_category;
        }
        task.reopened_at = reopens(&history, category_of);
        if task.status_category.is_closed() {
            task.completed = resolved
                .or_else(|| closed_at_from_history(&history, task.status_category))
                .or(changed);
        }
        task.history = Some(history);
    } else if task.status_category.is_closed() {
        task.completed = resolved.or(changed);
    }
    Ok(task)
}
