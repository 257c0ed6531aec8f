"""The kind factor of the lexical default: a query that names a kind of concept ranks
concepts of that kind first (issue 20).

A concept's *kind words* are the last word of its ``type`` (its head noun: "BigQuery
Table" -> table, "Attested Computation" -> computation) and the names of its folders
("tables", "references joins"). When some query word is a kind word of a concept in the
index ("orders table", "revenue policy", "utility type codelist"), every concept whose kind
words hold none of the query's kind words is scored x :data:`KIND_MISS`. A query naming
no kind, or a kind every concept has, is unaffected. The factor is <= 1, so the exact
top-k walk's bounds stay valid.

A query that holds every word of a type of two words or more ("the decision guide for
...", "migration guide") names that type, not only its head noun: when it does, concepts
of a type it names keep 1, those that share only a kind word ("Deployment Guide") are
scored x :data:`KIND_PARTIAL`, the rest x :data:`KIND_MISS`.

Concepts are grouped by their kind words (a bundle has few distinct types and folders),
so a query tests each group once and a document by its group id.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Iterable, Sequence

from okfx.search.analyzer import QueryTerm, split_chunks, tokenize
from okfx.search.filters import ConceptLike

__all__ = [
    "GENERIC_KINDS",
    "HEAD_ENDS",
    "KIND_MISS",
    "KIND_PARTIAL",
    "KindGroups",
    "head_forms",
    "kind_words",
    "type_phrase",
]

#: Words that name no kind: every document of a bundle is a concept, so a query's
#: "concept" is no kind to prefer, and a bundle that keeps its pages in ``concepts/``
#: (or types them ``Concept``) was ranked above the others' for it (viewer QA: a search
#: across bundles put a page that matched "concept" only by its folder first).
GENERIC_KINDS = frozenset({"concept", "concepts"})
#: The factor of a concept none of whose kind words the query names, when it names one.
KIND_MISS = 0.8
#: The factor of a concept that shares a kind word with a query naming another whole type.
KIND_PARTIAL = 0.9


def type_phrase(type_: str) -> str:
    """The concept's type as the phrase a query may name ("Decision Guide" -> "decision
    guide"): casefolded words, or "" for a type of fewer than two words. A vocabulary
    entry with a blank, so it never equals a term."""
    words = type_.casefold().split()
    return " ".join(words) if len(words) > 1 else ""


def kind_words(
    concept: ConceptLike, cache: dict[str, frozenset[str]] | None = None
) -> frozenset[str]:
    """The analysed head noun of the concept's type and the names of its folders;
    ``cache`` keeps each word's or folder name's terms for the next call (a bundle has
    few of them)."""
    head = concept.type.split()[-1:] if concept.type else []
    folders = concept.path.strip("/").split("/")[:-1]
    if cache is None:  # each part alone: a folder's letter and the next one's CJK are no word
        every = frozenset(term for part in (*head, *folders) for term in tokenize(part))
        return every - GENERIC_KINDS
    words: set[str] = set()
    for part in (*head, *folders):  # tokenize works chunk by chunk: parts add up
        found = cache.get(part)
        if found is None:
            found = cache[part] = frozenset(tokenize(part)) - GENERIC_KINDS
        words |= found
    return frozenset(words)


class KindGroups:
    """Per document the id of its group of kind words, built on first use (under a
    lock, from the index's entries)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: tuple[array[int], list[frozenset[str]], list[int]] | None = None
        self._phrases: list[str] = []
        self._phrase_words: dict[str, list[frozenset[str]]] = {}
        self._phrase_groups: dict[str, list[int]] | None = None
        self._vocabulary_phrases: tuple[set[str], list[str]] | None = None
        self._all: set[str] | None = None
        self._words: dict[str, list[int]] | None = None

    def _get(
        self, entries: Sequence[tuple[str, ConceptLike]]
    ) -> tuple[array[int], list[frozenset[str]], list[int]]:
        built = self._built
        if built is None:
            with self._lock:
                if self._built is None:
                    ids: dict[tuple[frozenset[str], str], int] = {}
                    group_of = array("i")
                    sizes: list[int] = []
                    # A bundle has few types and folders: analyse each pair once.
                    seen: dict[tuple[str, str], frozenset[str]] = {}
                    parts: dict[str, frozenset[str]] = {}
                    for _, concept in entries:
                        place = (concept.type, concept.path.rpartition("/")[0])
                        words = seen.get(place)
                        if words is None:
                            words = seen[place] = kind_words(concept, parts)
                        gid = ids.setdefault((words, type_phrase(concept.type)), len(ids))
                        if gid == len(sizes):
                            sizes.append(0)
                        sizes[gid] += 1
                        group_of.append(gid)
                    self._phrases = [phrase for _, phrase in ids]
                    self._built = (group_of, [words for words, _ in ids], sizes)
                built = self._built
        return built

    def vocabulary(
        self, entries: Sequence[tuple[str, ConceptLike]], dropped: Iterable[int] = ()
    ) -> set[str]:
        """Every kind word of a concept in the index, less the groups whose documents
        were all ``dropped``."""
        dropped = list(dropped)
        if not dropped and self._all is not None:
            return self._all
        group_of, words, sizes = self._get(entries)
        phrases = self._phrases
        if not dropped:
            self._all = {word for group in words for word in group} | set(phrases) - {""}
            return self._all
        left = list(sizes)
        for doc in dropped:
            left[group_of[doc]] -= 1
        kept = [gid for gid in range(len(words)) if left[gid] > 0]
        return {word for gid in kept for word in words[gid]} | {phrases[gid] for gid in kept} - {""}

    def factor(
        self,
        entries: Sequence[tuple[str, ConceptLike]],
        terms: Sequence[QueryTerm],
        vocabulary: set[str],
        query: str = "",
    ) -> tuple[array[int], list[float]] | None:
        """``(group of each doc, factor of each group)`` for a query, or None when the
        query names no kind word of ``vocabulary`` (every factor would be 1). With the
        ``query``'s text, a kind named before its first preposition is its head ("filter
        input for the countries query"): when the words after it name another kind,
        concepts of only that one are scored x :data:`KIND_PARTIAL`."""
        forms = {form for term in terms for form, _ in term.forms}
        wanted = forms & vocabulary
        if not wanted:
            return None
        group_of, words, _ = self._get(entries)
        named = {phrase for phrase in self._type_phrases(vocabulary) if self._names(phrase, forms)}
        head = head_forms(query, terms) & wanted if query and not named else set()
        factors = [KIND_MISS] * len(words)
        by_word = self._by_word(words)
        for word in wanted:
            for gid in by_word.get(word, ()):
                factors[gid] = KIND_PARTIAL if named or (head and word not in head) else 1.0
        for word in head if head != wanted else ():
            for gid in by_word.get(word, ()):
                factors[gid] = 1.0
        if named:
            by_phrase = self._by_phrase()
            for phrase in named:
                for gid in by_phrase.get(phrase, ()):
                    factors[gid] = 1.0
        return group_of, factors

    def _by_phrase(self) -> dict[str, list[int]]:
        """``type phrase -> the ids of the groups of that type``, built once."""
        found = self._phrase_groups
        if found is None:
            found = {}
            for gid, phrase in enumerate(self._phrases):
                if phrase:
                    found.setdefault(phrase, []).append(gid)
            self._phrase_groups = found  # threads racing here build equal maps
        return found

    def _type_phrases(self, vocabulary: set[str]) -> list[str]:
        """The type phrases of ``vocabulary`` (its entries with a blank), found once per
        vocabulary (an index's, or a live index's union, which never changes)."""
        found = self._vocabulary_phrases
        if found is None or found[0] is not vocabulary:
            found = (vocabulary, [entry for entry in vocabulary if " " in entry])
            self._vocabulary_phrases = found
        return found[1]

    def _names(self, phrase: str, forms: set[str]) -> bool:
        """Whether every word of a type ``phrase`` is among the query's ``forms``."""
        found = self._phrase_words.get(phrase)
        if found is None:
            found = [frozenset(tokenize(word)) for word in phrase.split()]
            self._phrase_words[phrase] = found  # threads racing here store equal lists
        return all(word & forms for word in found)

    def _by_word(self, words: list[frozenset[str]]) -> dict[str, list[int]]:
        """``kind word -> the ids of the groups holding it``, built once: a bundle with
        many folders has tens of thousands of groups, too many to test per query."""
        found = self._words
        if found is None:
            found = {}
            for gid, group in enumerate(words):
                for word in group:
                    found.setdefault(word, []).append(gid)
            self._words = found  # threads racing here build equal maps
        return found


#: Words that end a query's head ("filter input for the countries query", "workflow for
#: repotting"): prepositions and relative words.
HEAD_ENDS = frozenset(
    "for of about on in with from to into that which where who whose by under over "
    "between per via".split()
)


def head_forms(query: str, terms: Sequence[QueryTerm]) -> set[str]:
    """The forms of the query terms written before the first of :data:`HEAD_ENDS` that
    follows a word; empty when no such word follows one (a question opening "which")."""
    chunks = split_chunks(query)
    end = next((i for i, c in enumerate(chunks) if i and c.casefold() in HEAD_ENDS), None)
    if end is None:
        return set()
    before = set(tokenize(" ".join(chunks[:end])))
    return {form for term in terms if term.text in before for form, _ in term.forms}
