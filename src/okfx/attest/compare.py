"""Provenance: is the SQL a receipt says ran the sanctioned computation with these values?

The receipt's text is tokenized in the computation's dialect and walked beside the bound
tokens. Formatting (whitespace, comments, keyword case, a final ``;``) and parameter
syntax (``@year`` or ``$year`` where the dialect reads both as the parameter) do not count.
Where the computation has a parameter, the receipt may keep a placeholder of the same
name or write a literal, which must mean the
bound value (``2026``, ``'2026-10-05'``, ``DATE '2026-10-05'``...). Any other change is
a difference, and the first one is reported with its line and column in the receipt.
"""

from __future__ import annotations

from dataclasses import dataclass

from okfx.attest import literals
from okfx.attest.binding import Bound
from okfx.attest.sqltext import SqlSyntaxError, Token, canonical_text, strip_terminators, tokenize

__all__ = ["Comparison", "Difference", "compare"]

_CONTEXT_TOKENS = 6


@dataclass(frozen=True, slots=True)
class Difference:
    """Where the receipt's SQL first departs from the binding."""

    expected: str  # what the binding has there ("the end of the statement" past its end)
    found: str  # what the receipt has there
    line: int  # 1-based, in the receipt's text (just past its end when it stops early)
    column: int
    after: str  # the receipt's tokens just before, as it writes them, to find the place

    @property
    def message(self) -> str:
        where = f"line {self.line}, column {self.column}"
        after = f" after `{self.after}`" if self.after else ""
        return f"first difference at {where}{after}: expected {self.expected}, found {self.found}"

    def to_dict(self) -> dict[str, object]:
        return {
            "line": self.line,
            "column": self.column,
            "after": self.after,
            "expected": self.expected,
            "found": self.found,
        }


@dataclass(frozen=True, slots=True)
class Comparison:
    """The outcome: no ``difference`` means the receipt ran the binding. ``placeholders``
    are the parameters it kept as placeholders (their values are not in its text)."""

    difference: Difference | None
    placeholders: tuple[str, ...]


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _shown(tokens: list[Token], i: int, width: int = 1) -> str:
    if i >= len(tokens):
        return "the end of the statement"
    return "`" + canonical_text(tokens[i : i + width]) + "`"


def _difference(text: str, got: list[Token], j: int, expected: str, found: str) -> Difference:
    # A receipt that stops early differs where its text ends (QA: "line 0, column 0").
    at = got[j].start if j < len(got) else len(text.rstrip())
    line, column = _position(text, at)
    # the receipt's own words, as it writes them, so a search of it finds them (docs QA:
    # the canonical `@end_date` was in neither text, which wrote `$end_date`)
    after = " ".join(token.text for token in got[max(0, j - _CONTEXT_TOKENS) : j])
    return Difference(expected, found, line, column, after)


def compare(bound: Bound, text: str) -> Comparison:
    """Compare the SQL ``text`` of a receipt with ``bound``."""
    dialect = bound.dialect
    try:
        got = strip_terminators(tokenize(text, dialect, bound.names))
    except SqlSyntaxError as exc:
        line, column = _position(text, exc.offset)
        return Comparison(
            Difference("SQL okfx can read", str(exc), line, column, ""), placeholders=()
        )
    want = bound.tokens
    placeholders: list[str] = []
    j = 0
    for i, token in enumerate(want):
        if token.kind != "param":
            if j >= len(got) or got[j].key != token.key or got[j].kind != token.kind:
                return Comparison(
                    _difference(text, got, j, _shown(list(want), i), _shown(got, j)),
                    tuple(placeholders),
                )
            j += 1
            continue
        name = bound.references[token.key]
        if j < len(got) and got[j].kind == "param":
            if got[j].key != token.key:
                return Comparison(
                    _difference(text, got, j, f"the parameter `@{name}`", _shown(got, j)),
                    tuple(placeholders),
                )
            placeholders.append(name)
            j += 1
            continue
        value = bound.values[name]
        read = literals.read(got, j, dialect)
        if read is None or not literals.same_value(bound.types[name], value, read[0]):
            expected = (
                f"`@{name}` or a literal of its bound value "
                f"`{literals.render(value, bound.types[name], dialect)}`"
            )
            width = read[1] - j if read is not None else 1
            return Comparison(
                _difference(text, got, j, expected, _shown(got, j, width)), tuple(placeholders)
            )
        j = read[1]
    if j < len(got):
        extra = _shown(got, j, min(_CONTEXT_TOKENS, len(got) - j))
        return Comparison(
            _difference(text, got, j, "the end of the statement", extra), tuple(placeholders)
        )
    return Comparison(None, tuple(placeholders))
