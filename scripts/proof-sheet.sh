#!/bin/sh
# The proof sheet of the demo corpus (demo/, offline) rendered to PNG by headless
# Chromium, at a desktop and a phone width, to look at what `--format html` draws.
# Needs `chromium` (Debian: apt-get install -y chromium) or CHROMIUM=path.
# Writes OUT/proof-sheet.html, OUT/proof-sheet-desktop.png and
# OUT/proof-sheet-phone.png (OUT: first argument, default target/proof-sheet).
# PINAUDIT=path uses that binary instead of building a debug one.
set -eu
cd "$(dirname "$0")/.."
out=${1:-target/proof-sheet}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -z "${PINAUDIT:-}" ]; then
    cargo build --quiet
    PINAUDIT="${CARGO_TARGET_DIR:-target}/debug/pinaudit"
fi
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$chromium" ] || { echo "error: no chromium on PATH (apt-get install -y chromium)" >&2; exit 2; }

# A fresh copy of the demo, so the checkout's demo/cache is left alone.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R demo "$work/demo"
rm -rf "$work/demo/cache"
# The demo has errors on purpose: exit 1 is the expected verdict.
(cd "$work" && "$PINAUDIT" audit --config demo/pinaudit.toml --allow-local \
    --format html --output proof-sheet.html) || [ $? -eq 1 ]
cp "$work/proof-sheet.html" "$out/proof-sheet.html"

shot() { # WIDTH HEIGHT NAME
    profile=$(mktemp -d)
    "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars \
        --screenshot="$out/$3" --window-size="$1,$2" \
        "file://$out/proof-sheet.html" >/dev/null 2>&1
    rm -rf "$profile"
    echo "wrote $out/$3"
}
shot 1280 2000 proof-sheet-desktop.png
shot 390 2000 proof-sheet-phone.png
