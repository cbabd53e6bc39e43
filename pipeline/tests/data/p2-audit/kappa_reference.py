#!/usr/bin/env python3
"""Reference values for the P2 audit read-back, from independent implementations (scikit-learn, plain Python).

Reads every sheet given (default: hand-made.csv beside this script) and prints, per repository and for all rows:
the audited rows, the failures, link ok/judged, observed agreement (sklearn accuracy_score) and Cohen's kappa
(sklearn cohen_kappa_score) of tool_bucket vs the reader's bucket over the rows the reader calls failures; then
the same over the failures the tool put in a bucket; then the stratum-weighted corrected only-self-reflection share
(point estimate).

    python3 pipeline/tests/data/p2-audit/kappa_reference.py [SHEET.csv ...]
"""
import csv
import sys
from collections import defaultdict
from pathlib import Path

from sklearn.metrics import accuracy_score, cohen_kappa_score


def bucketed(rows):
    """The same over the failures the tool put in a bucket (tool_bucket is not ambiguous)."""
    failures = [r for r in rows if r["is_failure"] == "yes" and r["tool_bucket"] != "ambiguous"]
    judged = [r for r in failures if r["failing_ok"]]
    ok = [r for r in judged if r["failing_ok"] == "yes"]
    tool = [r["tool_bucket"] for r in failures]
    reader = [r["bucket"] for r in failures]
    kappa = cohen_kappa_score(tool, reader) if failures else float("nan")
    observed = accuracy_score(tool, reader) if failures else float("nan")
    return len(failures), len(ok), len(judged), observed, kappa


def figures(rows):
    audited = [r for r in rows if r["is_failure"]]
    failures = [r for r in audited if r["is_failure"] == "yes"]
    judged = [r for r in failures if r["failing_ok"]]
    ok = [r for r in judged if r["failing_ok"] == "yes"]
    tool = [r["tool_bucket"] for r in failures]
    reader = [r["bucket"] for r in failures]
    kappa = cohen_kappa_score(tool, reader) if failures else float("nan")
    observed = accuracy_score(tool, reader) if failures else float("nan")
    return len(audited), len(failures), len(ok), len(judged), observed, kappa


def corrected(rows):
    strata = defaultdict(list)
    for r in rows:
        strata[(r["repo"], r["stratum"])].append(r)
    sr = classified = 0.0
    for members in strata.values():
        size = int(members[0]["stratum_size"])
        audited = [r for r in members if r["is_failure"]]
        if not audited:
            continue
        failures = [r for r in audited if r["is_failure"] == "yes"]
        sr += size * sum(r["bucket"] == "self-reflection" for r in failures) / len(audited)
        classified += size * sum(r["bucket"] != "ambiguous" for r in failures) / len(audited)
    return sr / classified


def main():
    paths = sys.argv[1:] or [Path(__file__).with_name("hand-made.csv")]
    rows = [r for p in paths for r in csv.DictReader(open(p, newline="", encoding="utf-8"))]
    by_repo = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r)
    for repo in sorted(by_repo) + ["all"]:
        a, f, ok, judged, observed, kappa = figures(rows if repo == "all" else by_repo[repo])
        print(f"{repo}: audited {a}, failures {f}, link {ok}/{judged}, agreement {observed!r}, kappa {kappa!r}")
        n, ok, judged, observed, kappa = bucketed(rows if repo == "all" else by_repo[repo])
        print(f"  bucketed {n}, link {ok}/{judged}, agreement {observed!r}, kappa {kappa!r}")
    print(f"corrected self-reflection share {corrected(rows)!r}")


if __name__ == "__main__":
    main()
