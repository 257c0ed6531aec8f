"""The anchors a link's ``#fragment`` can name in a markdown document, as GitHub makes them.

Authors write ``[x](other.md#setup)`` for GitHub, so a heading's id is GitHub's: the
heading's text lower-cased, every character dropped but letters, marks, numbers,
connector punctuation (``_``), ``-`` and spaces, each space turned into ``-``; a repeated
id takes ``-1``, ``-2``... (github-slugger, markdownlint MD051). GitHub matches a
fragment in any letter case and with percent escapes decoded, and prefixes the ids it
makes with ``user-content-``, which a link may spell out. Explicit ``id=``/``name=``
attributes (``<a name="setup"></a>``) and footnotes (``fn-label``, ``fnref-label``) are
anchors too. Headings are read outside code blocks and HTML comments; ATX headings and
setext ones. Pure functions, no regex that backtracks.
"""

from __future__ import annotations

import difflib
import html
import re
import unicodedata
from urllib.parse import unquote

from okfx.bundle.links import footnote_definitions, lines_outside_code

__all__ = [
    "anchors_of",
    "closest_anchor",
    "fragment_key",
    "github_slug",
    "heading_anchors",
    "heading_ids",
    "other_anchors",
]

# An ATX heading (group 1: its text) or a setext underline (group 2), one pass for both.
_HEADING = re.compile(r"^ {0,3}(?:#{1,6}[ \t]+(.*)|(=+|-+)[ \t]*)$", re.MULTILINE)
# A link or image in heading text: ``[text](url)``, ``[text][ref]``; only its text counts
# (an image's alt text is no part of GitHub's heading text).
_INLINE_LINK = re.compile(
    r"(!?)\[([^\[\]\n]*)\]"
    r"(?:\((?:[^()\n\"']*+(?:\"[^\"\n]*+\"|'[^'\n]*+')[ \t]*+|[^()\n]*+)\)|\[[^\[\]\n]*\])?"
)
_TAG = re.compile(r"<[^<>\n]*>")
# Runs of underscores that open or close emphasis (``_word_``, ``__word__``), not those
# inside a word (``snake_case``). Each branch starts only at a run's first underscore and
# takes the run whole, so a long run inside a word costs one pass.
_EMPHASIS = re.compile(r"(?<!\w)_++|(?<!_)_++(?!\w)")
_SHORTCODE = re.compile(r":[a-z0-9_+\-]{1,40}:")
_ATTRIBUTE = re.compile(r"\b(?:id|name)[ \t]*=[ \t]*[\"']?([^\"'\s<>]{1,200})", re.IGNORECASE)
_KEEP = frozenset({"L", "M", "N"})
# ASCII characters a heading id drops: all but letters, digits, "-", "_" and the space.
_ASCII_DROP = {c: None for c in range(128) if not (chr(c).isalnum() or chr(c) in "-_ ")}
_PREFIX = "user-content-"


def github_slug(text: str) -> str:
    """GitHub's id for a heading whose rendered text is ``text`` (without the ``-N`` of a
    repeated one): lower case; letters, marks, numbers, ``_``, ``-`` kept, spaces to
    ``-``, everything else dropped. ``"Setup & Run"`` -> ``"setup--run"``."""
    if text.isascii():
        return text.lower().translate(_ASCII_DROP).replace(" ", "-")
    out: list[str] = []
    for ch in text.lower():
        if ch == " ":
            out.append("-")
        elif ch == "-" or ch == "_" or ch.isalnum():
            out.append(ch)
        elif ch.isascii():
            continue  # ASCII punctuation and control characters
        else:
            category = unicodedata.category(ch)
            if category[0] in _KEEP or category == "Pc":
                out.append(ch)
    return "".join(out)


def _plain(heading: str) -> str:
    """Heading markdown as the text GitHub slugs: a closing ``#`` run, links' URLs, HTML
    tags and entities gone (punctuation, ``*`` and backticks are dropped by the slug)."""
    text = heading.strip()
    stripped = text.rstrip("#")
    if not stripped or stripped[-1] in " \t":  # "## Title ##": the closing run goes
        text = stripped.rstrip()
    if "[" in text:
        text = _INLINE_LINK.sub(lambda m: "" if m.group(1) else m.group(2), text)
    if "<" in text:
        text = _TAG.sub("", text)
    if "&" in text:
        text = html.unescape(text)
    return text


def heading_texts(body: str) -> list[str]:
    """The plain text of every ATX and setext heading of ``body`` outside code blocks and
    HTML comments, in order."""
    found: list[str] = []
    for m in lines_outside_code(body, _HEADING):
        if m.group(2) is None:
            found.append(_plain(m.group(1)))
            continue
        # A setext underline: the paragraph line above it is the heading (a blank line, a
        # list item, a quote or a table row above makes it a thematic break or nothing).
        above_end = m.start() - 1
        if above_end <= 0:
            continue
        above = body[body.rfind("\n", 0, above_end) + 1 : above_end].strip()
        if above and above[0] not in "#>|-*+" and not (above[0].isdigit() and ". " in above):
            found.append(_plain(above))
    return found


def _numbered_list(slugs: list[str]) -> list[str]:
    """The id of each heading slugged ``slugs``, in order: a repeated one takes ``-1``,
    ``-2``..."""
    taken: set[str] = set()
    counts: dict[str, int] = {}
    out: list[str] = []
    for base in slugs:
        anchor = base
        while anchor in taken:
            counts[base] = counts.get(base, 0) + 1
            anchor = f"{base}-{counts[base]}"
        taken.add(anchor)
        out.append(anchor)
    return out


def _numbered(slugs: list[str]) -> set[str]:
    return set(_numbered_list(slugs))


def heading_ids(headings: list[str]) -> list[str]:
    """GitHub's id of each ATX heading text in ``headings`` (as written after the ``#``
    run, in body order), repeated ones numbered: ``["`LOG`", "`LOG`"]`` ->
    ``["log", "log-1"]``."""
    return _numbered_list([github_slug(_plain(h)) for h in headings])


def heading_anchors(body: str) -> frozenset[str]:
    """The ids of the headings of ``body`` (lower case, as :func:`fragment_key` gives a
    fragment). A heading is slugged as GitHub renders it and, to spare false alarms where
    okfx's reading of inline markup is rougher than GitHub's, also with ``_`` emphasis and
    ``:emoji:`` shortcodes left as written; ``## Title {#id}`` adds ``id``."""
    texts = heading_texts(body)
    ids: set[str] = set()
    for text in texts:
        # "## Title {#id}": an explicit id (Pandoc, kramdown, Docusaurus), and the title's
        # slug as those tools give it; GitHub shows the braces, slugged below with the rest.
        start = text.rfind("{#") if text.endswith("}") else -1
        if start >= 0 and " " not in text[start:]:
            ids.update((text[start + 2 : -1].lower(), github_slug(text[:start].strip())))
    slugs = [github_slug(t) for t in texts]
    anchors = _numbered(slugs)
    if any("_" in t or ":" in t for t in texts):
        anchors |= _numbered([github_slug(_EMPHASIS.sub("", _SHORTCODE.sub("", t))) for t in texts])
    return frozenset(anchors | ids)


def other_anchors(body: str) -> frozenset[str]:
    """Anchors of ``body`` that are no heading: ``id=``/``name=`` attribute values
    (``<a name="setup"></a>``) and footnotes (``fn-label``, ``fnref-label``), lower case."""
    anchors: set[str] = set()
    if "=" in body:
        anchors.update(m.group(1).lower() for m in _ATTRIBUTE.finditer(body))
    for label in footnote_definitions(body):
        anchors.update((f"fn-{label.lower()}", f"fnref-{label.lower()}"))
    return frozenset(anchors)


def anchors_of(body: str) -> frozenset[str]:
    """Every fragment (lower case, as :func:`fragment_key` gives it) that names a place
    in ``body``: :func:`heading_anchors` and :func:`other_anchors`."""
    return heading_anchors(body) | other_anchors(body)


def fragment_key(fragment: str) -> str:
    """A fragment as written in a link, in the form :func:`anchors_of` lists: percent
    escapes decoded, lower case (GitHub matches any case), ``user-content-`` dropped."""
    key = unquote(fragment).strip().lower()
    return key[len(_PREFIX) :] if key.startswith(_PREFIX) else key


def closest_anchor(key: str, anchors: frozenset[str]) -> str | None:
    """The anchor of ``anchors`` most like ``key``, when one is close (a typo, a word
    more or less, a renamed heading's old id), or else the one anchor that is ``key`` and
    more words (``second-me`` for the heading "Second-Me (mindverse)"); else None."""
    if not anchors:
        return None
    ordered = sorted(anchors)
    typo = difflib.get_close_matches(key, ordered, n=1, cutoff=0.85)
    if typo:
        return typo[0]
    # More of the key's words, before characters alike (validate QA: '#multi-storage-
    # support' was offered '#multi_storagestorages', the id of `multi_storage.storages`,
    # over '#multi-storage-configurations', the section meant).
    words = _words(key)
    shared = {a: len(words & _words(a)) for a in ordered}
    most = max(shared.values(), default=0)
    if most >= max(2, (len(words) + 1) // 2):
        best = [a for a in ordered if shared[a] == most]
        return max(best, key=lambda a: difflib.SequenceMatcher(None, key, a).ratio())
    found = difflib.get_close_matches(key, ordered, n=1, cutoff=0.7)
    if found:
        return found[0]
    longer = [a for a in anchors if a.startswith(key + "-")] if key else []
    return longer[0] if len(longer) == 1 else None


def _words(anchor: str) -> set[str]:
    """The words of an anchor id, split at its hyphens and underscores."""
    return {word for word in anchor.replace("_", "-").split("-") if word}
