#!/usr/bin/env python3
"""How far P3's verdicts can move if its signal rules are wrong, over a set of `phase0 p3 --repo` runs.

    p3_verdict_bounds.py histories RUNS... > histories.csv
    p3_verdict_bounds.py sample RUNS_DIR/OWNER+NAME N SEED > OWNER+NAME.sample.csv

A run directory holds one repository's p3.json, p3-tasks.csv and p3-signals.csv (its name is OWNER+NAME).

`histories` prints, for every run whose verdict would change if every set-aside signal were genuine, the eligible
tasks (n), the tasks with a counted signal (k), the eligible tasks without one whose every signal within the window
was set aside by a rule (m), and the most of those m that could be genuine with the verdict unchanged (g_max, the
Wilson interval of (k + g) / n against the kill threshold, as phase0 decides it). Runs whose verdict holds even then
are counted on stderr, not listed.

`sample` draws N of one run's m tasks, the first by sha256(seed:repo:task), all of them when m <= N, and prints
their set-aside signals for a reader, without the rule that set them aside (the reader judges blind):
repo, task, signal, at, commit, completed, detail.
"""
import csv
import hashlib
import json
import math
import os
import sys

THRESHOLD, MIN_ELIGIBLE, Z = 0.20, 50, 1.959963984540054  # experiments/p3.toml [kill], alpha 0.05


def wilson(k, n):
    p = k / n
    d = 1 + Z * Z / n
    c = p + Z * Z / (2 * n)
    h = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return (c - h) / d, (c + h) / d


def verdict(k, n):
    if n < MIN_ELIGIBLE:
        return "INCONCLUSIVE"
    lo, hi = wilson(k, n)
    return "KILL" if hi < THRESHOLD else ("PASS" if lo >= THRESHOLD else "INCONCLUSIVE")


def read_run(run):
    with open(os.path.join(run, "p3.json"), encoding="utf-8") as f:
        analysis = json.load(f)["report"]["analysis"]
    with open(os.path.join(run, "p3-tasks.csv"), newline="", encoding="utf-8") as f:
        tasks = list(csv.DictReader(f))
    eligible = {t["id"] for t in tasks if t["censored"] == "false" and t["completed"]}
    detected = {t["id"] for t in tasks if t["censored"] == "false" and t["signals"]}
    n, k = analysis["counts"]["eligible"], analysis["counts"]["with_signal"]
    assert (len(eligible), len(detected)) == (n, k), run
    set_aside = {}
    with open(os.path.join(run, "p3-signals.csv"), newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["excluded_by"] and r["task"] in eligible and r["task"] not in detected:
                set_aside.setdefault(r["task"], []).append(r)
    return n, k, analysis["verdict"]["kind"], set_aside


def histories(runs):
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["repo", "eligible", "with_signal", "set_aside_only", "g_max", "verdict", "verdict_if_all_genuine"])
    held = 0
    for run in sorted(runs):
        if not os.path.exists(os.path.join(run, "p3.json")):
            continue
        n, k, v, set_aside = read_run(run)
        m = len(set_aside)
        if n == 0 or verdict(k + m, n) == v:
            held += 1
            continue
        g = 0
        while verdict(k + g + 1, n) == v:
            g += 1
        repo = os.path.basename(run.rstrip("/")).replace("+", "/", 1)
        out.writerow([repo, n, k, m, g, v, verdict(k + m, n)])
    print(f"{held} runs keep their verdict even if every set-aside signal were genuine", file=sys.stderr)


def sample(run, n, seed):
    repo = os.path.basename(run.rstrip("/")).replace("+", "/", 1)
    _, _, _, set_aside = read_run(run)
    key = lambda task: hashlib.sha256(f"{seed}:{repo}:{task}".encode()).hexdigest()
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["repo", "task", "signal", "at", "commit", "completed", "detail"])
    for task in sorted(set_aside, key=key)[:n]:
        for r in sorted(set_aside[task], key=lambda r: (r["at"], r["signal"], r["commit"])):
            out.writerow([repo, task, r["signal"], r["at"], r["commit"], r["completed"], r["detail"]])


if __name__ == "__main__":
    if sys.argv[1:2] == ["histories"]:
        histories(sys.argv[2:])
    elif sys.argv[1:2] == ["sample"] and len(sys.argv) == 5:
        sample(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(__doc__)
