#!/usr/bin/env bash
# Seeds fuzz/corpus/TARGET/ from the test data: pin files, the seed record, the
# matcher corpus (one document and one line per case) and every URL the tests use.
set -euo pipefail
cd "$(dirname "$0")/.."
c=fuzz/corpus
mkdir -p "$c"/{import,pin_file,url,matcher}
cp pins/*.json "$c/pin_file/"
cp tests/data/seed.txt "$c/import/seed.txt"
i=0
for f in tests/data/matcher/*.json; do
  cp "$f" "$c/pin_file/matcher-$(basename "$f")"
  # Each case's document and value become an import and a matcher seed.
  python3 - "$f" "$c" <<'PY'
import json, sys, hashlib
path, corpus = sys.argv[1], sys.argv[2]
data = json.load(open(path))
docs = data.get("documents", {}) if isinstance(data, dict) else {}
for name, lines in docs.items():
    open(f"{corpus}/import/doc-{name}.md", "w").write("\n".join(lines) + "\n")
cases = data.get("cases", []) if isinstance(data, dict) else []
for case in cases:
    if not isinstance(case, dict):
        continue
    key = hashlib.sha1(json.dumps(case, sort_keys=True).encode()).hexdigest()[:16]
    lines = docs.get(case.get("doc"), [])
    value = str(case.get("value", ""))
    unit = case.get("unit") or ""
    open(f"{corpus}/matcher/{key}", "w").write(f"{value} {unit}\n" + "\n".join(lines) + "\n")
PY
done
grep -rhoE "(https?|git|file|ssh|FILE)://[^\"' )\`]+" tests src | sort -u | while read -r u; do
  i=$((i + 1))
  printf '%s' "$u" > "$c/url/seed-$i"
done
echo "seeded: $(find "$c" -type f | wc -l) files"
