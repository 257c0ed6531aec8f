"""Fair tool calls for a server: each in a worker thread, bounded in number and in time.

A server's event loop reads every client's requests, so no tool may run on it: a grep
over a large bundle, a search that waits for the first index build, or a call that
takes the GIL for long would stall every other client. :func:`fair` turns a
:class:`~okfx.tools.Toolbox` tool into a coroutine that runs it with
``anyio.to_thread.run_sync`` under a :class:`CallPolicy`:

- **Slots.** The tools that scan many concepts (:data:`HEAVY_TOOLS`) share a few worker
  slots, the quick ones (reads, listings) many more, so quick calls never queue behind
  scans, and a burst of scans shares the CPU with the quick calls instead of taking it.
- **A time budget per call**, counted from when the call arrives: waiting for a slot
  counts. A call that does not get a slot in time answers a ``timeout`` error at once;
  one that runs out of time stops at the next check of its deadline
  (:mod:`okfx.deadline`: grep's scan, waiting for an index being built) and answers
  ``timeout`` too. Nothing queues without end, and no thread is abandoned.

anyio comes with the ``mcp`` extra and is imported when a call first runs.
"""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from okfx.deadline import budget
from okfx.errors import TimedOut
from okfx.tools.payloads import error_payload
from okfx.tools.toolbox import RUN_TOOL

__all__ = ["DEFAULT_CALL_TIMEOUT", "HEAVY_TOOLS", "CallPolicy", "fair"]

#: Seconds one tool call may take, waiting for a slot included (``okfx serve --call-timeout``).
DEFAULT_CALL_TIMEOUT = 10.0
#: The tools that may scan every concept (or wait for the index build, or run a query).
HEAVY_TOOLS = frozenset({"search_concepts", "grep_concepts", RUN_TOOL})

Tool = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class CallPolicy:
    """How many calls run at once and how long each may take.

    ``heavy_slots`` calls of :data:`HEAVY_TOOLS` and ``light_slots`` other calls run at
    once, each within ``timeout`` seconds (None: no bound, for tests and embedding).
    The threads take turns on the GIL, so slots divide one worker's CPU between the two
    kinds. With 2 heavy slots, 50 clients at 10k concepts (``bench/serve_load.py``) left
    searches and greps waiting for a slot (p50 470 ms, reads 95 ms, p99 611 ms); with 4
    the p99 was 528 ms, with 6 461 ms, with 8 336-389 ms, every kind near 230 ms p50.
    """

    timeout: float | None = DEFAULT_CALL_TIMEOUT
    heavy_slots: int = 8
    light_slots: int = 16

    def __post_init__(self) -> None:
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError(f"the call timeout must be positive, got {self.timeout}")
        if self.heavy_slots < 1 or self.light_slots < 1:
            raise ValueError("a call policy needs at least one slot of each kind")


class _Slots:
    """A capacity limiter per event loop (an anyio limiter belongs to the loop that
    first waited on it, and one server object may be run by several loops in turn)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self._by_loop: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def get(self) -> Any:
        import asyncio

        import anyio

        loop = asyncio.get_running_loop()
        limiter = self._by_loop.get(loop)
        if limiter is None:
            limiter = self._by_loop[loop] = anyio.CapacityLimiter(self.total)
        return limiter


def fair(tools: list[Tool], policy: CallPolicy) -> list[Callable[..., Awaitable[dict[str, Any]]]]:
    """Each tool as a coroutine that runs it in a worker thread under ``policy``, with
    the tool's name, docstring and signature (the SDK reads the schema from them)."""
    heavy, light = _Slots(policy.heavy_slots), _Slots(policy.light_slots)
    return [
        _fair(tool, heavy if tool.__name__ in HEAVY_TOOLS else light, policy.timeout)
        for tool in tools
    ]


def _fair(
    tool: Tool, slots: _Slots, timeout: float | None
) -> Callable[..., Awaitable[dict[str, Any]]]:
    name = tool.__name__

    @functools.wraps(tool)
    async def call(**kwargs: Any) -> dict[str, Any]:
        import anyio
        import anyio.to_thread

        start = time.monotonic()
        done: list[dict[str, Any]] = []

        def work() -> None:
            with budget(timeout, start=start):
                done.append(tool(**kwargs))

        # Waiting for a slot is cancelled at the deadline; a running call ends at its
        # own next check of the same deadline (the thread is waited for, not abandoned).
        with anyio.move_on_after(timeout if timeout is not None else float("inf")):
            await anyio.to_thread.run_sync(work, limiter=slots.get())
        if done:
            return done[0]
        return error_payload(
            TimedOut(
                f"{name} did not start within the {timeout:g} s time budget of one call: "
                "the server is busy with other calls; try again in a moment"
            )
        )

    return call
