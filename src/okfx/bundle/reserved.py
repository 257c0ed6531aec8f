"""Parse the reserved files: ``index.md`` (spec §8) and ``log.md`` (spec §9).

Both stay readable whatever their shape; deviations from the spec are warnings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from okfx.model import IndexEntry, IndexSection, LogEntry

__all__ = ["HEADING", "heading_text", "parse_index", "parse_log"]

# Greedy text, trimmed in Python: a lazy group before ``[ \t#]*$`` is quadratic on blanks.
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")
_ENTRY = re.compile(
    r"^\s{0,3}[*+-][ \t]+\[((?:[^\[\]\\]|\\.){1,500})\]\(\s*+(<[^<>\n]*>|[^\s()]*)"
    r"(?:\s++\"[^\"]*\")?\s*+\)[ \t]*(?:[-\u2013\u2014:][ \t]*(.*))?$"
)
_ITEM = re.compile(r"^\s{0,3}[*+-][ \t]+(.*)$")
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")

Resolve = Callable[[str], "str | None"]


def heading_text(raw: str) -> str:
    """A heading's text without its optional closing ``#`` sequence."""
    return raw.rstrip().rstrip("#").rstrip()


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
    for line in body.split("\n"):
        heading = HEADING.match(line)
        if heading:
            if entries or title:
                sections.append(IndexSection(title, tuple(entries)))
            title, entries = heading_text(heading.group(2)), []
            continue
        entry = _ENTRY.match(line)
        if entry:
            href = share(entry.group(2), entry.group(2))
            label = entry.group(1).strip()
            description = (entry.group(3) or "").strip()
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


def _parse_date(text: str) -> date | None:
    match = _ISO_DATE.match(text)
    if not match:
        return None
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def parse_log(body: str) -> tuple[str, tuple[LogEntry, ...], list[str]]:
    """``(title, entries, bad_headings)``: one entry per list item under a date heading.

    Continuation lines join the item above. Headings that are not ISO ``YYYY-MM-DD``
    dates are returned in ``bad_headings`` (and their entries get ``date=None``).
    """
    title = ""
    entries: list[LogEntry] = []
    bad: list[str] = []
    current_heading: str | None = None
    heading_date: date | None = None
    current: list[str] = []

    def flush() -> None:
        if current and current_heading is not None:
            entries.append(LogEntry(heading_date, current_heading, " ".join(current).strip()))
        current.clear()

    for line in body.split("\n"):
        heading = HEADING.match(line)
        if heading:
            flush()
            text = heading_text(heading.group(2))
            if len(heading.group(1)) == 1 and not title and current_heading is None:
                title = text
                continue
            current_heading, heading_date = text, _parse_date(text)
            if heading_date is None:
                bad.append(text)
            continue
        item = _ITEM.match(line)
        if item:
            flush()
            current.append(item.group(1).strip())
        elif line.strip() and current:
            current.append(line.strip())
        elif line.strip() and current_heading is not None:
            current.append(line.strip())
    flush()
    return title, tuple(entries), bad
