"""The one path guard: every path that names something inside a bundle goes through here.

Bundle paths are POSIX-style, bundle-relative and written with a leading slash
(``/metrics/revenue.md``). Two steps keep every read inside the root:

1. :func:`normalize` / :func:`join` turn text (a tool argument, a link, a frontmatter
   value) into a canonical bundle path, refusing NUL bytes, control characters,
   backslashes, Windows drive forms and any ``..`` that climbs above the root.
2. :meth:`PathGuard.host_path` maps a canonical bundle path to a host path and refuses
   it when its real path (symlinks resolved) is not inside the real path of the root.
"""

from __future__ import annotations

import os
import re

from okfx.errors import UnsafePath

__all__ = ["MAX_PATH_CHARS", "PathGuard", "is_inside", "join", "normalize", "parent_dir"]

MAX_PATH_CHARS = 4096

# Control characters (NUL included) and backslashes never appear in a safe bundle path.
_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\\]")
_DRIVE = re.compile(r"^[A-Za-z]:")


def _check_text(raw: object) -> str:
    if not isinstance(raw, str):
        raise UnsafePath(f"path must be a string, got {type(raw).__name__}", path=repr(raw))
    if len(raw) > MAX_PATH_CHARS:
        raise UnsafePath(f"path is longer than {MAX_PATH_CHARS} characters", path=raw[:80])
    bad = _FORBIDDEN.search(raw)
    if bad:
        what = "a backslash" if bad.group() == "\\" else "a control character"
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
                    "paths are bundle-relative, like '/tables/orders.md'",
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


def parent_dir(path: str) -> str:
    """The bundle directory holding ``path``: ``/a/b.md`` -> ``/a``, ``/x.md`` -> ``/``."""
    head = path.rsplit("/", 1)[0]
    return head or "/"


def is_inside(real_root: str, real_path: str) -> bool:
    """True when ``real_path`` is ``real_root`` or below it (both already real paths)."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


class PathGuard:
    """Maps bundle paths to host paths under one root, refusing anything that escapes."""

    __slots__ = ("real_root",)

    def __init__(self, root: str | os.PathLike[str]) -> None:
        # The root itself may be a symlink: compare everything against its real path.
        self.real_root = os.path.realpath(root)

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
