#!/usr/bin/env bash
# Benchmarks of reflect-hook, side by side with `git status --porcelain` in the same hyperfine run.
#
#   bench/hook.sh small            a scripted small repository with a few changes
#   bench/hook.sh large REPO       a clone of REPO (any git repository, e.g. a checkout of git/git) with a few
#                                  modified and untracked files
#   bench/hook.sh off              mode off (REFLECTION_MODE unset)
#   bench/hook.sh session-start    the SessionStart handler (prints the request; reads no git state), on the
#                                  small repository, side by side with `cat` of the same payload
#
# Needs hyperfine (Debian: apt-get install hyperfine). Results go to $OUT (default target/bench) as JSON and
# Markdown; the medians are printed at the end. Nothing from REPO is copied into this project.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-${CARGO_TARGET_DIR:-$here/target}/bench}
runs=${RUNS:-200}
mkdir -p "$out"
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)" >&2; exit 2; }
hook=${HOOK:-$("$here/scripts/build-hook.sh")}  # HOOK=path: an already built reflect-hook
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Isolated from the user's git configuration, like the tests.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=$work
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

medians() {
  python3 - "$1" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"  {r['command']:<40} median {r['median']*1e3:8.2f} ms   mean {r['mean']*1e3:8.2f} ms ± {r['stddev']*1e3:.2f}   min {r['min']*1e3:.2f} ms   ({len(r['times'])} runs)")
PY
}

case "${1:-}" in
  small)
    repo=$work/small
    mkdir -p "$repo/src" "$repo/docs" && cd "$repo"
    git init -q --initial-branch=main
    for i in $(seq 1 40); do echo "pub fn f$i() {}" > "src/m$i.rs"; done
    echo "# small" > README.md
    git add -A && git commit -qm init
    echo "// changed" >> src/m1.rs; echo "// changed" >> src/m2.rs
    git add src/m2.rs; echo "// changed" >> src/m3.rs
    echo "new" > src/new.rs; echo "notes" > docs/notes.md
    export REFLECTION_MODE=solo REFLECTION_DIR=$work/reflections
    hyperfine -N --warmup 20 --runs "$runs" --prepare "rm -rf $work/reflections" \
      --export-json "$out/hook-small.json" --export-markdown "$out/hook-small.md" \
      -n "reflect-hook (solo, small repo)" "$hook" \
      -n "git status --porcelain" "git status --porcelain"
    medians "$out/hook-small.json"
    ;;
  large)
    src=${2:?usage: bench/hook.sh large REPO}
    repo=$work/large
    git clone -q "$src" "$repo" && cd "$repo"
    echo "files tracked: $(git ls-files | wc -l)"
    mapfile -t victims < <(git ls-files | awk 'NR % 997 == 1' | head -3)
    for f in "${victims[@]}"; do echo "// bench" >> "$f"; done
    git add "${victims[0]}"
    mkdir -p bench-untracked && echo a > bench-untracked/a.txt && echo b > untracked-b.txt
    export REFLECTION_MODE=solo REFLECTION_DIR=$work/reflections
    hyperfine -N --warmup 5 --runs "$runs" --prepare "rm -rf $work/reflections" \
      --export-json "$out/hook-large.json" --export-markdown "$out/hook-large.md" \
      -n "reflect-hook (solo, large repo)" "$hook" \
      -n "git status --porcelain" "git status --porcelain" \
      -n "git status --porcelain -uall" "git status --porcelain -uall"
    medians "$out/hook-large.json"
    ;;
  off)
    cd "$work"
    unset REFLECTION_MODE
    hyperfine -N --warmup 50 --runs "$((runs * 5))" \
      --export-json "$out/hook-off.json" --export-markdown "$out/hook-off.md" \
      -n "reflect-hook (mode off)" "$hook" \
      -n "true (process start floor)" "true"
    medians "$out/hook-off.json"
    ;;
  session-start)
    repo=$work/small
    mkdir -p "$repo/src" && cd "$repo"
    git init -q --initial-branch=main
    echo "pub fn f() {}" > src/lib.rs && git add -A && git commit -qm init
    printf '{"session_id":"bench","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}' "$repo" > "$work/start.json"
    export REFLECTION_MODE=solo
    # hyperfine 1.15 has no --input: both commands read the payload through the shell (its start is subtracted).
    hyperfine --warmup 20 --runs "$runs" \
      --export-json "$out/hook-session-start.json" --export-markdown "$out/hook-session-start.md" \
      -n "reflect-hook session-start (solo)" "$hook session-start < $work/start.json > /dev/null" \
      -n "cat (the same payload)" "cat < $work/start.json > /dev/null"
    medians "$out/hook-session-start.json"
    ;;
  *) echo "usage: bench/hook.sh small | large REPO | off | session-start" >&2; exit 2 ;;
esac
