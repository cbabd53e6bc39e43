#!/usr/bin/env bash
# P2's caches change no report (issue 21): for each repository, a run on HEAD~N fills a fresh cache, then HEAD runs
# twice with it (after growth, warm); both report sets are compared with a run without a cache, byte for byte.
#   bench/p2-cache-identity.sh NAME=REPO:N ...     e.g. bench/p2-cache-identity.sh git=/src/git:600 vite=/src/vite:50
# PHASE0=path picks the binary (default: a release build); OUT the work directory (default target/bench/p2-identity).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
phase0=${PHASE0:-$("$here/scripts/phase0-bin.sh" release)}
out=${OUT:-${CARGO_TARGET_DIR:-$here/target}/bench/p2-identity}
export SOURCE_DATE_EPOCH=1767225600
status=0
for spec in "$@"; do
  name=${spec%%=*}; rest=${spec#*=}; repo=${rest%%:*}; n=${rest##*:}
  dir=$out/$name; rm -rf "$dir"; mkdir -p "$dir"
  "$phase0" p2 --repo "$repo" --rev "HEAD~$n" --cache "$dir/cache" --out "$dir/behind" > /dev/null
  grown=$("$phase0" p2 --repo "$repo" --cache "$dir/cache" --out "$dir/grown" | grep 'link cache' || true)
  warm=$("$phase0" p2 --repo "$repo" --cache "$dir/cache" --out "$dir/warm" | grep 'link cache' || true)
  "$phase0" p2 --repo "$repo" --no-cache --out "$dir/cold" > /dev/null
  for run in grown warm; do
    if diff -r "$dir/cold" "$dir/$run" > /dev/null; then verdict=identical; else verdict=DIFFERENT; status=1; fi
    echo "$name $run: reports $verdict to a run without a cache"
  done
  echo "  after growth:${grown#*cache}"
  echo "  warm:        ${warm#*cache}"
done
exit $status
