"""Bundle text made safe to print on a terminal.

A terminal acts on control characters: an escape sequence in a title or a body can set
the window title, write the clipboard (OSC 52), plant a hidden hyperlink, move the cursor
or clear the screen. Everything the CLI prints for people goes through :func:`visible`,
which shows such characters the way ``cat -v`` does (``ESC`` as ``^[``, ``DEL`` as
``^?``, the C1 control ``U+009B`` as ``M-^[``), and the bidirectional controls by their
code point (``<U+202E>``), piped or not. Newlines and tabs stay, as
layout. ``--json`` output stays exact: :func:`json_text` also escapes the characters JSON
may leave raw (``DEL`` and the C1 controls) as ``\\u`` sequences, which read back the same.

Columns are counted as a terminal draws them (:func:`columns`): a CJK character takes two,
a combining mark none, so tables of Chinese or Japanese titles stay aligned.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, TypeVar

from okfx.tools.display import map_strings

__all__ = [
    "HIDDEN_SHOWN",
    "columns",
    "cut_columns",
    "json_text",
    "visible",
    "visible_data",
    "visible_line",
]

_T = TypeVar("_T")

_SHOWN: dict[int, str] = {code: "^" + chr(code + 64) for code in range(32)}
_SHOWN[0x7F] = "^?"
_SHOWN.update({code: "M-^" + chr(code - 0x80 + 64) for code in range(0x80, 0xA0)})
del _SHOWN[ord("\n")], _SHOWN[ord("\t")]
# The bidirectional controls reorder what follows them on screen ("Trojan Source": a path
# or title that reads other than it is; security QA): shown by their code point.
_SHOWN.update(
    {code: f"<U+{code:04X}>" for code in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F))}
)
_SHOWN.update({code: f"<U+{code:04X}>" for code in range(0x2066, 0x206A)})

# The bidirectional controls and the characters that print as nothing (zero-width
# spaces and joiners, the soft hyphen, the BOM, Hangul fillers, the TAG characters that
# smuggle hidden text): two file names differing by one look alike (security QA). A
# report line shows them by code point (visible_line), --json as \\u escapes.
_HIDDEN = (
    0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
    0xAD, 0x115F, 0x180E, 0x3164, 0xFEFF, *range(0xFFF9, 0xFFFC), *range(0x200B, 0x200E),
    *range(0x2060, 0x2065), *range(0x206A, 0x2070), *range(0xE0000, 0xE0080),
)  # fmt: skip
#: Each of them as a report line shows it.
HIDDEN_SHOWN = {code: f"<U+{code:04X}>" for code in _HIDDEN}


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab shown as ``cat -v``
    does, so printing it cannot drive the terminal."""
    return text.translate(_SHOWN)


def visible_line(text: str) -> str:
    """:func:`visible` of text that must print as one line (a report's line naming a
    file): a line break in it is shown too, ``^J``, so a file name cannot print a line
    of its own (author QA: a name holding "\\n✓ b: conformant ..." printed a green
    verdict inside a failing report), and so is a character that prints as nothing,
    by its code point (``<U+200B>``)."""
    return visible(text).replace("\n", "^J").translate(HIDDEN_SHOWN)


def visible_data(value: _T) -> _T:
    """A copy of a tool payload (dicts, lists, strings) with :func:`visible` applied to
    every string, keys included: what a renderer then prints is safe."""
    return map_strings(value, visible)  # type: ignore[no-any-return]


_JSON_RAW = {code: f"\\u{code:04x}" for code in (0x7F, *range(0x80, 0xA0))}
_JSON_RAW.update({code: json.dumps(chr(code))[1:-1] for code in _HIDDEN})


def json_text(payload: Any) -> str:
    """``payload`` as the CLI's ``--json`` prints it: indented, non-ASCII as is, and no
    control character raw (``json.dumps`` escapes C0 but not ``DEL`` or C1)."""
    return json.dumps(payload, indent=2, ensure_ascii=False).translate(_JSON_RAW)


def _char_columns(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    if "\u1160" <= char <= "\u11ff" or "\ud7b0" <= char <= "\ud7ff":
        # a decomposed (NFD) Hangul syllable's vowel and final, drawn inside its leading
        # consonant's two columns (CLI QA: tables off by 3-10 columns on macOS names)
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def columns(text: str) -> int:
    """The terminal columns ``text`` takes: two for a wide or fullwidth (CJK) character,
    none for a combining mark, a zero-width format character or a conjoining Hangul vowel
    or final, one for the rest."""
    if text.isascii():
        return len(text)
    return sum(map(_char_columns, text))


def cut_columns(text: str, width: int) -> str:
    """``text`` as is when it fits in ``width`` columns, else its start and ``…`` in
    at most ``width`` columns."""
    if columns(text) <= width:
        return text
    used = 1  # the ellipsis takes one column
    for end, char in enumerate(text):
        used += _char_columns(char)
        if used > width:
            return text[:end] + "…"
    return text
