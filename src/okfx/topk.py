"""Exact top-k retrieval over :class:`~okfx.bm25f.Postings`.

A document's score is ``multiplier(doc) * sum over query terms of contribution``, where a
term's contribution is the best of its forms, ``weight * impact``, and multipliers are
<= 1. Two paths give the same, exact answer:

- **Read all** (queries with few postings): every posting is read into dicts, merged
  with C-level set and update operations, and the best totals are taken with
  ``heapq.nlargest``.
- **Dense walk** (queries touching long posting lists): the long lists are summed as
  dense vectors (:mod:`okfx.dense`), one big-integer addition per list, the short lists
  exactly; documents are then visited by decreasing upper bound, in the spirit of the
  threshold algorithm (Fagin, Lotem & Naor, PODS 2001), and each is scored exactly
  by binary search in the postings. The walk stops when no remaining bound reaches the
  k-th exact score; it gives up (for read-all) after :data:`DENSE_CANDIDATES` docs,
  which only very selective filters cause.

Every exact total is summed in query-term order, so both paths and ties agree to the bit.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from math import ceil
from operator import add, itemgetter, mul, neg

from .bm25f import Postings
from .dense import FIELD_MAX, DenseVectors, Fields

__all__ = ["DENSE_CANDIDATES", "READ_ALL_POSTINGS", "Ranked", "top_k"]

# One query term as (term id, weight) forms; its contribution is the best form.
Group = Sequence[tuple[int, float]]
# accept(doc) -> None when the doc is admissible, else the name of the hiding filter.
Accept = Callable[[int], "str | None"]

#: Queries with at most this many postings in total are read whole.
READ_ALL_POSTINGS = 1024
#: The dense walk gives up (for reading all) after scoring this many candidates.
DENSE_CANDIDATES = 2048
# A crowded high-byte level is read in low-byte bands, best first, to stop early.
_BANDS = ((192, 255), (128, 191), (64, 127), (0, 63))
_CROWDED = 512


@dataclass
class Ranked:
    """The outcome of :func:`top_k`."""

    hits: list[tuple[float, int]]  # (score, doc), best first, ties by doc id
    hidden: dict[str, int] = field(default_factory=dict)  # filter name -> matches hidden


def _contribution(postings: Postings, group: Group, doc: int) -> float:
    best = 0.0
    for tid, weight in group:
        value = weight * postings.impact(tid, doc)
        if value > best:
            best = value
    return best


def _read(postings: Postings, group: Group) -> dict[int, float]:
    """``doc -> contribution`` of one query term, every posting read."""
    found: dict[int, float] = {}
    for tid, weight in group:
        docs, impacts = postings.postings(tid)
        values = impacts if weight == 1.0 else [weight * v for v in impacts]
        if not found:
            found = dict(zip(docs, values, strict=True))
            continue
        for doc, value in zip(docs, values, strict=True):
            if value > found.get(doc, 0.0):
                found[doc] = value
    return found


def _add(total: dict[int, float], found: dict[int, float]) -> dict[int, float]:
    """``total + found`` per doc (the key intersection and the update run in C).

    Each sum is ``found + total``: addition commutes, so totals built term by term equal
    ``sum()`` over the terms in order.
    """
    if not total:
        return found
    if len(found) > len(total):
        total, found = found, total
    for doc in total.keys() & found.keys():
        found[doc] += total[doc]
    total.update(found)
    return total


def _select(
    totals: dict[int, float], k: int, accept: Accept, multiplier: Sequence[float]
) -> Ranked:
    """The k best admissible of ``totals`` (exact, before multipliers) and hidden counts.

    Takes the largest totals first (a C loop); since multipliers are <= 1, a doc left out
    scores at most the smallest total taken, so the selection only grows while that
    could still reach the k-th best score.
    """
    size = 4 * k
    while True:
        top = heapq.nlargest(size, totals.items(), key=itemgetter(1))
        # (-score, doc) ascending is the documented order: score desc, then doc id.
        ranked = sorted((-multiplier[doc] * total, doc) for doc, total in top)
        walk = _Walk(k, accept, multiplier)
        for negative, doc in ranked:
            if -negative < walk.theta:
                break
            walk.offer_score(doc, -negative)
        if len(top) < size or top[-1][1] < walk.theta:
            return walk.ranked()
        size *= 4


class _Walk:
    """The k best admissible docs seen so far (a min-heap of ``(score, -doc)``), and the
    inadmissible ones that might rank at or above the final k-th."""

    def __init__(self, k: int, accept: Accept, multiplier: Sequence[float]) -> None:
        self.k, self.accept, self.multiplier = k, accept, multiplier
        self.heap: list[tuple[float, int]] = []
        self.hidden: list[tuple[float, str]] = []

    @property
    def theta(self) -> float:
        return self.heap[0][0] if len(self.heap) == self.k else 0.0

    def offer(self, doc: int, total: float) -> None:
        self.offer_score(doc, self.multiplier[doc] * total)

    def offer_score(self, doc: int, score: float) -> None:
        # A score equal to the k-th still counts as hidden: compare scores only here.
        if score <= 0.0 or (len(self.heap) == self.k and score < self.heap[0][0]):
            return
        verdict = self.accept(doc)
        item = (score, -doc)
        if verdict is not None:
            self.hidden.append((score, verdict))
        elif len(self.heap) < self.k:
            heapq.heappush(self.heap, item)
        elif item > self.heap[0]:
            heapq.heapreplace(self.heap, item)

    def ranked(self) -> Ranked:
        theta = self.theta
        counts: dict[str, int] = {}
        for score, verdict in self.hidden:
            if score >= theta:
                counts[verdict] = counts.get(verdict, 0) + 1
        hits = [(score, -neg) for score, neg in sorted(self.heap, reverse=True)]
        return Ranked(hits, counts)


def _dense(
    postings: Postings,
    dense: DenseVectors,
    groups: Sequence[Group],
    k: int,
    accept: Accept,
    multiplier: Sequence[float],
) -> Ranked | None:
    """Walk candidates by an upper bound from dense vectors (long lists) plus exact sums
    of the short lists; score each exactly. None when it cannot apply or gives up."""
    vector, top, forms = 0, 0, 0
    extra: dict[int, float] = {}
    for group in groups:
        short: list[tuple[int, float]] = []
        for tid, weight in group:
            if not dense.eligible(tid):
                short.append((tid, weight))
                continue
            times = 1 if weight <= 1.0 else ceil(weight)  # keeps the bound an upper one
            # Each big-int operation is a pass over 2 bytes per document: skip the
            # multiplication by 1 and the first addition to 0.
            term = dense.vector(tid) if times == 1 else times * dense.vector(tid)
            vector = vector + term if vector else term
            top += times * ceil(postings.upper[tid] * dense.scale)
            forms += times
        if short:
            extra = _add(extra, _read(postings, short))
    if not forms or top > FIELD_MAX:
        return None
    # One level of slack covers float rounding in the quantised levels.
    step = dense.step
    fields = Fields(vector, postings.n_docs)
    walk = _Walk(k, accept, multiplier)
    # Short-list docs as a heap of (-bound, doc), bounds computed in C: most queries
    # stop long before the heap is empty, so it is never sorted whole.
    docs = list(extra)
    levels = map(add, fields.values(docs), repeat(1))
    bounds = map(add, map(mul, levels, repeat(step)), extra.values())
    queue = list(zip(map(neg, bounds), docs, strict=True))
    heapq.heapify(queue)
    scored = 0

    def score(doc: int) -> None:
        nonlocal scored
        walk.offer(doc, sum(_contribution(postings, g, doc) for g in groups))
        scored += 1

    def drain(bound: float) -> None:
        """Score the short-list docs whose bound is at least ``bound``."""
        while queue and -queue[0][0] >= bound:
            negative, doc = heapq.heappop(queue)
            if -negative >= walk.theta:
                score(doc)

    for level in range(min(top >> 8, 255), -1, -1):
        if level and not fields.has_level(level):
            continue
        # A sparse level is read whole (one scan); a crowded one (or level 0) in
        # low-byte bands.
        whole = None if level == 0 else fields.level(level, _CROWDED)
        for first, last in _BANDS if whole is None else ((0, 255),):
            bound = step * ((level << 8 | last) + 1)
            drain(bound)
            theta = walk.theta
            if bound < theta:
                return walk.ranked()
            # Only fields whose bound can reach theta (one level below, to be safe).
            need = max(first, int(theta / step) - 1 - (level << 8), 1 if level == 0 else 0)
            if need > last:
                continue
            if whole is None:
                batch = fields.between(level, need, last)
            else:
                batch = [(v, d) for v, d in whole if v & 255 >= need] if need else whole
            candidates = sorted(
                ((step * (v + 1), d) for v, d in batch if d not in extra), reverse=True
            )
            for ub, doc in candidates:
                drain(ub)
                if ub < walk.theta:
                    return walk.ranked()
                score(doc)
            if scored > DENSE_CANDIDATES:
                return None
    drain(walk.theta)
    return walk.ranked()


def top_k(
    postings: Postings,
    groups: Sequence[Group],
    k: int,
    accept: Accept,
    multiplier: Sequence[float],
    *,
    read_all: int = READ_ALL_POSTINGS,
    dense: DenseVectors | None = None,
) -> Ranked:
    """The ``k`` best admissible docs for ``groups``, and what the filters hid.

    ``hidden`` counts inadmissible docs scoring at least the k-th best admissible score
    (every inadmissible match when fewer than k admissible docs match). ``accept`` is
    called once per doc examined. Queries over more than ``read_all`` postings take
    the dense walk when ``dense`` is given.
    """
    groups = [g for g in groups if g]
    if not groups or k <= 0:
        return Ranked([])
    if dense is not None:
        size = sum(postings.starts[t + 1] - postings.starts[t] for g in groups for t, _ in g)
        if size > read_all:
            walked = _dense(postings, dense, groups, k, accept, multiplier)
            if walked is not None:
                return walked
    totals: dict[int, float] = {}
    for group in groups:
        totals = _add(totals, _read(postings, group))
    return _select(totals, k, accept, multiplier)
