"""``[[wikilinks]]`` (Obsidian, Quartz): an okfx extension, off unless asked for.

The spec links with markdown links only (§6). Some producers write ``[[name]]``,
``[[name|label]]``, ``[[folder/name]]`` or ``[[name#heading]]`` instead; with
``Bundle.load(..., wikilinks=True)`` (``okfx --wikilinks``) they become edges whose
``field`` is ``"wikilink"``. They resolve the way those tools do: a path from the linking
file's folder or from the bundle root when one exists, else the one file whose path ends
with the name (``.md`` implied), matched by file stem. When several files match, the link is
``ambiguous_wikilink`` and is not followed; when none does, it is a broken link. Embeds
(``![[...]]``), same-page links (``[[#heading]]``, ``[[^label]]``) and links in code are not
edges.
"""

from __future__ import annotations

import re

from okfx.bundle.links import matches_outside_code
from okfx.bundle.paths import join
from okfx.errors import UnsafePath

__all__ = [
    "WIKILINK",
    "WikiIndex",
    "WikiLink",
    "leaving_wikilinks",
    "scan_wikilinks",
    "wikilink_place",
]

#: ``[[target#anchor|label]]``: no brackets or line breaks inside, bounded; the groups
#: ``target``, ``anchor`` and ``label`` (the last two may be None).
WIKILINK = re.compile(
    r"\[\[(?P<target>[^\[\]\n|#]{1,400})(?:#(?P<anchor>[^\[\]\n|]{0,400}))?"
    r"(?:\|(?P<label>[^\[\]\n]{0,400}))?\]\]"
)

WikiLink = tuple[str, str, int]  # (target as written, label, offset in the body)


def wikilink_place(target: str, base: str) -> str | None:
    """Where the file a ``[[target]]`` names would be: a path-style target
    (``[[folder/name]]``, as Obsidian writes one it must tell apart) from the root, one
    written ``./`` or ``../`` or a bare name from the linking file's folder ``base``; None
    when that climbs above the root."""
    written = target.removesuffix(".md") + ".md"
    relative = "/" not in target or target.startswith(("./", "../"))
    try:
        return join(base if relative else "/", written)
    except UnsafePath:
        return None


def leaving_wikilinks(body: str, base: str, limit: int) -> list[tuple[str, str, int]]:
    """``(href as written, label, offset)`` of the wikilinks of a page in ``base`` that
    climb above the root (``[[../outside/x]]``), which a load warns as ``unsafe_link``
    and follows nowhere; at most ``limit``. Nothing is resolved against the files."""
    out = []
    for target, label, offset in scan_wikilinks(body, limit):
        if wikilink_place(target, base) is None:
            out.append((f"[[{target}]]", label, offset))
    return out


def scan_wikilinks(body: str, limit: int | None = None) -> list[WikiLink]:
    """``[[...]]`` links of ``body`` outside code, embeds left out, in order; at most
    ``limit`` of them (what a hostile body can cost in memory)."""
    if "[[" not in body:
        return []
    out: list[WikiLink] = []
    for m in matches_outside_code(body, WIKILINK):
        if m.start() and body[m.start() - 1] == "!":
            continue  # an embed (![[image.png]]), like a markdown image
        target = m.group("target").strip()
        if target.startswith("^"):
            # [[^label]]: a footnote citation in brackets, as an LLM producer writes one
            # (Obsidian reads it as a block of the same note), never a page (QA).
            continue
        if target:
            out.append((target, (m.group("label") or target).strip(), m.start()))
            if limit is not None and len(out) >= limit:
                break
    return out


def _key(path: str) -> str:
    """A path as wikilinks name it: case-folded, ``.md`` dropped."""
    folded = path.casefold()
    return folded[:-3] if folded.endswith(".md") else folded


class WikiIndex:
    """The files of one bundle by name, to resolve wikilinks against."""

    __slots__ = ("files", "_by_name")

    def __init__(self, files: set[str] | frozenset[str]) -> None:
        self.files = files
        self._by_name: dict[str, list[str]] = {}
        for path in sorted(files):
            self._by_name.setdefault(_key(path).rsplit("/", 1)[-1], []).append(path)

    def resolve(self, target: str, base_dir: str) -> tuple[str | None, list[str]]:
        """``(path, [])`` when ``target`` names one file, ``(None, candidates)`` when it
        names several, ``(None, [])`` when none."""
        wanted = target.strip().removesuffix(".md")
        for base in (base_dir, "/"):
            try:
                direct = join(base, wanted)
            except UnsafePath:
                continue
            for candidate in (direct + ".md", direct):
                if candidate in self.files:
                    return candidate, []
        key = _key(wanted.strip("/"))
        suffix = "/" + key
        found = [
            path
            for path in self._by_name.get(key.rsplit("/", 1)[-1], ())
            if ("/" + _key(path).lstrip("/")).endswith(suffix)
        ]
        if len(found) == 1:
            return found[0], []
        return None, found
