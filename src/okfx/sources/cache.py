"""Where fetched sources live on disk, and how a finished entry is published.

Layout under the cache directory (``<area>`` is ``git`` or ``archive``)::

    <area>/<key>.lock          flock target, never deleted
    <area>/<key>/okfx-source.json   written last, inside the temp dir, before the rename
    <area>/<key>/tree/         the checked-out or extracted files
    <area>/<key>.tmp-*/        work in progress; removed by the next holder of the lock
    <area>/<key>.old-*/        an entry being replaced by a refresh

An entry is trusted only when its folder exists under the final name *and* holds a metadata
file saying it is complete. The folder only gets that name through ``os.rename`` of a finished
temp dir, so a clone or extraction killed half-way is never mistaken for a good one.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENV_VAR", "DEFAULT_CACHE_DIRNAME", "Slot", "resolve_cache_dir"]

CACHE_ENV_VAR = "OKFX_CACHE_DIR"
DEFAULT_CACHE_DIRNAME = ".okfx_cache"
META_NAME = "okfx-source.json"
META_FORMAT = 1

_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by okfx.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def resolve_cache_dir(cache_dir: str | os.PathLike[str] | None) -> Path:
    """The cache directory: the argument, else ``$OKFX_CACHE_DIR``, else ``./.okfx_cache``."""
    if cache_dir is not None:
        base = Path(cache_dir)
    elif os.environ.get(CACHE_ENV_VAR):
        base = Path(os.environ[CACHE_ENV_VAR])
    else:
        base = Path.cwd() / DEFAULT_CACHE_DIRNAME
    base = base.expanduser().absolute()
    try:
        base.mkdir(parents=True)
    except FileExistsError:
        return base
    # Only mark a folder we created: a user's existing folder keeps its own .gitignore.
    for name, text in ((".gitignore", "*\n"), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
        _write_new(base / name, text)
    return base


class Slot:
    """The paths of one cache entry, identified by ``key`` within an ``area``."""

    def __init__(self, base: Path, area: str, key: str) -> None:
        self.area_dir = base / area
        self.area_dir.mkdir(parents=True, exist_ok=True)
        self.key = key
        self.final = self.area_dir / key
        self.lock_path = self.area_dir / f"{key}.lock"

    @property
    def tree(self) -> Path:
        return self.final / "tree"

    def read_meta(self) -> dict[str, Any] | None:
        """The published entry's metadata, or None if there is no complete entry."""
        try:
            meta = json.loads((self.final / META_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("format") != META_FORMAT:
            return None
        if meta.get("complete") is not True or not self.tree.is_dir():
            return None
        return meta

    def remove_leftovers(self) -> None:
        """Delete temp and replaced dirs of this key; call only while holding its lock."""
        for pattern in (f"{self.key}.tmp-*", f"{self.key}.old-*"):
            for leftover in self.area_dir.glob(pattern):
                shutil.rmtree(leftover, ignore_errors=True)
        if self.final.exists() and self.read_meta() is None:
            # Published by hand or damaged: not ours to trust, so rebuild it.
            self._retire(self.final)

    def new_temp(self) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{self.key}.tmp-", dir=self.area_dir))

    def publish(self, temp: Path, meta: dict[str, Any]) -> None:
        """Mark ``temp`` complete and move it to the final name, replacing any old entry."""
        record = {"format": META_FORMAT, "complete": True, **meta}
        (temp / META_NAME).write_text(json.dumps(record, indent=1), encoding="utf-8")
        if self.final.exists():
            self._retire(self.final)
        os.rename(temp, self.final)

    def _retire(self, path: Path) -> None:
        # Rename first so the final name is free at once; deleting a big tree takes time.
        retired = Path(tempfile.mkdtemp(prefix=f"{self.key}.old-", dir=self.area_dir))
        os.rename(path, retired / "entry")
        shutil.rmtree(retired, ignore_errors=True)


def _write_new(path: Path, text: str) -> None:
    try:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        pass
