#!/usr/bin/env bash
# P2 over many repositories in one run, against the same repositories run one by one (issue 21, "Five
# repositories in one phase0 p2 run: at most the sum of the five single runs' times, peak memory at most the largest
# single run's plus 25%").
#
#   bench/p2-many.sh NAME=PATH NAME=PATH …     e.g. git=/src/git cargo=/src/cargo …
#
# Each single run is `phase0 p2 --repo PATH --name NAME`, then one `phase0 p2 --repo NAME=PATH …` over all of them;
# wall time and peak resident memory from GNU time (/usr/bin/time). PHASE0=path picks the binary (default: a
# release build, scripts/phase0-bin.sh release). Every run is `--no-cache`: with the caches (on by default since they
# came in) each run would read what the one before wrote, and the comparison would be of warm against cold. Reports go to $OUT (default target/bench/p2-many), and the pooled
# run's reports are compared with the single runs' (each partition must equal its single run's report set).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
phase0=${PHASE0:-$("$here/scripts/phase0-bin.sh" release)}
out=${OUT:-${CARGO_TARGET_DIR:-$here/target}/bench/p2-many}
[ $# -ge 2 ] || { echo "usage: bench/p2-many.sh NAME=PATH NAME=PATH …" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
export SOURCE_DATE_EPOCH=1767225600
measure() { # label, command…: prints "label seconds peak-KiB"
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" > /dev/null
  echo "$label $(cat "$out/time.txt")"
}
sum=0
max=0
repos=()
for spec in "$@"; do
  name=${spec%%=*}
  path=${spec#*=}
  repos+=(--repo "$spec")
  read -r label seconds kib < <(measure "$name" "$phase0" p2 --no-cache --repo "$path" --name "$name" --out "$out/single/$name")
  printf '%-10s %8.2f s %8d MB\n' "$label" "$seconds" $((kib / 1024))
  sum=$(python3 -c "print($sum + $seconds)")
  max=$((kib > max ? kib : max))
done
read -r _ seconds kib < <(measure pooled "$phase0" p2 --no-cache "${repos[@]}" --out "$out/pooled")
printf '%-10s %8.2f s %8d MB\n' "sum/max" "$sum" $((max / 1024))
printf '%-10s %8.2f s %8d MB  (time %.2fx the sum, memory %.2fx the largest)\n' "one run" "$seconds" $((kib / 1024)) \
  "$(python3 -c "print($seconds / $sum)")" "$(python3 -c "print($kib / $max)")"
for spec in "$@"; do
  name=${spec%%=*}
  partition=$(cd "$out/pooled" && ls -d repo=* | python3 -c "
import sys, urllib.parse
for line in sys.stdin:
    if urllib.parse.unquote(line.strip()[5:]) == sys.argv[1]: print(line.strip())" "$name")
  for file in p2.json p2-failures.parquet p2-failures.csv; do
    cmp -s "$out/single/$name/$file" "$out/pooled/$partition/$file" || echo "DIFFERS: $name $file"
  done
done
