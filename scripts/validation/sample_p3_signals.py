#!/usr/bin/env python3
"""Seeded sample of the signals `phase0 p3 --repo` counted (p3-signals.csv rows with no excluded_by), to read.

    sample_p3_signals.py OWNER/NAME P3-SIGNALS.csv N [SEED] [--exclude SHEET.csv ...] > sample.csv

The first N counted signals by sha256(seed:task:signal:at:commit), so nobody picks them; all of them when fewer.
With --exclude, signals of OWNER/NAME already in the given sample or judged sheets (the same task, signal and
commit) are left out before drawing, so that a new reading reads signals not read before.
Columns: repo, task, signal, at, commit, completed, detail (as phase0 wrote them).
"""
import csv
import hashlib
import sys

args = sys.argv[1:]
exclude = []
while "--exclude" in args:
    i = args.index("--exclude")
    exclude.append(args[i + 1])
    del args[i : i + 2]
repo, path, n = args[0], args[1], int(args[2])
seed = args[3] if len(args) > 3 else "20261125"
read_before = set()
for sheet in exclude:
    with open(sheet, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["repo"] == repo:
                read_before.add((r["task"], r["signal"], r["commit"]))
with open(path, newline="", encoding="utf-8") as f:
    counted = [
        r
        for r in csv.DictReader(f)
        if not r["excluded_by"] and (r["task"], r["signal"], r["commit"]) not in read_before
    ]
key = lambda r: hashlib.sha256(f"{seed}:{r['task']}:{r['signal']}:{r['at']}:{r['commit']}".encode()).hexdigest()
counted.sort(key=key)
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["repo", "task", "signal", "at", "commit", "completed", "detail"])
for r in counted[:n]:
    out.writerow([repo, r["task"], r["signal"], r["at"], r["commit"], r["completed"], r["detail"]])
