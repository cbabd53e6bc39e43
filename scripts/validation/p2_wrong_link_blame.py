#!/usr/bin/env python3
"""Where the reader's culprit sits for each wrong line link of the fresh P2 reading (round 3).

    p2_wrong_link_blame.py [MIRRORS]     (default /work/.mirror; each OWNER/NAME at MIRRORS/OWNER+NAME/repo)

For every failure of pipeline/tests/data/p2-audit/round3/validation/*.csv that the reader judged a real failure with a
wrong link (failing_ok = no) and named a culprit Y (the judged sheet's `introducing`), against phase0's link X:
whether Y is inside the 7-day window before the fix F, whether `git blame -w` of the lines F removes, in F's parent,
gives any of them to Y (so that some aggregation of line evidence could name it), and whether Y is older than X.
Stdlib only; git through subprocess.
"""
import collections
import csv
import glob
import os
import re
import subprocess
import sys

MIRRORS = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror"
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../pipeline/tests/data/p2-audit/round3")


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, text=True, errors="replace").stdout


def blamed_commits(repo, fix):
    """Commits `git blame -w` gives the lines `fix` removes, in its parent, with their line counts."""
    blamed = collections.Counter()
    path = None
    for line in git(repo, "diff", "-U0", "--no-color", fix + "^", fix).splitlines():
        if line.startswith("--- a/"):
            path = line[6:]
        elif line.startswith("--- /dev/null"):
            path = None
        elif line.startswith("@@") and path:
            m = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
            start, count = int(m.group(1)), int(m.group(2) or 1)
            if count == 0:
                continue
            porcelain = git(repo, "blame", "-w", "--porcelain", "-L", f"{start},{start + count - 1}", fix + "^", "--", path)
            for b in porcelain.splitlines():
                m = re.match(r"^([0-9a-f]{40}) \d+ \d+", b)
                if m:
                    blamed[m.group(1)] += 1
    return blamed


def main():
    tally = collections.Counter()
    for sheet in sorted(glob.glob(os.path.join(HERE, "validation", "*.csv"))):
        judged_path = os.path.join(HERE, os.path.basename(sheet).replace(".csv", ".judged.csv"))
        with open(judged_path, newline="", encoding="utf-8") as f:
            judged = {r["remedy"]: r for r in csv.DictReader(f)}
        with open(sheet, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                j = judged.get(r["remedy"])
                if r["is_failure"] != "yes" or r["failing_ok"] != "no" or not j or len(j["introducing"]) < 7:
                    continue
                repo = os.path.join(MIRRORS, r["repo"].replace("/", "+"), "repo")
                fix, x, y = r["remedy"], r["failing"], j["introducing"]
                when = {c: int(git(repo, "log", "-1", "--format=%ct", c) or 0) for c in (fix, x, y)}
                blamed = blamed_commits(repo, fix)
                key = (
                    "culprit in window" if when[fix] - when[y] <= 7 * 86400 else "culprit older than window",
                    "culprit blamed" if any(c.startswith(y[:12]) for c in blamed) else "culprit not blamed",
                    "older than the link" if when[y] < when[x] else "newer than the link",
                )
                tally[key] += 1
                print(r["repo"], fix[:8], "link", x[:8], "reader", y[:8], "; ".join(key), f"({len(blamed)} commits blamed)")
    print()
    for key, n in sorted(tally.items()):
        print("; ".join(key), n)
    print("wrong links:", sum(tally.values()))


if __name__ == "__main__":
    main()
