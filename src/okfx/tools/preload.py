"""Map a server's concept texts into its process as it starts, not call by call.

A bundle read back from its state keeps its concepts' texts in a memory-mapped file
(:mod:`okfx.bundle.texts`): grep searches them, and snippets and reads take bodies from
them. Left alone, a process maps each page of that file the first time a call reads it:
a page fault in the middle of that call (a read from the disk when the page cache has
let the page go), and a server whose resident memory climbs through its first minute
of calls as every worker maps the same file page by page. Measured with
``bench/serve_load.py`` (10k concepts, two workers, 50 clients, 60 s): the 31.6 MB texts
file went from partly to wholly mapped in each worker within the run's first 10-16 s,
+35 MB of the run's +53 MB.

:func:`preload` maps them all before a server process answers (``okfx serve --preload``,
on by default over HTTP): one read of a byte of each page, a few milliseconds when the
file is in the page cache. The pages are the page cache's, shared by every process that
maps the file (each worker counts them in its RSS; PSS splits them), so a worker's
memory is what it will be from its first call on, and grows only by what calls allocate.
"""

from __future__ import annotations

from okfx.memory import map_in
from okfx.tools.grepping import text_parts
from okfx.tools.manager import KnowledgeManager

__all__ = ["preload"]


def preload(manager: KnowledgeManager) -> int:
    """Map every page of the concept texts of ``manager``'s bundles that a file holds
    into this process now (:func:`okfx.memory.map_in`); returns the bytes mapped (0 when
    every bundle keeps its texts in memory, as a small or just-parsed one does)."""
    total = 0
    for part in text_parts(list(manager.bundles.values())):
        total += map_in(part.buffer, part.base, part.size)
        total += map_in(part.fbuffer, part.fbase, part.fsize)
    return total
