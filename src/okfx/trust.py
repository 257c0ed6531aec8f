"""Pure derivations from frontmatter: actors, trust tiers (spec §5.3, §7) and staleness (§5.5).

Nothing here reads the clock unless ``now`` is omitted; tests pass fixed instants.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from typing import Any

__all__ = [
    "TRUST_TIERS",
    "actor_kind",
    "is_stale",
    "is_placeholder_actor",
    "is_valid_actor",
    "loose_actor",
    "parse_instant",
    "status_as_written",
    "trust_tier",
    "utcnow",
    "written_unread",
]

UNVERIFIED = "unverified"
MACHINE_CONFIRMED = "machine-confirmed"
HUMAN_REVIEWED = "human-reviewed"
#: Lowest to highest (spec §5.3).
TRUST_TIERS = (UNVERIFIED, MACHINE_CONFIRMED, HUMAN_REVIEWED)

# An actor is one token without whitespace; a prefixed actor needs a non-empty id.
_ACTOR = re.compile(r"^[^\s:/]+(?::[^\s]+|/[^\s]+)$")


def is_valid_actor(value: object) -> bool:
    """True for ``human:<id>``, ``process:<id>``, ``<producer>/<version>`` (spec §7).

    Other ``<prefix>:<id>`` forms (``team:finance``) are accepted as non-human actors;
    empty ids (``human:``), whitespace and non-strings are not actors.
    """
    return isinstance(value, str) and _ACTOR.match(value) is not None


# An id left as a template's placeholder: ``human:<id>``, ``human:{{ reviewer }}``.
_PLACEHOLDER = re.compile(r"^(?:<[^<>]{0,80}>|\{\{[^{}]{0,80}\}\})$")


def is_placeholder_actor(value: object) -> bool:
    """True for an actor whose id is a placeholder left from a template or from advice
    (``human:<id>``, ``process:{{ job }}``): no one, so no review (CI QA: pasted as
    okfx's advice wrote it, ``human:<id>`` made a concept human-reviewed)."""
    if not isinstance(value, str):
        return False
    _, colon, rest = value.partition(":")
    return bool(colon) and _PLACEHOLDER.match(rest.strip()) is not None


def loose_actor(value: object) -> str | None:
    """The prefix of ``value`` when it is no actor okfx writes as valid but names a person
    or a process by the prefix the spec keys trust off (§7): ``human:ada lovelace``
    (whitespace in the id), ``human: ada``, ``Human:ada`` -> ``human``; ``process: x`` ->
    ``process``. None for anything else (an empty id, another form)."""
    if not isinstance(value, str):
        return None
    if is_valid_actor(value) and value.partition(":")[0].islower():
        return None
    head, colon, rest = value.strip().partition(":")
    kind = head.casefold()
    if colon and kind in ("human", "process") and rest.strip():
        return kind
    return None


def actor_kind(actor: str) -> str:
    """``human``, ``process``, ``agent`` (``producer/version``) or ``other``; the prefix
    is read in any case and around blanks (:func:`loose_actor`)."""
    loose = loose_actor(actor)
    if loose is not None:
        return loose
    head, colon, _ = actor.partition(":")
    if colon and head.casefold() in ("human", "process"):
        return head.casefold()
    if "/" in actor and ":" not in actor.split("/", 1)[0]:
        return "agent"
    return "other"


def trust_tier(verifier_actors: Iterable[str]) -> str:
    """Trust tier from the *valid* ``verified[].by`` actors (spec §5.3).

    No verifier: unverified; only non-``human:`` verifiers: machine-confirmed; any
    ``human:`` verifier: human-reviewed, its prefix read in any case (:func:`actor_kind`).
    """
    tier = UNVERIFIED
    for actor in verifier_actors:
        if actor_kind(actor) == "human":
            return HUMAN_REVIEWED
        tier = MACHINE_CONFIRMED
    return tier


def utcnow() -> datetime:
    """The current instant, timezone-aware UTC."""
    return datetime.now(UTC)


def written_unread(frontmatter: Mapping[str, Any], key: str, read: object) -> Any:
    """What a producer wrote for the trust or freshness field ``key`` when okfx could not
    read it (``read``, the field as read, is empty: ``stale_after: soon``, ``verified:
    yes``), as written; None when it was read or not written. A concept whose
    ``stale_after`` is unread is never stale to :func:`is_stale`: a gate must not take
    that for fresh."""
    written = frontmatter.get(key)
    if read or written in (None, "", [], {}):
        return None
    return written


def status_as_written(frontmatter: Mapping[str, Any], read: str) -> str | None:
    """The ``status`` a producer wrote when okfx reads another (``read``: a value §5.4
    does not define, ``generated``, reads as stable), stripped; None when it reads as
    written, in any case, or none was written."""
    written = frontmatter.get("status")
    if not isinstance(written, str) or written.strip().lower() == read:
        return None
    return written.strip()


def is_stale(stale_after: datetime | None, now: datetime | None = None) -> bool:
    """Stale when ``now >= stale_after`` (spec §5.5); never stale without ``stale_after``."""
    if stale_after is None:
        return False
    when = utcnow() if now is None else now
    if when.tzinfo is None:
        # A naive ``now`` is read as UTC rather than compared with an aware instant.
        when = when.replace(tzinfo=UTC)
    return when >= stale_after


def _upper_t_z(text: str) -> str:
    """``text`` with a lower-case date/time separator ``t`` and zone ``z`` upper-cased."""
    if text[10:11] == "t":
        text = f"{text[:10]}T{text[11:]}"
    return f"{text[:-1]}Z" if text.endswith("z") else text


_WRITE = "write one such as 2026-09-30T00:00:00Z"
_DURATION_CHARS = frozenset("0123456789.,YMWDTHS")


def _duration(text: str) -> bool:
    """Whether ``text`` is written as an ISO 8601 duration (``P90D``, ``PT12H``)."""
    upper = text.upper()
    return (
        len(upper) > 2
        and upper[0] == "P"
        and upper[-1] in "YMWDHS"
        and all(c in _DURATION_CHARS for c in upper[1:])
    )


def _kind(value: object) -> str:
    """What a YAML value that is no text is, in words (CI QA: "is a int")."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number (a Unix time?)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "no text"


def parse_instant(value: object, *, lenient: bool = False) -> tuple[datetime | None, str | None]:
    """Parse an ISO 8601 datetime with an explicit offset (spec §5).

    Returns ``(instant in UTC, None)``, or ``(None, reason)`` when ``value`` is refused.
    Strict by default: a date without a time and a datetime without an offset are refused.
    ``lenient`` reads them in UTC instead, a date as the start of its day (so a
    ``stale_after`` date turns a concept stale no later than its author meant), and returns
    ``(instant, note)`` where the note says what was assumed. Impossible dates
    (``2026-02-30``) and anything else are refused either way.
    """
    if isinstance(value, date) and not isinstance(value, datetime):
        if not lenient:
            return None, f"{value.isoformat()!r} is a date, not a datetime with a timezone"
        return _assumed(datetime(value.year, value.month, value.day, tzinfo=UTC), value)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            if lenient:
                return _assumed(value.replace(tzinfo=UTC), value)
            return None, "has no timezone offset (write e.g. 2026-06-30T14:00:00Z)"
        try:
            return value.astimezone(UTC), None
        except OverflowError:
            return None, "is outside the representable range of dates"
    if not isinstance(value, str):
        return None, f"is {_kind(value)}, not an ISO 8601 datetime: {_WRITE}"
    text = value.strip()
    if not text:  # validate QA: "'' is not a valid ISO 8601 date" on 490 pages
        return (
            None,
            "is empty: write an ISO 8601 datetime (2026-06-30T14:00:00Z), or leave the key out",
        )
    if text[:4].isdigit() and (text[10:11] == "t" or text[-1:] == "z"):
        text = _upper_t_z(text)  # RFC 3339 allows "t" and "z" (spec QA: refused)
    if _duration(text):
        # CI QA: "'P90D' is not a valid ISO 8601 date", which it is, as a duration; the
        # spec's fields are instants (stale_after: "an absolute instant, not a TTL")
        return None, f"{text!r} is a duration, not an instant: {_WRITE}, the moment itself"
    if "T" not in text and " " not in text:
        try:
            day = date.fromisoformat(text)
        except ValueError:
            what = "date" if lenient else "datetime (write e.g. 2026-06-30T14:00:00Z)"
            return None, f"{text!r} is not a valid ISO 8601 {what}"
        if not lenient:
            return None, f"{text!r} is a date, not a datetime with a timezone"
        return _assumed(datetime(day.year, day.month, day.day, tzinfo=UTC), text)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None, f"{text!r} is not a valid ISO 8601 datetime: {_WRITE}"
    if parsed.tzinfo is None:
        if lenient:
            return _assumed(parsed.replace(tzinfo=UTC), text)
        return None, f"{text!r} has no timezone offset (write e.g. {text}Z)"
    try:
        return parsed.astimezone(UTC), None
    except OverflowError:
        return None, f"{text!r} is outside the representable range of dates"


def _assumed(when: datetime, written: object) -> tuple[datetime, str]:
    """A lenient reading and the note that says what it assumed."""
    shown = written.isoformat() if isinstance(written, date) else str(written)
    read = when.isoformat().replace("+00:00", "Z")
    if len(shown) <= 10:
        return (
            when,
            f"{shown!r} is a date without a time; read as {read}, the start of that day (UTC)",
        )
    return when, f"{shown!r} has no UTC offset; read as {read} (UTC)"
