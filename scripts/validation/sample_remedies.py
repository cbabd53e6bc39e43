#!/usr/bin/env python3
"""Seeded sample of fix commits for the P2 linkage audit (independent of phase0's own rules).

A remedy candidate: a non-merge commit whose subject is a conventional `fix`/`hotfix`/`bugfix` type or starts with
the verb Fix/Fixes/Fixed/Fixing, committed in the last 730 days of the history, and with at least one earlier
non-merge commit at most 7 days older that touched one of its files (lock files, changelogs and .beads/ left out):
only those can be linked at all by a 7-day window. Sampled by sha256(seed:sha), so the list is reproducible.
usage: sample_remedies.py REPO N [SEED]
"""
import hashlib, re, subprocess, sys

repo, n = sys.argv[1], int(sys.argv[2])
seed = sys.argv[3] if len(sys.argv) > 3 else "20261124"
FIX = re.compile(r"^((fix|hotfix|bugfix)(\([^)]*\))?!?:|fix(es|ed|ing)?\b)", re.I)
IGNORED = re.compile(r"(^|/)(CHANGELOG[^/]*|CHANGES[^/]*|NEWS|Cargo\.lock|package-lock\.json|yarn\.lock|pnpm-lock\.yaml|go\.sum|deno\.lock)$|^\.beads/")
WINDOW = 7 * 86400
out = subprocess.run(["git", "-C", repo, "log", "--no-merges", "--no-renames", "--format=\x01%H\x02%ct\x02%s", "--name-only", "HEAD"],
                     capture_output=True, text=True, errors="replace", check=True).stdout
commits = []
for block in out.split("\x01")[1:]:
    head, _, names = block.partition("\n")
    sha, ct, subject = head.split("\x02", 2)
    files = {p for p in names.split("\n") if p and not IGNORED.search(p)}
    commits.append((sha, int(ct), subject, files))
newest = max(c[1] for c in commits)
commits.sort(key=lambda c: -c[1])
candidates = []
for i, (sha, ct, subject, files) in enumerate(commits):
    if ct < newest - 730 * 86400 or not FIX.search(subject) or not files:
        continue
    for sha2, ct2, _, files2 in commits[i + 1:]:
        if ct2 < ct - WINDOW:
            break
        if files & files2:
            candidates.append((hashlib.sha256(f"{seed}:{sha}".encode()).hexdigest(), sha, subject))
            break
candidates.sort()
print("remedy,subject")
for _, sha, subject in candidates[:n]:
    print(f'{sha},"{subject.replace(chr(34), chr(39))}"')
print(f"# {len(candidates)} candidates, {min(n, len(candidates))} sampled, seed {seed}", file=sys.stderr)
