"""The day a log heading most likely means when it is not written ``YYYY-MM-DD``.

Spec §9 heads a log's entries with ``## YYYY-MM-DD``; producers write ``20-08-2026``,
``2026/08/21``, ``Aug 22, 2026`` or ``20260821`` (validate QA: the report said the
heading was no date but not which one to write). :func:`likely_dates` reads those forms
so the problem can name the heading to write; the entries themselves keep no date, as
the spec says. A day and a month that can both be either (``07-08-2026``) give both.
"""

from __future__ import annotations

import re
from datetime import date

__all__ = ["likely_dates"]

# Whole headings (fullmatch), each quantifier bounded: a heading is bundle text.
_NUMERIC = re.compile(r"(\d{1,4})[-/._ ](\d{1,2})[-/._ ](\d{1,4})")
_COMPACT = re.compile(r"(\d{4})(\d{2})(\d{2})")
_MONTH_DAY = re.compile(r"([A-Za-z]{3,9})\.?[ ]{1,3}(\d{1,2})(?:st|nd|rd|th)?,?[ ]{1,3}(\d{4})")
_DAY_MONTH = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?[ ]{1,3}([A-Za-z]{3,9})\.?,?[ ]{1,3}(\d{4})")
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december",
)  # fmt: skip
# What may follow the date in a heading: " - release", " — notes", ": notes".
_AFTER = (" - ", " — ", " – ", ": ", " | ", " (")


def likely_dates(heading: str) -> list[str]:
    """The ``YYYY-MM-DD`` days ``heading`` most likely means, in order; empty when it
    reads as no day (or already is ``YYYY-MM-DD``, which needs no advice)."""
    text = heading.strip()[:64]
    for mark in _AFTER:
        text = text.split(mark, 1)[0]
    text = text.strip()
    days: list[date] = []
    if found := _NUMERIC.fullmatch(text):
        first, second, third = found.groups()
        if len(first) == 4:
            days = _days((int(first), int(second), int(third)))
        elif len(third) == 4:
            year, a, b = int(third), int(first), int(second)
            days = _days((year, b, a), (year, a, b))  # day first, as most of the world
    elif found := _COMPACT.fullmatch(text):
        days = _days((int(found[1]), int(found[2]), int(found[3])))
    elif found := _MONTH_DAY.fullmatch(text):
        month = _month(found[1])
        days = _days((int(found[3]), month, int(found[2]))) if month else []
    elif found := _DAY_MONTH.fullmatch(text):
        month = _month(found[2])
        days = _days((int(found[3]), month, int(found[1]))) if month else []
    shown = list(dict.fromkeys(day.isoformat() for day in days))
    return [] if shown == [text] else shown


def _month(name: str) -> int:
    """1-12 for a month's name or its abbreviation (``Aug``, ``Sept``); 0 otherwise."""
    lowered = name.lower()
    for number, month in enumerate(_MONTHS, 1):
        if len(lowered) >= 3 and month.startswith(lowered):
            return number
    return 0


def _days(*candidates: tuple[int, int, int]) -> list[date]:
    out = []
    for year, month, day in candidates:
        if 1900 <= year <= 2999:
            try:
                out.append(date(year, month, day))
            except ValueError:
                continue
    return out
