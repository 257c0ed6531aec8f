"""What a query's acronyms stand for, in the bundle's own words, for the embedding.

The embedding model learned common English: "CMK", "OTPM" or "NRR" are a bundle's own
shorthand, and the model reads them as noise. A bundle that uses one usually writes it
out where it first does: "customer-managed key (CMK)", or "NRR (net run rate)". Before
a hybrid search encodes its query, each acronym the query holds that the bundle defines
this way is followed by what it stands for: the model reads "CMK (customer-managed key)
encryption at rest", while the lexical side reads the query as typed.

- **An acronym of the query** is a word of 2 to 8 capital letters, an "s" after them
  allowed ("LLMs"), in a query that is one word or not written in capitals throughout.
- **A definition** is the run of words right before ``(CMK)`` (or ``(CMKs)``) whose
  initials spell it, the shortest such run: every word's initial, every initial but
  those of small words ("Bureau of Labor Statistics (BLS)"), or the initials of the
  parts of hyphenated words ("customer-managed key (CMK)"); or the words inside the
  brackets right after it, when they spell it whole ("NRR (net run rate)").
- **The bundle's definition** is the one the most concepts give, among the concepts
  whose indexed text holds the acronym (a tie goes to the first in sorted order), and
  none when more than :data:`MAX_HOLDERS` concepts hold it: such an acronym is the
  bundle's common word, and reading them all would cost a query too much. Each acronym
  is looked up once per index; a live index's concepts are the current ones, so a
  reloaded bundle reads as one loaded afresh.
- Only the query's text for the model changes: the hits, their matched terms and
  snippets come from the query as typed.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from okfx.search.analyzer import tokenize
from okfx.search.wordforms import INITIALISM_STOPWORDS

__all__ = ["MAX_HOLDERS", "Definitions", "definitions_in", "query_acronyms", "read_as"]

#: An acronym held by more concepts than this is not looked up (see the module docstring).
MAX_HOLDERS = 2000
#: Occurrences of ``(ACRONYM)`` read per text, at most.
_MAX_PER_TEXT = 16
#: Characters before ``(ACRONYM)`` that may hold its definition.
_WINDOW = 160
#: Characters inside the brackets after ``ACRONYM (`` that may hold it.
_INSIDE = 100
#: Acronyms looked up per index, at most (then the oldest half is forgotten).
_CACHE = 1024
# A query word that is an acronym: capitals, a plural "s" allowed.
_ACRONYM = re.compile(r"[A-Z]{2,8}s?")
# What may wrap a query word or a defining word without being part of it.
_AROUND = "?!,.;:()[]{}<>'\"`*_~"
# Where a definition before "(ACRONYM)" cannot reach back across.
_STOPS = ".;:!?()[]{}|"


def query_acronyms(query: str) -> list[str]:
    """The acronyms of ``query`` as written, without a plural "s", in query order and
    without repeats; none for a query of several words in capitals throughout."""
    letters = [c for c in query if c.isalpha()]
    if len(query.split()) > 1 and letters and all(c.isupper() for c in letters):
        return []
    found: list[str] = []
    for word in query.split():
        word = word.strip(_AROUND)
        if _ACRONYM.fullmatch(word):
            acronym = word[:-1] if word.endswith("s") else word
            if acronym not in found:
                found.append(acronym)
    return found


def _initials(words: Sequence[str]) -> list[str]:
    """The ways ``words`` spell an acronym (lowercase): every word's initial, the
    initials of all but small words, the initials of hyphenated words' parts."""
    every = "".join(w[0] for w in words)
    content = "".join(w[0] for w in words if w.casefold() not in INITIALISM_STOPWORDS)
    parts = "".join(p[0] for w in words for p in w.split("-") if p)
    return [every.casefold(), content.casefold(), parts.casefold()]


def _words(text: str) -> list[str]:
    """``text``'s words, stripped of what wraps them."""
    words = [w.strip(_AROUND) for w in text.split()]
    return [w for w in words if w]


def _before(text: str, acronym: str, cut: bool) -> str | None:
    """The shortest run of words at the end of ``text`` whose initials spell
    ``acronym``, casefolded; None when there is none. ``cut``: ``text`` starts inside
    the page's text, so its first word may be the end of a longer one."""
    stop = max(text.rfind(c) for c in _STOPS)
    words = _words(text[stop + 1 :])
    if cut and stop < 0:
        words = words[1:]
    letters = acronym.casefold()
    for n in range(1, min(len(words), len(acronym) + 4) + 1):
        tail = words[-n:]
        if not tail[0][0].isalpha():
            break
        if letters in _initials(tail):
            return _said(tail)
    return None


def _inside(text: str, acronym: str) -> str | None:
    """The words of ``text`` (what the brackets after the acronym hold), casefolded,
    when they spell ``acronym`` whole; else None."""
    words = _words(text)
    if not words or len(words) > len(acronym) + 4 or not words[0][0].isalpha():
        return None
    return _said(words) if acronym.casefold() in _initials(words) else None


def _said(words: Sequence[str]) -> str:
    """A definition as it is counted and read: casefolded, hyphens as blanks
    ("customer-managed key" and "Customer managed key" are one)."""
    return " ".join(words).replace("-", " ").casefold()


def definitions_in(text: str, acronym: str) -> set[str]:
    """The definitions of ``acronym`` that ``text`` gives (see the module docstring)."""
    found: set[str] = set()
    opened = "(" + acronym
    at, seen = text.find(opened), 0
    while at >= 0 and seen < _MAX_PER_TEXT:
        seen += 1
        end = at + len(opened)
        end += text.startswith("s", end)
        if text.startswith(")", end):
            start = max(0, at - _WINDOW)
            cut = start > 0 and not text[start - 1].isspace()
            meaning = _before(text[start:at], acronym, cut)
            if meaning:
                found.add(meaning)
        at = text.find(opened, end)
    named = acronym + " ("
    at, seen = text.find(named), 0
    while at >= 0 and seen < _MAX_PER_TEXT:
        seen += 1
        start = at + len(named)
        if at == 0 or not text[at - 1].isalnum():
            close = text.find(")", start, start + _INSIDE)
            if close > start:
                meaning = _inside(text[start:close], acronym)
                if meaning:
                    found.add(meaning)
        at = text.find(named, start)
    return found


class Definitions:
    """The bundle's definitions of acronyms, looked up in ``parts``: ``(index,
    dropped doc ids)`` pairs, an index being a :class:`~okfx.search.index.SearchIndex`
    (a live index's base, less what was dropped from it, and its delta)."""

    def __init__(self, parts: Sequence[tuple[Any, frozenset[int]]]) -> None:
        self._parts = parts
        self._known: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def meanings(self, query: str) -> dict[str, str]:
        """``acronym -> definition`` for each acronym of ``query`` the bundle defines,
        unless the query already holds each word of the definition."""
        acronyms = query_acronyms(query)
        if not acronyms:
            return {}
        words = set(_words(query.casefold()))
        meanings = {}
        for acronym in acronyms:
            meaning = self.meaning(acronym)
            if meaning is not None and not set(meaning.split()) <= words:
                meanings[acronym] = meaning
        return meanings

    def expand(self, query: str, meanings: dict[str, str] | None = None) -> str:
        """``query`` with each acronym the bundle defines followed by its definition in
        brackets, once (:meth:`meanings`, or the ``meanings`` given); ``query`` itself
        when there is none."""
        meanings = dict(self.meanings(query) if meanings is None else meanings)
        if not meanings:
            return query
        out = []
        for chunk in query.split():
            out.append(chunk)
            word = chunk.strip(_AROUND)
            acronym = word[:-1] if word.endswith("s") and word[:-1] in meanings else word
            meaning = meanings.pop(acronym, None)
            if meaning is not None:
                out.append(f"({meaning})")
        return " ".join(out)

    def meaning(self, acronym: str) -> str | None:
        """The bundle's definition of ``acronym``, or None."""
        known = self._known
        with self._lock:
            if acronym in known:
                return known[acronym]
        meaning = self._look_up(acronym)  # threads racing here find equal values
        with self._lock:
            if len(known) >= _CACHE:
                for key in list(known)[: _CACHE // 2]:
                    del known[key]
            known[acronym] = meaning
        return meaning

    def _holders(self, acronym: str) -> list[Any] | None:
        """The concepts whose indexed text holds ``acronym``, or None when there are
        more than :data:`MAX_HOLDERS`."""
        terms = tokenize(acronym)
        if len(terms) != 1:
            return []
        holders: list[Any] = []
        for index, dropped in self._parts:
            tid = index.postings.terms.get(terms[0])
            if tid is None:
                continue
            docs, _ = index.postings.postings(tid)
            holders.extend(index.entries[doc][1] for doc in docs if doc not in dropped)
            if len(holders) > MAX_HOLDERS:
                return None
        return holders

    def _look_up(self, acronym: str) -> str | None:
        holders = self._holders(acronym)
        if not holders:
            return None
        votes: Counter[str] = Counter()
        for concept in holders:
            votes.update(_given(concept, acronym))
        if not votes:
            return None
        return min(votes.items(), key=lambda item: (-item[1], item[0]))[0]


def _given(concept: Any, acronym: str) -> Iterable[str]:
    """The definitions of ``acronym`` one concept gives, each once."""
    found: set[str] = set()
    for text in (concept.title, concept.description, concept.body):
        if acronym in text:
            found |= definitions_in(text, acronym)
    return found


def read_as(meanings: dict[str, str]) -> str:
    """The sentence a hybrid search adds when its model read definitions: "The
    embedding read CMK as 'customer managed key', as the bundle defines it." ("" for
    none)."""
    if not meanings:
        return ""
    said = ", ".join(f"{acronym} as '{meaning}'" for acronym, meaning in meanings.items())
    defines = "defines it" if len(meanings) == 1 else "defines them"
    return f"The embedding read {said}, as the bundle {defines}."
