//! The board-export readers on the samples of `data/p3/` (one web-shop project of twelve tasks, written in every
//! supported format by `data/p3/generate.py`), their malformed variants, and format sniffing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use pipeline::scan::board::{
    Board, Format, LinkDirection, LinkKind, Outcome, Record, ReferenceKind, StatusCategory, Task, TimelineJoin,
    is_github_timeline, join_github_timeline, open, parse_time_zone, read, sniff,
};

use LinkDirection::{Inward, Outward};
use StatusCategory::{Cancelled, Done, InProgress, Todo};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/p3")
}

fn sample(name: &str) -> String {
    std::fs::read_to_string(samples().join(name)).unwrap()
}

fn berlin() -> TimeZone {
    parse_time_zone("Europe/Berlin").unwrap()
}

/// Reads `text` as `format`, named `name` in messages.
fn parse(name: &str, text: &str, format: Format, tz: &TimeZone) -> Board {
    read(Path::new(name), text.as_bytes(), format, tz).unwrap_or_else(|e| panic!("{e}"))
}

fn board(name: &str, format: Format) -> Board {
    parse(name, &sample(name), format, &berlin())
}

/// The GitHub sample joined with its timeline.
fn github_with_timeline() -> (Board, TimelineJoin) {
    let mut board = board("github-issues.json", Format::GithubJson);
    let timeline = sample("github-timeline.jsonl");
    let join = join_github_timeline(
        &mut board,
        Path::new("github-timeline.jsonl"),
        timeline.as_bytes(),
        &berlin(),
    )
    .unwrap();
    (board, join)
}

/// The error message for `text` read as `format`.
fn error(name: &str, text: &str, format: Format) -> String {
    match read(Path::new(name), text.as_bytes(), format, &berlin()) {
        Ok(board) => panic!("{name}: expected an error, read {} tasks", board.tasks.len()),
        Err(e) => e.to_string(),
    }
}

fn t(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn task<'b>(board: &'b Board, id: &str) -> &'b Task {
    board.task(id).unwrap_or_else(|| panic!("no task {id}"))
}

/// `(id, status, category)` of every task, in order.
fn statuses(board: &Board) -> Vec<(&str, &str, StatusCategory)> {
    board
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), t.status.as_str(), t.status_category))
        .collect()
}

/// `(id, created, completed)` of every task, in order.
fn times(board: &Board) -> Vec<(&str, Option<Timestamp>, Option<Timestamp>)> {
    board
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), t.created, t.completed))
        .collect()
}

/// `(id, kind, direction, target)` of every link of every task, in order.
fn links(board: &Board) -> Vec<(&str, LinkKind, LinkDirection, &str)> {
    board
        .tasks
        .iter()
        .flat_map(|t| {
            t.links
                .iter()
                .map(move |l| (t.id.as_str(), l.kind, l.direction, l.target.as_str()))
        })
        .collect()
}

/// `(at, from, to, category)` of a task's history.
fn history(task: &Task) -> Vec<(Timestamp, Option<&str>, &str, StatusCategory)> {
    task.history
        .as_ref()
        .expect("a history")
        .iter()
        .map(|c| (c.at, c.from.as_deref(), c.to.as_str(), c.to_category))
        .collect()
}

fn some(text: &str) -> Option<Timestamp> {
    Some(t(text))
}

// ---------------------------------------------------------------------------------------------------------------
// One test per sample

#[test]
fn upstream_jsonl_sample() {
    let board = board("tasks.jsonl", Format::Jsonl);
    assert_eq!(
        statuses(&board),
        [
            ("SHOP-1", "done", Done),
            ("SHOP-2", "done", Done),
            ("SHOP-3", "done", Done),
            ("SHOP-4", "done", Done),
            ("SHOP-5", "cancelled", Cancelled),
            ("SHOP-6", "in_progress", InProgress),
            ("SHOP-7", "todo", Todo),
            ("SHOP-8", "done", Done),
            ("SHOP-9", "done", Done),
            ("SHOP-10", "done", Done),
            ("SHOP-11", "in_review", InProgress),
            ("SHOP-12", "cancelled", Cancelled),
        ]
    );
    let completed: Vec<(&str, Option<Timestamp>)> = board.tasks.iter().map(|t| (t.id.as_str(), t.completed)).collect();
    assert_eq!(
        completed,
        [
            ("SHOP-1", some("2025-11-10T15:40:00Z")),
            ("SHOP-2", some("2025-11-07T10:20:00Z")),
            ("SHOP-3", some("2025-11-14T16:45:00Z")),
            ("SHOP-4", some("2025-11-12T12:10:00Z")),
            ("SHOP-5", some("2025-11-06T09:15:00Z")),
            ("SHOP-6", None),
            ("SHOP-7", None),
            ("SHOP-8", some("2025-11-10T11:05:00Z")),
            ("SHOP-9", some("2025-11-18T10:00:00Z")),
            ("SHOP-10", some("2025-11-11T15:30:00Z")),
            ("SHOP-11", None),
            ("SHOP-12", some("2025-11-12T09:00:00Z")),
        ]
    );
    let outcomes: Vec<(&str, Outcome)> = board
        .tasks
        .iter()
        .filter_map(|t| Some((t.id.as_str(), t.outcome?)))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("SHOP-2", Outcome::Right),
            ("SHOP-4", Outcome::Verified),
            ("SHOP-8", Outcome::Wrong)
        ]
    );
    assert_eq!(
        links(&board),
        [
            ("SHOP-1", LinkKind::FollowUp, Outward, "SHOP-9"),
            ("SHOP-8", LinkKind::FollowUp, Outward, "SHOP-11"),
        ]
    );
    assert_eq!(task(&board, "SHOP-1").links[0].name, "followups");
    let reopened: Vec<(&str, &[Timestamp])> = board
        .tasks
        .iter()
        .filter(|t| t.was_reopened())
        .map(|t| (t.id.as_str(), t.reopened_at.as_slice()))
        .collect();
    assert_eq!(reopened, [("SHOP-3", &[t("2025-11-12T09:30:00Z")][..])]);
    // Missing fields are tolerated: SHOP-7 has only an id and a status.
    let minimal = task(&board, "SHOP-7");
    assert_eq!(
        (minimal.title.as_str(), minimal.created, minimal.record),
        ("", None, Record::Line(7))
    );
    assert_eq!(task(&board, "SHOP-1").created, some("2025-11-03T08:15:00Z"));
    assert!(board.tasks.iter().all(|t| t.history.is_none() && t.kind.is_none()));
    assert_eq!(board.newest_timestamp(), some("2025-11-20T08:50:00Z"));
    // Every time in the file has a zone: `--tz` changes nothing.
    let utc = parse("tasks.jsonl", &sample("tasks.jsonl"), Format::Jsonl, &TimeZone::UTC);
    assert_eq!(times(&utc), times(&board));
}

#[test]
fn jira_csv_sample_in_berlin_and_in_utc() {
    let board = board("jira.csv", Format::JiraCsv);
    assert_eq!(
        statuses(&board),
        [
            ("SHOP-1", "Done", Done),
            ("SHOP-2", "Done", Done),
            ("SHOP-3", "Done", Done),
            ("SHOP-4", "Done", Done),
            ("SHOP-5", "Done", Cancelled),
            ("SHOP-6", "In Progress", InProgress),
            ("SHOP-7", "To Do", Todo),
            ("SHOP-8", "Done", Done),
            ("SHOP-9", "Done", Done),
            ("SHOP-10", "Done", Done),
            ("SHOP-11", "In Review", InProgress),
            ("SHOP-12", "Done", Cancelled),
        ]
    );
    let resolutions: Vec<Option<&str>> = board.tasks.iter().map(|t| t.resolution.as_deref()).collect();
    assert_eq!(
        resolutions,
        [
            Some("Done"),
            Some("Done"),
            Some("Done"),
            Some("Done"),
            Some("Won't Do"),
            None,
            None,
            Some("Done"),
            Some("Done"),
            Some("Done"),
            None,
            Some("Duplicate")
        ]
    );
    // Berlin: CET (+01:00) in November, CEST (+02:00) on 24 October.
    assert_eq!(
        times(&board),
        [
            ("SHOP-1", some("2025-11-03T08:15:00Z"), some("2025-11-10T15:40:00Z")),
            ("SHOP-2", some("2025-11-03T09:02:00Z"), some("2025-11-07T10:20:00Z")),
            ("SHOP-3", some("2025-11-04T07:45:00Z"), some("2025-11-14T16:45:00Z")),
            ("SHOP-4", some("2025-11-04T10:30:00Z"), some("2025-11-12T12:10:00Z")),
            ("SHOP-5", some("2025-11-04T11:00:00Z"), some("2025-11-06T09:15:00Z")),
            ("SHOP-6", some("2025-11-05T08:00:00Z"), None),
            ("SHOP-7", some("2025-10-24T14:30:00Z"), None),
            ("SHOP-8", some("2025-11-05T12:20:00Z"), some("2025-11-10T11:05:00Z")),
            ("SHOP-9", some("2025-11-13T13:05:00Z"), some("2025-11-18T10:00:00Z")),
            ("SHOP-10", some("2025-11-06T08:40:00Z"), some("2025-11-11T15:30:00Z")),
            ("SHOP-11", some("2025-11-20T08:50:00Z"), None),
            ("SHOP-12", some("2025-11-12T08:30:00Z"), some("2025-11-12T09:00:00Z")),
        ]
    );
    // The same file read as UTC: the wall-clock times are taken as UTC, an hour (two in October) later.
    let utc = parse("jira.csv", &sample("jira.csv"), Format::JiraCsv, &TimeZone::UTC);
    assert_eq!(task(&utc, "SHOP-1").created, some("2025-11-03T09:15:00Z"));
    assert_eq!(task(&utc, "SHOP-1").completed, some("2025-11-10T16:40:00Z"));
    assert_eq!(task(&utc, "SHOP-7").created, some("2025-10-24T16:30:00Z"));
    let fixed = parse(
        "jira.csv",
        &sample("jira.csv"),
        Format::JiraCsv,
        &parse_time_zone("+02:00").unwrap(),
    );
    assert_eq!(task(&fixed, "SHOP-1").created, some("2025-11-03T07:15:00Z"));
    assert_eq!(
        links(&board),
        [
            ("SHOP-1", LinkKind::Causes, Outward, "SHOP-9"),
            ("SHOP-3", LinkKind::Duplicates, Inward, "SHOP-12"),
            ("SHOP-7", LinkKind::Blocks, Inward, "SHOP-10"),
            ("SHOP-8", LinkKind::Relates, Inward, "SHOP-11"),
            ("SHOP-9", LinkKind::Causes, Inward, "SHOP-1"),
            ("SHOP-10", LinkKind::Blocks, Outward, "SHOP-7"),
            ("SHOP-11", LinkKind::Relates, Outward, "SHOP-8"),
            ("SHOP-12", LinkKind::Duplicates, Outward, "SHOP-3"),
        ]
    );
    assert_eq!(task(&board, "SHOP-9").links[0].name, "Problem/Incident");
    assert_eq!(task(&board, "SHOP-3").labels, ["checkout", "pricing"]);
    assert_eq!(task(&board, "SHOP-11").labels, ["search", "seo"]);
    assert_eq!(task(&board, "SHOP-2").labels, ["catalog"]);
    assert_eq!(task(&board, "SHOP-9").kind.as_deref(), Some("Bug"));
    assert_eq!(
        task(&board, "SHOP-9").title,
        "Guest checkout loses the shipping address on back navigation"
    );
    // SHOP-3's description spans three lines: the rows after it start three lines further down.
    let records: Vec<Record> = board.tasks.iter().map(|t| t.record).collect();
    let lines = [2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15].map(Record::Line);
    assert_eq!(records, lines);
    // No history in a CSV export: SHOP-3's reopen is invisible.
    assert!(board.tasks.iter().all(|t| t.history.is_none() && !t.was_reopened()));
    assert!(!board.capabilities.status_history && !board.capabilities.reopen && board.capabilities.links);
}

#[test]
fn jira_rest_sample_with_changelogs() {
    let board = board("jira.json", Format::JiraJson);
    assert_eq!(board.tasks.len(), 12);
    assert_eq!(
        statuses(&board)[4..7],
        [
            ("SHOP-5", "Done", Cancelled),
            ("SHOP-6", "In Progress", InProgress),
            ("SHOP-7", "To Do", Todo)
        ]
    );
    assert_eq!(
        history(task(&board, "SHOP-3")),
        [
            (t("2025-11-04T13:00:00Z"), Some("To Do"), "In Progress", InProgress),
            (t("2025-11-06T14:00:00Z"), Some("In Progress"), "Done", Done),
            (t("2025-11-12T09:30:00Z"), Some("Done"), "Reopened", Todo),
            (t("2025-11-12T10:00:00Z"), Some("Reopened"), "In Progress", InProgress),
            (t("2025-11-14T16:45:00Z"), Some("In Progress"), "Done", Done),
        ]
    );
    assert_eq!(task(&board, "SHOP-3").reopened_at, [t("2025-11-12T09:30:00Z")]);
    assert_eq!(task(&board, "SHOP-3").completed, some("2025-11-14T16:45:00Z"));
    // The last change of a cancelled issue takes the issue's category (the resolution says Won't Do).
    assert_eq!(
        history(task(&board, "SHOP-5")),
        [(t("2025-11-06T09:15:00Z"), Some("To Do"), "Done", Cancelled)]
    );
    assert_eq!(
        history(task(&board, "SHOP-11")),
        [
            (t("2025-11-21T09:10:00Z"), Some("To Do"), "In Progress", InProgress),
            (t("2025-11-24T15:00:00Z"), Some("In Progress"), "In Review", InProgress),
        ]
    );
    assert_eq!(history(task(&board, "SHOP-7")), []);
    // Offsets in the file (+0100, +0200) decide; `--tz` does not matter.
    let jira_csv = board_times("jira.csv", Format::JiraCsv);
    assert_eq!(
        times(&board),
        jira_csv
            .iter()
            .map(|(id, c, d)| (id.as_str(), *c, *d))
            .collect::<Vec<_>>()
    );
    let utc = parse("jira.json", &sample("jira.json"), Format::JiraJson, &TimeZone::UTC);
    assert_eq!(times(&utc), times(&board));
    let csv = board_links("jira.csv", Format::JiraCsv);
    assert_eq!(
        links(&board),
        csv.iter()
            .map(|(a, k, d, b)| (a.as_str(), *k, *d, b.as_str()))
            .collect::<Vec<_>>()
    );
    assert_eq!(task(&board, "SHOP-4").kind.as_deref(), Some("Task"));
    assert_eq!(task(&board, "SHOP-1").labels, ["checkout", "guest"]);
    assert_eq!(
        task(&board, "SHOP-12").record,
        Record::Item {
            array: "issues",
            index: 11
        }
    );
    assert!(board.notes.is_empty());
    assert_eq!(
        board.capabilities.missing(),
        ["explicit outcomes", "commit and pull request references"]
    );
}

type Times = Vec<(String, Option<Timestamp>, Option<Timestamp>)>;

fn board_times(name: &str, format: Format) -> Times {
    times(&board(name, format))
        .into_iter()
        .map(|(id, c, d)| (id.to_owned(), c, d))
        .collect()
}

fn board_links(name: &str, format: Format) -> Vec<(String, LinkKind, LinkDirection, String)> {
    links(&board(name, format))
        .into_iter()
        .map(|(a, k, d, b)| (a.to_owned(), k, d, b.to_owned()))
        .collect()
}

#[test]
fn linear_csv_samples_of_both_shapes() {
    let board = board("linear.csv", Format::LinearCsv);
    assert_eq!(
        statuses(&board),
        [
            ("SHOP-1", "Done", Done),
            ("SHOP-2", "Done", Done),
            ("SHOP-3", "Done", Done),
            ("SHOP-4", "Done", Done),
            ("SHOP-5", "Canceled", Cancelled),
            ("SHOP-6", "In Progress", InProgress),
            ("SHOP-7", "Todo", Todo),
            ("SHOP-8", "Done", Done),
            ("SHOP-9", "Done", Done),
            ("SHOP-10", "Done", Done),
            ("SHOP-11", "In Review", InProgress),
            ("SHOP-12", "Duplicate", Cancelled),
        ]
    );
    assert_eq!(times(&board), times(&self::board("jira.csv", Format::JiraCsv)));
    assert_eq!(
        links(&board),
        [
            ("SHOP-1", LinkKind::Relates, Outward, "SHOP-9"),
            ("SHOP-7", LinkKind::Blocks, Inward, "SHOP-10"),
            ("SHOP-8", LinkKind::Relates, Outward, "SHOP-11"),
            ("SHOP-9", LinkKind::Relates, Outward, "SHOP-1"),
            ("SHOP-11", LinkKind::Relates, Outward, "SHOP-8"),
            ("SHOP-12", LinkKind::Duplicates, Outward, "SHOP-3"),
        ]
    );
    assert_eq!(task(&board, "SHOP-7").links[0].name, "Blocked by");
    assert_eq!(task(&board, "SHOP-11").labels, ["Bug", "search", "seo"]);
    assert_eq!(task(&board, "SHOP-4").record, Record::Line(7));
    assert!(board.tasks.iter().all(|t| t.kind.is_none() && t.history.is_none()));
    assert!(board.capabilities.links && board.notes.is_empty());

    let short = self::board("linear-30.csv", Format::LinearCsv);
    assert_eq!(
        statuses(&short),
        [
            ("SHOP-1", "Done", Done),
            ("SHOP-3", "Done", Done),
            ("SHOP-6", "In Progress", InProgress),
            ("SHOP-9", "Done", Done)
        ]
    );
    assert_eq!(task(&short, "SHOP-9").created, some("2025-11-13T13:05:00Z"));
    assert_eq!(task(&short, "SHOP-9").completed, some("2025-11-18T10:00:00Z"));
    assert_eq!(task(&short, "SHOP-9").record, Record::Line(7));
    assert!(links(&short).is_empty());
    assert!(!short.capabilities.links);
    assert_eq!(
        short.notes,
        [
            "the 30-column Linear export has no Related to, Blocked by or Duplicate of columns: links between issues \
             (other than parents) are unknown"
        ]
    );
}

#[test]
fn github_sample_without_and_with_its_timeline() {
    let board = board("github-issues.json", Format::GithubJson);
    let ids: Vec<&str> = board.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "#12", "#11", "#10", "#9", "#8", "#7", "#6", "#5", "#4", "#3", "#2", "#1"
        ]
    );
    let closed: Vec<(&str, StatusCategory, Option<&str>)> = board
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), t.status_category, t.resolution.as_deref()))
        .collect();
    assert_eq!(
        closed,
        [
            ("#12", Cancelled, Some("DUPLICATE")),
            ("#11", Todo, None),
            ("#10", Done, Some("COMPLETED")),
            ("#9", Done, Some("COMPLETED")),
            ("#8", Done, Some("COMPLETED")),
            ("#7", Todo, None),
            ("#6", Todo, None),
            ("#5", Cancelled, Some("NOT_PLANNED")),
            ("#4", Done, Some("COMPLETED")),
            ("#3", Done, Some("COMPLETED")),
            ("#2", Done, Some("COMPLETED")),
            ("#1", Done, Some("COMPLETED")),
        ]
    );
    assert_eq!(
        (task(&board, "#1").created, task(&board, "#1").completed),
        (some("2025-11-03T08:15:00Z"), some("2025-11-10T15:40:00Z"))
    );
    assert_eq!(task(&board, "#7").created, some("2025-10-24T14:30:00Z"));
    // Links from the bodies; "example/payments#4" in #1's body is another repository's issue, not a link.
    assert_eq!(
        links(&board),
        [
            ("#12", LinkKind::Duplicates, Outward, "#3"),
            ("#11", LinkKind::Relates, Outward, "#8"),
            ("#9", LinkKind::Regression, Inward, "#1"),
            ("#7", LinkKind::Blocks, Inward, "#10"),
        ]
    );
    assert_eq!(task(&board, "#9").links[0].name, "regression of");
    assert_eq!(task(&board, "#9").labels, ["bug", "checkout", "guest"]);
    assert_eq!(
        task(&board, "#1").url.as_deref(),
        Some("https://github.com/example/shop/issues/1")
    );
    let closing: Vec<(&str, &str)> = board
        .tasks
        .iter()
        .flat_map(|t| t.references.iter().map(move |r| (t.id.as_str(), r.target.as_str())))
        .collect();
    assert_eq!(
        closing,
        [
            ("#10", "#25"),
            ("#9", "#27"),
            ("#8", "#24"),
            ("#4", "#23"),
            ("#3", "#26"),
            ("#2", "#22"),
            ("#1", "#21")
        ]
    );
    assert!(board.tasks.iter().all(|t| t.history.is_none()));
    // The snapshot loses #3's reopen.
    assert!(!task(&board, "#3").was_reopened());
    assert_eq!(
        board.capabilities.missing(),
        ["task types", "status history", "reopen dates", "explicit outcomes"]
    );
    assert_eq!(
        board.notes,
        [
            "no timeline events: reopens, closing commits and cross-references are unknown (give the issues' \
             timelines, see join_github_timeline)"
        ]
    );

    let (joined, join) = github_with_timeline();
    assert_eq!(
        join,
        TimelineJoin {
            events: 19,
            issues: 9,
            unknown_issues: vec![21]
        }
    );
    let three = task(&joined, "#3");
    assert_eq!(
        history(three),
        [
            (t("2025-11-06T14:00:00Z"), Some("OPEN"), "CLOSED", Done),
            (t("2025-11-12T09:30:00Z"), Some("CLOSED"), "OPEN", Todo),
            (t("2025-11-14T16:45:00Z"), Some("OPEN"), "CLOSED", Done),
        ]
    );
    assert_eq!(three.reopened_at, [t("2025-11-12T09:30:00Z")]);
    let references: Vec<(ReferenceKind, &str, Option<Timestamp>)> = three
        .references
        .iter()
        .map(|r| (r.kind, r.target.as_str(), r.at))
        .collect();
    assert_eq!(
        references,
        [
            (ReferenceKind::ClosedByPullRequest, "#26", None),
            (
                ReferenceKind::Commit,
                "3f9c2e1a7b4d5e6f708192a3b4c5d6e7f8091a2b",
                some("2025-11-06T13:58:00Z")
            ),
            (
                ReferenceKind::ClosedByCommit,
                "3f9c2e1a7b4d5e6f708192a3b4c5d6e7f8091a2b",
                some("2025-11-06T14:00:00Z")
            ),
            (ReferenceKind::Issue, "#12", some("2025-11-12T08:30:00Z")),
            (
                ReferenceKind::ClosedByCommit,
                "b71d0a4c2e3f405162738495a6b7c8d9e0f1a2b3",
                some("2025-11-14T16:45:00Z")
            ),
        ]
    );
    let one: Vec<(ReferenceKind, &str)> = task(&joined, "#1")
        .references
        .iter()
        .map(|r| (r.kind, r.target.as_str()))
        .collect();
    assert_eq!(
        one,
        [
            (ReferenceKind::ClosedByPullRequest, "#21"),
            (ReferenceKind::PullRequest, "#21"),
            (ReferenceKind::Issue, "#9")
        ]
    );
    assert_eq!(
        history(task(&joined, "#5")),
        [(t("2025-11-06T09:15:00Z"), Some("OPEN"), "CLOSED", Cancelled)]
    );
    assert_eq!(history(task(&joined, "#6")), []);
    assert!(joined.capabilities.status_history && joined.capabilities.reopen);
    assert_eq!(
        joined.notes,
        ["github-timeline.jsonl: events of 1 issues that are not in the issue list were ignored (#21)"]
    );
    assert!(is_github_timeline(sample("github-timeline.jsonl").as_bytes()));
    assert!(!is_github_timeline(sample("github-issues.json").as_bytes()));
}

#[test]
fn trello_sample_with_list_moves() {
    let board = board("trello.json", Format::TrelloJson);
    let titles: Vec<(&str, &str, StatusCategory)> = board
        .tasks
        .iter()
        .map(|t| (t.title.as_str(), t.status.as_str(), t.status_category))
        .collect();
    assert_eq!(
        titles,
        [
            ("Add guest checkout", "Done 🎉", Done),
            ("Show delivery estimate on product page", "Done 🎉", Done),
            ("Cart total ignores discount codes", "Done 🎉", Done),
            ("Migrate order emails to the new template engine", "Done 🎉", Done),
            ("Share wishlists by link", "Won't do", Cancelled),
            ("Rate-limit login attempts", "Doing", InProgress),
            ("Saved payment methods", "Backlog", Todo),
            ("Search returns archived products", "Done 🎉", Done),
            (
                "Guest checkout loses the shipping address on back navigation",
                "Done 🎉",
                Done
            ),
            ("Upgrade the payment SDK to v5", "Done 🎉", Done),
            ("Archived products still listed in the sitemap", "Review", InProgress),
            ("Coupon code rejected at checkout", "Won't do", Cancelled),
        ]
    );
    let three = &board.tasks[2];
    assert_eq!(three.id, "6909aefc000000000000ca03");
    assert_eq!(
        three.record,
        Record::Item {
            array: "cards",
            index: 2
        }
    );
    assert_eq!(
        history(three),
        [
            (t("2025-11-04T13:00:00Z"), Some("To Do"), "Doing", InProgress),
            (t("2025-11-06T14:00:00Z"), Some("Doing"), "Done 🎉", Done),
            (t("2025-11-12T09:30:00Z"), Some("Done 🎉"), "Doing", InProgress),
            (t("2025-11-14T16:45:00Z"), Some("Doing"), "Done 🎉", Done),
        ]
    );
    assert_eq!(three.reopened_at, [t("2025-11-12T09:30:00Z")]);
    assert_eq!(three.labels, ["bug", "checkout", "pricing"]);
    // Created by the createCard action, completed by the last move into the Done list.
    assert_eq!(
        (three.created, three.completed),
        (some("2025-11-04T07:45:00Z"), some("2025-11-14T16:45:00Z"))
    );
    // SHOP-7's createCard is not in the export: its id dates it. It never moved.
    let seven = &board.tasks[6];
    assert_eq!((seven.created, seven.completed), (some("2025-10-24T14:30:00Z"), None));
    assert_eq!(history(seven), []);
    // The archived card keeps its list's category; the archiving itself is not a move.
    assert_eq!(
        history(&board.tasks[4]),
        [(t("2025-11-06T09:15:00Z"), Some("To Do"), "Won't do", Cancelled)]
    );
    assert_eq!(board.tasks[4].completed, some("2025-11-06T09:15:00Z"));
    // The rename of SHOP-2 and the comment on SHOP-9 are not moves.
    assert_eq!(history(&board.tasks[1]).len(), 2);
    assert_eq!(history(&board.tasks[8]).len(), 2);
    assert_eq!(
        board.tasks[0].url.as_deref(),
        Some("https://trello.com/c/Sh01pXq/1-add-guest-checkout")
    );
    assert!(links(&board).is_empty());
    assert!(board.notes.is_empty());
}

#[test]
fn beads_sample() {
    let board = board("beads-issues.jsonl", Format::Beads);
    assert_eq!(
        statuses(&board),
        [
            ("shop-1", "closed", Done),
            ("shop-2", "closed", Done),
            ("shop-3", "closed", Done),
            ("shop-4", "closed", Done),
            ("shop-5", "closed", Cancelled),
            ("shop-6", "in_progress", InProgress),
            ("shop-7", "open", Todo),
            ("shop-8", "closed", Done),
            ("shop-9", "closed", Done),
            ("shop-10", "closed", Done),
            ("shop-11", "in_progress", InProgress),
            ("shop-12", "closed", Cancelled),
        ]
    );
    let kinds: Vec<&str> = board.tasks.iter().filter_map(|t| t.kind.as_deref()).collect();
    assert_eq!(
        kinds,
        [
            "feature", "feature", "bug", "task", "feature", "task", "feature", "bug", "bug", "task", "bug", "bug"
        ]
    );
    // Offsets in the file (+01:00, +02:00 for 24 October) decide.
    let jira: Vec<(Option<Timestamp>, Option<Timestamp>)> = times(&self::board("jira.csv", Format::JiraCsv))
        .into_iter()
        .map(|(_, c, d)| (c, d))
        .collect();
    let beads: Vec<(Option<Timestamp>, Option<Timestamp>)> =
        times(&board).into_iter().map(|(_, c, d)| (c, d)).collect();
    assert_eq!(beads, jira);
    assert_eq!(
        links(&board),
        [
            ("shop-7", LinkKind::Blocks, Inward, "shop-10"),
            ("shop-9", LinkKind::FollowUp, Inward, "shop-1"),
            ("shop-11", LinkKind::Relates, Outward, "shop-8"),
        ]
    );
    assert_eq!(task(&board, "shop-9").links[0].name, "discovered-from");
    assert_eq!(
        task(&board, "shop-12").resolution.as_deref(),
        Some("Duplicate of shop-3")
    );
    assert_eq!(task(&board, "shop-3").resolution.as_deref(), Some("Fixed in b71d0a4"));
    assert_eq!(task(&board, "shop-1").labels, ["checkout", "guest"]);
    assert_eq!(task(&board, "shop-12").record, Record::Line(12));
    assert!(board.tasks.iter().all(|t| t.history.is_none() && !t.was_reopened()));
}

// ---------------------------------------------------------------------------------------------------------------
// Across formats

/// Every sample, with its format and the reason `sniff` gives.
const SNIFFED: [(&str, Format, &str); 8] = [
    (
        "tasks.jsonl",
        Format::Jsonl,
        "one JSON object per line with \"followups\", \"completed_at\": the upstream P3 JSONL",
    ),
    (
        "jira.csv",
        Format::JiraCsv,
        "a CSV header with an \"Issue key\" column: a Jira CSV export",
    ),
    (
        "jira.json",
        Format::JiraJson,
        "a JSON object with an \"issues\" array: a Jira REST search response",
    ),
    (
        "linear.csv",
        Format::LinearCsv,
        "a CSV header with ID, Title, Status and Team: a Linear CSV export (the 34-column shape, with links)",
    ),
    (
        "linear-30.csv",
        Format::LinearCsv,
        "a CSV header with ID, Title, Status and Team: a Linear CSV export (the 30-column shape, without links)",
    ),
    (
        "github-issues.json",
        Format::GithubJson,
        "a JSON array of objects with \"number\" and \"state\": a GitHub issue list (gh issue list --json)",
    ),
    (
        "trello.json",
        Format::TrelloJson,
        "a JSON object with a \"cards\" array: a Trello board export",
    ),
    (
        "beads-issues.jsonl",
        Format::Beads,
        "one JSON object per line with \"issue_type\", \"priority\", \"closed_at\", \"close_reason\": a beads \
         issues.jsonl",
    ),
];

#[test]
fn sniff_recognises_every_sample_and_refuses_the_rest() {
    for (name, format, reason) in SNIFFED {
        let sniffed = sniff(Path::new(name), sample(name).as_bytes()).unwrap();
        assert_eq!((sniffed.format, sniffed.reason.as_str()), (format, reason), "{name}");
    }
    let refuse = |name: &str, text: &str| sniff(Path::new(name), text.as_bytes()).unwrap_err().to_string();
    assert_eq!(
        refuse("github-timeline.jsonl", &sample("github-timeline.jsonl")),
        "github-timeline.jsonl: cannot tell the format: these are GitHub timeline events, not a board: give them \
         together with the GitHub issue list they belong to"
    );
    assert_eq!(
        refuse("notes.txt", "Shopping list:\n- milk\n"),
        "notes.txt: cannot tell the format: not JSON, and the first line (Shopping list:) is neither a Jira CSV \
         header (no \"Issue key\" column) nor a Linear one (ID, Title, Status, Team); pass --format"
    );
    assert_eq!(
        refuse("empty.csv", " \n\n"),
        "empty.csv: cannot tell the format: the file is empty"
    );
}

#[test]
fn open_sniffs_files_and_names_unreadable_ones() {
    let board = open(&samples().join("jira.csv"), None, &berlin()).unwrap();
    assert_eq!(board.format, Format::JiraCsv);
    assert_eq!(
        board.format_reason.as_deref(),
        Some("a CSV header with an \"Issue key\" column: a Jira CSV export")
    );
    assert_eq!(board.tasks.len(), 12);
    let given = open(&samples().join("jira.csv"), Some(Format::JiraCsv), &berlin()).unwrap();
    assert_eq!((given.format_reason, given.tasks), (None, board.tasks));
    let missing = open(Path::new("no/such/board.json"), None, &berlin()).unwrap_err();
    assert_eq!(
        missing.to_string(),
        "no/such/board.json: cannot read: No such file or directory (os error 2)"
    );
}

/// Every format shows the same project: the tasks with a title agree with the Jira REST export on whether they
/// are done, cancelled or open, and on when they were created and completed.
#[test]
fn every_format_shows_the_same_tasks() {
    let reference = board("jira.json", Format::JiraJson);
    let by_title: BTreeMap<&str, &Task> = reference.tasks.iter().map(|t| (t.title.as_str(), t)).collect();
    let (github, _) = github_with_timeline();
    let boards = [
        board("tasks.jsonl", Format::Jsonl),
        board("jira.csv", Format::JiraCsv),
        board("linear.csv", Format::LinearCsv),
        board("linear-30.csv", Format::LinearCsv),
        board("github-issues.json", Format::GithubJson),
        github,
        board("trello.json", Format::TrelloJson),
        board("beads-issues.jsonl", Format::Beads),
    ];
    for board in &boards {
        let mut compared = 0;
        for task in board.tasks.iter().filter(|t| !t.title.is_empty()) {
            let expected = by_title[task.title.as_str()];
            let what = format!("{} {}", board.path.display(), task.id);
            assert_eq!(task.is_done(), expected.is_done(), "{what}");
            assert_eq!(task.is_closed(), expected.is_closed(), "{what}");
            assert_eq!(task.created, expected.created, "{what}");
            assert_eq!(task.completed, expected.completed, "{what}");
            compared += 1;
        }
        let expected = if board.path.ends_with("linear-30.csv") {
            4
        } else {
            11 + usize::from(board.format != Format::Jsonl)
        };
        assert_eq!(compared, expected, "{}", board.path.display());
    }
}

/// Follow-up work on a completed task, from whichever side the format records the link.
#[test]
fn follow_ups_from_either_side_of_a_link() {
    let ids = |board: &Board| -> Vec<(String, Vec<String>)> {
        board
            .follow_ups()
            .into_iter()
            .map(|(origin, ids)| (origin.to_owned(), ids.into_iter().map(str::to_owned).collect()))
            .collect()
    };
    let pairs = |pairs: &[(&str, &[&str])]| -> Vec<(String, Vec<String>)> {
        pairs
            .iter()
            .map(|(o, ids)| (o.to_string(), ids.iter().map(|s| s.to_string()).collect()))
            .collect()
    };
    assert_eq!(
        ids(&board("tasks.jsonl", Format::Jsonl)),
        pairs(&[("SHOP-1", &["SHOP-9"]), ("SHOP-8", &["SHOP-11"])])
    );
    // Jira records the Problem/Incident link on both issues: one follow-up, not two.
    assert_eq!(
        ids(&board("jira.csv", Format::JiraCsv)),
        pairs(&[("SHOP-1", &["SHOP-9"])])
    );
    assert_eq!(
        ids(&board("jira.json", Format::JiraJson)),
        pairs(&[("SHOP-1", &["SHOP-9"])])
    );
    assert_eq!(
        ids(&board("github-issues.json", Format::GithubJson)),
        pairs(&[("#1", &["#9"])])
    );
    assert_eq!(
        ids(&board("beads-issues.jsonl", Format::Beads)),
        pairs(&[("shop-1", &["shop-9"])])
    );
    // Linear has only "Related to", Trello no links at all.
    assert_eq!(ids(&board("linear.csv", Format::LinearCsv)), pairs(&[]));
    assert_eq!(ids(&board("trello.json", Format::TrelloJson)), pairs(&[]));
}

/// Which inputs can see that SHOP-3 was reopened on 12 November.
#[test]
fn the_reopen_is_visible_only_where_the_format_keeps_it() {
    let shows = |board: &Board, id: &str| {
        let task = task(board, id);
        (task.was_reopened(), task.reopened_at.clone(), board.capabilities.reopen)
    };
    let reopened = (true, vec![t("2025-11-12T09:30:00Z")], true);
    let hidden = (false, Vec::new(), false);
    assert_eq!(shows(&board("tasks.jsonl", Format::Jsonl), "SHOP-3"), reopened);
    assert_eq!(shows(&board("jira.json", Format::JiraJson), "SHOP-3"), reopened);
    assert_eq!(shows(&github_with_timeline().0, "#3"), reopened);
    let trello = board("trello.json", Format::TrelloJson);
    assert_eq!(shows(&trello, &trello.tasks[2].id), reopened);
    assert_eq!(shows(&board("jira.csv", Format::JiraCsv), "SHOP-3"), hidden);
    assert_eq!(shows(&board("linear.csv", Format::LinearCsv), "SHOP-3"), hidden);
    assert_eq!(shows(&board("github-issues.json", Format::GithubJson), "#3"), hidden);
    assert_eq!(shows(&board("beads-issues.jsonl", Format::Beads), "shop-3"), hidden);
}

// ---------------------------------------------------------------------------------------------------------------
// Malformed input

/// `text` with `from` replaced by `to` once (which must occur).
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} is not in the sample");
    text.replacen(from, to, 1)
}

/// A JSON sample changed at a JSON pointer.
fn edit_json(name: &str, pointer: &str, value: serde_json::Value) -> String {
    let mut doc: serde_json::Value = serde_json::from_str(&sample(name)).unwrap();
    *doc.pointer_mut(pointer).unwrap_or_else(|| panic!("{pointer}")) = value;
    serde_json::to_string_pretty(&doc).unwrap()
}

#[test]
fn malformed_csv_names_the_line_and_column() {
    let jira = sample("jira.csv");
    assert_eq!(
        error(
            "jira.csv",
            &edit(&jira, "3/Nov/25 9:15 AM", "31/Feb/25 10:32 AM"),
            Format::JiraCsv
        ),
        "jira.csv:2: column \"Created\": \"31/Feb/25 10:32 AM\" is not a date (expected e.g. 21/Nov/25 10:32 AM)"
    );
    // After SHOP-3's three-line description: line 7, not row 5.
    assert_eq!(
        error(
            "jira.csv",
            &edit(&jira, ",4/Nov/25 11:30 AM,", ",4/Nov/25 11:30 XM,"),
            Format::JiraCsv
        ),
        "jira.csv:7: column \"Created\": \"4/Nov/25 11:30 XM\" is not a date (expected e.g. 21/Nov/25 10:32 AM)"
    );
    assert_eq!(
        error(
            "jira.csv",
            &edit(&jira, "Summary,Issue key,", "Summary,Key,"),
            Format::JiraCsv
        ),
        "jira.csv:1: missing column \"Issue key\" (or \"Work item key\")"
    );
    assert_eq!(
        error("jira.csv", &edit(&jira, ",SHOP-6,", ",,"), Format::JiraCsv),
        "jira.csv:9: column \"Issue key\" is empty"
    );
    let linear = sample("linear.csv");
    assert_eq!(
        error("linear.csv", &edit(&linear, ",Status,", ",State,"), Format::LinearCsv),
        "linear.csv:1: missing column \"Status\""
    );
    assert_eq!(
        error(
            "linear.csv",
            &edit(&linear, "2025-11-20T08:50:00Z", "20 Nov 2025"),
            Format::LinearCsv
        ),
        "linear.csv:14: column \"Created\": \"20 Nov 2025\" is not a timestamp (expected e.g. 2024-05-14T08:53:33Z)"
    );
    let mut bytes = jira.clone().into_bytes();
    let at = jira.find("Rate-limit").unwrap();
    bytes[at] = 0xff;
    assert_eq!(
        read(Path::new("jira.csv"), &bytes, Format::JiraCsv, &berlin())
            .unwrap_err()
            .to_string(),
        "jira.csv:9: invalid UTF-8 in column \"Summary\""
    );
}

#[test]
fn malformed_json_lines_name_the_line() {
    let tasks = sample("tasks.jsonl");
    assert_eq!(
        error(
            "tasks.jsonl",
            &edit(
                &tasks,
                "\"completed_at\": \"2025-11-14T16:45:00Z\"",
                "\"completed_at\": 1763138700"
            ),
            Format::Jsonl
        ),
        "tasks.jsonl:3: field \"completed_at\": expected a timestamp string, got number 1763138700"
    );
    assert_eq!(
        error("tasks.jsonl", &edit(&tasks, "\"verified\"", "\"maybe\""), Format::Jsonl),
        "tasks.jsonl:4: field \"outcome\": expected right, verified or wrong, got string \"maybe\""
    );
    assert_eq!(
        error(
            "tasks.jsonl",
            &edit(&tasks, "\"2025-11-12T09:30:00Z\"", "\"last week\""),
            Format::Jsonl
        ),
        "tasks.jsonl:3: field \"reopened_at[0]\": \"last week\" is not a timestamp (expected e.g. 2025-11-10T15:40:00Z)"
    );
    assert_eq!(
        error(
            "tasks.jsonl",
            &edit(&tasks, "[\"SHOP-9\"]", "\"SHOP-9\""),
            Format::Jsonl
        ),
        "tasks.jsonl:1: field \"followups\": expected an array, got string \"SHOP-9\""
    );
    assert_eq!(
        error(
            "tasks.jsonl",
            &edit(&tasks, "\"2025-11-06T09:15:00Z\"}", "\"2025-11-06T09:15:00Z\""),
            Format::Jsonl
        ),
        "tasks.jsonl:5: invalid JSON: EOF while parsing an object at column 152"
    );
    let beads = sample("beads-issues.jsonl");
    assert_eq!(
        error(
            "beads-issues.jsonl",
            &edit(
                &beads,
                "\"labels\": [\"checkout\", \"guest\"]",
                "\"labels\": \"checkout\""
            ),
            Format::Beads
        ),
        "beads-issues.jsonl:1: field \"labels\": expected an array, got string \"checkout\""
    );
    assert_eq!(
        error(
            "beads-issues.jsonl",
            &edit(&beads, "{\"id\": \"shop-4\", ", "{"),
            Format::Beads
        ),
        "beads-issues.jsonl:4: missing field \"id\""
    );
    assert_eq!(
        error(
            "beads-issues.jsonl",
            &edit(&beads, "\"depends_on_id\": \"shop-10\"", "\"depends_on_id\": null"),
            Format::Beads
        ),
        "beads-issues.jsonl:7: missing field \"dependencies[0].depends_on_id\""
    );
}

#[test]
fn malformed_json_documents_name_the_record() {
    let jira = sample("jira.json");
    let cut = jira.find("\"key\": \"SHOP-2\"").unwrap();
    assert_eq!(
        error("jira.json", &jira[..cut], Format::JiraJson),
        "jira.json:119: invalid JSON: EOF while parsing a value at column 6"
    );
    assert_eq!(
        error(
            "jira.json",
            &edit_json("jira.json", "/issues/4/fields/labels", "wishlist".into()),
            Format::JiraJson
        ),
        "jira.json: issues[4]: field \"fields.labels\": expected an array, got string \"wishlist\""
    );
    assert_eq!(
        error(
            "jira.json",
            &edit_json("jira.json", "/issues/2/changelog/histories/0/created", "Nov 4".into()),
            Format::JiraJson
        ),
        "jira.json: issues[2]: field \"changelog.histories[0].created\": \"Nov 4\" is not a timestamp (expected e.g. \
         2025-11-03T09:15:00.000+0100)"
    );
    assert_eq!(
        error("jira.json", "{\"total\": 0}", Format::JiraJson),
        "jira.json: no \"issues\" array: not a Jira REST search response"
    );
    let github = sample("github-issues.json");
    assert_eq!(
        error(
            "github-issues.json",
            &edit(&github, "\"number\": 12,", "\"number\": \"12\","),
            Format::GithubJson
        ),
        "github-issues.json: [0]: field \"number\": expected a non-negative integer, got string \"12\""
    );
    assert_eq!(
        error(
            "github-issues.json",
            &edit(&github, "\"2025-11-11T15:30:00Z\"", "\"11/11/2025\""),
            Format::GithubJson
        ),
        "github-issues.json: [2]: field \"closedAt\": \"11/11/2025\" is not a timestamp (expected e.g. \
         2025-11-03T08:15:00Z)"
    );
    assert_eq!(
        error(
            "github-issues.json",
            &edit(&github, "\"state\": \"OPEN\"", "\"state\": \"MERGED\""),
            Format::GithubJson
        ),
        "github-issues.json: [1]: field \"state\": expected OPEN or CLOSED, got string \"MERGED\""
    );
    assert_eq!(
        error("github-issues.json", "{\"issues\": []}", Format::GithubJson),
        "github-issues.json: expected a JSON array of issues (gh issue list --json …), got an object"
    );
    let trello = sample("trello.json");
    assert_eq!(
        error("trello.json", &trello[..trello.len() - 40], Format::TrelloJson),
        "trello.json:1380: invalid JSON: EOF while parsing an object at column 3"
    );
    assert_eq!(
        error(
            "trello.json",
            &edit_json("trello.json", "/cards/0/closed", "no".into()),
            Format::TrelloJson
        ),
        "trello.json: cards[0]: field \"closed\": expected a boolean, got string \"no\""
    );
    assert_eq!(
        error(
            "trello.json",
            &edit_json("trello.json", "/actions/0/date", "yesterday".into()),
            Format::TrelloJson
        ),
        "trello.json: actions[0]: field \"date\": \"yesterday\" is not a timestamp (expected e.g. \
         2025-11-04T09:00:00.000Z)"
    );
    let timeline = sample("github-timeline.jsonl");
    let mut board = board("github-issues.json", Format::GithubJson);
    let bad = edit(&timeline, "{\"issue\": 3, \"id\": 7000104,", "{\"id\": 7000104,");
    assert_eq!(
        join_github_timeline(&mut board, Path::new("timeline.jsonl"), bad.as_bytes(), &berlin())
            .unwrap_err()
            .to_string(),
        "timeline.jsonl:6: missing field \"issue\" (the number of the issue the event belongs to)"
    );
}

/// Truncated samples, and samples read as another format, fail (or read) without panicking.
#[test]
fn no_input_panics() {
    let names = [
        "tasks.jsonl",
        "jira.csv",
        "jira.json",
        "linear.csv",
        "github-issues.json",
        "github-timeline.jsonl",
        "trello.json",
        "beads-issues.jsonl",
    ];
    for name in names {
        let text = sample(name);
        let bytes = text.as_bytes();
        for format in Format::ALL {
            let _ = read(Path::new(name), bytes, format, &berlin());
            for cut in (0..bytes.len()).step_by(97) {
                let _ = read(Path::new(name), &bytes[..cut], format, &berlin());
            }
        }
        for cut in (0..bytes.len()).step_by(89) {
            let _ = sniff(Path::new(name), &bytes[..cut]);
            let _ = is_github_timeline(&bytes[..cut]);
            let mut github = board("github-issues.json", Format::GithubJson);
            let _ = join_github_timeline(&mut github, Path::new(name), &bytes[..cut], &berlin());
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Timing (not an assertion: run it by hand)

/// Reads a generated one-million-task upstream JSONL and prints how long it took.
#[test]
#[ignore = "timing run: cargo test --release -p pipeline --test board -- --ignored --nocapture"]
fn upstream_jsonl_one_million_tasks() {
    use std::io::Write as _;

    const TASKS: usize = 1_000_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..TASKS {
        let day = 1 + i % 28;
        let hour = i % 24;
        match i % 4 {
            0 => writeln!(
                out,
                r#"{{"id": "T-{i}", "title": "Task {i}", "status": "done", "created_at": "2025-10-{day:02}T{hour:02}:00:00Z", "completed_at": "2025-11-{day:02}T{hour:02}:30:00Z", "outcome": "right", "followups": ["T-{}"]}}"#,
                i + 1
            ),
            1 => writeln!(
                out,
                r#"{{"id": "T-{i}", "status": "done", "completed_at": "2025-11-{day:02}T{hour:02}:30:00+01:00", "reopened_at": ["2025-11-{day:02}T{hour:02}:10:00Z"], "outcome": null}}"#
            ),
            2 => writeln!(out, r#"{{"id": {i}, "status": "in_progress", "completed_at": null}}"#),
            _ => writeln!(
                out,
                r#"{{"id": "T-{i}", "status": "cancelled", "completed_at": "2025-11-{day:02} {hour:02}:45", "outcome": "wrong", "extra": {{"nested": [1, 2, {{"x": "y"}}]}}}}"#
            ),
        }
        .unwrap();
    }
    out.flush().unwrap();
    drop(out);
    let size = std::fs::metadata(&path).unwrap().len();

    let start = std::time::Instant::now();
    let board = open(&path, None, &TimeZone::UTC).unwrap();
    let elapsed = start.elapsed();
    eprintln!(
        "read {} tasks ({:.1} MB) in {:.3} s with {} rayon threads",
        board.tasks.len(),
        size as f64 / 1e6,
        elapsed.as_secs_f64(),
        rayon::current_num_threads()
    );
    assert_eq!(board.format, Format::Jsonl);
    assert_eq!(board.tasks.len(), TASKS);
    let last = &board.tasks[TASKS - 1];
    assert_eq!(
        (last.id.as_str(), last.status_category, last.outcome, last.record),
        ("T-999999", Cancelled, Some(Outcome::Wrong), Record::Line(1_000_000))
    );
    assert_eq!(last.completed, some("2025-11-08T15:45:00Z"));
    assert_eq!(board.tasks[2].id, "2");
    assert_eq!(board.tasks[1].reopened_at, [t("2025-11-02T01:10:00Z")]);
    assert_eq!(board.tasks.iter().filter(|t| t.is_done()).count(), TASKS / 2);
}

#[test]
fn a_ragged_csv_row_is_an_error_at_its_line() {
    // The third row lost a field (a value with an unquoted comma would add one instead): refused, not read by
    // position into the wrong columns.
    let text =
        "Issue key,Status,Created,Resolved\nA-1,Done,2025-01-01 10:00,2025-01-02 10:00\nA-2,Done,2025-01-01 10:00\n";
    assert_eq!(
        error("ragged.csv", text, Format::JiraCsv),
        "ragged.csv:3: 3 fields where the header has 4: a damaged row (a stray comma or quote?)"
    );
    let long = "Issue key,Status,Created,Resolved\nA-1,Done,2025-01-01 10:00,2025-01-02 10:00,extra\n";
    assert_eq!(
        error("long.csv", long, Format::LinearCsv),
        "long.csv:2: 5 fields where the header has 4: a damaged row (a stray comma or quote?)"
    );
}

#[test]
fn json_of_the_wrong_type_and_empty_objects_are_named_for_what_they_are() {
    let sniffed = |text: &str| match pipeline::scan::board::sniff(Path::new("x.json"), text.as_bytes()) {
        Ok(sniffed) => panic!("{text}: sniffed as {:?}", sniffed.format),
        Err(error) => error.to_string(),
    };
    assert_eq!(
        sniffed("42\n"),
        "x.json: cannot tell the format: a JSON number, not a board export (a JSON array, a JSON object or one \
         object per line)"
    );
    assert_eq!(
        sniffed("\"tasks\""),
        "x.json: cannot tell the format: a JSON string, not a board export (a JSON array, a JSON object or one \
         object per line)"
    );
    assert_eq!(
        sniffed("{}\n"),
        "x.json: cannot tell the format: an empty JSON object, which no supported format is (expected one object per \
         task, with an \"id\")"
    );
}
