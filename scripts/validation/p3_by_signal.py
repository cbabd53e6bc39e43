#!/usr/bin/env python3
"""Genuine of counted, per signal kind, over judged P3 readings: what each kind of signal is worth on its own.

    p3_by_signal.py READING_DIR:VERSION_COLUMN ...      (run from pipeline/tests/data)

Each READING_DIR holds *.judged.csv sheets and a versions.csv (scripts/validation/p3_versions.py) whose rows name
their reading; VERSION_COLUMN is the versions.csv column whose `counted` rows are tallied. A reading whose
versions.csv lives in another directory is given as DIR=VERSIONS_DIR:COLUMN. Unclear judgements count as not
genuine. Prints one line per reading and kind, then the totals, with Wilson 95% intervals.
"""
import csv
import glob
import math
import os
import sys
from collections import Counter


def wilson(k, n, z=1.959963984540054):
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (c - h, c + h)


def key(r):
    return (r["repo"], r["task"], r["signal"], r["at"], r["commit"])


total = Counter()
for arg in sys.argv[1:]:
    spec, column = arg.rsplit(":", 1)
    reading, _, versions_dir = spec.partition("=")
    versions_dir = versions_dir or reading
    judged = {}
    for sheet in glob.glob(os.path.join(reading, "*.judged.csv")):
        with open(sheet, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                judged[key(r)] = r["genuine"]
    tally = Counter()
    with open(os.path.join(versions_dir, "versions.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    # A versions.csv that covers one reading may name it otherwise (p3-audit-v8's says `final`).
    name = os.path.basename(reading.rstrip("/"))
    if all(r["reading"] != name for r in rows):
        name = rows[0]["reading"] if len({r["reading"] for r in rows}) == 1 else name
    for r in rows:
        if r["reading"] != name or r[column] != "counted":
            continue
        genuine = judged[key(r)] == "yes"
        tally[(r["signal"], genuine)] += 1
    for signal in sorted({s for s, _ in tally}):
        yes, n = tally[(signal, True)], tally[(signal, True)] + tally[(signal, False)]
        print(f"{reading} {column} {signal}: {yes} of {n}")
    total.update(tally)
print("all readings:")
for group, kinds in [
    ("wrong.reopened", ["wrong.reopened"]),
    ("wrong.commit", ["wrong.commit"]),
    ("wrong.follow-up", ["wrong.follow-up"]),
    ("reopens and commits", ["wrong.reopened", "wrong.commit"]),
    ("every kind", ["wrong.reopened", "wrong.commit", "wrong.follow-up"]),
]:
    yes = sum(total[(k, True)] for k in kinds)
    n = yes + sum(total[(k, False)] for k in kinds)
    lo, hi = wilson(yes, n)
    print(f"  {group}: {yes} of {n} = {yes / n:.2f} [{lo:.2f}, {hi:.2f}]" if n else f"  {group}: none")
