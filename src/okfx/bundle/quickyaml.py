"""A pure-Python reader for the small part of YAML that most frontmatter is written in.

PyYAML costs about half of a bundle's load time, even with libyaml, mostly in the
Python half of its composer and constructor. Frontmatter is nearly always a short
block mapping of plain scalars, so :func:`quick_load` reads that subset directly and
returns exactly what :func:`okfx.bundle.frontmatter.load_yaml` builds with PyYAML: the same
values and types, the same duplicate-key report, the same shared strings. For anything
else it returns None and the caller asks PyYAML. It never raises.

The subset:

- block mappings of plain keys (``key: value``), nested by indentation;
- block sequences (``- item``, also at their key's own indentation), whose items are
  scalars, one-line flow collections or compact mappings (``- id: x``);
- one-line flow sequences and mappings of scalars (``[a, "b c"]``, ``{ by: x, at: y }``);
- plain scalars, also folded over more-indented continuation lines; single-quoted
  scalars and double-quoted ones without a backslash, on one line;
- comments.

Plain scalars are typed by PyYAML's own YAML 1.1 implicit resolvers, less timestamps
(as the loader has them): ``yes``/``off`` are booleans, ``010`` is 8, ``1:30`` is 90,
``1e3`` and dates are text. Everything else is left to PyYAML: anchors, aliases, tags,
block scalars, ``?`` keys, directives, document markers, tabs, escapes, quoted scalars
over several lines, nested flow collections, merge keys, keys that are not strings,
blank lines inside a scalar, and any doubt about an indicator character.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from okfx.limits import Limits

__all__ = ["quick_load"]

_TAG = "tag:yaml.org,2002:"
_NULL, _BOOL, _INT, _FLOAT = _TAG + "null", _TAG + "bool", _TAG + "int", _TAG + "float"
_TIMESTAMP = _TAG + "timestamp"
# The same bound as ``frontmatter._SHARED_MAX``: shorter strings go through ``strings``.
_SHARED_MAX = 32
_MAX_KEY = 200  # YAML refuses simple keys over 1,024 characters; leave long ones to it
_MAX_NUMBER = 100  # longer ints are bounded by the loader's own checks: leave them to it
_DEFAULTS = Limits()

# Characters that cannot start a plain scalar (or can only in forms left to PyYAML).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
# What the text after "key: " or "- " cannot start with to be read on the quick path.
_NOT_PLAIN_START = _INDICATORS | {"", " "}
# Anything but printable text and "\n": tabs, CR, controls, NEL, LS/PS, BOM, surrogates.
_ODD = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_PRINTABLE_ASCII = b"\n" + bytes(range(0x20, 0x7F))
_SINGLE = re.compile(r"'([^']*(?:''[^']*)*)'")
_DOUBLE = re.compile(r'"([^"\\]*)"')
# One item of a flow collection and what follows it. A plain item keeps its trailing
# spaces (the caller strips them): possessive, so that a plain item with no closing
# bracket fails in linear time (backtracking through "a    ...    b" is quadratic).
# The empty alternative is "[]"; the blanks around it are possessive too, or a run of
# them would be split every way between the two.
_FLOW_ITEM = re.compile(
    r" *+(?:'([^']*(?:''[^']*)*)'|\"([^\"\\]*)\"|([^,\[\]{}#'\" ][^,\[\]{}#]*+)|) *+([,\]}])"
)
_FLOW_KEY = re.compile(r" *([^,\[\]{}#:'\" ][^,\[\]{}#:]*): ")
_FLOW_MAP_END = re.compile(r" *\}")
# The inside of a one-line flow collection of plain scalars only (no quotes, no nesting,
# no comment, no "?"): read by splitting at commas.
_FLOW_PLAIN_ONLY = re.compile(r"[^\[\]{}#'\"?]*")
# PyYAML returns this one NaN object for every ".nan": a dict holding it compares equal
# to another only through that identity, so use the same object.
_NAN: float = yaml.constructor.SafeConstructor.nan_value
_INF = float("inf")
_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


def _plain_resolvers() -> tuple[dict[str, tuple[tuple[str, Any], ...]], tuple[Any, ...]]:
    """PyYAML's implicit resolvers by first character, timestamps left out, in PyYAML's
    order: the table ``frontmatter._FastLoader`` resolves with."""
    table: dict[Any, list[tuple[str, Any]]] = yaml.SafeLoader.yaml_implicit_resolvers
    kept = {
        first: [(tag, rx) for tag, rx in entries if tag != _TIMESTAMP]
        for first, entries in table.items()
    }
    wildcard = kept.pop(None, [])
    return {first: tuple(entries + wildcard) for first, entries in kept.items()}, tuple(wildcard)


_BY_FIRST, _WILDCARD = _plain_resolvers()


# Plain scalars starting with one of these may be typed (bool, int, null...); any other
# first character means text. PyYAML has no catch-all resolver (``None`` key); should one
# appear, quick_load steps aside.
_TYPED_FIRST = frozenset(_BY_FIRST)
# Every character an int or a float can hold (YAML 1.1: 0x1F, 0b1, 1_000, 1:30, 1.5e+3,
# .inf, .NaN): a text with any other ("2026-04-21T00:00:39Z") is not one, and PyYAML's
# number patterns, slow on such texts, need not run. Tested against those patterns.
_NUMBER_CHARS = "0123456789abcdefABCDEFxinIN_:.+-"
_NUMBER_FIRST = frozenset(
    first
    for first, entries in _BY_FIRST.items()
    if all(tag in (_INT, _FLOAT) for tag, _ in entries)
)


class _Outside(Exception):
    """The text uses YAML outside the subset: PyYAML must read it."""


_EMPTY: Any = object()  # a flow collection's missing item


def quick_load(
    yaml_text: str,
    strings: dict[str, str] | None = None,
    *,
    max_depth: int = _DEFAULTS.max_yaml_depth,
    max_nodes: int = _DEFAULTS.max_yaml_nodes,
) -> tuple[Any, list[str]] | None:
    """``(data, duplicate_keys)`` as ``load_yaml`` returns them, or None when the text is
    outside the subset (or would need a bound checked: deeper than ``max_depth`` or
    possibly over ``max_nodes`` nodes). ``strings`` as for ``load_yaml``; on None it may
    already hold a few of the text's strings, which is harmless."""
    # Every node but the root needs a character or two: 2 * len + 2 bounds the count.
    if 2 * len(yaml_text) + 2 > max_nodes or _WILDCARD:
        return None
    if yaml_text.isascii():
        if yaml_text.encode().translate(None, _PRINTABLE_ASCII):
            return None  # tabs, CR, control characters
    # isprintable() admits a subset of what YAML does (no NBSP, no format characters):
    # a quick yes for most texts, the exact pattern for the rest.
    elif not yaml_text.replace("\n", "").isprintable() and _ODD.search(yaml_text):
        return None
    reader = _Reader(yaml_text, {} if strings is None else strings, max_depth)
    try:
        return reader.document(), reader.duplicates
    except Exception:  # _Outside, or a case this reader got wrong: PyYAML decides
        return None


def _construct(tag: str, text: str) -> Any:
    """The value of a plain scalar PyYAML resolved to ``tag`` (other than str)."""
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return _BOOLS[text.lower()]
    if len(text) > _MAX_NUMBER:
        raise _Outside
    if tag == _INT:
        return _to_int(text)
    if tag == _FLOAT and ":" not in text:
        return _to_float(text)
    raise _Outside  # merge ("<<"), value ("="), base-60 floats


def _signed(text: str) -> tuple[int, str]:
    digits = text.replace("_", "")
    if digits[0] in "+-":
        return (-1 if digits[0] == "-" else 1), digits[1:]
    return 1, digits


def _to_int(text: str) -> int:
    """A YAML 1.1 int: 0b binary, 0x hex, leading-0 octal, base 60 (``1:30``), decimal."""
    sign, digits = _signed(text)
    if digits == "0":
        return 0
    if digits.startswith("0b"):
        return sign * int(digits[2:], 2)
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    if digits[0] == "0":
        return sign * int(digits, 8)
    if ":" in digits:
        value = 0
        for part in digits.split(":"):
            value = value * 60 + int(part)
        return sign * value
    return sign * int(digits)


def _to_float(text: str) -> float:
    sign, digits = _signed(text.lower())
    if digits == ".inf":
        return sign * _INF
    if digits == ".nan":
        return _NAN
    return sign * float(digits)


def _check_plain(text: str) -> None:
    """Refuse a one-line plain scalar (stripped, comment cut) that is not plainly one."""
    if not text:
        raise _Outside
    first = text[0]
    if first in _INDICATORS and (first != "-" or len(text) == 1 or text[1] == " "):
        raise _Outside
    if ": " in text or text[-1] == ":":
        raise _Outside


def _check_tail(text: str, end: int) -> None:
    """After a quoted scalar or a flow collection: nothing but spaces and a comment."""
    tail = text[end:]
    rest = tail.lstrip(" ")
    if rest and (rest[0] != "#" or len(rest) == len(tail)):
        raise _Outside


def _flow_parts(text: str) -> list[str]:
    """The items of ``[...]`` or ``{...}`` holding plain scalars only, unstripped;
    ``[a,]`` has one item, as ``[]`` and ``[ ]`` have none."""
    parts = text[1:-1].split(",")
    if not parts[-1].strip(" "):
        parts.pop()  # "[]", "[ ]" and a trailing comma
    return parts


def _flow_pairs(text: str) -> list[tuple[str, str]]:
    """The (raw key, raw value) pairs of ``{...}`` holding plain scalars only; an empty
    value ("{a: }") is ""."""
    pairs = []
    for part in _flow_parts(text):
        raw, colon, value = part.partition(": ")
        if not colon or ":" in raw:
            raise _Outside  # "{a}", "{a:b: c}"
        pairs.append((raw, value.strip(" ")))
    return pairs


def _starts_sequence(rest: str) -> bool:
    return rest[0] == "-" and (len(rest) == 1 or rest[1] == " ")


# Keys already checked (plain, not typed as bool/int/null...), raw text -> key. Bundles
# repeat a few dozen keys, so this stays tiny; the bound only stops hostile growth.
_KEYS: dict[str, str] = {}
_KEYS_MAX = 4096


def _checked_key(raw: str) -> str:
    text = raw.strip(" ")
    if not text or text[0] in _INDICATORS or " #" in text or len(text) > _MAX_KEY:
        raise _Outside
    for _tag, regexp in _BY_FIRST.get(text[0], _WILDCARD):
        if regexp.match(text):
            raise _Outside  # a bool, int, null... key: left to PyYAML
    if len(_KEYS) < _KEYS_MAX:
        _KEYS[raw] = text
    return text


class _Reader:
    """Recursive descent over the lines. ``pos`` is the first line not yet consumed; the
    two block loops keep it in a local and store it around calls.

    The loops read the common ``key: word`` and ``- word`` lines inline: a method call
    per scalar would cost a good part of the time. :meth:`value` reads everything else.
    A last line at indentation -1 ends every block without a bounds check.
    """

    __slots__ = ("duplicates", "end", "indents", "max_depth", "pos", "rests", "share")

    def __init__(self, text: str, strings: dict[str, str], max_depth: int) -> None:
        lines = text.split("\n")
        self.rests = rests = [line.lstrip(" ") for line in lines]
        self.indents = [len(line) - len(rest) for line, rest in zip(lines, rests, strict=True)]
        self.end = len(lines)
        rests.append("end")
        self.indents.append(-1)
        self.pos = 0
        self.share = strings.setdefault
        self.duplicates: list[str] = []
        self.max_depth = max_depth

    def document(self) -> Any:
        rests, j = self.rests, 0
        while not rests[j] or rests[j][0] == "#":
            j += 1
        if j == self.end:
            return None  # only comments and blank lines, as PyYAML reads it
        self.pos = j
        if _starts_sequence(rests[j]):
            value: Any = self.sequence(self.indents[j], 1)
        else:
            value = self.mapping(self.indents[j], 1)
        j = self.pos
        while not rests[j] or rests[j][0] == "#":
            j += 1
        if j != self.end:
            raise _Outside  # text after the block, less indented than its start
        return value

    def mapping(self, indent: int, depth: int) -> dict[Any, Any]:
        """A block mapping at column ``indent``, from line ``pos``."""
        if depth >= self.max_depth:
            raise _Outside  # its values would be deeper than the loader allows
        rests, indents, share = self.rests, self.indents, self.share
        duplicates = self.duplicates
        out: dict[Any, Any] = {}
        j = self.pos
        while True:
            line = rests[j]
            if not line or line[0] == "#":
                j += 1
                continue
            here = indents[j]
            if here != indent:
                if here < indent:
                    break
                raise _Outside
            j += 1
            raw, colon, text = line.partition(": ")
            if not colon:
                if line[-1] != ":":
                    raise _Outside
                raw = line[:-1]
            key = _KEYS.get(raw) or _checked_key(raw)
            key = share(key, key)
            # Reported before the value is read, as the loader's builder does.
            if key in out and key not in duplicates:
                duplicates.append(key)
            if (
                text[:1] not in _NOT_PLAIN_START
                and " #" not in text
                and ": " not in text
                and text[-1] not in ": "
                and (indents[j] <= indent or not rests[j] or rests[j][0] == "#")
            ):  # a plain scalar on this line only
                if text[0] in _TYPED_FIRST:
                    out[key] = self.typed(text)
                else:
                    out[key] = share(text, text) if len(text) <= _SHARED_MAX else text
                continue
            self.pos = j
            out[key] = self.entry(text.lstrip(" "), indent, depth + 1, True)
            j = self.pos
        self.pos = j
        return out

    def sequence(self, indent: int, depth: int) -> list[Any]:
        if depth >= self.max_depth:
            raise _Outside
        rests, indents, share = self.rests, self.indents, self.share
        items: list[Any] = []
        j = self.pos
        while True:
            line = rests[j]
            if not line or line[0] == "#":
                j += 1
                continue
            here = indents[j]
            if here != indent:
                if here < indent:
                    break
                raise _Outside
            if line[0] != "-" or (len(line) > 1 and line[1] != " "):
                break  # the key after a sequence written at its key's indentation
            text = line[2:].lstrip(" ")
            first = text[:1]
            if first in _NOT_PLAIN_START:
                pass
            elif ": " in text or text[-1] == ":":
                # "- key: value": a mapping at the key's column. Its first line is read
                # again as if it held just "key: value" there.
                rests[j] = text
                indents[j] = here + len(line) - len(text)
                self.pos = j
                items.append(self.mapping(indents[j], depth + 1))
                j = self.pos
                continue
            elif (
                " #" not in text
                and text[-1] != " "
                and (indents[j + 1] <= indent or not rests[j + 1] or rests[j + 1][0] == "#")
            ):  # a plain scalar on this line only
                j += 1
                if first in _TYPED_FIRST:
                    items.append(self.typed(text))
                else:
                    items.append(share(text, text) if len(text) <= _SHARED_MAX else text)
                continue
            self.pos = j + 1
            items.append(self.entry(text, indent, depth + 1, False))
            j = self.pos
        self.pos = j
        return items

    def entry(self, text: str, indent: int, depth: int, in_mapping: bool) -> Any:
        """The value of a mapping key or sequence item that is not a one-line plain
        scalar; ``text`` is the rest of its line, stripped, and ``pos`` the next line."""
        first = text[:1]
        if not first or first == "#":
            return self.below(indent, depth, in_mapping)
        if first == "[":
            return self.flow_sequence(text, depth)
        if first == "{":
            return self.flow_mapping(text, depth)
        return self.value(text, indent, depth)

    def value(self, text: str, indent: int, depth: int) -> Any:
        """A quoted or plain scalar (``text`` is the rest of the line, after ``key:`` or
        ``-``); ``indent`` is the column of the collection it belongs to."""
        first = text[0]
        if first == "'":
            found = _SINGLE.match(text)
            if found is None:
                raise _Outside
            _check_tail(text, found.end())
            return self.string(found.group(1).replace("''", "'"))
        if first == '"':
            found = _DOUBLE.match(text)
            if found is None:
                raise _Outside
            _check_tail(text, found.end())
            return self.string(found.group(1))
        return self.plain(text, indent)

    def below(self, indent: int, depth: int, in_mapping: bool) -> Any:
        """A value with nothing on its own line: a more-indented block, a sequence at a
        mapping key's own indentation, or null."""
        rests, j = self.rests, self.pos
        while not rests[j] or rests[j][0] == "#":
            j += 1
        self.pos = j
        here = self.indents[j]  # -1 for the last line
        if _starts_sequence(rests[j]):
            if here > indent or (in_mapping and here == indent):
                return self.sequence(here, depth)
        elif here > indent:
            return self.mapping(here, depth)
        return None

    def plain(self, text: str, indent: int) -> Any:
        comment = text.find(" #")
        if comment >= 0:
            text = text[:comment]
        text = text.rstrip(" ")
        _check_plain(text)
        if comment < 0:
            text = self.fold(text, indent)
        return self.typed(text)

    def fold(self, text: str, indent: int) -> str:
        """``text`` and its continuation lines (more indented than ``indent``), joined
        by spaces. A blank or comment line ends the scalar; a more-indented line after
        it is then refused by the collection being read."""
        rests, indents, j = self.rests, self.indents, self.pos
        parts = [text]
        while True:
            rest = rests[j]
            if not rest or rest[0] == "#" or indents[j] <= indent:
                break
            rest = rest.rstrip(" ")
            if rest[0] in _INDICATORS or ": " in rest or rest[-1] == ":" or " #" in rest:
                raise _Outside
            parts.append(rest)
            j += 1
        self.pos = j
        return " ".join(parts)

    def typed(self, text: str) -> Any:
        """A plain scalar's value: PyYAML's implicit type, else a (shared) string."""
        first = text[0]
        if first not in _NUMBER_FIRST or not text.lstrip(_NUMBER_CHARS):
            for tag, regexp in _BY_FIRST.get(first, _WILDCARD):
                if regexp.match(text):
                    return _construct(tag, text)
        return self.share(text, text) if len(text) <= _SHARED_MAX else text

    def string(self, text: str) -> str:
        return self.share(text, text) if len(text) <= _SHARED_MAX else text

    def flow_plain(self, text: str) -> Any:
        """A plain scalar of a flow collection, spaces around it included."""
        text = text.strip(" ")
        if text[:1] in _NOT_PLAIN_START or ": " in text or text[-1] == ":":
            _check_plain(text)  # refuses all but "-x"
        if text[0] in _TYPED_FIRST:
            return self.typed(text)
        return self.share(text, text) if len(text) <= _SHARED_MAX else text

    def flow_scalar(self, found: re.Match[str]) -> Any:
        """The item ``_FLOW_ITEM`` found; ``_EMPTY`` when there is none."""
        single, double, plain, _stop = found.groups()
        if single is not None:
            return self.string(single.replace("''", "'"))
        if double is not None:
            return self.string(double)
        if plain is None:
            return _EMPTY
        # PyYAML and libyaml differ on "?" inside flow scalars: leave it to them.
        if "?" in plain:
            raise _Outside
        return self.flow_plain(plain)

    def flow_sequence(self, text: str, depth: int) -> list[Any]:
        if depth >= self.max_depth:
            raise _Outside
        if text[-1] == "]" and _FLOW_PLAIN_ONLY.fullmatch(text, 1, len(text) - 1):
            share = self.share
            plain_items: list[Any] = []
            for part in _flow_parts(text):  # flow_plain(), inline
                item = part.strip(" ")
                if item[:1] in _NOT_PLAIN_START or ": " in item or item[-1] == ":":
                    _check_plain(item)  # refuses all but "-x"
                if item[0] in _TYPED_FIRST:
                    plain_items.append(self.typed(item))
                else:
                    plain_items.append(share(item, item) if len(item) <= _SHARED_MAX else item)
            return plain_items
        items: list[Any] = []
        pos = 1
        while True:
            found = _FLOW_ITEM.match(text, pos)
            if found is None:
                raise _Outside
            pos = found.end()
            stop = found.group(4)
            item = self.flow_scalar(found)
            if item is _EMPTY:  # no item: "[]", or "[a,]" after a comma
                if stop != "]":
                    raise _Outside
                break
            items.append(item)
            if stop != ",":
                if stop != "]":
                    raise _Outside
                break
        _check_tail(text, pos)
        return items

    def flow_mapping(self, text: str, depth: int) -> dict[Any, Any]:
        if depth >= self.max_depth:
            raise _Outside
        quoted = text[-1] != "}" or not _FLOW_PLAIN_ONLY.fullmatch(text, 1, len(text) - 1)
        out: dict[Any, Any] = {}
        share, duplicates = self.share, self.duplicates
        for raw, value in self.flow_quoted_pairs(text) if quoted else _flow_pairs(text):
            key = _KEYS.get(raw) or _checked_key(raw)
            key = share(key, key)
            if key in out and key not in duplicates:
                duplicates.append(key)
            out[key] = value if quoted else self.flow_plain(value) if value else None
        return out

    def flow_quoted_pairs(self, text: str) -> list[tuple[str, Any]]:
        """The (raw key, value) pairs of a flow mapping with quoted values (or a
        trailing comment)."""
        pairs: list[tuple[str, Any]] = []
        pos = 1
        while True:
            found = _FLOW_KEY.match(text, pos)
            if found is None:  # "{}", or "{a: 1,}" after a comma
                closing = _FLOW_MAP_END.match(text, pos)
                if closing is None:
                    raise _Outside
                pos = closing.end()
                break
            raw = found.group(1)
            found = _FLOW_ITEM.match(text, found.end())
            if found is None:
                raise _Outside
            pos = found.end()
            stop = found.group(4)
            value = self.flow_scalar(found)
            pairs.append((raw, None if value is _EMPTY else value))
            if stop != ",":
                if stop != "}":
                    raise _Outside
                break
        _check_tail(text, pos)
        return pairs
