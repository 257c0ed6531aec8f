"""Walk a bundle folder and read its files without ever leaving the root.

The walk is iterative (deep trees cannot exhaust the stack), sorted (the same bundle
gives the same order everywhere), skips hidden names, never opens anything that is not
a regular file, and follows a symlink only when its real target stays inside the real
root (directories at most once, so symlink loops end). Folders are listed through
descriptors opened below the root without following a symlink
(:class:`~okfx.bundle.paths.BeneathOpener`), so one swapped for a symlink while the
walk runs is reported unreadable, never listed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from okfx.bundle.paths import BENEATH, BeneathOpener, PathGuard, forbidden_in, is_inside
from okfx.limits import Limits

__all__ = [
    "Dropped",
    "FileEntry",
    "Walk",
    "decode_text",
    "encoding_problem",
    "read_bytes",
    "read_file",
    "read_head",
    "read_page",
    "walk",
]

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_OPEN_FLAGS |= getattr(os, "O_CLOEXEC", 0)


@dataclass(slots=True)
class FileEntry:
    path: str  # canonical bundle path
    host: str  # host path to open (a real path for symlinked files)


@dataclass(slots=True)
class Dropped:
    """What a cap left out: how many, and the first bundle path it hit."""

    count: int = 0
    first: str = ""

    def add(self, path: str) -> None:
        if not self.count:
            self.first = path
        self.count += 1


@dataclass(slots=True)
class Walk:
    files: list[FileEntry] = field(default_factory=list)
    dirs: set[str] = field(default_factory=lambda: {"/"})


Warn = Callable[[str, str, str], None]


def _bundle_child(parent: str, name: str) -> str:
    return ("" if parent == "/" else parent) + "/" + name


def walk(real_root: str, limits: Limits, warn: Warn) -> Walk:
    """All regular files and directories under ``real_root`` (which must be a real path)."""
    result = Walk()
    skipped = Dropped()  # folders past max_dirs, not walked
    try:
        return _walk(real_root, limits, warn, result, skipped)
    finally:
        if skipped.count:
            warn(
                skipped.first,
                "too_many_dirs",
                f"the bundle reached max_dirs={limits.max_dirs}: {skipped.count} more "
                f"folders (from {skipped.first} on) and everything in them were not read. "
                "Raise the cap with Limits(max_dirs=...) when the machine has the memory "
                "for more.",
            )


def _walk(real_root: str, limits: Limits, warn: Warn, result: Walk, skipped: Dropped) -> Walk:
    with PathGuard(real_root).opener() as opener:
        return _walk_below(real_root, limits, warn, result, skipped, opener)


def _walk_below(
    real_root: str,
    limits: Limits,
    warn: Warn,
    result: Walk,
    skipped: Dropped,
    opener: BeneathOpener,
) -> Walk:
    seen_dirs: set[tuple[int, int]] = set()
    root_stat = os.stat(real_root)
    seen_dirs.add((root_stat.st_dev, root_stat.st_ino))
    stack: list[tuple[str, str, int]] = [(real_root, "/", 0)]
    while stack:
        host_dir, bdir, depth = stack.pop()
        try:
            listed = opener.folder(opener.relative(host_dir)) if BENEATH else host_dir
            with os.scandir(listed) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            warn(bdir, "unreadable", f"cannot list folder: {exc.strerror or exc}")
            continue
        prefix = host_dir.rstrip(os.sep) + os.sep
        subdirs: list[tuple[str, str, int]] = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            bpath = _bundle_child(bdir, name)
            # the characters the path guard refuses, so no file is listed that a read of
            # its own path refuses (security QA: a name holding U+202E)
            if forbidden_in(name):
                message = "name contains a backslash, a control character or a direction control"
                warn(bpath, "unsafe_path", message)
                continue
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:  # undecodable bytes arrive as lone surrogates
                warn(bpath.encode("utf-8", "replace").decode(), "unsafe_path", "name is not UTF-8")
                continue
            try:
                if len(result.dirs) + len(subdirs) >= limits.max_dirs and entry.is_dir():
                    skipped.add(bpath)  # a folder costs about a kilobyte of memory
                    continue
                host = prefix + name
                if entry.is_symlink():
                    real = os.path.realpath(host)
                    if not is_inside(real_root, real):
                        warn(bpath, "unsafe_path", "symlink points outside the bundle; skipped")
                        continue
                    target = os.stat(real)
                    if stat.S_ISDIR(target.st_mode):
                        key = (target.st_dev, target.st_ino)
                        if key in seen_dirs:
                            warn(bpath, "symlink_loop", "folder already visited; skipped")
                            continue
                        seen_dirs.add(key)
                        subdirs.append((real, bpath, depth + 1))
                    elif stat.S_ISREG(target.st_mode):
                        result.files.append(FileEntry(bpath, real))
                    else:
                        warn(bpath, "not_regular_file", "not a regular file; never opened")
                elif entry.is_dir(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    seen_dirs.add((st.st_dev, st.st_ino))
                    subdirs.append((host, bpath, depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    result.files.append(FileEntry(bpath, host))
                else:
                    warn(bpath, "not_regular_file", "not a regular file (FIFO, device, socket)")
            except OSError as exc:
                warn(bpath, "unreadable", f"cannot inspect: {exc.strerror or exc}")
                continue
            if len(result.files) >= limits.max_files:
                warn(bdir, "too_many_files", f"stopped at max_files={limits.max_files}")
                return result
        for host, bpath, sub_depth in reversed(subdirs):
            if sub_depth > limits.max_dir_depth:
                warn(bpath, "too_deep", f"deeper than max_dir_depth={limits.max_dir_depth}")
                continue
            result.dirs.add(bpath)
            stack.append((host, bpath, sub_depth))
    result.files.sort(key=lambda f: f.path)
    return result


def _open(source: str | int) -> int:
    """``source`` when it is a descriptor, else the file it names opened without
    following a symlink or blocking on a FIFO."""
    return source if isinstance(source, int) else os.open(source, _OPEN_FLAGS)


def read_bytes(source: str | int, max_bytes: int) -> bytes:
    """Read a regular file, refusing symlinks, FIFOs and files over ``max_bytes``.

    ``source`` is a host path, or a descriptor (from
    :meth:`okfx.bundle.paths.BeneathOpener.open`), which this closes.
    Raises ``OSError`` (unreadable / not regular) or ``ValueError`` (too large).
    """
    return read_file(source, max_bytes)[0]


def _size(n: int) -> str:
    """``n`` bytes for a reader: ``9.1 MiB``, ``812 KiB``, ``640 bytes``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


def read_file(source: str | int, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """:func:`read_bytes`, and the ``fstat`` of the file it read."""
    fd = _open(source)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError("not a regular file (a FIFO, device or socket)")
        if st.st_size > max_bytes:
            raise ValueError(
                f"file is {_size(st.st_size)}, over the {_size(max_bytes)} a file may be "
                f"(Limits.max_file_bytes={max_bytes})"
            )
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, max(st.st_size + 1 - total, 65536))
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise ValueError(f"file grew past max_file_bytes={max_bytes} while reading")
            chunks.append(chunk)
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), st
    finally:
        os.close(fd)


def read_head(source: str | int, max_bytes: int, offset: int = 0) -> tuple[bytes, int]:
    """The first ``max_bytes`` of a regular file (from byte ``offset``) and its full size
    (symlinks refused); ``source`` as for :func:`read_bytes`."""
    data, st = read_page(source, max_bytes, offset)
    return data, st.st_size


def read_page(source: str | int, max_bytes: int, offset: int = 0) -> tuple[bytes, os.stat_result]:
    """:func:`read_head`, with the ``fstat`` of the file it read (its size, times, inode)."""
    fd = _open(source)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError("not a regular file (a FIFO, device or socket)")
        if offset:
            os.lseek(fd, min(offset, st.st_size), os.SEEK_SET)
        chunks: list[bytes] = []
        total = 0
        while total < max_bytes:
            chunk = os.read(fd, max_bytes - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def decode_text(data: bytes) -> str:
    """Strict UTF-8 (spec §4) with a leading BOM dropped and line endings made ``\\n``.

    Raises ``UnicodeDecodeError`` for anything else (UTF-16 included).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UnicodeDecodeError("utf-8", data[:2], 0, 2, "UTF-16 byte order mark; OKF is UTF-8")
    text = data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def encoding_problem(data: bytes, exc: UnicodeDecodeError) -> str:
    """What :func:`decode_text`'s error means for the file's author: the first byte that
    is no UTF-8, with its line (validate QA: "not UTF-8" alone left the file to search)."""
    if exc.start >= len(data) or "UTF-16" in exc.reason:  # a byte order mark
        return f"not UTF-8 ({exc.reason}); skipped: save the file as UTF-8"
    line = data.count(b"\n", 0, exc.start) + 1
    # the column an editor shows: characters before it on its line, not bytes (CI QA:
    # "column 14" after 'title: 日本', the tenth character)
    before = data[data.rfind(b"\n", 0, exc.start) + 1 : exc.start]
    column = len(before.decode("utf-8", "replace")) + 1
    return (
        f"not UTF-8: byte 0x{data[exc.start]:02X} at column {column} ({exc.reason}); "
        f"skipped: save the file as UTF-8 (line {line})"
    )
