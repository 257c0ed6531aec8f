"""Parse the reserved files: ``index.md`` (spec §8) and ``log.md`` (spec §9).

Both stay readable whatever their shape; deviations from the spec are warnings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from datetime import date
from typing import NamedTuple

from okfx.bundle.conventions import with_line
from okfx.codeblocks import FENCE, without_comments
from okfx.model import IndexEntry, IndexFile, IndexSection, LogEntry, LogFile

__all__ = [
    "HEADING",
    "HEADING_LINES",
    "heading_rest",
    "heading_text",
    "leading_date",
    "outside_sections",
    "page_heading",
    "parse_index",
    "parse_log",
    "table_links",
    "unsectioned",
]

# Greedy text, trimmed in Python: a lazy group before ``[ \t#]*$`` is quadratic on blanks.
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")
#: :data:`HEADING` at every line of a text (for ``lines_outside_code``).
HEADING_LINES = re.compile(HEADING.pattern, re.MULTILINE)
# A setext heading's underline (the text line above it is the heading).
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
# A thematic break: three or more of one of - * _, spaces between allowed (CommonMark).
_BREAK = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
# A link as an index entry holds it, ``[text](destination "title")``, the text and the
# destination captured: shared by an entry and by a link of a list of links (below). Link
# text may hold brackets that pair up, one level deep, as CommonMark allows
# (``[System name :global SYSname [/system identity get name];](x.md)``); each of the three
# alternatives starts with its own character, so no text is matched two ways.
_LINK_TEXT = (
    r"\[((?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*+\]){1,500})\]"
    r"\(\s*+(<[^<>\n]*>|[^\s()]*)(?:\s++\"[^\"]*\")?\s*+\)"
)
_ENTRY = re.compile(
    r"^\s{0,3}(?:[*+-]|\d{1,9}[.)])[ \t]+"
    + _LINK_TEXT
    + r"[ \t]*(?:\([^()\n]{1,40}\)[ \t]*)?(?:[-\u2013\u2014:][ \t]*(.*))?$"
)
_ITEM = re.compile(r"^\s{0,3}[*+-][ \t]+(.*)$")
# One link of a list item that holds several (``* [Events](events/) · [Maps](maps/)``),
# with an entry's groups: text, href, and a description group that never matches. An
# escaped ``\[`` starts none: each try then ends at the next bracket that is not escaped,
# where a search from every ``[`` of a run of ``\[`` read it all again (quadratic).
_LINK = re.compile(r"(?<!\\)" + _LINK_TEXT + r"(?:(?!)(.))?")
# What may stand between the links of such an item.
_LINK_SEPARATORS = " \t\u00b7\u2022|,;/"
# A paragraph that is only a bold label (``**Added**``, ``__Removed:__``).
_LABEL = re.compile(r"^(?:\*\*[^*\n]{1,80}\*\*|__[^_\n]{1,80}__):?$")
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
# A time of day right after a date (``T13:14:12.015Z``, `` 09:30``).
_TIME = re.compile(r"[T ]\d\d:\d\d")
_TEXT, _CODE, _COMMENT = "text", "code", "comment"

Resolve = Callable[[str], "str | None"]


def heading_text(raw: str) -> str:
    """A heading's text without its optional closing ``#`` sequence."""
    return raw.rstrip().rstrip("#").rstrip()


def _lines(body: str) -> Iterator[tuple[str, str]]:
    """Each line of ``body`` with what holds it: ``"code"`` (a fenced block, its fences
    included), ``"comment"`` (an HTML comment opened at a line start) or ``"text"``. A
    ``# comment`` line of a shell block is no heading, nor is a heading commented out."""
    fence = ""
    in_comment = False
    for line in body.split("\n"):
        if fence:
            match = FENCE.match(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = "" if not match.group(2).strip() else fence
            yield line, _CODE
        elif in_comment:
            in_comment = "-->" not in line
            yield line, _COMMENT
        elif (match := FENCE.match(line)) and not (
            match.group(1)[0] == "`" and "`" in match.group(2)
        ):
            fence = match.group(1)
            yield line, _CODE
        elif line.lstrip(" ").startswith("<!--") and len(line) - len(line.lstrip(" ")) <= 3:
            in_comment = "-->" not in line.lstrip(" ")[4:]
            yield line, _COMMENT
        else:
            yield line, _TEXT


def _setext_as_atx(lines: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """``lines`` (:func:`_lines`) with each setext heading written as an ATX one: a line of
    prose alone (after a blank line, a heading or the start) over a line of ``=`` or ``-``
    becomes ``# text`` or ``## text``, and the underline a blank line, so line numbers
    stay. CommonMark reads ``2026-05-22`` over ``----------`` as a level-2 heading (CI QA:
    a log written so failed as entries before any date heading)."""
    held: tuple[str, str] | None = None
    alone = True  # the held line follows a blank line, a heading or the start
    for line, kind in lines:
        if held is not None:
            text, _ = held
            if kind == _TEXT and _SETEXT.match(line):
                level = "#" if line.strip()[0] == "=" else "##"
                yield f"{level} {text.strip()}", _TEXT
                yield "", _TEXT
                held, alone = None, True
                continue
            yield held
            held, alone = None, False
        prose = kind == _TEXT and line.strip() and not HEADING.match(line)
        if prose and alone and not _ITEM.match(line) and not _SETEXT.match(line):
            held = (line, kind)
            continue
        yield line, kind
        alone = kind != _TEXT or not line.strip() or HEADING.match(line) is not None
    if held is not None:
        yield held


def _index_lines(body: str) -> Iterator[tuple[int, str | None, re.Match[str] | None]]:
    """The lines of an index body that mean something: ``(number, heading, entry)``, the
    line's number (0-based) and either a heading's text (ATX or setext) or an entry's
    match. Lines in code blocks and HTML comments are examples, not entries."""
    previous = ""  # the last line of prose (the text of a setext heading under it)
    for number, (line, kind) in enumerate(_lines(body)):
        if kind != _TEXT:
            previous = ""
            continue
        heading = HEADING.match(line)
        if heading:
            yield number, heading_text(heading.group(2)), None
            previous = ""
        elif previous.strip() and _SETEXT.match(line):
            yield number, previous.strip(), None
            previous = ""
        elif entry := _ENTRY.match(line):
            yield number, None, entry
            previous = ""
        elif (item := _ITEM.match(line)) and (links := _link_list(item.group(1))):
            for link in links:
                yield number, None, link
            previous = ""
        else:
            previous = "" if item else line


def _link_list(text: str) -> list[re.Match[str]]:
    """The links of a list item that is only links and separators (``·``, ``•``, ``|``,
    ``,``, ``;``, ``/``), two or more: each is an entry; [] for any other item."""
    if "](" not in text:
        return []
    links = list(_LINK.finditer(text))
    if len(links) < 2:
        return []
    ends = [0, *(end for link in links for end in link.span()), len(text)]
    between = (text[ends[i] : ends[i + 1]] for i in range(0, len(ends), 2))
    return links if all(not part.strip(_LINK_SEPARATORS) for part in between) else []


def parse_index(
    body: str, resolve: Resolve, strings: dict[str, str] | None = None
) -> tuple[IndexSection, ...]:
    """Sections of ``* [Title](url) - description`` entries, in file order.

    Entries before any heading go in a section with an empty title. ``strings`` maps
    strings already built to themselves (a parser's table): an entry's title, href and
    description are mostly a concept's own title, a link's href and the description.
    """
    share = ({} if strings is None else strings).setdefault
    sections: list[IndexSection] = []
    title = ""
    entries: list[IndexEntry] = []
    for _, heading, entry in _index_lines(body):
        if heading is not None:
            if entries or title:
                sections.append(IndexSection(title, tuple(entries)))
            title, entries = heading, []
        elif entry is not None:
            href = share(entry.group(2), entry.group(2))
            label = entry.group(1).strip()
            description = without_comments(entry.group(3) or "").strip()
            entries.append(
                IndexEntry(
                    title=share(label, label),
                    href=href,
                    target=resolve(href),
                    description=share(description, description),
                )
            )
    if entries or title:
        sections.append(IndexSection(title, tuple(entries)))
    return tuple(sections)


def page_heading(doc: IndexFile | LogFile) -> str:
    """What a reader calls a reserved file's page: an index's first section heading, a
    log's title; "" when it has none."""
    if isinstance(doc, IndexFile):
        return next((section.title for section in doc.sections if section.title), "")
    return doc.title


def table_links(body: str) -> tuple[int, int | None]:
    """How many table rows of an index body hold a markdown link, outside code and
    comments, and the body line (0-based) of the first: a listing written as a table
    (``| [App bar](/components/app-bar) | A bar at the top |``), not as §8's entries."""
    rows, first = 0, None
    for number, (line, kind) in enumerate(_lines(body)):
        if kind == _TEXT and line.lstrip(" ").startswith("|") and "](" in line:
            rows += 1
            first = number if first is None else first
    return rows, first


def outside_sections(body: str) -> tuple[int, int | None] | None:
    """How an index body departs from the sections of spec §8 (entries grouped under a
    heading): ``(n, line)``, the ``n`` entries before its first heading and the body line
    (0-based) of the first of them, or ``(0, None)`` for a body with no heading and no
    entry; ``None`` when every entry is under a heading, or the body is empty (a root
    index.md may hold only ``okf_version``: an empty listing, not a misgrouped one)."""
    before = 0
    first: int | None = None
    for number, heading, _ in _index_lines(body):
        if heading is not None:
            return (before, first) if before else None
        before += 1
        first = number if first is None else first
    return (before, first) if body.strip() else None


def unsectioned(body: str, body_line: int) -> str | None:
    """Why an index body is off the sections of spec §8 (§11 rule 3), with the file line
    of the first entry outside a section (``body_line``: the body's first line), or
    ``None`` when it is not."""
    outside = outside_sections(body)
    if outside is None:
        return None
    entries, first = outside
    layout = "'# Heading', then '* [Title](url) - description' lines"
    if not entries:
        return (
            "this index.md has no section: spec §8 lists a folder's concepts under one or "
            f"more headings ({layout}); add a section"
        )
    are = "entry comes" if entries == 1 else "entries come"
    message = (
        f"{entries} {are} before the first heading, outside any section: spec §8 groups an "
        f"index's entries under headings ({layout}); add a heading above them"
    )
    return with_line(message, body_line + first if first is not None else None)


def _parse_date(text: str) -> date | None:
    match = _ISO_DATE.match(text)
    if not match:
        return None
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def leading_date(text: str) -> date | None:
    """The ``YYYY-MM-DD`` date a text starts with (``2026-07-02 - export``,
    ``2026-07-24T13:14:12Z``), if any."""
    return None if text[10:11].isdigit() else _parse_date(text[:10])


def heading_rest(text: str) -> str:
    """What a log heading says after the date it starts with (``2026-07-11 — Phase 5b``
    -> ``Phase 5b``): empty for a bare date or a time of day (``2026-07-24T13:14Z``)."""
    rest = text[10:]
    if _TIME.match(rest):
        return ""
    return rest.strip().lstrip("—–-:|·,").strip()


def heading_time(text: str) -> str:
    """The time of day a log heading gives after its date (``2026-07-28T00:57:10Z`` ->
    ``00:57:10Z``), as written; empty when it gives none."""
    rest = text[10:]
    if not _TIME.match(rest):
        return ""
    return rest[1:].split()[0][:40]


class ParsedLog(NamedTuple):
    title: str
    entries: tuple[LogEntry, ...]
    bad_headings: list[tuple[str, int]]  # each with its body line (0-based)
    ungrouped: int
    first_ungrouped: int | None  # the body line (0-based) of the first of them
    # The body line (0-based) each entry's date is read on: its date heading's, or the
    # entry's own first line for an entry under no heading.
    date_lines: tuple[int, ...]


def parse_log(body: str) -> ParsedLog:
    """The log's title, entries (one per list item), bad headings and ungrouped items.

    The title is a first level-1 heading that is not ``YYYY-MM-DD``-shaped; every other
    heading, of any level, heads a date group (§9 fixes the date's form, not the level).
    Continuation lines join the item above (a paragraph after a blank line, not indented,
    is an entry of its own), a nested bullet is a ``- `` line of it
    (CommonMark reads it inside the item), and a fenced code block is kept as its lines,
    fences included and dedented by the opening fence's indent, in the entry above (at
    any indent: a log's author means the command they ran for the entry they wrote).
    Headings that are not ISO ``YYYY-MM-DD`` dates are returned in ``bad_headings`` with
    their lines; their entries get the date the heading starts with, else ``date=None``.
    ``ungrouped`` counts the items before any date heading, off §9's date groups: they
    are entries still, with no heading, dated when their text starts with a
    ``YYYY-MM-DD`` date (``- 2026-07-02 - export - ...``).
    """
    title = ""
    entries: list[LogEntry] = []
    bad: list[tuple[str, int]] = []
    date_lines: list[int] = []
    heading_line = began = 0
    current_heading: str | None = None
    heading_date: date | None = None
    date_level = 0  # the current date heading's level (1-6)
    current: list[str] = []
    ungrouped = 0
    first: int | None = None
    blank = False  # the line before was blank
    fence_indent = -1  # the open code block's fence indent; -1 outside code
    labelled = False  # the entry is a bold label ("**Added**") its list items belong to

    def flush() -> None:
        nonlocal labelled
        labelled = False
        if current:
            text = without_comments(" ".join(current).replace(" \n", "\n")).strip()
            if current_heading is not None:
                entries.append(LogEntry(heading_date, current_heading, text))
                date_lines.append(heading_line)
            else:
                entries.append(LogEntry(leading_date(text), "", text))
                date_lines.append(began)
        current.clear()

    def add(text: str) -> None:
        nonlocal began
        if not current:
            began = number
        current.append(text)

    for number, (line, kind) in enumerate(_setext_as_atx(_lines(body))):
        if kind == _COMMENT:
            continue
        if kind == _CODE:
            # A fenced block in an entry stays code, line by line, not joined as prose.
            if fence_indent < 0:
                fence_indent = len(line) - len(line.lstrip(" "))
            if current or current_heading is not None:
                kept = line[fence_indent:] if not line[:fence_indent].strip() else line.lstrip()
                add("\n" + kept)
            blank = False
            continue
        # The text right after a block continues the entry on a line of its own.
        lead, fence_indent = ("\n" if fence_indent >= 0 else ""), -1
        after_blank, blank = blank, not line.strip()
        heading = HEADING.match(line)  # code and comments were passed above: text only
        if heading:
            flush()
            text = heading_text(heading.group(2))
            # §9 fixes a date heading's form, not its level: `# 2026-07-10` heads a group.
            # A heading that only starts with a date (``2026-07-11 — Phase 5b``, a time
            # ``2026-07-24T13:14:12Z``) is no date heading (§9), but its entries take
            # that date rather than none: the author's date is plain to read.
            day = leading_date(text)
            # Shaped as a date, even an impossible one (``2026-02-31``): no title.
            dated = _ISO_DATE.match(text[:10]) is not None and not text[10:11].isdigit()
            if len(heading.group(1)) == 1 and not dated and not title and current_heading is None:
                title = text
                continue
            if not dated and heading_date is not None and len(heading.group(1)) > date_level:
                # A heading below a date heading (``### Feature X`` under ``## 2026-07-08``)
                # titles a change of that day: an entry of its own, dated by the group.
                add(text)
                flush()
                continue
            current_heading, heading_date, heading_line = text, day, number
            date_level = len(heading.group(1))
            if day is None or len(text) > 10:
                bad.append((text, number))
            continue
        if _BREAK.match(line):
            flush()  # a thematic break (``---``) ends the entry above; it is no text
            continue
        bare = line.lstrip(" \t")
        item = _ITEM.match(bare)
        if item and current and len(line) - len(bare) >= 2:
            # A nested bullet is a point of the entry above, kept as a list line.
            current.append("\n- " + item.group(1).strip())
        elif item and labelled:
            # The items under a bold label ("**Added**", then a list: the convention of
            # §9's leading bold word, written as a paragraph) are points of that entry.
            current.append("\n- " + item.group(1).strip())
        elif item:
            flush()
            add(item.group(1).strip())
            if current_heading is None:
                ungrouped += 1
                first = number if first is None else first
        elif not blank and current and after_blank and line == bare:
            # A paragraph after a blank line, not indented, is no longer the item above
            # (CommonMark ends the list): under a date heading it is an entry of its own.
            flush()
            if current_heading is not None:
                add(line.strip())
                labelled = _LABEL.match(line.strip()) is not None
        elif line.strip() and (current or current_heading is not None):
            labelled = not current and _LABEL.match(line.strip()) is not None
            # A table's rows stay lines of their own (viewer QA: a log's table showed as
            # one run of "| a | b | | --- |" text)
            row = current and line.strip().startswith("|") and current[-1].lstrip().startswith("|")
            add(("\n" if row else lead) + line.strip())
    flush()
    return ParsedLog(title, tuple(entries), bad, ungrouped, first, tuple(date_lines))
