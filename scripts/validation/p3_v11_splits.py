#!/usr/bin/env python3
"""p3_v11_splits.py CASES.csv [MIRRORS] > triggers.json: for each (repo,id) of CASES.csv (columns repo,id; repo as
OWNER+NAME, a bare clone at MIRRORS/OWNER+NAME/repo, MIRRORS defaulting to /work/.mirror, never committed): walk the
first-parent versions of .beads/issues.jsonl (with p3_trace_id.py's reader, HEAD; these repos have no existing named
sync branch), take the id's first
version, and report every version where title != first title and created_at string != first
created_at, with the created_at delta in seconds and word overlap with the first title: where version 10's
identity rule splits the id, and by how much the creation times differ (version 11 keeps one task below a second).
Used for pipeline/tests/data/p3-v11/ (the readers' helper; its judgements are in judged.csv)."""
import csv, json, re, sys
from datetime import datetime, timezone

from p3_trace_id import versions

def ts(s):
    """Instant in integer nanoseconds (the tool compares parsed instants at full precision)."""
    s = s.replace("Z", "+00:00")
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(\.\d+)?(.*)", s)
    base, frac, tz = m.group(1), m.group(2) or "", m.group(3)
    d = datetime.fromisoformat(base + tz)
    ns = int(frac[1:].ljust(9, "0")[:9]) if frac else 0
    return int(d.timestamp()) * 10**9 + ns

def words(t):
    """Tool-style: distinct lower-case alphanumeric words."""
    out, cur = set(), ""
    for ch in t + " ":
        if ch.isalnum():
            cur += ch
        elif cur:
            out.add(cur.lower()); cur = ""
    return out

def main():
    cases = list(csv.DictReader(open(sys.argv[1])))
    mirrors = sys.argv[2] if len(sys.argv) > 2 else "/work/.mirror"
    byrepo = {}
    for c in cases:
        byrepo.setdefault(c["repo"], []).append(c["id"])
    out = {}
    for repo, ids in byrepo.items():
        gd = f"{mirrors}/{repo}/repo"
        files = [".beads/issues.jsonl", ".beads/beads.jsonl"]
        first = {}
        hits = {i: [] for i in ids}
        prevrec = {}
        for h, date, subj, recs in versions(gd, ["--first-parent", "HEAD"], files, set(ids)):
            for i, o in recs.items():
                if i not in first:
                    first[i] = (h, date, subj, o)
                    continue
                f0 = first[i][3]
                t0, c0 = f0.get("title"), f0.get("created_at")
                t, c = (o.get("title") or "").strip(), o.get("created_at")
                t0 = (t0 or "").strip()
                p = prevrec.get(i)
                changed = p is None or (p.get("title") or "").strip() != t or ts(p.get("created_at")) != ts(c)
                if t != t0 and c and c0 and ts(c) != ts(c0) and changed:
                    d = (ts(c) - ts(c0)) / 1e9
                    w0, w1 = words(t0), words(t)
                    hits[i].append(dict(commit=h, date=date, subj=subj, title_before=t0, title_after=t,
                        prev_title=p.get("title") if p else None, prev_created=p.get("created_at") if p else None,
                        created_before=c0, created_after=c, delta=d,
                        share=len(w0 & w1), n0=len(w0), n1=len(w1), overlap=len(w0 & w1)/max(1,min(len(w0),len(w1)))))
                prevrec[i] = o
        for i in ids:
            out[f"{repo},{i}"] = dict(first=first.get(i, (None,))[0:3], hits=hits[i])
        print(repo, "done", file=sys.stderr)
    json.dump(out, sys.stdout, indent=1)

main()
