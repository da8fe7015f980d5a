#!/bin/sh
# Peak memory of `pinaudit audit` against document size (issues 12, 13): builds the
# release binary, then audits generated documents (5M lines, 1 GB with a wrong
# hash, 5M lines with an edited head) served by `git daemon` on loopback and prints
# each run's peak RSS (its own ru_maxrss, from wait4). Exits 1 when a run is over
# BENCH_MAX_RSS_MIB (default 100). Sizes: BENCH_LINES (5000000), BENCH_GB_MIB (1024);
# BENCH_CASES picks cases (default lines,1gb,lines+head).
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 scripts/bench_memory.py "$@"
