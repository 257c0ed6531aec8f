"""Shared kit for the adversarial suite: hostile bundles, an outside marker, tool calls.

A plain module (not a conftest.py) so the tests import it by name; a second conftest.py
would shadow ``tests/conftest.py`` for ``from conftest import ...``.

Every hostile bundle is built in ``tmp_path`` next to an ``outside/`` folder whose files
hold :data:`MARKER`; a test passes only if that text never shows up in anything okfx
returns.
"""

from __future__ import annotations

import gc
import json
import math
import os
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from conftest import concept as concept  # re-exported for the suite
from okfx import Bundle, Toolbox
from okfx.limits import MIB
from okfx.tools.payloads import UNTRUSTED as UNTRUSTED

MARKER = "OKFX-OUTSIDE-MARKER-5f0c9e"

#: Error codes a tool may answer with for bad input; anything else is a failure.
STABLE_CODES = frozenset(
    {"invalid_argument", "invalid_regex", "not_found", "unsafe_path", "too_large", "unreadable"}
)


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``{relative path: text or bytes}`` under ``root`` and return ``root``."""
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8", newline="")
    return root


def plant_outside(base: Path) -> Path:
    """An ``outside/`` folder beside the bundle whose every file carries :data:`MARKER`."""
    outside = base / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text(
        concept(title=MARKER, description=MARKER, body=f"{MARKER}\n[x](/x.md)\n"),
        encoding="utf-8",
    )
    (outside / "secret.txt").write_text(MARKER, encoding="utf-8")
    (outside / "index.md").write_text(f"# {MARKER}\n", encoding="utf-8")
    return outside


def codes(bundle: Bundle, path: str | None = None) -> list[str]:
    """Warning codes of ``bundle`` (for one path when given), in order."""
    return [w.code for w in bundle.warnings if path is None or w.path == path]


def as_json(value: Any) -> str:
    """Strict JSON of a tool result: no NaN/inf, only JSON types (fails the test otherwise)."""
    return json.dumps(value, allow_nan=False)


def assert_clean(value: Any) -> str:
    """A tool result must be a dict, strict JSON, and free of the outside marker."""
    assert isinstance(value, dict), f"tool returned {type(value).__name__}, not a dict"
    text = as_json(value)
    assert MARKER not in text, "text from outside the bundle leaked into a result"
    return text


def assert_bundle_clean(bundle: Bundle) -> None:
    """Nothing loaded into ``bundle`` came from outside its root."""
    for c in bundle:
        assert MARKER not in c.body and MARKER not in c.title and MARKER not in c.description
    for doc in [*bundle.indexes.values(), *bundle.logs.values()]:
        assert MARKER not in doc.body
    assert all(MARKER not in w.message for w in bundle.warnings)


def is_internal(result: Any) -> bool:
    return isinstance(result, dict) and result.get("error", {}).get("code") == "internal_error"


def call(box: Toolbox, tool: str, **kwargs: Any) -> dict[str, Any]:
    """Call one tool and check the result: no ``internal_error``, strict JSON, no marker."""
    result = getattr(box, tool)(**kwargs)
    assert not is_internal(result), f"{tool}({kwargs!r:.200}) raised inside: {result}"
    assert_clean(result)
    return result


def error_code(result: dict[str, Any]) -> str | None:
    error = result.get("error")
    return error.get("code") if isinstance(error, dict) else None


#: Every path-like argument of every tool, as ``(tool, kwargs builder)``.
PATH_ARGUMENTS: list[tuple[str, Callable[[str], dict[str, Any]]]] = [
    ("read_concept", lambda p: {"path": p}),
    ("read_concept", lambda p: {"path": "d/a", "section": p}),
    ("get_neighbors", lambda p: {"path": p}),
    ("read_resource", lambda p: {"path": p}),
    ("list_concepts", lambda p: {"directory": p}),
    ("search_concepts", lambda p: {"query": "inside", "directory": p}),
    ("grep_concepts", lambda p: {"pattern": "inside", "directory": p}),
    ("read_concept", lambda p: {"path": "d/a", "bundle": p}),
    ("list_concepts", lambda p: {"bundle": p}),
]


def peak_mib(fn: object) -> tuple[object, float]:
    """``fn()`` and the peak of Python allocations while it ran, in MiB."""
    tracemalloc.start()
    try:
        value = fn()  # type: ignore[operator]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, peak / MIB


# -- timing -----------------------------------------------------------------------------------
def per_call(fn: Callable[[Any], object], arg: Any, budget: float = 0.02, rounds: int = 3) -> float:
    """CPU seconds per call of ``fn(arg)`` in this thread (a thread another test left
    running, such as a background store, must not count): repeated to at least ``budget``
    (one call when 0), best of ``rounds``, with the cyclic GC held off."""
    best = math.inf
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            calls = 0
            start = time.thread_time()
            while True:
                fn(arg)
                calls += 1
                elapsed = time.thread_time() - start
                if elapsed >= budget:
                    break
            best = min(best, elapsed / calls)
    finally:
        if enabled:
            gc.enable()
    return best


def growth(fn: Callable[[Any], object], make: Callable[[int], Any], n: int) -> float:
    """Time of ``fn(make(8n))`` over time of ``fn(make(n))``.

    Linear code gives about 8, quadratic about 64. Tests require < :data:`GROWTH_BOUND`
    (27 = 3**3): the issue's bound "2x input takes < 3x time", applied over three
    doublings so timer noise on a shared machine cannot flip the verdict.
    """
    return per_call(fn, make(8 * n)) / per_call(fn, make(n))


GROWTH_BOUND = 27

#: A 4x larger input may cost at most this many times more: linear code gives about 4,
#: quadratic 16, cubic 64; the margin absorbs timer noise on a shared machine.
LINEAR_BOUND = 10


def growth_4n(
    fn: Callable[[Any], object],
    make: Callable[[int], Any],
    *,
    floor: float = 5e-5,
    start: int = 16,
    max_n: int = 1 << 22,
) -> float:
    """How many times longer ``fn(make(4n))`` takes than ``fn(make(n))``.

    ``make(0)`` is the same input without the part that grows: its cost is taken off
    both, so fixed overhead (a load's walk) cannot hide a superlinear part. ``n`` starts
    at ``start`` and doubles until a call takes ``floor`` seconds more than that: a
    quadratic or cubic ``fn`` is caught at a small ``n`` (so a failing run stays short),
    and inputs stay small enough for the CPU caches (a 4x input that no longer fits
    would look superlinear). Each size is timed over repeated calls, best of three; a
    ratio over :data:`LINEAR_BOUND` is measured again at twice and four times ``n``, the
    fixed cost with it, and the smallest of the three returned.
    """
    budget = max(20 * floor, 0.004)
    base = per_call(fn, make(0), budget)
    n = start
    while n < max_n and per_call(fn, make(n), 0, 1) - base < floor:
        n *= 2
    ratios = []
    for size in (n, 2 * n, 4 * n):  # superlinear code stays so at every size; noise not
        if ratios:  # the fixed cost measured again too: one slow first measure of it
            base = per_call(fn, make(0), budget)  # inflated every ratio after it
        small, big = make(size), make(4 * size)
        spent_small = max(per_call(fn, small, budget) - base, 1e-7)
        ratio = (per_call(fn, big, budget) - base) / spent_small
        if ratio <= LINEAR_BOUND:
            return ratio
        ratios.append(ratio)
    return min(ratios)


def quick_growth(fn: Callable[[Any], object], make: Callable[[int], Any]) -> float | None:
    """A one-call screen for :func:`growth_4n`: None when ``fn`` on 256 and 1,024
    characters clearly grows linearly, else the careful ratio."""
    small, big = per_call(fn, make(256), 0, 1), per_call(fn, make(1024), 0, 1)
    if big <= LINEAR_BOUND * small + 0.0003:
        return None
    return growth_4n(fn, make)


def within(seconds: float, fn: Callable[[], Any], unblock: Iterable[Path] = ()) -> Any:
    """Run ``fn`` in a thread and fail (instead of hanging the suite) if it outlives ``seconds``.

    ``unblock`` lists FIFOs to open for writing after a timeout, so a thread stuck opening
    one for reading can finish.
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed back to the test thread below
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        for fifo in unblock:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        pytest.fail(f"did not finish within {seconds}s (blocked on a special file?)")
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- deep trees -------------------------------------------------------------------------------
def make_deep(root: Path, depth: int, leaf: dict[str, str] | None = None) -> None:
    """``root/d/d/.../d`` ``depth`` levels deep, built with dir fds so no path gets long."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        for name, text in (leaf or {}).items():
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
            with os.fdopen(out, "w", encoding="utf-8") as handle:
                handle.write(text)
    finally:
        os.close(fd)


def remove_deep(root: Path) -> None:
    """Remove a tree too deep for ``shutil.rmtree`` (recursive) or for full paths.

    Holds one directory fd at a time and climbs back with ``..``.
    """
    if not root.exists():
        return
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fd = os.open(root, flags)
    names: list[str] = []
    while True:
        child = None
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    child = entry.name
                else:
                    os.unlink(entry.name, dir_fd=fd)
        if child is not None:
            nxt = os.open(child, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
            names.append(child)
            continue
        if not names:
            os.close(fd)
            break
        parent = os.open("..", flags, dir_fd=fd)
        os.close(fd)
        os.rmdir(names.pop(), dir_fd=parent)
        fd = parent
    os.rmdir(root)
