#!/usr/bin/env bash
# `phase0 corpus` benchmark: 100,000 sidecars against a repository of 50,000 commits (the issue's target: under
# 30 s wall time). The inputs come from bench/corpus_fixture.py (deterministic, seed 1; the repository is built
# with `git fast-import`) into $WORK (default /tmp/phase0-bench-corpus) and are reused when present.
#
#   bench/corpus.sh [COMMITS] [SIDECARS]      default: 50000 100000
#
# Needs hyperfine and GNU time (/usr/bin/time). Uses $PHASE0 when set, else builds the release binary. Results:
# $OUT (default target/bench) as hyperfine JSON/Markdown, plus the peak memory line printed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-${CARGO_TARGET_DIR:-$here/target}/bench}
work=${WORK:-/tmp/phase0-bench-corpus}
runs=${RUNS:-3}
commits=${1:-50000}
sidecars=${2:-100000}
mkdir -p "$out" "$work"
if [ -z "${PHASE0:-}" ]; then
  cargo build --release --locked --quiet --manifest-path "$here/Cargo.toml" --bin phase0
  PHASE0=${CARGO_TARGET_DIR:-$here/target}/release/phase0
fi
inputs=$work/$commits-$sidecars
if [ ! -d "$inputs/sidecars" ]; then
  rm -rf "$inputs"
  python3 "$here/bench/corpus_fixture.py" "$inputs/repo" "$inputs/sidecars" \
    --commits "$commits" --sidecars "$sidecars" --seed 1
fi
echo "inputs: $inputs ($(git -C "$inputs/repo" rev-list --count HEAD) commits, $(ls "$inputs/sidecars" | wc -l) sidecars)"
# As of a year after the last commit: every window has elapsed, so every committed sidecar is labeled.
cmd="$PHASE0 corpus --reflections $inputs/sidecars --repo $inputs/repo --as-of 2027-01-01 --out $work/corpus.jsonl"
hyperfine --warmup 1 --runs "$runs" \
  --export-json "$out/corpus-$commits-$sidecars.json" --export-markdown "$out/corpus-$commits-$sidecars.md" \
  -n "phase0 corpus" "$cmd 2>/dev/null"
/usr/bin/time -f '%e s wall, %M KiB peak RSS' -o "$work/time.txt" $cmd 2>/dev/null
echo "$(cat "$work/time.txt"): $cmd"
