"""The shared cache under concurrency: threads, processes, killed clones and lock timeouts."""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from okfx.sources import GitSource, open_source, parse_source
from okfx.sources.spec import git_cache_key

REAL_GIT = shutil.which("git") or "git"
FILES = {f"okf/kb/c{i:03}.md": f"---\ntype: Note\n---\nconcept {i}\n" for i in range(80)}


def git(*args: str, cwd: Path | None = None) -> None:
    command = [REAL_GIT, "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"]
    subprocess.run([*command, *args], cwd=cwd, check=True, capture_output=True)


def tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty.gitconfig"
    empty.write_text("", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.org")


@pytest.fixture
def url(tmp_path: Path) -> str:
    work, bare = tmp_path / "work", tmp_path / "remote.git"
    git("init", "-q", str(work))
    for name, text in FILES.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "first", cwd=work)
    git("clone", "-q", "--bare", str(work), str(bare))
    return bare.as_uri()


def make_wrapper(bin_dir: Path, body: str) -> str:
    """A ``git`` script first on a PATH string; ``body`` runs before the real git."""
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    (bin_dir / "git").chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def clones(log: Path) -> int:
    return sum(" clone " in line for line in log.read_text(encoding="utf-8").splitlines())


def entry_dir(cache: Path, url: str) -> Path:
    source = parse_source(url)
    assert isinstance(source, GitSource)
    return cache / "git" / git_cache_key(source)


def test_threads_opening_the_same_source_clone_once_and_all_see_the_tree(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "git.log"
    path = make_wrapper(tmp_path / "bin", f'echo "$*" >> "{log}"\nexec "{REAL_GIT}" "$@"')
    monkeypatch.setenv("PATH", path)
    log.write_text("", encoding="utf-8")
    start = threading.Barrier(8)

    def load(_: int) -> dict[str, str]:
        start.wait()
        with open_source(url, cache_dir=tmp_path / "cache") as (root, _name):
            return tree(root)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(load, range(8)))
    assert all(result == FILES for result in results)
    assert clones(log) == 1


WORKER = """
import json, os, sys
from okfx.sources import open_source
ready, go, url, cache = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
os.write(ready, b"r")
os.read(go, 1)  # every worker is released at once
with open_source(url, cache_dir=cache, timeout=60) as (root, name):
    texts = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(root.rglob("*")) if p.is_file()}
print(json.dumps({"name": name, "texts": texts}))
"""


def test_processes_opening_the_same_source_at_once_all_succeed_with_one_clone(
    url: str, tmp_path: Path
) -> None:
    log = tmp_path / "git.log"
    log.write_text("", encoding="utf-8")
    env = dict(os.environ)
    env["PATH"] = make_wrapper(tmp_path / "bin", f'echo "$*" >> "{log}"\nexec "{REAL_GIT}" "$@"')
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ready_w), str(go_r), url, str(tmp_path / "c")],
            env=env,
            pass_fds=(ready_w, go_r),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(5)
    ]
    os.close(ready_w)
    os.close(go_r)
    arrived = b""
    while len(arrived) < len(workers):
        chunk = os.read(ready_r, 16)
        assert chunk, "a worker exited before reaching the start line"
        arrived += chunk
    os.write(go_w, b"g" * len(workers))
    os.close(go_w)
    os.close(ready_r)
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        assert json.loads(out) == {"name": "remote", "texts": FILES}
    assert clones(log) == 1


KILLED = """
import sys
from okfx.sources import open_source
with open_source(sys.argv[1], cache_dir=sys.argv[2], timeout=60):
    pass
"""


def test_a_clone_killed_midway_leaves_nothing_trusted_and_the_next_load_retries(
    url: str, tmp_path: Path
) -> None:
    cache, fifo = tmp_path / "cache", tmp_path / "cloned.fifo"
    os.mkfifo(fifo)
    # The fake git finishes the real clone into the temp dir, reports, then hangs forever,
    # so the worker is killed after the clone exists but before it is published.
    body = f'"{REAL_GIT}" "$@" || exit 1\necho $$ > "{fifo}"\nexec sleep 600'
    env = dict(os.environ, PATH=make_wrapper(tmp_path / "bin", body))
    worker = subprocess.Popen(
        [sys.executable, "-c", KILLED, url, str(cache)], env=env, stderr=subprocess.PIPE
    )
    # O_RDWR keeps the open from blocking; select bounds the wait if the worker fails.
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        readable, _, _ = select.select([reader], [], [], 60)
        assert readable, "the fake git never reported a finished clone"
        hung_git = int(os.read(reader, 64).decode().split()[0])
    finally:
        os.close(reader)
        worker.kill()
        worker.communicate()
    os.kill(hung_git, signal.SIGKILL)

    final = entry_dir(cache, url)
    leftovers = list(final.parent.glob(f"{final.name}.tmp-*"))
    assert not final.exists()
    # partial work was there: the clone (its checkout, a second git command, is not run)
    assert leftovers and (leftovers[0] / "tree" / ".git").is_dir()
    with open_source(url, cache_dir=cache) as (root, _):
        assert tree(root) == FILES
    assert not any(leftover.exists() for leftover in leftovers)


def test_stale_temp_dirs_lock_files_and_unmarked_entries_are_not_trusted(
    url: str, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    final = entry_dir(cache, url)
    (final.parent / f"{final.name}.tmp-dead" / "tree").mkdir(parents=True)
    (final / "tree" / "okf" / "kb").mkdir(parents=True)
    (final / "tree" / "okf" / "kb" / "c000.md").write_text("half written", encoding="utf-8")
    (final.parent / f"{final.name}.lock").write_text("", encoding="utf-8")
    with open_source(url, cache_dir=cache) as (root, _):
        assert tree(root) == FILES
    assert not (final.parent / f"{final.name}.tmp-dead").exists()


def test_lock_wait_times_out_while_another_thread_holds_the_source(
    url: str, tmp_path: Path
) -> None:
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with open_source(url, cache_dir=tmp_path / "c"):
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(30)
        with pytest.raises(TimeoutError, match="another thread"):
            with open_source(url, cache_dir=tmp_path / "c", timeout=0.1):
                pass
    finally:
        release.set()
        holder.join()
    with open_source(url, cache_dir=tmp_path / "c", timeout=5) as (root, _):
        assert tree(root) == FILES


def test_lock_wait_times_out_while_another_process_holds_the_file_lock(
    url: str, tmp_path: Path
) -> None:
    cache = tmp_path / "c"
    final = entry_dir(cache, url)
    final.parent.mkdir(parents=True)
    # A second open file description conflicts like another process would.
    fd = os.open(final.parent / f"{final.name}.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(TimeoutError, match="another process"):
            with open_source(url, cache_dir=cache, timeout=0.1):
                pass
    finally:
        os.close(fd)
    with open_source(url, cache_dir=cache) as (root, _):
        assert tree(root) == FILES


def test_the_same_thread_may_reopen_a_source_it_holds_but_not_refresh_it(
    url: str, tmp_path: Path
) -> None:
    with open_source(url, cache_dir=tmp_path / "c", timeout=1) as (outer, _):
        with open_source(GitSource(url, subdir="okf/kb"), cache_dir=tmp_path / "c") as (inner, _):
            assert inner == outer / "okf" / "kb"
        with pytest.raises(RuntimeError, match="while this thread has it open"):
            with open_source(url, cache_dir=tmp_path / "c", refresh=True):
                pass
        assert tree(outer) == FILES
