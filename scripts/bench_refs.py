"""See bench-refs.sh: a forge advertising many branches, cold and re-checked."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

REFS = int(os.environ.get("BENCH_REFS", "300000"))
BIN = os.path.abspath("target/release/pinaudit")
README = "# Decode benchmark\n\n| metric | value |\n|---|---|\n| decode | 2.9 tok/s |\n"


def git(*args, cwd=None, env=None, stdin=None):
    return subprocess.run(["git", *args], cwd=cwd, env=env, input=stdin,
                          check=True, capture_output=True, text=True).stdout.strip()


def du(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            total += os.lstat(os.path.join(root, f)).st_blocks * 512
    return total


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    base = tempfile.mkdtemp()
    repo = os.path.join(base, "forge/acme/bench.git")
    work = os.path.join(base, "work")
    os.makedirs(work)
    git("init", "-q", "--bare", repo)
    env = dict(os.environ, GIT_AUTHOR_DATE="1700000000 +0000", GIT_COMMITTER_DATE="1700000000 +0000",
               GIT_AUTHOR_NAME="F", GIT_AUTHOR_EMAIL="f@x", GIT_COMMITTER_NAME="F", GIT_COMMITTER_EMAIL="f@x")
    blob = git("--git-dir", repo, "hash-object", "-w", "--stdin", stdin=README)
    tree = git("--git-dir", repo, "mktree", stdin=f"100644 blob {blob}\tREADME.md\n")
    commit = git("--git-dir", repo, "commit-tree", tree, "-m", "add results", env=env)
    names = sorted([f"refs/heads/b-{i:06d}" for i in range(REFS)] + ["refs/heads/main"])
    with open(os.path.join(repo, "packed-refs"), "w") as f:
        f.write("# pack-refs with: peeled fully-peeled sorted \n")
        for n in names:
            f.write(f"{commit} {n}\n")
    git("--git-dir", repo, "symbolic-ref", "HEAD", "refs/heads/main")
    os.makedirs(os.path.join(work, "pins"))
    pin = {"schema": "pinaudit/pins/v1", "id": "refs", "title": "many refs",
           "sources": [{"id": "readme", "url": f"https://github.com/acme/bench/blob/{commit}/README.md"}],
           "claims": [{"label": "decode", "source": "readme", "lines": [5, 5], "value": 2.9,
                       "unit": "tok/s"}], "artifacts": []}
    with open(os.path.join(work, "pins/refs.json"), "w") as f:
        json.dump(pin, f)
    port = free_port()
    daemon = subprocess.Popen(["git", "daemon", "--export-all", f"--base-path={base}/forge",
                               "--listen=127.0.0.1", f"--port={port}", "--reuseaddr"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1)
        url = f"git://127.0.0.1:{port}/acme/bench.git"
        t = time.monotonic()
        git("clone", "-q", "--mirror", url, os.path.join(base, "git-mirror"))
        git_cold = time.monotonic() - t
        t = time.monotonic()
        git("--git-dir", os.path.join(base, "git-mirror"), "fetch", "-q", "--prune")
        git_again = time.monotonic() - t
        args = [BIN, "audit", "--cache", "cache", "--format", "json", "--max-refs-mib", "64",
                "--rewrite", f"https://github.com/=git://127.0.0.1:{port}/", "pins"]
        times = []
        for _ in range(2):
            t = time.monotonic()
            r = subprocess.run(args, cwd=work, capture_output=True, text=True)
            times.append(time.monotonic() - t)
            verdict = json.loads(r.stdout)["records"][0]["claims"][0]["status"]
            if verdict != "verified":
                print(r.stderr, file=sys.stderr)
                sys.exit(f"the claim is {verdict}")
        mirror = os.path.join(work, "cache/git/github.com/acme/bench.git")
        size = du(mirror)
        loose = sum(len(fs) for _r, _d, fs in os.walk(os.path.join(mirror, "refs")))
        print(f"{REFS} advertised branches")
        print(f"cold:     pinaudit {times[0]:.2f} s, git clone --mirror {git_cold:.2f} s "
              f"(ratio {times[0] / git_cold:.2f})")
        print(f"re-check: pinaudit {times[1]:.2f} s, git fetch --prune {git_again:.2f} s "
              f"(ratio {times[1] / max(git_again, 1e-3):.2f})")
        print(f"mirror on disk: pinaudit {size / 1e6:.1f} MB ({loose} loose ref files), "
              f"git {du(os.path.join(base, 'git-mirror')) / 1e6:.1f} MB")
        ok = size < 50e6 and times[0] < 60 and times[1] < 5
        sys.exit(0 if ok else 1)
    finally:
        daemon.terminate()
        daemon.wait()
        shutil.rmtree(base, ignore_errors=True)


main()
