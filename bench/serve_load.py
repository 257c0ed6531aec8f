#!/usr/bin/env python3
"""Load benchmark of ``okfx serve --transport http``: many agents at once, on loopback.

Usage (from a clone, after ``pip install -e ".[mcp]"``)::

    python bench/serve_load.py                               # 10k bundle, 50 clients, 60 s
    python bench/serve_load.py --bundle examples/knowledge --clients 4 --seconds 5
    python bench/serve_load.py --workers 2                   # okfx serve --workers 2

It starts ``okfx serve BUNDLE --transport http --host 127.0.0.1 --port 0`` (a free port,
read from the URL the server prints), waits until it answers, then runs ``--clients``
concurrent clients for ``--seconds`` (and at most ``--max-calls`` calls in all). Each
client keeps one HTTP/1.1 connection open and sends one JSON-RPC POST to ``/mcp`` after
another on it (``--client raw``, a few lines on asyncio streams, so that the clients,
which share the machine's cores with the server, take little of them; ``--client httpx``
sends them through an ``httpx.AsyncClient`` instead), drawn from a realistic mix:
``search_concepts``, ``read_concept``, ``list_concepts``, ``get_neighbors``,
``grep_concepts``, resource reads (``resources/read`` of ``okf://...``), a share of reads
and neighbours on wrong paths (``--wrong-share``, 25% by default: a letter of the file
name changed, the file in another folder) and a share of calls with bad arguments
(``--bad-share``). At the end it stops the server (SIGTERM, then SIGKILL) and prints:

- calls/s, and p50/p95/p99 latency, overall and per kind of call;
- errors: any failure other than the expected ones (an HTTP or JSON-RPC error, a tool
  error on a good call, a wrong path not answered ``not_found``), with deliberate bad
  arguments counted apart (refused, or wrongly accepted);
- the CPU seconds the server used (all its processes, then each: the supervisor and
  every worker) and the clients used (this process), each per call: who used the cores;
  and what the whole machine's cores did meanwhile (``/proc/stat``: user, system,
  softirq, steal, idle), which tells a server short of work from a machine short of cores;
- the server's memory (all its processes) before the run and at its end: RSS, split
  into anonymous pages (the heap) and file-backed ones (mapped files), and PSS. "Before"
  is taken once a search has answered (the server builds its facets, "did you mean"
  index and search index in the background after it starts answering) and after a
  warm-up of up to 5 s in which every client makes a few calls (their connections
  open, the server's worker threads started), once the server has gone idle (under a
  tenth of a core for half a second, at most ``--settle-timeout`` seconds: the rest of
  its background preparation, such as grep's word index, is not counted as the run's).
  The summed RSS is also sampled every ``--memory-every`` seconds during the run, with its
  growth over the run's second half: memory that keeps growing under a steady load (a
  leak) shows there, where the allocator's first highs and a first touch of mapped state
  show in the run's first seconds (the concept texts, the largest mapped file, each
  worker maps before it answers: ``okfx serve --preload``, the default over HTTP;
  ``--serve-arg=--no-preload`` leaves them to be mapped as calls read them).

The default bundle is a 10k-concept bundle generated with ../shared/bench/gen_bundle.py
into a temporary folder (kept for the run only) when ../shared exists, else
examples/knowledge. Everything stays on 127.0.0.1; the run is bounded in time and count
and cleans up after itself. Targets (issue 23, 50 clients, 60 s, 10k bundle): 0 errors;
RSS growth <= 10%; one worker >= 200 calls/s with p99 <= 500 ms; two workers >= 1.5x the
calls/s of one with RSS <= 1.3x one's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
GEN = PROJECT.parent / "shared" / "bench" / "gen_bundle.py"
EXAMPLE = PROJECT / "examples" / "knowledge"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
URL_LINE = re.compile(r"http://127\.0\.0\.1:\d+/mcp")
WORDS = re.compile(r"[a-z]{4,}")

# The mix: (kind, weight). Wrong paths and bad arguments are drawn on top of it.
MIX = (
    ("search", 25),
    ("read", 30),
    ("list", 10),
    ("neighbors", 10),
    ("grep", 10),
    ("resource", 15),
)


# -- the bundle --------------------------------------------------------------------------------
#: Clock ticks per second of /proc's CPU times.
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def concept_paths(root: Path) -> list[str]:
    """Bundle paths (``/a/b.md``) of the concept files: every .md but index.md and log.md."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md") and name not in ("index.md", "log.md"):
                rel = Path(folder, name).relative_to(root).as_posix()
                out.append("/" + rel)
    return out


def default_bundle(concepts: int, scratch: Path) -> Path:
    if not GEN.exists():
        print(f"(no generator at {GEN}: using {EXAMPLE})", file=sys.stderr)
        return EXAMPLE
    out = scratch / f"okf-{concepts}"
    print(f"generating a {concepts}-concept bundle in {out} ...", file=sys.stderr)
    subprocess.run(
        [sys.executable, str(GEN), "--concepts", str(concepts), "--out", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return out


# -- the server --------------------------------------------------------------------------------
def start_server(bundle: Path, workers: int, extra: list[str]) -> tuple[subprocess.Popen[str], str]:
    """``okfx serve`` in a new process group; returns it and the URL it printed."""
    command = [sys.executable, "-m", "okfx", "serve", str(bundle), "--transport", "http"]
    command += ["--host", "127.0.0.1", "--port", "0", *extra]
    if workers > 1:
        command += ["--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src")}
    env.pop("OKFX_TOKEN", None)
    server = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    assert server.stderr is not None
    for line in server.stderr:
        found = URL_LINE.search(line)
        if found:
            # keep reading what it writes, or a full pipe would block it
            threading.Thread(target=_drain, args=(server.stderr,), daemon=True).start()
            return server, found.group(0)
    stop_server(server)
    raise SystemExit(f"okfx serve exited ({server.returncode}) without printing its URL")


def _drain(stream: Any) -> None:
    for line in stream:
        if "Traceback" in line or "ERROR" in line:
            print(f"server: {line.rstrip()}", file=sys.stderr)


def stop_server(server: subprocess.Popen[str]) -> None:
    """SIGTERM to the server's process group, SIGKILL after 10 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="utf-8") as handle:
            return [int(child) for child in handle.read().split()]
    except OSError:
        return []


def _processes(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(_children(current))
    return found


@dataclass(frozen=True)
class Memory:
    """The memory of the server's processes in MB, summed (Linux /proc).

    ``rss`` is ``anon`` (the processes' own pages: the Python heap) plus ``file`` (pages
    of mapped files, such as a memory-mapped state file, which the page cache holds once
    for every process that maps them) plus ``shmem``. RSS counts a shared page once in each
    process; ``pss`` splits it between them, so the PSS of all the processes is what they
    take together (None where /proc has no smaps_rollup)."""

    rss: float
    anon: float
    file: float
    shmem: float
    pss: float | None


_STATUS_FIELDS = {"VmRSS:": "rss", "RssAnon:": "anon", "RssFile:": "file", "RssShmem:": "shmem"}


def server_memory(pid: int) -> Memory | None:
    """The memory of ``pid`` and its descendants (None without /proc)."""
    kb = dict.fromkeys(_STATUS_FIELDS.values(), 0)
    pss: int | None = 0
    for current in _processes(pid):
        try:
            with open(f"/proc/{current}/status", encoding="utf-8") as handle:
                for line in handle:
                    name = _STATUS_FIELDS.get(line.split(" ", 1)[0].split("\t", 1)[0])
                    if name is not None:
                        kb[name] += int(line.split()[1])
        except OSError:
            if current == pid:
                return None
            continue
        try:
            with open(f"/proc/{current}/smaps_rollup", encoding="utf-8") as handle:
                found = sum(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
            pss = None if pss is None else pss + found
        except OSError:
            pss = None
    mb = {name: value / 1024 for name, value in kb.items()}
    return Memory(**mb, pss=None if pss is None else pss / 1024)


def process_cpu_s(pid: int) -> dict[int, float] | None:
    """CPU seconds (user + system) used so far by ``pid`` and each of its descendants."""
    used: dict[int, float] = {}
    for current in _processes(pid):
        try:
            with open(f"/proc/{current}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            used[current] = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
        except (OSError, IndexError, ValueError):
            if current == pid:
                return None
    return used


def server_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) used so far by ``pid`` and its descendants."""
    used = process_cpu_s(pid)
    return None if used is None else sum(used.values())


#: The columns of /proc/stat's "cpu" line, in order.
_STAT_COLUMNS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def machine_cpu_s() -> dict[str, float] | None:
    """The whole machine's CPU seconds so far, per /proc/stat column (None without it)."""
    try:
        with open("/proc/stat", encoding="utf-8") as handle:
            values = handle.readline().split()[1 : 1 + len(_STAT_COLUMNS)]
    except OSError:
        return None
    return {name: int(value) / TICKS for name, value in zip(_STAT_COLUMNS, values, strict=False)}


def machine_share(
    before: dict[str, float] | None, after: dict[str, float] | None, wall: float
) -> str:
    """How many cores the machine kept busy during ``wall`` seconds, and on what: user and
    system time of every process, interrupts (loopback traffic is handled in softirq),
    and steal (time the hypervisor gave to someone else)."""
    if not before or not after or wall <= 0:
        return "unknown (no /proc/stat)"
    cores = {name: (after[name] - before[name]) / wall for name in after}
    busy = sum(value for name, value in cores.items() if name not in ("idle", "iowait"))
    parts = ", ".join(
        f"{name} {cores[name]:.2f}" for name in ("user", "system", "softirq", "steal", "idle")
    )
    return f"{busy:.2f} of {os.cpu_count()} cores busy ({parts})"


# -- the clients -------------------------------------------------------------------------------
@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    bad_refused: int = 0
    bad_accepted: int = 0
    not_found: int = 0
    calls: int = 0
    server_cpu: float | None = None  # CPU seconds the server used during the run
    client_cpu: float = 0.0  # CPU seconds this process (the clients) used during the run
    processes: int = 0  # the server's processes (supervisor and workers)
    per_process: list[float] = field(default_factory=list)  # CPU s, first the server's
    machine: str = ""  # what the whole machine's cores did during the run
    memory: list[tuple[float, Memory]] = field(default_factory=list)  # (s into the run, ...)

    def error(self, kind: str, what: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if len(self.examples) < 5:
            self.examples.append(f"{kind}: {what[:300]}")


class Mix:
    """Draws calls: ``(kind, JSON-RPC method, params, expectation)``."""

    def __init__(self, paths: list[str], bundle: str, args: argparse.Namespace) -> None:
        self.paths = paths
        self.known = set(paths)
        self.bundle = bundle
        self.folders = sorted({p.rsplit("/", 1)[0] or "/" for p in paths})
        words = sorted({w for p in paths for w in WORDS.findall(p.rsplit("/", 1)[-1])})
        self.words = words or ["data"]
        self.wrong = args.wrong_share
        self.bad = args.bad_share
        self.kinds = [kind for kind, _ in MIX]
        self.weights = [weight for _, weight in MIX]

    def wrong_path(self, rnd: random.Random) -> str:
        """A path of the bundle with one character changed, or its file name in another
        folder; never a path the bundle has (a generated bundle may hold one file name
        in two folders)."""
        while True:
            wrong = self._near_path(rnd)
            if wrong not in self.known:
                return wrong

    def _near_path(self, rnd: random.Random) -> str:
        path = rnd.choice(self.paths)
        folder, leaf = path.rsplit("/", 1)
        if rnd.random() < 0.5 or len(self.folders) < 2:
            at = rnd.randrange(len(leaf) - 3) if len(leaf) > 3 else 0
            return f"{folder}/{leaf[:at]}{'x' if leaf[at : at + 1] != 'x' else 'y'}{leaf[at + 1 :]}"
        other = rnd.choice([f for f in self.folders if f != (folder or "/")] or ["/nowhere"])
        return f"{other.rstrip('/')}/{leaf}"

    def draw(self, rnd: random.Random) -> tuple[str, str, dict[str, Any], str]:
        if rnd.random() < self.bad:
            return self.bad_call(rnd)
        kind = rnd.choices(self.kinds, self.weights)[0]
        if kind in ("read", "neighbors") and rnd.random() < self.wrong:
            tool = "read_concept" if kind == "read" else "get_neighbors"
            return (
                f"{kind} (wrong path)",
                "tools/call",
                _tool(tool, path=self.wrong_path(rnd)),
                "not_found",
            )
        path = rnd.choice(self.paths)
        if kind == "search":
            query = " ".join(rnd.sample(self.words, min(len(self.words), rnd.randint(1, 3))))
            return kind, "tools/call", _tool("search_concepts", query=query, limit=10), "ok"
        if kind == "read":
            return kind, "tools/call", _tool("read_concept", path=path), "ok"
        if kind == "list":
            folder = path.rsplit("/", 1)[0] or "/"
            return kind, "tools/call", _tool("list_concepts", directory=folder, limit=50), "ok"
        if kind == "neighbors":
            return kind, "tools/call", _tool("get_neighbors", path=path), "ok"
        if kind == "grep":
            return (
                kind,
                "tools/call",
                _tool("grep_concepts", pattern=rnd.choice(self.words), limit=20),
                "ok",
            )
        uri = f"okf://{quote(self.bundle, safe='')}/{quote(path.lstrip('/'), safe='/')}"
        return kind, "resources/read", {"uri": uri}, "ok"

    def bad_call(self, rnd: random.Random) -> tuple[str, str, dict[str, Any], str]:
        params = rnd.choice(
            [
                _tool("list_concepts", limit="ten"),
                _tool("read_concept", path=12345),
                _tool("search_concepts", query="x", limit=-3),
                _tool("grep_concepts", pattern="(", regex=True),
                _tool("read_concept"),
            ]
        )
        return "bad arguments", "tools/call", params, "refused"


def _tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def judge(tally: Tally, kind: str, expect: str, status: int, body: bytes) -> None:
    """Count one answer as expected, or as an error of ``kind``."""
    if status != 200:
        tally.error(kind, f"HTTP {status} {body[:200]!r}")
        return
    try:
        message = json.loads(body)
    except ValueError:
        tally.error(kind, f"not JSON: {body[:200]!r}")
        return
    if "error" in message:  # a JSON-RPC error
        if expect == "refused":
            tally.bad_refused += 1
        else:
            tally.error(kind, json.dumps(message["error"]))
        return
    result = message.get("result", {})
    payload = result.get("structuredContent") or {}
    code = payload.get("error", {}).get("code") if isinstance(payload, dict) else None
    failed = bool(result.get("isError")) or code is not None
    if expect == "refused":
        if failed:
            tally.bad_refused += 1
        else:
            tally.bad_accepted += 1
    elif expect == "not_found":
        if code == "not_found":
            tally.not_found += 1
        else:
            tally.error(kind, f"expected not_found, got {json.dumps(result)[:300]}")
    elif failed:
        tally.error(kind, json.dumps(result)[:300])


class Connection:
    """One keep-alive HTTP/1.1 connection to the server on asyncio streams: a JSON POST,
    then its answer, then the next, with little Python around the socket calls (a general
    HTTP client spends several times that per call, taken from the server it measures).

    Reads an answer sized by ``Content-Length`` or sent chunked; opens a new connection
    after one the server closed or one that failed (the failure is the caller's error)."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname != "127.0.0.1" or parts.port is None:
            raise ValueError(f"loopback only: {url}")
        self.host, self.port, self.timeout = parts.hostname, parts.port, timeout
        self.head = (
            f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in HEADERS.items())
        ).encode("latin-1")
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, body: bytes) -> tuple[int, bytes]:
        """``(status, body)`` of the answer to a POST of ``body``."""
        try:
            async with asyncio.timeout(self.timeout):
                return await self._exchange(body)
        except BaseException:
            self.close()  # what is left on it is unknown: the next call opens another
            raise

    async def _exchange(self, body: bytes) -> tuple[int, bytes]:
        if self.streams is None:
            self.streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.streams
        writer.write(b"%sContent-Length: %d\r\n\r\n%s" % (self.head, len(body), body))
        await writer.drain()
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip().lower()
        if "content-length" in headers:
            content = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":
            content = await _chunked(reader)
        else:  # the body ends where the connection does
            content = await reader.read()
            headers["connection"] = "close"
        if headers.get("connection") == "close":
            self.close()
        return status, content

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    chunks = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if not size:  # the last chunk, then trailer lines up to an empty one
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass
            return b"".join(chunks)
        chunks.append((await reader.readexactly(size + 2))[:-2])  # without its line break


Post = Callable[[bytes], Awaitable[tuple[int, bytes]]]


def httpx_post(http: Any, url: str) -> Post:
    """``--client httpx``: the same POST through an ``httpx.AsyncClient``."""

    async def post(body: bytes) -> tuple[int, bytes]:
        response = await http.post(url, content=body, headers=HEADERS)
        return response.status_code, response.content

    return post


async def client(
    post: Post, mix: Mix, seed: int, stop_at: float, budget: list[int], tally: Tally
) -> None:
    rnd = random.Random(seed)
    ident = 0
    while time.monotonic() < stop_at and budget[0] > 0:
        budget[0] -= 1
        kind, method, params, expect = mix.draw(rnd)
        ident += 1
        body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        start = time.perf_counter()
        try:
            status, content = await post(json.dumps(body).encode())
        except Exception as exc:  # a refused or dropped connection is an error to count
            status, content = 0, repr(exc).encode()
        tally.latencies.setdefault(kind, []).append(time.perf_counter() - start)
        tally.calls += 1
        judge(tally, kind, expect, status, content)


async def wait_ready(post: Post, deadline: float) -> None:
    """Wait until the server answers, then until a search answers without an error: the
    server builds its listing facets, "did you mean" index and search index in the
    background after it starts answering, and a search waits for them, so the memory
    measured "before" is that of a server that has built what it keeps."""
    for name, arguments in (("list_bundles", {}), ("search_concepts", {"query": "warm"})):
        body = {"jsonrpc": "2.0", "id": 0, "method": "tools/call"}
        body["params"] = _tool(name, **arguments)
        while True:
            with contextlib.suppress(Exception):
                status, content = await post(json.dumps(body).encode())
                if status == 200 and not _failed(json.loads(content)):
                    break
            if time.monotonic() > deadline:
                raise SystemExit("the server did not answer in time")
            await asyncio.sleep(0.2)


def _failed(message: Any) -> bool:
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        return True
    payload = result.get("structuredContent") or {}
    return bool(result.get("isError")) or (isinstance(payload, dict) and "error" in payload)


async def settle(pid: int, deadline: float, step: float = 0.5) -> None:
    """Wait until the server uses under a tenth of a core for ``step`` seconds, or until
    ``deadline`` (``time.monotonic()``); at once when its CPU time cannot be read."""
    used = server_cpu_s(pid)
    while used is not None and time.monotonic() < deadline:
        await asyncio.sleep(step)
        now = server_cpu_s(pid)
        if now is None or now - used < step / 10:
            return
        used = now


async def drive(
    args: argparse.Namespace, url: str, mix: Mix, server_pid: int
) -> tuple[Tally, float, Memory | None, Memory | None]:
    """The run: ``--clients`` clients, each on its own keep-alive connection (or, with
    ``--client httpx``, sharing an ``httpx.AsyncClient``'s pool)."""
    async with contextlib.AsyncExitStack() as stack:
        if args.client == "httpx":
            import httpx

            limits = httpx.Limits(
                max_connections=args.clients, max_keepalive_connections=args.clients
            )
            http = await stack.enter_async_context(
                httpx.AsyncClient(
                    limits=limits, timeout=httpx.Timeout(args.request_timeout), trust_env=False
                )
            )
            posts = [httpx_post(http, url)] * (args.clients + 1)
        else:
            connections = [Connection(url, args.request_timeout) for _ in range(args.clients + 1)]
            for connection in connections:
                stack.callback(connection.close)
            posts = [connection.post for connection in connections]
        await wait_ready(posts[-1], time.monotonic() + args.startup_timeout)
        # A short warm-up, so that "before" is the memory of a server that has answered
        # every client at once: their connections open, its worker threads started.
        warm, warm_until = Tally(), time.monotonic() + 5
        await asyncio.gather(
            *(client(posts[n], mix, 10_000 + n, warm_until, [3], warm) for n in range(args.clients))
        )
        await settle(server_pid, time.monotonic() + args.settle_timeout)
        before = server_memory(server_pid)
        cpu_before, mine_before = process_cpu_s(server_pid), time.process_time()
        machine_before = machine_cpu_s()
        tally = Tally()
        budget = [args.max_calls]
        start = time.monotonic()
        stop_at = start + args.seconds
        sampler = asyncio.create_task(
            sample_memory(server_pid, start, stop_at, args.memory_every, tally.memory)
        )
        await asyncio.gather(
            *(client(posts[n], mix, n, stop_at, budget, tally) for n in range(args.clients))
        )
        elapsed = time.monotonic() - start
        sampler.cancel()
        tally.client_cpu = time.process_time() - mine_before
        tally.machine = machine_share(machine_before, machine_cpu_s(), elapsed)
        after = server_memory(server_pid)
        cpu_after = process_cpu_s(server_pid)
        tally.processes = len(_processes(server_pid))
    if cpu_before is not None and cpu_after is not None:
        tally.per_process = [used - cpu_before.get(pid, 0.0) for pid, used in cpu_after.items()]
        tally.server_cpu = sum(tally.per_process)
    return tally, elapsed, before, after


async def sample_memory(
    pid: int, start: float, stop_at: float, every: float, samples: list[tuple[float, Memory]]
) -> None:
    """Append ``(seconds into the run, server memory)`` every ``every`` seconds until
    ``stop_at`` (read in a thread: the clients' loop does not wait on /proc)."""
    if every <= 0:
        return
    due = start + every
    while due < stop_at - every / 2:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        memory = await asyncio.to_thread(server_memory, pid)
        if memory is None:
            return
        samples.append((time.monotonic() - start, memory))
        due += every


def memory_course(
    samples: list[tuple[float, Memory]], before: Memory, after: Memory, elapsed: float
) -> Iterator[str]:
    """The summed RSS through the run, and its growth over the run's second half."""
    points = [(0.0, before), *samples, (elapsed, after)]
    yield (
        "  summed RSS during the run: "
        + ", ".join(f"{at:.0f} s {memory.rss:.1f}" for at, memory in points)
        + " MB"
    )
    if len(points) >= 3:  # from the sample nearest the run's middle to its end
        at, then = min(points[1:-1], key=lambda point: abs(point[0] - elapsed / 2))
        if then.rss:
            yield (
                f"  over the run's second half ({at:.0f} s -> {elapsed:.0f} s): RSS "
                f"{(after.rss - then.rss) / then.rss:+.1%} (heap {after.anon - then.anon:+.1f} "
                f"MB, mapped files {after.file - then.file:+.1f} MB)"
            )


# -- the report --------------------------------------------------------------------------------
def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def report(
    args: argparse.Namespace,
    bundle: Path,
    concepts: int,
    tally: Tally,
    elapsed: float,
    before: Memory | None,
    after: Memory | None,
) -> Iterator[str]:
    every = [x for values in tally.latencies.values() for x in values]
    yield (
        f"bundle {bundle} ({concepts} concepts), {args.clients} clients, {args.seconds:g} s, "
        f"{args.workers} worker(s), wrong paths {args.wrong_share:.0%} of reads/neighbors, "
        f"bad arguments {args.bad_share:.0%}"
    )
    yield f"{'kind':<24}{'calls':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'errors':>8}"
    for kind in sorted(tally.latencies):
        values = tally.latencies[kind]
        yield (
            f"{kind:<24}{len(values):>8}{percentile(values, 0.5) * 1e3:>9.1f}"
            f"{percentile(values, 0.95) * 1e3:>9.1f}{percentile(values, 0.99) * 1e3:>9.1f}"
            f"{tally.errors.get(kind, 0):>8}"
        )
    errors = sum(tally.errors.values())
    yield (
        f"{'all':<24}{len(every):>8}{percentile(every, 0.5) * 1e3:>9.1f}"
        f"{percentile(every, 0.95) * 1e3:>9.1f}{percentile(every, 0.99) * 1e3:>9.1f}{errors:>8}"
    )
    rate = len(every) / elapsed if elapsed else 0.0
    yield f"calls/s: {rate:.1f} ({len(every)} calls in {elapsed:.1f} s)"
    if tally.server_cpu is not None and every:
        per_call = tally.server_cpu / len(every) * 1e3
        yield (
            f"server CPU: {tally.server_cpu:.1f} s, {per_call:.2f} ms a call (a figure that "
            "other load on the machine does not change much)"
        )
        if len(tally.per_process) > 1:
            split = ", ".join(f"{used:.1f}" for used in tally.per_process[1:])
            yield f"  by process: supervisor {tally.per_process[0]:.1f} s; workers {split} s"
    if every:
        per_call = tally.client_cpu / len(every) * 1e3
        share = tally.client_cpu / elapsed if elapsed else 0.0
        yield (
            f"client CPU ({args.client}, this process): {tally.client_cpu:.1f} s, "
            f"{per_call:.2f} ms a call, {share:.2f} of a core"
        )
    if tally.machine:
        yield f"machine CPU during the run: {tally.machine}"
    yield (
        f"errors: {errors}; wrong paths answered not_found: {tally.not_found}; bad arguments "
        f"refused: {tally.bad_refused}, accepted (an error): {tally.bad_accepted}"
    )
    for example in tally.examples:
        yield f"  e.g. {example}"
    if before and after:
        yield f"server memory ({tally.processes} processes, summed): before -> after"
        for label, then, now in (
            ("RSS", before.rss, after.rss),
            ("  anonymous (heap)", before.anon, after.anon),
            ("  file-backed (mapped files)", before.file, after.file),
            ("PSS (shared pages split)", before.pss, after.pss),
        ):
            if then and now is not None:
                yield f"  {label:<30}{then:>9.1f} MB -> {now:>7.1f} MB ({(now - then) / then:+.1%})"
        yield from memory_course(tally.memory, before, after, elapsed)
    else:
        yield "server memory: unknown (no /proc)"
    yield (
        "targets: 0 errors; RSS growth <= 10%; one worker >= 200 calls/s and p99 <= 500 ms "
        "(50 clients, 60 s, 10k bundle)"
    )


def bundle_parser(doc: str) -> argparse.ArgumentParser:
    """The options of a bench on one bundle: its docstring ``doc`` as the help (first
    paragraph, then the rest), ``--bundle`` and ``--concepts``."""
    parser = argparse.ArgumentParser(
        description=doc.split("\n\n")[0], epilog=doc.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("--bundle", type=Path, help="a bundle folder (default: generate one)")
    parser.add_argument("--concepts", type=int, default=10_000, help="size of the generated bundle")
    return parser


def main() -> None:
    parser = bundle_parser(__doc__)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=1, help="okfx serve --workers")
    parser.add_argument(
        "--memory-every", type=float, default=10.0,
        help="seconds between samples of the server's memory during the run (0: none)",
    )  # fmt: skip
    parser.add_argument("--max-calls", type=int, default=500_000, help="stop after this many calls")
    parser.add_argument("--wrong-share", type=float, default=0.25, help="reads on wrong paths")
    parser.add_argument("--bad-share", type=float, default=0.02, help="calls with bad arguments")
    parser.add_argument("--request-timeout", type=float, default=60.0, help="seconds per request")
    parser.add_argument(
        "--client", choices=("raw", "httpx"), default="raw",
        help="raw: a keep-alive HTTP/1.1 connection per client on asyncio streams (lean); "
        "httpx: one httpx.AsyncClient (costs the machine about a millisecond of CPU a call)",
    )  # fmt: skip
    parser.add_argument("--startup-timeout", type=float, default=900.0, help="seconds to load")
    parser.add_argument(
        "--settle-timeout", type=float, default=120.0,
        help="seconds to wait at most for the server to go idle before the run",
    )  # fmt: skip
    parser.add_argument(
        "--serve-arg", action="append", default=[], metavar="ARG",
        help="an extra argument for okfx serve (repeat), e.g. --serve-arg=--lazy-index",
    )  # fmt: skip
    args = parser.parse_args()
    if not 1 <= args.clients <= 1000 or args.seconds <= 0 or args.seconds > 3600:
        parser.error("--clients must be 1..1000 and --seconds 0..3600")
    with tempfile.TemporaryDirectory(prefix="okfx-serve-load-") as scratch:
        bundle = args.bundle or default_bundle(args.concepts, Path(scratch))
        paths = concept_paths(bundle)
        if not paths:
            parser.error(f"no concept files under {bundle}")
        server, url = start_server(bundle, args.workers, args.serve_arg)
        try:
            mix = Mix(paths, bundle.resolve().name, args)
            print(f"server at {url} (pid {server.pid}); running ...", file=sys.stderr)
            tally, elapsed, before, after = asyncio.run(drive(args, url, mix, server.pid))
        finally:
            stop_server(server)
    for line in report(args, bundle, len(paths), tally, elapsed, before, after):
        print(line)


if __name__ == "__main__":
    main()
