"""Where a frontmatter key is: the file line of a key, or of a value's path in the YAML.

Problems about a concept's fields carry the line their value is on, so that ``okfx
validate --github`` annotates that line and a person finds it. YAML is bundle text: these
read the frontmatter's lines with string tests (no pattern, no YAML parser), in one pass
each, and say ``None`` rather than guess when a key is not where a block layout puts it.

- :func:`key_line`: the ``nth`` top-level ``key:`` (a duplicate key's second one), or a
  ``parent.child`` one level down;
- :func:`field_lines`: the path-valued fields of one concept in one pass (its frontmatter
  links, read on every load);
- :class:`KeyLines`: any value's path,
  ``sources[0].usage_window.from``, through an outline of the block layout made once; a
  part of the path that is not found gives the line of the deepest part that is (the
  ``sources:`` line for a ``sources[3]`` the outline lacks).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["KeyLines", "field_lines", "item_lines", "key_line"]


def _is_key(text: str, key: str) -> bool:
    """Does ``text`` start with ``key:`` (plain or quoted)? String tests, no pattern: a
    key is bundle text."""
    for form in (key, f'"{key}"', f"'{key}'"):
        if text.startswith(form):
            rest = text[len(form) :].lstrip(" \t")
            if rest[:1] == ":" and rest[1:2] in ("", " ", "\t"):
                return True
    return False


def _in_flow(line: str, key: str) -> bool:
    """Does a flow mapping on ``line`` hold ``key:`` (``{a: 1, key: 2}``)? One pass over
    the line's pieces between ``{`` and ``,``."""
    if "{" not in line:
        return False
    pieces = line.split("{", 1)[1].replace("{", ",").split(",")
    return any(_is_key(piece.lstrip(" \t"), key) for piece in pieces)


def key_line(text: str, body_line: int, key: str, nth: int = 1) -> int | None:
    """The file line (1-based) of the ``nth`` top-level ``key:`` of the frontmatter of
    ``text``, or of a nested ``parent.child`` (the first ``child:`` indented below
    ``parent``, or on ``parent``'s line in a flow mapping); ``None`` when not found.

    ``body_line`` is the body's first line, so the frontmatter is lines 2 to
    ``body_line - 2`` (line 1 is the opening ``---``)."""
    lines = text.split("\n", body_line)[1 : max(body_line - 2, 1)]
    parent, _, child = key.partition(".")
    found = [i for i, line in enumerate(lines) if _is_key(line, parent)]
    if len(found) < nth:
        return None
    at = found[nth - 1]
    if not child or _in_flow(lines[at], child):
        return at + 2
    for i in range(at + 1, len(lines)):
        line = lines[i]
        if line.strip() and not line[0].isspace():
            break  # the next top-level key: the parent's block ended
        if line[:1].isspace() and _is_key(line.lstrip(" \t"), child):
            return i + 2
    return None


def item_lines(text: str, body_line: int, line: int, values: list[str]) -> list[int]:
    """The file line of each of ``values`` in the value of the top-level key on file
    line ``line`` (its own line, or the lines below it before the next top-level key,
    where a list's items are), in order: the line of the first occurrence at or after
    the previous value's, else ``line`` (relation lists run to ten ids and more)."""
    lines = text.split("\n", body_line)[: max(body_line - 2, 1)]
    end = line
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t-"):
        end += 1  # indented, blank or a "- item": still the key's value
    out: list[int] = []
    at = line - 1
    for value in values:
        found = next((i for i in range(at, end) if _names(lines[i], value)), None)
        if found is None:  # written out of order: from the key's line again
            found = next((i for i in range(line - 1, at) if _names(lines[i], value)), None)
        if found is None:
            out.append(line)
        else:
            out.append(found + 1)
            at = found
    return out


def _names(line: str, value: str) -> bool:
    """Does ``line`` hold ``value`` as a whole YAML scalar (not inside a longer one)?"""
    start = line.find(value)
    while start >= 0:
        before = line[start - 1] if start else " "
        end = start + len(value)
        after = line[end] if end < len(line) else " "
        if before in " \t[,-'\":" and after in " \t],'\"#":
            return True
        start = line.find(value, start + 1)
    return False


def field_lines(text: str, body_line: int, fields: list[str]) -> list[int | None]:
    """The file lines (1-based) of path-valued fields, in one pass over the frontmatter:
    ``resource``, ``computation``, ``executor.resource``, ``attester.resource``, and
    ``sources[i].resource`` (the line of the ``i``-th entry of the ``sources`` block as
    written, else the ``sources:`` line)."""
    wanted = any(field.startswith("sources[") for field in fields)
    start = key_line(text, body_line, "sources") if wanted else None
    sources = _source_lines(text, body_line, start) if start is not None else []
    found: list[int | None] = []
    for name in fields:
        if not name.startswith("sources["):
            line = key_line(text, body_line, name)
            if line is None and "." in name:  # `executor: path`, read as its resource
                line = key_line(text, body_line, name.partition(".")[0])
            found.append(line)
            continue
        index = int(name[len("sources[") : name.index("]")])
        found.append(sources[index] if index < len(sources) else start)
    return found


def _source_lines(text: str, body_line: int, start: int) -> list[int]:
    """The line of each entry of the ``sources`` block (whose key is on line ``start``), in
    order as written: its ``resource:`` key's, else the entry's own (a bare path, or an
    entry okfx skips); with no ``- `` entries (one mapping), the ``resource:`` keys'."""
    lines = text.split("\n", body_line)[start : max(body_line - 2, start)]
    entries: list[int] = []
    keys: list[int] = []
    indent = -1  # the entries' dash column, once the first is seen
    placed = False  # whether the current entry's line is its resource key's
    for offset, line in enumerate(lines):
        if line.strip() and not line[0].isspace() and not line.startswith("-"):
            break  # the next top-level key: the sources block ended
        number = start + 1 + offset
        stripped = line.lstrip(" \t")
        column = len(line) - len(stripped)
        piece = stripped
        if stripped[:1] == "-" and stripped[1:2] in ("", " ", "\t") and indent in (-1, column):
            indent, placed = column, False
            entries.append(number)
            piece = stripped[1:].lstrip(" \t")
        if _is_key(piece, "resource") or _in_flow(line, "resource"):
            keys.append(number)
            if entries and not placed:
                entries[-1], placed = number, True
    return entries or keys


@dataclass(eq=False)
class _Node:
    """A key or a list item of the frontmatter's block layout."""

    line: int  # the file line (1-based)
    col: int  # its indentation (a list item's: its dash's)
    flow: bool = False  # its value is a flow collection ({...} or [...]) on its line
    scalar: bool = False  # its value is a block scalar (| or >): the lines below are text
    item: bool = False  # a list item, not a key
    keys: dict[str, _Node] = field(default_factory=dict)
    items: list[_Node] = field(default_factory=list)


def _plain_key(content: str) -> tuple[str, str] | None:
    """``(key, value)`` of a ``key: value`` line's content (``key:`` alone too, a key
    quoted or not); ``None`` for anything else."""
    if content[:1] in ("'", '"'):
        close = content.find(content[0], 1)
        if close < 0:
            return None
        key, rest = content[1:close], content[close + 1 :].lstrip(" \t")
        if rest[:1] != ":" or rest[1:2] not in ("", " ", "\t"):
            return None
        return key, rest[1:].strip()
    if content[:1] in ("{", "[", "#", "?", "|", ">", "&", "*", "!", "%", "@", "`"):
        return None
    for at, char in enumerate(content):
        if char == ":" and content[at + 1 : at + 2] in ("", " ", "\t"):
            return content[:at].rstrip(" \t"), content[at + 1 :].strip()
        if char == "#" and at and content[at - 1] in (" ", "\t"):
            return None  # a comment before any colon
    return None


def _value_kind(node: _Node, value: str) -> None:
    node.flow = value[:1] in ("{", "[")
    node.scalar = value[:1] in ("|", ">")


def _outline(text: str, body_line: int) -> _Node:
    """The keys and list items of the frontmatter's block layout, as a tree. One pass:
    each line is a key (``key: value``), a list item (``- ``, which may start a mapping:
    ``- resource: x``), or text that belongs to the value above it."""
    root = _Node(0, -1)
    stack = [root]
    text_of: _Node | None = None  # the block scalar whose text lines are being passed
    lines = text.split("\n", body_line)[1 : max(body_line - 2, 1)]
    for number, line in enumerate(lines, start=2):
        content = line.lstrip(" ")
        col = len(line) - len(content)
        if not content.strip() or content.startswith("#"):
            continue
        if text_of is not None and col > text_of.col:
            continue
        placed = _place(stack, root, number, col, content)
        text_of = placed if placed is not None and placed.scalar else None
    return root


def _is_item(content: str) -> bool:
    return content == "-" or content.startswith(("- ", "-\t"))


def _place(stack: list[_Node], root: _Node, number: int, col: int, content: str) -> _Node | None:
    """Put the line ``number`` (its content at ``col``) into the outline ``stack`` holds;
    the deepest node it makes, or ``None`` for a line that makes none."""
    is_item = _is_item(content)
    # A list item may sit at its key's own indentation ("sources:" then "- resource: x").
    while len(stack) > 1 and (
        stack[-1].col > col or (stack[-1].col == col and (not is_item or stack[-1].item))
    ):
        stack.pop()
    while is_item:
        item = _Node(number, col, item=True)
        stack[-1].items.append(item)
        stack.append(item)
        rest = content[1:].lstrip(" \t")
        col, content = col + len(content) - len(rest), rest
        is_item = _is_item(rest)  # "- - x": an item of an item, on the same line
        if not is_item and not _plain_key(rest):
            _value_kind(item, rest)
            return item
        # else "- key: value": the item's first key, placed below
    parent = stack[-1]
    found = _plain_key(content)
    if found is None:
        return None  # text of a value above (a folded line, a flow collection going on)
    if parent.col == col and parent is not root:
        return None  # same indentation as a key that is not its parent: malformed
    node = _Node(number, col)
    _value_kind(node, found[1])
    parent.keys.setdefault(found[0], node)
    stack.append(node)
    return node


def _steps(key: str) -> list[str | int]:
    """``sources[0].usage_window.from`` -> ``["sources", 0, "usage_window", "from"]``."""
    steps: list[str | int] = []
    for part in key.split("."):
        name, _, indexes = part.partition("[")
        if name:
            steps.append(name)
        for index in indexes.split("[") if indexes else ():
            number = index.rstrip("]")
            if number.isdigit():
                steps.append(int(number))
    return steps


class KeyLines:
    """The lines of one file's frontmatter values, its outline made once for all of them."""

    def __init__(self, text: str, body_line: int) -> None:
        self._text, self._body_line = text, body_line
        self._root: _Node | None = None  # made on the first nested key asked for

    def line(self, key: str) -> int | None:
        """The file line (1-based) of the frontmatter value at ``key`` (``status``,
        ``generated.at``, ``sources[0].author``, ``verified[1]``): of the deepest part of
        the path that the frontmatter's block layout holds, ``None`` when not even its
        first. A flow collection (``generated: {by: x, at: y}``) holds its whole value on
        its line."""
        if "." not in key and "[" not in key:
            return key_line(self._text, self._body_line, key)  # one scan, no outline
        if self._root is None:
            self._root = _outline(self._text, self._body_line)
        node, found = self._root, None
        for step in _steps(key):
            if node.flow:
                break
            if isinstance(step, int):
                nxt = node.items[step] if step < len(node.items) else None
            else:
                nxt = node.keys.get(step)
            if nxt is None:
                break
            node, found = nxt, nxt.line
        return found
