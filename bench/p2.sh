#!/usr/bin/env bash
# P2 benchmark: the whole `phase0 p2` run (walk, detect, diff what is needed, classify, reports) side by side with
# `git log --no-renames --name-only --format=%H%x00%P%x00%at%x00%s` over the same history, at several revisions
# of one repository (how time grows with the number of commits).
#
#   bench/p2.sh REPO [REV...]      default revisions: HEAD
#   CHANGED_PATHS=1 bench/p2.sh REPO [REV...]
#
# With CHANGED_PATHS=1 both run on a clone of REPO that shares its objects (`git clone --bare --shared`, made once
# under $WORK) and has a commit-graph with changed-path Bloom filters (`git commit-graph write --reachable
# --changed-paths`), which phase0 reads and git log --name-only does not need; REPO itself is not changed.
#
# Needs hyperfine and GNU time (/usr/bin/time). Results: $OUT (default target/bench) as hyperfine JSON/Markdown,
# plus peak memory lines printed at the end. Example (BENCHMARKS.md): bench/p2.sh ~/src/git v1.6.0 v2.20.0 HEAD
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-${CARGO_TARGET_DIR:-$here/target}/bench}
work=${WORK:-/tmp/phase0-bench}
runs=${RUNS:-3}
repo=${1:?usage: bench/p2.sh REPO [REV...]}
shift
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(HEAD)
mkdir -p "$out" "$work"
if [ "${CHANGED_PATHS:-0}" = 1 ]; then
  clone=$work/changed-paths.git
  if [ ! -f "$clone/objects/info/commit-graph" ]; then
    rm -rf "$clone"
    git clone --quiet --bare --shared "$repo" "$clone"
    git -C "$clone" -c commitGraph.changedPathsVersion=2 commit-graph write --reachable --changed-paths
  fi
  repo=$clone
  tag=-changed-paths
fi
cargo build --release --locked --quiet --manifest-path "$here/Cargo.toml" --bin phase0
phase0=${CARGO_TARGET_DIR:-$here/target}/release/phase0

for rev in "${revs[@]}"; do
  commits=$(git -C "$repo" rev-list --count "$rev")
  echo "$repo at $rev: $commits commits"
  # --no-cache: a whole run every time (the warm-up would otherwise fill the user's P2 cache; bench/p2-cache.sh
  # measures reruns).
  p2="$phase0 p2 --repo $repo --rev $rev --out $work/p2-$rev${tag:-} --as-of 2026-11-21 --no-cache"
  log="git -C $repo -c core.quotePath=false log --no-renames --name-only --format=%H%x00%P%x00%at%x00%s $rev"
  hyperfine --warmup 1 --runs "$runs" \
    --export-json "$out/p2-$rev${tag:-}.json" --export-markdown "$out/p2-$rev${tag:-}.md" \
    -n "phase0 p2 ($rev)" "$p2" \
    -n "git log --name-only ($rev)" "$log > /dev/null"
  for cmd in "$p2" "$log"; do
    peak=$( { /usr/bin/time -f '%M' $cmd > /dev/null; } 2>&1 | tail -1 )
    echo "peak RSS $((peak / 1024)) MiB: $cmd"
  done
done
