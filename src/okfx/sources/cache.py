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

What is in the cache is served as the source it was made from, so the cache folder and each
area in it must be private (:func:`okfx.cachedir.private_dir`: created ``0700``, refused when
another user could write to it or redirect it), and okfx trusts nothing in it that it did
not create: an entry, its tree or its metadata file that is a symlink, or is owned by another
user, is not read but rebuilt, and a lock file that is a symlink is refused.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from okfx.cachedir import CACHE_ROOT_ENV, private_dir, user_cache_root
from okfx.sources.trees import remove_tree, tree_files

__all__ = [
    "AREAS",
    "CACHE_ENV_VAR",
    "Slot",
    "default_cache_dir",
    "origin_of",
    "owned",
    "published_meta",
    "resolve_cache_dir",
    "source_usage",
]

#: The areas of a source cache: one folder per kind of source (``Slot(base, area, key)``).
AREAS = ("git", "archive")

CACHE_ENV_VAR = "OKFX_CACHE_DIR"
META_NAME = "okfx-source.json"
META_FORMAT = 1
_META_MAX = 1 << 20  # a metadata file is a few hundred bytes

_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by okfx.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def default_cache_dir() -> Path:
    """``sources`` in the user's okfx cache folder (:func:`okfx.cachedir.user_cache_root`),
    never the working folder: a shared one (``/tmp``, a checkout) is someone else's too."""
    return user_cache_root() / "sources"


def resolve_cache_dir(cache_dir: str | os.PathLike[str] | None) -> Path:
    """The cache folder: the argument, else ``$OKFX_CACHE_DIR``, else
    :func:`default_cache_dir`; created ``0700`` when missing.

    Raises :class:`~okfx.errors.UnsafeCacheDir` when another user could write to it or
    redirect it (:func:`okfx.cachedir.private_dir`).
    """
    # The refusal names the setting that chose the folder (sources QA: it named
    # $OKFX_CACHE_HOME, which $OKFX_CACHE_DIR overrides, and the state cache's off switch).
    if cache_dir is not None:
        base, advice = Path(cache_dir), "Pass a cache folder that only you can write."
    elif os.environ.get(CACHE_ENV_VAR):
        base = Path(os.environ[CACHE_ENV_VAR])
        advice = f"Set ${CACHE_ENV_VAR} to a folder that only you can write, or unset it."
    else:
        base = default_cache_dir()
        advice = (
            f"Set ${CACHE_ENV_VAR} (the sources cache) or ${CACHE_ROOT_ENV} (every okfx "
            "cache) to a folder that only you can write."
        )
    base = base.expanduser().absolute()
    created = not os.path.lexists(base)
    base = private_dir(base, advice=advice)
    if created:
        # Only mark a folder we created: a user's existing folder keeps its own .gitignore.
        for name, text in ((".gitignore", "*\n"), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            _write_new(base / name, text)
    return base


def owned(st: os.stat_result, kind: int) -> bool:
    """``st`` is of a ``kind`` (``stat.S_IFDIR``, ``S_IFREG``) and owned by this user
    (always, where the platform has no user ids)."""
    getuid = getattr(os, "getuid", None)
    return stat.S_IFMT(st.st_mode) == kind and (getuid is None or st.st_uid == getuid())


def _ours(path: Path, kind: int) -> bool:
    """``path`` itself, not a symlink's target, is :func:`owned`."""
    try:
        return owned(os.lstat(path), kind)
    except OSError:
        return False


class Slot:
    """The paths of one cache entry, identified by ``key`` within an ``area``."""

    def __init__(self, base: Path, area: str, key: str) -> None:
        self.area_dir = private_dir(base / area)
        self.key = key
        self.final = self.area_dir / key
        self.lock_path = self.area_dir / f"{key}.lock"

    @property
    def tree(self) -> Path:
        return self.final / "tree"

    def read_meta(self) -> dict[str, Any] | None:
        """The published entry's metadata, or None if there is no complete entry that
        this user made (a symlink or a foreign file anywhere in it counts as none)."""
        return published_meta(self.final)

    def remove_leftovers(self) -> None:
        """Delete temp and replaced dirs of this key; call only while holding its lock."""
        for pattern in (f"{self.key}.tmp-*", f"{self.key}.old-*"):
            for leftover in self.area_dir.glob(pattern):
                remove_tree(leftover)
        if os.path.lexists(self.final) and self.read_meta() is None:
            # Published by hand, planted or damaged: not ours to trust, so rebuild it.
            self.retire()

    def new_temp(self) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{self.key}.tmp-", dir=self.area_dir))

    def publish(self, temp: Path, meta: dict[str, Any]) -> None:
        """Mark ``temp`` complete and move it to the final name, replacing any old entry."""
        record = {"format": META_FORMAT, "complete": True, **meta}
        (temp / META_NAME).write_text(json.dumps(record, indent=1), encoding="utf-8")
        if os.path.lexists(self.final):
            self.retire()
        os.rename(temp, self.final)

    def retire(self) -> None:
        """Delete the published entry; call only while holding its lock."""
        # Rename first so the final name is free at once; deleting a big tree takes time.
        retired = Path(tempfile.mkdtemp(prefix=f"{self.key}.old-", dir=self.area_dir))
        os.rename(self.final, retired / "entry")
        remove_tree(retired)


def published_meta(final: Path) -> dict[str, Any] | None:
    """The metadata of the entry at ``final`` (the folder holding ``tree/``), or None if it
    is no complete entry this user made (a symlink or a foreign file counts as none)."""
    if not (_ours(final, stat.S_IFDIR) and _ours(final / "tree", stat.S_IFDIR)):
        return None
    try:
        fd = os.open(final / META_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            if not owned(os.fstat(handle.fileno()), stat.S_IFREG):
                return None
            meta = json.loads(handle.read(_META_MAX).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("format") != META_FORMAT:
        return None
    return meta if meta.get("complete") is True else None


def origin_of(root: Path) -> dict[str, Any] | None:
    """Where a bundle loaded from the cache came from, read from its entry's metadata: a
    git clone's URL (credentials redacted when it was written), ref and commit, an
    archive's sha256, and the folder of the clone or extraction the bundle is (``subdir``
    for git, ``folder`` for an archive: sources QA, two folders of one archive read the
    same); None for a folder read in place. ``root`` is the entry's ``tree/`` or a folder
    in it, at any depth."""
    for folder in (root, *root.parents):
        if folder.name == "tree":
            meta = published_meta(folder.parent)
            if meta is not None:
                keys = ("kind", "url", "ref", "commit", "sha256")
                origin = {key: meta[key] for key in keys if meta.get(key) is not None}
                inside = root.relative_to(folder).as_posix()
                if inside != ".":
                    origin["subdir" if meta.get("kind") == "git" else "folder"] = inside
                return origin
    return None


def _write_new(path: Path, text: str) -> None:
    try:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        pass


def source_usage(base: Path) -> tuple[int, int, int]:
    """How many git clones and archive extractions the source cache at ``base`` holds,
    and their bytes (``okfx cache path``); symlinks are not followed."""
    counts = dict.fromkeys(AREAS, 0)
    size = 0
    for area in counts:
        folder = base / area
        if not folder.is_dir() or folder.is_symlink():
            continue
        for entry in folder.iterdir():
            if entry.is_dir() and not entry.is_symlink() and "." not in entry.name:
                counts[area] += 1
        for path in tree_files(folder):
            try:
                size += os.lstat(path).st_size
            except OSError:
                continue
    return counts["git"], counts["archive"], size
