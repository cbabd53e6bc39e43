#!/usr/bin/env python3
"""Trace one beads task id through every committed version of the task file.

Usage: p3_trace_id.py OWNER+NAME ID [--mirrors DIR] [--all] [--full] [--file .beads/issues.jsonl] [--desc] [--fields a,b]

OWNER+NAME names a bare clone at DIR/OWNER+NAME/repo (DIR: --mirrors, default /work/.mirror, where `fetch` puts
them; never committed). Walks commits touching the file (oldest first; first-parent chain of HEAD by default, as the
measurement tool does; --full for all parents, --all for all refs),
and prints each version where the id's title/status/created_at/closed_at/updated_at
(plus close_reason) changed, with commit, date and subject. --desc also prints the
description whenever it changes. Missing objects are skipped.
"""
import argparse
import json
import subprocess
import sys

FIELDS = ["title", "status", "created_at", "closed_at", "updated_at", "close_reason"]


def git(gd, *args):
    return subprocess.run(["git", "--git-dir", gd, *args], capture_output=True)


def versions(gd, revs, files, ids):
    """Yields (commit, date, subject, records) for each commit of `revs` touching `files`, oldest first. records maps
    each of `ids` found to its object in the first of `files` that holds any of them. Commits where no file can be read
    (missing objects) are skipped."""
    out = git(gd, "log", "--reverse", "--format=%H%x09%cI%x09%s", *revs, "--", *files)
    for entry in out.stdout.decode("utf-8", "replace").splitlines():
        if not entry:
            continue
        h, date, subj = entry.split("\t", 2)
        recs, readable = {}, False
        for f in files:
            r = git(gd, "show", f"{h}:{f}")
            if r.returncode != 0:
                continue
            readable = True
            for line in r.stdout.decode("utf-8", "replace").splitlines():
                if not any(i in line for i in ids):
                    continue
                try:
                    o = json.loads(line)
                except Exception:
                    continue
                if o.get("id") in ids:
                    recs[o["id"]] = o
            if recs:
                break
        if readable:
            yield h, date, subj, recs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("id")
    ap.add_argument("--mirrors", default="/work/.mirror", help="the directory of OWNER+NAME/repo clones")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--rev", default="HEAD", help="branch to read (the tool reads beads' sync branch when .beads/config.yaml names one)")
    ap.add_argument("--full", action="store_true", help="all parents, not only the first-parent chain")
    ap.add_argument("--file", default=None)
    ap.add_argument("--desc", action="store_true")
    ap.add_argument("--fields", default=None)
    args = ap.parse_args()
    gd = f"{args.mirrors}/{args.repo}/repo"
    files = [args.file] if args.file else [".beads/issues.jsonl", ".beads/beads.jsonl"]
    fields = args.fields.split(",") if args.fields else FIELDS
    revs = ["--all"] if args.all else [args.rev]
    if not args.full:
        revs = ["--first-parent"] + revs
    prev = None
    present_prev = False
    for h, date, subj, recs in versions(gd, revs, files, {args.id}):
        rec = recs.get(args.id)
        if rec is None:
            if present_prev:
                print(f"{h[:8]} {date} [{subj}]\n    -- id absent")
            present_prev = False
            continue
        cur = {k: rec.get(k) for k in fields}
        if args.desc:
            cur["description"] = rec.get("description")
        if cur != prev or not present_prev:
            print(f"{h[:8]} {date} [{subj}]")
            for k in cur:
                if prev is None or cur[k] != prev.get(k) or not present_prev:
                    v = cur[k]
                    if isinstance(v, str) and len(v) > 400 and k == "description":
                        v = v[:400] + "..."
                    print(f"    {k}: {v!r}")
        prev = cur
        present_prev = True


if __name__ == "__main__":
    main()
