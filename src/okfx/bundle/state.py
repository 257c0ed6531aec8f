"""A bundle's parsed state as a state file (:mod:`okfx.statefile`), and back.

What is stored: the *manifest* (every file of the last load with its size, mtime, ctime and
inode, the folders, the walk's warnings), the concepts' in-memory fields
(:data:`~okfx.bundle.stored.SLIM_FIELDS`: bodies and frontmatter mappings stay in the
files), the reserved ``index.md``/``log.md`` files whole, and every file's warnings. A load
compares the manifest with a fresh stat scan: unchanged, the state is used as it is;
otherwise only the files that differ are parsed again (:mod:`okfx.bundle.reload`).

A file whose mtime or ctime was within :data:`RACY_SECONDS` of the scan is stored as
changed, so the next load parses it again: an edit in the same clock tick as the scan,
leaving size and times alike, is never missed.
"""

from __future__ import annotations

import os
import secrets
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from okfx.bundle.stored import SLIM_FIELDS, FileStore, StoredConcept, stored_builder
from okfx.bundle.walk import Walk
from okfx.model import Concept, IndexFile, LogFile, Problem
from okfx.records import Decoder, Encoder, decoding
from okfx.statefile import StateFile, StateFormatError, StateWriter

__all__ = [
    "BUNDLE_KIND",
    "RACY_SECONDS",
    "Manifest",
    "Parsed",
    "decode",
    "encode",
    "okf_version_of",
    "scan",
]

BUNDLE_KIND = "bundle"
#: What this module stores; bumped when that changes (the container has its own).
BUNDLE_FORMAT = 3
#: Files modified this recently are recorded as changed (see the module docstring).
RACY_SECONDS = 2.0
_STATS = ("size", "mtime", "ctime", "ino")
Stat = tuple[int, int, int, int]


class Manifest:
    """What a stat scan saw: every file with its host path and stat, and the folders.

    ``racy`` files had a time within :data:`RACY_SECONDS` of the scan: they count as
    changed for the next comparison, whatever their stat then.

    A bundle keeps its manifest for the next comparison, so it is held compactly: the
    stats as four 64-bit columns, and only the host paths that are not the bundle's
    folder plus the bundle path (a symlinked file's). ``hosts`` and ``stats`` are lists
    made on demand.
    """

    __slots__ = ("paths", "dirs", "walk_warnings", "racy", "_prefix", "_moved", "_columns")

    def __init__(
        self,
        paths: list[str],
        prefix: str,
        moved: dict[str, str],
        columns: Sequence[array[int]],
        dirs: list[str],
        walk_warnings: list[Problem],
        racy: frozenset[str] = frozenset(),
    ) -> None:
        """``prefix``: the host path of the bundle's folder (without a final ``/``);
        ``moved``: ``path -> host`` where the host is not ``prefix + path``; ``columns``:
        size, mtime, ctime and inode, in path order."""
        if len(columns) != len(_STATS) or any(len(c) != len(paths) for c in columns):
            raise ValueError("a manifest needs one stat per path")
        self.paths = paths
        self.dirs = dirs
        self.walk_warnings = walk_warnings
        self.racy = racy
        self._prefix = prefix
        self._moved = moved
        self._columns = tuple(columns)

    def moved(self) -> dict[str, str]:
        """``path -> host`` of the files whose host path is not the usual one."""
        return dict(self._moved)

    def columns(self) -> tuple[array[int], ...]:
        """The stats as columns (size, mtime, ctime, inode), in path order."""
        return self._columns

    def host(self, path: str) -> str:
        """The host path of the file at bundle path ``path``."""
        return self._moved.get(path) or self._prefix + path

    @property
    def hosts(self) -> list[str]:
        return list(map(self.host, self.paths))

    @property
    def stats(self) -> list[Stat]:
        return list(zip(*self._columns, strict=True))

    def sizes(self) -> array[int]:
        """The files' sizes, in path order."""
        return self._columns[0]

    def by_path(self) -> dict[str, tuple[str, Stat]]:
        return dict(zip(self.paths, zip(self.hosts, self.stats, strict=True), strict=True))

    def stamps(self) -> dict[str, int]:
        """``path -> stamp`` (size and mtime, see :func:`~okfx.bundle.stored.stamp_of`)."""
        sizes, mtimes = self._columns[0], self._columns[1]
        return {p: _stamp((s, m, 0, 0)) for p, s, m in zip(self.paths, sizes, mtimes, strict=True)}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Manifest):
            return NotImplemented
        return (self.paths, self.hosts, self.stats, self.dirs, self.walk_warnings, self.racy) == (
            other.paths,
            other.hosts,
            other.stats,
            other.dirs,
            other.walk_warnings,
            other.racy,
        )

    __hash__ = None  # type: ignore[assignment]


def _stamp(stat: Stat) -> int:
    return stat[1] << 40 | stat[0] & ((1 << 40) - 1)


def scan(
    listing: Walk,
    walk_warnings: Sequence[Problem],
    now_ns: int | None = None,
    real_root: str = "",
) -> Manifest:
    """Stat every file of ``listing`` (a walk of ``real_root``); ``walk_warnings`` are
    what the walk reported."""
    racy_after = (time.time_ns() if now_ns is None else now_ns) - int(RACY_SECONDS * 1e9)
    files = listing.files
    prefix = real_root.rstrip("/")
    paths: list[str] = []
    moved: dict[str, str] = {}
    columns = tuple(array("q") for _ in _STATS)
    sizes, mtimes, ctimes, inodes = columns
    racy: list[str] = []
    for entry in files:
        path, host = entry.path, entry.host
        try:
            st = os.stat(host)
        except OSError:
            size = mtime = ctime = inode = -1  # gone since the walk: the parse reports it
            racy.append(path)
        else:
            size, mtime, ctime, inode = st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino
            if mtime > racy_after or ctime > racy_after:
                racy.append(path)
        sizes.append(size)
        mtimes.append(mtime)
        ctimes.append(ctime)
        inodes.append(inode)
        paths.append(path)
        if host != prefix + path:
            moved[path] = host
    dirs = sorted(listing.dirs)
    warnings = list(walk_warnings)
    return Manifest(paths, prefix, moved, columns, dirs, warnings, frozenset(racy))


@dataclass
class Parsed:
    """A bundle's parsed state, as a load or a reload produced it."""

    manifest: Manifest
    concepts: dict[str, Concept]
    indexes: dict[str, IndexFile]
    logs: dict[str, LogFile]
    file_warnings: dict[str, list[Problem]]
    okf_version: str | None
    complete: bool  # False when a limit stopped the load (a reload then loads it all)
    generation: str = field(default_factory=lambda: secrets.token_hex(8))
    # problems the walk counted but did not record (past max_warnings), by code
    overflow: dict[str, int] = field(default_factory=dict)
    # problems of each file counted but not kept (past max_warnings), by code
    file_overflow: dict[str, dict[str, int]] = field(default_factory=dict)
    # what the scope left out: roots of nested bundles, excluded .md files
    nested: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()


def okf_version_of(indexes: dict[str, IndexFile]) -> str | None:
    """The ``okf_version`` the bundle-root ``index.md`` declares (spec §12), if any."""
    root_index = indexes.get("/")
    if root_index is None or root_index.frontmatter.get("okf_version") is None:
        return None
    return str(root_index.frontmatter["okf_version"])


def encode(parsed: Parsed, real_root: str) -> StateWriter:
    """The state file of ``parsed``."""
    enc = Encoder()
    m = parsed.manifest
    prefix = real_root.rstrip("/")
    hosts = [[p, h] for p, h in zip(m.paths, m.hosts, strict=True) if h != prefix + p]
    columns = [array("q", column) for column in m.columns()]
    for i, path in enumerate(m.paths):
        if path in m.racy:  # stored as changed (see the module docstring)
            for column in columns:
                column[i] = -1
    concepts = list(parsed.concepts.values())
    warnings = [w for path in sorted(parsed.file_warnings) for w in parsed.file_warnings[path]]
    records = {
        "files": enc.column(m.paths),
        "hosts": hosts,
        "dirs": enc.column(m.dirs),
        "walk_warnings": enc.table(m.walk_warnings, Problem),
        "file_warnings": enc.table(warnings, Problem),
        "concepts": enc.table(concepts, Concept, SLIM_FIELDS),
        "indexes": enc.table(list(parsed.indexes.values()), IndexFile),
        "logs": enc.table(list(parsed.logs.values()), LogFile),
        "file_overflow": _encode_counts(enc, parsed.file_overflow),
    }
    writer = StateWriter(
        BUNDLE_KIND,
        {
            "format": BUNDLE_FORMAT,
            "generation": parsed.generation,
            "okf_version": parsed.okf_version,
            "complete": parsed.complete,
            "overflow": parsed.overflow,
            "nested": list(parsed.nested),
            "excluded": list(parsed.excluded),
            "arrays": len(enc.arrays),
        },
    )
    writer.add_json("records", records)
    writer.add_json("strings", enc.string_table())
    for i, values in enumerate(enc.arrays):
        writer.add_array(f"a{i}", values)
    for name, column in zip(_STATS, columns, strict=True):
        writer.add_array(name, column)
    return writer


def decode(state: StateFile, real_root: str, store: FileStore) -> Parsed:
    """The :class:`Parsed` a state file holds; raises
    :class:`~okfx.statefile.StateFormatError` when it does not fit this okfx."""
    with decoding():
        return _decode(state, real_root, store)


def _decode(state: StateFile, real_root: str, store: FileStore) -> Parsed:
    meta = state.meta
    if state.kind != BUNDLE_KIND or meta.get("format") != BUNDLE_FORMAT:
        raise StateFormatError("not a bundle state of this format")
    count = meta.get("arrays")
    generation = meta.get("generation")
    okf_version = meta.get("okf_version")
    if type(count) is not int or not isinstance(generation, str):
        raise StateFormatError("the bundle state's meta is malformed")
    if okf_version is not None and not isinstance(okf_version, str):
        raise StateFormatError("the bundle state's okf_version is malformed")
    arrays = [state.view(f"a{i}") for i in range(count)]
    dec = Decoder(state.json("strings"), arrays)
    records = state.json("records")
    if not isinstance(records, dict):
        raise StateFormatError("the bundle state has no records")
    paths = dec.column(records.get("files"), len(state.view("size")))
    columns = [array("q", state.view(name, "q")) for name in _STATS]
    if any(len(column) != len(paths) for column in columns):
        raise StateFormatError("the manifest's columns differ in length")
    prefix = real_root.rstrip("/")
    pairs = records.get("hosts")
    if not isinstance(pairs, list):
        raise StateFormatError("the manifest's hosts are malformed")
    known = set(paths) if pairs else set()
    moved: dict[str, str] = {}
    for pair in pairs:
        if not (isinstance(pair, list) and len(pair) == 2 and pair[0] in known):
            raise StateFormatError("a manifest host is malformed")
        moved[pair[0]] = str(pair[1])
    dirs_spec = records.get("dirs")
    dirs = dec.column(dirs_spec, _length(dirs_spec, dec))
    walk_warnings = _table(dec, records, "walk_warnings", Problem)
    racy = frozenset(p for p, mtime in zip(paths, columns[1], strict=True) if mtime < 0)
    manifest = Manifest(paths, prefix, moved, columns, dirs, walk_warnings, racy)
    store.hosts = dict(moved)
    make = stored_builder(store, manifest.stamps())
    concepts: list[StoredConcept] = dec.table(
        records.get("concepts"), Concept, SLIM_FIELDS, build=lambda rows: list(map(make, rows))
    )
    indexes = _table(dec, records, "indexes", IndexFile)
    logs = _table(dec, records, "logs", LogFile)
    file_warnings: dict[str, list[Problem]] = {}
    for warning in _table(dec, records, "file_warnings", Problem):
        file_warnings.setdefault(warning.path, []).append(warning)
    file_overflow = _decode_counts(dec, records.get("file_overflow"))
    return Parsed(
        manifest=manifest,
        concepts={c.path: c for c in concepts},
        indexes={i.directory: i for i in indexes},
        logs={log.directory: log for log in logs},
        file_warnings=file_warnings,
        okf_version=okf_version,
        complete=meta.get("complete") is True,
        generation=generation,
        overflow=_counts(meta.get("overflow", {})),
        file_overflow=file_overflow,
        nested=_paths(meta.get("nested")),
        excluded=_paths(meta.get("excluded")),
    )


def _paths(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise StateFormatError("the scope is malformed")
    return tuple(value)


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and type(v) is int for k, v in value.items()
    ):
        raise StateFormatError("the problem counts are malformed")
    return value


def _encode_counts(enc: Encoder, by_file: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Problem counts by file as three columns (file, code, count), one row per pair."""
    rows = [(path, code, n) for path, counts in by_file.items() for code, n in counts.items()]
    paths, codes, numbers = (
        (list(column) for column in zip(*rows, strict=True)) if rows else ([], [], [])
    )
    return {
        "n": len(rows),
        "paths": enc.column(paths),
        "codes": enc.column(codes),
        "counts": enc.column(numbers),
    }


def _decode_counts(dec: Decoder, spec: Any) -> dict[str, dict[str, int]]:
    if not isinstance(spec, dict) or type(spec.get("n")) is not int:
        raise StateFormatError("the problem counts by file are malformed")
    n = spec["n"]
    paths, codes, numbers = (dec.column(spec.get(k), n) for k in ("paths", "codes", "counts"))
    by_file: dict[str, dict[str, int]] = {}
    for path, code, count in zip(paths, codes, numbers, strict=True):
        if not (isinstance(path, str) and isinstance(code, str) and type(count) is int):
            raise StateFormatError("the problem counts by file are malformed")
        by_file.setdefault(path, {})[code] = count
    return by_file


def _table(dec: Decoder, records: dict[str, Any], name: str, cls: type) -> list[Any]:
    return dec.table(records.get(name), cls)


def _length(spec: Any, dec: Decoder) -> int:
    """The length of a string column (its id array)."""
    if not isinstance(spec, dict) or spec.get("k") not in ("str", "none"):
        raise StateFormatError("a column of names is malformed")
    if spec["k"] == "none":
        return 0
    ref = spec.get("a")
    if type(ref) is not int or not 0 <= ref < len(dec.arrays):
        raise StateFormatError("a column refers to a missing array")
    return len(dec.arrays[ref])
