#!/bin/sh
# Refs bounded on disk (issue "Trust nothing you did not recompute", attack 8):
# builds the release binary, then serves a repository advertising BENCH_REFS
# branches (default 300000) with `git daemon` on loopback and prints, for a cold
# audit and a re-check, pinaudit's wall time and the mirror's size on disk, beside
# `git clone --mirror` of the same repository run in the same script (the
# baseline). Exits 1 when the mirror is over 50 MB, the cold audit over 60 s or the
# re-check over 5 s.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 scripts/bench_refs.py "$@"
