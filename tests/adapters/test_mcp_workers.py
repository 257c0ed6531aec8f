"""okfx serve --workers N: pre-forked processes on one socket, a reload that reaches them all."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from conftest import PROJECT_ROOT, MakeBundle, concept, resident_kb  # noqa: E402
from okfx import Bundle  # noqa: E402
from okfx.bundle import state as state_module  # noqa: E402
from okfx.bundle.state import RACY_SECONDS  # noqa: E402

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or not Path("/proc/self/task").is_dir(),
    reason="pre-forked workers need os.fork; the test reads /proc",
)


class Served:
    """A running ``okfx serve --workers``: its URL, its stderr lines, its workers."""

    def __init__(
        self, bundle: Path, workers: int, token: str | None = None, extra: tuple[str, ...] = ()
    ) -> None:
        command = [sys.executable, "-m", "okfx", "serve", str(bundle), "--transport", "http"]
        command += ["--port", "0", "--workers", str(workers), *extra]
        if token is not None:  # read from stdin, which only the first process can read
            command += ["--token-file", "-"]
        env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "src")}
        env.pop("OKFX_TOKEN", None)
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(f"{token}\n" if token else "")
        self.process.stdin.close()
        self.token = token
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.url = self.wait_for("http://127.0.0.1:").split()[-1]

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line)

    def wait_for(self, text: str, timeout: float = 120) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                assert self.process.poll() is None, "okfx serve exited"
                continue
            if text in line:
                return line.strip()
        raise AssertionError(f"okfx serve never printed {text!r}")

    def workers(self) -> set[int]:
        pid = self.process.pid
        with open(f"/proc/{pid}/task/{pid}/children", encoding="utf-8") as handle:
            return {int(child) for child in handle.read().split()}

    def settle(
        self, count: int, old: frozenset[int] = frozenset(), timeout: float = 60
    ) -> set[int]:
        """The workers once there are ``count`` of them and none of ``old``."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = self.workers()
            if len(found) == count and not found & old:
                return found
            time.sleep(0.1)
        raise AssertionError(f"workers never settled at {count}: {self.workers()}")

    def call(self, tool: str, *, token: str | None = "", **arguments: Any) -> dict[str, Any]:
        """The tool's structured answer (``token``: the bearer token to send, by default
        the server's)."""
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        request = urllib.request.Request(
            self.url,
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        sent = self.token if token == "" else token
        if sent:
            request.add_header("Authorization", f"Bearer {sent}")
        with urllib.request.urlopen(request, timeout=60) as response:  # a new connection
            result: dict[str, Any] = json.loads(response.read())["result"]
        return result["structuredContent"]  # type: ignore[no-any-return]

    @contextmanager
    def only(self, worker: int, others: set[int]) -> Iterator[None]:
        """Stop every other worker meanwhile, so ``worker`` takes the new connections."""
        stopped = others - {worker}
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(30)
        self.reader.join(10)
        assert self.process.stderr is not None
        self.process.stderr.close()
        return status


def _answered_by_each(served: Served, workers: set[int], path: str) -> list[str]:
    titles = []
    for worker in sorted(workers):
        with served.only(worker, workers):
            titles.append(served.call("read_concept", path=path)["title"])
    return titles


def test_every_worker_answers_and_a_reload_reaches_them_all(make_bundle: MakeBundle) -> None:
    root = make_bundle({"a/first.md": concept(title="First")})
    served = Served(root, workers=2)
    try:
        workers = served.settle(2)
        assert _answered_by_each(served, workers, "a/first") == ["First", "First"]
        assert served.call("read_concept", path="a/second")["error"]["code"] == "not_found"

        (root / "a" / "second.md").write_text(concept(title="Second"), encoding="utf-8")
        os.kill(served.process.pid, signal.SIGHUP)
        served.wait_for("okfx: reloaded")
        fresh = served.settle(2, old=frozenset(workers))
        assert _answered_by_each(served, fresh, "a/second") == ["Second", "Second"]

        # A worker dies: a new generation replaces both, so that they share one state.
        os.kill(min(fresh), signal.SIGKILL)
        served.wait_for(f"worker {min(fresh)} ended (signal 9)")
        served.wait_for("okfx: 2 new workers replace the old ones")
        replaced = served.settle(2, old=frozenset(fresh))
        assert _answered_by_each(served, replaced, "a/first") == ["First", "First"]
    finally:
        status = served.stop()
    assert status == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers | fresh | replaced)


def test_every_generation_takes_the_token_the_first_process_read(
    make_bundle: MakeBundle,
) -> None:
    """--token-file - reads stdin once; the loaders of later generations (which run the
    command line again) get the token from the supervisor, not from stdin."""
    import secrets
    import urllib.error

    root = make_bundle({"a/first.md": concept(title="First")})
    served = Served(root, workers=2, token=secrets.token_urlsafe(32))
    try:
        first = served.settle(2)
        assert served.call("read_concept", path="a/first")["title"] == "First"
        os.kill(served.process.pid, signal.SIGHUP)
        served.wait_for("okfx: reloaded")
        fresh = served.settle(2, old=frozenset(first))
        assert _answered_by_each(served, fresh, "a/first") == ["First", "First"]
        with pytest.raises(urllib.error.HTTPError) as refused:
            served.call("read_concept", path="a/first", token="not-the-token")
        refused.value.close()
        assert refused.value.code == 401
    finally:
        status = served.stop()
    assert status == 0


def test_each_worker_maps_the_texts_file_before_it_answers_unless_told_not_to(
    make_bundle: MakeBundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """okfx serve over HTTP maps the bundle's texts file (read back from its state) into
    each worker before it answers (--preload, the default): every page resident once each
    worker has answered one read; with --no-preload only what that read touched (and the
    pages a fault maps around those, 64 KB on Linux: the file is 5 MB)."""
    body = "".join(f"line {n} of a long note\n" for n in range(1000))
    root = make_bundle(
        {f"notes/n{i}.md": concept(title=f"Note {i}", body=body) for i in range(200)}
    )
    written = time.monotonic()
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)  # store the files just written
    Bundle.load(root)  # its state, the texts file among it, in this test's cache home
    # the server reads that state back once the files are RACY_SECONDS old
    time.sleep(max(0.0, RACY_SECONDS + 0.2 - (time.monotonic() - written)))
    (texts,) = Path(os.environ["OKFX_CACHE_HOME"]).rglob("*.texts.okfs")
    size_kb = texts.stat().st_size / 1024
    resident: dict[str, list[int]] = {}
    for extra in ("--preload", "--no-preload"):
        served = Served(root, workers=2, extra=() if extra == "--preload" else (extra,))
        try:
            workers = served.settle(2)
            assert _answered_by_each(served, workers, "notes/n3") == ["Note 3", "Note 3"]
            resident[extra] = [resident_kb(texts, pid) for pid in sorted(workers)]
        finally:
            assert served.stop() == 0
    assert all(kb >= 0.9 * size_kb for kb in resident["--preload"]), (resident, size_kb)
    assert all(kb < 0.5 * size_kb for kb in resident["--no-preload"]), (resident, size_kb)


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
        return int(next(line for line in handle if line.startswith("VmRSS:")).split()[1])


def _maps(pid: int) -> str:
    with open(f"/proc/{pid}/maps", encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the slim supervisor: Linux")
def test_the_supervisor_keeps_nothing_the_workers_loaded(make_bundle: MakeBundle) -> None:
    """Started from the command line, okfx serve --workers replaces itself (same pid)
    with a supervisor that imports nothing from okfx: no page of okfx's modules or of
    the loaded bundles stays in it once both workers have written to theirs."""
    root = make_bundle({"a/first.md": concept(title="First")})
    served = Served(root, workers=2)
    try:
        workers = served.settle(2)
        pid = served.process.pid
        with open(f"/proc/{pid}/cmdline", encoding="utf-8") as handle:
            command = handle.read().split("\0")
        assert command[1:3] == ["-P", str(PROJECT_ROOT / "src/okfx/adapters/workers.py")]
        assert "pydantic_core" not in _maps(pid)  # okfx's models were never imported
        assert all("pydantic_core" in _maps(worker) for worker in workers)
        assert _rss_kb(pid) < min(_rss_kb(worker) for worker in workers) / 2
        assert served.call("read_concept", path="a/first")["title"] == "First"
    finally:
        status = served.stop()
    assert status == 0


def _established(pid: int, port: int) -> int:
    """How many TCP connections to ``port`` process ``pid`` holds open."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as handle:
            for line in handle.readlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                    inodes.add(fields[9])
    held = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        held += target.startswith("socket:[") and target[8:-1] in inodes
    return held


def test_clients_that_connect_together_spread_over_the_workers(make_bundle: MakeBundle) -> None:
    """Twelve clients connect at once and keep their connections: each worker takes its
    share, not the first worker to wake all of them (which left the other idle)."""
    import socket
    from urllib.parse import urlsplit

    root = make_bundle({"a/first.md": concept(title="First")})
    served = Served(root, workers=2)
    clients: list[socket.socket] = []
    try:
        workers = served.settle(2)
        address = urlsplit(served.url)
        port = address.port
        assert port is not None
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "read_concept", "arguments": {"path": "a/first"}}}
        ).encode()  # fmt: skip
        request = (
            f"POST {address.path} HTTP/1.1\r\nHost: {address.netloc}\r\n"
            "Content-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        clients = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(12)]
        for client in clients:
            client.sendall(request)
        for client in clients:
            assert client.recv(65536).startswith(b"HTTP/1.1 200")
        held = sorted(_established(pid, port) for pid in workers)
        assert sum(held) == 12
        assert held[0] >= 4, held  # 6 and 6, give or take a race
    finally:
        for client in clients:
            client.close()
        status = served.stop()
    assert status == 0


def test_workers_report_a_bundle_that_does_not_load_as_one_process_does(tmp_path: Path) -> None:
    """The bundles load in a process of their own (the loader), which reports the error and
    whose exit status becomes the server's."""
    command = [sys.executable, "-m", "okfx", "serve", str(tmp_path / "missing")]
    command += ["--transport", "http", "--port", "0"]
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "src")}
    env.pop("OKFX_TOKEN", None)
    alone = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    workers = subprocess.run(
        [*command, "--workers", "2"], capture_output=True, text=True, env=env, timeout=120
    )
    assert alone.returncode == workers.returncode == 2
    assert alone.stderr.splitlines()[0] == workers.stderr.splitlines()[0]
    assert alone.stderr.startswith("error[invalid_argument]: cannot load")
    assert "okfx: the workers could not start (exit status 2)" in workers.stderr


def test_workers_need_http(make_bundle: MakeBundle) -> None:
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    root = make_bundle({"a.md": concept()})
    result = CliRunner().invoke(cli, ["serve", str(root), "--workers", "2"])
    assert result.exit_code == 2
    assert "--workers needs --transport http" in result.output


def test_workers_refuse_a_computation_executor(make_bundle: MakeBundle, tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    root = make_bundle({"a.md": concept()})
    data = tmp_path / "trips.csv"
    data.write_text("id\n1\n", encoding="utf-8")
    args = ["serve", str(root), "--transport", "http", "--workers", "2"]
    result = CliRunner().invoke(cli, [*args, "--executor", "duckdb", "--data", f"trips={data}"])
    assert result.exit_code == 2, result.output
    assert "--workers cannot be combined with --executor" in result.output


# A supervisor whose "server" reports, from the worker, how many objects the cyclic GC
# still tracks outside its permanent generation: what it would walk (and write to).
_TRACKED_IN_WORKER = """
import gc, os, signal, socket
from okfx.adapters.workers import serve_workers
kept = [[i] for i in range(50_000)]  # made after any freeze, as a load's last objects are
read, write = os.pipe()
def serve(app, sock):
    os.write(write, str(len(gc.get_objects())).encode())
    signal.pause()
sock = socket.socket()
def stop():
    answer = os.read(read, 64).decode()
    print(answer, flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
signal.signal(signal.SIGALRM, lambda *_: stop())
signal.setitimer(signal.ITIMER_REAL, 0.5)
serve_workers(lambda reason: None, sock, 1, serve=serve)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers need os.fork")
def test_a_worker_inherits_nothing_the_collector_would_walk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _TRACKED_IN_WORKER],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert int(done.stdout.split()[0]) < 10_000  # not the 50,000 lists made before the fork
