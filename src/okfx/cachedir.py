"""Where okfx keeps its caches, and the one check that a cache folder is ours alone.

Both caches (fetched sources, and the on-disk load state) hold things okfx later trusts:
a checked-out tree served under a git URL's name, or state read back into a bundle. So
whoever can write into a cache folder, or swap one of the folders on its path for a
symlink, could make okfx serve their files as someone else's. :func:`private_dir` refuses
such a folder with :class:`~okfx.errors.UnsafeCacheDir`; nothing okfx creates in it is
readable by anyone else (``0700``).

The rule, on POSIX, for every folder on the path as written and on the path it resolves
to: owned by this user or by root, and writable by no one else, unless it has the sticky
bit (like ``/tmp``), where others cannot rename or delete what they do not own; every
symlink on the path is owned by this user or by root; the cache folder itself is owned by
this user and writable by no one else. Where the platform has no user ids (Windows), the
folder is used as it is.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from okfx.errors import UnsafeCacheDir

__all__ = ["ADVICE", "CACHE_ROOT_ENV", "private_dir", "user_cache_root"]

#: Overrides the platform cache folder for every okfx cache.
CACHE_ROOT_ENV = "OKFX_CACHE_HOME"


def user_cache_root() -> Path:
    """The folder okfx's caches live under, never inside a bundle or the working folder.

    ``$OKFX_CACHE_HOME`` when set; else ``$XDG_CACHE_HOME/okfx`` (``~/.cache/okfx``) on
    Linux and other POSIX systems, ``~/Library/Caches/okfx`` on macOS and
    ``%LOCALAPPDATA%\\okfx\\Cache`` on Windows.
    """
    override = os.environ.get(CACHE_ROOT_ENV)
    if override:
        return Path(override).expanduser().absolute()
    home = Path.home()
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        return (Path(local) if local else home / "AppData" / "Local") / "okfx" / "Cache"
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "okfx"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".cache"
    return base / "okfx"


#: What a refusal tells to do, unless the caller knows better (which setting chose it).
ADVICE = f"Use a folder that only you can write (set ${CACHE_ROOT_ENV} or pass a cache folder)."


def private_dir(path: str | os.PathLike[str], *, create: bool = True, advice: str = ADVICE) -> Path:
    """``path`` as an absolute folder that only this user can change, created ``0700``
    (with any missing parents) when ``create``.

    Raises :class:`~okfx.errors.UnsafeCacheDir` naming the folder and why, when the rule in
    the module docstring does not hold, or when the folder is missing and not ``create``;
    its message ends with ``advice``, which should name the setting that chose the folder
    (sources QA: the folder came from ``$OKFX_CACHE_DIR`` and the advice did not say so).
    """
    try:
        return _private_dir(path, create=create)
    except _Refused as refused:
        raise UnsafeCacheDir(
            f"okfx will not use the cache folder {refused.folder}: {refused.culprit} "
            f"{refused.why}. {advice}",
            path=str(refused.folder),
        ) from refused.__cause__


class _Refused(Exception):
    def __init__(self, folder: Path, culprit: Path, why: str) -> None:
        super().__init__(why)
        self.folder, self.culprit, self.why = folder, culprit, why


def _private_dir(path: str | os.PathLike[str], *, create: bool) -> Path:
    folder = Path(path).expanduser().absolute()
    if create:
        # The folders already there are checked first: nothing is made inside a folder
        # okfx then refuses (platform QA: a 0700 subfolder was left in a 0777 one).
        existing = folder
        while not os.path.lexists(existing) and existing != existing.parent:
            existing = existing.parent
        if existing != folder:
            _check_path(folder, existing)
        _make(folder)
    _check(folder)
    return folder


def _refuse(folder: Path, culprit: Path, why: str) -> _Refused:
    return _Refused(folder, culprit, why)


def _make(folder: Path) -> None:
    missing = []
    probe = folder
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for part in reversed(missing):
        try:
            os.mkdir(part, 0o700)
        except FileExistsError:
            pass  # made meanwhile by another process; _check decides if it is usable
        except OSError as exc:
            raise _refuse(folder, part, f"cannot be created ({exc.strerror})") from exc


def _check(folder: Path) -> None:
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        if not folder.is_dir():
            raise _refuse(folder, folder, "is not a folder")
        return
    uid = getuid()
    try:
        leaf = os.lstat(folder)
    except OSError as exc:
        raise _refuse(folder, folder, f"cannot be read ({exc.strerror})") from exc
    if stat.S_ISLNK(leaf.st_mode):
        raise _refuse(folder, folder, "is a symlink")
    if not stat.S_ISDIR(leaf.st_mode):
        raise _refuse(folder, folder, "is not a folder")
    if leaf.st_uid != uid:
        raise _refuse(folder, folder, "is owned by another user")
    if leaf.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _refuse(folder, folder, "is writable by other users")
    _check_path(folder, folder)


def _check_path(folder: Path, target: Path) -> None:
    """Every folder on ``target``'s path, as written and as it resolves, and ``target``
    itself: owned by this user or root, writable by no one else but under a sticky bit.
    ``folder`` is the cache folder the refusal names."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return
    trusted = {getuid(), 0}
    for chain in (target, Path(os.path.realpath(target))):
        for part in [*reversed(chain.parents), chain]:
            try:
                st = os.lstat(part)
            except OSError as exc:
                raise _refuse(folder, part, f"cannot be read ({exc.strerror})") from exc
            if st.st_uid not in trusted:
                raise _refuse(folder, part, "is owned by another user")
            if stat.S_ISLNK(st.st_mode):
                continue  # its target is checked on the resolved path
            # In a shared sticky folder (/tmp) others cannot rename or delete what they do
            # not own, and everything on the path must be ours or root's anyway.
            if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
                raise _refuse(folder, part, "is writable by other users")
