#!/usr/bin/env bash
# Rebuilds demo/forge/pinaudit-demo/bench.git, the small repository the demo's
# records cite. Commit ids depend only on the content, names and dates fixed
# here, so a rebuild gives the same ids the records pin.
set -euo pipefail
cd "$(dirname "$0")"
out=forge/pinaudit-demo/bench.git
rm -rf "$out" work
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Demo Publisher" GIT_AUTHOR_EMAIL="publisher@example.org"
export GIT_COMMITTER_NAME="Demo Publisher" GIT_COMMITTER_EMAIL="publisher@example.org"
commit() { # DATE MESSAGE
  GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" git -C work commit -q -m "$2"
}
git init -q -b main work

cat > work/README.md <<'MD'
# bench: a small inference benchmark

Measured on one node, batch 1, 4K context.

| phase | rate |
|---|---|
| decode | 41.3 tok/s |
| prefill | 1,834 tok/s |
| first token | ~0.62 s |

GSM8K subset: 49 of 50 correct (98%), see `results/gsm8k.json`.

Run with `--threads 8 --ctx 4096`.
MD
mkdir -p work/results
cat > work/results/gsm8k.json <<'JSON'
{
  "task": "gsm8k",
  "subset": 50,
  "total": 50,
  "correct": 49,
  "accuracy": 0.98
}
JSON
git -C work add -A
commit "2026-03-02T10:00:00Z" "Results of the first run"
git -C work tag v1

# A side experiment, proposed as pull request 7 and never merged: the forge
# still serves it (as `refs/pull/7/head`), but no branch or tag reaches it.
git -C work checkout -q -b experiment
sed -i 's/41.3 tok\/s/44.8 tok\/s/' work/README.md
git -C work add -A
commit "2026-03-05T09:00:00Z" "Try a larger batch"
git -C work checkout -q main
git -C work update-ref refs/pull/7/head experiment
git -C work branch -q -D experiment

# Upstream moves on: a note pushes the table down, and decode is corrected.
cat > work/README.md <<'MD'
# bench: a small inference benchmark

Measured on one node, batch 1, 4K context.

> Re-measured after a driver update; decode corrected.

| phase | rate |
|---|---|
| decode | 39.7 tok/s |
| prefill | 1,834 tok/s |
| first token | ~0.62 s |

GSM8K subset: 49 of 50 correct (98%), see `results/gsm8k.json`.

Run with `--threads 8 --ctx 4096`.
MD
git -C work add -A
commit "2026-04-20T16:30:00Z" "Correct decode after the driver update"

mkdir -p "$(dirname "$out")"
git clone -q --bare work "$out"
git -C work push -q "$PWD/$out" refs/pull/7/head:refs/pull/7/head
git -C "$out" -c pack.writeBitmaps=false -c pack.writeReverseIndex=false repack -q -a -d
rm -rf "$out/hooks" "$out/branches" "$out/info" "$out/description" "$out/logs" "$out/FETCH_HEAD"
# Loose refs, so that `refs/` exists in a checkout of this repository.
git -C "$out" for-each-ref --format='%(objectname) %(refname)' | while read -r id ref; do
  mkdir -p "$out/$(dirname "$ref")"; echo "$id" > "$out/$ref"
done
rm -f "$out/packed-refs"
printf '[core]\n\trepositoryformatversion = 0\n\tbare = true\n' > "$out/config"
git -C work log --all --format='%H %cI %s'
rm -rf work
