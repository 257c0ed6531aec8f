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


@dataclass
class Manifest:
    """What a stat scan saw: every file with its host path and stat, and the folders.

    ``racy`` files had a time within :data:`RACY_SECONDS` of the scan: they count as
    changed for the next comparison, whatever their stat then.
    """

    paths: list[str]
    hosts: list[str]
    stats: list[Stat]
    dirs: list[str]
    walk_warnings: list[Problem]
    racy: frozenset[str] = frozenset()

    def by_path(self) -> dict[str, tuple[str, Stat]]:
        return dict(zip(self.paths, zip(self.hosts, self.stats, strict=True), strict=True))

    def stamps(self) -> dict[str, int]:
        """``path -> stamp`` (size and mtime, see :func:`~okfx.bundle.stored.stamp_of`)."""
        return {p: _stamp(s) for p, s in zip(self.paths, self.stats, strict=True)}


def _stamp(stat: Stat) -> int:
    return stat[1] << 40 | stat[0] & ((1 << 40) - 1)


def scan(listing: Walk, walk_warnings: Sequence[Problem], now_ns: int | None = None) -> Manifest:
    """Stat every file of ``listing``; ``walk_warnings`` are what the walk reported."""
    racy_after = (time.time_ns() if now_ns is None else now_ns) - int(RACY_SECONDS * 1e9)
    paths: list[str] = []
    hosts: list[str] = []
    stats: list[Stat] = []
    racy: list[str] = []
    for entry in listing.files:
        try:
            st = os.stat(entry.host)
        except OSError:
            stats.append((-1, -1, -1, -1))  # gone since the walk: the parse reports it
            racy.append(entry.path)
        else:
            if st.st_mtime_ns > racy_after or st.st_ctime_ns > racy_after:
                racy.append(entry.path)
            stats.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        paths.append(entry.path)
        hosts.append(entry.host)
    dirs = sorted(listing.dirs)
    return Manifest(paths, hosts, stats, dirs, list(walk_warnings), frozenset(racy))


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
        "file_overflow": [[p, n] for p, n in parsed.file_overflow.items()],
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
    stats = [(-1, -1, -1, -1) if p in m.racy else s for p, s in zip(m.paths, m.stats, strict=True)]
    for i, name in enumerate(_STATS):
        writer.add_array(name, array("q", [s[i] for s in stats]))
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
    stats_columns = [state.view(name, "q").tolist() for name in _STATS]
    stats: list[Stat] = list(zip(*stats_columns, strict=True))
    if len(stats) != len(paths):
        raise StateFormatError("the manifest's columns differ in length")
    prefix = real_root.rstrip("/")
    hosts = [prefix + p for p in paths]
    moved = records.get("hosts")
    if not isinstance(moved, list):
        raise StateFormatError("the manifest's hosts are malformed")
    at = {p: i for i, p in enumerate(paths)} if moved else {}
    for pair in moved:
        if not (isinstance(pair, list) and len(pair) == 2 and pair[0] in at):
            raise StateFormatError("a manifest host is malformed")
        hosts[at[pair[0]]] = str(pair[1])
    dirs_spec = records.get("dirs")
    dirs = dec.column(dirs_spec, _length(dirs_spec, dec))
    walk_warnings = _table(dec, records, "walk_warnings", Problem)
    racy = frozenset(p for p, s in zip(paths, stats, strict=True) if s[1] < 0)
    manifest = Manifest(paths, hosts, stats, dirs, walk_warnings, racy)
    store.hosts = {p: h for p, h in zip(paths, hosts, strict=True) if h != prefix + p}
    make = stored_builder(store, manifest.stamps())
    concepts: list[StoredConcept] = dec.table(
        records.get("concepts"), Concept, SLIM_FIELDS, build=lambda rows: list(map(make, rows))
    )
    indexes = _table(dec, records, "indexes", IndexFile)
    logs = _table(dec, records, "logs", LogFile)
    file_warnings: dict[str, list[Problem]] = {}
    for warning in _table(dec, records, "file_warnings", Problem):
        file_warnings.setdefault(warning.path, []).append(warning)
    file_overflow = _file_counts(records.get("file_overflow"))
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


def _file_counts(value: Any) -> dict[str, dict[str, int]]:
    if not isinstance(value, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) for pair in value
    ):
        raise StateFormatError("the problem counts by file are malformed")
    return {path: _counts(counts) for path, counts in value}


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
