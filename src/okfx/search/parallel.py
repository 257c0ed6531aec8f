"""Two pieces of one search at once: one on a helper thread, the other on the caller's.

Python runs one thread at a time (the GIL), but the embedding model's run (onnxruntime)
and numpy's array loops release it, so a piece in C overlaps a piece in Python or another
piece in C. :func:`alongside` runs ``helper`` on one of a few shared threads, in a copy of
the caller's context (so a call's deadline, :mod:`okfx.deadline`, follows it), while the
caller runs ``caller``, and returns both results.

Who calls it decides what overlaps what: a piece in Python given to the helper while the
caller is about to enter C (the query's encode, :meth:`MiniLMEmbedder.embed_alongside
<okfx.search.embedder.MiniLMEmbedder.embed_alongside>`), or two halves of a product that
numpy runs without the GIL (:meth:`VectorIndex.similarities
<okfx.search.vectors.VectorIndex.similarities>`). Work given to a helper never waits for
another helper: a helper thread that calls :func:`alongside` runs both pieces itself. A
process forked from one that used the helpers (``okfx serve --workers``) makes its own.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["HELPER_THREADS", "alongside"]

#: The shared helper threads: searches running at once beyond this many wait their turn
#: for one (their pieces then run one after the other).
HELPER_THREADS = 4

T = TypeVar("T")
U = TypeVar("U")

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_local = threading.local()


def _helpers() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(HELPER_THREADS, thread_name_prefix="okfx-helper")
        return _pool


def _forget_pool() -> None:
    # A forked child has none of the parent's threads: a pool it inherited would take work
    # that no thread ever runs. It makes its own on first use.
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _as_helper(context: contextvars.Context, work: Callable[[], T]) -> T:
    _local.helper = True
    try:
        return context.run(work)
    finally:
        _local.helper = False


def alongside(helper: Callable[[], T], caller: Callable[[], U]) -> tuple[T, U]:
    """``(helper(), caller())``, ``helper`` run on a helper thread while ``caller`` runs
    on this one. An exception of either is raised here, once both have finished."""
    if getattr(_local, "helper", False):
        return helper(), caller()
    future = _helpers().submit(_as_helper, contextvars.copy_context(), helper)
    try:
        mine = caller()
    finally:
        theirs = future.result()
    return theirs, mine
