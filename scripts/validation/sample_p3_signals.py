#!/usr/bin/env python3
"""Seeded sample of the signals `phase0 p3 --repo` counted (p3-signals.csv rows with no excluded_by), to read.

    sample_p3_signals.py OWNER/NAME P3-SIGNALS.csv N [SEED] > sample.csv

The first N counted signals by sha256(seed:task:signal:at:commit), so nobody picks them; all of them when fewer.
Columns: repo, task, signal, at, commit, completed, detail (as phase0 wrote them).
"""
import csv
import hashlib
import sys

repo, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
seed = sys.argv[4] if len(sys.argv) > 4 else "20261125"
with open(path, newline="", encoding="utf-8") as f:
    counted = [r for r in csv.DictReader(f) if not r["excluded_by"]]
key = lambda r: hashlib.sha256(f"{seed}:{r['task']}:{r['signal']}:{r['at']}:{r['commit']}".encode()).hexdigest()
counted.sort(key=key)
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["repo", "task", "signal", "at", "commit", "completed", "detail"])
for r in counted[:n]:
    out.writerow([repo, r["task"], r["signal"], r["at"], r["commit"], r["completed"], r["detail"]])
