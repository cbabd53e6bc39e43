#!/usr/bin/env bash
# Do two phase0 builds write the same P3 reports? Runs `p3` with each on the sample boards of data/p3 (one by one),
# on a task JSONL (P3_JSONL, e.g. the 1M file of bench/p3_tasks.py) and on the task histories of the given mirrors,
# and diffs the report sets.
#
#   bench/p3-identity.sh OLD_PHASE0 NEW_PHASE0 [MIRROR ...]
#
# PREREG=FILE passes --prereg FILE to both. Exit 1 when any report set differs.
set -uo pipefail
old=$1 new=$2
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export SOURCE_DATE_EPOCH=1767225600
prereg=()
[ -n "${PREREG:-}" ] && prereg=(--prereg "$PREREG")
status=0
run() {
    local name=$1
    shift
    "$old" p3 "$@" "${prereg[@]}" --out "$out/$name/a" > /dev/null 2>&1
    local a=$?
    "$new" p3 "$@" "${prereg[@]}" --out "$out/$name/b" > /dev/null 2>&1
    local b=$?
    if [ "$a" = "$b" ] && diff -r "$out/$name/a" "$out/$name/b" > /dev/null 2>&1; then
        echo "$name: identical (exit $a)"
    elif [ "$a" = "$b" ] && [ ! -e "$out/$name/a" ] && [ ! -e "$out/$name/b" ]; then
        echo "$name: no reports from either (exit $a)"
    else
        echo "$name: DIFFERENT (exit $a / $b)"
        status=1
    fi
}
cd "$here" || exit 2
for f in data/p3/*.jsonl data/p3/*.json data/p3/*.csv data/p3/*.parquet; do
    run "sample-$(basename "$f")" "$f" --as-of 2026-11-21
done
[ -n "${P3_JSONL:-}" ] && run jsonl "$P3_JSONL" --as-of 2026-11-21
for m in "$@"; do
    run "repo-$(basename "$(dirname "$m")")" --repo "$m"
done
exit $status
