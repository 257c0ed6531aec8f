"""Per-query score factors of the lexical default, beyond BM25F sums (issue 20).

A document's score is ``factor(doc) * sum of its terms' contributions``
(:mod:`okfx.search.topk`), with every factor <= 1 so the upper bounds of the exact top-k
walk stay valid. :class:`Factors` is that factor for one query:

- the lifecycle multiplier (draft x0.8, deprecated x0.5), except for a concept the query
  *names*: every word of its title or of its file name (two or more words) is in the
  query ("Orders (legacy)", ``orders_legacy`` asked for by name is what the user wants,
  deprecated or not), and for every concept of a status a word of the query asks for
  ("legacy", "old", "deprecated"...: :data:`LIFECYCLE_WORDS`);
- coverage: ``COVERAGE_FLOOR + (1 - COVERAGE_FLOOR) * matched / units`` over the query's
  *units* (its words as typed: an identifier such as ``user_pseudo_id`` is one unit
  however many terms it yields, :func:`query_units`), counting units with a term in the
  index, so a concept matching more of the query outranks one that matches a single rare
  word. One-unit queries have no coverage factor;
- title coverage: ``1 - TITLE_WEIGHT * (1 - units in the name / units)``, the same units
  counted in the concept's name alone (its title, type and folders: the fields that say
  what it is), so of two concepts matching the query's words the one named by them
  ranks first ("cost allocation standard" and the concept titled "Cost Allocation &
  Margin Standard", against one that names them in a long body). One-unit queries have
  none either, nor does an index without titles;
- naming: ``1 - NAME_WEIGHT * (1 - share)``, where ``share`` is the larger of the parts
  of the concept's title and of its file name's words (each counted in distinct terms,
  stopwords left out) that are forms of the query's words: of two concepts the query
  names, the one whose name it says *all* of ranks first ("customer definition": the
  definition titled "customer", not the table "uc_storefront_customer_segments", whose
  type says "Table Definition" too; "gross_margin_legacy": the file
  ``gross-margin-legacy.md`` titled "Gross Margin (legacy, pre-FY2026)"). Every query
  has it, one word or more; an index without names has none.

Acronym lookups (:func:`okfx.search.wordforms.initialisms`) are optional extra terms:
they add to a score but never count in coverage.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import pairwise
from typing import Any, overload

from okfx.search.analyzer import (
    STOPWORDS,
    QueryTerm,
    analyze_chunk,
    analyze_query,
    is_contraction,
    joined_term,
    plural_variants,
    split_chunks,
)
from okfx.search.bm25f import Postings
from okfx.search.cjk import content_bigrams, letter_bigrams
from okfx.search.topk import Cap

__all__ = [
    "CONFIDENT",
    "COVERAGE_FLOOR",
    "Factors",
    "LIFECYCLE_WORDS",
    "NAME_POSTINGS",
    "NAME_WEIGHT",
    "NamedTitles",
    "TITLE_WEIGHT",
    "confidence",
    "file_name_words",
    "hyphened_words",
    "new_names",
    "query_units",
    "query_words",
]

#: The share of a score a concept keeps when it matches one query term of very many.
COVERAGE_FLOOR = 0.5
#: The share of a score a concept gives up when its name (title, type, folders) holds
#: none of the query's units (against one whose name holds them all): title coverage.
TITLE_WEIGHT = 0.1
#: The share of a score a concept gives up when the query says none of its title and
#: none of its file name (against one whose title or file name it says whole): naming.
NAME_WEIGHT = 0.2
#: Name postings a query's title coverage counts at once (longer: one lookup per doc).
NAME_POSTINGS = 4096
#: A hit's ``confidence`` from which the bundle probably answers the query.
CONFIDENT = 0.5
# Cosine similarities (the default model's scale) mapped to confidence 0 and 1: on the
# tuning set, 90% of answerable queries' best concept is above 0.33.
_COSINE_NONE, _COSINE_SURE = 0.25, 0.6

_WORDS = re.compile(r"[^\W_]+")
Group = Sequence[tuple[int, float]]


def query_words(text: str) -> list[str]:
    """The words of ``text`` in order, lowercase, identifier parts split
    ("retrieval-augmented" -> retrieval, augmented): what initialisms are spelled from."""
    return _WORDS.findall(text.casefold())


def hyphened_words(text: str) -> frozenset[int]:
    """The indexes in :func:`query_words` of ``text`` of the words joined by a hyphen to
    the word before them ("on" of "single sign-on")."""
    found: set[int] = set()
    at = 0
    for chunk in text.casefold().split():
        parts = _WORDS.findall(chunk)
        if len(parts) > 1 and "-" in chunk:
            found.update(range(at + 1, at + len(parts)))
        at += len(parts)
    return frozenset(found)


def new_names(aliases: Sequence[str], names: Sequence[str]) -> list[str]:
    """The ``aliases`` that hold a word ``names`` (a title, a file name) do not: an
    alias that only spells a name again ("mlflow-safety-scorer" beside "MLflow safety
    scorer", "Pods" beside "Pod", "VirtualHost" beside "Virtual host") would count its
    words twice. A word counts as held in its singular or plural form, and two adjacent
    words of a name as held written together."""
    if not aliases:
        return []
    words = [query_words(name) for name in names]
    seen = {word for part in words for word in part}
    seen.update(left + right for part in words for left, right in pairwise(part))
    kept: list[str] = []
    for alias in aliases:
        own = query_words(alias)
        if any(word not in seen and seen.isdisjoint(plural_variants(word)) for word in own):
            kept.append(alias)
            seen.update(own)
    return kept


def query_units(
    query: str, terms: Sequence[QueryTerm], *, contractions: bool = True
) -> list[list[int]]:
    """The query's words as typed, each as the indexes of its ``terms`` (stopword-only
    words have none and are left out; equal units count once); without
    ``contractions``, a contraction (:func:`~okfx.search.analyzer.is_contraction`) is
    no word either (a hit's confidence; ranking counts it)."""
    position = {term.text: i for i, term in enumerate(terms)}
    units: list[list[int]] = []
    for chunk in split_chunks(query):
        if not contractions and is_contraction(chunk):
            continue
        words = [*analyze_chunk(chunk), *letter_bigrams(chunk)]  # "A股": a股 and 股
        unit = sorted({position[t] for t in words if t in position})
        if unit and unit not in units:
            units.append(unit)
    for bigram in letter_bigrams(query):  # "A 股", written apart: a word of its own
        if bigram in position and not any(position[bigram] in unit for unit in units):
            units.append([position[bigram]])
    return units


#: Query words that ask for a concept past its life, and the status they lift the
#: lifecycle factor of ("legacy gross margin", "old orders table").
LIFECYCLE_WORDS: dict[str, str] = dict.fromkeys(
    "archived deprecated former legacy obsolete old outdated previous retired superseded".split(),
    "deprecated",
) | dict.fromkeys("draft drafts proposed".split(), "draft")


def file_name_words(path: str) -> str:
    """A concept's file name as words ("/metrics/gross-margin-legacy.md" -> "gross margin
    legacy"): a name a query may use for it, as agents see it in links and listings."""
    stem = path.rpartition("/")[2].removesuffix(".md")
    return stem.translate(_NAME_JOINERS)


_NAME_JOINERS = str.maketrans("_-.", "   ")


class NamedTitles:
    """Which concepts with a lifecycle multiplier below 1 a query names by title or
    file name, or asks for by a lifecycle word (:data:`LIFECYCLE_WORDS`).

    Built on first use from the names of those concepts only (usually few), keyed by
    each name's first term, under a lock. A name is analysed whole only when a query
    holds its first term (its first word that is not a stopword, as
    :func:`~okfx.search.analyzer.analyze_query` keeps it first), so a first query on a
    large bundle does not analyse every title.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_term: dict[str, list[tuple[int, str]]] | None = None
        self._by_status: dict[str, list[int]] = {}
        self._terms: dict[str, frozenset[str]] = {}

    def _build(
        self, reduced: Iterator[tuple[int, str, Sequence[str]]]
    ) -> dict[str, list[tuple[int, str]]]:
        by_term: dict[str, list[tuple[int, str]]] = {}
        for doc, status, names in reduced:
            self._by_status.setdefault(status, []).append(doc)
            for name in names:
                first = _first_term(name)
                if first is not None:
                    by_term.setdefault(first, []).append((doc, name))
        return by_term

    def _name_terms(self, name: str) -> frozenset[str]:
        found = self._terms.get(name)
        if found is None:
            found = frozenset(t.text for t in analyze_query(name))
            with self._lock:
                self._terms[name] = found
        return found

    def named(self, terms: Sequence[QueryTerm], reduced: Any) -> set[int]:
        """Docs whose every title (or file name) term is among the forms of ``terms``, and
        every doc of a status a lifecycle word of the query asks for; ``reduced`` is a
        callable returning ``(doc, status, names)`` of the reduced-multiplier docs."""
        by_term = self._by_term
        if by_term is None:
            with self._lock:
                if self._by_term is None:
                    self._by_term = self._build(reduced())
                by_term = self._by_term
        if not by_term:
            return set()
        forms = {form for term in terms for form, _ in term.forms}
        found: set[int] = set()
        for status in {LIFECYCLE_WORDS[form] for form in forms if form in LIFECYCLE_WORDS}:
            found.update(self._by_status.get(status, ()))
        for form in forms:
            for doc, name in by_term.get(form, ()):
                name_terms = self._name_terms(name)
                # A one-word name ("Users") names nothing: an active "Users" may exist.
                if len(name_terms) > 1 and name_terms <= forms:
                    found.add(doc)
        return found


def _first_term(title: str) -> str | None:
    """The text of the first term :func:`~okfx.search.analyzer.analyze_query` gives for
    ``title`` (its first term that is not a stopword, else its first), without
    analysing the rest of it; None when it has no term."""
    first = None
    for chunk in split_chunks(title):
        for term in analyze_chunk(chunk, query=True):
            if term not in STOPWORDS:
                return term
            if first is None:
                first = term
    return first


class Factors(Sequence[float]):
    """``factor[doc]``: lifecycle (unless named) times coverage times kind
    (:mod:`okfx.search.kinds`), for one query."""

    __slots__ = (
        "base",
        "named",
        "postings",
        "units",
        "floor",
        "present",
        "kinds",
        "_named",
        "_titled",
        "_forms",
        "_names",
    )

    def __init__(
        self,
        base: Sequence[float],
        named: set[int],
        postings: Postings,
        units: Sequence[Sequence[Group]],
        floor: float = COVERAGE_FLOOR,
        present: int | None = None,
        kinds: tuple[Sequence[int], Sequence[float]] | None = None,
    ) -> None:
        self.base, self.named, self.postings, self.floor = base, named, postings, floor
        #: (group of each doc, factor of each group), None when the query names no kind.
        self.kinds = kinds
        # Each unit as the term ids of all its forms; units absent from the index go.
        flat = [[tid for group in unit for tid, _ in group] for unit in units]
        self.units = [tids for tids in flat if tids]
        #: How many of the query's units the corpus holds: this index's, unless a delta
        #: index is scored as part of a larger one (:mod:`okfx.search.live`).
        self.present = len(self.units) if present is None else present
        # Whether title coverage applies: two units or more, coverage and title weight
        # on, names in the index.
        self._named = (
            self.present >= 2
            and floor < 1.0
            and bool(TITLE_WEIGHT)
            and bool(len(postings.title_starts))
        )
        # doc -> how many units its name holds, counted from the name postings
        # (:meth:`_name_counts`); False until asked for.
        self._titled: Counter[int] | None | bool = False
        # The naming factor's query forms (every unit's, each term id once), empty when
        # it does not apply: coverage off, or no names in the index.
        self._forms: list[int] = (
            sorted({tid for tids in self.units for tid in tids})
            if floor < 1.0 and bool(NAME_WEIGHT) and bool(len(postings.name_starts))
            else []
        )
        # doc -> its naming factor, for the docs whose title or file name holds a query
        # form (the others have 1 - NAME_WEIGHT), from the name postings
        # (:meth:`_naming_factors`); False until asked for.
        self._names: dict[int, float] | None | bool = False

    def matched(self, doc: int) -> int:
        """How many of the query's units (in the index) ``doc`` contains."""
        impact = self.postings.impact
        return sum(1 for tids in self.units if any(impact(tid, doc) > 0.0 for tid in tids))

    def coverage(self, doc: int) -> float:
        """``floor + (1 - floor) * share of the query's units doc matches``, times the
        title coverage (:data:`TITLE_WEIGHT`); 1.0 for both with ``floor`` 1.0."""
        if self.present < 2 or self.floor >= 1.0:  # one unit, or coverage turned off
            return 1.0
        share = self.floor + (1.0 - self.floor) * self.matched(doc) / self.present
        if not self._named:
            return share
        counts = self._name_counts()
        if counts is not None:
            titled = counts.get(doc, 0)
        else:
            in_title = self.postings.in_title
            titled = sum(1 for tids in self.units if any(in_title(tid, doc) for tid in tids))
        return share * (1.0 - TITLE_WEIGHT * (1.0 - titled / self.present))

    def _name_counts(self) -> Counter[int] | None:
        """``doc -> units its name holds`` from the name postings of the query's terms,
        counted once per query; None when they hold more than :data:`NAME_POSTINGS`
        docs (each doc is then looked up by binary search)."""
        counts = self._titled
        if counts is False:
            starts, held = self.postings.title_starts, self.postings.title_docs
            spans = [[(starts[t], starts[t + 1]) for t in tids] for tids in self.units]
            if sum(end - start for unit in spans for start, end in unit) > NAME_POSTINGS:
                counts = None
            else:
                counts = Counter()
                for unit in spans:
                    docs: set[int] = set()
                    for start, end in unit:
                        docs.update(held[start:end])
                    counts.update(docs)
            self._titled = counts
        return counts  # type: ignore[return-value]

    def _naming_factors(self) -> dict[int, float] | None:
        """``doc -> naming factor`` of the docs whose title or file name holds a query
        form, counted once per query from the name postings; None when those hold more
        than :data:`NAME_POSTINGS` entries (each doc is then looked up by binary search)."""
        found = self._names
        if found is False:
            starts, held = self.postings.name_starts, self.postings.name_docs
            spans = [(starts[tid], starts[tid + 1]) for tid in self._forms]
            if sum(end - start for start, end in spans) > NAME_POSTINGS:
                found = None
            else:
                counts: Counter[int] = Counter()
                for start, end in spans:
                    counts.update(held[start:end])
                get = counts.get
                found = {
                    doc: self._naming(doc, get(doc << 1, 0), get(doc << 1 | 1, 0))
                    for doc in {entry >> 1 for entry in counts}
                }
            self._names = found
        return found  # type: ignore[return-value]

    def _naming(self, doc: int, in_title: int, in_file: int) -> float:
        lens = self.postings.name_lens
        title_len, file_len = lens[2 * doc], lens[2 * doc + 1]
        share = max(
            in_title / title_len if title_len else 0.0, in_file / file_len if file_len else 0.0
        )
        return 1.0 - NAME_WEIGHT * (1.0 - share)

    def naming(self, doc: int) -> float:
        """The naming factor of ``doc`` (:data:`NAME_WEIGHT`): 1.0 when it does not apply."""
        if not self._forms:
            return 1.0
        factors = self._naming_factors()
        if factors is not None:
            return factors.get(doc, 1.0 - NAME_WEIGHT)
        in_title = in_file = 0
        holds = self.postings.name_holds
        for tid in self._forms:
            title, file = holds(tid, doc)
            in_title += title
            in_file += file
        return self._naming(doc, in_title, in_file)

    def cap(self) -> Cap | None:
        """The naming factor's bound for the exact walk: every doc whose title and file
        name hold none of the query's forms has a factor of at most ``1 - NAME_WEIGHT``
        (:class:`~okfx.search.topk.Cap`); None when naming does not apply or its name
        postings are too long to count."""
        if not self._forms or NAME_WEIGHT >= 1.0:
            return None
        names = self._naming_factors()
        return None if names is None else Cap(1.0 - NAME_WEIGHT, names.keys())

    def ceiling(self) -> Callable[[int], float] | None:
        """``doc -> an upper bound of self[doc]`` read without the doc's postings
        (lifecycle, kind, title coverage and naming; the match share taken as 1), for the
        exact top-k walk to visit docs by (:func:`okfx.search.topk.top_k`); None when
        neither title coverage nor naming applies, or their name postings are too long
        to count. Computed as ``self[doc]`` is but for the share, so rounding keeps it
        at least ``self[doc]``."""
        counts = self._name_counts() if self._named else None
        names = self._naming_factors() if self._forms else None
        if (self._named and counts is None) or (self._forms and names is None):
            return None
        if counts is None and names is None:
            return None
        base, named, kinds, present = self.base, self.named, self.kinds, self.present
        weight = TITLE_WEIGHT
        unnamed = 1.0 - NAME_WEIGHT

        def ceiling(doc: int) -> float:
            lifecycle = 1.0 if doc in named else base[doc]
            if kinds is not None:
                lifecycle *= kinds[1][kinds[0][doc]]
            if counts is not None:
                lifecycle *= 1.0 - weight * (1.0 - counts.get(doc, 0) / present)
            if names is not None:
                lifecycle *= names.get(doc, unnamed)
            return lifecycle

        return ceiling

    @overload
    def __getitem__(self, doc: int) -> float: ...
    @overload
    def __getitem__(self, doc: slice) -> Sequence[float]: ...
    def __getitem__(self, doc: int | slice) -> float | Sequence[float]:
        if isinstance(doc, slice):
            raise TypeError("Factors are read one document at a time")
        lifecycle = 1.0 if doc in self.named else self.base[doc]
        kinds = self.kinds
        if kinds is not None:
            lifecycle *= kinds[1][kinds[0][doc]]
        value = lifecycle * self.coverage(doc)
        return value * self.naming(doc) if self._forms else value

    def __len__(self) -> int:
        return len(self.base)


def numbers_written(query: str) -> list[str]:
    """The query's numbers written with dots or dashes (``3.10``, ``23-024``,
    ``2026-07-01``), as typed: the analyzer keeps only their parts (so a version never
    meets a bigger number), which each say nothing alone."""
    out: list[str] = []
    for chunk in split_chunks(query):
        number = chunk.strip(".-")
        if (
            any(sep in number for sep in ".-")
            and number.replace(".", "").replace("-", "").isdigit()
        ):
            out.append(number)
    return out


def holds_number(text: str, number: str) -> bool:
    """Whether ``text`` holds ``number`` whole: not inside a longer number (``3.1`` is
    not in ``3.10``, nor ``10`` in ``3.10``)."""
    start = text.find(number)
    while start >= 0:
        end = start + len(number)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isdigit() or before in ".-") and not (
            after.isdigit() or (after in ".-" and end + 1 < len(text) and text[end + 1].isdigit())
        ):
            return True
        start = text.find(number, start + 1)
    return False


def confidence(
    units: Sequence[Sequence[int]],
    terms: Sequence[QueryTerm],
    matched: Sequence[str],
    similarity: float | None = None,
    numbers: Sequence[str] = (),
    weights: Sequence[float] | None = None,
) -> float:
    """How sure a hit is, 0..1, for an agent to read: the share of the query's words
    (:func:`query_units`) the concept contains; a hit found through an acronym or word
    form alone counts 0.5; with an embedding, the cosine similarity on the default
    model's scale (0.25 -> 0, 0.6 -> 1) when that is higher. Under :data:`CONFIDENT`
    the bundle probably does not answer the query. ``numbers``: the query's numbers
    written with dots or dashes (:func:`numbers_written`) that the concept holds whole,
    each a word held (docs and agent QA: "python 3.10" read 0.5 on the page titled
    "Python 3.10 notes", whose "3" and "10" say nothing alone). ``weights``: what each
    word of ``units`` weighs in the share (by default 1 each)."""
    lexical = 0.0
    # A question's light verb ("what can I use to ...") is no word the answer must hold,
    # nor is a stopword: a query of stopwords alone ("the and of", searched for want of
    # anything else) is matched by any page, which says nothing of it (MCP QA: 1.0).
    kept = [
        at
        for at, u in enumerate(units)
        if (len(u) > 1 or not terms[u[0]].light) and not all(terms[i].text in STOPWORDS for i in u)
    ]
    if kept:
        found = set(matched)
        whole = {frozenset(analyze_chunk(number)) for number in numbers}
        shares = [
            1.0
            if whole and frozenset(terms[i].text for i in units[at]) in whole
            else _held([terms[i].text for i in units[at]], found)
            for at in kept
        ]
        if weights is not None:
            kept_weights = [weights[at] for at in kept]
            lexical = sum(w * h for w, h in zip(kept_weights, shares, strict=True))
            lexical /= sum(kept_weights)
        else:
            lexical = sum(shares) / len(kept)
    if similarity is not None:
        scaled = (similarity - _COSINE_NONE) / (_COSINE_SURE - _COSINE_NONE)
        lexical = max(lexical, min(max(scaled, 0.0), 1.0))
    return round(lexical, 2)


def _held(texts: Sequence[str], found: set[str]) -> float:
    """How much of one query word a concept holds, 0..1: one of its terms (1 or 0); for
    an identifier (``git-svn``: git, svn and the joined ``gitsvn``) 1 for its joined form,
    else the share of its parts of three characters or more it holds, as parts of one or
    two characters say nothing alone (every page holds an s). A run of CJK text
    is a phrase, not a word ("个人所得税年度汇算怎么申请退税"): the share of its
    :func:`~okfx.search.cjk.content_bigrams` held, where one bigram (个人) had counted as
    the whole (Chinese QA: 1.0 for questions no page answers)."""
    if len(texts) == 1:
        return 1.0 if texts[0] in found else 0.0
    bigrams = content_bigrams(list(texts))
    if bigrams:
        latin = [t for t in texts if t.isascii() and len(t) > 2]
        parts = [*bigrams, *latin]
        return sum(1 for t in parts if t in found) / len(parts)
    joined = joined_term(texts)
    if joined is not None and joined in found:
        return 1.0
    # The share of its words: "git-svn" is not held by a page holding git alone (agent
    # QA: 1.0 hid that no page says svn).
    parts = [t for t in texts if t != joined and (len(t) > 2 or not t.isascii())]
    return sum(1 for t in parts if t in found) / len(parts) if parts else 0.0
