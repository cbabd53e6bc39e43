#!/usr/bin/env python3
"""Reference values for `murmur3` in `pipeline/src/scan/changed_paths.rs` (git's `murmur3_seeded_v2`).

Computed with the `mmh3` package (the C reference MurmurHash3_x86_32), independent of the Rust code. The keys
cover every tail length (0-3 bytes after the 4-byte blocks), bytes above 0x7f (where git's version 1 hash
differed), and the two seeds git's changed-path filters use. Prints the Rust array the unit test holds.

Requirements: pip install mmh3
Run: python3 scripts/reference/murmur3.py
"""

import mmh3

SEEDS = [0, 1, 0x293AE76F, 0x7E646E2C]
KEYS = [
    b"",
    b"a",
    b"ab",
    b"abc",
    b"abcd",
    b"abcde",
    b"src/lib.rs",
    b"Documentation/RelNotes/2.47.0.txt",
    b"caf\xc3\xa9/\xe9t\xe9",
    b"\xff\xfe\xfd",
]

for seed in SEEDS:
    for key in KEYS:
        literal = "".join(chr(b) if 0x20 <= b < 0x7F and b not in b'"\\' else f"\\x{b:02x}" for b in key)
        print(f'(0x{seed:08x}, b"{literal}", 0x{mmh3.hash(key, seed, signed=False):08x}),')
