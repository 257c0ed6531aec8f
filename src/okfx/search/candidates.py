"""Which concepts a grep must look at: the ones whose texts match, found per corpus.

Most concepts have no match, so finding the candidates is the whole cost of a grep. A
:class:`GrepSet` groups the concepts once by where their texts are kept (the corpus of
their load, :mod:`okfx.search.corpus`, or none), so a grep costs one search of each
corpus plus work per *match*, not a Python step per concept: a server keeps one per
bundle version and greps it again and again (``okfx.tools.grepping``).

A concept whose load kept its texts is found by one search of all of them; the others
(no corpus, a corpus that does not hold them, a corpus that fails its checksum) are
searched one by one (:func:`_read_candidates`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from okfx.deadline import check, checked
from okfx.search.corpus import Corpus, Part, Where, one_line

__all__ = ["Found", "GrepSet", "Matcher", "Where", "candidates"]

_RESERVED = frozenset({"index.md", "log.md"})
_RESERVED_SUFFIXES = tuple(f"/{name}" for name in sorted(_RESERVED))

Entry = tuple[str, Any]  # (bundle name, concept)
#: A candidate: bundle name, concept, and where its texts are when a corpus holds them.
Found = tuple[str, Any, Where | None]


class Matcher(Protocol):
    """What grep's substring and regex matchers offer (``okfx.search.grep``)."""

    @property
    def exact(self) -> bool: ...
    def segments(self, part: Part) -> Iterator[int]: ...
    def in_body(self, part: Part, seg: int) -> bool: ...
    def found(self, text: str) -> bool: ...


class GrepSet:
    """``(bundle name, concept)`` pairs grouped by the corpus that holds their texts.

    ``groups`` are ``(corpus, {path: [entries]})`` for the concepts a corpus covers;
    ``rest`` the others. Reserved files (``index.md``, ``log.md``) are left out: grep
    never reports them. Built in one pass over the entries; it holds for as long as the
    concepts it was built from do not change (a bundle is replaced, never changed, on a
    reload)."""

    __slots__ = ("groups", "rest", "size")

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        by_corpus: dict[int, tuple[Corpus, dict[str, list[Entry]]]] = {}
        rest: list[Entry] = []
        size = 0
        for entry in entries:
            concept = entry[1]
            path = concept.path
            if _reserved(path):
                continue
            size += 1
            corpus = getattr(concept, "corpus", None)
            if corpus is None or path in corpus.uncovered:
                rest.append(entry)
                continue
            group = by_corpus.get(id(corpus))
            if group is None:
                group = by_corpus[id(corpus)] = (corpus, {})
            group[1].setdefault(path, []).append(entry)
        self.groups: list[tuple[Corpus, dict[str, list[Entry]]]] = list(by_corpus.values())
        self.rest = rest
        self.size = size

    @classmethod
    def join(cls, sets: Sequence[GrepSet]) -> GrepSet:
        """One set holding the entries of ``sets`` (of distinct bundles)."""
        if len(sets) == 1:
            return sets[0]
        joined = cls()
        for each in sets:
            joined.groups.extend(each.groups)
            joined.rest.extend(each.rest)
            joined.size += each.size
        return joined

    def __len__(self) -> int:
        return self.size


def candidates(matcher: Matcher, concepts: GrepSet) -> list[Found]:
    """The concepts of ``concepts`` whose title, description or body matches, with
    where their texts as loaded are when a corpus holds them; in no set order."""
    found: list[Found] = []
    rest = list(concepts.rest)
    for corpus, members in concepts.groups:
        check("grep")  # the call's deadline, before each scan of a whole corpus
        hits = _corpus_hits(matcher, corpus)
        if hits is None:  # a corpus that fails its checksum: its concepts one by one
            rest.extend(entry for entries in members.values() for entry in entries)
            continue
        for path, where in checked(hits.items(), "grep"):
            for name, concept in members.get(path, ()):
                if matcher.exact or _confirmed(matcher, concept, where):
                    found.append((name, concept, where))
    found.extend((name, c, None) for name, c in _read_candidates(matcher, rest))
    return found


def _corpus_hits(matcher: Matcher, corpus: Corpus) -> dict[str, Where] | None:
    if not corpus.usable():
        return None
    return corpus.hits(lambda part: checked(matcher.segments(part), "grep"))


def _confirmed(matcher: Matcher, concept: Any, where: Where) -> bool:
    """Does a concept whose joined texts match have a field that matches on its own?"""
    if matcher.found(one_line(concept.title)) or matcher.found(one_line(concept.description)):
        return True
    return matcher.in_body(*where)


def _read_candidates(matcher: Matcher, entries: list[Entry]) -> list[Entry]:
    """Candidates among concepts without a corpus: one C-level search per text (a
    :func:`_plain` needle searches the texts as they are)."""
    check("grep")
    entries = list(checked(entries, "grep"))
    needle: str | None = getattr(matcher, "needle", None)
    ignore_case = bool(getattr(matcher, "ignore_case", False))
    if needle is not None and not ignore_case and _plain(needle):
        return [
            (name, c)
            for name, c in entries
            if needle in c.title
            or needle in c.description
            or (_may_contain(c, needle, False) and needle in c.body)
        ]
    regex = getattr(matcher, "regex", None)
    if regex is not None and getattr(matcher, "joinable", False):
        # One search of the three texts joined as lines: a pattern matches the joined
        # text wherever it matches one of them. It may also match across two of
        # them, so the few concepts it keeps are then searched text by text.
        search = regex.search
        entries = [
            (name, c)
            for name, c in entries
            if search(f"{one_line(c.title)}\n{one_line(c.description)}\n{c.body}".encode())
            is not None
        ]
    found_in = matcher.found

    def in_body(c: Any) -> bool:
        if needle is not None and not _may_contain(c, needle, ignore_case):
            return False
        return found_in(c.body)

    return [
        (name, c)
        for name, c in entries
        if found_in(one_line(c.title)) or found_in(one_line(c.description)) or in_body(c)
    ]


def _may_contain(concept: Any, needle: str, ignore_case: bool) -> bool:
    """False when a concept that keeps its body in its file (``okfx.bundle.stored``)
    says the body cannot hold ``needle``: a byte search of the file, instead of reading
    the body text of every concept."""
    check = getattr(concept, "body_may_contain", None)
    return True if check is None else bool(check(needle, ignore_case))


def _plain(needle: str) -> bool:
    """A needle without a space or a line break: it matches a title as grep reads it
    (one line) exactly where it matches the title itself."""
    return " " not in needle and "\n" not in needle


def _reserved(path: str) -> bool:
    return path.endswith(_RESERVED_SUFFIXES) or path in _RESERVED
