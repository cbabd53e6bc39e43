#!/usr/bin/env python3
"""Writes the P3 sample board exports of data/p3/ from one table of twelve tasks.

The same small web-shop project ("SHOP", November 2025) in every supported format, so that a test can compare
what two formats observe of the same work. All names, ids, hashes and URLs are invented (example.com-style).

Run from anywhere: `python3 data/p3/generate.py`. The output is deterministic; the committed files are its output.

Files:
  tasks.jsonl              upstream P3 JSONL (id, status, completed_at, outcome, reopened_at, followups[])
  jira.csv                 Jira CSV export, times in Europe/Berlin local time (export with --tz Europe/Berlin)
  jira.json                Jira REST search response with expand=changelog
  linear.csv               Linear CSV export, 34 columns
  linear-30.csv            Linear CSV export, 30 columns (four of the tasks)
  github-issues.json       gh issue list --json body,closedAt,closedByPullRequestsReferences,createdAt,labels,
                           number,state,stateReason,title,url
  github-timeline.jsonl    GitHub REST timeline events, one per line, each with the "issue" it belongs to
  trello.json              Trello board export
  beads-issues.jsonl       beads .beads/issues.jsonl
"""

import csv
import io
import json
import os
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

HERE = os.path.dirname(os.path.abspath(__file__))
BERLIN = ZoneInfo("Europe/Berlin")

# status flow: (UTC time, state) with state in todo | progress | review | done | reopened | cancelled
TASKS = [
    dict(n=1, kind="Story", title="Add guest checkout", labels=["checkout", "guest"],
         created="2025-11-03T08:15:00Z",
         flow=[("2025-11-04T09:00:00Z", "progress"), ("2025-11-10T15:40:00Z", "done")],
         pr=21, assignee="Mara Lind"),
    dict(n=2, kind="Story", title="Show delivery estimate on product page", labels=["catalog"],
         created="2025-11-03T09:02:00Z",
         flow=[("2025-11-05T08:30:00Z", "progress"), ("2025-11-07T10:20:00Z", "done")],
         pr=22, outcome="right", assignee="Tomás Ortega"),
    dict(n=3, kind="Bug", title="Cart total ignores discount codes", labels=["checkout", "pricing"],
         created="2025-11-04T07:45:00Z",
         flow=[("2025-11-04T13:00:00Z", "progress"), ("2025-11-06T14:00:00Z", "done"),
               ("2025-11-12T09:30:00Z", "reopened"), ("2025-11-12T10:00:00Z", "progress"),
               ("2025-11-14T16:45:00Z", "done")],
         pr=26, assignee="Priya Natarajan",
         commits=[("2025-11-06T13:58:00Z", "3f9c2e1a7b4d5e6f708192a3b4c5d6e7f8091a2b"),
                  ("2025-11-14T16:45:00Z", "b71d0a4c2e3f405162738495a6b7c8d9e0f1a2b3")]),
    dict(n=4, kind="Task", title="Migrate order emails to the new template engine", labels=["email"],
         created="2025-11-04T10:30:00Z",
         flow=[("2025-11-06T08:00:00Z", "progress"), ("2025-11-12T12:10:00Z", "done")],
         pr=23, outcome="verified", assignee="Tomás Ortega"),
    dict(n=5, kind="Story", title="Share wishlists by link", labels=["wishlist"],
         created="2025-11-04T11:00:00Z",
         flow=[("2025-11-06T09:15:00Z", "cancelled")], resolution="Won't Do", assignee=None),
    dict(n=6, kind="Task", title="Rate-limit login attempts", labels=["security"],
         created="2025-11-05T08:00:00Z",
         flow=[("2025-11-17T09:00:00Z", "progress")], assignee="Mara Lind"),
    dict(n=7, kind="Story", title="Saved payment methods", labels=["checkout", "payments"],
         created="2025-10-24T14:30:00Z", flow=[], assignee=None, backlog=True),
    dict(n=8, kind="Bug", title="Search returns archived products", labels=["search"],
         created="2025-11-05T12:20:00Z",
         flow=[("2025-11-06T09:00:00Z", "progress"), ("2025-11-10T11:05:00Z", "done")],
         pr=24, outcome="wrong", assignee="Priya Natarajan"),
    dict(n=9, kind="Bug", title="Guest checkout loses the shipping address on back navigation",
         labels=["checkout", "guest"], created="2025-11-13T13:05:00Z",
         flow=[("2025-11-13T14:00:00Z", "progress"), ("2025-11-18T10:00:00Z", "done")],
         pr=27, assignee="Mara Lind"),
    dict(n=10, kind="Task", title="Upgrade the payment SDK to v5", labels=["payments"],
         created="2025-11-06T08:40:00Z",
         flow=[("2025-11-06T09:00:00Z", "progress"), ("2025-11-11T15:30:00Z", "done")],
         pr=25, assignee="Tomás Ortega"),
    dict(n=11, kind="Bug", title="Archived products still listed in the sitemap", labels=["search", "seo"],
         created="2025-11-20T08:50:00Z",
         flow=[("2025-11-21T09:10:00Z", "progress"), ("2025-11-24T15:00:00Z", "review")],
         assignee="Priya Natarajan"),
    dict(n=12, kind="Bug", title="Coupon code rejected at checkout", labels=["checkout"],
         created="2025-11-12T08:30:00Z",
         flow=[("2025-11-12T09:00:00Z", "cancelled")], resolution="Duplicate", assignee=None),
]
BY_N = {t["n"]: t for t in TASKS}

# Links, as (from, kind, to): 1 caused 9, 10 blocks 7, 12 duplicates 3, 11 relates to 8 (a follow-up).
CAUSES = [(1, 9)]
BLOCKS = [(10, 7)]
DUPLICATES = [(12, 3)]
RELATES = [(11, 8)]

DESCRIPTIONS = {
    3: 'Steps:\n1. Add "SUMMER25" to the cart\n2. Open the cart, the total is unchanged, the line shows -10%',
    9: "Reported by support: after going back from the payment step, the address form is empty.",
}


def ts(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def iso_z(text):
    return ts(text).strftime("%Y-%m-%dT%H:%M:%SZ")


def berlin(text):
    return ts(text).astimezone(BERLIN)


def jira_csv_date(text):
    # dd/MMM/yy h:mm a, day and hour not zero-padded
    d = berlin(text)
    hour = d.hour % 12 or 12
    return f"{d.day}/{d.strftime('%b')}/{d.strftime('%y')} {hour}:{d.minute:02d} {'AM' if d.hour < 12 else 'PM'}"


def jira_rest_date(text):
    d = berlin(text)
    return d.strftime("%Y-%m-%dT%H:%M:%S.000") + d.strftime("%z")


def beads_date(text):
    return berlin(text).isoformat()


def final(t):
    return t["flow"][-1][1] if t["flow"] else "todo"


def final_time(t):
    return t["flow"][-1][0] if t["flow"] else t["created"]


def closed_at(t):
    return t["flow"][-1][0] if final(t) in ("done", "cancelled") else None


def started_at(t):
    return next((at for at, state in t["flow"] if state == "progress"), None)


def write(name, text):
    with open(os.path.join(HERE, name), "w", encoding="utf-8", newline="") as f:
        f.write(text)


# ---------------------------------------------------------------------------------------------------------------
# upstream JSONL

def upstream():
    words = {"done": "done", "cancelled": "cancelled", "progress": "in_progress", "review": "in_review",
             "todo": "todo"}
    followups = {1: ["SHOP-9"], 8: [{"id": "SHOP-11", "kind": "relates"}]}
    lines = []
    for t in TASKS:
        n = t["n"]
        if n == 7:  # the upstream script tolerates missing fields
            lines.append({"id": "SHOP-7", "status": "todo"})
            continue
        row = {"id": f"SHOP-{n}", "title": t["title"], "status": words[final(t)],
               "created_at": iso_z(t["created"])}
        if n != 6:
            row["completed_at"] = iso_z(closed_at(t)) if closed_at(t) else None
        if "outcome" in t:
            row["outcome"] = t["outcome"]
        reopens = [iso_z(at) for at, state in t["flow"] if state == "reopened"]
        if reopens:
            row["reopened_at"] = reopens
        if n in followups:
            row["followups"] = followups[n]
        lines.append(row)
    write("tasks.jsonl", "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines))


# ---------------------------------------------------------------------------------------------------------------
# Jira

JIRA_STATUS = {"todo": "To Do", "progress": "In Progress", "review": "In Review", "done": "Done",
               "reopened": "Reopened", "cancelled": "Done"}
JIRA_CATEGORY = {"To Do": ("new", "To Do", 2), "In Progress": ("indeterminate", "In Progress", 4),
                 "In Review": ("indeterminate", "In Progress", 4), "Done": ("done", "Done", 3),
                 "Reopened": ("new", "To Do", 2)}


def jira_links(n):
    """(type name, inward wording, outward wording, direction, other) for task n; links appear on both sides."""
    out = []
    for kind, pairs, inward, outward in [("Blocks", BLOCKS, "is blocked by", "blocks"),
                                         ("Duplicate", DUPLICATES, "is duplicated by", "duplicates"),
                                         ("Problem/Incident", CAUSES, "is caused by", "causes"),
                                         ("Relates", RELATES, "relates to", "relates to")]:
        for a, b in pairs:
            if n == a:
                out.append((kind, inward, outward, "outward", b))
            if n == b:
                out.append((kind, inward, outward, "inward", a))
    return out


def jira_csv():
    header = ["Summary", "Issue key", "Issue id", "Issue Type", "Status", "Project key", "Project name",
              "Priority", "Resolution", "Assignee", "Reporter", "Created", "Updated", "Resolved", "Labels",
              "Labels", "Description", "Inward issue link (Blocks)", "Outward issue link (Blocks)",
              "Inward issue link (Duplicate)", "Outward issue link (Duplicate)",
              "Inward issue link (Problem/Incident)", "Outward issue link (Problem/Incident)",
              "Inward issue link (Relates)", "Outward issue link (Relates)", "Parent", "Parent summary",
              "Status Category", "Status Category Changed"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for t in TASKS:
        n = t["n"]
        state = final(t)
        status = JIRA_STATUS[state]
        resolution = t.get("resolution", "Done") if state in ("done", "cancelled") else ""
        row = {h: "" for h in header}
        row.update({
            "Summary": t["title"], "Issue key": f"SHOP-{n}", "Issue id": str(10000 + n), "Issue Type": t["kind"],
            "Status": status, "Project key": "SHOP", "Project name": "Web Shop",
            "Priority": "High" if t["kind"] == "Bug" else "Medium", "Resolution": resolution,
            "Assignee": t["assignee"] or "", "Reporter": "Mara Lind", "Created": jira_csv_date(t["created"]),
            "Updated": jira_csv_date(final_time(t)),
            "Resolved": jira_csv_date(closed_at(t)) if closed_at(t) else "",
            "Description": DESCRIPTIONS.get(n, ""), "Status Category": JIRA_CATEGORY[status][1],
            "Status Category Changed": jira_csv_date(final_time(t)),
        })
        cells = [row[h] for h in header]
        for i, label in enumerate(t["labels"][:2]):
            cells[header.index("Labels") + i] = label
        for kind, _, _, direction, other in jira_links(n):
            column = f"{'Inward' if direction == 'inward' else 'Outward'} issue link ({kind})"
            cells[header.index(column)] = f"SHOP-{other}"
        writer.writerow(cells)
    write("jira.csv", out.getvalue())


def jira_json():
    issues = []
    base = "https://shop-example.atlassian.net/rest/api/2"
    for t in TASKS:
        n = t["n"]
        state = final(t)
        status = JIRA_STATUS[state]
        key, cat_name, cat_id = JIRA_CATEGORY[status]
        histories = []
        previous = "To Do"
        for i, (at, st) in enumerate(t["flow"]):
            to = JIRA_STATUS[st]
            items = [{"field": "status", "fieldtype": "jira", "fieldId": "status", "from": "1", "fromString": previous,
                      "to": "2", "toString": to}]
            if i == 0 and t["assignee"]:
                items.insert(0, {"field": "assignee", "fieldtype": "jira", "fieldId": "assignee", "from": None,
                                 "fromString": None, "to": "u1", "toString": t["assignee"]})
            histories.append({"id": str(30000 + n * 10 + i), "author": {"displayName": t["assignee"] or "Mara Lind"},
                              "created": jira_rest_date(at), "items": items})
            previous = to
        links = []
        for j, (kind, inward, outward, direction, other) in enumerate(jira_links(n)):
            link = {"id": str(20000 + n * 10 + j), "type": {"id": "1000" + str(j), "name": kind, "inward": inward,
                                                           "outward": outward}}
            link["outwardIssue" if direction == "outward" else "inwardIssue"] = {
                "id": str(10000 + other), "key": f"SHOP-{other}",
                "fields": {"summary": BY_N[other]["title"]}}
            links.append(link)
        resolution = None
        if state in ("done", "cancelled"):
            resolution = {"id": "1", "name": t.get("resolution", "Done")}
        fields = {
            "summary": t["title"],
            "issuetype": {"id": "1", "name": t["kind"], "subtask": False},
            "status": {"name": status, "id": "1", "statusCategory": {"id": cat_id, "key": key, "name": cat_name}},
            "resolution": resolution,
            "created": jira_rest_date(t["created"]),
            "updated": jira_rest_date(final_time(t)),
            "resolutiondate": jira_rest_date(closed_at(t)) if closed_at(t) else None,
            "statuscategorychangedate": jira_rest_date(final_time(t)),
            "labels": t["labels"],
            "issuelinks": links,
            "assignee": {"displayName": t["assignee"]} if t["assignee"] else None,
        }
        issues.append({"expand": "operations,editmeta,changelog,renderedFields", "id": str(10000 + n),
                       "self": f"{base}/issue/{10000 + n}", "key": f"SHOP-{n}", "fields": fields,
                       "changelog": {"startAt": 0, "maxResults": len(histories), "total": len(histories),
                                     "histories": histories}})
    doc = {"expand": "names,schema", "startAt": 0, "maxResults": 50, "total": len(issues), "issues": issues}
    write("jira.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------------------------
# Linear

LINEAR_30 = ["ID", "Team", "Title", "Description", "Status", "Estimate", "Priority", "Project ID", "Project",
             "Creator", "Assignee", "Labels", "Cycle Number", "Cycle Name", "Cycle Start", "Cycle End", "Created",
             "Updated", "Started", "Triaged", "Completed", "Canceled", "Archived", "Due Date", "Parent issue",
             "Initiatives", "Project Milestone ID", "Project Milestone", "SLA Status", "Roadmaps"]
LINEAR_34 = LINEAR_30 + ["UUID", "Time in status (minutes)", "Related to", "Blocked by", "Duplicate of"]
LINEAR_STATUS = {"todo": "Todo", "progress": "In Progress", "review": "In Review", "done": "Done"}


def linear(name, header, numbers):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for n in numbers:
        t = BY_N[n]
        state = final(t)
        status = LINEAR_STATUS.get(state) or ("Duplicate" if t.get("resolution") == "Duplicate" else "Canceled")
        labels = (["Bug"] if t["kind"] == "Bug" else []) + t["labels"]
        related = [f"SHOP-{b if a == n else a}" for a, b in RELATES + CAUSES if n in (a, b)]
        row = {
            "ID": f"SHOP-{n}", "Team": "Shop", "Title": t["title"], "Description": DESCRIPTIONS.get(n, ""),
            "Status": status, "Estimate": "2", "Priority": "High" if t["kind"] == "Bug" else "Medium",
            "Project ID": "5f0c8a52-1d7e-4c8e-9b1a-000000000001", "Project": "Web Shop Q4",
            "Creator": "Mara Lind", "Assignee": t["assignee"] or "", "Labels": ", ".join(labels),
            "Cycle Number": "12", "Cycle Name": "Cycle 12", "Cycle Start": "2025-11-03T00:00:00Z",
            "Cycle End": "2025-11-17T00:00:00Z", "Created": iso_z(t["created"]), "Updated": iso_z(final_time(t)),
            "Started": iso_z(started_at(t)) if started_at(t) else "", "Triaged": "",
            "Completed": iso_z(closed_at(t)) if state == "done" else "",
            "Canceled": iso_z(closed_at(t)) if state == "cancelled" else "", "Archived": "", "Due Date": "",
            "Parent issue": "", "Initiatives": "", "Project Milestone ID": "", "Project Milestone": "",
            "SLA Status": "", "Roadmaps": "", "UUID": f"8d1c3e9a-0000-4000-8000-{n:012d}",
            "Time in status (minutes)": "", "Related to": ", ".join(related),
            "Blocked by": ", ".join(f"SHOP-{a}" for a, b in BLOCKS if b == n),
            "Duplicate of": ", ".join(f"SHOP-{b}" for a, b in DUPLICATES if a == n),
        }
        writer.writerow([row[h] for h in header])
    write(name, out.getvalue())


# ---------------------------------------------------------------------------------------------------------------
# GitHub

REPO = "https://github.com/example/shop"
GH_LABELS = {
    "bug": ("LA_kwDOShop001", "Something isn't working", "d73a4a"),
    "enhancement": ("LA_kwDOShop002", "New feature or request", "a2eeef"),
}
GH_BODIES = {
    1: "Customers can check out without an account.\n\nUpstream tracking: example/payments#4",
    7: "Blocked by #10: the v5 SDK is the first to expose stored payment methods.",
    9: "Regression of #1: after going back from the payment step, the address form is empty.",
    11: "Related to #8. The sitemap job still lists archived products.",
    12: "Duplicate of #3",
}


AREA_LABELS = sorted({name for t in TASKS for name in t["labels"]})


def gh_label(name):
    area_id = f"LA_kwDOShop{100 + AREA_LABELS.index(name):03d}" if name in AREA_LABELS else ""
    id_, description, color = GH_LABELS.get(name, (area_id, "", "ededed"))
    return {"color": color, "description": description, "id": id_, "name": name}


def github():
    issues = []
    for t in sorted(TASKS, key=lambda t: -t["n"]):  # gh lists newest first
        n = t["n"]
        state = final(t)
        closed = state in ("done", "cancelled")
        reason = ""
        if closed:
            reason = {"Won't Do": "NOT_PLANNED", "Duplicate": "DUPLICATE"}.get(t.get("resolution"), "COMPLETED")
        names = ["bug" if t["kind"] == "Bug" else "enhancement"] + t["labels"]
        prs = []
        if closed and "pr" in t:
            prs = [{"id": f"PR_kwDOShop{t['pr']:03d}", "number": t["pr"],
                    "repository": {"id": "R_kgDOShop", "name": "shop", "owner": {"id": "O_kgDOExample",
                                                                                  "login": "example"}},
                    "url": f"{REPO}/pull/{t['pr']}"}]
        issues.append({
            "body": GH_BODIES.get(n, ""),
            "closedAt": iso_z(closed_at(t)) if closed else None,
            "closedByPullRequestsReferences": prs,
            "createdAt": iso_z(t["created"]),
            "labels": [gh_label(name) for name in names],
            "number": n,
            "state": "CLOSED" if closed else "OPEN",
            "stateReason": reason,
            "title": t["title"],
            "url": f"{REPO}/issues/{n}",
        })
    write("github-issues.json", json.dumps(issues, indent=2, ensure_ascii=False) + "\n")

    events = []
    next_id = [7000100]

    def event(issue, kind, at, **extra):
        next_id[0] += 1
        e = {"issue": issue, "id": next_id[0], "node_id": f"EV_{next_id[0]}",
             "url": f"https://api.github.com/repos/example/shop/issues/events/{next_id[0]}",
             "actor": {"login": "mara-lind"}, "event": kind, "commit_id": None, "commit_url": None,
             "created_at": iso_z(at)}
        e.update(extra)
        events.append(e)

    def cross(issue, at, source, pull):
        src = {"number": source, "title": BY_N[source]["title"] if source in BY_N else f"Fix for #{issue}",
               "html_url": f"{REPO}/{'pull' if pull else 'issues'}/{source}"}
        if pull:
            src["pull_request"] = {"html_url": f"{REPO}/pull/{source}"}
        events.append({"issue": issue, "event": "cross-referenced", "actor": {"login": "mara-lind"},
                       "created_at": iso_z(at), "updated_at": iso_z(at),
                       "source": {"type": "issue", "issue": src}})

    for t in TASKS:
        n = t["n"]
        commits = dict((at, sha) for at, sha in t.get("commits", []))
        if n == 3:
            event(3, "labeled", "2025-11-04T07:46:00Z", label={"name": "pricing", "color": "ededed"})
            event(3, "referenced", "2025-11-06T13:58:00Z", commit_id=commits["2025-11-06T13:58:00Z"])
        if n == 1:
            cross(1, "2025-11-05T10:00:00Z", 21, True)
        for at, state in t["flow"]:
            if state in ("done", "cancelled"):
                reason = {"Won't Do": "not_planned", "Duplicate": "duplicate"}.get(t.get("resolution"), "completed")
                sha = commits.get(at) or (commits.get("2025-11-06T13:58:00Z") if at == "2025-11-06T14:00:00Z" else None)
                event(n, "closed", at, state_reason=reason, commit_id=sha)
            elif state == "reopened":
                event(n, "reopened", at)
        if n == 1:
            cross(1, "2025-11-13T13:05:00Z", 9, False)
        if n == 3:
            cross(3, "2025-11-12T08:30:00Z", 12, False)
        if n == 8:
            cross(8, "2025-11-20T08:50:00Z", 11, False)
    # The issues/events endpoint also lists pull request events: #21 is a pull request, not in the issue list.
    event(21, "merged", "2025-11-10T15:39:00Z", commit_id="c0ffee1234567890abcdef1234567890abcdef12")
    event(21, "closed", "2025-11-10T15:39:00Z")
    write("github-timeline.jsonl", "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events))


# ---------------------------------------------------------------------------------------------------------------
# Trello

TRELLO_LISTS = [("Backlog", "todo"), ("To Do", "todo"), ("Doing", "progress"), ("Review", "review"),
                ("Done \U0001F389", "done"), ("Won't do", "cancelled")]


def hex_id(at, salt):
    return f"{int(ts(at).timestamp()):08x}{salt:016x}"


def trello():
    board_id = hex_id("2025-10-20T08:00:00Z", 0xB0A4D)
    lists = []
    list_ids = {}
    for i, (name, _) in enumerate(TRELLO_LISTS):
        lid = hex_id("2025-10-20T08:00:00Z", 0x1157 + i)
        list_ids[name] = lid
        lists.append({"id": lid, "name": name, "closed": False, "idBoard": board_id, "pos": 16384 * (i + 1)})
    by_state = {"progress": "Doing", "review": "Review", "done": "Done \U0001F389", "cancelled": "Won't do",
                "reopened": "Doing"}
    labels = {}
    for t in TASKS:
        for name in (["bug"] if t["kind"] == "Bug" else []) + t["labels"]:
            labels.setdefault(name, {"id": hex_id("2025-10-20T08:00:00Z", 0x1AB0 + len(labels)), "idBoard": board_id,
                                     "name": name, "color": "red" if name == "bug" else "blue"})
    cards, actions = [], []
    action_n = [0]

    def action(kind, at, data):
        action_n[0] += 1
        actions.append({"id": hex_id(at, 0xAC00 + action_n[0]), "idMemberCreator": hex_id("2025-10-01T00:00:00Z", 1),
                        "type": kind, "date": ts(at).strftime("%Y-%m-%dT%H:%M:%S.000Z"), "data": data})

    for t in TASKS:
        n = t["n"]
        card_id = hex_id(t["created"], 0xCA00 + n)
        short = f"Sh{n:02d}pXq"
        first = "Backlog" if t.get("backlog") else "To Do"
        current = by_state.get(final(t), first)
        card_ref = {"id": card_id, "name": t["title"], "idShort": n, "shortLink": short}
        if n != 7:  # SHOP-7's creation is older than the actions the export keeps: its id still dates it
            action("createCard", t["created"], {"board": {"id": board_id, "name": "Web Shop"}, "card": card_ref,
                                                "list": {"id": list_ids[first], "name": first}})
        where = first
        for at, state in t["flow"]:
            to = by_state[state]
            if state == "progress" and where == "Doing":
                continue  # Jira's Reopened -> In Progress is one move back to Doing on Trello
            action("updateCard", at, {"board": {"id": board_id, "name": "Web Shop"}, "card": dict(card_ref, idList=list_ids[to]),
                                      "old": {"idList": list_ids[where]},
                                      "listBefore": {"id": list_ids[where], "name": where},
                                      "listAfter": {"id": list_ids[to], "name": to}})
            where = to
        if n == 5:  # archived after being dropped
            action("updateCard", "2025-11-06T09:16:00Z", {"board": {"id": board_id, "name": "Web Shop"},
                                                          "card": dict(card_ref, closed=True),
                                                          "old": {"closed": False}})
        if n == 2:  # a rename is an updateCard without a list move
            action("updateCard", "2025-11-05T08:31:00Z", {"board": {"id": board_id, "name": "Web Shop"},
                                                          "card": card_ref, "old": {"name": "Delivery estimate"}})
        if n == 9:
            action("commentCard", "2025-11-13T13:20:00Z", {"board": {"id": board_id, "name": "Web Shop"},
                                                           "card": card_ref, "text": "Caused by the guest checkout change"})
        cards.append({
            "id": card_id, "name": t["title"], "idShort": n, "shortLink": short, "idList": list_ids[current],
            "idBoard": board_id, "closed": n == 5,
            "dateLastActivity": ts(final_time(t)).strftime("%Y-%m-%dT%H:%M:%S.000Z"), "desc": "",
            "labels": [labels[name] for name in (["bug"] if t["kind"] == "Bug" else []) + t["labels"]],
            "due": None, "url": f"https://trello.com/c/{short}/{n}-{t['title'].lower().replace(' ', '-')}",
            "shortUrl": f"https://trello.com/c/{short}",
        })
    actions.sort(key=lambda a: a["date"], reverse=True)  # exports list the newest action first
    doc = {"id": board_id, "name": "Web Shop", "desc": "", "closed": False,
           "url": "https://trello.com/b/WebShp01/web-shop", "actions": actions, "cards": cards,
           "labels": list(labels.values()), "lists": lists, "checklists": [], "members": []}
    write("trello.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------------------------
# beads

def beads():
    types = {"Story": "feature", "Bug": "bug", "Task": "task"}
    status = {"todo": "open", "progress": "in_progress", "review": "in_progress", "done": "closed",
              "cancelled": "closed"}
    reasons = {5: "Won't do: wishlists are out of scope this quarter", 12: "Duplicate of shop-3",
               3: "Fixed in b71d0a4"}
    deps = {9: [("shop-1", "discovered-from")], 7: [("shop-10", "blocks")], 11: [("shop-8", "related")]}
    lines = []
    for t in TASKS:
        n = t["n"]
        state = final(t)
        row = {"id": f"shop-{n}", "title": t["title"], "description": DESCRIPTIONS.get(n, ""),
               "status": status[state], "priority": 1 if t["kind"] == "Bug" else 2, "issue_type": types[t["kind"]],
               "created_at": beads_date(t["created"]), "updated_at": beads_date(final_time(t))}
        if t["assignee"]:
            row["assignee"] = t["assignee"]
        if closed_at(t):
            row["closed_at"] = beads_date(closed_at(t))
            row["close_reason"] = reasons.get(n, "Completed")
        row["labels"] = t["labels"]
        if n in deps:
            row["dependencies"] = [{"issue_id": f"shop-{n}", "depends_on_id": target, "type": kind,
                                    "created_at": beads_date(t["created"]), "created_by": "mara"}
                                   for target, kind in deps[n]]
        lines.append(row)
    write("beads-issues.jsonl", "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines))


if __name__ == "__main__":
    upstream()
    jira_csv()
    jira_json()
    linear("linear.csv", LINEAR_34, [t["n"] for t in TASKS])
    linear("linear-30.csv", LINEAR_30, [1, 3, 6, 9])
    github()
    trello()
    beads()
