#!/usr/bin/env python3
"""Scores a `phase0 p2` run (its p2-failures.csv) against oracle judgements read commit by commit.

usage: score_p2.py FAILURES_CSV JUDGED_CSV [--rows]

For every judged remedy the tool also counted: is its failing change the one the reader found (link precision,
over the tool's links), and does its bucket agree with the reader's (over failures both put in a bucket)? Also
recall: of the readers' fixes whose culprit lies inside the 7-day window, how many the tool linked right.
"""
import csv, sys
from collections import Counter

failures = list(csv.DictReader(open(sys.argv[1])))
judged = {r["remedy"]: r for r in csv.DictReader(open(sys.argv[2]))}
show = "--rows" in sys.argv
by_remedy = {}
for f in failures:
    by_remedy.setdefault(f["remedy"], []).append(f)

linked = correct = linked_real = 0
buckets = []
in_window = found = 0
rows = []
for remedy, j in judged.items():
    fs = by_remedy.get(remedy, [])
    truth = j["introducing"] if j["is_fix"] == "yes" else "none"
    window = truth not in ("none", "unknown") and j["days_before"] != "" and int(j["days_before"]) <= 7
    in_window += window
    strong = [f for f in fs if f["failing"] and f.get("evidence", "lines") in ("lines", "adjacent", "sha", "subject")]
    for f in strong:
        linked += 1
        linked_real += truth not in ("none",)
        ok = f["failing"] == truth
        correct += ok
        if f["bucket"] != "ambiguous" and j["bucket"] not in ("", "unclear") and ok:
            buckets.append((f["bucket"], j["bucket"]))
        rows.append((remedy[:10], f["failing"][:10], truth[:10], "OK" if ok else "WRONG", f["rule"], j["bucket"]))
    if window and any(f["failing"] == truth for f in strong):
        found += 1
    if not strong:
        rows.append((remedy[:10], (fs[0]["failing"] or "-")[:10] if fs else "not-a-remedy", truth[:10],
                     "unlinked" if fs else "-", fs[0]["rule"] if fs else "-", j["bucket"]))

def kappa(pairs):
    if not pairs:
        return None
    labels = sorted({a for a, _ in pairs} | {b for _, b in pairs})
    n = len(pairs)
    po = sum(a == b for a, b in pairs) / n
    ca, cb = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    pe = sum(ca[l] * cb[l] for l in labels) / n / n
    return (po - pe) / (1 - pe) if pe < 1 else 1.0

print(f"judged remedies {len(judged)}; tool links {linked}, right {correct}"
      + (f" (precision {correct / linked:.2f})" if linked else "")
      + f"; of the links whose remedy the reader found a real fix: {linked_real}, right {correct}"
      + (f" (link precision {correct / linked_real:.2f})" if linked_real else ""))
print(f"culprits inside the window {in_window}; linked right {found}" + (f" (recall {found / in_window:.2f})" if in_window else ""))
agree = sum(a == b for a, b in buckets)
k = kappa(buckets)
print(f"bucket pairs {len(buckets)}; agree {agree}" + (f" ({agree / len(buckets):.2f}), kappa {k:.2f}" if buckets else ""))
if show:
    for r in rows:
        print("  ", *r)
