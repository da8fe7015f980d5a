#!/bin/sh
# Record import at scale (issue 13): builds the release binary, then times
# `pinaudit import` on 10k and 100k figures and 10 MiB of broken ```json blocks and
# prints the ratio time(100k) / (10 x time(10k)); exits 1 when it is over 3.
# Sizes: BENCH_FIGURES (default 10000), BENCH_BROKEN_MIB (10), BENCH_RUNS (3),
# BENCH_TIMEOUT (600 s per run).
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 scripts/bench_import.py "$@"
