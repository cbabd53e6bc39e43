#!/usr/bin/env python3
"""Every signal P3 counts over a set of `phase0 p3 --repo` runs, with the reading that judged it.

    p3_census.py RUNS... > pipeline/tests/data/p3-census/population.csv
    p3_census.py --histories RUNS... > pipeline/tests/data/p3-census/histories.csv

A run directory holds one repository's p3-signals.csv (its name is OWNER+NAME). A counted signal is a row with no
`excluded_by`. Its judgement is looked up by (repo, task, signal, commit) in the judged sheets of the readings,
pipeline/tests/data/p3-audit*/*.judged.csv and then p3-census/*.judged.csv (the first sheet holding it, in that
order); a signal none of them holds is written with an empty `genuine`.
Columns: repo, task, signal, at, commit, genuine, judged_in (the sheet, relative to pipeline/tests/data).

With --histories: every run with a counted signal, its eligible tasks, tasks with a counted signal and verdict
(from p3.json): repo, eligible, with_signal, verdict.
"""
import csv
import glob
import json
import os
import sys

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pipeline", "tests", "data")


def judgements():
    found = {}
    sheets = sorted(glob.glob(os.path.join(DATA, "p3-audit*", "*.judged.csv")))
    sheets += sorted(glob.glob(os.path.join(DATA, "p3-census", "*.judged.csv")))
    for sheet in sheets:
        with open(sheet, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                key = (r["repo"], r["task"], r["signal"], r["commit"])
                found.setdefault(key, (r["genuine"], os.path.relpath(sheet, DATA)))
    return found


def main(runs):
    judged = judgements()
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["repo", "task", "signal", "at", "commit", "genuine", "judged_in"])
    for run in sorted(runs):
        path = os.path.join(run, "p3-signals.csv")
        if not os.path.exists(path):
            continue
        repo = os.path.basename(run.rstrip("/")).replace("+", "/", 1)
        with open(path, newline="", encoding="utf-8") as f:
            counted = [r for r in csv.DictReader(f) if not r["excluded_by"]]
        for r in sorted(counted, key=lambda r: (r["task"], r["signal"], r["at"], r["commit"])):
            genuine, sheet = judged.get((repo, r["task"], r["signal"], r["commit"]), ("", ""))
            out.writerow([repo, r["task"], r["signal"], r["at"], r["commit"], genuine, sheet])


def histories(runs):
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["repo", "eligible", "with_signal", "verdict"])
    for run in sorted(runs):
        path = os.path.join(run, "p3.json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            analysis = json.load(f)["report"]["analysis"]
        if analysis["counts"]["with_signal"]:
            repo = os.path.basename(run.rstrip("/")).replace("+", "/", 1)
            counts = analysis["counts"]
            out.writerow([repo, counts["eligible"], counts["with_signal"], analysis["verdict"]["kind"]])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--histories"] and len(sys.argv) > 2:
        histories(sys.argv[2:])
    elif len(sys.argv) > 1:
        main(sys.argv[1:])
    else:
        sys.exit(__doc__)
