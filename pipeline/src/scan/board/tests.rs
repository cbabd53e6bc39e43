//! Unit tests of the pieces: status keywords, dates, zones, link phrases, sniffing, timelines.

use std::path::Path;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::github::body_links;
use super::lines::{parse_lines, split_chunks};
use super::status::{jira_status, mentions_reopen, reason_cancels, resolution_cancels};
use super::time::parse_instant;
use super::*;

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn berlin() -> TimeZone {
    TimeZone::get("Europe/Berlin").unwrap()
}

#[test]
fn status_keywords() {
    use StatusCategory::*;
    let cases = [
        ("To Do", Todo),
        ("todo", Todo),
        ("Backlog", Todo),
        ("Reopened", Todo),
        ("Selected for Development", Todo),
        ("open", Todo),
        ("In Progress", InProgress),
        ("in_progress", InProgress),
        ("Ready for Review", InProgress),
        ("Code Review", InProgress),
        ("In QA", InProgress),
        ("Doing", InProgress),
        ("Blocked", InProgress),
        ("Done", Done),
        ("Done 🎉", Done),
        ("DONE ✔", Done),
        ("Closed", Done),
        ("Shipped", Done),
        ("Complete", Done),
        ("Resolved", Done),
        ("Won't Do", Cancelled),
        ("Won’t do", Cancelled),
        ("wontfix", Cancelled),
        ("Canceled", Cancelled),
        ("Cancelled", Cancelled),
        ("Duplicate", Cancelled),
        ("Closed - Duplicate", Cancelled),
        ("Not planned", Cancelled),
        ("Icebox ❄", Todo),
        ("Parking lot", Unknown),
        ("", Unknown),
        ("Undone", Unknown),
    ];
    for (name, category) in cases {
        assert_eq!(category_of_status(name), category, "{name:?}");
    }
}

#[test]
fn jira_categories_and_resolutions() {
    use StatusCategory::*;
    assert_eq!(jira_status("Done", Some("Done"), Some("Done")), Done);
    assert_eq!(jira_status("Done", Some("done"), Some("Won't Do")), Cancelled);
    assert_eq!(jira_status("Closed", Some("Done"), Some("Cannot Reproduce")), Cancelled);
    assert_eq!(jira_status("Closed", Some("Done"), Some("Fixed")), Done);
    assert_eq!(jira_status("Won't Do", Some("Done"), None), Cancelled);
    assert_eq!(jira_status("Awaiting deploy", Some("indeterminate"), None), InProgress);
    assert_eq!(jira_status("Triage", Some("new"), None), Todo);
    assert_eq!(jira_status("Parking lot", Some("To Do"), None), Todo);
    // Without a status category column: keywords, a cancelling resolution turns Done into Cancelled.
    assert_eq!(jira_status("Resolved", None, Some("Duplicate")), Cancelled);
    assert_eq!(jira_status("Resolved", None, Some("Fixed")), Done);
    assert_eq!(jira_status("Parking lot", None, None), Unknown);
    assert!(resolution_cancels("Won't Fix"));
    assert!(resolution_cancels("Incomplete"));
    assert!(!resolution_cancels("Done"));
}

#[test]
fn close_reasons_cancel_only_at_the_start() {
    assert!(reason_cancels("Duplicate of bd-12"));
    assert!(reason_cancels("Won't do: out of scope"));
    assert!(reason_cancels("Closed as not planned"));
    assert!(reason_cancels("cannot reproduce on main"));
    assert!(!reason_cancels("Fixed invalid input handling"));
    assert!(!reason_cancels("Completed"));
    assert!(!reason_cancels(""));
}

#[test]
fn reopen_words() {
    assert!(mentions_reopen("Reopened"));
    assert!(mentions_reopen("REOPENED"));
    assert!(mentions_reopen("Re-opened"));
    assert!(!mentions_reopen("Open"));
}

#[test]
fn jira_dates_in_every_seen_shape() {
    let utc = TimeZone::UTC;
    let cases = [
        ("21/Nov/25 10:32 AM", "2025-11-21T10:32:00Z"),
        ("2/Jan/06 3:04 PM", "2006-01-02T15:04:00Z"),
        ("2/Jan/06 15:04", "2006-01-02T15:04:00Z"),
        ("2/Jan/2006 3:04 PM", "2006-01-02T15:04:00Z"),
        ("Jan/2/06 3:04 PM", "2006-01-02T15:04:00Z"),
        ("2006-01-02 15:04", "2006-01-02T15:04:00Z"),
        ("2006-01-02 15:04:05", "2006-01-02T15:04:05Z"),
        ("2/Jan/06", "2006-01-02T00:00:00Z"),
        ("2006-01-02", "2006-01-02T00:00:00Z"),
        ("12/Dec/25 12:05 AM", "2025-12-12T00:05:00Z"),
        ("12/Dec/25 12:05 PM", "2025-12-12T12:05:00Z"),
        ("1/sept/25 9:00 am", "2025-09-01T09:00:00Z"),
        ("1/September/25 9:00AM", "2025-09-01T09:00:00Z"),
        (" 3/Mar/69 1:00 PM ", "1969-03-03T13:00:00Z"),
        ("3/Mar/68 1:00 PM", "2068-03-03T13:00:00Z"),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_jira_date(text, &utc), Some(ts(expected)), "{text:?}");
    }
    for text in [
        "31/Feb/25 10:32 AM",
        "21/Nov/25 13:32 PM",
        "21/Nov/25 0:32 AM",
        "21/Nov/25 24:00",
        "21/Nov/25 10:3 AM",
        "21/Foo/25 10:32 AM",
        "21/11/25 10:32",
        "2025-13-01 10:00",
        "21/Nov/025 10:32",
        "yesterday",
        "",
    ] {
        assert_eq!(parse_jira_date(text, &utc), None, "{text:?}");
    }
}

#[test]
fn jira_dates_take_the_zone_with_its_dst_rules() {
    let tz = berlin();
    // Winter (CET, +01:00) and summer (CEST, +02:00).
    assert_eq!(
        parse_jira_date("3/Nov/25 9:15 AM", &tz),
        Some(ts("2025-11-03T08:15:00Z"))
    );
    assert_eq!(
        parse_jira_date("24/Oct/25 4:30 PM", &tz),
        Some(ts("2025-10-24T14:30:00Z"))
    );
    // The gap of 30 March 2025 (02:00-03:00 does not exist): compatible = the later offset's reading.
    assert_eq!(
        parse_jira_date("30/Mar/25 2:30 AM", &tz),
        Some(ts("2025-03-30T01:30:00Z"))
    );
    // The fold of 26 October 2025 (02:00-03:00 twice): compatible = the earlier instant.
    assert_eq!(
        parse_jira_date("26/Oct/25 2:30 AM", &tz),
        Some(ts("2025-10-26T00:30:00Z"))
    );
    let fixed = parse_time_zone("-05:30").unwrap();
    assert_eq!(
        parse_jira_date("3/Nov/25 9:15 AM", &fixed),
        Some(ts("2025-11-03T14:45:00Z"))
    );
}

#[test]
fn instants_with_and_without_offsets() {
    let tz = berlin();
    let cases = [
        ("2025-11-03T08:15:00Z", "2025-11-03T08:15:00Z"),
        ("2025-11-03T09:15:00.000+0100", "2025-11-03T08:15:00Z"),
        ("2025-11-03T09:15:00+01:00", "2025-11-03T08:15:00Z"),
        ("2025-10-31T21:08:03.389259-07:00", "2025-11-01T04:08:03.389259Z"),
        ("2025-11-03T09:15:00", "2025-11-03T08:15:00Z"),
        ("2025-11-03 09:15", "2025-11-03T08:15:00Z"),
        ("2025-11-03", "2025-11-02T23:00:00Z"),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_instant(text, &tz), Some(ts(expected)), "{text:?}");
    }
    assert_eq!(parse_instant("3/Nov/25", &tz), None);
    assert_eq!(parse_instant("2025-02-30T10:00:00Z", &tz), None);
}

#[test]
fn time_zones() {
    let at = ts("2025-11-03T08:15:00Z");
    let offset = |name: &str| parse_time_zone(name).unwrap().to_offset(at).seconds();
    assert_eq!(offset("Europe/Berlin"), 3600);
    assert_eq!(offset("UTC"), 0);
    assert_eq!(offset("utc"), 0);
    assert_eq!(offset("Z"), 0);
    assert_eq!(offset("+02:00"), 7200);
    assert_eq!(offset("-0530"), -19800);
    assert_eq!(offset("+2"), 7200);
    assert_eq!(offset("UTC+01:00"), 3600);
    assert_eq!(offset("GMT-3"), -10800);
    for bad in ["Mars/Olympus", "+25:00", "+02:60", "+", "+123", "+1é1", "UTCé", ""] {
        let err = parse_time_zone(bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "--tz {bad:?}: not a time zone (expected an IANA name such as Europe/Berlin, UTC, or an offset such \
                 as +02:00)"
            )
        );
    }
}

#[test]
fn link_kinds_by_name() {
    let cases = [
        ("Blocks", LinkKind::Blocks),
        ("Relates", LinkKind::Relates),
        ("Duplicate", LinkKind::Duplicates),
        ("Cloners", LinkKind::Clones),
        ("Problem/Incident", LinkKind::Causes),
        ("Causes", LinkKind::Causes),
        ("Regression", LinkKind::Regression),
        ("is a regression of", LinkKind::Regression),
        ("Follow-up", LinkKind::FollowUp),
        ("discovered-from", LinkKind::FollowUp),
        ("Parent", LinkKind::Parent),
        ("Test", LinkKind::Other),
    ];
    for (name, kind) in cases {
        assert_eq!(LinkKind::from_name(name), kind, "{name}");
    }
    assert!(LinkKind::Causes.is_follow_up() && LinkKind::Regression.is_follow_up());
    assert!(LinkKind::FollowUp.is_follow_up() && !LinkKind::Relates.is_follow_up());
    assert_eq!(LinkKind::FollowUp.to_string(), "follow-up");
}

#[test]
fn body_phrases_make_links() {
    let links = body_links(
        "Regression of #1: the form resets.\nCaused by: #2, also #3\nthis is a follow-up to #4.\n\
         Duplicate of #5\nBLOCKED BY #6 and blocks #7\nSee also #8; related to example/other#9; relates to #10x\n\
         Fixes #11 (not a link), prefix-caused by #12, regression of #1 again",
    );
    let got: Vec<(LinkKind, LinkDirection, &str, &str)> = links
        .iter()
        .map(|l| (l.kind, l.direction, l.name.as_str(), l.target.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (LinkKind::Regression, LinkDirection::Inward, "regression of", "#1"),
            (LinkKind::Causes, LinkDirection::Inward, "caused by", "#2"),
            (LinkKind::FollowUp, LinkDirection::Inward, "follow-up to", "#4"),
            (LinkKind::Duplicates, LinkDirection::Outward, "duplicate of", "#5"),
            (LinkKind::Blocks, LinkDirection::Inward, "blocked by", "#6"),
            (LinkKind::Blocks, LinkDirection::Outward, "blocks", "#7"),
            (LinkKind::Relates, LinkDirection::Outward, "see also", "#8"),
            (LinkKind::Causes, LinkDirection::Inward, "caused by", "#12"),
        ]
    );
    assert!(body_links("").is_empty());
    assert!(body_links("# heading\n#\n##12 caused by #").is_empty());
}

#[test]
fn outcomes_from_words() {
    assert_eq!(Outcome::from_word(" Verified "), Ok(Some(Outcome::Verified)));
    assert_eq!(Outcome::from_word("RIGHT"), Ok(Some(Outcome::Right)));
    assert_eq!(Outcome::from_word("reverted"), Ok(Some(Outcome::Wrong)));
    assert_eq!(Outcome::from_word("n/a"), Ok(None));
    assert_eq!(
        Outcome::from_word("Maybe"),
        Err("expected right, verified or wrong, got \"maybe\"".to_owned())
    );
    assert!(Outcome::Verified.is_right() && !Outcome::Wrong.is_right());
}

#[test]
fn formats_by_name() {
    for format in Format::ALL {
        assert_eq!(format.name().parse::<Format>(), Ok(format));
    }
    assert_eq!(
        "xml".parse::<Format>(),
        Err(
            "unknown format \"xml\" (expected auto, jsonl, jira-csv, jira-json, linear-csv, github-json, trello-json, \
             beads, parquet)"
                .to_owned()
        )
    );
}

#[test]
fn capabilities_name_what_is_missing() {
    assert_eq!(
        Capabilities::of(Format::JiraCsv).missing(),
        [
            "status history",
            "reopen dates",
            "explicit outcomes",
            "commit and pull request references"
        ]
    );
    assert_eq!(
        Capabilities::of(Format::Jsonl).missing(),
        [
            "creation times",
            "task types",
            "status history",
            "labels",
            "commit and pull request references"
        ]
    );
}

#[test]
fn reopens_are_changes_out_of_closed_categories() {
    let change = |at: &str, from: Option<&str>, to: &str| StatusChange {
        at: ts(at),
        from: from.map(str::to_owned),
        to: to.to_owned(),
        to_category: category_of_status(to),
        provenance: None,
    };
    let history = [
        change("2025-01-01T00:00:00Z", Some("To Do"), "Done"),
        change("2025-01-02T00:00:00Z", None, "In Progress"),
        change("2025-01-03T00:00:00Z", Some("In Progress"), "Won't Do"),
        change("2025-01-04T00:00:00Z", Some("Won't Do"), "Done"),
        change("2025-01-05T00:00:00Z", Some("Closed"), "Backlog"),
    ];
    assert_eq!(
        reopens(&history, category_of_status),
        [ts("2025-01-02T00:00:00Z"), ts("2025-01-05T00:00:00Z")]
    );
    assert_eq!(
        closed_at_from_history(&history, StatusCategory::Done),
        Some(ts("2025-01-04T00:00:00Z"))
    );
    assert_eq!(closed_at_from_history(&history, StatusCategory::Todo), None);
}

#[test]
fn line_chunks_cover_the_input() {
    let input = b"aaa\nbb\n\nccccc\nd";
    for size in 1..=input.len() + 1 {
        let chunks = split_chunks(input, size);
        assert_eq!(chunks.concat(), input.to_vec(), "size {size}");
        for c in &chunks[..chunks.len() - 1] {
            assert!(c.ends_with(b"\n"), "size {size}: {c:?}");
        }
    }
    let parsed = parse_lines(b"a\r\n\n  \nb\n\xff\n", 2, |n, text| Ok(Some((n, text.to_owned()))));
    assert_eq!(parsed, Err((5, "invalid UTF-8 at column 1".to_owned())));
    let parsed = parse_lines(b"a\r\n\n  \nb\n", 2, |n, text| Ok(Some((n, text.to_owned()))));
    assert_eq!(parsed, Ok(vec![(1, "a".to_owned()), (4, "b".to_owned())]));
}

fn sniffed(name: &str, text: &str) -> Result<(Format, String), String> {
    sniff(Path::new(name), text.as_bytes())
        .map(|s| (s.format, s.reason))
        .map_err(|e| e.to_string())
}

#[test]
fn a_beads_export_that_starts_with_a_memory_record_is_beads() {
    // `bd export -o tasks.jsonl` of beads 1.x: every record typed; a `memory` one has no other beads field.
    let text = concat!(
        r#"{"_type":"memory","key":"jj-fix","value":"jj fix runs configured formatters"}"#,
        "\n",
        r#"{"_type":"issue","id":"bd-1","title":"t","status":"closed","closed_at":"2026-05-01T10:00:00Z"}"#,
        "\n",
    );
    assert_eq!(
        sniffed("tasks.jsonl", text),
        Ok((
            Format::Beads,
            "one JSON object per line with \"_type\": a beads issues.jsonl".to_owned()
        ))
    );
}

#[test]
fn sniffing_small_inputs() {
    assert_eq!(
        sniffed("x.json", "\u{feff} [ ] "),
        Ok((
            Format::GithubJson,
            "an empty JSON array: an empty GitHub issue list".to_owned()
        ))
    );
    assert_eq!(
        sniffed("t.jsonl", "\n{\"id\": \"A-1\", \"status\": \"done\"}\n"),
        Ok((
            Format::Jsonl,
            "one JSON object per line with an \"id\" and no beads field: the upstream P3 JSONL".to_owned()
        ))
    );
    assert_eq!(
        sniffed(
            "repo/.beads/issues.jsonl",
            "{\"id\": \"bd-1\", \"title\": \"x\", \"status\": \"open\"}\n"
        ),
        Ok((
            Format::Beads,
            "one JSON object per line in .beads/issues.jsonl: a beads issues.jsonl".to_owned()
        ))
    );
    assert_eq!(
        sniffed(
            "board.json",
            "{\"id\": \"b\", \"name\": \"B\", \"cards\": [], \"lists\": []}"
        ),
        Ok((
            Format::TrelloJson,
            "a JSON object with a \"cards\" array: a Trello board export".to_owned()
        ))
    );
    assert_eq!(
        sniffed("e.json", "{\n  \"total\": 0,\n  \"issues\": ["),
        Ok((
            Format::JiraJson,
            "a JSON object with an \"issues\" array: a Jira REST search response".to_owned()
        ))
    );
    assert_eq!(
        sniffed("x.csv", ""),
        Err("x.csv: cannot tell the format: the file is empty".to_owned())
    );
    assert_eq!(
        sniffed("x.csv", "Name,Owner,Due\nA,B,C\n"),
        Err(
            "x.csv: cannot tell the format: not JSON, and the first line (Name, Owner, Due) is neither a Jira CSV \
             header (no \"Issue key\" column) nor a Linear one (ID, Title, Status, Team); pass --format"
                .to_owned()
        )
    );
    assert_eq!(
        sniffed("x.json", "{\n  \"name\": \"n\",\n  \"items\": []\n}"),
        Err(
            "x.json: cannot tell the format: a JSON object with keys \"name\", \"items\": neither a Jira REST \
             response (no \"issues\") nor a Trello board (no \"cards\")"
                .to_owned()
        )
    );
    assert_eq!(
        sniffed("x.json", "{\n  \"name\": "),
        Err(
            "x.json: cannot tell the format: a JSON object with keys \"name\": neither a Jira REST response (no \
             \"issues\") nor a Trello board (no \"cards\")"
                .to_owned()
        )
    );
    assert_eq!(
        sniffed("x.json", "{\n  oops"),
        Err("x.json: cannot tell the format: not valid JSON (key must be a string at line 2 column 3)".to_owned())
    );
    assert_eq!(
        sniffed("x.json", "[{\"id\": 1, \"name\": \"x\"}, {"),
        Err(
            "x.json: cannot tell the format: a JSON array of objects with keys \"id\", \"name\", not a GitHub issue \
             list (no \"number\" and \"state\")"
                .to_owned()
        )
    );
    assert_eq!(
        sniffed("x.json", "[1, 2]"),
        Err(
            "x.json: cannot tell the format: a JSON array, but its first element is not a JSON object (invalid type: \
             integer `1`, expected a JSON object at line 1 column 2)"
                .to_owned()
        )
    );
    let timeline = "x.json: cannot tell the format: these are GitHub timeline events, not a board: give them \
                    together with the GitHub issue list they belong to";
    assert_eq!(sniffed("x.json", "[{\"event\": \"closed\"}]"), Err(timeline.to_owned()));
    assert_eq!(
        sniffed("x.json", "{\"event\": \"closed\", \"issue\": 3}\n"),
        Err(timeline.to_owned())
    );
    assert_eq!(sniffed("x.json", "{\n\"12\": []\n}"), Err(timeline.to_owned()));
    assert_eq!(
        sniffed("x.jsonl", "{\"name\": \"x\"}\n"),
        Err(
            "x.jsonl: cannot tell the format: one JSON object per line with keys \"name\", which no supported format \
             has (expected \"id\")"
                .to_owned()
        )
    );
}

#[test]
fn github_timeline_shapes() {
    assert!(is_github_timeline(b"[{\"event\": \"closed\", \"issue\": 1}]"));
    assert!(is_github_timeline(
        b"{\"event\": \"closed\", \"issue\": 1}\n{\"event\": \"reopened\"}\n"
    ));
    assert!(is_github_timeline(b"{\n \"1\": [],\n \"2\": []\n}"));
    assert!(!is_github_timeline(b"[{\"number\": 1, \"state\": \"OPEN\"}]"));
    assert!(!is_github_timeline(b"{\"id\": \"A\"}\n"));
    assert!(!is_github_timeline(b"ID,Title\n"));
}

const ISSUES: &str = r#"[
  {"number": 7, "state": "CLOSED", "stateReason": "COMPLETED", "createdAt": "2025-01-01T10:00:00Z",
   "closedAt": "2025-01-09T10:00:00Z", "url": "https://github.com/o/r/issues/7", "labels": ["plain"],
   "parent": {"number": 1}, "subIssues": {"nodes": [{"number": 8}]},
   "timeline": [
     {"event": "closed", "created_at": "2025-01-09T10:00:00Z", "commit_id": "abc"},
     {"event": "cross-referenced", "created_at": "2025-01-03T10:00:00Z",
      "source": {"issue": {"number": 4, "html_url": "https://github.com/other/repo/issues/4"}}},
     {"event": "cross-referenced", "created_at": "2025-01-04T10:00:00Z",
      "source": {"issue": {"number": 5, "html_url": "https://github.com/o/r/pull/5", "pull_request": {}}}},
     {"event": "reopened", "created_at": "2025-01-06T10:00:00Z"},
     {"event": "closed", "created_at": "2025-01-05T10:00:00Z", "state_reason": "not_planned"},
     {"event": "labeled", "label": {"name": "x"}}
   ]},
  {"number": 9, "state": "OPEN", "stateReason": "REOPENED"}
]"#;

#[test]
fn github_embedded_timeline() {
    let board = read(
        Path::new("i.json"),
        ISSUES.as_bytes(),
        Format::GithubJson,
        &TimeZone::UTC,
    )
    .unwrap();
    let task = &board.tasks[0];
    assert_eq!(task.id, "#7");
    assert_eq!(task.labels, ["plain"]);
    assert_eq!(task.url.as_deref(), Some("https://github.com/o/r/issues/7"));
    let links: Vec<(LinkKind, LinkDirection, &str)> = task
        .links
        .iter()
        .map(|l| (l.kind, l.direction, l.target.as_str()))
        .collect();
    assert_eq!(
        links,
        [
            (LinkKind::Parent, LinkDirection::Inward, "#1"),
            (LinkKind::Parent, LinkDirection::Outward, "#8")
        ]
    );
    let history: Vec<(Timestamp, Option<&str>, &str, StatusCategory)> = task
        .history
        .iter()
        .flatten()
        .map(|c| (c.at, c.from.as_deref(), c.to.as_str(), c.to_category))
        .collect();
    assert_eq!(
        history,
        [
            (
                ts("2025-01-05T10:00:00Z"),
                Some("OPEN"),
                "CLOSED",
                StatusCategory::Cancelled
            ),
            (ts("2025-01-06T10:00:00Z"), Some("CLOSED"), "OPEN", StatusCategory::Todo),
            (ts("2025-01-09T10:00:00Z"), Some("OPEN"), "CLOSED", StatusCategory::Done),
        ]
    );
    assert_eq!(task.reopened_at, [ts("2025-01-06T10:00:00Z")]);
    let references: Vec<(ReferenceKind, &str, Option<Timestamp>)> = task
        .references
        .iter()
        .map(|r| (r.kind, r.target.as_str(), r.at))
        .collect();
    assert_eq!(
        references,
        [
            (
                ReferenceKind::Issue,
                "https://github.com/other/repo/issues/4",
                Some(ts("2025-01-03T10:00:00Z"))
            ),
            (ReferenceKind::PullRequest, "#5", Some(ts("2025-01-04T10:00:00Z"))),
            (ReferenceKind::ClosedByCommit, "abc", Some(ts("2025-01-09T10:00:00Z"))),
        ]
    );
    // The second issue has no timeline: no history, but its stateReason shows a reopen.
    assert_eq!(board.tasks[1].history, None);
    assert!(board.tasks[1].was_reopened());
    assert!(board.capabilities.status_history);
    assert_eq!(
        board.notes,
        ["1 of 2 issues have no timeline: their reopens, closing commits and cross-references are unknown"]
    );
    assert_eq!(board.newest_timestamp(), Some(ts("2025-01-09T10:00:00Z")));
}

#[test]
fn github_timeline_file_as_an_object_of_issue_numbers() {
    let issues = r#"[{"number": 3, "state": "OPEN"}, {"number": 4, "state": "CLOSED"}]"#;
    let mut board = read(
        Path::new("i.json"),
        issues.as_bytes(),
        Format::GithubJson,
        &TimeZone::UTC,
    )
    .unwrap();
    let timeline = r#"{"3": [{"event": "closed", "created_at": "2025-02-01T00:00:00Z"},
                             {"event": "reopened", "created_at": "2025-02-02T00:00:00Z"}],
                       "5": [{"event": "closed", "created_at": "2025-02-03T00:00:00Z"}]}"#;
    let join = join_github_timeline(&mut board, Path::new("t.json"), timeline.as_bytes(), &TimeZone::UTC).unwrap();
    assert_eq!(
        join,
        TimelineJoin {
            events: 3,
            issues: 1,
            unknown_issues: vec![5]
        }
    );
    assert_eq!(board.tasks[0].reopened_at, [ts("2025-02-02T00:00:00Z")]);
    assert_eq!(board.tasks[1].history, Some(Vec::new()));
    // A closed issue without closedAt takes its last close from the timeline; here it has none.
    assert_eq!(board.tasks[1].completed, None);
    assert_eq!(
        board.notes,
        ["t.json: events of 1 issues that are not in the issue list were ignored (#5)"]
    );
    let bad = r#"{"3": [{"event": "closed", "created_at": "soon"}]}"#;
    let err = join_github_timeline(&mut board, Path::new("t.json"), bad.as_bytes(), &TimeZone::UTC).unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.json: issue 3: field \"3[0].created_at\": \"soon\" is not a timestamp (expected e.g. 2025-11-03T08:15:00Z)"
    );
    let jira = read(
        Path::new("j.json"),
        b"{\"issues\": []}",
        Format::JiraJson,
        &TimeZone::UTC,
    )
    .unwrap();
    let mut jira = jira;
    let err = join_github_timeline(&mut jira, Path::new("t.json"), b"[]", &TimeZone::UTC).unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.json: a GitHub timeline can only be joined with a GitHub issue list, not with a Jira REST JSON"
    );
}

#[test]
fn record_locations_in_messages() {
    assert_eq!(Record::Line(12).to_string(), "line 12");
    assert_eq!(
        Record::Item {
            array: "cards",
            index: 4
        }
        .to_string(),
        "cards[4]"
    );
    assert_eq!(Record::Item { array: "", index: 3 }.to_string(), "[3]");
    let err = BoardError::invalid(
        Path::new("a/b.json"),
        Record::Item {
            array: "issues",
            index: 3,
        },
        "bad",
    );
    assert_eq!(err.to_string(), "a/b.json: issues[3]: bad");
    let err = BoardError::invalid(Path::new("b.csv"), Record::Line(17), "bad");
    assert_eq!(err.to_string(), "b.csv:17: bad");
}

#[test]
fn beads_update_time_is_the_later_of_both_spellings() {
    let read = |line: &str| {
        let tasks = super::beads::read(Path::new(".beads/issues.jsonl"), line.as_bytes(), &TimeZone::UTC).unwrap();
        tasks.into_iter().next().unwrap()
    };
    let base = r#"{"id":"bd-1","title":"t","status":"open","updated_at":"2026-02-21T19:29:53Z""#;
    // A tool that writes `updatedAt` and never touches `updated_at` again (45ck/Portarium).
    let camel = read(&format!(r#"{base},"updatedAt":"2026-02-22T20:37:20.338Z"}}"#));
    assert_eq!(camel.updated, Some(ts("2026-02-22T20:37:20.338Z")));
    let older_camel = read(&format!(r#"{base},"updatedAt":"2026-02-01T00:00:00Z"}}"#));
    assert_eq!(older_camel.updated, Some(ts("2026-02-21T19:29:53Z")));
    let only_camel = read(r#"{"id":"bd-1","status":"open","updatedAt":"2026-02-22T20:37:20Z"}"#);
    assert_eq!(only_camel.updated, Some(ts("2026-02-22T20:37:20Z")));
    let unreadable = read(&format!(r#"{base},"updatedAt":"yesterday"}}"#));
    assert_eq!(unreadable.updated, Some(ts("2026-02-21T19:29:53Z")), "read leniently");
}

#[test]
fn beads_dependencies_written_as_bare_ids_are_untyped_links() {
    // The export of agentic-research/signet (`"schema_version": 1`): a dependency is the id it depends on. Before, such
    // a line made its whole version unreadable ("expected an object, got string").
    let text = concat!(
        r#"{"schema_version":1,"id":"signet-041353","title":"t","status":"open","dependencies":["signet-c784cf"," ",""]}"#,
        "\n",
        r#"{"id":"bd-2","title":"u","status":"open","dependencies":[{"issue_id":"bd-2","depends_on_id":"bd-1","type":"discovered-from"}]}"#,
        "\n",
    );
    let tasks = super::beads::read(Path::new(".beads/beads.jsonl"), text.as_bytes(), &TimeZone::UTC).unwrap();
    let links: Vec<(&str, LinkKind, LinkDirection, &str)> = tasks
        .iter()
        .flat_map(|t| {
            t.links
                .iter()
                .map(move |l| (t.id.as_str(), l.kind, l.direction, l.target.as_str()))
        })
        .collect();
    assert_eq!(
        links,
        [
            (
                "signet-041353",
                LinkKind::Other,
                LinkDirection::Outward,
                "signet-c784cf"
            ),
            ("bd-2", LinkKind::FollowUp, LinkDirection::Inward, "bd-1"),
        ]
    );
    // Anything else in the list is still refused, with its place.
    let err = super::beads::read(
        Path::new("x.jsonl"),
        br#"{"id":"bd-3","title":"t","dependencies":["bd-1",7]}"#,
        &TimeZone::UTC,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "x.jsonl:1: field \"dependencies[1]\": expected an object, got number 7"
    );
}

#[test]
fn beads_records_of_another_type_are_no_tasks() {
    // Beads 1.x's export, as fzymgc-house/fzymgc-house-skills commits it: issues typed `issue`, and `memory` records
    // (no id) beside them. Before, the memory line made the whole version unreadable.
    let text = concat!(
        r#"{"_type":"issue","id":"bd-1","title":"t","status":"closed","closed_at":"2026-05-01T10:00:00Z"}"#,
        "\n",
        r#"{"_type":"memory","key":"jj-fix-command","value":"jj fix runs configured formatters"}"#,
        "\n",
        r#"{"id":"bd-2","title":"u","status":"open"}"#,
        "\n",
    );
    let tasks = super::beads::read(Path::new(".beads/issues.jsonl"), text.as_bytes(), &TimeZone::UTC).unwrap();
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["bd-1", "bd-2"]);
    assert_eq!(tasks[1].record, Record::Line(3));
    // An issue line still needs its id.
    let err = super::beads::read(
        Path::new("x.jsonl"),
        br#"{"_type":"issue","title":"t"}"#,
        &TimeZone::UTC,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "x.jsonl:1: missing field \"id\"");
}
