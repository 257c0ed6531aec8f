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
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, overload

import re2

from okfx.deadline import checked
from okfx.errors import InvalidArgument, InvalidRegex
from okfx.search.candidates import GrepSet, candidates
from okfx.search.corpus import Part, loaded_body, one_line, single_line
from okfx.search.filters import ConceptFilter, ConceptLike, clamp_limit, hidden_notice
from okfx.search.snippets import EXCERPT_CHARS, cut_line

__all__ = ["MAX_MATCHES", "MAX_PATTERN_CHARS", "GrepMatch", "GrepResults", "grep"]

#: Bounds on one grep: matches in total, matches per concept, pattern length.
MAX_MATCHES = 200
MAX_PER_CONCEPT = 50
MAX_PATTERN_CHARS = 1000
# \A or \z, or a flag group that turns a flag off, such as (?-m) or (?i-m:...).
_TEXT_ANCHORED = re.compile(r"\\[Az]|\(\?[A-Za-z]*-")
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


def _per_bundle(by_bundle: dict[str, int]) -> str:
    """How many of the matching concepts each bundle holds, the most first, when more
    than one does (platform QA: 50 of 50 matches from the big bundle, and nothing said
    the small one had 47 more)."""
    if len(by_bundle) < 2:
        return ""
    ranked = sorted(by_bundle.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{name} {n}" for name, n in ranked[:5])
    return f" ({shown}{', ...' if len(ranked) > 5 else ''}; pass bundle= to grep one)"


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
        by_bundle: dict[str, int] | None = None,
    ) -> None:
        self.pattern = pattern
        self.matches = tuple(matches)
        self.concepts = concepts
        self.truncated = truncated
        self.hidden = dict(hidden)
        notes = [hidden_notice(hidden, chosen=not matches)] if hidden else []
        if truncated:
            # docs QA: two matches of one concept shown, and only "narrow" offered
            more = "raise limit (at most 200), or " if len(self.matches) < MAX_MATCHES else ""
            notes.append(
                f"Showing the first {_matches(len(self.matches))}; {concepts} concepts match"
                f"{_per_bundle(by_bundle or {})}. To see the rest, {more}narrow the pattern "
                "or the filters."
            )
        self.notice = " ".join(note for note in notes if note)  # CLI QA: a leading blank

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
        # Groups are never read, only where a match is: without captures RE2 finds it
        # with its DFAs, forward then back, where a group sends a long text to its NFA
        # (13x slower on a 100k-character line matching "(a+)+$").
        options.never_capture = True
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


def _matcher(pattern: str, regex: bool, ignore_case: bool) -> _Substring | _Regex:
    """The matcher of ``pattern``. Text is found in either of its canonically equivalent
    Unicode spellings, composed (NFC) or decomposed (NFD, as macOS writes file names and
    some editors write text): CLI QA, a Korean author's grep for 권한 found nothing in a
    page written on macOS, which search found first. A plain pattern that has two
    spellings is searched as an RE2 alternation of both; a regex is as written."""
    if regex:
        return _Regex(pattern, ignore_case)
    forms = dict.fromkeys(unicodedata.normalize(form, pattern) for form in ("NFC", "NFD"))
    if len(forms) > 1:
        return _Regex("(?:" + "|".join(map(re2.escape, forms)) + ")", ignore_case)
    return _Substring(pattern, ignore_case)


def grep(
    entries: Iterable[tuple[str, ConceptLike]] | GrepSet,
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
        entries: ``(bundle name, concept)`` pairs, in any order, or a
            :class:`~okfx.search.candidates.GrepSet` of them (kept to grep them again).
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
    matcher = _matcher(pattern, regex, ignore_case)
    searched = entries if isinstance(entries, GrepSet) else GrepSet(checked(entries, "grep"))
    matching = candidates(matcher, searched)
    matching.sort(key=lambda found: (found[0], found[1].path))
    matches: list[GrepMatch] = []
    hidden: dict[str, int] = {}
    concepts = 0
    by_bundle: dict[str, int] = {}
    truncated = False
    for name, concept, where in matching:
        reason = spec.reason(name, concept)
        room = min(each, total - len(matches))
        if reason is not None or room <= 0:
            # Still counted, so hidden and total counts are complete.
            if reason is not None:
                hidden[reason] = hidden.get(reason, 0) + 1
            else:
                concepts += 1
                by_bundle[name] = by_bundle.get(name, 0) + 1
                truncated = True
            continue
        body, first_line = loaded_body(concept, where)
        texts = (one_line(concept.title), one_line(concept.description), body)
        found = _concept_matches(matcher, name, concept.path, texts, room, first_line)
        if found:
            concepts += 1
            by_bundle[name] = by_bundle.get(name, 0) + 1
            matches.extend(found)
    return GrepResults(pattern, matches, concepts, truncated, hidden, by_bundle)


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


def _matches(n: int) -> str:
    return "match" if n == 1 else f"{n} matches"
