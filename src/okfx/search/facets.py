"""Bit-set columns over a bundle's concepts: a filtered listing without a full scan.

``list_concepts`` must say how many concepts pass its filters and how many each filter
hid, so a plain implementation asks :meth:`ConceptFilter.reason` of every concept on
every call (50-210 ms at 100k concepts in ``bench/listing.py``). :class:`Facets`
instead keeps, per filter value asked for, the concepts that have it as a Python
``int`` bit set (bit ``i`` for the ``i``-th concept in path order). A filter is then a
few ``&`` and ``int.bit_count`` calls, which run in C over machine words, and a page is
read off the kept bits.

:meth:`ConceptFilter.reason` stays the definition: the same values are compared the
same way (``casefold``, a subtree prefix, ``now >= stale_after``), each concept is
counted under the first filter in :data:`~okfx.search.filters.FILTER_ORDER` that hides it, and
a property test holds the two equal.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import compress, islice, repeat
from operator import attrgetter, lt

from okfx.model import Concept
from okfx.search.filters import ConceptFilter

__all__ = ["Facets", "Selection"]

# Bits per block when a page is read off a bit set: a block whose bits all lie before
# the offset is skipped with one bit_count.
_BLOCK = 1024
_LOW = (1 << _BLOCK) - 1
# Bit sets kept for reuse; each takes one bit per concept (12.5 KB at 100k concepts).
_CACHED_MASKS = 256


@dataclass(frozen=True, slots=True)
class Selection:
    """One page of the concepts a filter keeps, with the counts a listing reports."""

    total: int  # concepts the filter keeps
    offset: int  # where the page starts (clamped to ``total``)
    concepts: list[Concept]  # the page, in path order
    hidden: dict[str, int]  # concepts hidden, by the first filter that hid them


def _mask(positions: Sequence[int]) -> int:
    """The bit set with a bit at each of ``positions`` (ascending)."""
    if not positions:
        return 0
    first, last = positions[0], positions[-1]
    if last - first + 1 == len(positions):  # a run, as a folder's concepts usually are
        return ((1 << len(positions)) - 1) << first
    bits = bytearray((last >> 3) + 1)
    for at in positions:
        bits[at >> 3] |= 1 << (at & 7)
    return int.from_bytes(bits, "little")


def _ranked(mask: int, offset: int, limit: int) -> list[int]:
    """Positions of the set bits of ``mask`` ranked ``offset`` to ``offset + limit - 1``."""
    out: list[int] = []
    base = 0
    while mask and len(out) < limit:
        block = mask & _LOW
        count = block.bit_count()
        if offset >= count:
            offset -= count
        else:
            while block and len(out) < limit:
                low = block & -block
                if offset:
                    offset -= 1
                else:
                    out.append(base + low.bit_length() - 1)
                block ^= low
            offset = 0
        mask >>= _BLOCK
        base += _BLOCK
    return out


# What each facet compares, per concept, casefolded as ConceptFilter.create folds the
# value asked for. Tags are the one facet with several values per concept.
_VALUE: dict[str, Callable[[Concept], str]] = {
    "type": lambda c: c.type.casefold(),
    "tier": lambda c: c.trust_tier.casefold(),
    "status": attrgetter("status"),
}


def _written(tags: Sequence[str], folded: str) -> str:
    """The tag of ``tags`` whose casefolded form is ``folded``, as written."""
    return next((tag for tag in tags if tag.casefold() == folded), folded)


class Facets:
    """Bit sets of the concepts that have each filter value, made on first use.

    The first question about a facet groups every concept by its value once (positions
    per value; a directory is a range of the sorted paths instead); the bit set of each
    value asked for is then kept (the last :data:`_CACHED_MASKS` of them). Made once per
    loaded bundle (:meth:`okfx.Bundle.facets`); the concepts must not change afterwards.
    Safe to share between threads: two threads may both make the same grouping or bit
    set, never a different one.
    """

    def __init__(self, concepts: Sequence[Concept]) -> None:
        self.concepts = concepts
        self.everything = (1 << len(concepts)) - 1
        self._groups: dict[str, dict[str, array[int]]] = {}
        self._masks: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._paths: list[str] | None = None  # in concept order
        self._sorted = False  # whether those are ascending (a loaded bundle's are)
        # stale_after instants, ascending, and the position of the concept of each
        self._deadlines: tuple[list[datetime], list[int]] | None = None

    def prepare(self) -> None:
        """Group by every facet now (``okfx serve`` does, in the background), and make
        the bit set of what a listing hides by default (the deprecated concepts)."""
        for facet in (*_VALUE, "tag"):
            self._group(facet)
        self._sorted_paths()
        self._stale_deadlines()
        self.mask("status", "deprecated")

    def mask(self, facet: str, value: str) -> int:
        """The concepts whose ``facet`` is ``value``: ``dir`` (a ``/a/b/`` subtree),
        ``type``, ``tier`` or ``tag`` (casefolded), or ``status``."""
        key = (facet, value)
        found = self._masks.get(key)
        if found is None:
            if facet == "dir":
                found = _mask(self._subtree(value))
            else:
                found = _mask(self._group(facet).get(value, ()))
            self._remember(key, found)
        return found

    def values(self, facet: str) -> dict[str, tuple[str, int]]:
        """Each value of ``facet`` (``type`` or ``tag``), casefolded, to its form as the
        first concept holding it writes it and how many concepts hold it."""
        out = {}
        for value, held in self._group(facet).items():
            first = self.concepts[held[0]]
            shown = first.type if facet == "type" else _written(first.tags, value)
            out[value] = (shown, len(held))
        return out

    def _group(self, facet: str) -> dict[str, array[int]]:
        """Positions of the concepts, ascending, by their value of ``facet`` (4-byte
        arrays rather than lists of int objects)."""
        groups = self._groups.get(facet)
        if groups is not None:
            return groups
        groups = {}
        if facet == "tag":
            for at, tags in enumerate(map(attrgetter("tags"), self.concepts)):
                for tag in map(str.casefold, tags):
                    held = groups.get(tag)
                    if held is None:
                        groups[tag] = array("i", (at,))
                    elif held[-1] != at:  # "Sales" and "sales" on one concept
                        held.append(at)
        else:
            for at, value in enumerate(map(_VALUE[facet], self.concepts)):
                held = groups.get(value)
                if held is None:
                    groups[value] = array("i", (at,))
                else:
                    held.append(at)
        self._groups[facet] = groups
        return groups

    def _sorted_paths(self) -> list[str]:
        paths = self._paths
        if paths is None:
            paths = [concept.path for concept in self.concepts]
            self._sorted = all(map(lt, paths, islice(paths, 1, None)))
            self._paths = paths
        return paths

    def _subtree(self, prefix: str) -> Sequence[int]:
        """Positions of the paths under ``prefix`` (``/a/b/``): one run when the paths
        are sorted, as a loaded bundle's are."""
        paths = self._sorted_paths()
        if not prefix:
            return range(len(paths))
        if not self._sorted:
            return list(compress(range(len(paths)), map(str.startswith, paths, repeat(prefix))))
        # Every path that starts with the prefix sorts between it and the prefix with
        # its last character bumped ("/a/" < "/a/x.md" < "/a0").
        start = bisect_left(paths, prefix)
        end = bisect_left(paths, prefix[:-1] + chr(ord(prefix[-1]) + 1), start)
        return range(start, end)

    def _stale_deadlines(self) -> tuple[list[datetime], list[int]]:
        if self._deadlines is None:
            pairs = sorted(
                (c.stale_after, at) for at, c in enumerate(self.concepts) if c.stale_after
            )
            self._deadlines = [when for when, _ in pairs], [at for _, at in pairs]
        return self._deadlines

    def _stale(self, now: datetime) -> int:
        """The concepts stale at ``now`` (``now >= stale_after``, a naive ``now`` as UTC)."""
        deadlines, positions = self._stale_deadlines()
        when = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
        count = bisect_right(deadlines, when)
        key = ("stale", str(count))  # one bit set per number of deadlines passed
        found = self._masks.get(key)
        if found is None:
            found = _mask(sorted(positions[:count]))
            self._remember(key, found)
        return found

    def _remember(self, key: tuple[str, str], mask: int) -> None:
        with self._lock:
            if len(self._masks) >= _CACHED_MASKS:
                self._masks.pop(next(iter(self._masks)))
            self._masks[key] = mask

    def _filters(self, bundle: str, spec: ConceptFilter) -> Iterator[tuple[str, int]]:
        """``(filter name, concepts it lets through)`` for each active filter, in
        :data:`~okfx.search.filters.FILTER_ORDER`."""
        if spec.bundle is not None and spec.bundle != bundle:
            yield "bundle", 0
        if spec.directory is not None:
            yield "directory", self.mask("dir", spec.directory)
        if spec.type is not None:
            yield "type", self.mask("type", spec.type)
        if spec.tags:
            both = self.everything
            for tag in sorted(spec.tags):
                both &= self.mask("tag", tag)
            yield "tags", both
        if spec.trust_tier is not None:
            yield "trust_tier", self.mask("tier", spec.trust_tier)
        if spec.status is not None:
            yield "status", self.mask("status", spec.status)
        if not spec.include_deprecated:
            yield "deprecated", self.everything ^ self.mask("status", "deprecated")
        if not spec.include_stale:
            yield "stale", self.everything ^ self._stale(spec.now)
        if spec.only_stale:
            yield "fresh", self._stale(spec.now)

    def select(self, bundle: str, spec: ConceptFilter, offset: int, limit: int) -> Selection:
        """The page ``offset`` to ``offset + limit`` of the concepts of ``bundle`` that
        ``spec`` keeps, with the total kept and the counts hidden per filter."""
        kept, total = self.everything, len(self.concepts)
        hidden: dict[str, int] = {}
        for name, passes in self._filters(bundle, spec):
            kept &= passes
            count = kept.bit_count()
            if count != total:
                hidden[name] = total - count
            total = count
        offset = min(max(offset, 0), total)
        page = [self.concepts[at] for at in _ranked(kept, offset, limit)]
        return Selection(total, offset, page, hidden)
