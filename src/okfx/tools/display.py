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

__all__ = ["one_line", "visible"]

# C0 controls but tab and line feed, DEL, C1 controls, the line and paragraph separators,
# and the bidirectional embeddings, overrides and isolates (they reorder what is shown).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SPACES = re.compile(r"[\s\u2028\u2029]+")


def _stand_in(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␀ ... ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character but tab and line feed shown, not obeyed."""
    return _CONTROLS.sub(_stand_in, text)


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` on one line (white space runs folded to one space), controls visible,
    cut to ``limit`` characters with ``…``."""
    line = visible(_SPACES.sub(" ", text).strip())
    if limit is not None and len(line) > limit:
        line = line[: limit - 1] + "…"
    return line
