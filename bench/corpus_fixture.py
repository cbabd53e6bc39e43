#!/usr/bin/env python3
"""The `phase0 corpus` benchmark inputs, deterministic for a seed:

    corpus_fixture.py REPO SIDECARS [--commits 50000] [--sidecars 100000] [--seed 1]

REPO becomes a git repository built with `git fast-import` (one commit every 10 minutes from 2025-01-01, each
changing 1-3 of 5,000 paths; about 2% revert an earlier commit by subject and 3% are `fix:` commits on a path a
recent commit touched, so P2 finds failures of every kind but `Fixes:`). SIDECARS gets the reflection.v1
sidecars, pretty-printed like the hook writes them: sessions of 1-4 turns ending shortly after a chosen commit,
listing its files (most sessions) or files no commit touched then (about 10%: uncommitted), about 5% without a
self-report (null confidence) and 0.1% invalid (a confidence outside [0, 1]).
"""
import argparse
import datetime as dt
import json
import os
import random
import subprocess

START = int(dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc).timestamp())
SURFACES = [  # (path template, surface, score)
    ("src/auth/mod{}.rs", "auth", 1.0),
    ("migrations/{}_change.sql", "data", 0.9),
    ("deploy/service{}.yaml", "infra", 0.85),
    ("src/core/mod{}.rs", "none", 0.0),
    ("src/core/util{}.rs", "none", 0.0),
    ("web/components/c{}.tsx", "ui", 0.4),
    ("docs/page{}.md", "docs", 0.1),
    ("tests/test_{}.py", "test", 0.2),
]


def paths(n):
    return [SURFACES[i % len(SURFACES)][0].format(i) for i in range(n)]


def surface_of(path):
    for template, surface, score in SURFACES:
        prefix = template.split("{}")[0]
        if path.startswith(prefix):
            return surface, score
    return "none", 0.0


def build_repo(repo, commits, rng, all_paths):
    """Writes the history with fast-import; returns [(time, [paths], subject)] in commit order."""
    os.makedirs(repo, exist_ok=True)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    subprocess.run(["git", "init", "--quiet", "--initial-branch=main", repo], check=True, env=env)
    history = []
    out = []
    for i in range(commits):
        time = START + i * 600
        kind = rng.random()
        if i > 10 and kind < 0.02:
            target = rng.randrange(max(0, i - 200), i)
            t_time, t_paths, t_subject = history[target]
            if t_subject.startswith("Change"):
                files, subject = t_paths, f'Revert "{t_subject}"'
            else:
                files, subject = [rng.choice(all_paths)], f"Change {i}"
        elif i > 10 and kind < 0.05:
            target = rng.randrange(max(0, i - 20), i)
            files, subject = [history[target][1][0]], f"fix: repair {i}"
        else:
            files, subject = rng.sample(all_paths, rng.randint(1, 3)), f"Change {i}"
        history.append((time, files, subject))
        message = subject.encode()
        out.append(b"commit refs/heads/main\n")
        out.append(f"mark :{i + 1}\n".encode())
        out.append(f"author Bench <bench@example.com> {time} +0000\n".encode())
        out.append(f"committer Bench <bench@example.com> {time} +0000\n".encode())
        out.append(f"data {len(message)}\n".encode() + message + b"\n")
        if i > 0:
            out.append(f"from :{i}\n".encode())
        for path in files:
            content = f"{path} at {i}\n".encode()
            out.append(f"M 100644 inline {path}\n".encode())
            out.append(f"data {len(content)}\n".encode() + content + b"\n")
        out.append(b"\n")
    subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=b"".join(out), check=True, env=env)
    subprocess.run(["git", "-C", repo, "checkout", "--quiet", "main"], check=True, env=env)
    return history


def stamp(seconds):
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def write_sidecars(directory, count, rng, history, all_paths):
    os.makedirs(directory, exist_ok=True)
    written = session = 0
    while written < count:
        session += 1
        sid = f"sess-{session:06d}"
        turns = min(rng.randint(1, 4), count - written)
        c_time, c_paths, _ = history[rng.randrange(len(history))]
        uncommitted = rng.random() < 0.10
        files = sorted(rng.sample(all_paths, 2)) if uncommitted else sorted(c_paths)
        last = c_time + rng.randint(-1800, 1800)
        for turn in range(turns):
            at = last - (turns - 1 - turn) * 1200
            surface, score = max((surface_of(p) for p in files), key=lambda s: s[1])
            confidence = None if rng.random() < 0.05 else round(rng.random(), 2)
            if rng.random() < 0.001:
                confidence = 1.5
            doc = {
                "schema": "reflection.v1",
                "task_ref": f"BENCH-{session}",
                "agent": rng.choice(["claude-code", "codex", "unknown"]),
                "session_id": sid,
                "timestamp": stamp(at),
                "repo": "bench",
                "confidence": confidence,
                "most_likely_wrong": None,
                "known_not_in_diff": None,
                "risk": {
                    "needs_review": score >= 0.5,
                    "score": score,
                    "surface": surface,
                    "reason": f"{surface} surface (weight {score:g}) in: {files[0]}",
                },
                "files_changed": files,
                "provenance": {
                    "source": "stop-hook",
                    "reflection_attempt": turn + 1,
                    "degraded": confidence is None,
                    "reflection_mode": "solo",
                },
            }
            name = f"{sid}-{stamp(at).replace('-', '').replace(':', '')}.reflection.json"
            with open(os.path.join(directory, name), "w") as f:
                json.dump(doc, f, indent=2)
                f.write("\n")
            written += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("sidecars")
    parser.add_argument("--commits", type=int, default=50_000)
    parser.add_argument("--sidecars", dest="count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    all_paths = paths(5_000)
    history = build_repo(args.repo, args.commits, rng, all_paths)
    write_sidecars(args.sidecars, args.count, rng, history, all_paths)


if __name__ == "__main__":
    main()
