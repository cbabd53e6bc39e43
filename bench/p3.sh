#!/usr/bin/env bash
# P3 benchmark, issue 17's two targets: a 1M-task JSONL export (built by bench/p3_tasks.py, under 3 s) and, for each
# REPO given, the history of its task file read by `phase0 p3 --repo` side by side with
# `git log -p -- .beads/issues.jsonl` (at most 0.5x). `git log -p` needs every blob: on a partial clone it fails and
# only phase0's time is reported.
#
#   bench/p3.sh [REPO...]        PHASE0=path/to/phase0 to time a given build (default: a release build of this tree)
#
# Needs hyperfine. Results: $OUT (default target/bench) as hyperfine JSON/Markdown.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-${CARGO_TARGET_DIR:-$here/target}/bench}
work=${WORK:-/tmp/phase0-bench}
runs=${RUNS:-7}
mkdir -p "$out" "$work"
phase0=${PHASE0:-$("$here/scripts/phase0-bin.sh")}
tasks=$work/p3-1m.jsonl
[ -f "$tasks" ] || python3 "$here/bench/p3_tasks.py" "$tasks"
hyperfine -N -w 1 -r "$runs" --export-json "$out/p3-1m.json" --export-markdown "$out/p3-1m.md" \
  "$phase0 p3 $tasks --as-of 2026-11-21 --out $work/p3-1m"
for repo in "$@"; do
  name=$(basename "$(cd "$repo" && git rev-parse --absolute-git-dir | sed 's#/\.git$##; s#/repo$##')")
  commands=("$phase0 p3 --repo $repo --out $work/p3-$name")
  if git -C "$repo" log -p -- .beads/issues.jsonl > /dev/null 2>&1; then
    commands+=("git -C $repo log -p -- .beads/issues.jsonl")
  else
    echo "$repo: git log -p fails (objects missing?): phase0 alone"
  fi
  hyperfine -N -w 1 -r "$runs" --output=null --export-json "$out/p3-$name.json" --export-markdown "$out/p3-$name.md" \
    "${commands[@]}"
done
