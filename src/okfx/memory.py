"""Keep the C heap small, where the C library lets us.

CPython returns a large block to the system when it is freed, but many medium blocks
freed in the middle of the heap (a build's per-term posting arrays) stay part of the
process until glibc's ``malloc_trim`` releases their pages (:func:`release_free_memory`).

glibc also gives each new thread that allocates a heap ("arena") of its own, up to eight
per core: a server's worker threads each fill and keep one. The GIL runs one thread's
Python at a time, so the extra arenas buy little speed and cost pages that forked
workers cannot share (:func:`limit_malloc_arenas`). Elsewhere (musl, macOS, Windows)
both do nothing.

A memory-mapped file's pages join a process as it first reads them, each read of a new
page a page fault: a server that maps its concept texts gains them over its first
minutes of calls, each worker on its own (:func:`map_in` maps them all at once).
"""

from __future__ import annotations

import mmap
import os
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

__all__ = ["MAP_IN_CHUNK", "SERVER_ARENAS", "limit_malloc_arenas", "map_in", "release_free_memory"]

#: Arenas a server keeps (``okfx serve``). Measured with ``bench/serve_load.py`` at 10k,
#: 20 clients, two workers: PSS of the three processes 426 MB with glibc's default, 328
#: with one arena, 334 with two; no change in CPU per call.
SERVER_ARENAS = 2
#: Bytes :func:`map_in` maps per step: other threads run between steps (a step that reads
#: from the disk holds the GIL while it waits).
MAP_IN_CHUNK = 4 << 20
_M_ARENA_MAX = -8  # mallopt's parameter number in glibc's malloc.h


def _c_function(find: Callable[[], Any], *argtypes: Any) -> Callable[..., int] | None:
    """The C library function ``find()`` looks up, returning an int (Linux only), or
    None. Each lookup names its function, so an audit can list them."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        call = find()
    except (OSError, AttributeError):
        return None
    call.argtypes = list(argtypes)
    call.restype = ctypes.c_int
    return call  # type: ignore[no-any-return]


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes

    return _c_function(lambda: ctypes.CDLL(None).malloc_trim, ctypes.c_size_t)


@cache
def _mallopt() -> Callable[[int, int], int] | None:
    import ctypes

    return _c_function(lambda: ctypes.CDLL(None).mallopt, ctypes.c_int, ctypes.c_int)


def limit_malloc_arenas(count: int) -> bool:
    """Let glibc keep at most ``count`` heaps for all threads; call it before threads
    start. Left alone when ``MALLOC_ARENA_MAX`` is set (the user chose). True when set."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    mallopt = _mallopt()
    return mallopt is not None and mallopt(_M_ARENA_MAX, max(1, count)) == 1


def release_free_memory() -> bool:
    """Return the free pages of the C heap to the system; True when it could try."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def map_in(buffer: object, offset: int, length: int) -> int:
    """Map the pages of ``buffer[offset : offset + length]`` into this process now, when
    ``buffer`` is an ``mmap`` (read one byte of each page, :data:`MAP_IN_CHUNK` bytes a
    step): pages of the page cache, shared with every process that maps the same file,
    which later reads then find without a page fault. Returns the bytes mapped (0 for
    a buffer that is not a map: its bytes are already the process's)."""
    if not isinstance(buffer, mmap.mmap) or length <= 0:
        return 0
    end = min(offset + length, len(buffer))
    start = offset - offset % mmap.PAGESIZE
    view = memoryview(buffer)
    try:
        for at in range(start, end, MAP_IN_CHUNK):
            bytes(view[at : min(at + MAP_IN_CHUNK, end) : mmap.PAGESIZE])
    finally:
        view.release()
    return max(0, end - start)
