#!/bin/sh
# Speed at scale, in one command: builds the release binary, then generates the
# corpora, serves them with `git daemon` on loopback and times pinaudit against
# the plain-git baselines. Sizes come from BENCH_* variables (see bench_scale.py);
# e.g. a quick run: BENCH_REPOS=4 BENCH_RECORDS=20 BENCH_HISTORY=100 scripts/bench-scale.sh
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 scripts/bench_scale.py "$@"
