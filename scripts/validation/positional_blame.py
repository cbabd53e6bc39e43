#!/usr/bin/env python3
"""Does positional blame (`git blame -w -M` on a fix's parent) link P2's fixes to their failing change better than
version 3's content blame inside a 7-day window? Measured on the 100 audited fixes (the oracle) and, held out, on
git/git fixes that cite their culprit.

    positional_blame.py audit   [--cache DIR]            # the 100 judged fixes of pipeline/tests/data/p2-audit/oracle
    positional_blame.py audit --oracle pipeline/tests/data/p2-audit/round3 --failures RUNS   # a fresh reading, with
                                                         # version 3's links from RUNS/OWNER+NAME/p2-failures.csv
    positional_blame.py heldout [--cache DIR] [--repo MIRROR] [--since 2021-01-01] [--n 80] [--seed S]
    positional_blame.py show SHA --repo MIRROR [--cache DIR] # one fix: its blamed lines and each rule's link

stdlib only, git through subprocess (run it under `nice`). Per fix F (all audited fixes are non-merges; a merge would
be taken against its first parent, `F^1`):

1. The lines F removes, per file, from `git diff -U0 -M F^1 F` (byte-exact, rename detection on so a renamed file is
   blamed at its old path), without the files of `[fix_after_change] ignore_paths` (experiments/p2.toml) and without
   lines that are no evidence, as in phase0's `evidence_hash`: a line with no ASCII letter or digit, or a comment
   (trimmed, it starts with `//`, `/*`, `*/`, `* `, `# `, `-- `, `<!--`, or is `#` or `*`). A removed line whose
   content (all white space removed) F adds back in the same file is *moved* (re-indented, wrapped in a new check);
   the others are *rewritten*. As in link.rs, rewritten lines are the evidence and moved lines are used only when
   no rewritten line gives a link (`adjacent` evidence).
2. Each line is blamed in F^1: `git blame -w -M --porcelain -L a,b [-L ...] F^1 -- path` (ranges batched per file).
   Mass changes (version 3's definition: conventional type `release`/`style`, a mass-change keyword in the subject's
   prose, a subject starting with a version number, or more than 100 not-ignored files) are passed through:
   when a blamed commit is one, the file is blamed again with `--ignore-rev` for every mass change seen so far (up
   to 4 rounds); a line still blamed on a mass change is dropped.
3. Rules (a link is one commit or none):
   - `v3-content`: an emulation of version 3 (content blame): the ancestors of F^1 committed at most 7 days before F,
     newest first, non-merge, not mass changes; each rewritten line goes to the newest of them that added a line of the
     same content to the same path (`git log -U0 --no-renames`); most lines wins (ties: the newest); moved lines
     when no rewritten line is matched. Not version 3 itself (v3 walks all of HEAD's history, not only F's
     ancestors, and its files fallback is left out): reproduces its line links on the audit, see the results.
   - `pos-7`, `pos-30`: positional; among the blamed lines whose commit lies inside the window (committer time at
     most 7 / 30 days before F's), the commit with the most lines (ties: the newest).
   - `szz-7`, `szz-30`, `szz-any`: classic SZZ; the commit with the most blamed lines, whatever its age (ties: the
     newest); linked only when it lies inside 7 / 30 days (`any`: always).
   - `szz-7-half`, `szz-30-half`: as `szz-7`/`szz-30`, and the commit holds at least half of the blamed evidence lines.
   - `v3&pos-7`, `v3&szz-7`: `v3-content`'s link, kept only when the positional rule names the same commit
     (designed after reading the audit's wrong links: the development set); `... +files` adds back version 3's own
     `files` links (sheets) for comparison with its all-links figure.
   Every rule applies version 3's dependency-bump rule (a fix whose every not-ignored file is one of
   `dependency_manifests` is never linked) and its same-branch rule: when the chosen commit reached HEAD's first-parent line through
   the same merge as F (F is not on HEAD's first-parent chain; the commit is not an ancestor of that merge's first
   parent) and was committed less than 24 hours before F, the fix is not linked (`same-branch`).
4. Scoring, as fill_audit_from_oracle.py and the p2_audit_validation test define it: a failure is a judged row with
   is_fix = yes and introducing not `none`; a link is judged when the row is a failure whose culprit is a SHA (not
   `unknown`); it is right when it names that commit (either abbreviates the other), whatever its age. Link
   precision = right / judged links. Recall = right / failures whose culprit is inside the rule's window (7 days for
   the 7-day rules, 30 days for the 30-day rules; all culprits for `szz-any`). Links of rows that are not failures
   are counted apart.

Version 3's own links are read from the committed audit sheets (pipeline/tests/data/p2-audit/validation/*.csv):
`v3 (sheets, all)` counts every link (its `files` links included; 16/26), `v3 (sheets, lines)` only line and
adjacent links. Bucketed link precision is given for the rules whose links are a subset of v3's (they keep v3's
buckets); the others would need phase0's classifier.

Held-out (`heldout`): non-merge commits of git/git since --since whose message names a culprit the way version 3's
self-check reads it (a `Fixes:` trailer's SHA; a SHA after a culprit phrase of [citation]; in a fix subject, a SHA in
git's citation style `abc1234 (`), each SHA resolving to exactly one commit, an ancestor of F committed at most
--window (7 or 30) days before it. Deterministic sample: the first --n by sha256(seed:sha). Each is linked blind by every rule; right when
the link is one of the commits it names inside the window, on the fixes naming one inside 7 days and inside 30 days.
"""
import argparse
import bisect
import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "pipeline/tests/data/p2-audit/oracle"
VALIDATION = ROOT / "pipeline/tests/data/p2-audit/validation"
MIRRORS = Path(os.environ.get("MIRRORS", "/work/.mirror"))
SPEC = tomllib.loads((ROOT / "experiments/p2.toml").read_text())
DAY = 86400
SAME_BRANCH = SPEC["link"]["same_branch_hours"] * 3600
MASS_FILES = SPEC["link"]["mass_change_files"]
RULES = ["v3-content", "pos-7", "pos-30", "szz-7", "szz-30", "szz-any", "szz-7-half", "szz-30-half", "v3&pos-7",
         "v3&szz-7"]
RULE_WINDOW = {"v3-content": 7, "pos-7": 7, "pos-30": 30, "szz-7": 7, "szz-30": 30, "szz-any": None,
               "szz-7-half": 7, "szz-30-half": 30, "v3&pos-7": 7, "v3&szz-7": 7}


# ---------------------------------------------------------------------------------------------------------------
# Text rules mirrored from pipeline/src (scan/commits.rs evidence_hash, experiments/p2/text.rs)

def evidence_key(line):
    """The white-space-free content of a line, or None when it is no evidence (evidence_hash's TRIVIAL_LINE)."""
    t = line.strip(" \t\r\n\f\v")
    if not any(c.isascii() and c.isalnum() for c in t):
        return None
    if t.startswith(("//", "/*", "*/", "* ", "# ", "-- ", "<!--")) or t in ("#", "*"):
        return None
    return "".join(c for c in t if c not in " \t\r\n\f\v")


class PathPatterns:
    """text.rs PathPatterns: a pattern with `/` is a directory fragment, one without a file-name glob."""

    def __init__(self, patterns):
        self.fragments, self.globs = [], []
        for p in patterns:
            p = p.replace("\\", "/").lower()
            if "/" in p:
                self.fragments.append((p, "/" + p))
            elif p:
                self.globs.append(p.split("*"))

    def matches(self, path):
        path = path.replace("\\", "/").lower()
        if any(path.startswith(s) or i in path for s, i in self.fragments):
            return True
        name = path.rsplit("/", 1)[-1]
        for parts in self.globs:
            if len(parts) == 1:
                if parts[0] == name:
                    return True
                continue
            first, last = parts[0], parts[-1]
            if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
                continue
            rest, ok = name[len(first):len(name) - len(last)], True
            for part in parts[1:-1]:
                at = rest.find(part)
                if at < 0:
                    ok = False
                    break
                rest = rest[at + len(part):]
            if ok:
                return True
        return False


IGNORE = PathPatterns(SPEC["fix_after_change"]["ignore_paths"])
MANIFESTS = PathPatterns(SPEC["fix_after_change"]["dependency_manifests"])
TOOLS = {"cargo", "npm", "npx", "pnpm", "yarn", "bun", "deno", "go", "git", "make", "just", "pip", "pytest", "rustup"}
OTHER_TYPES = {"feat", "feature", "chore", "docs", "style", "refactor", "perf", "test", "tests", "build", "ci",
               "revert", "release", "deps", "wip", "merge", "reapply"}


def conventional(subject):
    s = subject.lstrip()
    m = re.match(r"[\w-]+", s)
    if not m:
        return None
    kind, rest = m.group(0), s[m.end():]
    if rest.startswith("("):
        close = rest.find(")")
        if close < 0 or ":" in rest[1:close]:
            return None
        rest = rest[close + 1:]
    if rest.startswith("!"):
        rest = rest[1:]
    if not rest.startswith(":"):
        return None
    return kind.lower(), rest[1:].strip()


def message_words(text):
    rest = text.strip()
    c = conventional(rest)
    if c:
        rest = c[1]
    prose, in_tag, in_code = [], 0, False
    for ch in rest:
        if ch == "`":
            in_code = not in_code
            prose.append(" ")
        elif ch == "[" and not in_code:
            in_tag += 1
        elif ch == "]" and not in_code and in_tag > 0:
            in_tag -= 1
            prose.append(" ")
        elif in_code or in_tag > 0:
            pass
        else:
            prose.append(ch)
    out, after_tool = [], False
    for token in "".join(prose).split():
        token = token.strip("\"',;!?().:")
        if not token:
            continue
        if token.startswith("-") or any(ch in "_./:=()<>@#$%&*+\\|~^[]{}" for ch in token):
            after_tool = False
            continue
        if after_tool:
            after_tool = False
            continue
        for part in filter(None, token.split("-")):
            word = part.lower()
            if not all(ch.isalnum() for ch in word):
                continue
            after_tool = word in TOOLS
            out.append(word)
    return out


def keywords_in(keywords, words):
    for k in keywords:
        kw = [w.lower() for w in re.split(r"\W+|_", k) if w]
        if kw and any(words[i:i + len(kw)] == kw for i in range(len(words) - len(kw) + 1)):
            return True
    return False


def starts_with_version(subject):
    tokens = subject.split()
    if not tokens:
        return False
    first = tokens[0]
    if first.lower() in ("git", "release", "version", "bump"):
        if len(tokens) < 2:
            return False
        first = tokens[1]
    if first[:1] in ("v", "V"):
        first = first[1:]
    parts = first.split(".")
    return len(parts) >= 2 and parts[0].isdigit() and parts[0].isascii() and parts[1][:1].isdigit()


def mass_subject(subject):
    c = conventional(subject)
    if c and c[0] in [t.lower() for t in SPEC["link"]["mass_change_types"]]:
        return True
    return keywords_in(SPEC["link"]["mass_change_keywords"], message_words(subject)) or starts_with_version(subject)


def is_fix_subject(subject):
    rest = subject.strip()
    while rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            break
        rest = rest[end + 1:].lstrip()
    c = conventional(rest)
    if c:
        if c[0] in SPEC["fix_after_change"]["types"]:
            return True
        if c[0] in OTHER_TYPES:
            return False
    for _ in range(2):
        parts = rest.split(None, 1)
        if len(parts) == 2 and parts[0].endswith(":") and len(parts[0]) > 1:
            rest = parts[1].lstrip()
        else:
            break
    m = re.match(r"[^\W_]+", rest)
    return bool(m) and m.group(0).lower() in SPEC["fix_after_change"]["keywords"]


def cited_shas(body, min_len=7):
    """text.rs cited_shas: [(sha, culprit_phrase)] in git's citation style or after a culprit phrase."""
    phrases = [p.lower() for p in SPEC["citation"]["culprit_phrases"]]
    out = {}
    for line in body.splitlines():
        low = line.lower()
        if "this reverts commit" in low:
            continue
        for m in re.finditer(r"(?<![0-9a-z])([0-9a-f]{%d,64})(?![0-9a-z])" % min_len, low):
            sha = m.group(1)
            before = low[:m.start()].rstrip()
            if before.endswith("commit"):
                before = before[:-6].rstrip()
            culprit = any(before.endswith(p) for p in phrases)
            cited = culprit or low[m.end():].startswith(" (")
            mixed = any(c.isdigit() for c in sha) and any(c.isalpha() for c in sha)
            if cited and mixed:
                out[sha] = out.get(sha, False) or culprit
    return list(out.items())


def fixes_trailer_shas(body, min_len=7):
    out = []
    for line in body.splitlines():
        m = re.match(r"\s*fixes:\s*([0-9a-f]{%d,64})(?![0-9a-z])" % min_len, line, re.I)
        if m:
            out.append(m.group(1).lower())
    return out


# ---------------------------------------------------------------------------------------------------------------
# git

class Repo:
    def __init__(self, path):
        self.path = str(path)
        self.info = {}  # sha -> (committer time, subject, parents)
        self._mass = {}
        self._fp = None
        self._fp_index = None
        self.missing = 0  # files whose blame or diff failed (missing blobs)

    def git(self, *args, check=True):
        r = subprocess.run(["git", "-C", self.path, *args], capture_output=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"git {' '.join(args[:3])}: {r.stderr.decode(errors='replace')[:300]}")
        return r.stdout.decode("utf-8", errors="replace") if r.returncode == 0 else None

    def commit(self, sha):
        if sha not in self.info:
            out = self.git("show", "-s", "--format=%H%x00%ct%x00%P%x00%s", sha)
            full, ct, parents, subject = out.rstrip("\n").split("\x00", 3)
            self.info[sha] = self.info[full] = (int(ct), subject, parents.split())
        return self.info[sha]

    def is_mass(self, sha):
        if sha not in self._mass:
            ct, subject, parents = self.commit(sha)
            mass = mass_subject(subject)
            if not mass:
                args = ["diff-tree", "--no-commit-id", "-r", "--name-only", "--no-renames"]
                args += [parents[0], sha] if parents else ["--root", sha]
                names = self.git(*args, check=False) or ""
                mass = sum(1 for p in names.splitlines() if p and not IGNORE.matches(p)) > MASS_FILES
            self._mass[sha] = mass
        return self._mass[sha]

    def first_parent_chain(self):
        if self._fp is None:
            self._fp = self.git("rev-list", "--first-parent", "HEAD").split()
            self._fp_index = {s: i for i, s in enumerate(self._fp)}
        return self._fp, self._fp_index

    def is_ancestor(self, a, b):
        return subprocess.run(["git", "-C", self.path, "merge-base", "--is-ancestor", a, b]).returncode == 0

    def merge_of(self, fix):
        """The first-parent commit of HEAD whose merge brought `fix` in, or None when fix is on that chain."""
        chain, index = self.first_parent_chain()
        if fix in index:
            return None
        lo, hi = 0, len(chain) - 1  # chain[lo] (HEAD) contains fix; find the oldest that does
        if not self.is_ancestor(fix, chain[0]):
            return None
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.is_ancestor(fix, chain[mid]):
                lo = mid
            else:
                hi = mid - 1
        return chain[lo]

    def same_branch(self, fix, candidate):
        """Version 3's same_branch_hours: same merge, side branch, committed < 24 h before the fix."""
        if SAME_BRANCH <= 0:
            return False
        if self.commit(fix)[0] - self.commit(candidate)[0] >= SAME_BRANCH:
            return False
        merge = self.merge_of(fix)
        if merge is None:
            return False
        first = self.commit(merge)[2][0]
        return not self.is_ancestor(candidate, first)


def parse_diff(text):
    """`git diff -U0` → [(old_path, new_path, removed [(old_lineno, text)], added [text])]."""
    files, cur = [], None
    old_no = 0
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            cur = {"old": None, "new": None, "removed": [], "added": []}
            files.append(cur)
        elif cur is None:
            continue
        elif line.startswith("--- "):
            cur["old"] = unquote(line[4:], "a/")
        elif line.startswith("+++ "):
            cur["new"] = unquote(line[4:], "b/")
        elif line.startswith("@@ "):
            m = re.match(r"@@ -(\d+)(?:,(\d+))? \+", line)
            old_no = int(m.group(1))
        elif line.startswith("-") and cur["old"] is not None:
            cur["removed"].append((old_no, line[1:]))
            old_no += 1
        elif line.startswith("+") and cur["new"] is not None:
            cur["added"].append(line[1:])
    return files


def unquote(p, prefix):
    if p == "/dev/null":
        return None
    if p.startswith('"'):
        p = p[1:-1].encode("latin-1", errors="replace").decode("unicode_escape").encode("latin-1", errors="replace") \
            .decode("utf-8", errors="replace")
    return p[len(prefix):] if p.startswith(prefix) else p


def ranges(numbers):
    out, start, prev = [], None, None
    for n in sorted(numbers):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append((start, prev))
            start = prev = n
    if start is not None:
        out.append((start, prev))
    return out


def blame_file(repo, rev, path, lines, ignore):
    """{line number: sha} for `lines` of `path` at `rev`, or None when blame fails (a missing blob)."""
    args = ["blame", "-w", "-M", "--porcelain"]
    for r in sorted(ignore):
        args += ["--ignore-rev", r]
    for a, b in ranges(lines):
        args += ["-L", f"{a},{b}"]
    out = repo.git(*args, rev, "--", path, check=False)
    if out is None:
        return None
    result = {}
    sha = None
    for line in out.split("\n"):
        if not line:
            continue
        if line[0] == "\t":
            continue
        m = re.match(r"([0-9a-f]{40}) \d+ (\d+)", line)
        if m:
            sha = m.group(1)
            result[int(m.group(2))] = sha
        elif line.startswith("committer-time ") and sha and sha not in repo.info:
            pass
    return result


def blame_fix(repo, fix):
    """The blamed evidence lines of a fix: {'rewritten': [[sha, ct, path]], 'moved': [...], ...}."""
    ct, subject, parents = repo.commit(fix)
    parent = parents[0]
    diff = repo.git("diff", "-U0", "-M", "--no-color", "--no-ext-diff", parent, fix, check=False)
    record = {"fix": fix, "time": ct, "subject": subject, "rewritten": [], "moved": [],
              "failed_files": 0, "files": 0}
    if diff is None:
        record["failed_files"] = -1
        return record
    for f in parse_diff(diff):
        old = f["old"]
        if old is None or IGNORE.matches(old) or (f["new"] and IGNORE.matches(f["new"])):
            continue
        added = {k for k in map(evidence_key, f["added"]) if k}
        kinds = {}
        for no, text in f["removed"]:
            k = evidence_key(text)
            if k:
                kinds[no] = "moved" if k in added else "rewritten"
        if not kinds:
            continue
        record["files"] += 1
        ignore, blamed = set(), None
        for _ in range(4):
            blamed = blame_file(repo, parent, old, kinds.keys(), ignore)
            if blamed is None:
                break
            mass = {s for s in set(blamed.values()) if repo.is_mass(s)} - ignore
            if not mass:
                break
            ignore |= mass
        if blamed is None:
            record["failed_files"] += 1
            repo.missing += 1
            continue
        for no, kind in sorted(kinds.items()):
            sha = blamed.get(no)
            if sha is None or repo.is_mass(sha):
                continue
            record[kind].append([sha, repo.commit(sha)[0], old])
    return record


def content_candidates(repo, fix, paths, days=7):
    """Version 3's content blame, emulated: [(sha, {path: set of added evidence keys})], newest first."""
    ct, _, parents = repo.commit(fix)
    if not paths:
        return []
    out = repo.git("log", "-U0", "--no-renames", "--no-merges", "--no-color", "--format=%x01%H %ct",
                   f"--since={ct - days * DAY}", parents[0], "--", *sorted(paths), check=False) or ""
    cands = []
    for chunk in out.split("\x01")[1:]:
        head, _, body = chunk.partition("\n")
        sha, t = head.split()
        if ct - int(t) > days * DAY:
            continue
        added = defaultdict(set)
        for f in parse_diff(body):
            if f["new"]:
                added[f["new"]].update(k for k in map(evidence_key, f["added"]) if k)
        cands.append((sha, added))
    return cands


def content_blame(repo, fix):
    ct, _, parents = repo.commit(fix)
    diff = repo.git("diff", "-U0", "--no-renames", "--no-color", "--no-ext-diff", parents[0], fix, check=False) or ""
    rewritten, moved = defaultdict(set), defaultdict(set)
    for f in parse_diff(diff):
        path = f["new"] or f["old"]
        if path is None or f["old"] is None or IGNORE.matches(path):
            continue
        added = {k for k in map(evidence_key, f["added"]) if k}
        for _, text in f["removed"]:
            k = evidence_key(text)
            if k:
                (moved if k in added else rewritten)[f["old"]].add(k)
    cands = [(s, a) for s, a in content_candidates(repo, fix, set(rewritten) | set(moved)) if not repo.is_mass(s)]

    def tally(lines):
        open_ = {p: set(ks) for p, ks in lines.items()}
        counts = Counter()
        for sha, added in cands:
            for p, ks in list(open_.items()):
                won = ks & added.get(p, set())
                if won:
                    counts[sha] += len(won)
                    ks -= won
                    if not ks:
                        del open_[p]
        return counts

    counts = tally(rewritten)
    adjacent = False
    if not counts and moved:
        counts, adjacent = tally(moved), True
    return {sha: n for sha, n in counts.items()}, adjacent


# ---------------------------------------------------------------------------------------------------------------
# Rules

def top(counts, times):
    if not counts:
        return None
    return max(counts, key=lambda s: (counts[s], times[s], s))


def links(repo, record):
    """{rule: (link sha or None, note)} for one blamed fix."""
    if record["bump"]:
        # Version 3 never links a fix that only touches dependency manifests (fix-after-change.dependency-bump).
        return {rule: (None, "dependency-bump") for rule in RULES}
    ct = record["time"]
    times = {}
    for kind in ("rewritten", "moved"):
        for sha, t, _ in record[kind]:
            times[sha] = t
    out = {}

    def finish(rule, sha, note=""):
        if sha is not None and repo.same_branch(record["fix"], sha):
            out[rule] = (None, "same-branch")
        else:
            out[rule] = (sha, note)

    for days in (7, 30):
        counts, note = Counter(s for s, t, _ in record["rewritten"] if ct - t <= days * DAY), "lines"
        if not counts:
            counts, note = Counter(s for s, t, _ in record["moved"] if ct - t <= days * DAY), "adjacent"
        finish(f"pos-{days}", top(counts, times), note if counts else "")
    lines, note = record["rewritten"], "lines"
    if not lines:
        lines, note = record["moved"], "adjacent"
    counts = Counter(s for s, _, _ in lines)
    best = top(counts, times)
    total = sum(counts.values())
    for days in (7, 30, None):
        name = f"szz-{days or 'any'}"
        inside = best is not None and (days is None or ct - times[best] <= days * DAY)
        finish(name, best if inside else None, note if inside else ("old" if best else ""))
        if days:
            half = inside and 2 * counts[best] >= total
            finish(name + "-half", best if half else None, note if half else "")
    counts, adjacent = record["content"]
    ctimes = {s: repo.commit(s)[0] for s in counts}
    finish("v3-content", top(counts, ctimes), "adjacent" if adjacent else "lines")
    for other in ("pos-7", "szz-7"):
        a, b = out["v3-content"][0], out[other][0]
        out[f"v3&{other}"] = (a, "agree") if a is not None and a == b else (None, "")
    return out


def blamed(repo, fix, cache):
    path = cache / f"{fix}.json" if cache else None
    if path and path.exists():
        record = json.loads(path.read_text())
    else:
        record = blame_fix(repo, fix)
        counts, adjacent = content_blame(repo, fix)
        record["content"] = [counts, adjacent]
    if "bump" not in record:
        parent = repo.commit(fix)[2][0]
        names = repo.git("diff", "--name-only", "--no-renames", parent, fix).split("\n")
        files = [n for n in names if n and not IGNORE.matches(n)]
        record["bump"] = bool(files) and all(MANIFESTS.matches(n) for n in files)
        if path:
            path.write_text(json.dumps(record))
    return record


def same(a, b):
    return bool(a) and bool(b) and (a.startswith(b) or b.startswith(a))


def fmt_prec(right, n):
    return f"{right / n:.2f} ({right}/{n})" if n else "– (0/0)"


# ---------------------------------------------------------------------------------------------------------------

def audit(args):
    cache = Path(args.cache) / "audit" if args.cache else None
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
    stats = defaultdict(Counter)  # (rule, repo) -> counts
    detail = []
    repos = []
    for oracle in sorted(Path(args.oracle).glob("*.judged.csv")):
        name = oracle.name[:-len(".judged.csv")]
        repo = Repo(MIRRORS / name / "repo")
        repos.append((name, repo))
        # Version 3's own links (the committed audit sheets).
        v3 = {}
        if args.failures:
            # A run's p2-failures.csv (`phase0 p2 --out DIR/OWNER+NAME`): its bucket is the tool's.
            for row in csv.DictReader(open(Path(args.failures) / name / "p2-failures.csv", newline="")):
                v3[row["remedy"]] = dict(row, tool_bucket=row["bucket"])
        else:
            for row in csv.DictReader(open(VALIDATION / f"{name}.csv", newline="")):
                v3[row["remedy"]] = row
        for j in csv.DictReader(open(oracle, newline="")):
            fix = j["remedy"].strip().lower()
            intro = j["introducing"].strip().lower()
            failure = j["is_fix"] == "yes" and intro != "none"
            judged = failure and intro not in ("unknown", "")
            days = int(j["days_before"]) if judged and j["days_before"].strip() else None
            record = blamed(repo, fix, cache)
            rules = links(repo, record)
            row = v3.get(fix)
            v3link = row["failing"] if row and row["failing"] else None
            v3ev = row["evidence"] if row else ""
            rules["v3 (sheets, all)"] = (v3link, v3ev)
            rules["v3 (sheets, lines)"] = (v3link if v3ev in ("lines", "adjacent") else None, v3ev)
            # Rules that only keep some of version 3's line links, with v3's `files` links added back (v3 links a
            # fix with no evidence line to the newest in-window toucher of its files; such links are never bucketed).
            for rule in ("v3&pos-7", "v3&szz-7"):
                rules[rule + " +files"] = (v3link, v3ev) if v3ev == "files" else rules[rule]
            bucketed = row is not None and row["tool_bucket"] != "ambiguous"
            for rule, (link, note) in rules.items():
                window = RULE_WINDOW.get(rule, 7)
                inside = judged and days is not None and (window is None or days <= window)
                for key in ((rule, name), (rule, "all")):
                    s = stats[key]
                    s["culprits"] += inside
                    if link is None:
                        s["same-branch"] += note == "same-branch"
                        continue
                    if judged:
                        s["links"] += 1
                        ok = same(link, intro)
                        s["right"] += ok
                        s["found"] += ok and inside
                        if bucketed and v3link and same(link, v3link):
                            # Bucketed by version 3's classifier (a link equal to v3's keeps v3's bucket).
                            s["b-links"] += 1
                            s["b-right"] += ok
                    elif failure:
                        s["unknown"] += 1
                    else:
                        s["not-failure"] += 1
            detail.append((name, fix, j, record, rules))
    print_audit(stats, detail, repos, args)


def print_audit(stats, detail, repos, args):
    names = [n for n, _ in repos] + ["all"]
    rules = ["v3 (sheets, all)", "v3 (sheets, lines)"] + RULES + ["v3&pos-7 +files", "v3&szz-7 +files"]
    print(f"## Audit: {len(detail)} judged fixes\n")
    print("| rule | " + " | ".join(n.replace("+", "/") for n in names) + " | links on non-failures | recall (in-window culprits) |")
    print("|---|" + "---|" * len(names) + "---:|---|")
    for rule in rules:
        cells = [fmt_prec(stats[(rule, n)]["right"], stats[(rule, n)]["links"]) for n in names]
        a = stats[(rule, "all")]
        window = RULE_WINDOW.get(rule, 7)
        rec = f"{a['found']}/{a['culprits']}" + (f" ({a['found'] / a['culprits']:.2f})" if a["culprits"] else "")
        print(f"| {rule} | " + " | ".join(cells) + f" | {a['not-failure']} | {rec} (≤{window or '∞'} d) |")
    print("\nCells: link precision (right/links) on the fixes the reader judged failures with a named culprit.\n")
    print("Bucketed links (version 3's classifier; only for rules whose links are a subset of v3's, which keep v3's "
          "buckets):\n")
    for rule in ("v3 (sheets, all)", "v3-content", "v3&pos-7", "v3&szz-7"):
        a = stats[(rule, "all")]
        print(f"- {rule}: link precision, bucketed {fmt_prec(a['b-right'], a['b-links'])}")
    print()
    missing = sum(r.missing for _, r in repos)
    failed = sum(1 for d in detail if d[3]["failed_files"])
    print(f"Files whose blame failed (missing objects): {missing}, in {failed} fixes.\n")
    if args.rows:
        print("| repo | fix | reader | days | " + " | ".join(rules) + " |")
        print("|---|---|---|---:|" + "---|" * len(rules))
        for name, fix, j, record, rl in detail:
            intro = j["introducing"].strip().lower()
            if j["is_fix"] != "yes" or intro == "none":
                intro = "none"
            cells = []
            for rule in rules:
                link, note = rl[rule]
                if link is None:
                    cells.append(note if note == "same-branch" else "–")
                else:
                    mark = "" if intro in ("none", "unknown") else (" ✓" if same(link, intro) else " ✗")
                    cells.append(link[:7] + mark)
            print(f"| {name.split('+')[1]} | {fix[:7]} | {intro[:7]} | {j['days_before']} | " + " | ".join(cells) + " |")


def heldout(args):
    repo = Repo(args.repo)
    cache = Path(args.cache) / ("heldout-" + Path(args.repo).parent.name) if args.cache else None
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
    log = repo.git("log", "--format=%H%x00%ct%x00%P%x00%s%x00%b%x1e", "HEAD")
    commits = {}
    population = []
    since = int(subprocess.run(["date", "-d", args.since, "+%s"], capture_output=True, text=True).stdout)
    entries = []
    for chunk in log.split("\x1e"):
        chunk = chunk.strip("\n")
        if not chunk:
            continue
        sha, ct, parents, subject, body = chunk.split("\x00", 4)
        commits[sha] = int(ct)
        entries.append((sha, int(ct), parents.split(), subject, body))
    ordered = sorted(commits)

    def resolve(abbrev):
        i = bisect.bisect_left(ordered, abbrev)
        hits = []
        while i < len(ordered) and ordered[i].startswith(abbrev) and len(hits) < 2:
            hits.append(ordered[i])
            i += 1
        return hits[0] if len(hits) == 1 else None

    for sha, ct, parents, subject, body in entries:
        if ct < since or len(parents) != 1:
            continue
        fix = is_fix_subject(subject)
        named = [s for s, culprit in cited_shas(body) if fix or culprit] + fixes_trailer_shas(body)
        inside = {}
        for abbrev in named:
            full = resolve(abbrev)
            if full and full != sha and 0 <= ct - commits[full] <= args.window * DAY and repo.is_ancestor(full, sha):
                inside[full] = ct - commits[full]
        if inside:
            population.append((sha, ct, subject, inside))
    key = lambda p: hashlib.sha256(f"{args.seed}:{p[0]}".encode()).hexdigest()
    sample = sorted(sorted(population, key=key)[:args.n], key=lambda p: -p[1])
    within7 = sum(1 for p in population if min(p[3].values()) <= 7 * DAY)
    print(f"## Held-out: {Path(args.repo).parent.name}, since {args.since}, seed {args.seed}\n")
    print(f"Population: {len(population)} non-merge commits naming a culprit inside {args.window} days ({within7} inside 7 "
          f"days); sample {len(sample)} ({sum(1 for p in sample if min(p[3].values()) <= 7 * DAY)} inside 7 days).\n")
    stats = defaultdict(Counter)
    rows = []
    for sha, ct, subject, inside in sample:
        record = blamed(repo, sha, cache)
        rl = links(repo, record)
        rows.append((sha, subject, inside, rl))
        for days in (7, 30):
            named = {s for s, age in inside.items() if age <= days * DAY}
            if days > args.window:
                continue
            if not named:
                continue
            for rule in RULES:
                link, note = rl[rule]
                s = stats[(rule, days)]
                s["named"] += 1
                if link is None:
                    s["unlinked"] += 1
                elif link in named:
                    s["right"] += 1
                else:
                    s["wrong"] += 1
    print("| rule | named ≤7 d: right / wrong / unlinked | precision | recall | named ≤30 d: right / wrong / unlinked | precision | recall |")
    print("|---|---|---|---|---|---|---|")
    for rule in RULES:
        cells = []
        for days in (7, 30):
            s = stats[(rule, days)]
            linked = s["right"] + s["wrong"]
            cells += [f"{s['right']} / {s['wrong']} / {s['unlinked']} (of {s['named']})",
                      f"{s['right'] / linked:.2f}" if linked else "–",
                      f"{s['right'] / s['named']:.2f}" if s["named"] else "–"]
        print(f"| {rule} | " + " | ".join(cells) + " |")
    print(f"\nFiles whose blame failed (missing objects): {repo.missing}.\n")
    if args.rows:
        print("| fix | named (days) | " + " | ".join(RULES) + " |")
        print("|---|---|" + "---|" * len(RULES))
        for sha, subject, inside, rl in rows:
            named = ", ".join(f"{s[:7]} ({age / DAY:.1f})" for s, age in inside.items())
            cells = []
            for rule in RULES:
                link, note = rl[rule]
                cells.append((note if note == "same-branch" else "–") if link is None
                             else link[:7] + (" ✓" if link in inside else " ✗"))
            print(f"| {sha[:7]} | {named} | " + " | ".join(cells) + " |")


def show(args):
    repo = Repo(args.repo)
    full = repo.git("rev-parse", args.sha).strip()
    record = blamed(repo, full, None)
    ct = record["time"]
    print(full, record["subject"])
    for kind in ("rewritten", "moved"):
        c = Counter((s, p) for s, _, p in record[kind])
        for (s, p), n in c.most_common():
            t, subj, _ = repo.commit(s)
            print(f"  {kind:9} {n:4}  {s[:10]}  {(ct - t) / DAY:7.1f} d  {p}  {subj[:70]}")
    print("  content (v3 emulation):", record["content"])
    for rule, (link, note) in links(repo, record).items():
        print(f"  {rule:12} {link[:10] if link else '-':10} {note}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("audit")
    a.add_argument("--cache")
    a.add_argument("--rows", action="store_true")
    a.add_argument("--oracle", default=str(ORACLE), help="a directory of OWNER+NAME.judged.csv sheets")
    a.add_argument("--failures", help="version 3's links from DIR/OWNER+NAME/p2-failures.csv instead of the audit sheets")
    h = sub.add_parser("heldout")
    h.add_argument("--cache")
    h.add_argument("--rows", action="store_true")
    h.add_argument("--repo", default=str(MIRRORS / "git+git/repo"))
    h.add_argument("--since", default="2021-01-01")
    h.add_argument("--n", type=int, default=80)
    h.add_argument("--window", type=int, default=30, choices=(7, 30), help="population: a culprit named inside this many days")
    h.add_argument("--seed", default="20261127-positional")
    s = sub.add_parser("show")
    s.add_argument("sha")
    s.add_argument("--repo", required=True)
    args = ap.parse_args()
    {"audit": audit, "heldout": heldout, "show": show}[args.cmd](args)


if __name__ == "__main__":
    main()
