"""Exact top-k retrieval over :class:`~okfx.bm25f.Postings` with threshold pruning.

A document's score is ``multiplier(doc) * sum over query terms of contribution``, where a
term's contribution is the best of its forms, ``weight * impact``. Multipliers are <= 1,
so per-term upper bounds (the largest impact) bound every score.

Small queries (few postings in total) are read whole: dict building and merging run in
C, which beats any Python-level pruning. Larger ones run in three steps, in the spirit of
MaxScore (Turtle & Flood, "Query evaluation: strategies and optimizations", IP&M 1995)
and the threshold algorithm (Fagin, Lotem & Naor, PODS 2001):

1. **Seed.** Score the highest-impact postings of the most selective terms exactly
   (random access by binary search). Their k-th best admissible score is a threshold
   ``theta`` that the final k-th score can only exceed.
2. **Cut.** Terms whose upper bounds together stay below ``theta`` are *non-essential*:
   a document having only those cannot reach ``theta``. The rest of ``theta`` is shared
   among the essential terms as per-term cuts ``c``: a document below ``c`` in every
   essential term scores below ``theta``. Only postings at or above a cut are read
   (:meth:`Postings.above`, C loops).
3. **Complete.** Candidates whose upper bound still reaches ``theta`` get their missing
   contributions, by binary search when they are few, else from one read of the term.

With ``theta == 0`` (fewer admissible matches than k) everything is read, so hidden
counts then cover every match.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

from .bm25f import Postings

__all__ = ["READ_ALL_POSTINGS", "Ranked", "split_terms", "top_k"]

# One query term as (term id, weight) forms; its contribution is the best form.
Group = Sequence[tuple[int, float]]
# accept(doc) -> None when the doc is admissible, else the name of the hiding filter.
Accept = Callable[[int], "str | None"]

#: Queries with at most this many postings in total are read whole.
READ_ALL_POSTINGS = 8192
# Completing c candidates by binary search costs about this many postings read in bulk.
_BISECT_COST = 16


@dataclass
class Ranked:
    """The outcome of :func:`top_k`."""

    hits: list[tuple[float, int]]  # (score, doc), best first, ties by doc id
    hidden: dict[str, int] = field(default_factory=dict)  # filter name -> matches hidden


def _length(postings: Postings, group: Group) -> int:
    return sum(postings.starts[t + 1] - postings.starts[t] for t, _ in group)


def _contribution(postings: Postings, group: Group, doc: int) -> float:
    best = 0.0
    for tid, weight in group:
        value = weight * postings.impact(tid, doc)
        if value > best:
            best = value
    return best


def _read(postings: Postings, group: Group, cut: float) -> dict[int, float]:
    """``doc -> contribution`` for (at least) the docs contributing >= ``cut``."""
    found: dict[int, float] = {}
    for tid, weight in group:
        docs, impacts = postings.above(tid, cut / weight)
        values = impacts if weight == 1.0 else [weight * v for v in impacts]
        if not found:
            found = dict(zip(docs, values, strict=True))
            continue
        for doc, value in zip(docs, values, strict=True):
            if value > found.get(doc, 0.0):
                found[doc] = value
    return found


def _add(total: dict[int, float], found: dict[int, float]) -> dict[int, float]:
    """``total + found`` per doc; the key intersection and update run in C."""
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
        hits: list[tuple[float, int]] = []
        hidden: list[tuple[float, str]] = []
        for negative, doc in ranked:
            score = -negative
            if len(hits) == k and score < hits[-1][0]:
                break
            verdict = accept(doc)
            if verdict is not None:
                hidden.append((score, verdict))
            elif len(hits) < k:
                hits.append((score, doc))
        theta = hits[-1][0] if len(hits) == k else 0.0
        if len(top) < size or top[-1][1] < theta:
            break
        size *= 4
    counts: dict[str, int] = {}
    for score, verdict in hidden:
        if score >= theta and score > 0.0:
            counts[verdict] = counts.get(verdict, 0) + 1
    return Ranked(hits, counts)


def _seed_theta(
    postings: Postings,
    groups: Sequence[Group],
    upper: Sequence[float],
    k: int,
    accept: Accept,
    multiplier: Sequence[float],
    exact: dict[int, float],
) -> float:
    """Exact totals of the best postings of the two most selective terms; returns the
    k-th best admissible score among them (0.0 when fewer than k are admissible)."""
    order = sorted(range(len(groups)), key=lambda i: -upper[i])[:2]
    for i in order:
        for tid, _ in groups[i]:
            for doc in postings.best(tid, k):
                if doc not in exact:
                    exact[doc] = sum(_contribution(postings, g, doc) for g in groups)
    scores = sorted(((multiplier[doc] * total, doc) for doc, total in exact.items()), reverse=True)
    admitted = 0
    for score, doc in scores:
        if accept(doc) is None:
            admitted += 1
            if admitted == k:
                return score
    return 0.0


def split_terms(upper: Sequence[float], theta: float) -> tuple[list[int], list[int], float]:
    """``(non-essential, essential, sum of non-essential bounds)`` term indexes.

    Cheapest bounds first, terms are non-essential while their bounds sum below
    ``theta``: a document holding only those cannot reach it. At least one term stays
    essential, whatever the rounding of the sums.
    """
    order = sorted(range(len(upper)), key=upper.__getitem__)
    spare, split = 0.0, 0
    while split < len(order) - 1 and spare + upper[order[split]] < theta:
        spare += upper[order[split]]
        split += 1
    return order[:split], order[split:], spare


def top_k(
    postings: Postings,
    groups: Sequence[Group],
    k: int,
    accept: Accept,
    multiplier: Sequence[float],
    *,
    read_all: int = READ_ALL_POSTINGS,
) -> Ranked:
    """The ``k`` best admissible docs for ``groups``, and what the filters hid.

    ``hidden`` counts inadmissible docs scoring at least the k-th best admissible score
    (every inadmissible match when fewer than k admissible docs match). ``accept`` may
    be called more than once per doc; callers memoise it if it is costly. Queries with
    at most ``read_all`` postings skip pruning.
    """
    groups = [g for g in groups if g]
    if not groups or k <= 0:
        return Ranked([])
    lengths = [_length(postings, g) for g in groups]
    if sum(lengths) <= read_all:
        totals: dict[int, float] = {}
        for group in groups:
            totals = _add(totals, _read(postings, group, 0.0))
        return _select(totals, k, accept, multiplier)

    upper = [max(w * postings.upper[t] for t, w in g) for g in groups]
    exact: dict[int, float] = {}
    theta = _seed_theta(postings, groups, upper, k, accept, multiplier, exact)

    lazy, essential, spare = split_terms(upper, theta)
    budget = max(theta - spare, 0.0)
    share = sum(upper[i] for i in essential)
    cuts = {i: budget * upper[i] / share for i in essential}

    partial: dict[int, float] = {}
    seen: dict[int, dict[int, float]] = {}
    for i in essential:
        found = _read(postings, groups[i], cuts[i])
        if cuts[i] > 0.0:
            lazy.append(i)
            seen[i] = dict.fromkeys(found, 0.0)
        partial = _add(partial, found)

    # Complete the candidates, tightening their bound one term at a time.
    slack = spare + sum(cuts[i] for i in seen)
    candidates = {d: v for d, v in partial.items() if v + slack >= theta and d not in exact}
    for i in sorted(lazy, key=lambda j: -upper[j]):
        bound = cuts[i] if i in seen else upper[i]
        slack -= bound
        todo = [d for d in candidates if d not in seen.get(i, ())]
        if todo:
            if len(todo) * _BISECT_COST > lengths[i]:
                values = _read(postings, groups[i], 0.0)
                for doc in todo:
                    candidates[doc] += values.get(doc, 0.0)
            else:
                for doc in todo:
                    candidates[doc] += _contribution(postings, groups[i], doc)
        candidates = {d: v for d, v in candidates.items() if v + slack >= theta}
    exact.update(candidates)
    return _select(exact, k, accept, multiplier)
