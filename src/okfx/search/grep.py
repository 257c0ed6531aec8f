"""Deterministic grep over concepts: substring or RE2 regular-expression matches.

Matches are reported per line: the title and description as their own fields, body
lines numbered as in the file when the concept has ``body_line`` (where its body
starts, as ``okfx.model.Concept`` has), else from 1 within the body. Output is bounded
(matches in total and per concept, characters per line) and sorted by (bundle, path,
field, line).

Regular expressions run on RE2 (``google-re2``), whose matching time is linear in the
text, so a hostile pattern like ``(a+)+$`` against a 100k-character line cannot hang
the process. Patterns RE2 cannot run (backreferences, lookaround) and invalid ones raise
:class:`~okfx.errors.InvalidRegex`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, overload

import re2

from okfx.deadline import checked
from okfx.errors import InvalidArgument, InvalidRegex
from okfx.search.corpus import Corpus, Part, one_line, single_line
from okfx.search.filters import ConceptFilter, ConceptLike, clamp_limit, hidden_notice
from okfx.search.snippets import EXCERPT_CHARS, cut_line

__all__ = ["MAX_MATCHES", "MAX_PATTERN_CHARS", "GrepMatch", "GrepResults", "grep"]

#: Bounds on one grep: matches in total, matches per concept, pattern length.
MAX_MATCHES = 200
MAX_PER_CONCEPT = 50
MAX_PATTERN_CHARS = 1000
_RESERVED = frozenset({"index.md", "log.md"})
# \A or \z, or a flag group that turns a flag off, such as (?-m) or (?i-m:...).
_TEXT_ANCHORED = re.compile(r"\\[Az]|\(\?[A-Za-z]*-")
_RESERVED_SUFFIXES = tuple(f"/{name}" for name in sorted(_RESERVED))
# Searched in this order, so matches come out sorted by field.
_FIELDS = ("title", "description", "body")


@dataclass(frozen=True, slots=True)
class GrepMatch:
    """One matching line. ``line`` is the body line's number in the file (1-based
    within the body for concepts without ``body_line``), None for the title and
    description; ``column`` is the 1-based character where the first match starts."""

    bundle: str
    path: str
    field: str
    line: int | None
    column: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle": self.bundle,
            "path": self.path,
            "field": self.field,
            "line": self.line,
            "column": self.column,
            "text": self.text,
        }


class GrepResults(Sequence[GrepMatch]):
    """Matches of one grep, plus how many matching concepts the filters hid.

    ``concepts`` counts every admissible concept with a match, shown or not;
    ``truncated`` says the match limit cut the list short.
    """

    __slots__ = ("pattern", "matches", "concepts", "truncated", "hidden", "notice")

    def __init__(
        self,
        pattern: str,
        matches: Sequence[GrepMatch],
        concepts: int,
        truncated: bool,
        hidden: dict[str, int],
    ) -> None:
        self.pattern = pattern
        self.matches = tuple(matches)
        self.concepts = concepts
        self.truncated = truncated
        self.hidden = dict(hidden)
        notes = [hidden_notice(hidden)] if hidden else []
        if truncated:
            notes.append(
                f"Showing the first {len(self.matches)} matches; {concepts} concepts match. "
                "Narrow the pattern or the filters to see the rest."
            )
        self.notice = " ".join(notes)

    @overload
    def __getitem__(self, index: int) -> GrepMatch: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[GrepMatch]: ...
    def __getitem__(self, index: int | slice) -> GrepMatch | Sequence[GrepMatch]:
        return self.matches[index]

    def __len__(self) -> int:
        return len(self.matches)

    def __iter__(self) -> Iterator[GrepMatch]:
        return iter(self.matches)

    def __repr__(self) -> str:
        return f"<GrepResults {self.pattern!r} matches={len(self.matches)} hidden={self.hidden}>"

    def to_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "matches": [m.to_dict() for m in self.matches],
            "concepts": self.concepts,
            "truncated": self.truncated,
            "hidden": dict(self.hidden),
            "notice": self.notice,
        }


# (line index, start, end): the first match of one line, offsets in characters.
_Hit = tuple[int, int, int]


class _Substring:
    """Plain substring search; ``str.find`` on the text, casefolded for ignore_case."""

    def __init__(self, pattern: str, ignore_case: bool) -> None:
        self.ignore_case = ignore_case
        self.needle = pattern.casefold() if ignore_case else pattern
        # A needle without a line break lies in one field of a segment that holds it.
        self.exact = "\n" not in self.needle

    def segments(self, part: Part) -> Iterator[int]:
        """The segments of ``part`` (``okfx.search.corpus``) whose text holds the needle."""
        if self.ignore_case:
            return part.find_folded(self.needle)
        return part.find(self.needle.encode("utf-8", "surrogatepass"))

    def in_body(self, part: Part, seg: int) -> bool:
        return self.found(part.body(seg))

    def _fold(self, text: str) -> str:
        return text.casefold() if self.ignore_case else text

    def found(self, text: str) -> bool:
        return self.needle in self._fold(text)

    def lines(self, text: str, limit: int) -> list[_Hit]:
        hay = self._fold(text)
        if self.needle not in hay:
            return []
        hits: list[_Hit] = []
        if len(hay) != len(text):
            # casefold changed lengths (ß -> ss): match line by line instead.
            for number, line in enumerate(text.split("\n")):
                pos = line.casefold().find(self.needle)
                if pos >= 0:
                    hits.append((number, pos, pos + len(self.needle)))
                    if len(hits) >= limit:
                        break
            return hits
        pos = hay.find(self.needle)
        number, counted = 0, 0
        while pos >= 0 and len(hits) < limit:
            number += hay.count("\n", counted, pos)
            start = hay.rfind("\n", 0, pos) + 1
            hits.append((number, pos - start, pos - start + len(self.needle)))
            end = hay.find("\n", pos)
            if end < 0:
                break
            counted = end
            pos = hay.find(self.needle, end + 1)
        return hits


def _problem(pattern: str, options: Any, exc: re2.error) -> str:
    """Why RE2 refused ``pattern``, in its words about the pattern as the caller wrote it
    (not about the ``(?m)`` grep puts in front)."""
    try:
        re2.compile(pattern, options)
    except re2.error as bare:
        exc = bare
    reason = exc.args[0] if exc.args else "invalid pattern"
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    reason = str(reason).replace("(?m)", "", 1)
    return (
        f"invalid regular expression {pattern!r}: {reason}. grep uses RE2 syntax "
        "(no backreferences or lookaround); to find the text as written, pass regex=false"
    )


class _Regex:
    """RE2 search over the UTF-8 bytes of a text, ``^``/``$`` anchored at lines."""

    def __init__(self, pattern: str, ignore_case: bool) -> None:
        options = re2.Options()
        options.log_errors = False
        options.case_sensitive = not ignore_case
        # Texts can be joined for one search unless the pattern anchors at the text's
        # own start or end (\A, \z) or turns multi-line mode off.
        self.joinable = _TEXT_ANCHORED.search(pattern) is None
        # Fields searched on their own need no second look.
        self.exact = not self.joinable
        self.single_line = single_line(pattern)
        try:
            self.regex = re2.compile("(?m)" + pattern, options)
        except re2.error as exc:
            raise InvalidRegex(_problem(pattern, options, exc)) from None

    def found(self, text: str) -> bool:
        return self.regex.search(text.encode("utf-8")) is not None

    def segments(self, part: Part) -> Iterator[int]:
        """The segments of ``part`` (``okfx.search.corpus``) whose joined text matches,
        or with a field that matches on its own (a pattern that cannot be joined)."""
        if not self.joinable:
            return part.search_fields(self.regex)
        return part.search(self.regex, self.single_line)

    def in_body(self, part: Part, seg: int) -> bool:
        return part.body_matches(self.regex, seg)

    def lines(self, text: str, limit: int) -> list[_Hit]:
        data = text.encode("utf-8")
        hits: list[_Hit] = []
        number, counted, pos = 0, 0, 0
        while len(hits) < limit:
            match = self.regex.search(data, pos)
            if match is None:
                break
            begin = match.start()
            number += data.count(b"\n", counted, begin)
            counted = begin
            start = data.rfind(b"\n", 0, begin) + 1
            end = data.find(b"\n", begin)
            stop = min(match.end(), len(data) if end < 0 else end)
            column = len(data[start:begin].decode("utf-8", "replace"))
            width = len(data[begin:stop].decode("utf-8", "replace"))
            hits.append((number, column, column + width))
            if end < 0:
                break
            pos = end + 1  # one hit per line: continue on the next line
        return hits


def grep(
    entries: Iterable[tuple[str, ConceptLike]],
    pattern: str,
    *,
    regex: bool = False,
    ignore_case: bool = False,
    limit: int = 50,
    per_concept: int = 5,
    type: str | None = None,
    tags: Sequence[str] | str | None = None,
    directory: str | None = None,
    trust_tier: str | None = None,
    include_deprecated: bool = False,
    include_stale: bool = True,
    bundle: str | None = None,
    now: datetime | None = None,
) -> GrepResults:
    """Lines of concept titles, descriptions and bodies matching ``pattern``.

    Args:
        entries: ``(bundle name, concept)`` pairs, in any order.
        pattern: A substring, or an RE2 regular expression when ``regex`` is true.
        regex: Treat ``pattern`` as a regular expression (``^``/``$`` match at lines).
        ignore_case: Match case-insensitively.
        limit: Matches returned in total, clamped to 1..200.
        per_concept: Matching lines returned per concept, clamped to 1..50.
        type, tags, directory, trust_tier, include_deprecated, include_stale, bundle,
        now: The shared filters (:class:`~okfx.search.filters.ConceptFilter`).
    """
    if not isinstance(pattern, str) or not pattern:
        raise InvalidArgument("pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidArgument(f"pattern is longer than {MAX_PATTERN_CHARS} characters")
    if not isinstance(regex, bool) or not isinstance(ignore_case, bool):
        raise InvalidArgument("regex and ignore_case must be true or false")
    total = clamp_limit(limit, MAX_MATCHES)
    each = clamp_limit(per_concept, MAX_PER_CONCEPT, "per_concept")
    spec = ConceptFilter.create(
        bundle=bundle,
        directory=directory,
        type=type,
        tags=tags,
        trust_tier=trust_tier,
        include_deprecated=include_deprecated,
        include_stale=include_stale,
        now=now,
    )
    matcher: _Substring | _Regex = (
        _Regex(pattern, ignore_case) if regex else _Substring(pattern, ignore_case)
    )
    candidates = _candidates(matcher, entries)
    candidates.sort(key=lambda found: (found[0], found[1].path))
    matches: list[GrepMatch] = []
    hidden: dict[str, int] = {}
    concepts = 0
    truncated = False
    for name, concept, where in candidates:
        reason = spec.reason(name, concept)
        room = min(each, total - len(matches))
        if reason is not None or room <= 0:
            # Still counted, so hidden and total counts are complete.
            if reason is not None:
                hidden[reason] = hidden.get(reason, 0) + 1
            else:
                concepts += 1
                truncated = True
            continue
        body, first_line = _body(concept, where)
        texts = (one_line(concept.title), one_line(concept.description), body)
        found = _concept_matches(matcher, name, concept.path, texts, room, first_line)
        if found:
            concepts += 1
            matches.extend(found)
    return GrepResults(pattern, matches, concepts, truncated, hidden)


_Where = tuple[Part, int]
_Found = tuple[str, ConceptLike, _Where | None]


def _candidates(
    matcher: _Substring | _Regex, entries: Iterable[tuple[str, ConceptLike]]
) -> list[_Found]:
    """The concepts (reserved files aside) whose title, description or body matches,
    with where their texts as loaded are when a corpus holds them.

    Most concepts have no match, so this is the whole cost of a grep. A concept whose
    load kept its texts (``concept.corpus``, :mod:`okfx.search.corpus`) is found by one
    search of all of them; the others are searched one by one (:func:`_read_candidates`).
    """
    entries = checked(entries, "grep")  # the scan stops at the call's deadline
    found: list[_Found] = []
    rest: list[tuple[str, ConceptLike]] = []
    searched: dict[int, dict[str, _Where] | None] = {}
    last: Corpus | None = None
    hits: dict[str, _Where] | None = None
    for name, concept in entries:
        corpus = getattr(concept, "corpus", None)
        if corpus is not last:
            last = corpus
            if corpus is None:
                hits = None
            elif id(corpus) in searched:
                hits = searched[id(corpus)]
            else:
                hits = searched[id(corpus)] = _corpus_hits(matcher, corpus)
        if hits is None or concept.path in last.uncovered:  # type: ignore[union-attr]
            rest.append((name, concept))
            continue
        where = hits.get(concept.path)
        if where is not None and (matcher.exact or _confirmed(matcher, concept, where)):
            found.append((name, concept, where))
    found.extend((name, c, None) for name, c in _read_candidates(matcher, rest))
    return [item for item in found if not _reserved(item[1].path)]


def _corpus_hits(matcher: _Substring | _Regex, corpus: Corpus) -> dict[str, _Where] | None:
    if not corpus.usable():
        return None
    return corpus.hits(lambda part: checked(matcher.segments(part), "grep"))


def _confirmed(matcher: _Substring | _Regex, concept: ConceptLike, where: _Where) -> bool:
    """Does a concept whose joined texts match have a field that matches on its own?"""
    if matcher.found(one_line(concept.title)) or matcher.found(one_line(concept.description)):
        return True
    return matcher.in_body(*where)


def _body(concept: ConceptLike, where: _Where | None) -> tuple[str, int]:
    """The body grep shows the lines of, and the file line it starts on: the text as
    loaded while the file still has the stamp it was read with, else as the file holds
    it now (what ``concept.body`` reads)."""
    if where is None:
        return concept.body, getattr(concept, "body_line", 1)
    part, seg = where
    now = concept.body_now(part.stamp(seg))  # type: ignore[attr-defined]
    if now is None:
        return part.body(seg), part.lines[seg]
    body, line = now
    return body, line


def _read_candidates(
    matcher: _Substring | _Regex, entries: list[tuple[str, ConceptLike]]
) -> list[tuple[str, ConceptLike]]:
    """Candidates among concepts without a corpus: one C-level search per text (a
    :func:`_plain` needle searches the texts as they are)."""
    if isinstance(matcher, _Substring) and not matcher.ignore_case and _plain(matcher.needle):
        needle = matcher.needle
        return [
            (name, c)
            for name, c in entries
            if needle in c.title
            or needle in c.description
            or (_may_contain(c, needle, False) and needle in c.body)
        ]
    if isinstance(matcher, _Regex) and matcher.joinable:
        # One search of the three texts joined as lines: a pattern matches the joined
        # text wherever it matches one of them. It may also match across two of
        # them, so the few concepts it keeps are then searched text by text.
        search = matcher.regex.search
        entries = [
            (name, c)
            for name, c in entries
            if search(f"{one_line(c.title)}\n{one_line(c.description)}\n{c.body}".encode())
            is not None
        ]
    found_in = matcher.found
    plain = matcher if isinstance(matcher, _Substring) else None

    def in_body(c: ConceptLike) -> bool:
        if plain is not None and not _may_contain(c, plain.needle, plain.ignore_case):
            return False
        return found_in(c.body)

    return [
        (name, c)
        for name, c in entries
        if found_in(one_line(c.title)) or found_in(one_line(c.description)) or in_body(c)
    ]


def _may_contain(concept: ConceptLike, needle: str, ignore_case: bool) -> bool:
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


def _concept_matches(
    matcher: _Substring | _Regex,
    bundle: str,
    path: str,
    texts: Sequence[str],
    room: int,
    first_line: int = 1,
) -> list[GrepMatch]:
    out: list[GrepMatch] = []
    for field, text in zip(_FIELDS, texts, strict=True):
        if not text or len(out) >= room:
            continue
        hits = matcher.lines(text, room - len(out))
        lines = text.split("\n") if hits and field == "body" else [text]
        for number, start, end in hits:
            out.append(
                GrepMatch(
                    bundle=bundle,
                    path=path,
                    field=field,
                    line=number + first_line if field == "body" else None,
                    column=start + 1,
                    text=cut_line(lines[number], start, end, EXCERPT_CHARS),
                )
            )
    return out
