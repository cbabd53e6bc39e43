#!/usr/bin/env python3
"""What two P3 runs (two versions of experiments/p3.toml) did with each judged signal, as one table.

    p3_versions.py NAME_A=RUNS_A NAME_B=RUNS_B READING_DIR ... > versions.csv

Each RUNS directory holds one directory per repository, named OWNER+NAME, with that run's p3-signals.csv (as
rescore_p3_sheets.py expects). Each READING_DIR holds *.judged.csv sheets. A judged row matches a run's row with the
same task, signal and commit. Columns: reading (the directory's name), repo, task, signal, at, commit, then one
column per run: `counted`, the rule that set the row aside, `not eligible` (no such row: the task is not eligible
under that run's rules) or `no run`.
"""
import csv
import glob
import os
import sys

from rescore_p3_sheets import load_runs, what_the_run_did

runs = []
readings = []
for arg in sys.argv[1:]:
    if "=" in arg:
        name, path = arg.split("=", 1)
        runs.append((name, load_runs(path)))
    else:
        readings.append(arg.rstrip("/"))
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["reading", "repo", "task", "signal", "at", "commit"] + [name for name, _ in runs])
for reading in readings:
    for sheet in sorted(glob.glob(os.path.join(reading, "*.judged.csv"))):
        with open(sheet, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                row = [os.path.basename(reading), r["repo"], r["task"], r["signal"], r["at"], r["commit"]]
                out.writerow(row + [what_the_run_did(signals, r) for _, signals in runs])
