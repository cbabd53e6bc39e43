#!/usr/bin/env bash
# P2 reruns with the commit and diff caches (issue 21, "A warm rerun of P2 on git/git after 1% more commits in at
# most 0.1× the cold run's time"), side by side in one hyperfine run:
#   cold         phase0 p2 --no-cache on HEAD
#   after +1%    the cache as a run on HEAD~N left it (N first-parent steps back, about 1% of the commits), then HEAD
#   warm         the cache as a run on HEAD left it, then HEAD again
#
#   bench/p2-cache.sh REPO N          e.g. bench/p2-cache.sh /src/git 200   (git/git: HEAD~200..HEAD = 819 commits)
#
# The "after +1%" runs start from a copy of the cache, made and synced (`sync`) before each run: the 25 MB the copy
# writes are the harness's, not the run's, and left dirty they would be flushed during the run's own syncs.
#
# PHASE0=path picks the binary (default: a release build). Results go to $OUT (default target/bench/p2-cache); the
# reports of the three are compared byte for byte.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
phase0=${PHASE0:-$("$here/scripts/phase0-bin.sh" release)}
out=${OUT:-${CARGO_TARGET_DIR:-$here/target}/bench/p2-cache}
repo=${1:?usage: bench/p2-cache.sh REPO N}
n=${2:?usage: bench/p2-cache.sh REPO N}
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/behind" "$out/current"
export SOURCE_DATE_EPOCH=1767225600
echo "new commits: $(git -C "$repo" rev-list --count "HEAD~$n..HEAD") of $(git -C "$repo" rev-list --count HEAD)"
"$phase0" p2 --repo "$repo" --rev "HEAD~$n" --cache "$out/behind" --out "$out/reports-behind" > /dev/null
"$phase0" p2 --repo "$repo" --cache "$out/current" --out "$out/reports-current" > /dev/null
mkdir -p "$out/saved"
cp -R "$out/behind" "$out/saved/behind"
hyperfine -N -w 1 -r "${RUNS:-3}" --export-markdown "$out/hyperfine.md" \
  -n cold "$phase0 p2 --repo $repo --no-cache --out $out/cold" \
  -n "after +1%" --prepare "bash -c 'rm -rf $out/behind && cp -R $out/saved/behind $out/behind && sync'" \
  "$phase0 p2 --repo $repo --cache $out/behind --out $out/grown" \
  -n warm "$phase0 p2 --repo $repo --cache $out/current --out $out/warm"
rm -rf "$out/behind" && cp -R "$out/saved/behind" "$out/behind"
"$phase0" p2 --repo "$repo" --cache "$out/behind" --out "$out/grown" | grep " cache "
"$phase0" p2 --repo "$repo" --cache "$out/current" --out "$out/warm" | grep " cache "
for run in grown warm; do
  diff -r "$out/cold" "$out/$run" > /dev/null && echo "$run: reports identical to cold" || echo "$run: REPORTS DIFFER"
done
ls -l "$out/current"
