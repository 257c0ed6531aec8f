"""Exact top-k retrieval over :class:`~okfx.search.bm25f.Postings`.

A document's score is ``multiplier(doc) * sum over query terms of contribution``, where a
term's contribution is the best of its forms, ``weight * impact``, and multipliers are
<= 1. Two paths give the same, exact answer:

- **Read all** (queries with few postings): every posting is read into dicts, merged
  with C-level set and update operations, and the best totals are taken with
  ``heapq.nlargest``.
- **Dense walk** (queries touching long posting lists): the long lists are summed as
  dense vectors (:mod:`okfx.search.dense`), one big-integer addition per list, the short lists
  exactly; documents are then visited by decreasing upper bound, in the spirit of the
  threshold algorithm (Fagin, Lotem & Naor, PODS 2001), and each is scored exactly
  by binary search in the postings. The walk stops when no remaining bound reaches the
  k-th exact score. Queries of up to four long-list forms walk *coarse* vectors (a
  byte per document); the others, or when a coarse level holds more than
  :data:`DENSE_CANDIDATES` docs, the *fine* ones (16 bits per document), which give
  up (for read-all) after that many docs, as only very selective filters cause.

Every exact total is summed in query-term order, so both paths and ties agree to the bit.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat
from math import ceil
from operator import add, itemgetter, mul, neg

from okfx.search.bm25f import Postings
from okfx.search.dense import COARSE_LEVELS, COARSE_MAX, FIELD_MAX, DenseVectors, Fields, positions

__all__ = ["DENSE_CANDIDATES", "READ_ALL_POSTINGS", "Cap", "Ranked", "Scored", "top_k"]

# One query term as (term id, weight) forms; its contribution is the best form.
Group = Sequence[tuple[int, float]]
# accept(doc) -> None when the doc is admissible, else the name of the hiding filter.
Accept = Callable[[int], "str | None"]
# ceiling(doc) -> an upper bound of multiplier[doc], cheaper than it.
Ceiling = Callable[[int], float]


@dataclass(frozen=True)
class Cap:
    """A bound of every multiplier but a few: ``multiplier[doc] <= scale`` for each doc
    not in ``exceptions`` (``0 < scale <= 1``). The walks then stop as soon as their
    bound times ``scale`` is below the k-th score, and visit the exceptions at their own
    bounds."""

    scale: float
    exceptions: Collection[int]


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
    # (score, filter name) of every inadmissible doc examined that could rank: what
    # ``hidden`` counts against another k-th score when two rankings are merged.
    examined: list[tuple[float, str]] = field(default_factory=list)


@dataclass
class Scored:
    """The best admissible docs of one search before hits are built: ``(score, part,
    doc)``, best first (``part`` numbers the indexes searched: 0 for a plain index; a
    live index's base 0, its delta 1), the inadmissible docs examined that could rank
    (``examined``, as :attr:`Ranked.examined`), and the instant that decided staleness."""

    hits: list[tuple[float, int, int]]
    examined: list[tuple[float, str]]
    now: datetime

    def hidden(self, k: int) -> dict[str, int]:
        """Per filter, the examined matches scoring at least the k-th hit's score (every
        one when fewer than ``k`` hits came back): what a search for ``k`` hits hides.
        Exact for any ``k`` up to the number asked for, since a search for more hits
        examines every doc a search for fewer would."""
        theta = self.hits[k - 1][0] if 0 < k <= len(self.hits) else 0.0
        counts: dict[str, int] = {}
        for score, verdict in self.examined:
            if score >= theta:
                counts[verdict] = counts.get(verdict, 0) + 1
        return counts


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
    totals: dict[int, float],
    k: int,
    accept: Accept,
    multiplier: Sequence[float],
    ceiling: Ceiling | None = None,
    floor: float = 0.0,
    cap: Cap | None = None,
) -> Ranked:
    """The k best admissible of ``totals`` (exact, before multipliers) and hidden counts.

    Takes the largest totals first (a C loop); since multipliers are <= 1, a doc left out
    scores at most the smallest total taken, so the selection only grows while that
    could still reach the k-th best score. With ``ceiling``, the docs taken are scored
    exactly in the order of their total times their ceiling, until that is below the
    k-th score; without it, each is scored to be sorted. With ``cap``, its exceptions are
    taken too, and a doc left out scores at most the smallest total taken times its
    scale.
    """
    size = 4 * k
    scale, exceptions = (1.0, ()) if cap is None else (cap.scale, cap.exceptions)
    while True:
        top = heapq.nlargest(size, totals.items(), key=itemgetter(1))
        everything = len(top) < size
        least = top[-1][1] if top else 0.0
        if exceptions and not everything:
            taken = {doc for doc, _ in top}
            if len(exceptions) < len(totals):
                top += [(d, totals[d]) for d in exceptions if d in totals and d not in taken]
            else:
                top += [(d, t) for d, t in totals.items() if d in exceptions and d not in taken]
        walk = _Walk(k, accept, multiplier, floor)
        if ceiling is None:
            # (-score, doc) ascending is the documented order: score desc, then doc id.
            ranked = sorted((-multiplier[doc] * total, doc) for doc, total in top)
            for negative, doc in ranked:
                if -negative < walk.theta:
                    break
                walk.offer_score(doc, -negative)
        else:
            bounded = sorted((-ceiling(doc) * total, doc, total) for doc, total in top)
            for negative, doc, total in bounded:
                if -negative < walk.theta:
                    break
                walk.offer(doc, total)
        if everything or least * scale < walk.theta:
            return walk.ranked()
        size *= 4


class _Walk:
    """The k best admissible docs seen so far (a min-heap of ``(score, -doc)``), and the
    inadmissible ones that might rank at or above the final k-th; none scoring below
    ``floor``."""

    def __init__(
        self, k: int, accept: Accept, multiplier: Sequence[float], floor: float = 0.0
    ) -> None:
        self.k, self.accept, self.multiplier, self.floor = k, accept, multiplier, floor
        self.heap: list[tuple[float, int]] = []
        self.hidden: list[tuple[float, str]] = []

    @property
    def theta(self) -> float:
        return self.heap[0][0] if len(self.heap) == self.k else self.floor

    def offer(self, doc: int, total: float) -> None:
        self.offer_score(doc, self.multiplier[doc] * total)

    def offer_score(self, doc: int, score: float) -> None:
        # A score equal to the k-th still counts as hidden: compare scores only here.
        if score <= 0.0 or score < self.theta:
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
        return Ranked(hits, counts, self.hidden)


@dataclass
class _Task:
    """One query's inputs to a dense walk; ``extra`` holds the short lists' exact sums."""

    postings: Postings
    groups: Sequence[Group]
    k: int
    accept: Accept
    multiplier: Sequence[float]
    extra: dict[int, float]
    ceiling: Ceiling | None = None
    floor: float = 0.0
    scale: float = 1.0  # every multiplier but the exceptions' (queued in extra) is <= it


class _Scorer:
    """Exact scoring for a walk, and the short-list docs waiting on a heap of
    ``(-bound, doc)`` (bounds computed in C; most queries stop long before the heap is
    empty, so it is never sorted whole)."""

    def __init__(self, task: _Task, values: list[int], step: float) -> None:
        self.postings, self.groups, extra = task.postings, task.groups, task.extra
        self.walk = _Walk(task.k, task.accept, task.multiplier, task.floor)
        self.ceiling = task.ceiling
        self.scale = task.scale
        self.lowered: set[int] = set()  # queued docs whose bound has its ceiling
        self.scored = 0
        docs = list(extra)
        # One level of slack covers float rounding in the quantised levels.
        levels = map(add, values, repeat(1))
        bounds = map(add, map(mul, levels, repeat(step)), extra.values())
        self.queue = list(zip(map(neg, bounds), docs, strict=True))
        heapq.heapify(self.queue)

    def score(self, doc: int) -> None:
        postings = self.postings
        self.walk.offer(doc, sum(_contribution(postings, g, doc) for g in self.groups))
        self.scored += 1

    def visit(self, doc: int, bound: float) -> None:
        """Score ``doc`` (its sum at most ``bound``) now, or queue it at ``bound`` times
        its ceiling when that is lower: a doc whose factor is known to be small waits
        until the walk's bound comes down to what it can score, and is never scored
        when the walk stops first."""
        ceiling = self.ceiling
        if ceiling is not None and doc not in self.lowered:
            factor = ceiling(doc)
            if factor < self.scale:
                lowered = bound * factor
                if lowered < self.walk.theta:
                    return  # below the k-th score already: it can never be taken
                self.lowered.add(doc)
                heapq.heappush(self.queue, (-lowered, doc))
                return
        self.score(doc)

    def drain(self, bound: float) -> None:
        """Score the short-list docs whose bound is at least ``bound``."""
        queue, walk = self.queue, self.walk
        while queue and -queue[0][0] >= bound:
            negative, doc = heapq.heappop(queue)
            if -negative >= walk.theta:
                self.visit(doc, -negative)


def _split(
    postings: Postings, dense: DenseVectors, groups: Sequence[Group]
) -> tuple[list[tuple[int, int]], dict[int, float]]:
    """``(tid, times)`` of the long-list forms, and the exact sums of the short ones.

    A form of weight ``w > 1`` counts its vector ``ceil(w)`` times, which keeps the
    bound an upper one."""
    long: list[tuple[int, int]] = []
    extra: dict[int, float] = {}
    for group in groups:
        short: list[tuple[int, float]] = []
        for tid, weight in group:
            if dense.eligible(tid):
                long.append((tid, 1 if weight <= 1.0 else ceil(weight)))
            else:
                short.append((tid, weight))
        if short:
            extra = _add(extra, _read(postings, short))
    return long, extra


def _summed(
    vector_of: Callable[[int], int], long: list[tuple[int, int]], upper: Callable[[int], int]
) -> tuple[int, int]:
    """The summed vector of the long forms and the largest value a field can reach.

    Each big-int operation is a pass over every document: the multiplication by 1 and
    the first addition to 0 are skipped."""
    vector, top = 0, 0
    for tid, times in long:
        term = vector_of(tid) if times == 1 else times * vector_of(tid)
        vector = vector + term if vector else term
        top += times * upper(tid)
    return vector, top


def _dense(
    postings: Postings,
    dense: DenseVectors,
    groups: Sequence[Group],
    k: int,
    accept: Accept,
    multiplier: Sequence[float],
    ceiling: Ceiling | None = None,
    floor: float = 0.0,
    cap: Cap | None = None,
) -> Ranked | None:
    """Walk candidates by an upper bound from dense vectors (long lists) plus exact sums
    of the short lists; score each exactly. None when it cannot apply or gives up.

    Queries of a few forms walk the coarse vectors (a byte per document, half the
    passes); any other, or one the coarse walk gives up on, walks the fine ones."""
    long, extra = _split(postings, dense, groups)
    if not long:
        return None
    scale = 1.0
    if cap is not None:
        scale = cap.scale
        for doc in cap.exceptions:  # queued at their own bounds, like the short lists
            extra.setdefault(doc, 0.0)
    task = _Task(postings, groups, k, accept, multiplier, extra, ceiling, floor, scale)
    upper = postings.upper
    coarse_scale = dense.coarse_scale
    if sum(times for _, times in long) * COARSE_LEVELS <= COARSE_MAX:
        vector, top = _summed(dense.coarse, long, lambda tid: ceil(upper[tid] * coarse_scale))
        walked = _coarse_walk(task, dense.coarse_step, vector, top)
        if walked is not None:
            return walked
    fine_scale = dense.scale
    vector, top = _summed(dense.vector, long, lambda tid: ceil(upper[tid] * fine_scale))
    if top > FIELD_MAX:
        return None
    return _fine_walk(task, dense.step, vector, top)


def _coarse_walk(task: _Task, step: float, vector: int, top: int) -> Ranked | None:
    """The walk over a byte per document: a byte is its level, docs of one level share
    one bound. None when a level holds more docs than the candidate budget left."""
    if top > COARSE_MAX:
        return None
    data = vector.to_bytes(task.postings.n_docs, "little")
    extra = task.extra
    scorer = _Scorer(task, list(map(data.__getitem__, extra)), step)
    walk, scale = scorer.walk, task.scale
    for level in range(top, 0, -1):  # level 0: no long-list posting, only extras count
        bound = step * (level + 1)
        scorer.drain(bound * scale)
        if bound * scale < walk.theta:
            return walk.ranked()
        if level not in data:
            continue
        found = positions(data, level, max(DENSE_CANDIDATES - scorer.scored, 0))
        if found is None:
            return None
        for doc in found:
            if bound * scale < walk.theta:  # the k best are in: nothing left can reach them
                return walk.ranked()
            if doc not in extra:
                scorer.visit(doc, bound)
    scorer.drain(walk.theta)
    return walk.ranked()


def _fine_walk(task: _Task, step: float, vector: int, top: int) -> Ranked | None:
    """The walk over 16-bit fields: high bytes are levels, read sparse ones whole and
    crowded ones in low-byte bands. None when it gives up."""
    fields = Fields(vector, task.postings.n_docs)
    extra = task.extra
    scorer = _Scorer(task, fields.values(extra), step)
    walk, scale = scorer.walk, task.scale
    for level in range(min(top >> 8, 255), -1, -1):
        if level and not fields.has_level(level):
            continue
        # A sparse level is read whole (one scan); a crowded one (or level 0) in
        # low-byte bands.
        whole = None if level == 0 else fields.level(level, _CROWDED)
        for first, last in _BANDS if whole is None else ((0, 255),):
            bound = step * ((level << 8 | last) + 1)
            scorer.drain(bound * scale)
            theta = walk.theta
            if bound * scale < theta:
                return walk.ranked()
            # Only fields whose bound can reach theta (one level below, to be safe).
            reach = int(theta / scale / step) - 1 - (level << 8)
            need = max(first, reach, 1 if level == 0 else 0)
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
                scorer.drain(ub * scale)
                if ub * scale < walk.theta:
                    return walk.ranked()
                scorer.visit(doc, ub)
            if scorer.scored > DENSE_CANDIDATES:
                return None
    scorer.drain(walk.theta)
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
    ceiling: Ceiling | None = None,
    floor: float = 0.0,
    cap: Cap | None = None,
) -> Ranked:
    """The ``k`` best admissible docs for ``groups``, and what the filters hid.

    ``hidden`` counts inadmissible docs scoring at least the k-th best admissible score
    (every inadmissible match when fewer than k admissible docs match). ``accept`` is
    called once per doc examined. Queries over more than ``read_all`` postings take
    the dense walk when ``dense`` is given, which visits docs by their upper bound
    times ``ceiling(doc)`` (an upper bound of ``multiplier[doc]``) when given.
    Docs scoring below ``floor`` are left out, hits and hidden alike: what a caller
    merging this ranking with another whose k-th score is ``floor`` would drop.
    ``cap`` bounds every multiplier but a few (:class:`Cap`), which lets the walks stop
    sooner; it must hold, as ``ceiling`` must.
    """
    groups = [g for g in groups if g]
    if not groups or k <= 0:
        return Ranked([])
    if dense is not None:
        size = sum(postings.starts[t + 1] - postings.starts[t] for g in groups for t, _ in g)
        if size > read_all:
            walked = _dense(postings, dense, groups, k, accept, multiplier, ceiling, floor, cap)
            if walked is not None:
                return walked
    totals: dict[int, float] = {}
    for group in groups:
        totals = _add(totals, _read(postings, group))
    return _select(totals, k, accept, multiplier, ceiling, floor, cap)
