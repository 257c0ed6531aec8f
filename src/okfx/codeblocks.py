"""Where a markdown body's code blocks and HTML comments lie: the text outside them is
what a reader of the rendered page reads as prose (links, headings, searchable words).

Fenced blocks (backticks or tildes, CommonMark's closing rules), indented blocks (four
columns after a blank line, not inside a list item) and ``<!-- ... -->`` comments (an
unclosed one runs to the end of its segment). Shared by the bundle reader (links,
headings, footnotes) and search (the words it indexes and shows).
"""

from __future__ import annotations

import re

__all__ = [
    "BACKTICKS",
    "FENCE",
    "comment_spans",
    "prose_segments",
    "without_comments",
    "without_fence_info",
    "without_html_tags",
]

# A fence line: its marker and what follows it (the info string of an opening fence).
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)")
# Line-start patterns begin with a literal newline (searched in "\n" + body) rather than
# ``^``: a literal first character lets the regex engine skip ahead, ~5x faster.
_FENCE_LINE = re.compile(r"\n {0,3}(`{3,}|~{3,})([^\n]*)")
# A line indented 4+ columns right after a blank line may open an indented code block.
_INDENTED_AFTER_BLANK = re.compile(r"\n[ \t]*\n(?: {4}| {0,3}\t)[ \t]*\S")
_TILDES = re.compile(r"~+")
# The tags of common HTML elements (``<td class="num">``, ``</table>``, ``<br/>``), words
# a rendered page does not show; not a placeholder such as ``<VERSION>``. It never
# matches a line break.
_HTML_TAG = re.compile(
    r"</?(?i:a|abbr|b|blockquote|br|caption|center|col|colgroup|dd|details|div|dl|dt|em"
    r"|figcaption|figure|font|h[1-6]|hr|i|iframe|img|kbd|li|ol|p|picture|pre|small|source"
    r"|span|strong|sub|summary|sup|table|tbody|td|tfoot|th|thead|tr|u|ul|video)"
    r"(?![\w-])[^<>\n]*+>"
)
BACKTICKS = re.compile(r"`+")


def _indent(line: str) -> int:
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _line_start(body: str, at: int) -> int:
    """The start of the line holding ``at`` when only 0-3 spaces precede ``at`` on it,
    else -1 (found without scanning back further than four characters)."""
    lead = body[max(at - 4, 0) : at]
    first = at - (len(lead) - len(lead.rstrip(" ")))
    if at - first > 3 or (first > 0 and body[first - 1] != "\n"):
        return -1
    return first


def _fence_lines(body: str) -> list[tuple[int, int, str, str]]:
    """``(line start, line end, marker, info)`` of each line that opens with 0-3 spaces
    and a run of 3+ backticks or tildes, as ``_FENCE_LINE`` finds them.

    With one kind of marker in the body (the usual case) ``str.find`` jumps from marker
    to marker instead of trying the regex at every line start.
    """
    # "~" first: looking for one character is much faster than for "~~~".
    if "~" in body and "~~~" in body and "```" in body:
        return [
            (m.start(), m.end() - 1, m.group(1), m.group(2))
            for m in _FENCE_LINE.finditer("\n" + body)
        ]
    marker, run = ("```", BACKTICKS) if "```" in body else ("~~~", _TILDES)
    lines: list[tuple[int, int, str, str]] = []
    at = body.find(marker)
    while at >= 0:
        run_end = run.match(body, at).end()  # type: ignore[union-attr]  # body[at] is in it
        next_at = run_end  # a run inside a line: look further on
        start = _line_start(body, at)
        if start >= 0:
            line_end = body.find("\n", run_end)
            line_end = len(body) if line_end < 0 else line_end
            lines.append((start, line_end, body[at:run_end], body[run_end:line_end]))
            next_at = line_end
        at = body.find(marker, next_at)
    return lines


def _fenced_segments(body: str) -> list[tuple[int, int]]:
    """Prose segments when the only code blocks are fenced (the common case)."""
    segments: list[tuple[int, int]] = []
    seg_start = 0
    fence: tuple[str, int] | None = None
    for line_start, line_end, marker, info in _fence_lines(body):
        if fence is None:
            if marker[0] == "`" and "`" in info:
                continue  # not a fence: an info string may not hold backticks
            segments.append((seg_start, line_start))
            fence = (marker[0], len(marker))
        elif marker[0] == fence[0] and len(marker) >= fence[1] and not info.strip():
            fence = None
            seg_start = min(line_end + 1, len(body))
    if fence is None:
        segments.append((seg_start, len(body)))
    return [(a, b) for a, b in segments if b > a]


def _may_hold_indented_code(body: str, start: int, end: int) -> bool:
    """Whether ``body[start:end]`` has a line indented 4+ columns after a blank line.

    Such a line needs "\\n" + four spaces, or a tab: two C-speed scans rule out most
    segments before the regex tries every line start.
    """
    lo = max(start - 1, 0)
    if body.find("\n    ", lo, end) < 0 and body.find("\t", lo, end) < 0:
        return False
    return _INDENTED_AFTER_BLANK.search(body, lo, end) is not None


def prose_segments(body: str) -> list[tuple[int, int]]:
    """Offsets ``(start, end)`` of the body outside fenced and indented code blocks."""
    if "```" not in body and "~~~" not in body and "    " not in body and "\t" not in body:
        return [(0, len(body))]
    fenced = _fenced_segments(body)
    if not body.startswith(("    ", "\t")) and not any(
        _may_hold_indented_code(body, a, b) for a, b in fenced
    ):
        return fenced
    segments: list[tuple[int, int]] = []
    seg_start = 0
    offset = 0
    fence: tuple[str, int] | None = None
    in_indented = False
    prev_blank = True
    in_list = False
    for line in body.split("\n"):
        line_end = offset + len(line) + 1
        stripped = line.strip()
        if fence is not None:
            match = FENCE.match(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= fence[1]:
                if not match.group(2).strip():
                    fence = None
                    seg_start = line_end
        elif in_indented and (not stripped or _indent(line) >= 4):
            if stripped:
                seg_start = line_end
        else:
            in_indented = False
            match = FENCE.match(line)
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                segments.append((seg_start, offset))
                fence = (match.group(1)[0], len(match.group(1)))
            elif stripped and _indent(line) >= 4 and prev_blank and not in_list:
                segments.append((seg_start, offset))
                in_indented = True
                seg_start = line_end
            elif stripped:
                if _LIST_ITEM.match(line):
                    in_list = True
                elif _indent(line) < 2 and prev_blank:
                    in_list = False
        prev_blank = not stripped
        offset = line_end
    if fence is None:
        segments.append((seg_start, len(body)))
    return [(a, min(b, len(body))) for a, b in segments if b > a]


def comment_spans(body: str, start: int, end: int) -> list[tuple[int, int]]:
    """HTML comments inside ``body[start:end]``, as offset ranges in order (an unclosed
    one runs to ``end``)."""
    spans: list[tuple[int, int]] = []
    pos = start
    while True:
        open_at = body.find("<!--", pos, end)
        if open_at < 0:
            return spans
        close_at = body.find("-->", open_at + 4, end)
        stop = end if close_at < 0 else close_at + 3
        spans.append((open_at, stop))
        pos = stop


def without_comments(body: str) -> str:
    """``body`` with its HTML comments outside code (``<!-- generated:start -->``, a
    commented-out draft) left out, each line break in one kept, so what follows keeps its
    line: text a reader of the rendered page never sees, as links and headings in them are
    none (a comment in a code block is code, and stays)."""
    if "<!--" not in body:
        return body
    pieces: list[str] = []
    pos = 0
    for start, end in prose_segments(body):
        for open_at, stop in comment_spans(body, start, end):
            pieces.append(body[pos:open_at])
            pieces.append("\n" * body.count("\n", open_at, stop))
            pos = stop
    pieces.append(body[pos:])
    return "".join(pieces)


def without_fence_info(body: str) -> str:
    """``body`` with each code fence's info string (```` ```python ````, ```` ``` devsite-
    click-to-copy ````) left out: a label for the renderer, not words of the page."""
    if "```" not in body and "~~~" not in body:
        return body
    pieces: list[str] = []
    pos = 0
    for _start, end, _marker, info in _fence_lines(body):
        if info.strip():
            pieces.append(body[pos : end - len(info)])
            pos = end
    pieces.append(body[pos:])
    return "".join(pieces)


#: Elements whose content a rendered page never shows as text.
_UNSHOWN = ("style", "script")


def _unshown_spans(low: str, start: int, end: int) -> list[tuple[int, int]]:
    """The ``<style>`` and ``<script>`` elements in ``low[start:end]`` (a lowercased
    body), opening tag to closing tag, in order; an element never closed is none. One
    ``find`` after another: linear in the text."""
    spans: list[tuple[int, int]] = []
    for name in _UNSHOWN:
        at = start
        while (i := low.find("<" + name, at, end)) >= 0:
            at = i + 1 + len(name)
            if low[at : at + 1] not in (">", " ", "\t", "\n", "/"):
                continue  # <styles>, <scripted>: another word
            close = low.find("</" + name, at, end)
            if close < 0:
                break
            stop = low.find(">", close, end)
            at = end if stop < 0 else stop + 1
            spans.append((i, at))
    spans.sort()
    kept: list[tuple[int, int]] = []
    for span in spans:  # a <script> inside a <style> (or the reverse) is inside it
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def without_html_tags(body: str) -> str:
    """``body`` with the tags of common HTML elements outside code (:data:`_HTML_TAG`)
    each made a blank: ``<td class="n">4</td>`` reads `` 4 ``, so "table" or "class"
    are no words of a page that lays its text out in an HTML table; and ``<style>`` and
    ``<script>`` elements left out whole (hybrid QA: a Chinese daily page opening with a
    style block read as English, CSS words and all). What search indexes of a body; a
    tag in a code block is code, and stays. Every line break stays."""
    if "<" not in body:
        return body
    low = body.lower() if ("<s" in body or "<S" in body) else ""
    pieces: list[str] = []
    pos = 0
    for start, end in prose_segments(body):
        at = start
        spans = _unshown_spans(low, start, end) if low else []
        for open_at, stop in [*spans, (end, end)]:  # the text before each, then each
            for match in _HTML_TAG.finditer(body, at, open_at):
                pieces += (body[pos : match.start()], " ")
                pos = match.end()
            if stop > open_at:
                pieces += (body[pos:open_at], "\n" * body.count("\n", open_at, stop))
                pos = stop
            at = stop
    if not pieces:
        return body
    pieces.append(body[pos:])
    return "".join(pieces)
