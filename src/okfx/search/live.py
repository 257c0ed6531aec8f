"""An index kept up to date without a rebuild: a base, what was dropped from it, a delta.

When a bundle reloads, the concepts whose files changed, appeared or went are *dropped*
from the base index (their doc ids are skipped, never counted as hidden) and the current
versions of the changed and added ones go into a small *delta* index, built with the
base's statistics (:class:`~okfx.search.bm25f.Stats`: document count, average field
lengths, document frequencies). A search runs on both and merges them.

**Tolerance.** Until the next merge a search ranks exactly as a fresh build would if it
used the base's statistics (same scores to the bit, same order, same hidden counts;
``tests/test_reload.py`` holds it to that). A fresh build uses the current
statistics instead, so scores differ by how much the changes moved the document count,
the document frequencies and the average field lengths; the delta is merged, which
rebuilds the index from the current concepts and ranks exactly as a fresh build, once it
holds more than :data:`MERGE_FRACTION` of the documents, or at once when the index is
smaller than :data:`SMALL` documents (a rebuild there takes well under a second).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

from okfx.search.analyzer import QueryTerm
from okfx.search.filters import ConceptLike, clamp_limit, hidden_notice
from okfx.search.hits import claims_nothing_last
from okfx.search.index import (
    MAX_LIMIT,
    SCORE_DIGITS,
    SearchIndex,
    SearchResults,
    _Needles,
    no_hits,
    prepare_query,
)
from okfx.search.scoring import query_units
from okfx.search.topk import Scored

__all__ = ["MERGE_FRACTION", "SMALL", "LiveIndex", "Index", "updated"]

#: The delta (changed or added documents, and dropped ones) is merged past this share.
MERGE_FRACTION = 0.05
#: Indexes with fewer documents than this are rebuilt on every change.
SMALL = 2000
_DROPPED = "\0dropped"

Key = tuple[str, str]  # (bundle name, concept path)
Entry = tuple[str, ConceptLike]
# a query as LiveIndex ranked it: terms, words, and per part the forms of each term
_Analysed = tuple[Sequence[QueryTerm], Sequence[Sequence[int]], list[list[list[tuple[int, float]]]]]


class LiveIndex:
    """A base :class:`SearchIndex`, doc ids dropped from it, and a delta index scored with
    the base's statistics. Immutable; :func:`updated` makes the next one."""

    __slots__ = ("base", "dropped", "delta", "ranker", "_kinds")

    def __init__(self, base: SearchIndex, dropped: frozenset[int], delta: SearchIndex) -> None:
        self.base = base
        self.dropped = dropped
        self.delta = delta
        #: As :attr:`SearchIndex.ranker`: hybrid retrieval over the base's vectors and the
        #: delta's (:meth:`okfx.search.hybrid.HybridRanker.live`); None ranks with BM25F.
        self.ranker: Any = None
        self._kinds: set[str] | None = None

    def finish_pending(self) -> None:
        """:meth:`SearchIndex.finish_pending` of the base and of the delta."""
        self.base.finish_pending()
        self.delta.finish_pending()

    def __len__(self) -> int:
        return len(self.base) - len(self.dropped) + len(self.delta)

    @property
    def entries(self) -> list[Entry]:
        """The current entries, in (bundle, path) order."""
        kept = (e for doc, e in enumerate(self.base.entries) if doc not in self.dropped)
        return sorted(chain(kept, self.delta.entries), key=_key)

    @property
    def bundles(self) -> tuple[str, ...]:
        """The bundle names in the base or the delta, sorted."""
        return tuple(sorted({*self.base.bundles, *self.delta.bundles}))

    def missing_words(self, query: str, within: str | None = None) -> tuple[str, ...]:
        """The query's words neither the base nor the delta holds
        (:meth:`SearchIndex.missing_words <okfx.search.index.SearchIndex.missing_words>`;
        ``within``: in that bundle); a word only a dropped document held still counts as
        held."""
        in_delta = set(self.delta.missing_words(query, within))
        return tuple(word for word in self.base.missing_words(query, within) if word in in_delta)

    def search(
        self,
        query: str,
        limit: int = 10,
        type: str | None = None,
        tags: Sequence[str] | str | None = None,
        **filters: Any,
    ) -> SearchResults:
        """Rank with :attr:`ranker` when one is set, else :meth:`rank`."""
        if self.ranker is None:
            return self.rank(query, limit, type, tags, **filters)
        found: SearchResults = self.ranker.search(
            query, limit=limit, type=type, tags=tags, **filters
        )
        return found

    def rank(
        self,
        query: str,
        limit: int = 10,
        type: str | None = None,
        tags: Sequence[str] | str | None = None,
        **filters: Any,
    ) -> SearchResults:
        """:meth:`SearchIndex.rank` over the base (less what was dropped) and the delta."""
        scored, analysed = self._scored(query, limit, type=type, tags=tags, **filters)
        if isinstance(scored, SearchResults):
            return scored
        parts = (self.base, self.delta)
        terms, units, groups = analysed
        needles = {
            part: _Needles(parts[part].postings, terms, groups[part], query, units, self.holds)
            for part in {part for _, part, _ in scored.hits}
        }
        order = sorted(
            (-round(score, SCORE_DIGITS), _key(parts[part].entries[doc]), doc, part)
            for score, part, doc in scored.hits
        )
        hits = claims_nothing_last(
            [
                parts[part]._hit(doc, -neg, needles[part], scored.now, "lexical", {})
                for neg, _, doc, part in order
            ]
        )
        hidden = scored.hidden(clamp_limit(limit, MAX_LIMIT))
        return SearchResults(query, hits, hidden, hidden_notice(hidden, chosen=not hits))

    def holds(self, bundle: str, forms: Iterable[str]) -> bool:
        """:meth:`SearchIndex.holds` over the base and the delta (a dropped concept's
        words still count until the merge)."""
        forms = list(forms)
        return self.base.holds(bundle, forms) or self.delta.holds(bundle, forms)

    def scored(self, query: str, limit: int = 10, **filters: Any) -> Scored | SearchResults:
        """As :meth:`SearchIndex.scored`, over the base (part 0, less what was dropped)
        and the delta (part 1); equal scores rank by (bundle, path)."""
        return self._scored(query, limit, **filters)[0]

    def _scored(
        self, query: str, limit: int, **filters: Any
    ) -> tuple[Scored | SearchResults, _Analysed]:
        """:meth:`scored`, and the query as it analysed it: its terms, its words
        (:func:`~okfx.search.scoring.query_units`) and each part's groups of forms."""
        k, spec, terms = prepare_query(query, limit, **filters)
        base, delta = self.base, self.delta
        base_ids, base_idfs = base.postings.terms, base.postings.idfs

        def base_idf(text: str) -> float | None:
            tid = base_ids.get(text)
            return None if tid is None else base_idfs[tid]

        units = query_units(query, terms)
        present = self._present(terms, units)
        kinds = self._kind_vocabulary()
        parts = []
        all_groups: list[list[list[tuple[int, float]]]] = []
        floor = 0.0  # the base's k-th score: a delta doc below it cannot rank
        for part, (index, dropped) in enumerate(((base, self.dropped), (delta, frozenset[int]()))):
            idf_of = None if index is base else base_idf
            groups = [index._forms(term, idf_of) for term in terms]
            all_groups.append(groups)
            extra = index._acronyms(query, terms)
            if not any(groups) and not extra:
                continue
            entries = index.entries

            def accept(
                doc: int, entries: Sequence[Entry] = entries, dropped: frozenset[int] = dropped
            ) -> str | None:
                return _DROPPED if doc in dropped else spec.reason(*entries[doc])

            # lifecycle and coverage as SearchIndex, counting the words the whole corpus has
            factors = index.factors(query, terms, groups, present, kinds, units)
            ranked = index.top_k(groups + extra, k, accept, factors, floor)
            parts.append((part, index, ranked))
            if len(ranked.hits) >= k:
                floor = ranked.hits[k - 1][0]
        analysed = (terms, units, all_groups)
        if not parts:
            return no_hits(query, terms), analysed
        best = heapq.nsmallest(
            k,
            (
                (-score, _key(index.entries[doc]), doc, part)
                for part, index, ranked in parts
                for score, doc in ranked.hits
            ),
        )
        examined = [
            (score, reason)
            for _, _, ranked in parts
            for score, reason in ranked.examined
            if reason != _DROPPED
        ]
        return Scored(
            [(-neg, part, doc) for neg, _, doc, part in best], examined, spec.now
        ), analysed

    def _kind_vocabulary(self) -> set[str]:
        """The kind words of the current concepts (:mod:`okfx.search.kinds`), found once
        per live index (it never changes)."""
        found = self._kinds
        if found is None:
            found = self.base.kinds.vocabulary(self.base.entries, self.dropped)
            found |= self.delta.kinds.vocabulary(self.delta.entries)
            self._kinds = found  # threads racing here find equal sets
        return found

    def _present(self, terms: Sequence[QueryTerm], units: Sequence[Sequence[int]]) -> int:
        """How many of the query's words (:func:`okfx.search.scoring.query_units`) some
        current concept holds: in the delta, or in the base outside what was dropped."""
        base, delta, dropped = self.base, self.delta, self.dropped

        def held(form: str) -> bool:
            if form in delta.postings.terms:
                return True
            tid = base.postings.terms.get(form)
            if tid is None:
                return False
            start, end = base.postings.span(tid)
            if end - start > len(dropped):  # more docs than were dropped: one is left
                return True
            docs, _ = base.postings.postings(tid)
            return any(doc not in dropped for doc in docs)

        return sum(
            1 for unit in units if any(held(form) for i in unit for form, _ in terms[i].forms)
        )

    def state(self) -> dict[str, Any]:
        return {
            "base": self.base.state(),
            "delta": self.delta.state(),
            "dropped": sorted(self.dropped),
        }


Index = SearchIndex | LiveIndex


def _key(entry: Entry) -> Key:
    return entry[0], entry[1].path


def updated(
    index: Index,
    drop: Iterable[Key],
    add: Iterable[Entry],
    *,
    merge_fraction: float = MERGE_FRACTION,
    small: int | None = None,
) -> Index:
    """``index`` without the documents of ``drop`` and with ``add`` (a changed document
    is in both): a :class:`LiveIndex`, or a fresh :class:`SearchIndex` when the delta
    has grown past ``merge_fraction`` of the documents or the index is under ``small``
    (None: :data:`SMALL`)."""
    small = SMALL if small is None else small
    base = index.base if isinstance(index, LiveIndex) else index
    dropped_before = index.dropped if isinstance(index, LiveIndex) else frozenset[int]()
    gone = set(drop)
    added = list(add)
    gone.update(_key(e) for e in added)
    positions = {_key(e): doc for doc, e in enumerate(base.entries)}
    dropped = dropped_before | {positions[key] for key in gone if key in positions}
    delta_entries = (
        [e for e in index.delta.entries if _key(e) not in gone]
        if isinstance(index, LiveIndex)
        else []
    )
    delta_entries.extend(added)
    if len(base) < small or len(dropped) + len(delta_entries) > merge_fraction * len(base):
        kept = [e for doc, e in enumerate(base.entries) if doc not in dropped]
        return SearchIndex.build([*kept, *delta_entries])
    stats = base.postings.stats()
    return LiveIndex(base, frozenset(dropped), SearchIndex.build(delta_entries, stats=stats))
