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


def load_runs(runs):
    """Each repository's p3-signals.csv of RUNS_DIR: {OWNER/NAME: {(task, signal, commit): excluded_by}}."""
    signals = {}
    for repo in os.listdir(runs):
        path = os.path.join(runs, repo, "p3-signals.csv")
        if os.path.exists(path):
            with open(path, newline="", encoding="utf-8") as f:
                signals[repo.replace("+", "/", 1)] = {
                    (r["task"], r["signal"], r["commit"]): r["excluded_by"] for r in csv.DictReader(f)
                }
    return signals


def what_the_run_did(signals, row):
    """`counted`, the rule that set the judged `row` aside, `not eligible` (no such row) or `no run`."""
    run = signals.get(row["repo"])
    if run is None:
        return "no run"
    rule = run.get((row["task"], row["signal"], row["commit"]))
    return "not eligible" if rule is None else (rule or "counted")


def main():
    runs, sheets = sys.argv[1], sys.argv[2:]
    signals = load_runs(runs)
    tally = collections.Counter()
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["sheet", "repo", "task", "signal", "commit", "genuine", "now"])
    for sheet in sheets:
        with open(sheet, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                now = what_the_run_did(signals, r)
                tally[(now, r["genuine"])] += 1
                out.writerow(
                    [os.path.basename(sheet), r["repo"], r["task"], r["signal"], r["commit"][:9], r["genuine"], now]
                )
    print(file=sys.stderr)
    for now in sorted({n for n, _ in tally}):
        print(f"{now:24} " + " ".join(f"{g} {tally[(now, g)]}" for g in ("yes", "no", "unclear")), file=sys.stderr)
    kept = sum(v for (n, _), v in tally.items() if n == "counted")
    yes = tally[("counted", "yes")]
    if kept:
        print(f"counted: {yes} genuine of {kept} = {yes / kept:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
