#!/usr/bin/env python3
"""Load benchmark of ``okfx serve --transport http``: many agents at once, on loopback.

Usage (from a clone, after ``pip install -e ".[mcp]"``)::

    python bench/serve_load.py                               # 10k bundle, 50 clients, 60 s
    python bench/serve_load.py --bundle examples/knowledge --clients 4 --seconds 5
    python bench/serve_load.py --workers 2                   # okfx serve --workers 2

It starts ``okfx serve BUNDLE --transport http --host 127.0.0.1 --port 0`` (a free port,
read from the URL the server prints), waits until it answers, then runs ``--clients``
concurrent clients for ``--seconds`` (and at most ``--max-calls`` calls in all). Each
client sends one JSON-RPC POST to ``/mcp`` after another, drawn from a realistic mix:
``search_concepts``, ``read_concept``, ``list_concepts``, ``get_neighbors``,
``grep_concepts``, resource reads (``resources/read`` of ``okf://...``), a share of reads
and neighbours on wrong paths (``--wrong-share``, 25% by default: a letter of the file
name changed, the file in another folder) and a share of calls with bad arguments
(``--bad-share``). At the end it stops the server (SIGTERM, then SIGKILL) and prints:

- calls/s, and p50/p95/p99 latency, overall and per kind of call;
- errors: any failure other than the expected ones (an HTTP or JSON-RPC error, a tool
  error on a good call, a wrong path not answered ``not_found``), with deliberate bad
  arguments counted apart (refused, or wrongly accepted);
- the server's RSS (all its processes) after the first answers and at the end.

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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

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


def server_memory_mb(pid: int) -> tuple[float, float | None] | None:
    """``(RSS, PSS)`` in MB of ``pid`` and its descendants (Linux /proc; else None).

    RSS counts a page shared by the workers once in each; PSS splits it between them, so
    the PSS of all the processes is what they take together.
    """
    rss = pss = 0
    pss_known = True
    for current in _processes(pid):
        try:
            with open(f"/proc/{current}/status", encoding="utf-8") as handle:
                rss += sum(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))
        except OSError:
            if current == pid:
                return None
            continue
        try:
            with open(f"/proc/{current}/smaps_rollup", encoding="utf-8") as handle:
                pss += sum(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
        except OSError:
            pss_known = False
    return rss / 1024, pss / 1024 if pss_known else None


def server_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) used so far by ``pid`` and its descendants."""
    ticks = 0
    for current in _processes(pid):
        try:
            with open(f"/proc/{current}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            if current == pid:
                return None
    return ticks / os.sysconf("SC_CLK_TCK")


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
    processes: int = 0  # the server's processes (supervisor and workers)

    def error(self, kind: str, what: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if len(self.examples) < 5:
            self.examples.append(f"{kind}: {what[:300]}")


class Mix:
    """Draws calls: ``(kind, JSON-RPC method, params, expectation)``."""

    def __init__(self, paths: list[str], bundle: str, args: argparse.Namespace) -> None:
        self.paths = paths
        self.bundle = bundle
        self.folders = sorted({p.rsplit("/", 1)[0] or "/" for p in paths})
        words = sorted({w for p in paths for w in WORDS.findall(p.rsplit("/", 1)[-1])})
        self.words = words or ["data"]
        self.wrong = args.wrong_share
        self.bad = args.bad_share
        self.kinds = [kind for kind, _ in MIX]
        self.weights = [weight for _, weight in MIX]

    def wrong_path(self, rnd: random.Random) -> str:
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


async def client(
    http: Any, url: str, mix: Mix, seed: int, stop_at: float, budget: list[int], tally: Tally
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
            response = await http.post(url, json=body, headers=HEADERS)
            status, content = response.status_code, response.content
        except Exception as exc:  # a refused or dropped connection is an error to count
            status, content = 0, repr(exc).encode()
        tally.latencies.setdefault(kind, []).append(time.perf_counter() - start)
        tally.calls += 1
        judge(tally, kind, expect, status, content)


async def wait_ready(http: Any, url: str, deadline: float) -> None:
    body = {"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": _tool("list_bundles")}
    while True:
        with contextlib.suppress(Exception):
            response = await http.post(url, json=body, headers=HEADERS)
            if response.status_code == 200:
                return
        if time.monotonic() > deadline:
            raise SystemExit("the server did not answer in time")
        await asyncio.sleep(0.2)


async def drive(
    args: argparse.Namespace, url: str, mix: Mix, server_pid: int
) -> tuple[Tally, float, Any, Any]:
    import httpx

    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    timeout = httpx.Timeout(args.request_timeout)
    async with httpx.AsyncClient(limits=limits, timeout=timeout, trust_env=False) as http:
        await wait_ready(http, url, time.monotonic() + args.startup_timeout)
        # a short warm-up, so that "before" is the RSS of a server that has answered
        warm = Tally()
        await asyncio.gather(
            *(
                client(http, url, mix, 10_000 + n, time.monotonic() + 2, [20], warm)
                for n in range(4)
            )
        )
        before = server_memory_mb(server_pid)
        cpu_before = server_cpu_s(server_pid)
        tally = Tally()
        budget = [args.max_calls]
        start = time.monotonic()
        stop_at = start + args.seconds
        await asyncio.gather(
            *(client(http, url, mix, n, stop_at, budget, tally) for n in range(args.clients))
        )
        elapsed = time.monotonic() - start
        after = server_memory_mb(server_pid)
        cpu_after = server_cpu_s(server_pid)
        tally.processes = len(_processes(server_pid))
    tally.server_cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return tally, elapsed, before, after


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
    before: float | None,
    after: float | None,
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
    yield (
        f"errors: {errors}; wrong paths answered not_found: {tally.not_found}; bad arguments "
        f"refused: {tally.bad_refused}, accepted (an error): {tally.bad_accepted}"
    )
    for example in tally.examples:
        yield f"  e.g. {example}"
    if before and after:
        growth = (after[0] - before[0]) / before[0]
        yield (
            f"server RSS ({tally.processes} processes, summed): {before[0]:.1f} MB -> "
            f"{after[0]:.1f} MB ({growth:+.1%})"
        )
        if before[1] and after[1]:
            growth = (after[1] - before[1]) / before[1]
            yield (
                f"server PSS (shared pages split, what they take together): {before[1]:.1f} MB"
                f" -> {after[1]:.1f} MB ({growth:+.1%})"
            )
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
    parser.add_argument("--max-calls", type=int, default=500_000, help="stop after this many calls")
    parser.add_argument("--wrong-share", type=float, default=0.25, help="reads on wrong paths")
    parser.add_argument("--bad-share", type=float, default=0.02, help="calls with bad arguments")
    parser.add_argument("--request-timeout", type=float, default=60.0, help="seconds per request")
    parser.add_argument("--startup-timeout", type=float, default=900.0, help="seconds to load")
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
