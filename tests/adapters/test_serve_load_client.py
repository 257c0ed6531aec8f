"""bench/serve_load.py's lean client against the real HTTP app: the answers it reads are
the server's, whole, on one kept-alive connection, and it reads chunked answers and
answers that end with the connection as well."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from test_http_keepalive import _served  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402
from okfx.adapters.mcp import HttpLimits  # noqa: E402

sys.path.insert(0, str(PROJECT_ROOT / "bench"))
import serve_load  # noqa: E402


@contextmanager
def _python(code: str) -> Iterator[subprocess.Popen[str]]:
    """``python -c code`` with its stdout piped; killed with its children at the end."""
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        yield process
    finally:
        subprocess.run(["pkill", "-P", str(process.pid)], check=False)
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _call(ident: int, name: str, **arguments: Any) -> bytes:
    params = {"name": name, "arguments": arguments}
    return json.dumps(
        {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}
    ).encode()


def test_the_client_reads_the_servers_answers_on_one_connection() -> None:
    calls = [
        ("read", "ok", _call(1, "read_concept", path="/references/glossary.md")),
        ("read (wrong path)", "not_found", _call(2, "read_concept", path="/references/glosary.md")),
        ("bad arguments", "refused", _call(3, "list_concepts", limit="ten")),
        ("search", "ok", _call(4, "search_concepts", query="feed")),
    ]
    with _served(HttpLimits(request_timeout=60.0, keep_alive=60)) as ((host, port), server):
        tally = serve_load.Tally()

        async def run() -> list[bytes]:
            connection = serve_load.Connection(f"http://{host}:{port}/mcp", 30.0)
            bodies = []
            for kind, expect, body in calls:
                status, content = await connection.post(body)
                serve_load.judge(tally, kind, expect, status, content)
                bodies.append(content)
            assert len(server.server_state.connections) == 1  # kept alive, reused
            connection.close()
            return bodies

        bodies = asyncio.run(run())
    assert tally.errors == {}, tally.examples
    assert (tally.not_found, tally.bad_refused, tally.bad_accepted) == (1, 1, 0)
    for ident, content in enumerate(bodies, 1):
        assert json.loads(content)["id"] == ident  # each answer whole, none mixed up
    assert "glossary" in json.loads(bodies[0])["result"]["structuredContent"]["title"]


def test_chunked_answers_and_answers_that_close_the_connection() -> None:
    answers = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'4\r\n{"a"\r\n3;ext=1\r\n: 1\r\n1\r\n}\r\n0\r\nX-Trailer: y\r\n\r\n',
        b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
        b'HTTP/1.1 200 OK\r\n\r\n{"until": "closed"}',
    ]
    accepted: list[int] = []

    async def run() -> list[tuple[int, bytes]]:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(1)
            while answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                reply = answers.pop(0)
                writer.write(reply)
                await writer.drain()
                if b"Transfer-Encoding" not in reply:
                    break  # this one ends with the connection
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        connection = serve_load.Connection(f"http://127.0.0.1:{port}/mcp", 10.0)
        got = [await connection.post(b"{}") for _ in range(3)]
        server.close()
        return got

    got = asyncio.run(run())
    assert got == [(200, b'{"a": 1}'), (201, b"{}"), (200, b'{"until": "closed"}')]
    assert len(accepted) == 2  # a new connection after the server closed the first


def test_only_loopback() -> None:
    with pytest.raises(ValueError, match="loopback only"):
        serve_load.Connection("http://example.com:80/mcp", 1.0)


def test_the_run_waits_for_the_server_to_go_idle(tmp_path: Any) -> None:
    """settle() returns once the server stops using the CPU (its background preparation
    done, not counted as the run's), and at its deadline for one that never does."""
    import time

    done = tmp_path / "done"
    spin = (
        "import pathlib, sys, time\n"
        "t = time.process_time()\n"
        "while time.process_time() - t < 1.5: pass\n"
        "pathlib.Path(sys.argv[1]).write_text('idle')\n"
        "time.sleep(60)\n"
    )
    forever = "while True: pass\n"
    for code, deadline in ((spin, 120.0), (forever, 1.0)):
        child = subprocess.Popen([sys.executable, "-c", code, str(done)])
        try:
            asyncio.run(serve_load.settle(child.pid, time.monotonic() + deadline))
            assert child.poll() is None
        finally:
            child.kill()
            child.wait()
        if code == spin:
            assert done.read_text() == "idle"  # it had stopped spinning when settle returned


def test_cpu_is_counted_per_server_process() -> None:
    """process_cpu_s() gives each process of the server its own CPU seconds (the
    supervisor first, then its workers), so a run shows which worker did the work."""

    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', "
        "'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.6: pass\\n"
        "time.sleep(60)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    with _python(code) as parent:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        used: dict[int, float] = {}
        for _ in range(100):
            used = serve_load.process_cpu_s(parent.pid) or {}
            if used.get(worker, 0.0) >= 0.5:
                break
            time.sleep(0.1)
        assert list(used)[0] == parent.pid  # the server's own process first
        assert used[worker] >= 0.5  # the spinning one has its own count
        assert used[parent.pid] < used[worker]
        assert serve_load.server_cpu_s(parent.pid) == pytest.approx(sum(used.values()), abs=0.05)


def test_the_machine_line_says_how_many_cores_were_busy_and_on_what() -> None:
    before = dict.fromkeys(serve_load._STAT_COLUMNS, 100.0)
    after = {**before, "user": 115.0, "system": 103.0, "softirq": 101.0, "idle": 101.0}
    line = serve_load.machine_share(before, after, 10.0)
    assert line.startswith("1.90 of ")  # (15 + 3 + 1) s busy in 10 s
    assert "user 1.50" in line and "system 0.30" in line and "idle 0.10" in line
    assert serve_load.machine_share(None, after, 10.0).startswith("unknown")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_memory_is_sampled_through_the_run_and_its_second_half_reported() -> None:
    """sample_memory() follows the server's memory during the run, so a server that
    keeps growing (a leak) shows in the second half, apart from a first touch at the
    start: here a child that grows by 8 MB every 0.1 s for 0.6 s, then stops."""

    code = (
        "import sys, time\n"
        "held = []\n"
        "print('ready', flush=True)\n"
        "for _ in range(6):\n"
        '    held.append(b"x" * (8 << 20)); time.sleep(0.1)\n'
        "time.sleep(60)\n"
    )
    with _python(code) as child:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        before = serve_load.server_memory(child.pid)
        samples: list[tuple[float, Any]] = []
        start = time.monotonic()

        async def run() -> None:
            await serve_load.sample_memory(child.pid, start, start + 2.4, 0.2, samples)

        asyncio.run(run())
        after = serve_load.server_memory(child.pid)
    assert before is not None and after is not None
    assert 8 <= len(samples) <= 12
    assert [at for at, _ in samples] == sorted(at for at, _ in samples)
    assert after.anon - before.anon >= 40  # the 48 MB it took
    lines = list(serve_load.memory_course(samples, before, after, 2.4))
    assert lines[0].startswith("  summed RSS during the run: 0 s ")
    second_half = lines[1]
    assert second_half.startswith("  over the run's second half (")
    # the growth was all in the first half: the second half's heap moved by under 2 MB
    heap = float(second_half.split("heap ")[1].split(" MB")[0])
    assert abs(heap) < 2.0
