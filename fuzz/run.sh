#!/usr/bin/env bash
# Runs every fuzz target for SECS seconds (default 600) with cargo-fuzz on a
# nightly toolchain, after seeding the corpora from the tests. Not CI: a
# finding is a file under fuzz/artifacts/TARGET/ to turn into a regression test.
#
#   fuzz/run.sh            # 10 minutes per target
#   fuzz/run.sh 60 url     # one target for a minute
#
# Without nightly, the stable fallback runs the same entry points:
#   PINAUDIT_FUZZ_SECS=600 cargo test --test cli security::long_run_fuzz -- --nocapture
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(import pin_file url matcher)
./seed.sh
for t in "${targets[@]}"; do
  echo "== $t for ${secs}s"
  cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 \
    -max_len=262144 2>&1 | tail -n 5
done
