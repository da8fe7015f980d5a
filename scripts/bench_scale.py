#!/usr/bin/env python3
"""Speed at scale: pinaudit against two plain-git baselines, side by side, in one run.

Run through `scripts/bench-scale.sh` (builds the release binary first). Every size is
an environment variable, so the same script runs small in a minute or at full size:

  BENCH_REPOS=20 BENCH_COMMITS=30 BENCH_DOCS=8 BENCH_LINES=200
  BENCH_RECORDS=200 BENCH_CLAIMS=10 (claims per record; 200 x 10 = 2000 citations)
  BENCH_XS=10           (citation multipliers of further corpora over the same
                         repositories, comma-separated: 10,100 adds the 200,000-citation
                         corpus; empty skips them; BENCH_X=N is the old one-value form)
  BENCH_WIDE=100        (repositories of the wide corpus: the base citations spread
                         over that many repositories; 0 skips it)
  BENCH_MD=1            (the base corpus also as record documents (.md), audited by
                         pinaudit beside the pin files; 0 skips it)
  BENCH_HISTORY=1000    (commits of the history corpus; 0 skips it)
  BENCH_RUNS=3          (runs of every measurement, interleaved tool by tool; the
                         tables give medians)
  BENCH_PERCITE=200     (citations the per-citation shell script is timed on, every
                         k-th one; its time is scaled up to all citations, as the
                         loop's cost is linear by construction; 0 skips it)
  BENCH_JOBS=4          (pinaudit --jobs)
  BENCH_BASELINE_JOBS=1 (repositories the batch baseline works on at once; 1 is the
                         script as usually written, one repository after another)

Corpora are generated with `git fast-import` (deterministic: fixed seed, fixed dates)
and served by `git daemon` on 127.0.0.1. For each corpus it measures

  - pinaudit cold (empty cache), warm (cache filled, nothing changed) and --offline;
  - batch: one `git clone --mirror` (warm: `git fetch`, offline: nothing) and one
    `git cat-file --batch` per repository, hashing and line checks in-process;
  - per-citation: the shell loop people write (clone once, then for every citation
    `git fetch`, `git show REV:PATH | sha256sum`, `sed -n Lp | grep -F VALUE`), warm;

checks that every tool reaches the same verdict for every claim and source hash, and
prints wall time, CPU time (user+sys of the process and its children), the ratios,
bytes fetched (size of the mirrors after the cold run), peak RSS and the machine's
load (1-minute average) next to every figure: the machines are shared, and a ratio
taken under load says less. It also prints what a MiB of fresh memory costs to touch
first, before and after: a report written to a new file takes fresh page-cache pages
(the x10 JSON report is 39 MB), and a virtual machine that hands freed memory back to
its host (free page reporting) pays for each such page again, 0.7-2 ms a MiB on the
machines this was tuned on against about 0.1 on bare metal. The last lines hold each
figure to its goal.
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
from concurrent.futures import ThreadPoolExecutor

BIN = os.environ.get("PINAUDIT_BIN", "target/release/pinaudit")


def env(key, default):
    try:
        return int(os.environ.get(key, default))
    except ValueError:
        return default


def doc_text(repo, doc, commit, lines):
    """Document `doc` of `repo` as of `commit`: a markdown table, a figure per row.

    Row r changes at commit c when (r + doc) % 29 == c % 29, so every commit leaves
    a new blob of every document yet most rows live through the history.
    """
    out = []
    for r in range(lines):
        epoch = (commit - ((r + doc) % 29) + 28) // 29 if commit >= (r + doc) % 29 else 0
        v = (r * 7919 + doc * 104729 + repo * 13 + epoch * 31) % 100000
        out.append(f"| run {repo}-{doc}-{r} | {v // 10}.{v % 9 + 1} tok/s | epoch {epoch} |")
    return "\n".join(out) + "\n"


def value_of(line):
    return line.split("|")[2].strip().split()[0]


def make_repo(path, repo, commits, docs, lines, one_doc_per_commit):
    """A bare repository by fast-import; returns the list of commit ids (oldest first)."""
    subprocess.run(["git", "init", "-q", "--bare", path], check=True)
    stream = []
    t0 = 1_700_000_000
    for c in range(commits):
        stream.append(f"commit refs/heads/main\nmark :{c + 1}\n")
        stream.append(f"committer bench <bench@example.invalid> {t0 + c * 60} +0000\n")
        msg = f"commit {c}\n"
        stream.append(f"data {len(msg)}\n{msg}")
        if c > 0:
            stream.append(f"from :{c}\n")
        changed = range(docs) if (c == 0 or not one_doc_per_commit) else [c % docs]
        for d in changed:
            text = doc_text(repo, d, c if not one_doc_per_commit else c // docs, lines).encode()
            stream.append(f"M 100644 inline docs/doc{d}.md\ndata {len(text)}\n")
            stream.append(text.decode() + "\n")
    data = "".join(stream).encode()
    subprocess.run(["git", "-C", path, "fast-import", "--quiet"], input=data, check=True)
    subprocess.run(["git", "-C", path, "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    subprocess.run(["git", "-C", path, "repack", "-adq"], check=True)
    out = subprocess.run(
        ["git", "-C", path, "rev-list", "--reverse", "main"],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    return out


def blob_text(path, commit, doc):
    return subprocess.run(
        ["git", "-C", path, "show", f"{commit}:docs/doc{doc}.md"],
        check=True, capture_output=True,
    ).stdout


def make_corpus(root, name, repos, commits, docs, lines, records, claims, one_doc, md=False):
    """Repositories under root/srv/bench, records under root/pins-NAME: pin files, or
    with `md` record documents (a fenced JSON block of figures, each citing its line
    by a `#L` anchor) over the same citations."""
    srv = os.path.join(root, "srv", "bench")
    os.makedirs(srv, exist_ok=True)
    rng = random.Random(12)
    history = {}
    for r in range(repos):
        path = os.path.join(srv, f"repo{r}.git")
        if not os.path.exists(path):
            history[r] = make_repo(path, r, commits, docs, lines, one_doc)
        else:
            history[r] = subprocess.run(
                ["git", "-C", path, "rev-list", "--reverse", "main"],
                check=True, capture_output=True, text=True,
            ).stdout.split()
    pins = os.path.join(root, f"pins-{name}")
    os.makedirs(pins, exist_ok=True)
    blobs = {}
    citations = []  # (record, label, repo, commit, doc, line, value, sha)
    for k in range(records):
        r = k % repos
        sources, cl = [], []
        nsrc = max(1, claims // 3)
        seen = set()
        for s in range(nsrc):
            c = history[r][rng.randrange(len(history[r]))]
            d = rng.randrange(docs)
            if md:
                # A record document names a source by its URL: one source per document.
                while (c, d) in seen:
                    c = history[r][rng.randrange(len(history[r]))]
                    d = rng.randrange(docs)
                seen.add((c, d))
            key = (r, c, d)
            if key not in blobs:
                blobs[key] = blob_text(os.path.join(srv, f"repo{r}.git"), c, d)
            sha = hashlib.sha256(blobs[key]).hexdigest()
            if rng.random() < 0.03:
                sha = hashlib.sha256(b"wrong" + sha.encode()).hexdigest()
            sources.append({
                "id": f"s{s}",
                "url": f"https://github.com/bench/repo{r}/blob/{c}/docs/doc{d}.md",
                "sha256": sha,
            })
        for j in range(claims):
            s = j % nsrc
            src = sources[s]
            c = src["url"].split("/blob/")[1].split("/")[0]
            d = int(src["url"].rsplit("doc", 1)[1].split(".")[0])
            text = blobs[(r, c, d)].decode().splitlines()
            line = rng.randrange(len(text)) + 1
            value = value_of(text[line - 1])
            if rng.random() < 0.05:
                value = f"{float(value) + 1000.3:.1f}"
            cl.append({
                "label": f"c{j}",
                "source": src["id"],
                "lines": [line, line],
                "value": float(value),
                "unit": "tok/s",
            })
            citations.append((f"rec{k}", f"c{j}", r, c, d, line, value, src["sha256"],
                              f"{src['url']}@{src['sha256']}"))
        if md:
            figures = [{
                "label": c["label"], "metric": "decode", "value": c["value"], "unit": "tok/s",
                "evidence_url": f"{sources[int(c['source'][1:])]['url']}#L{c['lines'][0]}",
                "source_document_sha256": sources[int(c["source"][1:])]["sha256"],
            } for c in cl]
            with open(os.path.join(pins, f"rec{k}.md"), "w") as f:
                f.write(f"# Bench record rec{k} - Type: Benchmark\n\n```json\n")
                json.dump({"figures": figures}, f, indent=1)
                f.write("\n```\n")
            continue
        pin = {
            "schema": "pinaudit/pins/v1",
            "id": f"rec{k}",
            "sources": sources,
            "claims": cl,
            "artifacts": [],
        }
        with open(os.path.join(pins, f"rec{k}.json"), "w") as f:
            json.dump(pin, f)
    return pins, citations


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
             f"--port={self.port}", "--reuseaddr", "--max-connections=64"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
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
    """Runs cmd; returns (wall s, cpu s, peak RSS KiB, stdout bytes).

    Through /usr/bin/time, so the peak RSS is the command's own (a child forked
    straight from this script would count this script's memory as its own), and
    CPU is the whole tree's (user + sys of the command and every descendant).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r") as usage:
        start = time.perf_counter()
        p = subprocess.Popen(["/usr/bin/time", "-o", usage.name, "-f", "%e %U %S %M"] + cmd,
                             stdout=out, stderr=err)
        p.wait()
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        fields = usage.read().split()[-4:]
    if p.returncode not in (0, 1, 2):
        sys.stderr.write(stderr.decode(errors="replace"))
        raise RuntimeError(f"{cmd[:3]} exited {p.returncode}")
    return wall, float(fields[1]) + float(fields[2]), int(fields[3]), stdout


def pinaudit_cmd(pins, cache, daemon, jobs, offline=False):
    cmd = [BIN, "audit", "--quiet", "--format", "json", "--jobs", str(jobs),
           "--rewrite", f"https://github.com/={daemon}", "--cache", cache, pins]
    if offline:
        cmd.append("--offline")
    return cmd


def pinaudit_verdicts(report):
    claims, hashes = {}, {}
    for rec in json.loads(report)["records"]:
        for c in rec["claims"]:
            claims[(rec["id"], c["label"])] = c["status"] == "verified"
        for s in rec["sources"]:
            sha = s.get("sha256") or {}
            # A source is named by its URL and recorded hash: a pin file's ids and a
            # record document's are not the same, and a record may cite one URL twice.
            url = (s.get("url") or s["id"]).split("#")[0]
            hashes[(rec["id"], f"{url}@{sha.get('expected')}")] = \
                sha.get("expected") == sha.get("actual")
    return claims, hashes


def line_has(line, value):
    return f" {value} " in f" {line} " or f" {value}" in line


def batch(citations_file, mirrors, daemon, mode, jobs):
    """The batch baseline, run as its own process (see main)."""
    with open(citations_file) as f:
        citations = json.load(f)
    by_repo = {}
    for c in citations:
        by_repo.setdefault(c[2], []).append(c)

    def one(r):
        path = os.path.join(mirrors, f"repo{r}.git")
        if mode == "cold":
            subprocess.run(["git", "clone", "-q", "--mirror", f"{daemon}bench/repo{r}.git", path],
                           check=True)
        elif mode == "warm":
            subprocess.run(["git", "-C", path, "fetch", "-q", "--prune"], check=True)
        wanted = sorted({(c[3], c[4]) for c in by_repo[r]})
        req = "".join(f"{c}:docs/doc{d}.md\n" for c, d in wanted).encode()
        out = subprocess.run(["git", "-C", path, "cat-file", "--batch"], input=req,
                             check=True, capture_output=True).stdout
        blobs, i = {}, 0
        for key in wanted:
            nl = out.index(b"\n", i)
            size = int(out[i:nl].split()[2])
            blobs[key] = out[nl + 1: nl + 1 + size]
            i = nl + 1 + size + 1
        sha = {k: hashlib.sha256(v).hexdigest() for k, v in blobs.items()}
        lines = {k: v.decode().splitlines() for k, v in blobs.items()}
        res = []
        for c in by_repo[r]:
            rec, label, _, commit, d, line, value, expected, src = c
            ok_hash = sha[(commit, d)] == expected
            text = lines[(commit, d)]
            ok_claim = line <= len(text) and line_has(text[line - 1], value)
            res.append((rec, label, src, ok_hash, ok_claim))
        return res

    with ThreadPoolExecutor(jobs) as pool:
        results = [x for part in pool.map(one, sorted(by_repo)) for x in part]
    print(json.dumps(results))


PER_CITATION = r"""#!/bin/bash
# The loop people write: one fetch, one show and one grep per citation.
set -u
daemon=$1; dir=$2; list=$3
while read -r rec label repo commit doc line value expected src; do
  clone="$dir/repo$repo"
  if [ -d "$clone" ]; then git -C "$clone" fetch -q; else git clone -q "${daemon}bench/repo$repo.git" "$clone"; fi
  actual=$(git -C "$clone" show "$commit:docs/doc$doc.md" | sha256sum | cut -d' ' -f1)
  h=0; [ "$actual" = "$expected" ] && h=1
  c=0; git -C "$clone" show "$commit:docs/doc$doc.md" | sed -n "${line}p" | grep -qF " $value " && c=1
  echo "$rec $label $src $h $c"
done < "$list"
"""


def verdicts_of(results):
    claims, hashes = {}, {}
    for rec, label, src, ok_hash, ok_claim in results:
        claims[(rec, label)] = bool(ok_claim)
        hashes[(rec, src)] = bool(ok_hash)
    return claims, hashes


def du(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def fresh_memory():
    """Milliseconds to touch a MiB of newly mapped memory for the first time, a
    page at a time (see the module's docs)."""
    import mmap
    n = 64 << 20
    m = mmap.mmap(-1, n)
    start = time.perf_counter()
    for off in range(0, n, mmap.PAGESIZE):
        m[off] = 1
    took = time.perf_counter() - start
    m.close()
    return took * 1000 / (n >> 20)


def cpu_ratio(a, b):
    """a / b as the tables print it; `n/a` when either CPU time is under the
    10 ms that /usr/bin/time resolves (an offline re-check may read as 0.00 s)."""
    if min(a, b) < 0.01:
        return f"{'n/a':>7}"
    return f"{a / b:6.2f}x"


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def run_corpus(root, name, daemon, pins, citations, jobs, percite, runs, baseline=True):
    """Measures one corpus; returns ({(tool, mode): (wall, cpu, rss, load)}, agree).

    Each of `runs` rounds runs pinaudit and the batch baseline one after the
    other in every mode (cold from an empty cache and no mirrors, then warm, then
    offline), so a burst of load on the machine falls on both; the tables give
    the median of each figure over the rounds. `baseline=False` measures pinaudit
    alone (the record-document corpus, whose baseline is the pin-file one)."""
    bjobs = env("BENCH_BASELINE_JOBS", 1)
    cfile = os.path.join(root, f"citations-{name}.json")
    with open(cfile, "w") as f:
        json.dump(citations, f)
    samples = {}
    cache = os.path.join(root, f"cache-{name}")
    mirrors = os.path.join(root, f"mirrors-{name}")
    reports, batch_verdicts = {}, {}
    fetched_pinaudit = fetched_batch = 0
    for _ in range(runs):
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(mirrors, ignore_errors=True)
        os.makedirs(mirrors)
        for mode in ("cold", "warm", "offline"):
            before = load()
            w, c, rss, out = measure(pinaudit_cmd(pins, cache, daemon, jobs, mode == "offline"))
            samples.setdefault(("pinaudit", mode), []).append((w, c, rss, before))
            reports[mode] = pinaudit_verdicts(out)
            if mode == "cold":
                fetched_pinaudit = du(os.path.join(cache, "git"))
            if not baseline:
                continue
            before = load()
            w, c, rss, out = measure([sys.executable, __file__, "batch", cfile, mirrors, daemon,
                                      mode, str(bjobs)])
            samples.setdefault(("batch", mode), []).append((w, c, rss, before))
            batch_verdicts[mode] = verdicts_of(json.loads(out))
            if mode == "cold":
                fetched_batch = du(mirrors)
    rows = {k: tuple(median([x[i] for x in v]) for i in range(4)) for k, v in samples.items()}
    percite_verdicts = None
    if percite:
        script = os.path.join(root, "per-citation.sh")
        with open(script, "w") as f:
            f.write(PER_CITATION)
        lst = os.path.join(root, f"citations-{name}.txt")
        step = max(1, len(citations) // percite)
        sample = citations[::step]
        with open(lst, "w") as f:
            for c in sample:
                f.write(" ".join(str(x) for x in c) + "\n")
        clones = os.path.join(root, f"clones-{name}")
        shutil.rmtree(clones, ignore_errors=True)
        os.makedirs(clones)
        # Clone once (not timed), then time the warm loop: a fetch per citation.
        for r in sorted({c[2] for c in citations}):
            subprocess.run(["git", "clone", "-q", f"{daemon}bench/repo{r}.git",
                            os.path.join(clones, f"repo{r}")], check=True)
        before = load()
        w, c, rss, out = measure(["bash", script, daemon, clones, lst])
        scale = len(citations) / len(sample)
        rows[("per-citation", "warm")] = (w * scale, c * scale, rss, before)
        print(f"   (per-citation: timed on {len(sample)} of {len(citations)} citations, "
              f"scaled by {scale:.1f})")
        percite_verdicts = verdicts_of(
            [(a, b, s, h == "1", v == "1") for a, b, s, h, v in
             (line.split() for line in out.decode().splitlines())])

    # Same verdicts everywhere: the baseline's, computed here when it was not run.
    truth = batch_verdicts.get("offline") or verdicts_of(
        json.loads(subprocess.run([sys.executable, __file__, "batch", cfile, mirrors_for(root),
                                   daemon, "offline", "1"], check=True,
                                  capture_output=True).stdout))
    agree = True
    for label, v in [(f"pinaudit {m}", reports[m]) for m in reports] + \
                    [(f"batch {m}", batch_verdicts[m]) for m in batch_verdicts] + \
                    ([("per-citation", percite_verdicts)] if percite_verdicts else []):
        if label == "per-citation":
            v = ({k: x for k, x in truth[0].items() if k not in v[0]} | v[0],
                 {k: x for k, x in truth[1].items() if k not in v[1]} | v[1])
        if v != truth:
            agree = False
            diff = [k for k in truth[0] if v[0].get(k) != truth[0][k]][:5]
            diffh = [k for k in truth[1] if v[1].get(k) != truth[1][k]][:5]
            print(f"  VERDICTS DIFFER: {label}: claims {diff} hashes {diffh}")
    verified = sum(truth[0].values())
    print(f"\n== {name}: {len(citations)} citations, {len(truth[1])} sources, "
          f"{verified} claims verified; verdicts agree: {'yes' if agree else 'NO'}; "
          f"medians of {runs} run(s)")
    print(f"   bytes fetched: pinaudit {fetched_pinaudit / 1e6:.1f} MB"
          + (f", batch {fetched_batch / 1e6:.1f} MB" if baseline else ""))
    print(f"   {'tool':<14}{'mode':<9}{'wall s':>9}{'cpu s':>9}{'peak RSS MiB':>14}{'load':>7}")
    for (tool, mode), (w, c, rss, ld) in rows.items():
        print(f"   {tool:<14}{mode:<9}{w:>9.3f}{c:>9.3f}{rss / 1024:>14.1f}{ld:>7.2f}")
    if baseline:
        print("   ratios (batch / pinaudit; > 1 = pinaudit faster), wall and cpu:")
        for mode in ("cold", "warm", "offline"):
            pw, pc, _, _ = rows[("pinaudit", mode)]
            bw, bc, _, _ = rows[("batch", mode)]
            print(f"     {mode:<8} wall {bw / pw:6.2f}x   cpu {cpu_ratio(bc, pc)}")
    if ("per-citation", "warm") in rows:
        pw = rows[("pinaudit", "warm")][0]
        print(f"     per-citation script / pinaudit warm: "
              f"{rows[('per-citation', 'warm')][0] / pw:.1f}x")
    return rows, agree


_MIRRORS = {}


def mirrors_for(root):
    """Mirrors of a corpus's repositories for the baseline's verdicts (made once)."""
    return _MIRRORS[root]


class Goals:
    """Each measured figure against its goal, printed together at the end."""

    def __init__(self):
        self.lines = []
        self.met = True

    def at_least(self, what, value, goal, unit="x"):
        ok = value >= goal
        self.met &= ok
        self.lines.append(f"   {'ok  ' if ok else 'MISS'} {what}: {value:.2f}{unit} (goal >= {goal}{unit})")

    def at_most(self, what, value, goal, unit="x"):
        ok = value <= goal
        self.met &= ok
        self.lines.append(f"   {'ok  ' if ok else 'MISS'} {what}: {value:.2f}{unit} (goal <= {goal}{unit})")

    def speedups(self, what, rows, goals):
        for mode, goal in goals.items():
            self.at_least(f"{what} {mode}, batch / pinaudit wall",
                          rows[("batch", mode)][0] / rows[("pinaudit", mode)][0], goal)


def multipliers():
    raw = os.environ.get("BENCH_XS")
    if raw is None:
        raw = os.environ.get("BENCH_X", "10")
    return [int(x) for x in raw.split(",") if x.strip() and int(x) > 0]


def corpus(root, name, runs, jobs, percite, goals_of, repos, commits, docs, lines, records,
           claims, one_doc, extra=None):
    """Makes a corpus in its own tree, serves it, measures it; returns its rows."""
    pins, cites = make_corpus(root, name, repos, commits, docs, lines, records, claims, one_doc)
    d = Daemon(os.path.join(root, "srv"))
    try:
        rows, agree = run_corpus(root, name, d.url(), pins, cites, jobs, percite, runs)
        _MIRRORS[root] = os.path.join(root, f"mirrors-{name}")
        if extra:
            extra(d, rows)
    finally:
        d.stop()
    goals_of(rows)
    return rows, agree


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "batch":
        batch(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
        return
    repos, commits, docs = env("BENCH_REPOS", 20), env("BENCH_COMMITS", 30), env("BENCH_DOCS", 8)
    lines, records, claims = env("BENCH_LINES", 200), env("BENCH_RECORDS", 200), env("BENCH_CLAIMS", 10)
    hist, jobs, runs = env("BENCH_HISTORY", 1000), env("BENCH_JOBS", 4), max(1, env("BENCH_RUNS", 3))
    wide, md = env("BENCH_WIDE", 100), env("BENCH_MD", 1)
    percite = env("BENCH_PERCITE", 200)
    root = tempfile.mkdtemp(prefix="pinaudit-bench-")
    ok = True
    goals = Goals()
    try:
        print(f"machine: {os.cpu_count()} cpus, load {load():.2f}, fresh memory "
              f"{fresh_memory():.2f} ms/MiB; {BIN}; pinaudit --jobs {jobs}; "
              f"batch baseline jobs {env('BENCH_BASELINE_JOBS', 1)}; work dir {root}")
        base_root = os.path.join(root, "base")
        pins, cites = make_corpus(base_root, "base", repos, commits, docs, lines, records,
                                  claims, False)
        d = Daemon(os.path.join(base_root, "srv"))
        try:
            base, agree = run_corpus(base_root, "base", d.url(), pins, cites, jobs, percite, runs)
            _MIRRORS[base_root] = os.path.join(base_root, "mirrors-base")
            ok &= agree
            goals.speedups("base", base, {"cold": 3.5, "warm": 12, "offline": 8})
            if md:
                pins_md, cites_md = make_corpus(base_root, "base-md", repos, commits, docs, lines,
                                                records, claims, False, md=True)
                _, agree = run_corpus(base_root, "base-md", d.url(), pins_md, cites_md, jobs, 0,
                                      runs, baseline=False)
                ok &= agree
            for x in multipliers():
                pins_x, cites_x = make_corpus(base_root, f"x{x}", repos, commits, docs, lines,
                                              records * x, claims, False)
                big, agree = run_corpus(base_root, f"x{x}", d.url(), pins_x, cites_x, jobs, 0,
                                        runs)
                ok &= agree
                print(f"\n== {x}x citations / base, pinaudit (time ratio):")
                for mode in ("cold", "warm", "offline"):
                    print(f"     {mode:<8} wall {big[('pinaudit', mode)][0] / base[('pinaudit', mode)][0]:6.2f}x"
                          f"   cpu {cpu_ratio(big[('pinaudit', mode)][1], base[('pinaudit', mode)][1])}"
                          f"   (batch: wall {big[('batch', mode)][0] / base[('batch', mode)][0]:.2f}x)")
                if x == 10:
                    for mode in ("warm", "offline"):
                        goals.at_most(f"x10 / base pinaudit {mode} wall",
                                      big[("pinaudit", mode)][0] / base[("pinaudit", mode)][0], 2)
                if x >= 100:
                    goals.at_least(f"x{x} warm, batch / pinaudit wall",
                                   big[("batch", "warm")][0] / big[("pinaudit", "warm")][0], 2)
                    goals.at_most(f"x{x} peak RSS of pinaudit (max over modes)",
                                  max(big[("pinaudit", m)][2] for m in ("cold", "warm", "offline"))
                                  / 1024, 400, " MiB")
        finally:
            d.stop()
        if wide > 0:
            wide_root = os.path.join(root, "wide")
            _, agree = corpus(wide_root, f"wide{wide}", runs, jobs, 0, lambda rows: None,
                              wide, commits, docs, lines, records, claims, False)
            ok &= agree
        if hist > 0:
            hist_root = os.path.join(root, "history")
            _, agree = corpus(hist_root, f"history{hist}", runs, jobs, 0,
                              lambda rows: goals.speedups(f"history{hist}", rows,
                                                          {"cold": 1, "warm": 5, "offline": 5}),
                              max(1, repos // 4), hist, docs, lines, max(1, records // 4),
                              claims, True)
            ok &= agree
        print(f"\n== goals (load now {load():.2f}, fresh memory {fresh_memory():.2f} ms/MiB):")
        print("\n".join(goals.lines))
    finally:
        if os.environ.get("BENCH_KEEP") != "1":
            shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
