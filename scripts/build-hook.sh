#!/usr/bin/env bash
# Builds the release `reflect-hook` the way it is installed and benchmarked, and prints its path.
#
# On Linux with glibc it is linked statically and not position-independent: no dynamic loader and no
# relocations at start-up, which is most of what a hook that runs on every agent turn pays before doing anything
# (BENCHMARKS.md has the figures). Elsewhere it is an ordinary release build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
target_dir=${CARGO_TARGET_DIR:-$here/target}
host=$(rustc -vV | sed -n 's/^host: //p')
case "$host" in
  *-linux-gnu)
    # --target keeps these flags away from build scripts and proc macros, which must stay dynamic.
    RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static -C relocation-model=static" \
      cargo build --release --locked --quiet --manifest-path "$here/Cargo.toml" --bin reflect-hook --target "$host" >&2
    echo "$target_dir/$host/release/reflect-hook"
    ;;
  *)
    cargo build --release --locked --quiet --manifest-path "$here/Cargo.toml" --bin reflect-hook >&2
    echo "$target_dir/release/reflect-hook"
    ;;
esac
