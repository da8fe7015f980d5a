#!/usr/bin/env python3
"""Peak memory of `pinaudit audit` against document size (issues 12, 13).

Run through `scripts/bench-memory.sh` (builds the release binary first). Each case
writes one repository whose document is generated line by line and piped into
`git hash-object -w --stdin` (never held in memory here), serves it with
`git daemon` on loopback, audits a pin file citing it with a cold cache, then
again offline with the cache's stores, and prints the document's size, each run's
wall time and peak RSS (the child's own ru_maxrss from os.wait4), and verdicts:

  - `lines`: BENCH_LINES (default 5,000,000) table rows (~150 MB), right hash,
    a figure on its cited line and one a line below its citation;
  - `1gb`: BENCH_GB_MIB (default 1024) MiB of rows, recorded with the hash of
    its CRLF checkout (a `hash-mismatch` naming the `crlf` variant);
  - `lines+head`: the `lines` document and a head commit that corrects the cited
    figure (drift against a streamed head). The server deltas the two versions
    (they are under git's 512 MiB core.bigFileThreshold): see README.

BENCH_CASES (default `lines,1gb,lines+head`) picks cases.

It exits 1 when a run's peak RSS is over BENCH_MAX_RSS_MIB (default 100).
"""

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(os.environ.get("PINAUDIT_BIN", "target/release/pinaudit"))
LINES = int(os.environ.get("BENCH_LINES", "5000000"))
GB_MIB = int(os.environ.get("BENCH_GB_MIB", "1024"))
MAX_RSS_MIB = float(os.environ.get("BENCH_MAX_RSS_MIB", "100"))
NAME = "acme/bench"
T0 = 1700000000


def row(i):
    return b"| step %09d | %03d ms | ok |\n" % (i, i % 997)


DECODE = b"| decode | 2.9 tok/s |\n"
PREFILL = b"| prefill | 812 tok/s |\n"


def lines_doc(n, decode, prefill, head=False):
    """The document as chunks: rows, the decode figure at `decode`, prefill at `prefill`."""
    buf = []
    if head:
        buf.append(b"Updated.\n")
    buf.append(b"# Benchmark log\n")
    for i in range(2, n + 1):
        if i == decode:
            buf.append(b"| decode | 3.4 tok/s |\n" if head else DECODE)
        elif i == prefill:
            buf.append(PREFILL)
        else:
            buf.append(row(i))
        if len(buf) >= 65536:
            yield b"".join(buf)
            buf = []
    yield b"".join(buf)


def git(repo, *args, data=None):
    return subprocess.run(
        ["git", *args], cwd=repo, input=data, check=True, capture_output=True
    ).stdout


def write_blob(repo, chunks):
    """Pipes the chunks into `git hash-object -w --stdin`; returns (blob, sha256, crlf sha256, size)."""
    p = subprocess.Popen(
        ["git", "hash-object", "-w", "--stdin"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    sha, crlf, size = hashlib.sha256(), hashlib.sha256(), 0
    for c in chunks:
        p.stdin.write(c)
        sha.update(c)
        crlf.update(c.replace(b"\n", b"\r\n"))
        size += len(c)
    p.stdin.close()
    blob = p.stdout.read().decode().strip()
    p.wait()
    return blob, sha.hexdigest(), crlf.hexdigest(), size


def commit(repo, blob, parent, t, msg):
    tree = git(repo, "mktree", data=("100644 blob %s\tLOG.md\n" % blob).encode()).decode().strip()
    args = ["commit-tree", tree, "-m", msg] + (["-p", parent] if parent else [])
    env = dict(os.environ, GIT_AUTHOR_DATE="%d +0000" % t, GIT_COMMITTER_DATE="%d +0000" % t,
               GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    c = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True).stdout.decode().strip()
    git(repo, "update-ref", "refs/heads/main", c)
    return c


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pin(commit_id, sha256, claims):
    url = "https://github.com/%s/blob/%s/LOG.md" % (NAME, commit_id)
    return {
        "schema": "pinaudit/pins/v1",
        "id": "big",
        "title": "large document",
        "sources": [{"id": "log", "url": url, "repository": "https://github.com/" + NAME,
                     "revision": commit_id, "path": "LOG.md", "sha256": sha256}],
        "claims": [{"label": label, "source": "log", "lines": [line, line], "value": value,
                    "unit": "tokens/s", "metric": "rate", "url": "%s#L%d" % (url, line),
                    "correct": None, "total": None} for (label, line, value) in claims],
        "artifacts": [],
    }


def audit(work, args):
    out = open(os.path.join(work, "report.json"), "wb")
    err = open(os.path.join(work, "stderr.txt"), "wb")
    env = dict(os.environ, HOME=work, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    env.pop("PINAUDIT_CACHE", None)
    start = time.monotonic()
    p = subprocess.Popen([BIN, "audit", "--cache", "cache", "--format", "json", "--quiet", *args, "pins"],
                         cwd=work, stdout=out, stderr=err, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    took = time.monotonic() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    out.close()
    err.close()
    report = json.load(open(os.path.join(work, "report.json")))
    return took, usage.ru_maxrss / 1024.0, p.returncode, report


def verdicts(report):
    rec = report["records"][0]
    src = rec["sources"][0]
    parts = ["source " + src["status"]]
    for c in rec["claims"]:
        parts.append("%s %s@%s" % (c["label"], c["status"], c["found_line"]))
    for f in report["findings"]:
        ev = f.get("evidence") or {}
        extra = " (%s)" % ev["matching_variant"] if ev.get("matching_variant") else ""
        parts.append(f["code"] + extra)
    return ", ".join(parts)


def case(name, base, n_lines=None, mib=None, wrong_hash=False, head=False):
    root = tempfile.mkdtemp(prefix="pinaudit-mem-", dir=base)
    repo = os.path.join(root, "forge", NAME + ".git")
    os.makedirs(repo)
    git(repo, "init", "--bare", "-q")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    if mib is not None:
        n_lines = mib * 1024 * 1024 // len(row(1))
    decode, prefill = n_lines * 3 // 5, n_lines - 2
    blob, sha, crlf, size = write_blob(repo, lines_doc(n_lines, decode, prefill))
    c = commit(repo, blob, None, T0, "add the log")
    if head:
        hblob, _, _, _ = write_blob(repo, lines_doc(n_lines, decode, prefill, head=True))
        commit(repo, hblob, c, T0 + 60, "correct decode")
    work = os.path.join(root, "work")
    os.makedirs(os.path.join(work, "pins"))
    claims = [("decode", decode, 2.9), ("prefill", prefill - 1, 812)]
    with open(os.path.join(work, "pins", "big.json"), "w") as f:
        json.dump(pin(c, crlf if wrong_hash else sha, claims), f)
    port = free_port()
    daemon = subprocess.Popen(
        ["git", "daemon", "--export-all", "--base-path=" + os.path.join(root, "forge"),
         "--listen=127.0.0.1", "--port=%d" % port, "--reuseaddr"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        rewrite = "https://github.com/=git://127.0.0.1:%d/" % port
        cold = audit(work, ["--rewrite", rewrite])
        # Offline with the cache's stores removed: every document read again.
        for store in ("blobs.store", "variants.store", "checks.store", "drift.store"):
            try:
                os.remove(os.path.join(work, "cache", store))
            except FileNotFoundError:
                pass
        offline = audit(work, ["--offline"])
    finally:
        os.killpg(daemon.pid, 15)
        daemon.wait()
    rows = []
    for mode, (took, rss, code, report) in (("cold", cold), ("offline, no stores", offline)):
        rows.append((name, size, n_lines, mode, took, rss, code, verdicts(report)))
    shutil.rmtree(root, ignore_errors=True)
    return rows


def main():
    base = os.environ.get("BENCH_TMP") or None
    print("pinaudit %s" % subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.strip())
    print("| case | document | lines | run | wall | peak RSS | exit | verdicts |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 0.0
    wanted = os.environ.get("BENCH_CASES", "lines,1gb,lines+head").split(",")
    for name, kw in (("lines", dict(n_lines=LINES)),
                     ("1gb", dict(mib=GB_MIB, wrong_hash=True)),
                     ("lines+head", dict(n_lines=LINES, head=True))):
        if name not in wanted:
            continue
        for (n, size, lines, mode, took, rss, code, v) in case(name, base, **kw):
            worst = max(worst, rss)
            print("| %s | %.0f MiB | %d | %s | %.1f s | %.1f MiB | %d | %s |" % (
                n, size / 1048576.0, lines, mode, took, rss, code, v), flush=True)
    print("worst peak RSS %.1f MiB (bound %.0f MiB)" % (worst, MAX_RSS_MIB))
    return 1 if worst > MAX_RSS_MIB else 0


if __name__ == "__main__":
    sys.exit(main())
