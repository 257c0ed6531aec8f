"""Markdown to HTML for bundle text, which is hostile input.

CommonMark with tables, strikethrough and footnotes (markdown-it-py), with raw HTML off:
a ``<script>`` in a body is shown as text; only a few inert tags written bare in prose
(``<br>``, ``<code>``...: :data:`_INERT_TAG`) become those elements. Every link and
image URL is sorted by :func:`url_kind` before anything is emitted: ``http``, ``https``
and ``mailto`` stay links to the outside (marked, ``rel="noopener noreferrer
nofollow"``); any other scheme (``javascript:``, ``data:``, ``vbscript:``, ``file:``...)
is refused at parse time, so the text stays text; a relative URL goes to the caller's
``rewrite``, which maps it to a viewer page (a concept, a folder, an attached file) or
to nothing, and a link to nothing is rendered as a marked span without an ``href``.
Images load only from the viewer's own origin (the caller decides which bundle files are
raster images); any other image becomes a link. With ``wikilink`` given (a bundle loaded
with ``--wikilinks``), ``[[name]]``, ``[[name|label]]`` and ``[[name#heading]]`` outside
code are links too, resolved by the caller as the loader resolves them. Headings get ids
(``h-<slug>``, never clashing with the page's own, ``<slug>`` being GitHub's id, the one
``okfx validate`` checks fragments against; a repeated heading takes ``-1``, ``-2``...
as on GitHub, which is what authors' ``#heading-1`` links assume) and make the outline.
A table's column alignment is a class (``align-right``), never an inline style, which
the viewer's Content-Security-Policy refuses. Bodies over :data:`MAX_RENDER_CHARS` are
cut, and the cut is reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markupsafe import Markup, escape
from mdit_py_plugins.footnote import footnote_plugin

from okfx.bundle.anchors import fragment_key, github_slug
from okfx.bundle.wikilinks import WIKILINK
from okfx.codeblocks import without_comments
from okfx.tools.yamltext import frontmatter_yaml

__all__ = [
    "MAX_RENDER_CHARS",
    "Heading",
    "Rendered",
    "Rewrite",
    "WikiRewrite",
    "as_written",
    "inline",
    "render",
    "slug",
    "url_kind",
]

#: Characters of a body rendered as markdown; the rest is left to the raw file.
MAX_RENDER_CHARS = 200_000
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
UrlKind = Literal["external", "fragment", "relative", "unsafe"]
#: ``rewrite(url, image)``: the viewer URL for a relative link (or image), or None.
Rewrite = Callable[[str, bool], "Target | None"]
#: ``wikilink(target, anchor)``: the viewer URL of ``[[target#anchor]]``, or None.
WikiRewrite = Callable[[str, str | None], "Target | None"]

# Browsers drop ASCII whitespace and control characters inside a URL before they read
# its scheme ("java\tscript:" is javascript:), and read a backslash as a slash.
_INVISIBLE = re.compile(r"[\x00-\x20\x7f]+")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_ALIGNS = {f"text-align:{side}": f"align-{side}" for side in ("left", "right", "center")}


@dataclass(frozen=True, slots=True)
class Target:
    """Where a relative link points in the viewer; ``image``: show it inline (a raster
    image file of the bundle, served from the viewer's origin)."""

    url: str
    image: bool = False
    #: Why a link leads nowhere (``url`` empty), shown as its tooltip: "names several
    #: files: ...". Empty for a link that leads somewhere, or is merely broken.
    why: str = ""


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    anchor: str


@dataclass(frozen=True, slots=True)
class Rendered:
    html: str  # safe to insert: every piece of bundle text in it is escaped
    outline: tuple[Heading, ...]
    cut: int  # characters not rendered (0 when the whole text was)


def url_kind(url: str) -> UrlKind:
    """What a link URL is, read the way a browser reads it."""
    seen = _INVISIBLE.sub("", url).replace("\\", "/")
    if seen.startswith("//"):
        return "external"  # protocol-relative: another host over http(s)
    scheme = _SCHEME.match(seen)
    if scheme is not None:
        return "external" if scheme.group(1).lower() in SAFE_SCHEMES else "unsafe"
    return "fragment" if seen.startswith("#") else "relative"


def slug(text: str) -> str:
    """The id of a heading called ``text``: ``h-`` + GitHub's id for it
    (:func:`okfx.bundle.anchors.github_slug`), so a link's ``#fragment`` written for
    GitHub, passed through here too, finds the heading. Also the id a fragment maps to."""
    return "h-" + (github_slug(text)[:80] or "section")


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """``[[target#anchor|label]]`` as a link token whose ``meta`` holds the target and
    anchor. An embed (``![[...]]``) and one inside a link's text stay text; so do the
    brackets a link's label is measured over (``silent``), so ``[see [[b]]](b.md)``
    stays one link, as it is without wikilinks."""
    at, src = state.pos, state.src
    if silent or not src.startswith("[[", at) or (at and src[at - 1] == "!"):
        return False
    if getattr(state, "linkLevel", 0) > 0:
        return False
    found = WIKILINK.match(src, at, state.posMax)
    if found is None or not found.group("target").strip():
        return False
    target = found.group("target").strip()
    opened = state.push("link_open", "a", 1)
    opened.meta = {"wikilink": (target, found.group("anchor"))}
    text = state.push("text", "", 0)
    text.content = (found.group("label") or target).strip() or target
    state.push("link_close", "a", -1)
    state.pos = found.end()
    return True


def _parser(wikilinks: bool = False) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.use(footnote_plugin)
    md.add_render_rule("footnote_caption", _render_footnote_caption)
    md.validateLink = lambda url: url_kind(url) != "unsafe"  # type: ignore[method-assign]
    md.add_render_rule("image", _render_image)
    # Before text_join, which would merge an entity (&lt;) into the text beside it.
    md.core.ruler.before("text_join", "inert_tags", _inert_tags)
    if wikilinks:
        md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    return md


# A few inert tags written in prose, as bare as can be (no attribute, any case): pages
# written for GitHub use them, and shown as text they read as breakage (viewer QA: a list
# of countries joined by "<br>", a table cell wrapped in "<p>"). Matched in a text token,
# never in code nor in an entity: "&lt;code&gt;" is how an author shows the text <code>
# (viewer QA: it became a real element). What they become carries no attribute, and they
# are balanced within their paragraph or cell: a closing tag with no opening one is
# dropped, and one left open is closed at its end (viewer QA: an unclosed <b> made the
# rest of the page bold, the viewer's own sidebar and footer included).
_INERT_TAG = re.compile(r"<(/?)(br|b|i|em|strong|code|sub|sup|kbd|p) ?/?>", re.IGNORECASE)


def _inert_tags(state: StateCore) -> None:
    """Each inline run's inert tags as balanced ``html_inline`` tokens (see above)."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        if not any(t.type == "text" and "<" in t.content for t in block.children):
            continue
        out: list[Token] = []
        opened: list[str] = []
        for token in block.children:
            if token.type != "text" or "<" not in token.content:
                out.append(token)
                continue
            at = 0
            for found in _INERT_TAG.finditer(token.content):
                out.append(_text_like(token, token.content[at : found.start()]))
                out.append(_html(_inert(found, opened)))
                at = found.end()
            out.append(_text_like(token, token.content[at:]))
        out.extend(_html(f"</{name}>") for name in reversed(opened))
        block.children = [t for t in out if t.type != "text" or t.content]


def _inert(found: re.Match[str], opened: list[str]) -> str:
    """The HTML of one inert tag, ``opened`` being the tags open before it (updated)."""
    closing, name = found.group(1), found.group(2).lower()
    if name == "br":
        return "<br>"
    if name == "p":
        return "" if not closing else "<br>"  # no paragraph inside a paragraph
    if not closing:
        opened.append(name)
        return f"<{name}>"
    if name not in opened:
        return ""  # nothing to close
    shut = []
    while opened:
        last = opened.pop()
        shut.append(f"</{last}>")
        if last == name:
            break
    return "".join(shut)


def _text_like(token: Token, content: str) -> Token:
    piece = Token("text", "", 0)
    piece.content = content
    piece.level = token.level
    return piece


def _html(markup: str) -> Token:
    token = Token("html_inline", "", 0)
    token.content = markup
    return token


def _render_footnote_caption(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    """A footnote's number as a reader cites it, ``[3]``, also when the body cites it
    again (the plugin wrote ``[3:1]``: viewer QA)."""
    return f"[{int(tokens[idx].meta['id']) + 1}]"


def _render_image(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    token = tokens[idx]
    alt = escapeHtml("".join(child.content for child in token.children or ()))
    src = token.attrGet("src")
    if token.meta.get("inline") and isinstance(src, str):
        return f'<img src="{escapeHtml(src)}" alt="{alt}" loading="lazy">'
    if isinstance(src, str) and src:
        rel = ' rel="noopener noreferrer nofollow" class="external"' if token.meta["ext"] else ""
        return f'<a href="{escapeHtml(src)}"{rel}>[image: {alt or "untitled"}]</a>'
    return f'<span class="broken-link" title="unresolved image">[image: {alt}]</span>'


_MD = _parser()
_MD_WIKI = _parser(wikilinks=True)


def _link(token: Token, rewrite: Rewrite) -> str | None:
    """The ``href`` a link token keeps, or None to render it without one."""
    href = str(token.attrGet("href") or "")
    kind = url_kind(href)
    if kind == "external":
        token.attrSet("rel", "noopener noreferrer nofollow")
        token.attrSet("class", "external")
        return href
    if kind == "fragment":
        return "#" + slug(fragment_key(href[1:])) if href.strip("#") else "#"
    if kind == "relative":
        target = rewrite(href, False)
        if target is not None and not target.url:
            token.meta["why"] = target.why  # somewhere okfx does not go: said so
            return None
        return None if target is None else target.url
    return None


def _image(token: Token, rewrite: Rewrite) -> None:
    src = str(token.attrGet("src") or "")
    kind = url_kind(src)
    token.meta["ext"] = kind == "external"
    if kind == "external":
        return  # shown as a link: the viewer loads nothing from elsewhere
    target = rewrite(src, True) if kind == "relative" else None
    token.attrSet("src", "" if target is None else target.url)
    token.meta["inline"] = target is not None and target.image


def _walk_inline(
    children: list[Token], rewrite: Rewrite, wikilink: WikiRewrite | None = None
) -> None:
    opened: list[Token] = []
    for token in children:
        if token.type == "link_open":
            why = ""
            if "wikilink" in token.meta:
                where = None if wikilink is None else wikilink(*token.meta["wikilink"])
                href = None if where is None else where.url or None
                why = "" if where is None else where.why
            else:
                href = _link(token, rewrite)
                why = token.meta.get("why", "")
            if href is None and why and "wikilink" not in token.meta:
                token.tag = "span"
                token.attrs = {"class": "leaves-bundle", "title": why}
            elif href is None:
                token.tag = "span"
                token.attrs = {"class": "broken-link", "title": why or "unresolved link"}
            else:
                token.attrSet("href", href)
            opened.append(token)
        elif token.type == "link_close" and opened:
            token.tag = opened.pop().tag
        elif token.type == "image":
            _image(token, rewrite)


def render(
    text: str, rewrite: Rewrite, *, demote: int = 1, wikilink: WikiRewrite | None = None
) -> Rendered:
    """``text`` (markdown from a bundle) as inert HTML, with its outline. Headings go
    ``demote`` levels down (to h6 at most): the page's own title is its one ``h1``.
    ``wikilink``: resolve ``[[wikilinks]]`` with it (None: they stay text). HTML comments
    outside code are left out, as a markdown page shows them: not as text."""
    text = without_comments(text)
    cut = 0
    if len(text) > MAX_RENDER_CHARS:
        end = text.rfind("\n", 0, MAX_RENDER_CHARS)
        end = end if end > MAX_RENDER_CHARS // 2 else MAX_RENDER_CHARS
        cut, text = len(text) - end, text[:end]
    env: dict[str, Any] = {}
    md = _MD if wikilink is None else _MD_WIKI
    tokens = md.parse(text, env)
    outline: list[Heading] = []
    taken: set[str] = set()
    counts: dict[str, int] = {}  # the last number given to each base
    for at, token in enumerate(tokens):
        if token.type == "inline" and token.children:
            _walk_inline(token.children, rewrite, wikilink)
        elif token.type in ("th_open", "td_open"):
            align = _ALIGNS.get(str(token.attrGet("style") or "").replace(" ", ""))
            token.attrs.pop("style", None)
            if align:
                token.attrSet("class", align)
        elif token.type == "heading_close":
            token.tag = f"h{min(int(token.tag[1]) + demote, 6)}"
        elif token.type == "heading_open" and at + 1 < len(tokens):
            title = "".join(
                child.content
                for child in tokens[at + 1].children or ()
                if child.type in ("text", "code_inline")
            )
            anchor = base = slug(title)
            while anchor in taken:
                # the next number of this base, not counted up from 1 each time: 8,000
                # equal headings took 24 s to render (security QA)
                counts[base] = counts.get(base, 0) + 1
                anchor = f"{base}-{counts[base]}"
            taken.add(anchor)
            token.attrSet("id", anchor)
            outline.append(Heading(int(token.tag[1]), title, anchor))
            token.tag = f"h{min(int(token.tag[1]) + demote, 6)}"
    html = md.renderer.render(tokens, md.options, env)
    return Rendered(html, tuple(outline), cut)


# A description's inline marks: a code span, strong emphasis, a link (its text kept).
_INLINE = re.compile(
    r"`([^`\n]{1,200})`|\*\*([^*\n]{1,200})\*\*|\[([^\[\]\n]{1,200})\]\([^()\s]{0,500}\)"
)


def as_written(value: Any) -> str:
    """A frontmatter value as an author writes YAML: a string bare, lists and mappings as
    block YAML (viewer QA: they read as JSON, quotes and brackets)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, list | dict):
        return frontmatter_yaml(value).rstrip("\n")  # as an MCP resource writes it
    return str(value)


def inline(text: str) -> Markup:
    """A one-line field (a description) that producers write with markdown's inline marks
    (`` `Float` ``, ``[IEEE 754](https://...)``) as a reader sees it: code spans as code,
    ``**strong**`` as strong, a link as its text (the field may sit inside a link, a row
    of a listing). Everything else is escaped text."""
    out: list[str] = []
    at = 0
    for match in _INLINE.finditer(text):
        out.append(str(escape(text[at : match.start()])))
        code, strong, label = match.groups()
        if code is not None:
            out.append(f"<code>{escape(code)}</code>")
        elif strong is not None:
            out.append(f"<strong>{escape(strong)}</strong>")
        else:
            out.append(str(escape(label)))
        at = match.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))
