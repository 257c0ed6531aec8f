"""The one path guard: every path that names something inside a bundle goes through here.

Bundle paths are POSIX-style, bundle-relative and written with a leading slash
(``/metrics/revenue.md``). Two steps keep every read inside the root:

1. :func:`normalize` / :func:`join` turn text (a tool argument, a link, a frontmatter
   value) into a canonical bundle path, refusing NUL bytes, control characters,
   backslashes, Windows drive forms and any ``..`` that climbs above the root.
2. :meth:`PathGuard.host_path` maps a canonical bundle path to a host path and refuses
   it when its real path (symlinks resolved) is not inside the real path of the root.

Checking a path and opening it later leaves a window in which a folder can be swapped
for a symlink, so files are never opened by a checked path. :class:`BeneathOpener` opens
them from a descriptor of the root, one component at a time, with ``O_NOFOLLOW`` on
every one (symlinks inside the bundle were resolved once, by the walk, to the real path
that is opened): a component swapped since then fails the open (``OSError``), and the
root itself must still be the folder that was loaded.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Collection
from types import TracebackType

from okfx.errors import UnsafePath

__all__ = [
    "MAX_PATH_CHARS",
    "BeneathOpener",
    "PathGuard",
    "forbidden_char",
    "forbidden_in",
    "hidden_part",
    "hidden_said",
    "is_inside",
    "join",
    "missing_folder",
    "normalize",
    "open_error",
    "parent_dir",
]

MAX_PATH_CHARS = 4096

# Control characters (NUL included), backslashes and the bidirectional embedding, override
# and isolate controls (which make a path read other than it is: "Trojan Source") never
# appear in a safe bundle path (agent QA: U+202E came back inside an error message).
_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\\\u202a-\u202e\u2066-\u2069]")
_DRIVE = re.compile(r"^[A-Za-z]:")


def forbidden_in(text: str) -> bool:
    """Whether ``text`` holds a character no bundle path may: a control character, a
    backslash or a direction control (the walk skips such a name, as a read refuses it)."""
    return _FORBIDDEN.search(text) is not None


def forbidden_char(text: str) -> str | None:
    """The first character of ``text`` no bundle path may hold, in words ("a backslash",
    "a control character", "the direction control U+202E"), or None."""
    bad = _FORBIDDEN.search(text)
    if bad is None:
        return None
    char = bad.group()
    if char == "\\":
        return "a backslash"
    if char < "\x80":
        return "a control character"
    return f"the direction control U+{ord(char):04X}"


def _check_text(raw: object) -> str:
    if not isinstance(raw, str):
        raise UnsafePath(f"path must be a string, got {type(raw).__name__}", path=repr(raw))
    if len(raw) > MAX_PATH_CHARS:
        raise UnsafePath(f"path is longer than {MAX_PATH_CHARS} characters", path=raw[:80])
    what = forbidden_char(raw)
    if what is not None:
        raise UnsafePath(
            f"path {raw!r} contains {what}; use bundle paths like '/tables/orders.md'",
            path=raw,
        )
    if _DRIVE.match(raw):
        raise UnsafePath(f"path {raw!r} looks like a Windows drive path", path=raw)
    return raw


def _collapse(parts: list[str], raw: str) -> str:
    out: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                raise UnsafePath(
                    f"path {raw!r} climbs above the bundle root; "
                    "paths are bundle-relative, like '/tables/orders.md' (a link's href "
                    "is relative to the concept that holds it: get_neighbors gives each "
                    "link's bundle path)",
                    path=raw,
                )
            out.pop()
        else:
            out.append(part)
    return "/" + "/".join(out)


def normalize(raw: object) -> str:
    """Canonical bundle path for ``raw``, read as bundle-relative (a leading ``/`` is optional).

    >>> normalize("metrics/../tables/orders.md")
    '/tables/orders.md'
    """
    text = _check_text(raw)
    return _collapse(text.split("/"), text)


def join(base_dir: str, rel: str) -> str:
    """Resolve ``rel`` against the bundle directory ``base_dir`` (``/`` means the root).

    A ``rel`` starting with ``/`` is bundle-absolute and ignores ``base_dir``.
    """
    text = _check_text(rel)
    if text.startswith("/"):
        return _collapse(text.split("/"), text)
    return _collapse(base_dir.split("/") + text.split("/"), text)


def hidden_part(path: str) -> str | None:
    """The first name of bundle path ``path`` that starts with ``.`` (a hidden file or
    folder, which the walk skips: ``.github.md``, ``.notes/``), or None."""
    return next(
        (part for part in path.split("/") if part[:1] == "." and part not in (".", "..")), None
    )


def hidden_said(path: str) -> str | None:
    """Why okfx does not read ``path`` when a name of it is hidden, else None."""
    part = hidden_part(path)
    if part is None:
        return None
    return (
        f"{part!r} is a hidden name (it starts with '.'), and okfx skips hidden files and "
        "folders, as it skips .git/"
    )


def parent_dir(path: str) -> str:
    """The bundle directory holding ``path``: ``/a/b.md`` -> ``/a``, ``/x.md`` -> ``/``."""
    head = path.rsplit("/", 1)[0]
    return head or "/"


def is_inside(real_root: str, real_path: str) -> bool:
    """True when ``real_path`` is ``real_root`` or below it (both already real paths)."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NO_FOLLOW
# O_NONBLOCK: a FIFO swapped in for a file must not block the open.
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NO_FOLLOW
#: Whether files can be opened relative to a folder descriptor (POSIX, not Windows).
BENEATH = os.open in os.supports_dir_fd and bool(getattr(os, "O_NOFOLLOW", 0))


class PathGuard:
    """Maps bundle paths to host paths under one root, refusing anything that escapes."""

    __slots__ = ("real_root", "root_id")

    def __init__(self, root: str | os.PathLike[str]) -> None:
        # The root itself may be a symlink: compare everything against its real path.
        self.real_root = os.path.realpath(root)
        try:
            st = os.stat(self.real_root)
            self.root_id: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except OSError:
            self.root_id = None  # a missing root is reported by the load

    def opener(self) -> BeneathOpener:
        """A :class:`BeneathOpener` below this root (close it, or use it in ``with``)."""
        return BeneathOpener(self)

    def open(self, rel: str) -> int:
        """A read-only descriptor of the file at ``rel`` (a real path relative to the
        root, no leading slash), opened as :class:`BeneathOpener` does."""
        with self.opener() as opener:
            return opener.open(rel)

    def host_path(self, bundle_path: object) -> str:
        """Host path for ``bundle_path``; raises :class:`UnsafePath` if it leaves the root."""
        canon = normalize(bundle_path)
        candidate = os.path.join(self.real_root, canon.lstrip("/"))
        real = os.path.realpath(candidate)
        if not is_inside(self.real_root, real):
            raise UnsafePath(
                f"{canon} resolves outside the bundle (a symlink points out of the root)",
                path=canon,
            )
        return real

    def contains_host(self, host_path: str) -> bool:
        """True when the real path of ``host_path`` is inside the root."""
        return is_inside(self.real_root, os.path.realpath(host_path))


class BeneathOpener:
    """Opens files and folders below a root without following any symlink on the way.

    Each component of a path is opened relative to the folder descriptor before it, with
    ``O_NOFOLLOW``; a component that is now a symlink fails with ``OSError``, and so does
    a root that is no longer the folder the guard was made for. The folders of the last
    path stay open, so opening the files of a sorted walk costs about one ``open`` each.
    Where folder descriptors are not available (Windows), the path is checked with
    ``realpath`` and opened with ``O_NOFOLLOW`` on its last component.
    """

    __slots__ = ("guard", "root_fd", "chain")

    def __init__(self, guard: PathGuard) -> None:
        self.guard = guard
        self.root_fd = -1
        self.chain: list[tuple[str, int]] = []  # (name, descriptor) of open folders

    def __enter__(self) -> BeneathOpener:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        for _, fd in self.chain:
            os.close(fd)
        self.chain.clear()
        if self.root_fd >= 0:
            os.close(self.root_fd)
            self.root_fd = -1

    def _root(self) -> int:
        if self.root_fd < 0:
            fd = os.open(self.guard.real_root, _DIR_FLAGS)
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self.guard.root_id:
                os.close(fd)
                raise OSError(errno.ESTALE, "the bundle folder was replaced since it was loaded")
            self.root_fd = fd
        return self.root_fd

    def relative(self, host: str) -> str:
        """The path of ``host`` (a real path below the root, as the walk gives it)
        relative to the root, as :meth:`open` takes it."""
        return host[len(self.guard.real_root.rstrip(os.sep)) + 1 :]

    def open(self, rel: str) -> int:
        """A read-only, non-blocking descriptor of the file at ``rel`` (relative to the
        root, ``/``-separated, no ``.`` or ``..``); the caller closes it. Raises
        ``OSError``. Read it with :func:`okfx.bundle.walk.read_bytes` or ``read_head``,
        which refuse anything but a regular file."""
        if not BENEATH:
            return self._open_checked(rel)
        *folders, leaf = rel.split("/")
        parent = self._descend(folders, rel)
        if leaf in ("", ".", ".."):
            raise OSError(errno.EINVAL, f"not a plain relative path: {rel!r}")
        return os.open(leaf, _FILE_FLAGS, dir_fd=parent)

    def folder(self, rel: str) -> int:
        """A descriptor of the folder at ``rel`` (``""`` is the root), owned by this
        opener: valid until its next call, never to be closed by the caller."""
        return self._descend(rel.split("/") if rel else [], rel)

    def _descend(self, folders: list[str], rel: str) -> int:
        """The descriptor of ``folders`` below the root, reusing the open ones."""
        if "" in folders or "." in folders or ".." in folders:
            raise OSError(errno.EINVAL, f"not a plain relative path: {rel!r}")
        chain = self.chain
        keep = 0
        while keep < len(chain) and keep < len(folders) and chain[keep][0] == folders[keep]:
            keep += 1
        for _, fd in chain[keep:]:
            os.close(fd)
        del chain[keep:]
        parent = chain[-1][1] if chain else self._root()
        for name in folders[keep:]:
            parent = os.open(name, _DIR_FLAGS, dir_fd=parent)
            chain.append((name, parent))
        return parent

    def _open_checked(self, rel: str) -> int:
        host = os.path.join(self.guard.real_root, *rel.split("/"))
        if not is_inside(self.guard.real_root, os.path.realpath(host)):
            raise OSError(errno.EXDEV, f"{rel} resolves outside the bundle")
        return os.open(host, _FILE_FLAGS)


def open_error(exc: OSError) -> str:
    """Why a :class:`BeneathOpener` open failed, in words for a message."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", errno.ELOOP)):
        return (
            "it changed since the bundle was loaded (a symlink or a file is now where a "
            "folder or file was), and okfx does not follow it"
        )
    return str(exc.strerror or exc)


def missing_folder(directories: Collection[str], target: str) -> str | None:
    """The first folder on the way to ``target`` that ``directories`` (a bundle's) lacks
    (``/implementations/`` for ``/implementations/web/button``), or None when the
    target's folder is there and only its file is missing: m3e's 47 broken links all
    lead into a folder beside the bundle, outside its root."""
    parts = target.strip("/").split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/" + "/".join(parts[:depth])
        if folder not in directories:
            return folder + "/"
    return None
