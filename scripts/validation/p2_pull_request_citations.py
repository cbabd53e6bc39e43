#!/usr/bin/env python3
"""Checks P2 version 4's pull request citations (`[citation] pull_requests`) on real histories, independently of
phase0's parser: every failure linked `citation.pull-request` must name the one commit whose subject says it landed
a pull request the remedy's message cites after a culprit phrase, and every such citation that does land in the
history must have become a failure (unless the remedy is a merge, or the landed commit is newer than the remedy).

    scripts/validation/p2_pull_request_citations.py RUN/OWNER+NAME ...

RUN/OWNER+NAME is the output directory of `phase0 p2 --repo M --out RUN/OWNER+NAME` (version 4) and the mirror is
/work/.mirror/OWNER+NAME/repo (or MIRRORS/OWNER+NAME/repo with MIRRORS set). Prints, per repository, the links,
how many agree, and every disagreement; exits 1 on any.
"""
import csv
import os
import re
import subprocess
import sys

PHRASES = ("introduced in|introduced by|broken in|broken by|broke in|regressed in|regressed by|regression from|"
           "caused by")
CITATION = re.compile(r"(?<![A-Za-z0-9])(?:" + PHRASES + r") *(?:pull request +|pr +)?#(\d{1,9})(?![A-Za-z0-9_])",
                      re.IGNORECASE)
LANDED = [re.compile(r"\(#(\d{1,9})\)$"), re.compile(r"^Merge pull request #(\d{1,9}) "),
          re.compile(r"^Auto merge of #(\d{1,9}) ")]


def log(mirror):
    out = subprocess.run(["git", "-C", mirror, "log", "--format=%H%x00%P%x00%B%x01"], capture_output=True,
                         check=True).stdout.decode("utf-8", "replace")
    for record in out.split("\x01"):
        record = record.strip("\n")
        if record:
            sha, parents, message = record.split("\x00", 2)
            yield sha, parents.split(), message


def main(runs):
    mirrors = os.environ.get("MIRRORS", "/work/.mirror")
    failed = False
    for run in runs:
        name = os.path.basename(run.rstrip("/"))
        commits = list(log(f"{mirrors}/{name}/repo"))
        order = {sha: i for i, (sha, _, _) in enumerate(commits)}
        landed = {}
        for sha, _, message in commits:
            subject = message.split("\n", 1)[0].strip()
            for pattern in LANDED:
                match = pattern.search(subject)
                if match:
                    landed.setdefault(int(match.group(1)), []).append(sha)
                    break
        expected = set()
        for sha, parents, message in commits:
            if len(parents) > 1:
                continue
            for match in CITATION.finditer(message):
                targets = landed.get(int(match.group(1)), [])
                # Unique, not the remedy itself, and older than it (`git log` lists newest first).
                if len(targets) == 1 and targets[0] != sha and order[targets[0]] > order[sha]:
                    expected.add((sha, targets[0]))
        with open(f"{run}/p2-failures.csv", newline="") as f:
            linked = {(row["remedy"], row["failing"]) for row in csv.DictReader(f)
                      if row["link_rule"] == "citation.pull-request"}
        # A commit citing both a SHA and a pull request for the same culprit is linked once, by its SHA.
        with open(f"{run}/p2-failures.csv", newline="") as f:
            by_sha = {(row["remedy"], row["failing"]) for row in csv.DictReader(f)
                      if row["link_rule"] in ("citation.sha", "fixes-trailer.sha", "revert.sha")}
        missing = expected - linked - by_sha
        extra = linked - expected
        print(f"{name}: {len(linked)} pull request links, {len(expected)} expected, {len(linked & expected)} agree")
        for remedy, failing in sorted(missing):
            print(f"  expected, not linked: {remedy} -> {failing}")
        for remedy, failing in sorted(extra):
            print(f"  linked, not expected: {remedy} -> {failing}")
        failed |= bool(missing or extra)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
