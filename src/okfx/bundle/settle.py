"""Files that were *racy* at the scan, found settled before the state is stored.

A file modified within :data:`~okfx.bundle.state.RACY_SECONDS` of the scan is stored as
changed, so the next load parses it again (:mod:`okfx.bundle.state`). A bundle copied or
checked out just before its first load is racy throughout, so that state was not stored
at all and the next start read every file and built the search index again, slower than
the cold start (platform QA: 21 s against 15 s at 10k).

A long load outlives the window: by the time it stores its state, a file copied at the
start is old enough to be trusted, if it is still what the load read. :func:`still_racy`
keeps racy only the files that are not: whose stat moved since the scan, whose times are
still within the window, or (for a file the load parsed) whose bytes now differ from the
bytes it parsed, compared by digest. A later write to a settled file gets a time past the
window, so its stat differs from the stored one and the next load sees it, as for any
file; an edit between the scan and the read left the file as the load parsed it, which the
stored state then holds.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Mapping

from okfx.bundle import state
from okfx.bundle.state import Manifest

__all__ = ["digest", "still_racy"]


def digest(data: bytes) -> bytes:
    """What a racy file's bytes are compared by."""
    return hashlib.blake2b(data, digest_size=16).digest()


def still_racy(
    manifest: Manifest,
    digests: Mapping[str, bytes],
    parsed: Callable[[str], bool],
    read: Callable[[str], bytes | None],
    now_ns: int | None = None,
) -> frozenset[str]:
    """The racy files of ``manifest`` that cannot be trusted yet (see the module
    docstring). ``digests``: the digest of each racy file the load read, by path;
    ``parsed(path)``: whether the load parsed the file (its content is in the state; the
    state holds only the stat of the others); ``read(path)``: the file's bytes now, None
    when it cannot be read."""
    racy = manifest.racy
    if not racy:
        return racy
    window = int(state.RACY_SECONDS * 1e9)
    trusted_before = (time.time_ns() if now_ns is None else now_ns) - window
    stats = {
        path: stat
        for path, stat in zip(manifest.paths, zip(*manifest.columns(), strict=True), strict=True)
        if path in racy
    }
    kept = []
    for path in sorted(racy):
        size, mtime, ctime, inode = stats[path]
        if not (0 <= mtime < trusted_before and 0 <= ctime < trusted_before):
            kept.append(path)
            continue
        try:
            now = os.stat(manifest.host(path))
        except OSError:
            kept.append(path)
            continue
        if (now.st_size, now.st_mtime_ns, now.st_ctime_ns, now.st_ino) != (
            size,
            mtime,
            ctime,
            inode,
        ):
            kept.append(path)
            continue
        if parsed(path):
            was = digests.get(path)
            data = None if was is None else read(path)
            if data is None or digest(data) != was:
                kept.append(path)
    return frozenset(kept)
