"""A YAML error in a concept's frontmatter, said to its author: the line to fix, as a
line of the file, and what to do there.

PyYAML names the place where it gave up, which is often the line *after* the mistake (a
key without its ``:`` fails on the next line; a quote never closed fails at the end of the
frontmatter or at a later quote), in lines counted from the ``---``, and in its own words
("found character that cannot start any token" for a tab). Validate QA: the annotation of
a CI run sent the author to an innocent line. The common mistakes are recognised and
named (a tab, a missing ``:``, an unclosed quote, bracket or brace, a value starting with
``@`` or a backtick, a ``{{template}}`` placeholder); any other error keeps PyYAML's
words, with file lines.

Every message ends with ``(line N)``, N a line of the file (the frontmatter starts on its
line 2, after ``---``), where :func:`okfx.bundle.problems.problem_line` reads it.
"""

from __future__ import annotations

import re

import yaml

__all__ = ["TEMPLATE_MARK", "colon_fix", "explain", "unclosed_quote_line"]

#: The opening of a template placeholder (``{{title}}``) left in a template's frontmatter.
TEMPLATE_MARK = "{{"

# A line's value that opens with a quote: ``key: "...`` or ``- '...``; group 1 is the
# quote, group 2 the rest of the line. Keys hold no quote, colon or blank-then-#.
_QUOTED_VALUE = re.compile(r"[ \t]*(?:-[ \t]+)?(?:[^\s\"'#:][^:\"']*:[ \t]+)?([\"'])(.*)")
_OFFSET = 1  # frontmatter line 1 is the file's line 2


def explain(exc: Exception, yaml_text: str) -> str:
    """The author's message for ``exc``, raised reading ``yaml_text``."""
    lines = yaml_text.split("\n")
    if isinstance(exc, yaml.reader.ReaderError):
        # a character YAML refuses (a C0 control pasted in, an ESC): the parser gave a
        # character position and its own line break (CLI QA); said with the file's line
        row = yaml_text.count("\n", 0, max(exc.position, 0))
        code = (
            exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or " ")
        )
        return _said(
            f"the control character U+{code:04X} is not allowed in YAML: remove it, or write "
            "it in a double-quoted value as an escape (\\x" + f"{code:02x})",
            row,
        )
    if not isinstance(exc, yaml.MarkedYAMLError):
        placeholder = _template_line(lines)
        return f"YAML error: {exc}" if placeholder is None else _template(placeholder)
    problem = exc.problem or "the frontmatter is not valid YAML"
    mark, began = exc.problem_mark, exc.context_mark
    at = None if mark is None else mark.line
    start = None if began is None else began.line
    placeholder = _template_line(lines if at is None else lines[: at + 1])
    if placeholder is not None:
        return _template(placeholder)
    here = lines[at] if at is not None and at < len(lines) else ""
    context = exc.context or ""
    if "found unhashable key" in problem:
        return complex_key(yaml_text, at)
    if "cannot start any token" in problem and mark is not None:
        char = here[mark.column : mark.column + 1]
        if char == "\t":
            return _said("a tab where YAML expects a value or an indent: YAML indents with "
                         "spaces only; replace the tab with spaces", at)  # fmt: skip
        if char in ("@", "`", "%"):
            return _said(f"a plain value cannot start with {char!r}: quote the value", at)
    if "mapping values are not allowed" in problem and at is not None and ": " in here:
        # validate QA: a nested value (a source's title) or one before " #" holding ': '
        # got PyYAML's words, where a top-level one is repaired and said (unquoted_colon)
        comment = " #" in here.partition(": ")[2]
        fix = colon_fix(here).removesuffix(
            "; okfx reads it as text, other consumers reject the file"
        )
        return _said(
            fix + (" (and ' #' starts a comment: quote the whole value)" if comment else ""), at
        )
    if "tab character" in problem:
        return _said("this line is indented with a tab: YAML indents with spaces only; "
                     "replace the tab with spaces", at)  # fmt: skip
    if "could not find expected ':'" in problem and start is not None:
        opening = lines[start].lstrip()[:1] if start < len(lines) else ""
        # A line of a mapping is 'key: value' or a comment: a quoted line is neither (CI
        # QA: "quote the line", followed, gave the next error, which said to quote again).
        if opening in ("[", "{"):
            inner = lines[start].strip()[1:].removesuffix("]" if opening == "[" else "}")
            bare = f" ({inner.strip()[:80]})" if ": " in inner else ""
            return _said(f"this line starts with {opening!r}, so YAML read it as a "
                         f"{'list' if opening == '[' else 'mapping'} used as a key, and no "
                         f"':' follows: write 'key: value'{bare}, or make the line a "
                         "comment by starting it with '#'", start)  # fmt: skip
        return _said("this line has no ':' after its key, so YAML read on into the next "
                     "line: write 'key: value', or make the line a comment by starting it "
                     "with '#'", start)  # fmt: skip
    if "scanning a quoted scalar" in context and start is not None:
        return _said("the quote that opens this line's value is never closed: close it on "
                     "this line", start)  # fmt: skip
    for name, (opening, closing) in {"sequence": ("[", "]"), "mapping": ("{", "}")}.items():
        if f"parsing a flow {name}" in context and start is not None:
            return _said(f"the {opening!r} on this line is never closed with {closing!r}: "
                         f"close it, or quote the value", start)  # fmt: skip
    if at is not None:
        opened = unclosed_quote_line(lines[: at + 1])
        if opened is not None:
            return _said("the quote that opens this line's value is not closed on it, so "
                         "YAML read the lines after it as part of the value: close it on "
                         "this line", opened)  # fmt: skip
        if _after_quote(here):
            return _said("text follows the closing quote of this line's value: quote the "
                         "whole value, or drop the quotes", at)  # fmt: skip
    said = ""
    if context and start is not None and start != at:
        said = f" ({context} that began on line {start + _OFFSET + 1})"
    return _said(f"{problem}{said}", at)


def complex_key(yaml_text: str, at: int | None) -> str:
    """Why a frontmatter block whose key is a list or mapping (``? [a, b]``, ``[a, b]:
    c``, valid YAML) is not read: frontmatter keys are text to okfx, as to python-
    frontmatter and a Go map of string keys (spec-audit QA: it said "unhashable type:
    'list'", blaming the YAML for a Python limit). ``at``: the key's index in the block.
    A ``{{placeholder}}`` (a mapping in a mapping, to YAML) is said as what it is."""
    lines = yaml_text.split("\n")
    placeholder = _template_line(lines if at is None else lines[: at + 1])
    if placeholder is not None:
        return _template(placeholder)
    return _said("this key is a list or mapping (a YAML complex key), which okfx does not "
                 "read: a frontmatter key is text; write it as one quoted string", at)  # fmt: skip


def unclosed_quote_line(lines: list[str]) -> int | None:
    """The 0-based index of the last of ``lines`` whose value opens with a quote it does
    not close on that line, or None."""
    for index in range(len(lines) - 1, -1, -1):
        found = _QUOTED_VALUE.fullmatch(lines[index])
        if found is None:
            continue
        quote, rest = found.group(1), found.group(2)
        if quote == "'":
            closed = "'" in rest.replace("''", "")
        else:
            closed = '"' in rest.replace("\\\\", "").replace('\\"', "")
        if not closed:
            return index
    return None


def _after_quote(line: str) -> bool:
    """Whether ``line``'s value is a quoted text closed on it and followed by more than a
    comment (``title: "Composition" extra``)."""
    found = _QUOTED_VALUE.fullmatch(line)
    if found is None:
        return False
    quote, rest = found.group(1), found.group(2)
    end = rest.find(quote)
    tail = rest[end + 1 :].strip() if end >= 0 else ""
    return bool(tail) and not tail.startswith("#")


def _template_line(lines: list[str]) -> int | None:
    """The index of the first of ``lines`` that holds a ``{{placeholder}}`` outside a
    quoted value (``title: "{{title}}"`` is valid YAML), or None."""
    return next(
        (
            i
            for i, line in enumerate(lines)
            if TEMPLATE_MARK in line and _QUOTED_VALUE.fullmatch(line) is None
        ),
        None,
    )


def _template(at: int) -> str:
    return _said("a template placeholder ('{{...}}') is no YAML value: quote it, or keep "
                 "template files out of the bundle (exclude their folder)", at)  # fmt: skip


def _said(text: str, at: int | None) -> str:
    """``YAML error: text (line N)``, N the file's line of frontmatter index ``at``."""
    where = f" (line {at + _OFFSET + 1})" if at is not None else ""
    return f"YAML error: {text}{where}"


#: The longest quoted value an ``unquoted_colon`` message writes out whole.
_WHOLE_FIX = 240


def colon_fix(written: str) -> str:
    """The ``unquoted_colon`` message for the frontmatter line ``written`` ("description:
    Training on your data: good for ..."): the key, and the line as it must be written
    (validate QA: the message named neither, and in a GitHub annotation it is all an
    author sees)."""
    key, colon, value = written.partition(":")
    value = value.strip()
    if not colon or not key.strip().removeprefix("-").strip() or not value:
        return (
            "a value holding ': ' must be quoted: okfx reads it as text, other consumers "
            "reject the file"
        )
    indent = written[: len(written) - len(written.lstrip())]
    dash = "- " if key.strip().startswith("- ") else ""
    key = key.strip().removeprefix("- ").strip()  # an entry of a list: "- title: a: b"
    quoted = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    said = "okfx reads it as text, other consumers reject the file"
    if len(quoted) > _WHOLE_FIX:
        # Never a cut value inside the quotes: pasted, it passed and cut the value short
        # (CI QA: 26 of the corpus's 30 advised lines were cut so).
        return (
            f"the value of {key!r} holds ': ', which YAML reads as a second key: put the "
            f"whole value in double quotes, from {value[:40]!r}... to the end of the line "
            f'(a " inside it written \\"); {said}'
        )
    kept = " (indented as it is now)" if indent else ""
    return (
        f"the value of {key!r} holds ': ', which YAML reads as a second key: write the line "
        f"as {dash}{key}: {quoted}{kept}; {said}"
    )
