#!/usr/bin/env python3
"""CPU per tool call, in process: what each tool of the serve_load mix costs a server.

Usage::

    python bench/tool_cpu.py                        # the 10k bundle, 200 calls a kind
    python bench/tool_cpu.py --concepts 2000 --calls 50
    python bench/tool_cpu.py --bundle examples/knowledge --mcp

The bundle comes from ../shared/bench/gen_bundle.py, cached under bench/out/ (as
bench/load.py makes it), or ``--bundle``. It is loaded as ``okfx serve`` loads it (the
state cache, objects frozen out of the cyclic GC, the search index built), then each
kind of call of ``bench/serve_load.py``'s mix is drawn ``--calls`` times with the same
generator (words and paths of the bundle, wrong paths with a letter changed or in
another folder) and run once to warm up, then timed: the CPU time of the calling thread
(``time.thread_time``), the least of ``--repeat`` passes, per call.

Each line is compared with the floor measured in the same run: ``read_concept`` of an
existing path. A ``resource`` row times a ``resources/read`` of a concept as the MCP
server renders it (the ``mcp`` extra). ``--mcp`` also times a ``tools/call`` of
``list_bundles`` (a tool that does almost nothing) through the HTTP app
(``okfx.adapters.mcp.http_app``, in process, no socket, no client: the app is handed the
request as uvicorn hands it over), as okfx serves it and with every request through the
SDK's transport (``fast=False``): what the protocol layer adds to every call.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from load import ensure_bundle  # noqa: E402
from serve_load import Mix, bundle_parser, concept_paths  # noqa: E402

FLOOR = "read"


def load(root: Path) -> Any:
    from okfx import KnowledgeManager, Toolbox
    from okfx.gcpause import freeze_after_loads

    freeze_after_loads()  # as okfx serve does
    manager = KnowledgeManager.from_paths([root])
    gc.freeze()
    manager.prepare_search()
    return Toolbox(manager)


def draws(
    mix: Mix, kind: str, count: int, seed: int, method: str = "tools/call"
) -> list[dict[str, Any]]:
    """``count`` calls of one kind of the mix: ``{"name", "arguments"}`` of a tool call,
    ``{"uri"}`` of a resource read."""
    rnd = random.Random(seed)
    out: list[dict[str, Any]] = []
    while len(out) < count:
        label, drawn, params, _ = mix.draw(rnd)
        if label == kind and drawn == method:
            out.append(params)
    return out


def cpu_ms(call: Callable[[], Any], repeat: int, count: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        call()
        best = min(best, time.thread_time() - start)
    return best / count * 1e3


def tool_rows(box: Any, mix: Mix, calls: int, repeat: int) -> dict[str, float]:
    kinds = ["read", "read (wrong path)", "search", "grep", "list", "neighbors"]
    kinds += ["neighbors (wrong path)"]
    rows: dict[str, float] = {}
    for seed, kind in enumerate(kinds):
        batch = draws(mix, kind, calls, seed)

        def run(batch: list[dict[str, Any]] = batch) -> None:
            for params in batch:
                getattr(box, params["name"])(**params["arguments"])

        run()  # warm: the first call of a kind may build what the others reuse
        rows[kind] = cpu_ms(run, repeat, len(batch))
    rows["resource"] = resource_ms(box, mix, calls, repeat)
    return rows


def resource_ms(box: Any, mix: Mix, calls: int, repeat: int) -> float:
    """CPU ms of one ``resources/read`` of a concept, as the MCP server renders it
    (``okfx.adapters._mcp_resources``: its YAML frontmatter, its body, the label)."""
    from okfx.adapters._mcp_resources import Resources

    resources = Resources(box.manager)
    uris = [params["uri"] for params in draws(mix, "resource", calls, 99, "resources/read")]

    def run() -> None:
        for uri in uris:
            if resources.read(uri) is None:
                raise SystemExit(f"no resource at {uri}")

    run()
    return cpu_ms(run, repeat, len(uris))


def mcp_rows(box: Any, calls: int, repeat: int) -> dict[str, float]:
    """CPU ms of one ``tools/call`` of list_bundles through the HTTP app, in process: as
    okfx serves it, and with every request through the SDK's transport (``fast=False``)."""
    return {
        "tools/call list_bundles over the HTTP app": mcp_ms(box, calls, repeat, fast=True),
        "  the same through the SDK's transport": mcp_ms(box, calls, repeat, fast=False),
    }


def mcp_ms(box: Any, calls: int, repeat: int, *, fast: bool) -> float:
    """The server's CPU per call: the ASGI app driven directly (no client, no socket), the
    way uvicorn hands it a parsed request; the SDK's worker threads count too."""
    import json

    from okfx.adapters import mcp as adapter

    server = adapter.build_server(box)
    app = adapter.http_app(server, fast=fast)
    params = {"name": "list_bundles", "arguments": {}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    raw = body.encode()
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-length", str(len(raw)).encode()),
    ]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
        "root_path": "", "headers": headers, "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }  # fmt: skip

    async def one() -> None:
        status: list[int] = []
        pending = [{"type": "http.request", "body": raw, "more_body": False}]

        async def receive() -> dict[str, Any]:
            if pending:
                return pending.pop()
            await asyncio.Event().wait()  # no disconnect while answering
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])

        await app(dict(scope), receive, send)
        assert status == [200], status

    async def run() -> float:
        async with server.session_manager.run():

            async def many() -> None:
                for _ in range(calls):
                    await one()

            await many()
            best = float("inf")
            for _ in range(repeat):
                start = time.process_time()  # the SDK's worker threads count too
                await many()
                best = min(best, time.process_time() - start)
            return best / calls * 1e3

    return asyncio.run(run())


def main() -> None:
    parser = bundle_parser(__doc__)
    parser.add_argument("--calls", type=int, default=200, help="calls of each kind")
    parser.add_argument("--repeat", type=int, default=3, help="passes; the least counts")
    parser.add_argument("--mcp", action="store_true", help="also time the MCP HTTP layer")
    args = parser.parse_args()
    root = args.bundle or ensure_bundle(args.concepts)
    paths = concept_paths(root)
    if not paths:
        parser.error(f"no concept files under {root}")
    started = time.perf_counter()
    box = load(root)
    print(f"bundle {root} ({len(paths)} concepts), loaded in {time.perf_counter() - started:.1f} s")
    options = argparse.Namespace(wrong_share=0.25, bad_share=0.0)
    mix = Mix(paths, root.resolve().name, options)
    rows = tool_rows(box, mix, args.calls, args.repeat)
    if args.mcp:
        rows.update(mcp_rows(box, args.calls, args.repeat))
    floor = rows[FLOOR]
    print(f"{'call':<44}{'CPU ms':>10}{'x floor':>10}")
    for kind, ms in rows.items():
        print(f"{kind:<44}{ms:>10.3f}{ms / floor:>10.1f}")
    print(f"floor: {FLOOR} (read_concept of an existing path), measured in this run")


if __name__ == "__main__":
    main()
