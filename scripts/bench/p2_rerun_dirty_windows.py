#!/usr/bin/env python3
"""How much of P2's analysis a weekly rerun would have to redo with a per-remedy memo (issue 21).

A fix's link reads the commits of the 7 days before it. When the history grows, an old fix's result can change only
if a new commit lands inside that window. A new commit lands there when its committer time is older than the
previous tip's (git.git's topic branches do this). This script counts such fixes with git alone, independently of
phase0:

    phase0 p2 --repo REPO --rev OLD --no-cache --out OUT    # OLD: e.g. HEAD~200
    python3 scripts/bench/p2_rerun_dirty_windows.py REPO OLD OUT/p2-failures.csv [NEW]

It prints the new commits, how many are older than the previous tip's newest commit, and how many of the old run's
fix-after-change remedies have a new commit within the window before them (window ends inclusive: a slight
overcount).
"""

import bisect
import csv
import subprocess
import sys

WINDOW_DAYS = 7


def commit_times(repo, *revs):
    out = subprocess.run(
        ["git", "-C", repo, "log", "--format=%H %ct", *revs], check=True, capture_output=True, text=True
    ).stdout
    return {sha: int(time) for sha, time in (line.split() for line in out.splitlines() if line)}


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    repo, old, failures = sys.argv[1:4]
    new_rev = sys.argv[4] if len(sys.argv) == 5 else "HEAD"
    fixes = [row["remedy"] for row in csv.DictReader(open(failures)) if row["kind"] == "fix-after-change"]
    old_times = commit_times(repo, old)
    new_times = sorted(commit_times(repo, f"{old}..{new_rev}").values())
    newest_old = max(old_times.values())
    window = WINDOW_DAYS * 86_400
    touched = 0
    for fix in fixes:
        time = old_times[fix]
        i = bisect.bisect_left(new_times, time - window)
        touched += i < len(new_times) and new_times[i] <= time
    print(f"new commits: {len(new_times)}, older than the previous newest commit: "
          f"{sum(1 for t in new_times if t < newest_old)}")
    print(f"fix-after-change remedies of the old run: {len(fixes)}; a new commit in the window before: {touched}")


if __name__ == "__main__":
    main()
