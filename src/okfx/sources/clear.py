"""Delete the fetched sources (git clones and archive extractions) from the cache, for
``okfx cache clear --sources`` (platform QA: ``okfx cache clear`` left every clone, so a
one-shot command went on reading an old commit, and nothing bounded the folder).

An entry is deleted only under its lock, taken without waiting: one that a load in
another process holds at that moment is left and counted as busy. Lock files stay, as
the cache's other holders may be about to open them.
"""

from __future__ import annotations

import os
from pathlib import Path

from okfx.sources.cache import AREAS, Slot
from okfx.sources.lock import hold

__all__ = ["clear_sources"]


def clear_sources(base: Path) -> tuple[int, int]:
    """Delete every entry under ``base`` (a source cache folder) whose lock is free, with
    its leftovers; returns (entries deleted, entries busy)."""
    deleted = busy = 0
    for area in AREAS:
        area_dir = base / area
        if not area_dir.is_dir() or area_dir.is_symlink():
            continue
        keys = sorted(
            {name.split(".", 1)[0] for name in os.listdir(area_dir) if not name.startswith(".")}
        )
        for key in keys:
            slot = Slot(base, area, key)
            try:
                with hold(slot.lock_path, 0):
                    slot.remove_leftovers()
                    if os.path.lexists(slot.final):
                        slot.retire()
                        deleted += 1
            except TimeoutError:
                busy += 1
    return deleted, busy
