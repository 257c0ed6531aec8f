"""SQL literals: writing a bound value as one, and reading one back from a receipt.

:func:`render` quotes and escapes a value for its dialect, so the expanded form of a
binding has exactly one literal where the parameter was, whatever the value holds
(a smuggled ``' OR 1=1 --`` stays inside the string). :func:`read` parses the literal a
receipt wrote where a parameter was (``2026``, ``'2026-10-05'``, ``DATE '2026-10-05'``,
``CAST(NULL AS STRING)``, ``-3``) and :func:`same_value` compares it with the bound value
by meaning, not spelling.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from okfx.attest.sqltext import Dialect, Token
from okfx.attest.values import parse_date, parse_timestamp

__all__ = ["Literal", "decode_string", "read", "render", "same_value"]

_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "?": "?", '"': '"', "'": "'", "`": "`",
}  # fmt: skip
_HEX_WIDTH = {"x": 2, "X": 2, "u": 4, "U": 8}
_TYPED_PREFIXES = frozenset({"date", "timestamp", "datetime"})
_MAX_CAST_TYPE_WORDS = 4  # TIMESTAMP WITH TIME ZONE


@dataclass(frozen=True, slots=True)
class Literal:
    """A literal read from SQL: ``kind`` is string, number, boolean or null."""

    kind: str
    value: Any


def render(value: Any, type_: str, dialect: Dialect) -> str:
    """``value`` (already checked against ``type_``) as a SQL literal of ``dialect``."""
    if value is None:
        return "null"
    if type_ == "boolean":
        return "true" if value else "false"
    if type_ in ("integer", "number"):
        return repr(value)
    if type_ == "date":
        return f"date {quote(value.isoformat(), dialect)}"
    if type_ == "timestamp":
        return f"timestamp {quote(value.isoformat(sep=' '), dialect)}"
    return quote(str(value), dialect)


def quote(text: str, dialect: Dialect) -> str:
    """``text`` as a single-quoted string literal that reads back as exactly ``text``."""
    if dialect.backslash_escapes:
        escaped = text.replace("\\", "\\\\").replace("'", "\\'")
        escaped = escaped.replace("\n", "\\n").replace("\r", "\\r")
        return f"'{escaped}'"
    return "'" + text.replace("'", "''") + "'"


def decode_string(token: Token, dialect: Dialect) -> str | None:
    """The value of a string token, or None when it is not plain text (bytes, bad escapes)."""
    prefix, _, body = token.key.partition("'")
    if "b" in prefix or "x" in prefix:
        return None  # bytes or bit strings are not text parameters
    if token.text.startswith("$"):
        return body  # dollar-quoted: no escapes
    if "r" in prefix or not (dialect.backslash_escapes or "e" in prefix):
        return body  # the key already undid doubled quotes
    return _unescape(body)


def _unescape(body: str) -> str | None:
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            return None
        e = body[i + 1]
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            i += 2
        elif e in _HEX_WIDTH:
            digits = body[i + 2 : i + 2 + _HEX_WIDTH[e]]
            try:
                out.append(chr(int(digits, 16)))
            except ValueError:
                return None
            if len(digits) != _HEX_WIDTH[e]:
                return None
            i += 2 + _HEX_WIDTH[e]
        elif e in "01234567":
            digits = body[i + 1 : i + 4]
            if len(digits) != 3 or any(d not in "01234567" for d in digits):
                return None
            out.append(chr(int(digits, 8)))
            i += 4
        else:
            return None
    return "".join(out)


def read(tokens: list[Token], i: int, dialect: Dialect) -> tuple[Literal, int] | None:
    """The literal starting at ``tokens[i]`` and the index after it, or None."""
    if i >= len(tokens):
        return None
    token = tokens[i]
    if token.kind == "string":
        text = decode_string(token, dialect)
        return None if text is None else (Literal("string", text), i + 1)
    if token.kind == "number":
        number = _decimal(token.text)
        return None if number is None else (Literal("number", number), i + 1)
    if token.kind == "op" and token.text in "+-" and i + 1 < len(tokens):
        following = tokens[i + 1]
        number = _decimal(following.text) if following.kind == "number" else None
        if number is None:
            return None
        return Literal("number", -number if token.text == "-" else number), i + 2
    if token.kind != "word":
        return None
    word = token.text.casefold()
    if word in ("true", "false"):
        return Literal("boolean", word == "true"), i + 1
    if word == "null":
        return Literal("null", None), i + 1
    if word in _TYPED_PREFIXES and i + 1 < len(tokens) and tokens[i + 1].kind == "string":
        return read(tokens, i + 1, dialect)
    if word in ("cast", "safe_cast"):
        return _cast(tokens, i, dialect)
    return None


def _cast(tokens: list[Token], i: int, dialect: Dialect) -> tuple[Literal, int] | None:
    """``CAST ( literal AS type words )``."""
    if i + 1 >= len(tokens) or tokens[i + 1].text != "(":
        return None
    inner = read(tokens, i + 2, dialect)
    if inner is None:
        return None
    literal, j = inner
    if j >= len(tokens) or tokens[j].key != "as":
        return None
    j += 1
    words = 0
    while j < len(tokens) and tokens[j].kind == "word" and words < _MAX_CAST_TYPE_WORDS:
        j += 1
        words += 1
    if words == 0 or j >= len(tokens) or tokens[j].text != ")":
        return None
    return literal, j + 1


def _decimal(text: str) -> Decimal | None:
    if text.casefold().startswith("0x"):
        return Decimal(int(text, 16))
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def same_value(type_: str, bound: Any, literal: Literal) -> bool:
    """True when ``literal`` means the bound value of a ``type_`` parameter."""
    if bound is None:
        return literal.kind == "null"
    if type_ == "boolean":
        return literal.kind == "boolean" and literal.value is bound
    if type_ in ("integer", "number"):
        return literal.kind == "number" and literal.value == Decimal(repr(bound))
    if literal.kind != "string":
        return False
    if type_ == "date":
        return bool(parse_date(literal.value) == bound)
    if type_ == "timestamp":
        return bool(parse_timestamp(literal.value) == bound)
    return bool(literal.value == bound)
