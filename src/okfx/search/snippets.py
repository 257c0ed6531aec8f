"""Short, bounded excerpts: the best-matching body line of a hit, and long-line cutting.

Both search and grep show one line of text per match; a line can be a 100k-character
table row or minified blob, so every excerpt is cut to :data:`EXCERPT_CHARS` around the
match, with ``…`` marking what was cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from okfx.search.analyzer import without_latin_marks

__all__ = [
    "DEFINITION_WEIGHT",
    "EXCERPT_CHARS",
    "addresses",
    "best_line",
    "cut_line",
    "without_footnote_labels",
    "without_title_heading",
]

#: The longest excerpt returned, ellipses included.
EXCERPT_CHARS = 200
# Occurrences of one needle looked at per body: enough to find a good line, bounded.
_MAX_OCCURRENCES = 8
# How a fence line (```` ```python ````, up to three spaces in) can start.
_FENCE_STARTS = frozenset(" `~")
# A needle only inside a word ("lang" in "languages") counts this share of its weight to a
# line: a line holding it as a word, as the index read it, shows first.
_PART = 0.25
_ELLIPSIS = "…"
# A letter or digit: what str.isalnum() accepts ("\w" is those and "_").
_ALNUM = re.compile(r"[^\W_]")
# Lines that open with these are markup: a snippet prefers a prose line.
_MARKUP = ("#", "```", "|", "---")
# Where a line's words are an address, not text a reader reads: a link's destination
# (``](/metrics/resource-utilization.md)``), an autolink (``<https://...>``) and a bare URL.
# Every branch starts with its own character and stops at a closing one: linear.
_ADDRESS = re.compile(r"\]\([^()\n]*\)|<[a-z][a-z0-9+.-]*:[^<>\s]*>|https?://[^\s()<>\]]*")
# A footnote's label (``[^kb]``, ``[^composition-filter-compares-the-xr-gvk]``): the key
# into ``sources`` (spec §5.1), not prose. Bounded, so a run of ``[^`` stays linear.
_LABEL = re.compile(r"\[\^[^\]\s\[]{1,200}\]")
# A footnote definition's label at the start of its line, with the colon and blanks after.
_DEFINITION = re.compile(r"^[ \t]*+\[\^[^\]\s\[]{1,200}\]:[ \t]*+", re.MULTILINE)


def cut_line(line: str, start: int = 0, end: int = 0, width: int = EXCERPT_CHARS) -> str:
    """``line`` stripped, or at most ``width`` characters of it centred on
    ``line[start:end]``, with ``…`` where text was cut."""
    text = line.strip()
    if len(text) <= width:
        return text
    indent = len(line) - len(line.lstrip())
    start = max(0, min(start - indent, len(text)))
    end = max(start, min(end - indent, len(text)))
    left = start - max(0, (width - 2 - (end - start)) // 2)
    if left <= 0:
        return text[: _word_end(text, width - 1, end)].rstrip() + _ELLIPSIS
    if left + width - 1 >= len(text):
        return _ELLIPSIS + text[_word_start(text, len(text) - (width - 1), start) :].lstrip()
    cut = text[_word_start(text, left, start) : _word_end(text, left + width - 2, end)]
    return _ELLIPSIS + cut.strip() + _ELLIPSIS


#: How far a cut moves to fall between words rather than inside one.
_WORD_SLACK = 20


def _word_start(text: str, at: int, keep: int) -> int:
    """``at`` moved forward to the start of the next word when a cut there would split
    one ("…ants limited" for "…grants limited"), by at most :data:`_WORD_SLACK` characters
    and never past ``keep`` (the match's start)."""
    if at <= 0 or at >= len(text) or not (text[at - 1].isalnum() and text[at].isalnum()):
        return at
    blank = text.find(" ", at, min(at + _WORD_SLACK, keep))
    return at if blank < 0 else blank + 1


def _word_end(text: str, at: int, keep: int) -> int:
    """``at`` moved back to the end of the previous word when a cut there would split
    one, by at most :data:`_WORD_SLACK` characters and never before ``keep`` (the match's
    end)."""
    if at <= 0 or at >= len(text) or not (text[at - 1].isalnum() and text[at].isalnum()):
        return at
    blank = text.rfind(" ", max(at - _WORD_SLACK, keep), at)
    return at if blank < 0 else blank


def _fold(text: str) -> str:
    # lower() keeps offsets on ASCII; casefold() may not (ß -> ss), so it is only used
    # on non-ASCII text, and then lines are mapped back by number rather than offset.
    # Latin letters without their diacritics, as the analyzer reads them: a query's
    # "badha" is the page's "bādha" (the line count is unchanged).
    return text.lower() if text.isascii() else without_latin_marks(text.casefold())


def _first_prose_line(body: str, width: int) -> str:
    """The first line with letters or digits, preferring one that is not markup, read
    with the lines its sentence is wrapped over (:func:`_paragraph`): a hit found by
    meaning alone showed m3e's "A segmented button is a compact, connected row of
    options for choosing among a few", the first line of a hard-wrapped sentence."""
    fallback = ""
    start, size = 0, len(body)
    while start <= size:
        end = body.find("\n", start)
        end = size if end < 0 else end
        line = body[start:end]
        if _ALNUM.search(line) is not None:
            if not line.lstrip().startswith(_MARKUP):
                if _item(line) and len(line.strip()) <= _SHORT_ITEM:
                    return cut_line(_items_from(body, start), width=width)
                return cut_line(_paragraph(body, start)[0], width=width)
            fallback = fallback or cut_line(line, width=width)
        start = end + 1
    return fallback


#: A list item this short is a value of a list, not a sentence (codelists: "* ABS").
_SHORT_ITEM = 40


def _items_from(body: str, start: int) -> str:
    """The list that starts at ``start`` as one line, its short items joined by " · ":
    a hit found by meaning alone on a codelist showed "* ABS", where "ABS · Asbestos
    Cement · Cast Iron · ..." says what the page lists (hybrid QA)."""
    items: list[str] = []
    chars = 0
    for line in body[start:].split("\n"):
        text = line.strip()
        if not text or not _item(text) or len(text) > _SHORT_ITEM:
            break
        items.append(_ITEM.sub("", text, count=1).strip())
        chars += len(items[-1]) + 3
        if chars > EXCERPT_CHARS:
            break
    return " · ".join(items)


def without_title_heading(body: str, title: str) -> str:
    """``body`` with its first line blanked when that line (after blank ones) is a
    heading that only repeats ``title`` (``# Snake Plant``): a hit shows its title
    already, and a snippet that repeats it tells an agent nothing (helper QA: 39 of 216
    hits over three bundles). The line's break stays, so later lines keep their place.
    Blank lines and whole-line HTML comments before it are passed over (viewer QA:
    graphql-okf opens each page with two generator comments, then ``# Country``)."""
    start = 0
    while True:
        end = body.find("\n", start)
        end = len(body) if end < 0 else end
        line = body[start:end].strip()
        if end < len(body) and (not line or (line.startswith("<!--") and line.endswith("-->"))):
            start = end + 1
            continue
        break
    if not line.startswith("#"):
        return body
    text = line.strip("#").strip()
    if text.casefold() != title.strip().casefold():
        return body
    return body[:start] + body[end:]


def _line(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def best_line(
    body: str,
    needles: Sequence[tuple[str, float] | tuple[str, float, int]],
    width: int = EXCERPT_CHARS,
) -> str:
    """The body line holding the most needle weight, cut to ``width`` around a match.

    ``needles`` are casefolded strings with weights (the query terms' idf), and optionally
    a group (the query term a needle is a form of); a line scores, per group, the weight
    of the best needle of it that the line holds as text (in a link's destination, an
    autolink or a bare URL a needle does not count), so a line holding two forms of one
    word ("select_lag_order ... selecting") does not beat one holding two words ("lag
    selection"). Without any match, the first line with letters or digits (preferring
    prose to markup) stands in.
    """
    low = _fold(body)
    if len(needles) == 1 and needles[0][1] > 0.0 and "\n" not in needles[0][0]:
        # One needle: every line it is on as text scores the same, so the first such
        # occurrence's wins (when it is only in links' addresses, the first prose line).
        # (The first line where it is a whole word; else the first where it is in one.)
        needle = needles[0][0]
        pos = low.find(needle)
        if pos < 0:
            return _first_prose_line(body, width)
        part: tuple[int, int] | None = None
        cited: tuple[int, int] | None = None  # whole, in a footnote definition
        for _ in range(_MAX_OCCURRENCES):
            start = low.rfind("\n", 0, pos) + 1
            found = _Line(body, low, start).holds(needle)
            if found == 1.0:
                if not _is_definition(body, start):
                    return _shown(body, low, start, pos, width)
                cited = cited or (start, pos)
            elif found and part is None:
                part = (start, pos)
            newline = low.find("\n", pos)
            pos = -1 if newline < 0 else low.find(needle, newline + 1)
            if pos < 0:
                break
        form = _dotted(needle)
        dotted = -1 if form is None else low.find(form)
        if dotted >= 0:  # "U.S." where the needle is "us": whole, before a part of a word
            start = low.rfind("\n", 0, dotted) + 1
            if _Line(body, low, start).holds(needle) == 1.0:
                return _shown(body, low, start, dotted, width)
        if cited is not None:
            return _shown(body, low, *cited, width)
        if part is not None:
            return _shown(body, low, part[0], part[1], width)
        return _first_prose_line(body, width)
    lines: dict[int, int] = {}  # line start offset in ``low`` -> first match offset
    for needle, *_ in needles:
        pos = low.find(needle)
        seen = 0
        while pos >= 0 and seen < _MAX_OCCURRENCES:
            start = low.rfind("\n", 0, pos) + 1
            lines.setdefault(start, pos)
            seen += 1
            newline = low.find("\n", pos)
            if newline < 0:
                break
            pos = low.find(needle, newline + 1)
    best_start, best_score = -1, 0.0
    groups = [item[2] if len(item) > 2 else -1 - i for i, item in enumerate(needles)]
    for start in sorted(lines):
        line = _Line(body, low, start)
        best: dict[int, float] = {}
        for (needle, weight, *_), group in zip(needles, groups, strict=True):
            value = weight * line.holds(needle)
            if value > best.get(group, 0.0):
                best[group] = value
        score = sum(best.values())
        if _is_definition(body, start):
            score *= DEFINITION_WEIGHT  # a citation's title: the prose around it first
        if score > best_score:
            best_start, best_score = start, score
    if best_start < 0:  # no needle, or only in links' addresses
        return _first_prose_line(body, width)
    return _shown(body, low, best_start, lines[best_start], width)


class _Line:
    """One line of the body as a reader reads it (:func:`_text_of`), folded, and unfolded
    when folding kept its length (camelCase steps are read there); made once a line."""

    __slots__ = ("_body", "_low", "_start", "_cased", "text")

    def __init__(self, body: str, low: str, start: int) -> None:
        self._body, self._low, self._start = body, low, start
        self.text = _text_of(_line(low, start))
        self._cased: str | None = None

    def holds(self, needle: str) -> float:
        """1.0 when ``needle`` is a whole word of the line, :data:`_PART` when only inside
        one ("lang" in "languages": the index matched the word ``lang`` elsewhere), 0 when
        the line does not hold it."""
        text = self.text
        pos = text.find(needle)
        if pos < 0:
            return 1.0 if _holds_dotted(text, needle) else 0.0
        cased = self._cased
        if cased is None:
            cased = text
            if len(self._low) == len(self._body):
                unfolded = _text_of(_line(self._body, self._start))
                cased = unfolded if len(unfolded) == len(text) else text
            self._cased = cased
        for _ in range(_MAX_OCCURRENCES):
            if _word_step(cased, pos) and _word_step(cased, pos + len(needle)):
                return 1.0
            pos = text.find(needle, pos + 1)
            if pos < 0:
                break
        return 1.0 if _holds_dotted(text, needle) else _PART


def _dotted(needle: str) -> str | None:
    """A short word spelt with a dot after each letter, as the analyzer reads "U.S." as
    ``us``: ``u.s`` (the last dot optional); None for a needle no such spelling reads."""
    return ".".join(needle) if 2 <= len(needle) <= 4 and needle.isalpha() else None


def _holds_dotted(text: str, needle: str) -> bool:
    """Whether ``text`` spells ``needle`` dotted (:func:`_dotted`) as a word of its own:
    the line that says "U.S. adults" holds "us" whole, not the one where it is inside
    "public-use" (helper QA)."""
    dotted = _dotted(needle)
    if dotted is None:
        return False
    pos = text.find(dotted)
    while pos >= 0:
        end = pos + len(dotted)
        end += text[end : end + 1] == "."
        if _word_step(text, pos) and not text[end : end + 1].isalnum():
            return True
        pos = text.find(dotted, pos + 1)
    return False


def _word_step(text: str, i: int) -> bool:
    """Whether a word of the analyzer's may start or end at ``text[i]``: at either end, by
    a character that is no letter or digit, at a camelCase step or a letter/digit one."""
    if i <= 0 or i >= len(text):
        return True
    before, after = text[i - 1], text[i]
    if not (before.isalnum() and after.isalnum()):
        return True
    return (before.islower() and after.isupper()) or before.isdigit() != after.isdigit()


def _text_of(line: str) -> str:
    """A line as a reader reads it: links' destinations, autolinks, bare URLs and footnote
    labels left out, so words in an address (``resource-utilization.md``) or a label do
    not make it the best."""
    if line[:1] in _FENCE_STARTS and line.lstrip(" ").startswith(("```", "~~~")):
        return ""  # a fence line: its info string labels code, no reader reads it
    if "](" in line or "//" in line or "<" in line:
        line = _ADDRESS.sub(" ", line)
    return without_footnote_labels(line)


def addresses(text: str) -> str:
    """The addresses ``text`` holds (links' destinations, autolinks, bare URLs), folded
    and joined by blanks; ``""`` when it holds none."""
    if "](" not in text and "//" not in text and "<" not in text:
        return ""
    return _fold(" ".join(_ADDRESS.findall(text)))


def without_footnote_labels(text: str) -> str:
    """``text`` with every footnote label (``[^label]``, in a reference or a definition)
    made a blank: a label is a key into ``sources`` (spec §5.1), so its words are no
    words of the concept's (one producer writes 815 slug labels over 94 concepts)."""
    return _LABEL.sub(" ", text) if "[^" in text else text


def _shown(body: str, low: str, start: int, pos: int, width: int) -> str:
    """The body line that starts at ``start`` in ``low`` (the folded body), cut around the
    match at ``pos`` there; a line of a paragraph wrapped over several lines is read with
    its neighbours (:func:`_paragraph`), so the snippet is the sentence, not a fragment."""
    if len(low) == len(body):
        text, at = _paragraph(body, start)
        hit = at + pos - start
        if "[^" in text:  # as read: the labels out, the hit where it moved to
            head, text = _unlabelled(text[:hit]), _unlabelled(text[hit:])
            hit, text = len(head), head + text
        return cut_line(text, hit, hit + 1, width)
    number = low.count("\n", 0, start)
    return cut_line(_unlabelled(body.split("\n")[number]), width=width)


def _is_definition(body: str, start: int) -> bool:
    """Whether the line of ``body`` at ``start`` is a footnote definition."""
    return "[^" in body[start : start + 8] and _DEFINITION.match(body, start) is not None


def _unlabelled(text: str) -> str:
    """``text`` without its footnote labels, as a snippet shows it: a definition's
    ``[^label]:`` and each ``[^label]`` cited (crossplane QA: "...still exists.^management-
    policies-..." was a label cut at the snippet's end)."""
    if "[^" not in text:
        return text
    return _LABEL.sub("", _DEFINITION.sub("", text))


#: What a footnote definition line's match weighs against a prose line's, in choosing
#: the snippet: a citation's title ("[^x]: ExtraResources selector and namespace
#: conversion") holds the query's words as often as the sentence that cites it.
DEFINITION_WEIGHT = 0.5
#: Lines of a wrapped paragraph read on each side of the matching one, at most.
_WRAPPED_LINES = 3
#: A line longer than this is not a wrapped one (an editor wraps prose well before).
_WRAPPED_CHARS = 300
# How a line that starts a block of its own begins (after its indentation): a heading, a
# table row, a fence, a rule, a quote, a list item, a footnote definition. Such a line
# continues no paragraph.
_BLOCK = re.compile(r"(?:#|\||```|~~~|---|>|[-*+] |\d{1,9}[.)] |\[\^[^\]\s\[]{1,200}\]:)")
# How a list item's line begins (after its indentation): its text may go on below.
_ITEM = re.compile(r"(?:[-*+] |\d{1,9}[.)] )")


def _paragraph(body: str, start: int) -> tuple[str, int]:
    """The line that starts at ``start`` with the lines its sentences are wrapped over (a
    hard-wrapped paragraph or list item), at most :data:`_WRAPPED_LINES` each side,
    joined by blanks; and where the line starts in that text. A neighbour belongs when it
    is not blank, starts no block of its own, no sentence ends between them, and it is
    indented as the line's block is (a list item goes on over indented lines; a
    paragraph over lines that are not). A line that is markup (a heading, a table row) or
    longer than :data:`_WRAPPED_CHARS` stands alone."""
    line = _line(body, start)
    if not _wrapped(line):
        return line, 0
    before: list[str] = []
    at, current = start, line
    while len(before) < _WRAPPED_LINES and at > 0 and not _item(current):
        previous = body.rfind("\n", 0, at - 1) + 1
        text = _line(body, previous)
        if not _wrapped(text) or _ends_sentence(text):
            break
        if _item(text) and not _indented(current):
            break  # a list item goes on over indented lines only
        if not _item(text) and _indented(text) != _indented(current):
            break
        before.append(text.strip())
        at, current = previous, text
    # The block the line is part of: a list item (its first line found above, or the
    # line itself) goes on over indented lines; a paragraph over lines that are not.
    indented = _item(current) or _indented(line)
    after: list[str] = []
    end = start + len(line)
    last = line
    while len(after) < _WRAPPED_LINES and end < len(body) and not _ends_sentence(last):
        text = _line(body, end + 1)
        if not _wrapped(text) or _item(text) or _indented(text) != indented:
            break
        after.append(text.strip())
        end += 1 + len(text)
        last = text
    if not before and not after:
        return line, 0
    head = " ".join(reversed(before))
    shown = " ".join([*reversed(before), line.strip(), *after])
    indent = len(line) - len(line.lstrip())
    return shown, (len(head) + 1 if head else 0) - indent


def _wrapped(line: str) -> bool:
    """Whether ``line`` may be a wrapped part of a neighbour's sentence: not blank, not
    too long, and opening no block other than a list item."""
    if len(line) > _WRAPPED_CHARS or not line.strip():
        return False
    return _BLOCK.match(line.lstrip()) is None or _item(line)


def _indented(line: str) -> bool:
    return line[:1] in (" ", "\t")


def _ends_sentence(line: str) -> bool:
    """Whether ``line`` ends a sentence (or a label: ``:``; a footnote label after it
    does not count), so the next line starts another: a snippet joins wrapped lines only
    within the sentence it shows."""
    text = without_footnote_labels(line).rstrip()
    return text.endswith((".", "!", "?", ":", "。", "！", "？"))


def _item(line: str) -> bool:
    """Whether ``line`` starts a list item (its text may go on over the next lines)."""
    return _ITEM.match(line.lstrip()) is not None
