#!/usr/bin/env python3
"""How many candidate diffs would P2's fix-after-change link need if each fix stopped at its first match?

Usage: bench/p2_early_stop.py REPO P2_FAILURES_CSV
  (P2_FAILURES_CSV is the p2-failures.csv of `phase0 p2 --repo REPO`.)

An estimate with git's own output, independent of the scanner: commits in committer-time order (close to the
scanner's walk order), candidates are non-merge commits that are not remedies, the window is 7 days. It prints the
candidates that all windows cover (what P2 diffs now), the union of candidates a search stopping at the first
shared path would reach, the number of probes that search makes, and the fixes it links (which must equal the
report's `fixes_linked`).
"""
import csv
import subprocess
import sys

WINDOW = 7 * 86400


def main(repo, failures_csv):
    log = subprocess.run(
        ["git", "-C", repo, "log", "--no-renames", "--name-only", "--format=@@%H%x00%P%x00%ct", "HEAD"],
        check=True, capture_output=True,
    ).stdout.decode("utf-8", "replace")
    commits, current = [], None
    for line in log.splitlines():
        if line.startswith("@@"):
            sha, parents, time = line[2:].split("\0")
            current = {"sha": sha, "merge": len(parents.split()) > 1, "time": int(time), "paths": set()}
            commits.append(current)
        elif line and current is not None:
            current["paths"].add(line)
    commits.sort(key=lambda c: -c["time"])
    position = {c["sha"]: i for i, c in enumerate(commits)}
    rows = list(csv.DictReader(open(failures_csv, encoding="utf-8")))
    remedies = {r["remedy"] for r in rows}
    fixes = [r["remedy"] for r in rows if r["kind"] == "fix-after-change"]

    covered, reached, probes, linked = set(), set(), 0, 0
    for fix in fixes:
        i = position[fix]
        time, paths = commits[i]["time"], commits[i]["paths"]
        window = []
        j = i + 1
        while j < len(commits) and time - commits[j]["time"] <= WINDOW:
            if not commits[j]["merge"] and commits[j]["sha"] not in remedies:
                window.append(j)
            j += 1
        covered.update(window)
        for j in window:
            reached.add(j)
            probes += 1
            if commits[j]["paths"] & paths:
                linked += 1
                break
    print(f"fixes {len(fixes)}; candidates covered by the windows {len(covered)}; "
          f"reached stopping at the first match {len(reached)}; probes {probes}; linked {linked}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
