"""Parameter values: checked against the declared ``parameters`` of a computation (spec §10.2).

A value is accepted only in the JSON type its declared type calls for (no guessing: the
string ``"2026"`` is not an integer), within bounds, and only for a declared name. Every
refusal is an :class:`~okfx.errors.InvalidParameter` that names the parameter and the type
it expects. :func:`from_text` is the one place text (a ``--param k=v`` on the command line)
becomes a typed value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from okfx.errors import InvalidParameter
from okfx.model import Parameter
from okfx.trust import parse_instant

__all__ = [
    "MAX_PARAMETERS",
    "MAX_STRING_CHARS",
    "TYPES",
    "check_values",
    "contract_problems",
    "defaults_used",
    "declared_type",
    "from_text",
    "parse_date",
    "parse_timestamp",
    "text_value",
]

MAX_PARAMETERS = 64
_ORDERED = frozenset({"integer", "number", "date", "timestamp"})
MAX_STRING_CHARS = 4096
MAX_NAME_CHARS = 128
_INT64 = (-(2**63), 2**63 - 1)
#: A ``number`` parameter's magnitude stays under this (a float keeps its digits).
NUMBER_BOUND = 1e300

#: Declared type names okfx checks, and the type each means. Anything else is refused.
TYPES = {
    "string": "string",
    "str": "string",
    "text": "string",
    "varchar": "string",
    "integer": "integer",
    "int": "integer",
    "int64": "integer",
    "bigint": "integer",
    "number": "number",
    "float": "number",
    "float64": "number",
    "double": "number",
    "numeric": "number",
    "decimal": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "date": "date",
    "timestamp": "timestamp",
}

#: How each type is written, for messages.
_EXPECTED = {
    "string": f"a string of at most {MAX_STRING_CHARS} characters, without NUL",
    "integer": "an integer (a JSON number without a fraction, within 64 bits)",
    "number": "a finite number under 1e300 in magnitude",
    "boolean": "true or false",
    "date": "a date written YYYY-MM-DD",
    "timestamp": "an ISO 8601 timestamp with a UTC offset, e.g. 2026-10-05T00:00:00Z",
}


def declared_type(parameter: Parameter) -> str:
    """The okfx type of a declared parameter; raises when okfx cannot check it."""
    kind = TYPES.get((parameter.type or "").strip().casefold())
    if kind is None:
        declares = (
            "no type"
            if parameter.type is None
            else f"type {parameter.type!r}, which okfx cannot check"
        )
        raise InvalidParameter(
            f"parameter {parameter.name!r} declares {declares} "
            f"(known: {', '.join(sorted(set(TYPES.values())))}); the "
            "computation cannot be bound until its contract names one",
            parameter=parameter.name,
            expected="a declared type okfx knows",
        )
    return kind


def parse_date(text: str) -> date | None:
    """A strict ``YYYY-MM-DD`` date, or None (``20261005`` and ``2026-W41`` are refused)."""
    if not _date_shaped(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _date_shaped(text: str) -> bool:
    """Whether ``text`` is written ``YYYY-MM-DD`` (ASCII digits), a day or not."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return False
    return (text[:4] + text[5:7] + text[8:]).isdigit() and text.isascii()


def parse_timestamp(text: str) -> datetime | None:
    """An ISO 8601 datetime with an explicit offset, in UTC; None otherwise."""
    when, _ = parse_instant(text)
    return when


def _refuse(name: str, kind: str, value: Any) -> InvalidParameter:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**80:
        shown = f"of {len(str(abs(value)))} digits"  # repr of a huge int is no help
    else:
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    why = f"got {type(value).__name__} {shown}"
    if isinstance(value, str) and "\x00" in value:
        why = "got a string holding a NUL character"
    elif kind == "date" and isinstance(value, str) and _date_shaped(value):
        why = f"{shown} is written so but names no day of the calendar"
    elif kind == "timestamp" and isinstance(value, str) and _finer_than_microseconds(value):
        why = f"{shown} is finer than a microsecond, which okfx would cut: round it to 6 digits"
    return InvalidParameter(
        f"parameter {name!r} must be {_EXPECTED[kind]}; {why}", parameter=name, expected=kind
    )


def shown(value: Any) -> str:
    """A typed value as a message shows it: a date or an instant as ISO 8601, quoted
    (``'2024-12-31'``, where ``repr`` wrote ``datetime.date(2024, 12, 31)``)."""
    if isinstance(value, date | datetime):
        return repr(value.isoformat())
    return repr(value)


def check_value(name: str, kind: str, value: Any) -> Any:
    """``value`` as the Python value of a ``kind`` parameter, or raise naming ``name``."""
    if kind == "boolean":
        if isinstance(value, bool):
            return value
    elif kind == "integer":
        if isinstance(value, int) and not isinstance(value, bool):
            if _INT64[0] <= value <= _INT64[1]:
                return value
    elif kind == "number":
        if isinstance(value, int) and not isinstance(value, bool):
            if abs(value) < NUMBER_BOUND:  # compared exactly: no float of a huge int
                return value
        elif isinstance(value, float) and math.isfinite(value) and abs(value) < NUMBER_BOUND:
            return value
    elif isinstance(value, str) and len(value) <= MAX_STRING_CHARS and "\x00" not in value:
        if kind == "string":
            return value
        parsed = parse_date(value) if kind == "date" else parse_timestamp(value)
        if parsed is not None and not (kind == "timestamp" and _finer_than_microseconds(value)):
            return parsed
    raise _refuse(name, kind, value)


def _finer_than_microseconds(text: str) -> bool:
    """Whether a timestamp's fraction of a second has a non-zero digit past the sixth,
    which the instant okfx binds (microseconds) would cut (AC QA: nanoseconds dropped)."""
    dot = text.find(".", text.find(":"))
    if dot < 0:
        return False
    end = dot + 1
    while end < len(text) and text[end].isdigit():
        end += 1
    return text[dot + 7 : end].strip("0") != ""


def check_values(
    declared: tuple[Parameter, ...], values: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The typed value of every declared parameter (None for an optional one not given).

    Raises :class:`InvalidParameter` for an undeclared name, a missing required value or a
    value of the wrong type.
    """
    if not isinstance(values, Mapping | None):
        raise InvalidParameter(
            f"parameters must be an object of name: value pairs, got {type(values).__name__}"
        )
    given = dict(values or {})
    if len(given) > MAX_PARAMETERS:
        raise InvalidParameter(f"{len(given)} parameters given; at most {MAX_PARAMETERS}")
    names = {p.name for p in declared}
    for name in given:
        if not isinstance(name, str) or name not in names:
            shown = str(name)[:MAX_NAME_CHARS]
            raise InvalidParameter(
                f"parameter {shown!r} is not declared by this computation; it takes only "
                f"{', '.join(sorted(names)) or 'no parameters'}",
                parameter=shown,
                expected="a declared parameter name",
            )
    bound: dict[str, Any] = {}
    for parameter in declared:
        kind = declared_type(parameter)
        value = given.get(parameter.name)
        if value is None and parameter.default is not None:
            bound[parameter.name] = _declared(parameter, kind, parameter.default, "default")
            continue
        if value is None:
            if parameter.required:
                raise InvalidParameter(
                    f"parameter {parameter.name!r} is required: give {_EXPECTED[kind]}",
                    parameter=parameter.name,
                    expected=kind,
                )
            bound[parameter.name] = None
            continue
        typed = check_value(parameter.name, kind, value)
        problem = _outside(parameter, kind, typed)
        if problem:
            raise InvalidParameter(
                f"parameter {parameter.name!r}: {problem}", parameter=parameter.name, expected=kind
            )
        bound[parameter.name] = typed
    return bound


def contract_problems(parameter: Parameter) -> list[tuple[str, str]]:
    """What keeps ``parameter``'s declaration from being bound whatever the value, as
    ``(key, message)`` with ``key`` the part of it at fault (``type``, ``default``, ``enum``,
    ``min``, ``max``, ``example``): an unknown type, or a declared value that is not of the
    type or breaks the declared constraints."""
    try:
        kind = declared_type(parameter)
    except InvalidParameter as exc:
        return [("type", exc.message)]
    found: list[tuple[str, str]] = []
    for key, values in (
        ("enum", parameter.enum or ()),
        ("min", () if parameter.minimum is None else (parameter.minimum,)),
        ("max", () if parameter.maximum is None else (parameter.maximum,)),
    ):
        what = "the enum value" if key == "enum" else key
        for value in values:
            try:
                _declared(parameter, kind, value, what)
            except InvalidParameter as exc:
                found.append((key, exc.message))
                break
    if found:
        return found  # the default and example are judged against these
    for key, value in (("default", parameter.default), ("example", parameter.example)):
        if value is None:
            continue
        try:
            typed = _declared(parameter, kind, value, key)
        except InvalidParameter as exc:
            found.append((key, exc.message))
            continue
        problem = _outside(parameter, kind, typed) if key == "example" else None
        if problem:
            found.append(
                (key, f"parameter {parameter.name!r} declares example {value!r}, but {problem}")
            )
    return found


def defaults_used(declared: tuple[Parameter, ...], values: Mapping[str, Any] | None) -> set[str]:
    """The parameters :func:`check_values` bound to their declared ``default``."""
    given = values if isinstance(values, Mapping) else {}
    return {p.name for p in declared if p.default is not None and given.get(p.name) is None}


def _declared(parameter: Parameter, kind: str, value: Any, what: str) -> Any:
    """A value the contract itself declares (``default``, an ``enum`` entry, a bound),
    typed; a wrong one is the contract's fault, and the message says so."""
    try:
        typed = check_value(
            parameter.name, kind, text_value(kind, value) if isinstance(value, str) else value
        )
    except InvalidParameter:
        raise InvalidParameter(
            f"parameter {parameter.name!r} declares {what} {value!r}, which is not "
            f"{_EXPECTED[kind]}: the computation's contract must be fixed before it is bound",
            parameter=parameter.name,
            expected=kind,
        ) from None
    if what == "default":
        problem = _outside(parameter, kind, typed)
        if problem:
            raise InvalidParameter(
                f"parameter {parameter.name!r} declares default {value!r}, but {problem}: "
                "the computation's contract must be fixed before it is bound",
                parameter=parameter.name,
                expected=kind,
            )
    return typed


def _outside(parameter: Parameter, kind: str, typed: Any) -> str | None:
    """Why ``typed`` breaks the parameter's declared ``enum``, ``min`` or ``max``; None
    when it keeps them (or there are none)."""
    if parameter.enum is not None:
        allowed = [_declared(parameter, kind, v, "the enum value") for v in parameter.enum]
        if typed not in allowed:
            listed = ", ".join(repr(v) for v in parameter.enum[:20])
            more = ", ..." if len(parameter.enum) > 20 else ""
            return f"{shown(typed)} is not one of the declared values ({listed}{more})"
    for bound, below in ((parameter.minimum, True), (parameter.maximum, False)):
        if bound is None or kind not in _ORDERED:
            continue
        limit = _declared(parameter, kind, bound, "min" if below else "max")
        if (typed < limit) if below else (typed > limit):
            side = "below the declared min" if below else "above the declared max"
            return f"{shown(typed)} is {side} {bound!r}"
    return None


def from_text(declared: tuple[Parameter, ...], pairs: Mapping[str, str]) -> dict[str, Any]:
    """Typed values from text (``--param year=2026``), read by each declared type.

    Unknown names and unreadable text are passed on unchanged, so :func:`check_values`
    reports them with the same messages as any other caller gets.
    """
    kinds = {p.name: TYPES.get((p.type or "").strip().casefold()) for p in declared}
    out: dict[str, Any] = {}
    for name, text in pairs.items():
        out[name] = text_value(kinds.get(name), text)
    return out


def text_value(kind: str | None, text: str) -> Any:
    """``text`` read as a ``kind`` value where it is one (``2026`` for an integer), else
    unchanged."""
    digits = text.strip().lstrip("+-")
    if kind == "integer" and digits.isascii() and digits.isdigit():
        return int(text)
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            return text
    if kind == "boolean" and text.strip().casefold() in ("true", "false"):
        return text.strip().casefold() == "true"
    return text
