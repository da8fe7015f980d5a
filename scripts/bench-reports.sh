#!/bin/sh
# Reports at scale, in one command: builds the release binary, then times every
# `--format` on a 100,000-record corpus against JSON, and 10,000 against 100,000
# distinct documents, served by `git daemon` on loopback (see bench_reports.py for
# the BENCH_* sizes). Exits 1 when a ratio is over its target.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 scripts/bench_reports.py "$@"
