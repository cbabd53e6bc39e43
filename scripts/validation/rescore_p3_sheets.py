#!/usr/bin/env python3
"""What a P3 run's rules make of signals judged before: for each judged row, whether the run counts it or which
rule sets it aside, and the precision of the judged rows it still counts.

    rescore_p3_sheets.py RUNS_DIR SHEET.judged.csv ...

RUNS_DIR holds one directory per repository, named OWNER+NAME, each with the run's p3-signals.csv. A judged row
(columns repo, task, signal, at, commit, genuine, ...) matches the run's row with the same task, signal and commit.
Rows of repositories with no run, or with no matching row (the task is not eligible under the run's rules), are
listed as such. Precision counts `unclear` as not genuine (as the readings do).
"""
import collections
import csv
import os
import sys

runs, sheets = sys.argv[1], sys.argv[2:]
signals = {}
for repo in os.listdir(runs):
    path = os.path.join(runs, repo, "p3-signals.csv")
    if os.path.exists(path):
        with open(path, newline="", encoding="utf-8") as f:
            signals[repo.replace("+", "/", 1)] = {
                (r["task"], r["signal"], r["commit"]): r["excluded_by"] for r in csv.DictReader(f)
            }
tally = collections.Counter()
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["sheet", "repo", "task", "signal", "commit", "genuine", "now"])
for sheet in sheets:
    with open(sheet, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            run = signals.get(r["repo"])
            if run is None:
                now = "no run"
            else:
                rule = run.get((r["task"], r["signal"], r["commit"]))
                now = "not eligible" if rule is None else (rule or "counted")
            tally[(now, r["genuine"])] += 1
            out.writerow([os.path.basename(sheet), r["repo"], r["task"], r["signal"], r["commit"][:9], r["genuine"], now])
print(file=sys.stderr)
for now in sorted({n for n, _ in tally}):
    print(f"{now:24} " + " ".join(f"{g} {tally[(now, g)]}" for g in ("yes", "no", "unclear")), file=sys.stderr)
kept = sum(v for (n, _), v in tally.items() if n == "counted")
yes = tally[("counted", "yes")]
if kept:
    print(f"counted: {yes} genuine of {kept} = {yes / kept:.2f}", file=sys.stderr)
