"""How much bundle text one tool result may carry: each field, and the whole result.

A bundle can put 250 KB in every description; unbounded, one ``list_concepts`` page was
52 MB and a model's context would take all of it (issue 16). So every bundle-derived
field in a row or a header is cut at a cap with a visible marker
(``…[cut: 249000 more characters]``), lists at a count (with a note under ``cut``), and
each result stops at :data:`RESULT_CHARS` characters of JSON, saying what it left out.
``docs/tools.md`` lists the caps.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "DESCRIPTION_CHARS",
    "EDGES",
    "EXTENSION_CHARS",
    "INLINE_CHARS",
    "ITEMS",
    "LABEL_CHARS",
    "MESSAGE_CHARS",
    "NEIGHBORS_PAGE",
    "RESULT_CHARS",
    "TITLE_CHARS",
    "TYPE_CHARS",
    "VALUE_CHARS",
    "clip",
    "clip_items",
    "fit_text",
    "json_chars",
    "leave_out",
    "leave_out_each",
    "note",
    "room_for",
]

#: ``title`` of a concept (rows, headers, search hits, neighbors).
TITLE_CHARS = 300
#: ``type`` of a concept.
TYPE_CHARS = 120
#: ``description`` of a concept.
DESCRIPTION_CHARS = 1_000
#: One tag, one link's text, one footnote label.
LABEL_CHARS = 100
#: Any other single frontmatter value: a resource, a source's fields, an actor, a path.
VALUE_CHARS = 500
#: An error's message.
MESSAGE_CHARS = 2_000
#: Items of any list: tags, sources, verifications, citations, parameters, receipt fields.
ITEMS = 50
#: The inline ``# Computation`` block of an Attested Computation.
INLINE_CHARS = 20_000
#: The frontmatter keys the header does not already show (producer extensions), as JSON.
EXTENSION_CHARS = 4_000
#: Edges of each list of ``get_neighbors`` (outbound, backlinks, unresolved): the most
#: one page may ask for.
EDGES = 500
#: Edges of each list on a ``get_neighbors`` page by default.
NEIGHBORS_PAGE = 100
#: A whole tool result, as compact JSON.
RESULT_CHARS = 131_072
_NOTE_ROOM = 512  # kept free for the notes that say what a result left out


def clip(text: str, cap: int) -> str:
    """``text``, or its first ``cap`` characters and a marker saying how much was cut."""
    if len(text) <= cap:
        return text
    return f"{text[:cap]}…[cut: {len(text) - cap} more characters]"


def clip_items(items: list[Any], cap: int, name: str, cut: list[str]) -> list[Any]:
    """The first ``cap`` of ``items``; a note in ``cut`` names what was left out."""
    if len(items) <= cap:
        return items
    cut.append(f"{name}: the first {cap} of {len(items)} shown")
    return items[:cap]


def json_chars(value: Any) -> int:
    """Characters of ``value`` as compact JSON (what a result is measured in)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def room_for(payload: dict[str, Any], key: str, budget: int = RESULT_CHARS) -> int:
    """How many leading items of the list ``payload[key]`` fit in ``budget`` characters
    together with the rest of ``payload`` (at least one, so a result always says
    something)."""
    items = payload[key]
    if json_chars(payload) <= budget:
        # The whole payload is longer than what the items are counted at below (its
        # list adds the key, and the same items and separators), so they all fit.
        return len(items)
    used = json_chars({k: v for k, v in payload.items() if k != key}) + 2
    kept = 0
    for item in items:
        used += json_chars(item) + 1
        if used > budget and kept:
            break
        kept += 1
    return kept


def leave_out(payload: dict[str, Any], key: str, what: str, more: str) -> int:
    """Cut the list ``payload[key]`` to what fits in :data:`RESULT_CHARS`, say so under
    ``payload["cut"]`` (``what`` names an item, ``more`` says how to get the rest), and
    return how many items were kept."""
    items = payload[key]
    kept = room_for(payload, key, RESULT_CHARS - _NOTE_ROOM)
    if kept < len(items):
        payload[key] = items[:kept]
        note(
            payload,
            f"this result stops at {RESULT_CHARS} characters: {kept} of {len(items)} "
            f"{what} shown; {more}",
        )
    return kept


def leave_out_each(payload: dict[str, Any], keys: tuple[str, ...], more: str) -> None:
    """:func:`leave_out` of each of ``keys`` the payload has, in that order (the least
    wanted first), each item named as its key; nothing is measured again when the whole
    payload already fits (one JSON rendering, not one a key)."""
    if json_chars(payload) <= RESULT_CHARS - _NOTE_ROOM:
        return
    for key in keys:
        if key in payload:
            leave_out(payload, key, key, more)


def note(payload: dict[str, Any], text: str) -> None:
    """Add ``text`` to what ``payload["cut"]`` says was left out."""
    payload["cut"] = f"{payload['cut']}; {text}" if payload.get("cut") else text


def fit_text(payload: dict[str, Any], key: str, budget: int = RESULT_CHARS) -> str:
    """The longest leading part of ``payload[key]`` (a string) that keeps ``payload``
    within ``budget`` characters of JSON (escapes counted)."""
    text: str = payload[key]
    room = budget - json_chars({k: v for k, v in payload.items() if k != key}) - len(key) - 6
    while text and json_chars(text) > room:
        text = text[: max(len(text) * max(room, 0) // json_chars(text), 0)]
    return text
