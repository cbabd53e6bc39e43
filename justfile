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

# What phase0 shows on the embedded defaults.
demo *args:
    cargo run --release --bin phase0 -- demo {{args}}

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

# Hook benchmarks with hyperfine (small repo, mode off; REPO=path adds a large checkout vs git status)
bench REPO="":
    bench/hook.sh small
    bench/hook.sh off
    if [ -n "{{REPO}}" ]; then bench/hook.sh large "{{REPO}}"; else echo "pass REPO=<path> for the large-checkout benchmark"; fi

# P1 calibration on a labeled corpus (JSONL): `just p1 corpus.jsonl [--out DIR] [--json] [--skip-invalid]`
p1 corpus *args:
    cargo run --quiet --release --bin phase0 -- p1 {{corpus}} {{args}}

# Regenerate the sample corpus in data/ (deterministic)
sample-data:
    cargo run --quiet --release --bin phase0 -- synth p1 --rows 400 --seed 1 > data/p1-corpus.jsonl

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

# P2 benchmark against `git log --name-only` on REPO (a clone of a large repository, e.g. git/git)
bench-p2 REPO:
    bench/p2.sh {{REPO}}

# P3 detectability over board exports: `just p3 data/p3/jira.json` (every `phase0 p3` flag works)
p3 *args:
    cargo run --quiet --release --bin phase0 -- p3 {{args}}

# The weekly reports (arrives with its issue).
weekly *args:
    @echo "phase0 weekly is not implemented yet" >&2; exit 2
