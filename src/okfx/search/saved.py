"""A search index as sections of a state file (:mod:`okfx.statefile`), and back.

The postings' arrays are stored raw; the terms, the entry paths and the small values as
JSON. A :class:`~okfx.search.live.LiveIndex` is stored as its base, its delta and the doc
ids dropped from the base. Reading one back gives None whenever anything does not fit
(the index is then built again).
"""

from __future__ import annotations

from array import array
from collections import ChainMap
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Any

from okfx.search.filters import ConceptLike
from okfx.search.index import POSTING_ARRAYS, SearchIndex
from okfx.search.live import Index, LiveIndex
from okfx.statefile import StateFile, StateFormatError, StateWriter

__all__ = ["SEARCH_KIND", "read_index", "write_index"]

SEARCH_KIND = "search"
_ARRAYS = (*POSTING_ARRAYS, "pending", "factors", "extra_heads")
_ARRAYS_Q = ("extras",)
_JSON = ("counts", "n_docs", "k1", "avg_lengths")
_SIZES = ("n_terms", "n_paths")  # how many strings the terms and paths sections hold


@dataclass(frozen=True, slots=True)
class _Gone:
    """A stand-in for a concept dropped from a base index, read back from a stored live
    index: its doc id keeps its place and it keeps its path (so the index can be updated
    and written again), but it is never scored or shown (the live index drops it). Every
    field a walk over all entries reads (kind words, vectors, the state) is empty."""

    path: str
    id: str = ""
    type: str = ""
    title: str = ""
    description: str = ""
    tags: tuple[str, ...] = ()
    status: str = "deprecated"
    trust_tier: str = ""
    body: str = ""

    def is_stale(self, now: datetime | None = None) -> bool:
        return False


def _write_one(writer: StateWriter, prefix: str, index: SearchIndex) -> None:
    state = index.state()
    names = [name for name, _ in groupby(bundle for bundle, _ in index.entries)]
    for name in (*_ARRAYS, *_ARRAYS_Q):
        value = state[name]
        if isinstance(value, tuple):  # the extras' parts, written one after the other
            writer.add_arrays(prefix + name, "Q", value)
        else:
            writer.add_array(prefix + name, value)
    writer.add_array(prefix + "multipliers", array("d", state["multipliers"]))
    # Joined by NUL, a group at a time (a term or a path never holds one).
    writer.add_strings(prefix + "terms", state["terms"])
    writer.add_strings(prefix + "paths", state["paths"])
    sizes = {"n_terms": len(state["terms"]), "n_paths": len(state["paths"])}
    writer.add_json(prefix + "values", {**{name: state[name] for name in _JSON}, **sizes})
    writer.add_json(prefix + "bundles", names)


def write_index(index: Index, meta: dict[str, Any]) -> StateWriter:
    """A state file holding ``index``; ``meta`` says what it belongs to."""
    writer = StateWriter(SEARCH_KIND, {**meta, "live": isinstance(index, LiveIndex)})
    if isinstance(index, LiveIndex):
        _write_one(writer, "base.", index.base)
        _write_one(writer, "delta.", index.delta)
        writer.add_array("dropped", array("i", sorted(index.dropped)))
    else:
        _write_one(writer, "", index)
    return writer


def _read_one(
    file: StateFile,
    prefix: str,
    bundles: Sequence[tuple[str, Mapping[str, ConceptLike]]],
    gone: set[int] | None = None,
) -> SearchIndex | None:
    values = file.json(prefix + "values")
    if not isinstance(values, dict) or set(values) != {*_JSON, *_SIZES}:
        return None
    sizes = [values.pop(name) for name in _SIZES]
    if not all(type(n) is int and n >= 0 for n in sizes):
        return None
    terms = file.strings(prefix + "terms", sizes[0])
    paths = file.strings(prefix + "paths", sizes[1])
    state: dict[str, Any] = {name: file.array(prefix + name) for name in (*_ARRAYS, *_ARRAYS_Q)}
    state.update(values)
    state["terms"] = dict(zip(terms, range(len(terms)), strict=True))
    if len(state["terms"]) != len(terms):
        return None
    state["multipliers"] = file.array(prefix + "multipliers", "d").tolist()
    state["paths"] = paths
    names = file.json(prefix + "bundles")
    if not isinstance(names, list):
        return None
    bundles = [(name, concepts) for name, concepts in bundles if name in names]
    if len(bundles) != len(names):
        return None
    if gone:
        # Dropped docs keep their place (doc ids) with a stand-in for the concept.
        missing: dict[str, ConceptLike] = {
            paths[doc]: _Gone(paths[doc]) for doc in gone if 0 <= doc < len(paths)
        }
        bundles = [(name, ChainMap(dict(concepts), missing)) for name, concepts in bundles]
    return SearchIndex.restore(state, bundles)


def read_index(
    file: StateFile,
    bundles: Sequence[tuple[str, Mapping[str, ConceptLike]]],
    removed: Collection[str] = (),
) -> Index | None:
    """The index stored in ``file`` over ``bundles`` (``(name, concepts by path)`` in
    name order), or None when it does not fit them. ``removed``: paths of files gone
    since it was stored, which it may still index; each gets a stand-in, for the caller
    to drop (platform QA: one file deleted made the next process build the whole index
    again, 10.7 s against 0.2 s at 10k)."""
    if file.kind != SEARCH_KIND:
        return None
    if removed:
        stand_ins: dict[str, ConceptLike] = {path: _Gone(path) for path in removed}
        bundles = [(name, ChainMap(dict(concepts), stand_ins)) for name, concepts in bundles]
    try:
        if not file.meta.get("live"):
            return _read_one(file, "", bundles)
        dropped = file.array("dropped", "i")
        base = _read_one(file, "base.", bundles, set(dropped))
        delta = _read_one(file, "delta.", bundles)
        if base is None or delta is None:
            return None
        if any(not 0 <= doc < len(base) for doc in dropped):
            return None
        return LiveIndex(base, frozenset(dropped), delta)
    except (StateFormatError, KeyError, TypeError, ValueError):
        return None
