"""Unpack local zip and tar archives into the cache, refusing anything that could escape it.

Only regular files and folders are extracted. Every link entry is refused (symlinks and hard
links alike, wherever they point: a bundle is markdown and needs none), and so are device,
FIFO and sparse entries, absolute names and names with ``..``. Sizes in headers are only used
to refuse early; the real limit is the count of bytes actually written, and for compressed
tars also of bytes coming out of the decompressor, so a header that lies gains nothing.
Files are written by okfx itself with ``O_EXCL | O_NOFOLLOW``, never by ``extractall``.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import hashlib
import io
import lzma
import os
import re
import stat
import tarfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Protocol

from okfx.sources.cache import Slot
from okfx.sources.errors import ArchiveError, ArchiveLimitError
from okfx.sources.limits import Budget, SourceLimits
from okfx.sources.lock import hold
from okfx.sources.spec import ArchiveSource, archive_stem
from okfx.sources.trees import folders_near, remove_tree

__all__ = ["extract", "open_archive"]

_CHUNK = 1 << 16
# A tar stream holds a 512-byte header per entry, padding, and maybe long-name records; this
# much per entry on top of max_total_bytes keeps small-file bundles within the stream cap.
_TAR_OVERHEAD_PER_ENTRY = 4096
_DRIVE = re.compile(r"^[A-Za-z]:")
_SEPARATORS = re.compile(r"[/\\]")
# macOS and Windows add these beside the real top folder; they must not hide that folder.
# Hidden names (".DS_Store") are passed over too, as the bundle walker passes them over.
_IGNORED_TOP = frozenset({"__MACOSX", "Thumbs.db", "desktop.ini"})
_READ_ERRORS: tuple[type[BaseException], ...] = (
    tarfile.TarError,
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    gzip.BadGzipFile,
    EOFError,
    NotImplementedError,  # zip compression methods Python cannot read
)


@contextmanager
def open_archive(
    source: ArchiveSource,
    base: Path,
    *,
    refresh: bool,
    timeout: float,
    limits: SourceLimits,
) -> Iterator[tuple[Path, str]]:
    """Yield (bundle root, default name) for a local archive, extracting it once per content."""
    path = source.path
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "expected an archive file, got a folder", str(path))
    with _open_regular(path) as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
        size = os.fstat(handle.fileno()).st_size
        slot = Slot(base, "archive", digest)
        label = f"archive {path.name!r}"
        with hold(slot.lock_path, timeout) as outermost:
            if outermost:
                slot.remove_leftovers()
            if refresh and not outermost:
                raise RuntimeError(f"cannot refresh {label} while this thread has it open")
            meta = slot.read_meta()
            if meta is not None and not refresh:
                # The entry may have been extracted under looser limits than the caller's.
                budget = Budget(limits, size, label)
                budget.check_files(int(meta.get("files", 0)))
                budget.check_bytes(int(meta.get("bytes", 0)))
                budget.check_ratio(int(meta.get("bytes", 0)))
            else:
                temp = slot.new_temp()
                try:
                    handle.seek(0)
                    stats = extract(handle, temp / "tree", Budget(limits, size, label), path.name)
                    slot.publish(temp, {"kind": "archive", "sha256": digest, **stats})
                except BaseException:
                    remove_tree(temp)
                    raise
            handle.close()
            root, name = _pick_root(slot.tree, archive_stem(path))
            if source.subdir is not None:
                root, name = _folder_in(slot.tree, root, source.subdir, str(path), path)
            yield root, name


def _open_regular(path: Path) -> io.BufferedReader:
    """The archive file, opened without blocking: a FIFO (or a device, a socket) would
    hang a plain ``open`` until something writes to it, so anything but a regular file
    is refused with :class:`ArchiveError`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ArchiveError(
            f"{path} is not a regular file (a FIFO, device or socket); give the path of a "
            ".zip, .tar, .tar.gz, .tgz or .tar.xz file"
        )
    return open(fd, "rb")


def extract(handle: IO[bytes], dest: Path, budget: Budget, name: str) -> dict[str, Any]:
    """Extract the archive in ``handle`` into the new folder ``dest``; return counts.

    Raises:
        ArchiveError: unreadable archive or a refused entry.
        ArchiveLimitError: a ``SourceLimits`` cap was passed.
    """
    dest.mkdir()
    writer = _Writer(dest, budget)
    try:
        if name.lower().endswith(".zip"):
            _extract_zip(handle, writer, budget)
        else:
            _extract_tar(handle, writer, budget)
    except _READ_ERRORS as exc:
        raise ArchiveError(f"cannot read {budget.label}: {exc}") from None
    return {"files": budget.files, "bytes": budget.bytes}


def member_parts(name: str) -> tuple[str, ...]:
    """The path components of an archive entry name, refusing any way out of the folder.

    Both ``/`` and ``\\`` count as separators, since zip tools on Windows write the latter.
    """
    if "\x00" in name:
        raise ArchiveError(f"refusing entry {name!r}: NUL byte in its name")
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        raise ArchiveError(f"refusing entry {name!r}: absolute name")
    parts = tuple(part for part in _SEPARATORS.split(name) if part not in ("", "."))
    if ".." in parts:
        raise ArchiveError(f"refusing entry {name!r}: '..' in its name")
    if len(parts) > MAX_DEPTH:
        # sources QA: 1,900 nested folders in a 38 KB tar.gz; no bundle is that deep
        raise ArchiveError(
            f"refusing entry {name[:120]!r}...: {len(parts) - 1} folders deep, more than the "
            f"{MAX_DEPTH} okfx extracts"
        )
    return parts


#: How many folders deep an archive entry may be.
MAX_DEPTH = 256


def _extract_zip(handle: IO[bytes], writer: _Writer, budget: Budget) -> None:
    with zipfile.ZipFile(handle) as archive:
        infos = archive.infolist()
        # Header numbers are cheap to check first; the writer still counts real bytes.
        budget.check_files(len(infos))
        declared = sum(info.file_size for info in infos)
        budget.check_bytes(declared, "declares")
        budget.check_ratio(declared)
        for info in infos:
            name = _zip_name(info)
            parts = member_parts(name)
            is_dir = _zip_entry_is_dir(info)
            budget.add_entry()
            if not parts:
                continue
            if is_dir:
                writer.directory(parts, name)
                continue
            if info.flag_bits & 0x1:
                raise ArchiveError(f"refusing entry {name!r}: it is encrypted")
            with archive.open(info) as stream:
                writer.file(parts, name, stream, _zip_mtime(info))


def _zip_name(info: zipfile.ZipInfo) -> str:
    """The entry's name as its maker wrote it. Without the UTF-8 flag (bit 11) the zip
    format says CP437, which ``zipfile`` decodes; but Info-ZIP's ``zip`` on Linux and most
    tools since write UTF-8 without the flag, as ``unzip`` and 7-Zip read them (sources
    QA: ``ventes-été`` came out as ``ventes-├⌐t├⌐``). Bytes that are not UTF-8 stay CP437."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except UnicodeError:
        return info.filename


def _zip_entry_is_dir(info: zipfile.ZipInfo) -> bool:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if stat.S_ISLNK(mode):
        raise ArchiveError(f"refusing entry {info.filename!r}: symlink entries are not allowed")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise ArchiveError(f"refusing entry {info.filename!r}: special file (device, FIFO...)")
    return info.is_dir() or kind == stat.S_IFDIR


def _zip_mtime(info: zipfile.ZipInfo) -> float | None:
    try:
        return time.mktime((*info.date_time, 0, 0, -1))
    except (OverflowError, ValueError):
        return None


def _extract_tar(handle: IO[bytes], writer: _Writer, budget: Budget) -> None:
    limits = budget.limits
    cap = limits.max_total_bytes + _TAR_OVERHEAD_PER_ENTRY * (limits.max_files + 2)
    stream = _CountingReader(_decompressed(handle), budget, cap)
    # "r|" reads the stream front to back, so every byte tarfile sees passes the counter.
    with stream, tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            parts = member_parts(member.name)
            _check_tar_kind(member)
            budget.add_entry()
            if not parts:
                continue
            if member.isdir():
                writer.directory(parts, member.name)
                continue
            source = archive.extractfile(member)
            if source is None:  # pragma: no cover - isreg() members always have data
                raise ArchiveError(f"cannot read entry {member.name!r}")
            with source:
                writer.file(parts, member.name, source, float(member.mtime))


def _check_tar_kind(member: tarfile.TarInfo) -> None:
    if member.issym() or member.islnk():
        kind = "symlink" if member.issym() else "hard link"
        raise ArchiveError(
            f"refusing entry {member.name!r}: {kind} entries are not allowed "
            f"(it points to {member.linkname!r})"
        )
    if member.ischr() or member.isblk() or member.isfifo():
        raise ArchiveError(f"refusing entry {member.name!r}: device or FIFO entry")
    if member.issparse():
        raise ArchiveError(f"refusing entry {member.name!r}: sparse file entry")
    if not (member.isreg() or member.isdir()):
        raise ArchiveError(f"refusing entry {member.name!r}: unsupported entry type")


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


def _decompressed(handle: IO[bytes]) -> _Readable:
    # Sniff the magic bytes rather than trusting the suffix: ".tar" files are often gzipped.
    head = handle.read(6)
    handle.seek(0)
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=handle, mode="rb")
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(handle)
    if head.startswith(b"BZh"):
        return bz2.BZ2File(handle)
    return handle


class _CountingReader:
    """Read-only stream that counts decompressed bytes and stops at the caps.

    tarfile's stream mode only calls ``read``; the other methods exist for its type.
    """

    def __init__(self, raw: _Readable, budget: Budget, cap: int) -> None:
        self.raw = raw
        self.budget = budget
        self.cap = cap
        self.count = 0

    def __enter__(self) -> _CountingReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        # Closes the gzip/xz/bz2 wrapper, or the file itself for a plain tar (read by now).
        self.raw.close()

    def tell(self) -> int:
        return self.count

    def seek(self, pos: int, /) -> int:
        raise OSError("archive stream is not seekable")

    def write(self, data: bytes, /) -> int:
        raise OSError("archive stream is read-only")

    def read(self, size: int | None = -1) -> bytes:
        want = self.cap + 1 - self.count if size is None or size < 0 else size
        chunks: list[bytes] = []
        while want > 0:
            # Small steps, so a huge requested size cannot make us buffer a bomb first.
            chunk = self.raw.read(min(want, _CHUNK))
            if not chunk:
                break
            self.count += len(chunk)
            if self.count > self.cap:
                raise ArchiveLimitError(
                    "max_total_bytes",
                    self.budget.limits.max_total_bytes,
                    f"{self.budget.label} decompresses to more than {self.cap} bytes "
                    "(content plus tar headers)",
                )
            self.budget.check_ratio(self.count)
            chunks.append(chunk)
            want -= len(chunk)
        return b"".join(chunks)


class _Writer:
    """Creates folders and files below ``dest``; no entry can replace or follow another."""

    def __init__(self, dest: Path, budget: Budget) -> None:
        self.dest = dest
        self.budget = budget

    def directory(self, parts: tuple[str, ...], name: str) -> None:
        self._mkdirs(self.dest.joinpath(*parts), name)

    def file(
        self, parts: tuple[str, ...], name: str, stream: IO[bytes], mtime: float | None
    ) -> None:
        target = self.dest.joinpath(*parts)
        self._mkdirs(target.parent, name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(target, flags, 0o644)
        except (FileExistsError, IsADirectoryError):
            raise ArchiveError(f"refusing entry {name!r}: duplicate of an earlier entry") from None
        except OSError as exc:  # a name too long or too deep for this file system
            raise ArchiveError(f"refusing entry {name[:200]!r}: {exc.strerror}") from None
        with os.fdopen(fd, "wb") as out:
            while chunk := stream.read(_CHUNK):
                self.budget.add_bytes(len(chunk))
                out.write(chunk)
        if mtime is not None:
            try:
                os.utime(target, (mtime, mtime))
            except (OverflowError, ValueError, OSError):
                pass  # a nonsense timestamp in the archive is not worth refusing it for

    def _mkdirs(self, path: Path, name: str) -> None:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise ArchiveError(
                f"refusing entry {name!r}: a file is in the way of its folder"
            ) from None
        except OSError as exc:  # a name too long or too deep for this file system
            raise ArchiveError(f"refusing entry {name[:200]!r}: {exc.strerror}") from None


def _pick_root(tree: Path, stem: str) -> tuple[Path, str]:
    """A single top-level folder is the bundle; otherwise the extraction itself is. A
    stray ``.DS_Store`` beside that folder had made the extraction the bundle, moving
    every concept's path under the folder's name (platform QA)."""
    entries = [
        entry
        for entry in tree.iterdir()
        if entry.name not in _IGNORED_TOP and not entry.name.startswith(".")
    ]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0], entries[0].name
    return tree, stem


def _folder_in(tree: Path, root: Path, subdir: str, archive: str, path: Path) -> tuple[Path, str]:
    """The folder ``subdir`` names, under the archive's single top folder (a repository's
    ``kb-main/`` in GitHub's downloads), else under the extraction itself; the bundle is
    named after its last part, or for a hidden one (``.okf``) after the folder holding it,
    or the archive's name at the top, as a local folder is (sources QA: named ``.okf``).
    Archives hold no links (they are refused), so a path without ``..`` stays inside.

    Raises:
        FileNotFoundError: neither holds that folder; the message lists the folders of the
            deepest folder on its way that exists (sources QA: it listed the top level
            for ``catalog/nope``), and one named alike in another letter case.
        NotADirectoryError: it is a file.
    """
    for base in dict.fromkeys((root, tree)):
        found = base / subdir
        if found.is_dir():
            if not found.name.startswith("."):
                return found, found.name
            return found, archive_stem(path) if found.parent == tree else found.parent.name
        if found.exists():
            raise NotADirectoryError(f"{subdir!r} in {archive} is a file, not a folder")
    near = folders_near((root, tree), subdir)
    raise FileNotFoundError(f"folder {subdir!r} not found in {archive}{near}")
