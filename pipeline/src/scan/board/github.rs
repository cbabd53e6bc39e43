//! GitHub: `gh issue list --json …` output, optionally with timeline events (embedded or joined from a second
//! file, see the module documentation of [`crate::scan::board`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::Value;

use super::detect::{first_element_keys, first_line_keys, top_level_keys};
use super::json::{Obj, describe, parse_document};
use super::lines::{CHUNK_SIZE, parse_lines};
use super::{
    Board, BoardError, Format, Link, LinkDirection, LinkKind, Record, Reference, ReferenceKind, StatusCategory,
    StatusChange, Task,
};

const EXAMPLE: &str = "2025-11-03T08:15:00Z";

/// The note of a board read without any timeline.
const NO_TIMELINE: &str = "no timeline events: reopens, closing commits and cross-references are unknown (give the \
                           issues' timelines, see join_github_timeline)";

pub(super) fn read(path: &Path, bytes: &[u8], tz: &TimeZone, board: &mut Board) -> Result<(), BoardError> {
    let doc = parse_document(path, bytes)?;
    let Value::Array(issues) = &doc else {
        return Err(BoardError::format(
            path,
            format!(
                "expected a JSON array of issues (gh issue list --json …), got {}",
                describe(&doc)
            ),
        ));
    };
    let mut with_timeline = 0;
    for (index, value) in issues.iter().enumerate() {
        let record = Record::Item { array: "", index };
        let task = read_issue(value, record, tz).map_err(|message| BoardError::invalid(path, record, message))?;
        with_timeline += usize::from(task.history.is_some());
        board.tasks.push(task);
    }
    if with_timeline > 0 {
        board.capabilities.status_history = true;
        board.capabilities.reopen = true;
        if with_timeline < issues.len() {
            board.notes.push(format!(
                "{} of {} issues have no timeline: their reopens, closing commits and cross-references are unknown",
                issues.len() - with_timeline,
                issues.len()
            ));
        }
    } else {
        board.notes.push(NO_TIMELINE.to_owned());
    }
    Ok(())
}

fn read_issue(value: &Value, record: Record, tz: &TimeZone) -> Result<Task, String> {
    let issue = Obj::root(value)?;
    let number = issue.int("number")?.ok_or_else(|| issue.missing("number"))?;
    let mut task = Task::new(format!("#{number}"), record);
    task.title = issue.str("title")?.unwrap_or_default().to_owned();
    task.url = issue.text("url")?.map(str::to_owned);
    task.status = issue.req_str("state")?.to_owned();
    task.resolution = issue.text("stateReason")?.map(str::to_owned);
    task.status_category = match task.status.to_ascii_uppercase().as_str() {
        "OPEN" => StatusCategory::Todo,
        "CLOSED" => closed_category(task.resolution.as_deref()).unwrap_or(StatusCategory::Done),
        _ => {
            return Err(format!(
                "field \"state\": expected OPEN or CLOSED, got {}",
                describe(issue.get("state").unwrap_or(&Value::Null))
            ));
        }
    };
    task.created = issue.time("createdAt", tz, EXAMPLE)?;
    if task.status_category.is_closed() {
        task.completed = issue.time("closedAt", tz, EXAMPLE)?;
    } else {
        issue.time("closedAt", tz, EXAMPLE)?;
    }
    if let Some(labels) = issue.arr("labels")? {
        for (i, label) in labels.iter().enumerate() {
            match label {
                Value::String(name) => task.labels.push(name.clone()),
                _ => {
                    let label = Obj::element(label, &format!("labels[{i}]"))?;
                    task.labels.push(label.req_str("name")?.to_owned());
                }
            }
        }
    }
    if let Some(body) = issue.str("body")? {
        task.links = body_links(body);
    }
    if let Some(parent) = issue.obj("parent")? {
        let number = parent.int("number")?.ok_or_else(|| parent.missing("number"))?;
        task.links
            .push(link(LinkKind::Parent, "parent", LinkDirection::Inward, number));
    }
    let sub_issues = match issue.get("subIssues") {
        Some(Value::Object(_)) => issue.obj("subIssues")?.map_or(Ok(Vec::new()), |s| s.objects("nodes"))?,
        _ => issue.objects("subIssues")?,
    };
    for sub in sub_issues {
        let number = sub.int("number")?.ok_or_else(|| sub.missing("number"))?;
        task.links
            .push(link(LinkKind::Parent, "subIssues", LinkDirection::Outward, number));
    }
    for pr in issue.objects("closedByPullRequestsReferences")? {
        let number = pr.int("number")?.ok_or_else(|| pr.missing("number"))?;
        task.references.push(Reference {
            kind: ReferenceKind::ClosedByPullRequest,
            target: format!("#{number}"),
            at: None,
        });
    }
    if let Some(items) = issue.arr("timeline")? {
        let mut events = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let event = Obj::element(item, &format!("timeline[{i}]"))?;
            events.extend(parse_event(&event, tz)?);
        }
        let url = task.url.clone();
        apply_timeline(&mut task, url.as_deref(), events);
    }
    Ok(task)
}

fn link(kind: LinkKind, name: &str, direction: LinkDirection, number: u64) -> Link {
    Link {
        kind,
        name: name.to_owned(),
        direction,
        target: format!("#{number}"),
    }
}

/// The category of a close with this reason: Cancelled for not planned and duplicate, Done for completed, `None`
/// when no reason is given (or an unknown one).
fn closed_category(reason: Option<&str>) -> Option<StatusCategory> {
    match reason?.to_ascii_lowercase().replace(['_', ' '], "").as_str() {
        "notplanned" | "duplicate" => Some(StatusCategory::Cancelled),
        "completed" => Some(StatusCategory::Done),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Links from the body

/// Phrases that, directly before `#N`, make a link (see the module documentation).
const PHRASES: [(&str, LinkKind, LinkDirection); 25] = [
    ("regression of", LinkKind::Regression, LinkDirection::Inward),
    ("regression from", LinkKind::Regression, LinkDirection::Inward),
    ("regression in", LinkKind::Regression, LinkDirection::Inward),
    ("regressed by", LinkKind::Regression, LinkDirection::Inward),
    ("regressed in", LinkKind::Regression, LinkDirection::Inward),
    ("introduced in", LinkKind::Regression, LinkDirection::Inward),
    ("introduced by", LinkKind::Regression, LinkDirection::Inward),
    ("caused by", LinkKind::Causes, LinkDirection::Inward),
    ("follow-up to", LinkKind::FollowUp, LinkDirection::Inward),
    ("follow-up of", LinkKind::FollowUp, LinkDirection::Inward),
    ("follow-up from", LinkKind::FollowUp, LinkDirection::Inward),
    ("follow up to", LinkKind::FollowUp, LinkDirection::Inward),
    ("followup to", LinkKind::FollowUp, LinkDirection::Inward),
    ("follows up on", LinkKind::FollowUp, LinkDirection::Inward),
    ("follows up", LinkKind::FollowUp, LinkDirection::Inward),
    ("discovered in", LinkKind::FollowUp, LinkDirection::Inward),
    ("discovered from", LinkKind::FollowUp, LinkDirection::Inward),
    ("duplicate of", LinkKind::Duplicates, LinkDirection::Outward),
    ("blocked by", LinkKind::Blocks, LinkDirection::Inward),
    ("depends on", LinkKind::Blocks, LinkDirection::Inward),
    ("blocks", LinkKind::Blocks, LinkDirection::Outward),
    ("related to", LinkKind::Relates, LinkDirection::Outward),
    ("relates to", LinkKind::Relates, LinkDirection::Outward),
    ("see also", LinkKind::Relates, LinkDirection::Outward),
    ("regresses", LinkKind::Regression, LinkDirection::Outward),
];

/// The links named in an issue body: a phrase of [`PHRASES`] directly before `#N` (an optional `:` between),
/// within one line, case-insensitive. Each (kind, direction, target) once, in body order.
pub(super) fn body_links(body: &str) -> Vec<Link> {
    let mut links: Vec<Link> = Vec::new();
    for line in body.lines() {
        let lower = line.to_ascii_lowercase();
        let bytes = lower.as_bytes();
        for (hash, _) in lower.match_indices('#') {
            let digits = bytes[hash + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
            let after = bytes.get(hash + 1 + digits);
            if digits == 0 || after.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
                continue;
            }
            if hash > 0 && (bytes[hash - 1].is_ascii_alphanumeric() || matches!(bytes[hash - 1], b'/' | b'&')) {
                continue; // owner/repo#12, a#12, &#12;
            }
            let before = lower[..hash].trim_end();
            let before = before.strip_suffix(':').unwrap_or(before).trim_end();
            let Some(&(phrase, kind, direction)) = PHRASES.iter().find(|(phrase, _, _)| {
                before.ends_with(phrase) && {
                    let start = before.len() - phrase.len();
                    start == 0 || !before.as_bytes()[start - 1].is_ascii_alphanumeric()
                }
            }) else {
                continue;
            };
            let Ok(number) = lower[hash + 1..hash + 1 + digits].parse::<u64>() else {
                continue;
            };
            let link = link(kind, phrase, direction, number);
            if !links
                .iter()
                .any(|l| l.kind == link.kind && l.direction == link.direction && l.target == link.target)
            {
                links.push(link);
            }
        }
    }
    links
}

// ---------------------------------------------------------------------------------------------------------------
// Timeline events

/// A timeline event that the model uses.
#[derive(Debug, Clone)]
struct Event {
    kind: EventKind,
    at: Timestamp,
    commit: Option<String>,
    state_reason: Option<String>,
    /// For `cross-referenced`: the referring issue's number, URL, and whether it is a pull request.
    source: Option<(Option<u64>, Option<String>, bool)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventKind {
    Closed,
    Reopened,
    Referenced,
    CrossReferenced,
}

/// Parses an event; `None` for the event types the model does not use.
fn parse_event(event: &Obj<'_>, tz: &TimeZone) -> Result<Option<Event>, String> {
    let kind = match event.req_str("event")? {
        "closed" => EventKind::Closed,
        "reopened" => EventKind::Reopened,
        "referenced" => EventKind::Referenced,
        "cross-referenced" => EventKind::CrossReferenced,
        _ => return Ok(None),
    };
    let at = event
        .time("created_at", tz, EXAMPLE)?
        .ok_or_else(|| event.missing("created_at"))?;
    let source = match (kind, event.obj("source")?) {
        (EventKind::CrossReferenced, Some(source)) => match source.obj("issue")? {
            Some(issue) => Some((
                issue.int("number")?,
                issue.text("html_url")?.map(str::to_owned),
                issue.has("pull_request"),
            )),
            None => None,
        },
        _ => None,
    };
    Ok(Some(Event {
        kind,
        at,
        commit: event.text("commit_id")?.map(str::to_owned),
        state_reason: event.text("state_reason")?.map(str::to_owned),
        source,
    }))
}

/// `https://github.com/owner/repo/` of an issue or pull request URL.
fn repository_of(url: &str) -> Option<&str> {
    let cut = url.find("/issues/").or_else(|| url.find("/pull/"))?;
    Some(&url[..=cut])
}

/// Adds a timeline's events to a task: history, reopens, references.
fn apply_timeline(task: &mut Task, url: Option<&str>, mut events: Vec<Event>) {
    events.sort_by_key(|e| e.at);
    let last_close = events.iter().rposition(|e| e.kind == EventKind::Closed);
    let mut history = task.history.take().unwrap_or_default();
    let mut state = "OPEN";
    for (i, event) in events.into_iter().enumerate() {
        match event.kind {
            EventKind::Closed => {
                let category = closed_category(event.state_reason.as_deref()).unwrap_or(
                    if Some(i) == last_close && task.status_category.is_closed() {
                        task.status_category
                    } else {
                        StatusCategory::Done
                    },
                );
                history.push(StatusChange {
                    at: event.at,
                    from: Some(state.to_owned()),
                    to: "CLOSED".to_owned(),
                    to_category: category,
                    provenance: None,
                });
                state = "CLOSED";
                if let Some(commit) = event.commit {
                    task.references.push(Reference {
                        kind: ReferenceKind::ClosedByCommit,
                        target: commit,
                        at: Some(event.at),
                    });
                }
                if task.completed.is_none() && Some(i) == last_close && task.status_category.is_closed() {
                    task.completed = Some(event.at);
                }
            }
            EventKind::Reopened => {
                history.push(StatusChange {
                    at: event.at,
                    from: Some(state.to_owned()),
                    to: "OPEN".to_owned(),
                    to_category: StatusCategory::Todo,
                    provenance: None,
                });
                state = "OPEN";
                task.reopened_at.push(event.at);
            }
            EventKind::Referenced => {
                if let Some(commit) = event.commit {
                    task.references.push(Reference {
                        kind: ReferenceKind::Commit,
                        target: commit,
                        at: Some(event.at),
                    });
                }
            }
            EventKind::CrossReferenced => {
                let Some((number, html_url, is_pull)) = event.source else {
                    continue;
                };
                let same_repository = match (url.and_then(repository_of), html_url.as_deref().and_then(repository_of)) {
                    (Some(ours), Some(theirs)) => ours == theirs,
                    _ => true,
                };
                let target = match (number, html_url) {
                    (Some(number), _) if same_repository => format!("#{number}"),
                    (_, Some(html_url)) => html_url,
                    (Some(number), None) => format!("#{number}"),
                    (None, None) => continue,
                };
                task.references.push(Reference {
                    kind: if is_pull {
                        ReferenceKind::PullRequest
                    } else {
                        ReferenceKind::Issue
                    },
                    target,
                    at: Some(event.at),
                });
            }
        }
    }
    history.sort_by_key(|c| c.at);
    task.history = Some(history);
    task.reopened_at.sort();
    task.reopened_at.dedup();
    let mut seen = BTreeSet::new();
    task.references
        .retain(|r| seen.insert((r.kind, r.target.clone(), r.at)));
}

// ---------------------------------------------------------------------------------------------------------------
// Joining a timeline file

/// What [`join_github_timeline`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineJoin {
    /// Events read from the file (all types, used or not).
    pub events: usize,
    /// Issues of the board that got at least one event.
    pub issues: usize,
    /// Issue numbers that have events but are not in the board, ascending (their events are ignored).
    pub unknown_issues: Vec<u64>,
}

/// Whether `bytes` look like GitHub timeline events (see the module documentation for the shapes): a JSON array
/// or JSON lines of objects with an `"event"`, or an object whose keys are all issue numbers.
pub fn is_github_timeline(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => first_element_keys(bytes).is_ok_and(|keys| keys.is_some_and(|k| k.iter().any(|k| k == "event"))),
        Some(b'{') => match first_line_keys(bytes) {
            Some(keys) => keys.iter().any(|k| k == "event") || all_numbers(&keys),
            None => {
                let (keys, _) = top_level_keys(bytes);
                all_numbers(&keys)
            }
        },
        _ => false,
    }
}

fn all_numbers(keys: &[String]) -> bool {
    !keys.is_empty()
        && keys
            .iter()
            .all(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// Joins the timeline events in `bytes` (the content of `path`) with a board read from a GitHub issue list: each
/// issue of the board gets a history (empty when the file has no event for it), its reopens and references.
/// Events of issues that are not in the board are counted in [`TimelineJoin::unknown_issues`] and ignored.
pub fn join_github_timeline(
    board: &mut Board,
    path: &Path,
    bytes: &[u8],
    tz: &TimeZone,
) -> Result<TimelineJoin, BoardError> {
    if board.format != Format::GithubJson {
        return Err(BoardError::format(
            path,
            format!(
                "a GitHub timeline can only be joined with a GitHub issue list, not with a {}",
                board.format.description()
            ),
        ));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut by_issue: BTreeMap<u64, Vec<Event>> = BTreeMap::new();
    let mut count = 0;
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let lines = first == Some(b'{') && first_line_keys(bytes).is_some_and(|keys| keys.iter().any(|k| k == "event"));
    if lines {
        let parsed = parse_lines(bytes, CHUNK_SIZE, |_, text| {
            let value: Value = serde_json::from_str(text).map_err(|e| super::json::invalid_json(&e))?;
            let event = Obj::root(&value)?;
            Ok(Some((issue_number(&event)?, parse_event(&event, tz)?)))
        })
        .map_err(|(line, message)| BoardError::invalid(path, Record::Line(line), message))?;
        for (number, event) in parsed {
            count += 1;
            by_issue.entry(number).or_default().extend(event);
        }
    } else {
        let doc = parse_document(path, bytes)?;
        match &doc {
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    let record = Record::Item { array: "", index };
                    let parsed = Obj::root(item)
                        .and_then(|event| Ok((issue_number(&event)?, parse_event(&event, tz)?)))
                        .map_err(|message| BoardError::invalid(path, record, message))?;
                    count += 1;
                    by_issue.entry(parsed.0).or_default().extend(parsed.1);
                }
            }
            Value::Object(map) => {
                for (key, value) in map {
                    let number: u64 = key
                        .parse()
                        .map_err(|_| BoardError::format(path, format!("key {key:?}: expected an issue number")))?;
                    let Value::Array(items) = value else {
                        return Err(BoardError::format(
                            path,
                            format!("issue {key}: expected an array of events, got {}", describe(value)),
                        ));
                    };
                    for (index, item) in items.iter().enumerate() {
                        let event = Obj::element(item, &format!("{key}[{index}]"))
                            .and_then(|event| parse_event(&event, tz))
                            .map_err(|message| BoardError::format(path, format!("issue {key}: {message}")))?;
                        count += 1;
                        by_issue.entry(number).or_default().extend(event);
                    }
                }
            }
            other => {
                return Err(BoardError::format(
                    path,
                    format!(
                        "expected timeline events (an array, JSON lines or an object), got {}",
                        describe(other)
                    ),
                ));
            }
        }
    }

    let index: HashMap<String, usize> = board
        .tasks
        .iter()
        .enumerate()
        .map(|(i, task)| (task.id.clone(), i))
        .rev()
        .collect();
    let mut join = TimelineJoin {
        events: count,
        issues: 0,
        unknown_issues: Vec::new(),
    };
    let mut seen = vec![false; board.tasks.len()];
    for (number, events) in by_issue {
        match index.get(&format!("#{number}")) {
            Some(&i) => {
                let task = &mut board.tasks[i];
                let url = task.url.clone();
                apply_timeline(task, url.as_deref(), events);
                seen[i] = true;
                join.issues += 1;
            }
            None => join.unknown_issues.push(number),
        }
    }
    for (task, seen) in board.tasks.iter_mut().zip(seen) {
        if !seen && task.history.is_none() {
            task.history = Some(Vec::new());
        }
    }
    board.capabilities.status_history = true;
    board.capabilities.reopen = true;
    board.notes.retain(|n| n != NO_TIMELINE);
    if !join.unknown_issues.is_empty() {
        let shown: Vec<String> = join.unknown_issues.iter().take(10).map(|n| format!("#{n}")).collect();
        board.notes.push(format!(
            "{}: events of {} issues that are not in the issue list were ignored ({}{})",
            path.display(),
            join.unknown_issues.len(),
            shown.join(", "),
            if join.unknown_issues.len() > 10 { ", …" } else { "" }
        ));
    }
    Ok(join)
}

/// The issue an event of a timeline file belongs to: `"issue": 12` or `"issue": {"number": 12}`.
fn issue_number(event: &Obj<'_>) -> Result<u64, String> {
    match event.get("issue") {
        None => Err(format!(
            "missing field \"{}\" (the number of the issue the event belongs to)",
            event.name("issue")
        )),
        Some(Value::Object(map)) => {
            let issue = Obj {
                map,
                prefix: format!("{}.", event.name("issue")),
            };
            issue.int("number")?.ok_or_else(|| issue.missing("number"))
        }
        Some(_) => event.int("issue")?.ok_or_else(|| event.missing("issue")),
    }
}
