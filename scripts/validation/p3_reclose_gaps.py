#!/usr/bin/env python3
"""Time from a judged `wrong.reopened` signal to the task's next close.

Run (from the repository's root; MIRRORS holds bare mirrors fetched beforehand, OWNER+NAME/repo):
    python3 scripts/validation/p3_reclose_gaps.py --mirrors MIRRORS [--data DIR] [--out CSV]

Defaults: --data pipeline/tests/data  --out gaps.csv
Stdlib only; reads (never writes) the judged sheets and the bare mirrors
(MIRRORS/OWNER+NAME/repo, fetched beforehand).

Inputs: every *.judged.csv under DATA/p3-audit*/ (recursive), skipping anything
under a `second-reader/` directory; only rows with signal == wrong.reopened.
Rows are deduplicated on (repo, task, commit); every distinct judgement is kept
(genuine joined with '|' when sheets differ, noted as a disagreement).

Per row:
  * branch = HEAD if COMMIT is an ancestor of HEAD, else refs/heads/beads-sync,
    else (noted) the first other local branch containing COMMIT.
  * walk `git rev-list --first-parent --reverse COMMIT..BRANCH -- .beads/`
    (first 400 commits); at each, read the task's line in .beads/issues.jsonl
    (else .beads/beads.jsonl / .beads/bd.jsonl); the first commit whose status is
    closed/done/tombstone is the re-close.  minutes = reclose committer time - at.
  * code_commits_between = number of first-parent commits in (COMMIT, reclose]
    touching anything outside .beads/ (merge commits diffed against their first
    parent); reopen_changes_code likewise for COMMIT itself; same_author compares
    author email (or name) of reopen and reclose commits.
  * `missing` where a needed object is absent from the mirror.
"""
import argparse
import csv
import glob
import json
import os
import subprocess
import sys
from datetime import datetime, timezone

CLOSED = {"closed", "done", "tombstone"}
FILES = (".beads/issues.jsonl", ".beads/beads.jsonl", ".beads/bd.jsonl")
LIMIT = 400


def git(repo, *args, check=True):
    p = subprocess.run(["git", "--git-dir", repo, *args], capture_output=True)
    if check and p.returncode != 0:
        raise RuntimeError(p.stderr.decode("utf-8", "replace").strip())
    return p


def parse_time(s):
    s = s.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    d = datetime.fromisoformat(s)
    if d.tzinfo is None:
        d = d.replace(tzinfo=timezone.utc)
    return d


class Repo:
    def __init__(self, path):
        self.path = path
        self.blob_cache = {}   # blob sha -> {id: status} or None (missing)
        self.tree_cache = {}   # commit -> {file: blob sha}
        self.meta_cache = {}   # commit -> (committer iso, author email, author name)
        self.files_cache = {}  # commit -> touches outside .beads/ (bool) or None
        self._heads = None

    def has(self, obj):
        return git(self.path, "cat-file", "-e", obj, check=False).returncode == 0

    def heads(self):
        if self._heads is None:
            out = git(self.path, "for-each-ref", "--format=%(refname)", "refs/heads/").stdout
            self._heads = out.decode().split()
        return self._heads

    def is_ancestor(self, c, ref):
        return git(self.path, "merge-base", "--is-ancestor", c, ref, check=False).returncode == 0

    def branch_for(self, c):
        if self.is_ancestor(c, "HEAD"):
            return "HEAD", ""
        if git(self.path, "rev-parse", "--verify", "-q", "refs/heads/beads-sync", check=False).returncode == 0 \
                and self.is_ancestor(c, "refs/heads/beads-sync"):
            return "refs/heads/beads-sync", "branch=beads-sync"
        out = git(self.path, "for-each-ref", "--contains", c, "--format=%(refname)", "refs/heads/",
                  check=False).stdout.decode().split()
        if out:
            return out[0], "branch=" + out[0].replace("refs/heads/", "")
        return None, "commit not on any branch"

    def tree(self, c):
        if c not in self.tree_cache:
            p = git(self.path, "ls-tree", c, "--", *FILES, check=False)
            t = {}
            for line in p.stdout.decode("utf-8", "replace").splitlines():
                meta, name = line.split("\t", 1)
                t[name] = meta.split()[2]
            self.tree_cache[c] = t
        return self.tree_cache[c]

    def blob_status(self, sha):
        if sha not in self.blob_cache:
            p = git(self.path, "cat-file", "blob", sha, check=False)
            if p.returncode != 0:
                self.blob_cache[sha] = None
            else:
                m = {}
                for line in p.stdout.decode("utf-8", "replace").splitlines():
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        o = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(o, dict) and "id" in o:
                        m[o["id"]] = str(o.get("status", ""))
                self.blob_cache[sha] = m
        return self.blob_cache[sha]

    def task_status(self, c, task):
        """-> status string, 'absent' (no line / no file), or 'missing' (blob absent)."""
        t = self.tree(c)
        saw_missing = False
        for f in FILES:
            if f not in t:
                continue
            m = self.blob_status(t[f])
            if m is None:
                saw_missing = True
                continue
            if task in m:
                return m[task]
        return "missing" if saw_missing else "absent"

    def meta(self, c):
        if c not in self.meta_cache:
            out = git(self.path, "show", "-s", "--format=%cI%x00%ae%x00%an", c).stdout.decode()
            self.meta_cache[c] = tuple(out.strip().split("\x00"))
        return self.meta_cache[c]

    def touches_code(self, c):
        if c not in self.files_cache:
            p = git(self.path, "diff-tree", "--no-commit-id", "--name-only", "-r",
                    "--diff-merges=first-parent", "--root", c, check=False)
            if p.returncode != 0:
                self.files_cache[c] = None
            else:
                names = p.stdout.decode("utf-8", "replace").split("\n")
                self.files_cache[c] = any(n and not n.startswith(".beads/") for n in names)
        return self.files_cache[c]


def load_rows(data):
    groups = {}
    for f in sorted(glob.glob(os.path.join(data, "p3-audit*", "**", "*.judged.csv"), recursive=True)):
        rel = os.path.relpath(f, data)
        if "second-reader" in rel.split(os.sep):
            continue
        rdir = rel.split(os.sep)[0]
        with open(f, newline="") as fh:
            for r in csv.DictReader(fh):
                if r.get("signal") != "wrong.reopened":
                    continue
                k = (r["repo"], r["task"], r["commit"])
                g = groups.setdefault(k, {"dirs": [], "genuine": [], "at": []})
                if rdir not in g["dirs"]:
                    g["dirs"].append(rdir)
                if r["genuine"] not in g["genuine"]:
                    g["genuine"].append(r["genuine"])
                if r["at"] not in g["at"]:
                    g["at"].append(r["at"])
    return groups


def analyse(repo, task, commit, at):
    res = {"reclose_commit": "", "reclose_at": "", "minutes_to_reclose": "",
           "code_commits_between": "", "reopen_changes_code": "", "same_author": ""}
    notes = []
    if not repo.has(commit + "^{commit}"):
        res["minutes_to_reclose"] = "missing"
        return res, ["reopen commit missing"]
    rc = repo.touches_code(commit)
    res["reopen_changes_code"] = "missing" if rc is None else ("yes" if rc else "no")
    s0 = repo.task_status(commit, task)
    if s0 == "absent" and "~" in task:
        # pipeline marks a re-used id's later incarnation as ID~N; the file holds ID
        task = task.split("~", 1)[0]
        notes.append("looked up as " + task)
        s0 = repo.task_status(commit, task)
    if s0 in CLOSED or s0 in ("absent", "missing"):
        notes.append("status at reopen commit=" + s0)
    branch, bnote = repo.branch_for(commit)
    if bnote:
        notes.append(bnote)
    if branch is None:
        res["minutes_to_reclose"] = "missing"
        return res, notes
    beads = git(repo.path, "rev-list", "--first-parent", "--reverse", f"{commit}..{branch}",
                "--", ".beads/").stdout.decode().split()
    if len(beads) > LIMIT:
        notes.append(f"scanned first {LIMIT} of {len(beads)} .beads commits")
        beads_scan = beads[:LIMIT]
    else:
        beads_scan = beads
    reclose = None
    n_missing = 0
    for c in beads_scan:
        st = repo.task_status(c, task)
        if st == "missing":
            n_missing += 1
            continue
        if st in CLOSED:
            reclose = c
            break
    if n_missing:
        notes.append(f"{n_missing} commits with missing blob before reclose/end")
    if reclose is None:
        last = next((repo.task_status(c, task) for c in reversed(beads_scan)
                     if repo.task_status(c, task) != "missing"), s0)
        if n_missing:
            # unreadable commits could hide the close: do not claim 'never'
            res["minutes_to_reclose"] = "missing"
            notes.append("not closed in readable commits; last readable status=" + last)
        else:
            res["minutes_to_reclose"] = "never"
            res["reclose_commit"] = "never"
            notes.append("status at end of scan=" + last)
            if len(beads) > LIMIT:
                notes.append(f"never within first {LIMIT}")
        return res, notes
    res["reclose_commit"] = reclose
    cI, ae, an = repo.meta(reclose)
    res["reclose_at"] = cI
    try:
        mins = (parse_time(cI) - parse_time(at)).total_seconds() / 60.0
        res["minutes_to_reclose"] = f"{mins:.1f}"
    except ValueError:
        res["minutes_to_reclose"] = "missing"
        notes.append("unparseable at")
    _, ae0, an0 = repo.meta(commit)
    res["same_author"] = "yes" if (ae == ae0 or an == an0) else "no"
    between = git(repo.path, "rev-list", "--first-parent", "--reverse",
                  f"{commit}..{reclose}").stdout.decode().split()
    n_code, n_miss = 0, 0
    for c in between:
        t = repo.touches_code(c)
        if t is None:
            n_miss += 1
        elif t:
            n_code += 1
    res["code_commits_between"] = str(n_code)
    if n_miss:
        notes.append(f"{n_miss} between-commits undiffable")
    notes.append(f"{len(between)} fp commits between")
    return res, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="pipeline/tests/data")
    ap.add_argument("--mirrors", required=True)
    ap.add_argument("--out", default="gaps.csv")
    a = ap.parse_args()
    groups = load_rows(a.data)
    repos = {}
    cols = ["reading_dir", "repo", "task", "commit", "at", "genuine", "reclose_commit", "reclose_at",
            "minutes_to_reclose", "code_commits_between", "reopen_changes_code", "same_author", "note"]
    out_rows = []
    for (rname, task, commit), g in sorted(groups.items()):
        notes = []
        if len(g["genuine"]) > 1:
            notes.append("readers disagree: " + "/".join(g["genuine"]))
        if len(g["at"]) > 1:
            notes.append("differing at: " + "/".join(g["at"]))
        at = g["at"][0]
        row = {"reading_dir": "|".join(g["dirs"]), "repo": rname, "task": task, "commit": commit,
               "at": at, "genuine": "|".join(g["genuine"])}
        path = os.path.join(a.mirrors, rname.replace("/", "+"), "repo")
        if not os.path.isdir(path):
            row.update({"minutes_to_reclose": "no-mirror"})
            notes.append("no-mirror")
        else:
            repo = repos.setdefault(path, Repo(path))
            try:
                res, n = analyse(repo, task, commit, at)
                row.update(res)
                notes += n
            except Exception as e:  # keep going; record the failure
                row["minutes_to_reclose"] = "missing"
                notes.append("error: " + str(e)[:200])
        row["note"] = "; ".join(notes)
        out_rows.append(row)
        print(rname, task, commit[:9], row.get("minutes_to_reclose"), file=sys.stderr)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in out_rows:
            w.writerow({c: r.get(c, "") for c in cols})


if __name__ == "__main__":
    main()
