#!/usr/bin/env python3
"""Record import at scale: is `pinaudit import` linear in its input?

Run through `scripts/bench-import.sh` (builds the release binary first). It writes
three record documents and times `pinaudit import` on each (best of BENCH_RUNS):

  - N figures, each citing its own document by a distinct URL (BENCH_FIGURES,
    default 10000), and 10 x N figures;
  - BENCH_BROKEN_MIB (default 10) MiB of ```json blocks that are not JSON.

It prints the times and the ratio time(10N) / (10 x time(N)): 1.0 is linear, 10 is
quadratic. The acceptance bound (issue 13) is 3.
"""

import os
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("PINAUDIT_BIN", "target/release/pinaudit")
N = int(os.environ.get("BENCH_FIGURES", "10000"))
BROKEN_MIB = int(os.environ.get("BENCH_BROKEN_MIB", "10"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
TIMEOUT = float(os.environ.get("BENCH_TIMEOUT", "600"))


def figures_doc(n):
    sha = "0123456789abcdef0123456789abcdef01234567"
    out = [
        "# Scale record - Type: Benchmark",
        "",
        "- Source revision: " + sha,
        "",
        "```json",
        '{"figures": [',
    ]
    rows = []
    for i in range(n):
        rows.append(
            '  {"label": "figure %d", "metric": "accuracy", "value": %d.5, "unit": "%%",'
            ' "evidence_url": "https://github.com/org%d/repo%d/blob/%s/docs/r%d.md#L%d",'
            ' "source_document_sha256": "%064x"}' % (i, i % 100, i % 97, i, sha, i, 1 + i % 50, i)
        )
    out.append(",\n".join(rows))
    out.append("]}")
    out.append("```")
    return "\n".join(out) + "\n"


def broken_doc(mib):
    block = '```json\n{"label": "x", "value": }\n```\n'
    count = mib * 1024 * 1024 // len(block)
    return "# Broken record\n\n" + block * count


def run(path, out):
    best = None
    for _ in range(RUNS):
        start = time.monotonic()
        try:
            subprocess.run(
                [BIN, "import", "--out", out, "--force", path],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return None
        t = time.monotonic() - start
        best = t if best is None else min(best, t)
    return best


def show(t):
    return "did not finish in %.0f s" % TIMEOUT if t is None else "%.3f s" % t


def main():
    with tempfile.TemporaryDirectory(prefix="pinaudit-bench-import-") as tmp:
        out = os.path.join(tmp, "pins")
        docs = {}
        for name, text in (
            ("small", figures_doc(N)),
            ("large", figures_doc(10 * N)),
            ("broken", broken_doc(BROKEN_MIB)),
        ):
            path = os.path.join(tmp, name + ".md")
            with open(path, "w") as f:
                f.write(text)
            docs[name] = (path, len(text))
        small = run(docs["small"][0], out)
        large = run(docs["large"][0], out)
        broken = run(docs["broken"][0], out)
        print("import of %d figures (%.1f MiB): %s" % (N, docs["small"][1] / 2**20, show(small)))
        print("import of %d figures (%.1f MiB): %s" % (10 * N, docs["large"][1] / 2**20, show(large)))
        if small and large:
            ratio = large / (10 * small)
            print("time(%d) / (10 x time(%d)) = %.2f (1 is linear, 10 quadratic; bound 3)" % (10 * N, N, ratio))
        print("import of %d MiB of broken ```json blocks: %s" % (BROKEN_MIB, show(broken)))
        if large is not None and small and large / (10 * small) > 3:
            sys.exit(1)


if __name__ == "__main__":
    main()
