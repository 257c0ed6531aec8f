"""Give freed heap memory back to the operating system, where the C library can.

CPython returns a large block to the system when it is freed, but many medium blocks
freed in the middle of the heap (a build's per-term posting arrays) stay part of the
process until glibc's ``malloc_trim`` releases their pages. Elsewhere (musl, macOS,
Windows) :func:`release_free_memory` does nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache

__all__ = ["release_free_memory"]


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library this process runs on
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Return the free pages of the C heap to the system; True when it could try."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
