"""Find the links in a markdown body and resolve them to bundle paths (spec §6).

Edges: inline links ``[t](x.md "title")``, reference-style links ``[t][ref]`` / ``[ref]``
with a ``[ref]: x.md`` definition, and path-valued frontmatter fields. Not edges: links
inside fenced or indented code and code spans, images, HTML comments, external URLs
(any scheme, ``//host``) and ``mailto:``. Every step is linear in the input size: the
scanner uses bounded regular expressions and pairs code-span backtick runs in one pass.
"""

from __future__ import annotations

import html
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from operator import itemgetter
from urllib.parse import unquote

from okfx.bundle.paths import join
from okfx.codeblocks import BACKTICKS, comment_spans, prose_segments
from okfx.errors import UnsafePath

__all__ = [
    "RawLink",
    "Resolver",
    "destination",
    "footnote_citations",
    "footnote_definitions",
    "footnote_offsets",
    "footnote_spans",
    "footnotes_cited",
    "leaving_links",
    "lines_outside_code",
    "matches_outside_code",
    "nfc_index",
    "scan_markdown",
    "skipped_at",
]

RawLink = tuple[str, str, int]  # (href, text, offset in the body)

# Link text: possessive runs of ordinary characters, escapes, one level of [brackets].
# Each run stops at the next bracket, so scanning from every "[" stays linear overall.
_TEXT = r"(?:[^\[\]\\]++|\\.|\[[^\[\]\n]{0,200}\]){0,32}"
_DEST = r"(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*){0,8})"
_TITLE = r"(?:\s++(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?"
# No optional prefix before ``\[``: a literal first character lets the regex engine skip
# ahead quickly (5x faster); images are recognised by looking at the preceding character.
# Possessive ``\s*+`` / ``\s++`` (Python 3.11+) consume a run of blanks one way only, so
# "[a](" followed by many blanks cannot backtrack quadratically.
_INLINE = re.compile(r"\[(" + _TEXT + r")\]\(\s*+" + _DEST + _TITLE + r"\s*+\)")
_REFDEF = re.compile(
    r"\n {0,3}\[(?!\^)((?:[^\[\]\\]++|\\.){1,32})\]:[ \t]*+(?:\n[ \t]*+)?(<[^<>\n]*>|\S+)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*$",
    re.MULTILINE,
)
_FULLREF = re.compile(r"\[(" + _TEXT + r")\]\[((?:[^\[\]\\]++|\\.){0,32})\]")
_SHORTREF = re.compile(r"\[((?:[^\[\]\\]++|\\.){1,32})\](?![\[(:])")
# A label holds no "[" (CommonMark's do not): "[^a[^a[^a..." then costs one step per
# start, where each start had read on up to 200 characters (a flaky linearity test).
_FOOTNOTE = re.compile(r"\[\^([^\]\[\s]{1,200})\]")
# A footnote cited: the label not followed by the colon of its definition.
_CITED = re.compile(_FOOTNOTE.pattern + r"(?!:)")
# A footnote definition line, searched in "\n" + body like _REFDEF.
_FOOTNOTE_DEF = re.compile(r"\n {0,3}\[\^([^\]\s]{1,200})\]:")
# A code span when the text has single backticks only: each one closes the previous.
_SINGLE_TICK_SPAN = re.compile(r"`[^`]*+`")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
# A git remote written scp-style, ``git@github.com:org/repo.git``: an address, no path
# (a relative path's first segment holds no ':', RFC 3986 §4.2).
_SCP = re.compile(r"^[A-Za-z0-9._~-]{1,64}@[A-Za-z0-9.-]{1,253}:")
_SIMPLE = re.compile(r"(/|\./|(?:\.\./)+)?([\w\-]+(?:/[\w\-]+)*\.md)")
# What a link destination spells otherwise (CommonMark 0.31, sections 2.4 and 2.5): a
# backslash before ASCII punctuation, an entity or a numeric character reference.
_ESCAPED = re.compile(
    r"\\([!-/:-@\[-`{-~])|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
)


def _masked_spans(body: str, start: int, end: int) -> list[tuple[int, int]]:
    """Code spans and HTML comments inside ``body[start:end]``, as sorted offset ranges."""
    spans = comment_spans(body, start, end)
    first = body.find("`", start, end)
    if first >= 0 and body.find("``", first, end) < 0:
        # Only single backticks: each one closes the span the previous one opened.
        spans += [m.span() for m in _SINGLE_TICK_SPAN.finditer(body, first, end)]
    elif first >= 0:
        runs = [m.span() for m in BACKTICKS.finditer(body, start, end)]
        # Pair each run with the next run of the same length, in one backwards pass.
        next_same: list[int] = [-1] * len(runs)
        last_seen: dict[int, int] = {}
        for i in range(len(runs) - 1, -1, -1):
            length = runs[i][1] - runs[i][0]
            next_same[i] = last_seen.get(length, -1)
            last_seen[length] = i
        i = 0
        while i < len(runs):
            j = next_same[i]
            if j < 0:
                i += 1
                continue
            spans.append((runs[i][0], runs[j][1]))
            i = j + 1
    spans.sort()
    # A code span inside a comment (`x` in <!-- ... -->) overlaps it: merged, so that
    # _inside, which looks at the last span starting before an offset, sees the comment.
    merged: list[tuple[int, int]] = []
    for span in spans:
        if merged and span[0] < merged[-1][1]:
            if span[1] > merged[-1][1]:
                merged[-1] = (merged[-1][0], span[1])
        else:
            merged.append(span)
    return merged


def _inside(spans: list[tuple[int, int]], starts: list[int], offset: int) -> bool:
    k = bisect_right(starts, offset) - 1
    return k >= 0 and spans[k][0] <= offset < spans[k][1]


class _Mask:
    """Whether an offset of ``body[start:end]`` lies in a code span or an HTML comment.

    The usual segment has no comment and single backticks only: an offset is then in a
    code span when an odd number of backticks precede it in the segment and another one
    follows (the spans :func:`_masked_spans` pairs). The backticks are counted from the
    previous offset asked about, so a pass over the segment in order stays linear.
    Otherwise the spans are computed once, on the first question.
    """

    __slots__ = ("body", "start", "end", "parity", "last", "at", "ticks", "spans", "starts")

    def __init__(self, body: str, start: int, end: int) -> None:
        self.body, self.start, self.end = body, start, end
        first = body.find("`", start, end)
        self.parity = body.find("<!--", start, end) < 0 and (
            first < 0 or body.find("``", first, end) < 0
        )
        self.last = body.rfind("`", start, end)  # the last backtick, -1 when none
        self.at, self.ticks = start, 0  # backticks in body[start:at]
        self.spans: list[tuple[int, int]] | None = None
        self.starts: list[int] = []

    def covers(self, offset: int) -> bool:
        """``offset`` must not be a backtick (every asker points at a ``[``)."""
        if self.parity:
            if self.last < offset:
                return False  # no backtick follows to close a span
            if offset < self.at:  # a new pass over the segment
                self.at, self.ticks = self.start, 0
            self.ticks += self.body.count("`", self.at, offset)
            self.at = offset
            return self.ticks % 2 == 1
        if self.spans is None:
            self.spans = _masked_spans(self.body, self.start, self.end)
            self.starts = [s for s, _ in self.spans]
        return bool(self.spans) and _inside(self.spans, self.starts, offset)


def destination(href: str) -> str:
    """A link destination as CommonMark reads it: ``a\\_b.md`` is ``a_b.md``, and
    ``&#106;avascript:x`` is ``javascript:x`` (a scheme, never a file: the viewer's
    renderer read it so, the loader as the file ``&``); an unknown entity stays as
    written."""
    if "\\" not in href and "&" not in href:
        return href
    return _ESCAPED.sub(_unescaped, href)


def _unescaped(match: re.Match[str]) -> str:
    char = match.group(1)
    return char if char is not None else html.unescape(match.group())


def _label(text: str) -> str:
    return " ".join(text.split()).casefold()


def scan_markdown(
    body: str, limit: int | None = None, *, written: bool = False
) -> tuple[list[RawLink], list[str]]:
    """Links (href, text, offset) that are candidate edges, and footnote labels, in order.

    Each href is the destination as CommonMark reads it (:func:`destination`), or with
    ``written`` as the page writes it.

    ``limit`` bounds what is kept (the memory a hostile body can cost): the first
    ``limit`` links by offset, ``limit`` footnote labels and ``limit`` reference
    definitions. Ask for one more than you keep to learn whether any were left out.
    """
    if "[" not in body:
        return [], []
    most = len(body) if limit is None else limit
    found: list[RawLink] = []
    footnotes: list[str] = []
    seen_footnotes: set[str] = set()
    segments = prose_segments(body)
    definitions: dict[str, str] = {}
    has_footnotes = "[^" in body
    if "]:" in body:
        lines = "\n" + body
        for start, end in segments:
            for m in _REFDEF.finditer(lines, start, end + 1):
                href = m.group(2)
                if href.startswith("<") and href.endswith(">"):
                    href = href[1:-1]
                definitions.setdefault(_label(m.group(1)), href if written else destination(href))
                if len(definitions) >= most:
                    break
    by_reference = False
    for start, end in segments:
        if len(found) >= most:
            break  # every later link has a larger offset
        mask = _Mask(body, start, end)
        taken: list[tuple[int, int]] = []
        for m in _INLINE.finditer(body, start, end):
            if definitions:  # only reference links need to know what inline ones took
                taken.append(m.span())
            at = m.start()
            if _not_a_link(body, at) or mask.covers(at):
                continue
            href, text = m.group(2, 1)
            found.append((href if written else destination(href), text, at))
            if len(found) >= most:
                # Reference links before this one still count: each pattern below keeps
                # its first ``most``, and the sort and cut at the end keep the first
                # ``most`` of all.
                break
        if definitions:
            taken_starts = [s for s, _ in taken]
            for rx in (_FULLREF, _SHORTREF):
                # Matches of one pattern never overlap each other, so the taken spans
                # are merged once per pattern (keeps the scan linear).
                added: list[tuple[int, int]] = []
                for m in rx.finditer(body, start, end):
                    if _inside(taken, taken_starts, m.start()) or mask.covers(m.start()):
                        continue
                    if _escaped(body, m.start()):
                        continue
                    ref = m.group(2) if rx is _FULLREF and m.group(2) else m.group(1)
                    href = definitions.get(_label(ref))
                    if href is None:
                        continue
                    added.append(m.span())
                    at = m.start()
                    if not (at and body[at - 1] == "!"):
                        found.append((href, m.group(1), at))
                        by_reference = True
                    if len(added) >= most:
                        break
                taken = sorted(taken + added)
                taken_starts = [s for s, _ in taken]
        if has_footnotes:
            for m in _FOOTNOTE.finditer(body, start, end):
                label = m.group(1)
                if _escaped(body, m.start()):
                    continue
                if label not in seen_footnotes and not mask.covers(m.start()):
                    seen_footnotes.add(label)
                    footnotes.append(label)
                    if len(footnotes) >= most:
                        has_footnotes = False
                        break
    if by_reference:  # inline links come out in order; reference links need a sort
        found.sort(key=itemgetter(2))
        del found[most:]
    return found, footnotes


def _not_a_link(body: str, at: int) -> bool:
    """Whether the ``[`` at ``at`` opens an image (``![``) or is escaped (``\\[``)."""
    before = body[at - 1] if at else ""
    if before == "!":
        return not _escaped(body, at - 1)
    return before == "\\" and _escaped(body, at)


def _escaped(body: str, at: int) -> bool:
    """Whether the character at ``at`` is escaped: an odd run of backslashes before it
    (CommonMark: ``\\[x](/y.md)`` is text, no link; spec QA: it was a broken link)."""
    before = at
    while before and body[before - 1] == "\\":
        before -= 1
    return (at - before) % 2 == 1


def matches_outside_code(body: str, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """Matches of ``pattern`` in ``body`` that start outside code (fenced and indented
    blocks, code spans) and HTML comments, in order: where :func:`scan_markdown` looks
    for links, for other link syntaxes (:mod:`okfx.bundle.wikilinks`). Found one at a
    time, so a caller that stops early never holds the rest."""
    for start, end in prose_segments(body):
        mask = _Mask(body, start, end)
        for m in pattern.finditer(body, start, end):
            if not mask.covers(m.start()):
                yield m


def lines_outside_code(body: str, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """Matches of a line-level ``pattern`` (an ATX heading) in ``body`` that start outside
    fenced and indented code blocks and HTML comments, in order: a ``# comment`` line of a
    shell or Python block is no heading. Code spans are not looked at, since a heading
    line ends a paragraph and any span in it."""
    commented = "<!--" in body
    for start, end in prose_segments(body):
        comments = comment_spans(body, start, end) if commented else []
        if not comments:
            yield from pattern.finditer(body, start, end)
            continue
        starts = [s for s, _ in comments]
        for m in pattern.finditer(body, start, end):
            if not _inside(comments, starts, m.start()):
                yield m


def nfc_index(paths: Iterable[str]) -> dict[str, str]:
    """``{NFC form: path}`` of the paths that are not ASCII (the first path of a form wins)."""
    index: dict[str, str] = {}
    for path in paths:
        if not path.isascii():
            index.setdefault(unicodedata.normalize("NFC", path), path)
    return index


def footnote_offsets(body: str, labels: Iterable[str]) -> dict[str, int]:
    """Where each of ``labels`` is first cited as ``[^label]`` in ``body`` outside code
    (an offset), as :func:`scan_markdown` found it; one pass, stopped once all are."""
    wanted, found = set(labels), {}
    for m in matches_outside_code(body, _FOOTNOTE):
        label = m.group(1)
        if label in wanted and label not in found:
            found[label] = m.start()
            if len(found) == len(wanted):
                break
    return found


def footnotes_cited(text: str) -> set[str]:
    """Labels of the footnotes ``text`` cites (``[^label]`` outside code), not those it
    only defines (``[^label]: ...``)."""
    return {m.group(1) for m in footnote_citations(text)}


def footnote_citations(text: str) -> Iterator[re.Match[str]]:
    """The ``[^label]`` citations of ``text`` outside code, in order (group 1: the
    label), not the ``[^label]:`` definitions."""
    if "[^" in text:
        yield from matches_outside_code(text, _CITED)


def footnote_definitions(body: str) -> set[str]:
    """Labels of the footnotes defined in ``body`` (``[^label]: text`` lines outside
    code): a GFM footnote, unless its label also names a ``sources[].id`` (spec §5.1)."""
    if "[^" not in body:
        return set()
    lines = "\n" + body
    found: set[str] = set()
    for start, end in prose_segments(body):
        found.update(m.group(1) for m in _FOOTNOTE_DEF.finditer(lines, start, end + 1))
    return found


# A footnote definition's first line (at a line start, multiline) and the lines that go
# on with it: indented, or blank before an indented one.
_FOOTNOTE_LINE = re.compile(
    r"^ {0,3}\[\^([^\]\s]{1,200})\]:[^\n]*+(?:\n(?:[ \t]*+\n)*+(?: {4}|\t)[^\n]*+)*+", re.MULTILINE
)


def footnote_spans(body: str) -> list[tuple[str, int, int]]:
    """``(label, start, end)`` of each footnote definition in ``body`` outside code, in
    order: its ``[^label]:`` line and the indented lines that continue it."""
    if "[^" not in body:
        return []
    return [(m.group(1), m.start(), m.end()) for m in lines_outside_code(body, _FOOTNOTE_LINE)]


class Resolver:
    """Resolves hrefs against the set of files and directories of one bundle."""

    __slots__ = ("files", "dirs", "canonical", "skipped", "_nfc")

    def __init__(
        self, files: set[str], dirs: set[str], skipped: dict[str, str] | None = None
    ) -> None:
        self.files = files
        self.dirs = dirs
        # Paths the walk found and left out (a symlink out of the bundle...), with why.
        self.skipped = skipped or {}
        # Each file path mapped to itself: a link to an existing file can then hold the
        # bundle's own path string instead of a fresh copy per link. Folders too: a link
        # to a folder without an index.md targets the folder.
        self.canonical: dict[str, str] = {path: path for path in files}
        for folder in dirs:
            self.canonical.setdefault(folder, folder)
        self._nfc: dict[str, str] | None = None

    def known(self, target: str) -> str | None:
        """The bundle's own path for ``target`` (a file or folder), None when there is
        none. Paths compare in Unicode NFC: a link written in NFD (``cafe\u0301.md``)
        finds the file named in NFC (``caf\u00e9.md``), and the other way round."""
        found = self.canonical.get(target)
        if found is None and not target.isascii():
            if self._nfc is None:
                self._nfc = nfc_index(self.canonical)
            found = self._nfc.get(unicodedata.normalize("NFC", target))
        return found

    def skipped_at(self, target: str) -> tuple[str, str] | None:
        """:func:`skipped_at` of this bundle's skipped paths."""
        return skipped_at(self.skipped, target)

    @staticmethod
    def is_external(href: str) -> bool:
        if href.startswith("//"):
            return True
        return ":" in href and (
            _SCHEME.match(href) is not None or ("@" in href and _SCP.match(href) is not None)
        )

    def _finish(self, target: str, trailing_slash: bool) -> str:
        if not target.isascii():
            target = self.known(target) or self.known(target + ".md") or target
        if trailing_slash or (target in self.dirs and target not in self.files):
            index = target.rstrip("/") + "/index.md" if target != "/" else "/index.md"
            # A folder without an index.md is still there (spec §8: index files are
            # optional): the link targets the folder itself.
            return target if target in self.dirs and index not in self.files else index
        if target not in self.files and target + ".md" in self.files:
            return target + ".md"
        return target

    def _exists(self, target: str) -> bool:
        return self.known(target) is not None

    def resolve_simple(self, href: str, base_dir: str, frontmatter: bool) -> str | None:
        """:meth:`resolve` for the common shapes (``/a/b.md``, ``./b.md``, ``../a/b.md``,
        ``b.md``) without dot segments, escapes or special characters, which never raise;
        None means "ask :meth:`resolve`"."""
        match = _SIMPLE.fullmatch(href)
        if match is None:
            return None
        prefix, rest = match.groups()
        if prefix == "/":
            return "/" + rest
        if not prefix and frontmatter:
            return None
        base = base_dir
        if prefix and prefix.startswith(".."):
            for _ in range(prefix.count("../")):
                if base == "/":
                    return None  # climbs above the root: the general path reports it
                base = base.rsplit("/", 1)[0] or "/"
        target = ("" if base == "/" else base) + "/" + rest
        if not prefix and target not in self.files:
            return None  # a bare link that misses may still hit from the root
        return target

    def resolve(self, href: str, base_dir: str, *, frontmatter: bool = False) -> str | None:
        """Canonical bundle path for ``href``, or None for externals, anchors and empties.

        Raises :class:`~okfx.errors.UnsafePath` for hrefs that leave the bundle. A
        relative href is file-relative (standard markdown); when that target does not
        exist but the bundle-root reading does, the root reading wins, since producers
        (the published samples included) write frontmatter paths root-relative; not for a
        body link that is one bare name (``overview.md``), which names a file beside the
        page. For frontmatter fields a bare ``a/b`` is tried root-relative first.
        """
        fast = self.resolve_simple(href, base_dir, frontmatter)
        if fast is not None:
            return fast
        href = href.strip()
        if href.startswith("<") and href.endswith(">"):
            href = href[1:-1].strip()
        if not href or href.startswith("#") or self.is_external(href):
            return None
        path = href.split("#", 1)[0].split("?", 1)[0]
        if not path:
            return None
        path = unquote(path)
        trailing = path.endswith("/")
        if path.startswith("/"):
            return self._finish(join("/", path), trailing)
        explicit = path.startswith(("./", "../")) or path in (".", "..")
        first_base, second_base = (
            ("/", base_dir) if frontmatter and not explicit else (base_dir, "/")
        )
        first = self._finish(join(first_base, path), trailing)
        if self._exists(first) or explicit or first_base == second_base:
            return first
        if not frontmatter and "/" not in path.rstrip("/"):
            # A bare file name (``overview.md`` in ``/cli-guide/index.md``) names a file
            # beside the page: when it is missing, the root's file of that name is no
            # stand-in (``/overview.md`` is another page), so the link stays broken.
            return first
        try:
            second = self._finish(join(second_base, path), trailing)
        except UnsafePath:
            return first
        return second if self._exists(second) else first

    def beside(self, href: str, base_dir: str, target: str) -> str | None:
        """For a frontmatter path ``href`` of a page in ``base_dir`` that :meth:`resolve`
        read from the root as ``target``: the file its file-relative reading names too,
        when there is one and it is another (``references/q.sql`` in ``/computations/``,
        with both ``/references/q.sql`` and ``/computations/references/q.sql``)."""
        path = self._bare_path(href)
        if path is None or "/" not in path.rstrip("/") or base_dir == "/":
            return None
        try:
            other = self._finish(join(base_dir, path), path.endswith("/"))
        except UnsafePath:
            return None
        return other if other != target and self._exists(other) else None

    def _bare_path(self, href: str) -> str | None:
        """``href`` as a path (no brackets, fragment, query; percent-decoded) when it is
        relative and not ``./`` or ``../``; None otherwise."""
        path = href.strip()
        if path.startswith("<") and path.endswith(">"):
            path = path[1:-1].strip()
        path = unquote(path.split("#", 1)[0].split("?", 1)[0])
        if not path or path.startswith(("/", "./", "../")) or self.is_external(path):
            return None
        return path

    def took_root(self, href: str, base_dir: str, target: str) -> bool:
        """Whether ``target``, what :meth:`resolve` gave a body link ``href`` of a page in
        ``base_dir``, is the bundle-root reading of a relative href whose file-relative
        reading names nothing (``tables/x.md`` in ``/sub/a.md``, read as ``/tables/x.md``)."""
        path = self._bare_path(href)
        if path is None:
            return False
        try:
            first = self._finish(join(base_dir, path), path.endswith("/"))
        except UnsafePath:
            return False
        return target != first


def skipped_at(skipped: Mapping[str, str], target: str) -> tuple[str, str] | None:
    """The path of ``skipped`` (a walk left it out, with why) that holds ``target``,
    itself or a folder above it, with why; None when none does (viewer QA: a link to a
    symlink out of the bundle read as a link to a file that does not exist)."""
    place = target.rstrip("/")
    while place and skipped:
        reason = skipped.get(place)
        if reason is not None:
            return place, reason
        place = place.rsplit("/", 1)[0]
    return None


#: Resolves nothing that exists: whether an href climbs above the root depends on the
#: href and the linking page's folder alone (:meth:`Resolver.resolve` raises before it
#: looks at a file).
_NO_FILES = Resolver(set(), set())


def leaving_links(body: str, base_dir: str, limit: int) -> list[RawLink]:
    """The body links of a page in ``base_dir`` that okfx never follows because their
    href leaves the bundle: it climbs above the root (``../../docs/x.md`` two folders
    deep, ``/../x.md``) or holds a backslash or a control character. These are the links
    a load reports as ``unsafe_link`` and keeps no edge for. At most ``limit``, in order;
    nothing is resolved against the files or read."""
    raw, _ = scan_markdown(body, limit, written=True)  # reported as the page writes them
    found: list[RawLink] = []
    for link in raw:
        try:
            _NO_FILES.resolve(destination(link[0]), base_dir)
        except UnsafePath:
            found.append(link)
    return found
