"""Keeps the state cache within a size and an age: what was used least recently goes.

Every key of the state cache (one bundle, with its limits and options, read by one okfx)
has a few files (``KEY.bundle.okfs``, ``KEY.search.okfs``, ...), and a 100k-concept bundle's
come to about 700 MB. A new okfx, other limits or an edited option make a new key, and the
old key's files would stay forever. So after each store :func:`prune` deletes

- the files of every key not used for :data:`MAX_AGE_DAYS` days;
- then, while the folder holds more than its bound (:func:`max_bytes`: 5 GB, or
  ``OKFX_STATE_CACHE_MAX``), the files of the key used least recently;
- temporary files a process killed while storing left behind (older than an hour).

A key's last use is the newest modification time of its files: a store writes them, and a
load that reads one touches it (at most once an hour, :func:`touch`). The key just stored
is never deleted, so one bundle larger than the bound still keeps its own state. Deleting a
file another process has open or mapped is safe where okfx runs: that process keeps
reading it, and the next load builds it again.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DEFAULT_MAX_BYTES",
    "LEFTOVER_SECONDS",
    "MAX_AGE_DAYS",
    "MAX_ENV",
    "TOUCH_SECONDS",
    "max_bytes",
    "parse_size",
    "prune",
    "touch",
]

logger = logging.getLogger("okfx")

#: Environment variable with the bound of the state cache folder: ``5G``, ``800M``, bytes.
MAX_ENV = "OKFX_STATE_CACHE_MAX"
#: The bound without :data:`MAX_ENV`.
DEFAULT_MAX_BYTES = 5 * 1000**3
#: A key unused this many days is deleted at the next store.
MAX_AGE_DAYS = 30
#: A load touches the file it read when its time is older than this (seconds).
TOUCH_SECONDS = 3600.0
#: A temporary state file untouched this long was left by a process killed mid-store.
LEFTOVER_SECONDS = 3600.0
_UNITS = {"": 1, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4}
_warned: set[str] = set()


def parse_size(text: str) -> int:
    """Bytes from ``"5G"``, ``"800M"``, ``"64k"``, ``"123"`` (a trailing ``B`` allowed);
    ValueError for anything else."""
    value = text.strip().upper().removesuffix("B").strip()
    unit = value[-1:] if value[-1:] in _UNITS else ""
    number = value[: len(value) - len(unit)].strip()
    try:
        size = float(number)
    except ValueError:
        raise ValueError(f"not a size: {text!r}") from None
    if not size >= 0 or size == float("inf"):
        raise ValueError(f"not a size: {text!r}")
    return int(size * _UNITS[unit])


def max_bytes(environ: Mapping[str, str] | None = None) -> int:
    """The folder's bound: :data:`MAX_ENV` when set to a size, else
    :data:`DEFAULT_MAX_BYTES` (an unreadable value is reported once)."""
    text = (os.environ if environ is None else environ).get(MAX_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(text)
    except ValueError:
        if text not in _warned:
            _warned.add(text)
            logger.warning(
                "okfx: %s=%r is not a size (write it like 5G or 800M); the state cache "
                "keeps its default bound of 5 GB",
                MAX_ENV,
                text,
            )
        return DEFAULT_MAX_BYTES


def touch(fd: int, st: os.stat_result, now: float | None = None) -> None:
    """Mark the state file open on ``fd`` (stat ``st``) as used now, when its time is
    older than :data:`TOUCH_SECONDS`; a file that cannot be touched is left as it is."""
    now = time.time() if now is None else now
    if now - st.st_mtime > TOUCH_SECONDS:
        try:
            os.utime(fd)
        except (OSError, NotImplementedError):
            pass


@dataclass
class _Key:
    used: float = 0.0
    size: int = 0
    paths: list[Path] = field(default_factory=list)


def prune(
    directory: Path,
    keep: str,
    *,
    suffix: str,
    limit: int | None = None,
    now: float | None = None,
) -> list[str]:
    """Delete what the bound and the age say must go from ``directory``; never the files
    of ``keep``. Returns the keys deleted (least recently used first). Never raises."""
    limit = max_bytes() if limit is None else limit
    now = time.time() if now is None else now
    try:
        keys = _keys(directory, suffix, now)
    except OSError as exc:
        logger.warning("okfx state cache %s not pruned: %s", directory, exc)
        return []
    total = sum(k.size for k in keys.values())
    oldest = now - MAX_AGE_DAYS * 86400
    gone: list[str] = []
    for name, key in sorted(keys.items(), key=lambda item: (item[1].used, item[0])):
        if name == keep or (key.used >= oldest and total <= limit):
            continue
        if _delete(key.paths):
            total -= key.size
            gone.append(name)
    return gone


def _keys(directory: Path, suffix: str, now: float) -> dict[str, _Key]:
    keys: dict[str, _Key] = {}
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if name.startswith("."):  # a temporary file of a store
                if now - st.st_mtime > LEFTOVER_SECONDS:
                    _delete([Path(entry.path)])
                continue
            if not name.endswith(suffix):
                continue
            key = keys.setdefault(name.split(".", 1)[0], _Key())
            key.used = max(key.used, st.st_mtime)
            key.size += st.st_size
            key.paths.append(Path(entry.path))
    return keys


def _delete(paths: list[Path]) -> bool:
    deleted = False
    for path in paths:
        try:
            os.unlink(path)
            deleted = True
        except OSError:
            pass  # gone already, or held open where that forbids it
    return deleted
