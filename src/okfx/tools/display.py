"""Bundle text made safe to show: control characters visible, one-line fields one line.

Bundle text is untrusted. Where okfx puts it in a text a client or a terminal may render
(the ``<knowledge>`` block, MCP resource titles and texts, a generated index), a control
character must not act: an escape sequence could recolour or clear a screen, and a line
break in a title could start a fake row of a listing. :func:`visible` replaces each one
with a visible stand-in (``ESC`` becomes ``␛``, a bidirectional override ``\\u202e``);
:func:`one_line` also folds every line break and run of white space into one space.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["inert", "inert_text", "map_strings", "one_line", "quoted", "visible"]

# C0 controls but tab and line feed as the Unicode control pictures (``\x1b`` is ␛), DEL
# as ␡; the C1 controls, the line and paragraph separators, and the bidirectional
# embeddings, overrides and isolates (they reorder what is shown) as ``\uXXXX``.
_SHOWN: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20) if code not in (9, 10)}
_SHOWN[0x7F] = "\u2421"
_SHOWN.update(
    {
        code: f"\\u{code:04x}"
        for code in (
            *range(0x80, 0xA0),
            0x2028,
            0x2029,
            *range(0x202A, 0x202F),
            *range(0x2066, 0x206A),
        )
    }
)


# What :func:`inert` shows: as :data:`_SHOWN`, but a carriage return stays (an attached
# file's CRLF lines are text, and a carriage return moves no text in a client's view).
_INERT = {code: shown for code, shown in _SHOWN.items() if code != 0x0D}
_ACTS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def inert(value: Any) -> Any:
    """A tool result with every control character of its strings (keys too) shown, not
    obeyed, as MCP resources and the CLI show them: an escape sequence or a bidirectional
    override in a title (``Invoice \u202efdp.exe``, read as ``Invoice exe.pdf``) must not
    act where an agent's host shows it (agent QA: tool results carried them raw). Tab,
    line feed and carriage return stay. A result without any is returned as it is, found
    so by one search of its ``repr`` (which writes each of them as an escape): a third of
    the cost of walking a 200-row listing."""
    if _IN_REPR.search(repr(value)) is None:
        return value
    return _inert(value)


#: How ``repr`` writes a character :func:`inert` shows (and, harmlessly, a backslash
#: followed by such text, which then costs a walk that changes nothing).
_IN_REPR = re.compile(r"\\x[0-9a-f]{2}|\\u20(?:2[89a-e]|6[6-9])")


def inert_text(text: str) -> str:
    """``text`` with its control characters shown as :func:`inert` shows them (a page of
    the viewer, whose text a browser would reorder at a bidirectional override)."""
    return text.translate(_INERT) if _ACTS.search(text) else text


def _inert(value: Any) -> Any:
    return map_strings(value, inert_text)


def map_strings(value: Any, show: Callable[[str], str]) -> Any:
    """``value`` (a tool payload: dicts, lists, tuples, strings) with ``show`` applied to
    every string, keys included; a list or tuple stays one."""
    if isinstance(value, str):
        return show(value)
    if isinstance(value, dict):
        return {map_strings(key, show): map_strings(item, show) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(map_strings(item, show) for item in value)
    return value


def visible(text: str) -> str:
    """``text`` with every control character but tab and line feed shown, not obeyed."""
    return text.translate(_SHOWN)


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` on one line (white space runs folded to one space), controls visible,
    cut to ``limit`` characters with ``…``."""
    line = visible(" ".join(text.split()))  # split(): every white space, U+2028 too
    if limit is not None and len(line) > limit:
        line = line[: limit - 1] + "…"
    return line


def quoted(text: str, limit: int = 80) -> str:
    """``text`` as typed, in quotes, to echo back: a backslash stays one backslash (where
    ``repr`` doubles it, so a regex copied back from the message would differ), double
    quotes when it holds a single one, controls and line breaks visible (so it stays one
    line), cut to ``limit`` characters with ``…``."""
    shown = visible(text).replace("\n", "\u240a").replace("\t", "\u2409")
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    quote = '"' if "'" in shown and '"' not in shown else "'"
    return f"{quote}{shown}{quote}"
