#!/usr/bin/env bash
# Builds phase0 (release unless $1 is `dev`) and prints the executable's path.
#
# Recipes that set SOURCE_DATE_EPOCH run the binary this prints instead of `cargo run`: libdeflate-sys' build
# script reruns whenever that variable changes (it changes every day), which made `just p2`, `just weekly`,
# `just p2` rebuild the release binary twice for runs that take under a second.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
profile=(--release)
[ "${1:-}" = dev ] && profile=()
env -u SOURCE_DATE_EPOCH cargo build --quiet "${profile[@]}" --manifest-path "$here/Cargo.toml" --bin phase0 \
  --message-format=json |
  sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1
