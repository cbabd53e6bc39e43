# The daily interface. `just --list` shows every recipe.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Where `just hook-install` puts the hook binary (the settings file will point here).
bindir := env_var_or_default("BINDIR", env_var("HOME") / ".local/bin")

default:
    @just --list

# The whole test suite (the README's test command).
test:
    cargo test --workspace

# Format, lint and test, as CI does.
ci:
    bash .ci/run

# The three experiments on the embedded defaults (the README's main job): `just demo [--repo .] [--out reports/demo]`
demo *args:
    cargo run --release --bin phase0 -- demo {{args}}

# Regenerate reports/example/ (the demo's P1 and P3 reports, dated 2026-01-01) after a change to P1, P3 or data/
example:
    #!/usr/bin/env bash
    set -euo pipefail
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # Exit 3 (P2 could not run, e.g. outside a git checkout) still leaves the P1 and P3 reports.
    phase0=$(scripts/phase0-bin.sh dev)
    SOURCE_DATE_EPOCH=1767225600 "$phase0" demo --repo . --out "$tmp" > /dev/null || [ $? -eq 3 ]
    rm -rf reports/example
    mkdir -p reports/example
    cp -R "$tmp/p1" "$tmp/p3" reports/example/
    echo "reports/example/ regenerated"

# Build the hook (static on Linux), copy it to BINDIR, register it: [--scope user|project|local] [--settings PATH] [--subagents]
hook-install *args:
    #!/usr/bin/env bash
    set -euo pipefail
    built=$(scripts/build-hook.sh)
    mkdir -p "{{bindir}}"
    install -m 0755 "$built" "{{bindir}}/reflect-hook.new"
    mv "{{bindir}}/reflect-hook.new" "{{bindir}}/reflect-hook"
    "{{bindir}}/reflect-hook" install {{args}}
    echo "Enable capture with REFLECTION_MODE=solo (or orchestrated) in the agent's environment."

# Remove the hook from Claude Code settings (same --scope/--settings as install).
hook-uninstall *args:
    "{{bindir}}/reflect-hook" uninstall {{args}}

# Validate sidecars against the reflection.v1 schema.
validate +files:
    cargo run --quiet --release --bin reflect-hook -- validate {{files}}

# Hook benchmarks with hyperfine (small repo, mode off, SessionStart; REPO=path adds a large checkout vs git status)
bench REPO="":
    bench/hook.sh small
    bench/hook.sh off
    bench/hook.sh session-start
    if [ -n "{{REPO}}" ]; then bench/hook.sh large "{{REPO}}"; else echo "pass REPO=<path> for the large-checkout benchmark"; fi

# P1 calibration on a labeled corpus (JSONL): `just p1 corpus.jsonl [--out DIR] [--json] [--skip-invalid]`
p1 corpus *args:
    cargo run --quiet --release --bin phase0 -- p1 {{corpus}} {{args}}

# Fuzz every input reader (corpus, boards, sidecars, hook payload, self-report) for SECONDS each (default 60):
# mutations of pipeline/tests/fuzz-seeds/; a panicking input lands in target/fuzz-findings/.
fuzz SECONDS="60":
    PHASE0_FUZZ_SECONDS={{SECONDS}} cargo test --release -p pipeline --test fuzz -- --nocapture --test-threads=2

# Regenerate the sample corpus in data/ and its CSV and Parquet tables (deterministic)
sample-data:
    cargo run --quiet --release --bin phase0 -- synth p1 --rows 400 --seed 1 > data/p1-corpus.jsonl
    PHASE0_BLESS=1 cargo test --quiet -p pipeline --test formats the_sample_tables

# P1 benchmark against Python polars/pandas + scikit-learn (ROWS: corpus sizes, default 1M and 10M)
bench-p1 *rows:
    bench/p1.sh {{rows}}

# The P1 corpus from captured sidecars and git outcomes: `just corpus --reflections DIR --repo PATH [--out corpus.jsonl]`
corpus *args:
    cargo run --quiet --release --bin phase0 -- corpus {{args}}

# `phase0 corpus` benchmark: 100,000 sidecars against 50,000 commits (inputs built by bench/corpus_fixture.py)
bench-corpus *args:
    bench/corpus.sh {{args}}

# P2 gate buckets over a repository's history: `just p2 --repo .` (every `phase0 p2` flag works)
p2 *args:
    cargo run --quiet --release --bin phase0 -- p2 {{args}}

# P2 benchmark against `git log --name-only` on a large clone (git/git) at REVS (default HEAD); CHANGED_PATHS=1: with Bloom filters
bench-p2 REPO *REVS:
    bench/p2.sh {{REPO}} {{REVS}}

# P3 benchmark: the 1M-task JSONL (under 3 s) and, per REPO, `phase0 p3 --repo` against `git log -p` of its task file
bench-p3 *repos:
    bench/p3.sh {{repos}}

# P3 detectability over board exports: `just p3 data/p3/jira.json` (every `phase0 p3` flag works)
p3 *args:
    cargo run --quiet --release --bin phase0 -- p3 {{args}}

# The weekly reports into reports/<ISO week>/ and reports/index.md: `just weekly [--config FILE] [--week 2026-W47]`.
# Reports are dated today 00:00 UTC unless SOURCE_DATE_EPOCH or --as-of says otherwise. Exit 3: partial.
weekly *args:
    #!/usr/bin/env bash
    set -euo pipefail
    # Built without SOURCE_DATE_EPOCH, run with it: setting it for cargo would rebuild libdeflate-sys daily.
    phase0=$(scripts/phase0-bin.sh)
    SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(( $(date -u +%s) / 86400 * 86400 ))}" "$phase0" weekly {{args}}
