"""The workers' supervisor (okfx.adapters.workers) with a toy server: which process loads,
which keeps the loaded state, and how generations replace each other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import PROJECT_ROOT

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or not Path("/proc/self/task").is_dir(),
    reason="pre-forked workers need os.fork; the test reads /proc",
)

BALLAST_MB = 120

# A supervisor whose load reads the version from a file (or exits 3 while a "fail" file
# exists) and holds a ballast of BALLAST_MB written pages, and whose workers each write
# the version to a file of their own, then wait for a signal.
_SUPERVISOR = f"""
import os, signal, socket, sys
from pathlib import Path
import okfx.adapters.workers as workers

folder = Path(sys.argv[1])
if sys.argv[2] == "in-process":
    workers._subreaper = lambda on: False

def load(reason):
    if (folder / "fail").exists():
        raise SystemExit(3)
    ballast = b"x" * ({BALLAST_MB} << 20)
    return (folder / "version").read_text(), ballast

def serve(app, sock):
    (folder / f"served-{{os.getpid()}}").write_text(app[0])
    signal.pause()

sock = socket.socket()
sys.exit(workers.serve_workers(load, sock, 2, serve=serve, say=print))
"""


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
        line = next(line for line in handle if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


class Supervised:
    def __init__(self, folder: Path, mode: str) -> None:
        self.folder = folder
        env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "src")}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SUPERVISOR, str(folder), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.printed: str | None = None

    def children(self) -> set[int]:
        pid = self.process.pid
        with open(f"/proc/{pid}/task/{pid}/children", encoding="utf-8") as handle:
            return {int(child) for child in handle.read().split()}

    def serving(self, version: str, old: frozenset[int] = frozenset()) -> set[int]:
        """The two workers, once both serve ``version`` as the supervisor's only children
        (none of ``old``)."""
        end = time.monotonic() + 60
        while time.monotonic() < end:
            assert self.process.poll() is None, self.output()
            found = self.children()
            said = {pid: self.said(pid) for pid in found}
            if len(found) == 2 and not found & old and all(v == version for v in said.values()):
                return found
            time.sleep(0.05)
        raise AssertionError(f"the workers never served {version!r}: {self.output()}")

    def said(self, pid: int) -> str | None:
        try:
            return (self.folder / f"served-{pid}").read_text().split()[0]
        except (OSError, IndexError):
            return None

    def rss_mb(self) -> float:
        return _rss_mb(self.process.pid)

    def output(self) -> str:
        """What the supervisor printed, once it ended."""
        if self.process.poll() is None:
            return "(still running)"
        if self.printed is None:
            assert self.process.stdout is not None
            self.printed = self.process.stdout.read()
            self.process.stdout.close()
        return self.printed

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(30)
        self.output()
        return status


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "version").write_text("v1", encoding="utf-8")
    return tmp_path


@pytest.fixture(params=["loader", "in-process"])
def supervised(request: pytest.FixtureRequest, folder: Path) -> Iterator[Supervised]:
    if request.param == "loader" and not sys.platform.startswith("linux"):
        pytest.skip("a loader process needs Linux's child subreaper")
    running = Supervised(folder, request.param)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait(30)
        running.output()


def test_reloads_and_deaths_start_a_whole_new_generation(
    supervised: Supervised, folder: Path
) -> None:
    first = supervised.serving("v1")

    (folder / "version").write_text("v2", encoding="utf-8")
    os.kill(supervised.process.pid, signal.SIGHUP)
    second = supervised.serving("v2", old=frozenset(first))
    assert not any(Path(f"/proc/{pid}").exists() for pid in first)  # stopped, and collected

    (folder / "fail").write_text("", encoding="utf-8")  # a reload that fails
    os.kill(supervised.process.pid, signal.SIGHUP)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and supervised.children() != second:
        time.sleep(0.05)
    time.sleep(0.5)
    assert supervised.children() == second  # the old workers keep serving

    (folder / "fail").unlink()
    os.kill(min(second), signal.SIGKILL)  # a worker dies: both are replaced
    third = supervised.serving("v2", old=frozenset(second))
    # a SIGHUP sent to a worker (what `pgrep -f 'okfx serve'` finds on Linux) is passed
    # on to the supervisor: a reload (docs QA: it was ignored)
    (folder / "version").write_text("v3", encoding="utf-8")
    os.kill(max(third), signal.SIGHUP)
    third = supervised.serving("v3", old=frozenset(third))
    assert supervised.stop() == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in third)
    said = supervised.output()
    assert "the reload failed; the workers keep the state they have" in said
    assert f"worker {min(second)} ended (signal 9)" in said


def test_only_the_workers_keep_the_loaded_state(folder: Path) -> None:
    """With a loader, the supervisor never holds the state (a page both workers copied
    would stay in it); loading in its own process, it does."""
    sizes = {}
    modes = ["loader", "in-process"] if sys.platform.startswith("linux") else ["in-process"]
    for mode in modes:
        running = Supervised(folder, mode)
        try:
            workers = running.serving("v1")
            sizes[mode] = running.rss_mb()
            assert all(_rss_mb(pid) > BALLAST_MB for pid in workers)  # they have it
        finally:
            assert running.stop() == 0
    assert sizes["in-process"] > BALLAST_MB
    if "loader" in sizes:
        assert sizes["loader"] < BALLAST_MB / 2


@pytest.mark.parametrize("mode", ["loader", "in-process"])
def test_a_first_load_that_fails_is_the_exit_status(folder: Path, mode: str) -> None:
    (folder / "fail").write_text("", encoding="utf-8")
    running = Supervised(folder, mode)
    status = running.process.wait(60)
    assert status == 3, running.output()
    assert "the workers could not start (exit status 3)" in running.output()
