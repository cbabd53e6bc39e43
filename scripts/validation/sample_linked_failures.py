#!/usr/bin/env python3
"""Third-round sample for the P2 audit: failures `phase0 p2` linked on line evidence (`evidence` lines or adjacent,
the links it buckets), in sha256(seed:remedy) order, skipping remedies already in the given sheets. The reader is
given the fix only (remedy and subject), never phase0's link.

    sample_linked_failures.py P2-FAILURES.csv N SEED [--exclude SHEET.csv ...] > sample.csv
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
path, n, seed = args[0], int(args[1]), args[2]
done = set()
for sheet in exclude:
    with open(sheet, newline="", encoding="utf-8") as f:
        done |= {r["remedy"] for r in csv.DictReader(f)}
with open(path, newline="", encoding="utf-8") as f:
    rows = [r for r in csv.DictReader(f) if r["evidence"] in ("lines", "adjacent") and r["remedy"] not in done]
rows.sort(key=lambda r: hashlib.sha256(f"{seed}:{r['remedy']}".encode()).hexdigest())
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["remedy", "subject"])
for r in rows[:n]:
    out.writerow([r["remedy"], r["subject"]])
