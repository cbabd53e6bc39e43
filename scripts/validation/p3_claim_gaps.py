#!/usr/bin/env python3
"""Time from a task's close to the version that reopens it, for every judged `wrong.reopened` signal.

Run (from the repository's root; MIRRORS holds bare mirrors fetched beforehand, OWNER+NAME/repo):
    python3 scripts/validation/p3_claim_gaps.py --mirrors MIRRORS [--data DIR] [--out CSV]

Defaults: --data pipeline/tests/data  --out claim-gaps.csv
Stdlib only. The judged reopens are those of p3_reclose_gaps.py (every *.judged.csv under DATA/p3-audit*/,
second readers skipped, one row per (repo, task, commit)). For each, the task's record is read in the reopen's
commit C and in C^1 (the version it replaces) from .beads/issues.jsonl, beads.jsonl or bd.jsonl; the gap is
C's `updated_at` (or `updatedAt`) minus C^1's `closed_at`, in seconds (version 9's `claimed-at-close` measures
the same two fields). Prints the judged reopens by gap and writes one row per reopen to CSV.
"""
import argparse
import csv
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from p3_reclose_gaps import git, load_rows, parse_time  # noqa: E402

FILES = (".beads/issues.jsonl", ".beads/beads.jsonl", ".beads/bd.jsonl")
BINS = [(None, 0, "before the close"), (0, 61, "0-60 s"), (61, 300, "1-5 min"), (300, 3600, "5-60 min"),
        (3600, 86400, "1 h - 1 day"), (86400, None, "later")]


def record(repo, rev, task):
    for f in FILES:
        p = git(repo, "show", f"{rev}:{f}", check=False)
        if p.returncode != 0:
            continue
        for line in p.stdout.decode("utf-8", "replace").splitlines():
            if task not in line:
                continue
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if isinstance(o, dict) and o.get("id") == task:
                return o
    return None


def time_of(o, *keys):
    for k in keys:
        v = o.get(k)
        if v:
            try:
                return parse_time(v)
            except ValueError:
                return None
    return None


def judgement(g):
    return g[0] if len(g) == 1 and g[0] in ("yes", "no") else "unclear"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", required=True)
    ap.add_argument("--data", default="pipeline/tests/data")
    ap.add_argument("--out", default="claim-gaps.csv")
    a = ap.parse_args()
    rows = load_rows(a.data)
    tally = Counter()
    repos = set()
    with open(a.out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["repo", "task", "commit", "genuine", "gap_seconds", "from", "to", "note"])
        for (name, task, commit), g in sorted(rows.items()):
            repos.add(name)
            j = judgement(g["genuine"])
            repo = os.path.join(a.mirrors, name.replace("/", "+"), "repo")
            tid = task.split("~", 1)[0]
            before = record(repo, commit + "^1", tid) if os.path.isdir(repo) else None
            after = record(repo, commit, tid) if os.path.isdir(repo) else None
            gap, note = "", ""
            if before is None or after is None:
                note = "no record"
            else:
                closed = time_of(before, "closed_at")
                updated = time_of(after, "updated_at", "updatedAt")
                if closed and updated:
                    gap = int((updated - closed).total_seconds())
                else:
                    note = "no closed_at" if not closed else "no updated_at"
            w.writerow([name, task, commit, "|".join(g["genuine"]), gap,
                        (before or {}).get("status", ""), (after or {}).get("status", ""), note])
            label = "no gap (" + note + ")" if gap == "" else next(
                n for lo, hi, n in BINS if (lo is None or gap >= lo) and (hi is None or gap < hi))
            tally[(label, j)] += 1
    print(f"{len(rows)} judged reopens of {len(repos)} repositories")
    print(f"{'gap':<28}{'genuine':>8}{'not':>6}{'unclear':>9}")
    for label in [n for *_, n in BINS] + sorted({k[0] for k in tally if k[0].startswith("no gap")}):
        print(f"{label:<28}{tally[(label, 'yes')]:>8}{tally[(label, 'no')]:>6}{tally[(label, 'unclear')]:>9}")


if __name__ == "__main__":
    main()
