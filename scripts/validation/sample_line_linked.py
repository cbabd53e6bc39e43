#!/usr/bin/env python3
"""Second-round sample for the P2 audit: fix commits whose removed lines git blame puts in a commit at most 7 days
older (what a line-evidence linker can link), in sha256(seed:sha) order, skipping those already sampled.
Uses git's own blame (independent of phase0). usage: sample_line_linked.py REPO N EXCLUDE.csv [SEED]"""
import csv, hashlib, re, subprocess, sys

repo, n, exclude = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seed = sys.argv[4] if len(sys.argv) > 4 else "20261124b"
done = {r["remedy"] for r in csv.DictReader(open(exclude))}
FIX = re.compile(r"^((fix|hotfix|bugfix)(\([^)]*\))?!?:|fix(es|ed|ing)?\b)", re.I)
IGNORED = re.compile(r"(^|/)(CHANGELOG[^/]*|CHANGES[^/]*|NEWS|Cargo\.lock|package-lock\.json|yarn\.lock|pnpm-lock\.yaml|go\.sum|deno\.lock)$|^\.beads/|(\.md|\.jsonl|\.snap|\.lock)$")
git = lambda *a: subprocess.run(["git", "-C", repo, *a], capture_output=True, text=True, errors="replace").stdout
log = git("log", "--no-merges", "--format=%H %ct %s", "HEAD")
rows = [l.split(" ", 2) for l in log.splitlines()]
newest = max(int(r[1]) for r in rows)
cands = sorted((hashlib.sha256(f"{seed}:{s}".encode()).hexdigest(), s, int(t), subj) for s, t, subj in rows
               if int(t) >= newest - 730 * 86400 and FIX.search(subj) and s not in done)
out = []
for _, sha, t, subj in cands:
    if len(out) >= n:
        break
    diff = git("show", "-U0", "--format=", "--no-renames", sha)
    path, hunks = None, []
    for line in diff.splitlines():
        if line.startswith("--- "):
            path = line[6:] if line.startswith("--- a/") else None
        m = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
        if m and path and not IGNORED.search(path) and (m.group(2) or "1") != "0":
            hunks.append((path, int(m.group(1)), int(m.group(2) or 1)))
    hit = None
    for path, a, c in hunks[:20]:
        bl = git("blame", "-w", "--porcelain", "-L", f"{a},{a + c - 1}", f"{sha}^", "--", path)
        for m in re.finditer(r"^([0-9a-f]{40}) \d+ \d+.*\n(?:(?!\t).*\n)*?committer-time (\d+)", bl, re.M):
            if t - 7 * 86400 <= int(m.group(2)) <= t:
                hit = m.group(1); break
        if hit:
            break
    if hit:
        out.append((sha, subj))
print("remedy,subject")
for sha, subj in out:
    print(f'{sha},"{subj.replace(chr(34), chr(39))}"')
