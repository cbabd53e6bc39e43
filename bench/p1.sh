#!/usr/bin/env bash
# P1 benchmark: the whole `phase0 p1` run (read, validate, every metric, reports) side by side with Python
# polars + scikit-learn and pandas + scikit-learn reading the same corpus and computing roc_auc_score alone.
#
#   bench/p1.sh [ROWS...]      default: 1000000 10000000
#
# Needs hyperfine, GNU time (/usr/bin/time) and `pip install polars pandas scikit-learn`. Corpora are generated
# with `phase0 synth p1 --minimal` (about 50 bytes a row) into $WORK (default /tmp/phase0-bench). Results:
# $OUT (default target/bench) as hyperfine JSON/Markdown, plus peak memory lines printed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-${CARGO_TARGET_DIR:-$here/target}/bench}
work=${WORK:-/tmp/phase0-bench}
runs=${RUNS:-3}
mkdir -p "$out" "$work"
cargo build --release --locked --quiet --manifest-path "$here/Cargo.toml" --bin phase0
phase0=${CARGO_TARGET_DIR:-$here/target}/release/phase0
rows_list=("$@")
[ ${#rows_list[@]} -gt 0 ] || rows_list=(1000000 10000000)

for rows in "${rows_list[@]}"; do
  corpus=$work/p1-$rows.jsonl
  [ -s "$corpus" ] || "$phase0" synth p1 --minimal --rows "$rows" --seed 42 > "$corpus"
  echo "corpus: $corpus ($(du -h "$corpus" | cut -f1), $rows rows)"
  hyperfine --warmup 1 --runs "$runs" \
    --export-json "$out/p1-$rows.json" --export-markdown "$out/p1-$rows.md" \
    -n "phase0 p1" "$phase0 p1 $corpus --out $work/out-$rows --as-of 2026-11-21" \
    -n "polars + sklearn (read + roc_auc_score)" "python3 $here/bench/p1_reference.py polars $corpus" \
    -n "pandas + sklearn (read + roc_auc_score)" "python3 $here/bench/p1_reference.py pandas $corpus"
  for cmd in "$phase0 p1 $corpus --out $work/out-$rows --as-of 2026-11-21" \
             "python3 $here/bench/p1_reference.py polars $corpus" \
             "python3 $here/bench/p1_reference.py pandas $corpus"; do
    peak=$( { /usr/bin/time -f '%M' $cmd > /dev/null; } 2>&1 | tail -1 )
    echo "peak RSS $((peak / 1024)) MiB: $cmd"
  done
done
