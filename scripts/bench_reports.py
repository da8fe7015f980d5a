#!/usr/bin/env python3
"""Reports at scale: every `--format` on one large corpus, and many distinct documents.

Run through `scripts/bench-reports.sh` (builds the release binary first). Sizes:

  BENCH_RECORDS=100000  records of the report corpus (two claims each, one source;
                        a quarter of the sources carry a wrong hash and a quarter of
                        the claims a wrong value, so findings grow with the records)
  BENCH_DOCS=200        distinct documents the report corpus cites
  BENCH_DISTINCT=10000,100000
                        sizes of the distinct-documents corpora (each record cites a
                        document no other record cites); the first is the baseline
  BENCH_FORMATS=json,text,markdown,github,sarif

A bare repository made with `git fast-import` (fixed seed) is served by `git daemon`
on 127.0.0.1. Each corpus is audited once online to fill a cache; then each format is
timed `--offline --output FILE`, with wall time and peak RSS (from /usr/bin/time), and
printed as a ratio against JSON (target: within 2x; SARIF peak RSS under 500 MB).
Each distinct-documents corpus is timed online with a cold cache, offline, and the
ratio against the smallest is printed (target: 100k within 12x of 10k).
"""

import hashlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get(
    "PINAUDIT_BIN",
    os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "pinaudit"))


def env(key, default):
    return os.environ.get(key, default)


def doc(i):
    rows = [f"| run {i}-{r} | {(i * 31 + r * 7) % 1000}.{r % 9 + 1} tok/s |" for r in range(8)]
    return ("# Results\n\n| run | rate |\n|---|---|\n" + "\n".join(rows) + "\n").encode()


def make_repo(path, ndocs):
    """A bare repository with documents docs/N/dI.md in one commit; returns its id."""
    subprocess.run(["git", "init", "-q", "--bare", path], check=True)
    parts = [b"commit refs/heads/main\nmark :1\n",
             b"committer bench <bench@example.invalid> 1700000000 +0000\ndata 4\none\n"]
    for i in range(ndocs):
        text = doc(i)
        parts.append(f"M 100644 inline docs/{i // 1000}/d{i}.md\ndata {len(text)}\n".encode())
        parts.append(text + b"\n")
    subprocess.run(["git", "-C", path, "fast-import", "--quiet"], input=b"".join(parts),
                   check=True)
    subprocess.run(["git", "-C", path, "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return subprocess.run(["git", "-C", path, "rev-parse", "main"], check=True,
                          capture_output=True, text=True).stdout.strip()


def make_pins(dirname, commit, records, ndocs, distinct):
    """`records` pin files; record k cites document k (distinct) or k % ndocs."""
    os.makedirs(dirname, exist_ok=True)
    rng = random.Random(7)
    shas = {}
    for k in range(records):
        i = k if distinct else k % ndocs
        if i not in shas:
            shas[i] = hashlib.sha256(doc(i)).hexdigest()
        sha = shas[i] if rng.random() >= 0.25 else hashlib.sha256(b"wrong%d" % k).hexdigest()
        lines = doc(i).decode().splitlines()
        claims = []
        for j in range(2):
            line = 5 + rng.randrange(8)
            value = float(lines[line - 1].split("|")[2].split()[0])
            if rng.random() < 0.25:
                value += 1000.5
            claims.append({"label": f"c{j}", "source": "s", "lines": [line, line],
                           "value": value, "unit": "tok/s"})
        pin = {
            "schema": "pinaudit/pins/v1",
            "id": f"rec{k}",
            "sources": [{
                "id": "s",
                "url": f"https://github.com/bench/repo/blob/{commit}/docs/{i // 1000}/d{i}.md",
                "sha256": sha,
            }],
            "claims": claims,
            "artifacts": [],
        }
        with open(os.path.join(dirname, f"rec{k}.json"), "w") as f:
            json.dump(pin, f)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Daemon:
    def __init__(self, base):
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["git", "daemon", "--export-all", f"--base-path={base}", "--listen=127.0.0.1",
             f"--port={self.port}", "--reuseaddr"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("git daemon did not start")

    def url(self):
        return f"git://127.0.0.1:{self.port}/"

    def stop(self):
        try:
            os.killpg(self.proc.pid, 15)
        except ProcessLookupError:
            pass
        self.proc.wait()


def measure(cmd):
    """Runs cmd; returns (wall s, peak RSS MiB)."""
    with tempfile.NamedTemporaryFile(mode="r") as usage, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-o", usage.name, "-f", "%M"] + cmd,
                           stdout=subprocess.DEVNULL, stderr=err)
        wall = time.perf_counter() - start
        if p.returncode not in (0, 1, 2):
            err.seek(0)
            sys.stderr.write(err.read().decode(errors="replace"))
            raise RuntimeError(f"{cmd[:3]} exited {p.returncode}")
        rss = int(usage.read().split()[-1]) / 1024
    return wall, rss


def audit(pins, cache, daemon, fmt="json", output=None, offline=False):
    cmd = [BIN, "audit", "--quiet", "--format", fmt, "--cache", cache,
           "--rewrite", f"https://github.com/={daemon}", pins]
    if output:
        cmd += ["--output", output]
    if offline:
        cmd.append("--offline")
    return cmd


def main():
    records = int(env("BENCH_RECORDS", "100000"))
    ndocs = int(env("BENCH_DOCS", "200"))
    distinct = [int(x) for x in env("BENCH_DISTINCT", "10000,100000").split(",") if x]
    formats = [f for f in env("BENCH_FORMATS", "json,text,markdown,github,sarif").split(",") if f]
    root = tempfile.mkdtemp(prefix="pinaudit-bench-reports-")
    ok = True
    try:
        print(f"machine: {os.cpu_count()} cpus; {BIN}; work dir {root}")
        srv = os.path.join(root, "srv", "bench")
        os.makedirs(srv)
        commit = make_repo(os.path.join(srv, "repo.git"), max([ndocs] + distinct))
        d = Daemon(os.path.join(root, "srv"))
        try:
            if records > 0 and formats:
                pins = os.path.join(root, "pins-report")
                cache = os.path.join(root, "cache-report")
                make_pins(pins, commit, records, ndocs, False)
                wall, rss = measure(audit(pins, cache, d.url()))
                print(f"\n== {records} records citing {ndocs} documents (fill the cache: "
                      f"{wall:.1f} s, {rss:.0f} MiB)")
                times = {}
                for fmt in formats:
                    out = os.path.join(root, f"report.{fmt}")
                    times[fmt] = measure(audit(pins, cache, d.url(), fmt, out, True))
                    size = os.path.getsize(out) / 2**20
                    if fmt == "json":
                        # A corpus nothing was checked in measures nothing.
                        with open(out) as f:
                            summary = json.load(f)["summary"]
                        if summary["unchecked_sources"]:
                            print(f"   error: {summary['unchecked_sources']} source(s) unchecked")
                            ok = False
                    print(f"   {fmt:<9} {times[fmt][0]:7.2f} s  peak {times[fmt][1]:7.0f} MiB"
                          f"  ({size:.0f} MiB report)")
                if "json" in times:
                    print("   ratio to json (target <= 2x; sarif peak < 500 MiB):")
                    for fmt in formats:
                        r = times[fmt][0] / max(times["json"][0], 1e-9)
                        ok &= r <= 2.0
                        print(f"     {fmt:<9} {r:5.2f}x")
                if "sarif" in times:
                    ok &= times["sarif"][1] < 500
            base = None
            for n in distinct:
                pins = os.path.join(root, f"pins-distinct{n}")
                cache = os.path.join(root, f"cache-distinct{n}")
                make_pins(pins, commit, n, 0, True)
                cold = measure(audit(pins, cache, d.url()))
                offline = measure(audit(pins, cache, d.url(), offline=True))
                print(f"\n== {n} distinct documents: cold {cold[0]:.2f} s ({cold[1]:.0f} MiB),"
                      f" offline {offline[0]:.2f} s ({offline[1]:.0f} MiB)")
                if base is None:
                    base = (n, cold[0], offline[0])
                else:
                    rc, ro = cold[0] / max(base[1], 1e-9), offline[0] / max(base[2], 1e-9)
                    print(f"   against {base[0]}: cold {rc:.2f}x, offline {ro:.2f}x "
                          f"(records {n / base[0]:.0f}x; target <= 12x at 10x)")
                    ok &= rc <= 1.2 * n / base[0]
        finally:
            d.stop()
    finally:
        if os.environ.get("BENCH_KEEP") != "1":
            shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
