"""Turn one file's text into a Concept, IndexFile or LogFile, reporting problems.

Used by :class:`okfx.bundle.bundle.Bundle` after the walk, when the set of files is known, so
links can be resolved and checked for existence as they are found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher
from functools import lru_cache, partial
from typing import Any
from urllib.parse import unquote

from okfx.bundle.budget import LoadBudget
from okfx.bundle.conventions import check_concept, with_line
from okfx.bundle.fields import kind_of, normalize, source_places
from okfx.bundle.frontmatter import (
    FrontmatterError,
    Parsed,
    duplicate_places,
    load_yaml,
    parse,
    split,
)
from okfx.bundle.keylines import KeyLines, field_lines, item_lines, key_line
from okfx.bundle.links import Resolver, footnote_definitions, footnote_offsets, scan_markdown
from okfx.bundle.logdates import likely_dates
from okfx.bundle.paths import forbidden_char, hidden_said, parent_dir
from okfx.bundle.reserved import (
    heading_rest,
    leading_date,
    parse_index,
    parse_log,
    table_links,
    unsectioned,
)
from okfx.bundle.scope import written_version
from okfx.bundle.wikilinks import WikiIndex, WikiLink, scan_wikilinks, wikilink_place
from okfx.bundle.written import typed_text_paths, with_written, written_scalars
from okfx.bundle.yamlerrors import colon_fix
from okfx.errors import UnsafePath
from okfx.limits import Limits
from okfx.model import Concept, IdRef, IndexFile, Link, LogFile, Problem
from okfx.trust import trust_tier

__all__ = ["DocumentParser", "broken_message"]

Warn = Callable[[str, str, str], None]

_WS = re.compile(r"\s")
_NOT_ID = re.compile(r"[\s/\\]")
# Builds a Link from a 7-tuple without the Python-level NamedTuple constructor (the
# load makes one per edge).
_new_link = partial(tuple.__new__, Link)


def _derived_title(path: str) -> str:
    stem = path.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.endswith(".md") else stem
    return stem.replace("_", " ").replace("-", " ").strip() or stem


def broken_hint(target: str, exists: Callable[[str], bool]) -> str:
    """The file a broken link to ``target`` most likely meant: ``x.md`` for a folder
    link (``x/``, read as ``x/index.md``), or the folder's ``index.md`` for ``x.md``."""
    if target.endswith("/index.md"):
        other = target.removesuffix("/index.md") + ".md"
    elif target.endswith(".md"):
        other = target.removesuffix(".md") + "/index.md"
    else:
        return ""
    return other if other != "/.md" and exists(other) else ""


def broken_message(field: str, target: str, line: int, href: str = "", hint: str = "") -> str:
    """The ``broken_link`` message of a link whose target does not exist: the link as
    written (``href``, when it differs), where it led, and what it likely meant. A link to
    a folder (``x/``, read as its ``index.md``) names the folder, which is not there (a
    folder without index.md is a target too)."""
    # The line comes last: paths may hold "(line 9)", and the last one is read as the line.
    shown = href.strip()[:200]
    hidden = hidden_said(target)
    if hidden is not None:
        # new-producers QA: a page named .github.md (a GitHub org's own repository) was
        # said not to exist, and the author looked for a typo
        written = shown or target
        text = f"{field} link {written!r} leads to {target}, which okfx does not read: {hidden}"
        return with_line(text, line)
    if target.endswith("/index.md") and shown.split("#")[0].endswith("/"):
        place = target.removesuffix("/index.md") + "/"
        text = f"{field} link {shown!r} leads to the folder {place}, which does not exist"
    elif shown and shown != target:
        text = f"{field} link {shown!r} leads to {target}, which does not exist"
    else:
        text = f"{field} link to {target} does not exist"
    return with_line(text + (f"; did you mean {hint}?" if hint else ""), line)


def skipped_message(field: str, target: str, line: int, href: str, held: str, why: str) -> str:
    """The ``broken_link`` message of a link to a path the walk left out (``held``: the
    path itself or a folder above it), with why (:func:`skipped_paths`)."""
    shown = href.strip()[:200] or target
    text = f"{field} link {shown!r} leads to {target}, which okfx does not read ({held}: {why})"
    return with_line(text, line)


#: Codes of the walk's warnings about one path it left out, which a link to it names.
_SKIPPED_CODES = frozenset({"unsafe_path", "symlink_loop", "not_regular_file", "too_deep"})


def skipped_paths(walk_warnings: Iterable[Problem]) -> dict[str, str]:
    """The paths a walk left out (a symlink out of the bundle, a FIFO...), each with why
    as the walk said it, less its "skipped"."""
    return {
        p.path: p.message.removesuffix("; skipped").removesuffix("; never opened")
        for p in walk_warnings
        if p.code in _SKIPPED_CODES
    }


#: The months' names, in English whatever the machine's locale (the same output everywhere).
_MONTHS = (
    "January February March April May June July August September October November December"
).split()
#: A heading in the form of a date, whether or not it is a day of the calendar.
_DATE_SHAPE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")

#: The keys a bundle-root ``index.md`` may carry: ``okf_version`` (spec §12) and okfx's
#: ``exclude`` extension (docs/okf.md).
ROOT_INDEX_KEYS = frozenset({"okf_version", "exclude"})


def _reserved_message(path: str, allowed: frozenset[str], extra: list[str]) -> str:
    """Why a reserved file's frontmatter is ignored, for the file it is in."""
    ignored = f"keys {extra} ignored" if extra else "the empty block is ignored"
    # validate QA: the remedy was only in the text report's group header, not in the
    # JSON or a GitHub annotation, which carry this message alone; and no line.
    if path.endswith("/log.md"):
        return (
            f"log.md: a frontmatter block is no part of the log format (spec §9); {ignored}: "
            "delete the block (line 1)"
        )
    if allowed:
        return (
            "the bundle-root index.md may carry only okf_version (spec §8, §12) and okfx's "
            f"exclude (docs/okf.md); {ignored}: delete {'them' if extra else 'it'} (line 1)"
        )
    return (
        "an index.md that is not the bundle root takes no frontmatter (spec §8; okf_version "
        f"there would make its folder a bundle of its own); {ignored}: delete the block (a "
        "folder's description belongs on its entry in the parent index.md) (line 1)"
    )


def concept_type(data: dict[Any, Any]) -> str | None:
    """The non-empty ``type`` a frontmatter mapping gives, or None."""
    value = data.get("type")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _reserved_concept(path: str, type_: str, dated: int = 0) -> str:
    """Why a concept's page written as ``log.md`` is read as no concept; ``dated``: how
    many of its lines start with a date (a change log kept in a table or a list)."""
    if dated:  # validate QA: a change log in a table was told to be renamed into a page
        return (
            f"log.md carries a concept's frontmatter (type: {type_[:80]!r}) and lists its "
            f"changes in {dated} dated lines (a table or a list) under no YYYY-MM-DD "
            "heading: spec §9 writes a log as '## YYYY-MM-DD' headings with '* ' entries "
            "under them, and no frontmatter: rewrite it so (if it is a page and not the "
            "bundle's log, rename the file, for example log-page.md) (line 1)"
        )
    return (
        f"log.md carries a concept's frontmatter (type: {type_[:80]!r}) and no YYYY-MM-DD "
        "date heading: a page, not an update log; but spec §3.1 reserves the name log.md for "
        "the update log (§9) and forbids it for concepts, so okfx reads it as the log: it is "
        "in no index row, search or grep. Rename the file (for example log-page.md) to make "
        "it a concept (line 1)"
    )


#: Producer keys (not the spec's) that name related pages, compared case-folded without
#: ``_`` and ``-`` (``see_also``, ``seeAlso``, ``superseded-by``): a value of one of them
#: that is a path to a markdown file is an edge (:func:`producer_refs`).
RELATION_KEYS = frozenset(
    {
        "related", "seealso", "prerequisites", "requires", "dependson", "dependencies",
        "supersedes", "supersededby", "replaces", "replacedby", "parent", "children",
        "next", "previous", "prev", "up", "links",
    }
)  # fmt: skip


@lru_cache(maxsize=1024)  # a bundle's concepts share a few dozen keys
def _is_relation(key: str) -> bool:
    return key.casefold().replace("_", "").replace("-", "") in RELATION_KEYS


def producer_refs(data: dict[Any, Any]) -> list[tuple[str, str]]:
    """``(key, path)`` of each value of a :data:`RELATION_KEYS` key that is a path to a
    markdown file: a string, or a string of a list, with no blank, ending in ``.md``
    (before any ``#fragment``), such as ``related: [../a.md]`` or ``superseded_by:
    /orders.md``. Ids and slugs are no paths, and are not read."""
    refs: list[tuple[str, str]] = []
    for key, value in data.items():
        if not (isinstance(key, str) and _is_relation(key)):
            continue
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str):
                href = item.strip()
                if href.partition("#")[0].endswith(".md") and not _WS.search(href):
                    refs.append((key, href))
    return refs


#: Keys whose values the spec or okfx reads in their own way; :func:`bare_refs` skips them.
_OWN_KEYS = frozenset(
    {
        "type", "title", "description", "tags", "resource", "sources", "generated",
        "verified", "status", "stale_after", "usage_window", "parameters", "computation",
        "executor", "attester", "runtime", "citations", "id", "aliases", "okf_version",
    }
)  # fmt: skip


def bare_refs(data: dict[Any, Any]) -> list[tuple[str, str]]:
    """``(key, value)`` of each top-level value, or string of a list, that may name a
    concept by its path without ``.md``, *beyond the spec*: no blank, a ``/`` inside, no
    ``.`` in its last segment (``data_source: datasources/prometheus-prod``, as
    slo.okf's vocabulary writes its typed relations). The parser draws an edge only for
    one that names an existing concept once ``.md`` is added; any other value is left
    alone, for such a value may be anything (``owner: team/payments``)."""
    refs: list[tuple[str, str]] = []
    for key, value in data.items():
        if not isinstance(key, str) or key in _OWN_KEYS:
            continue
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str) and "/" in item and len(item) <= 300:
                text = item.strip()
                last = text.rstrip("/").rpartition("/")[2]
                if last and "." not in last and not _WS.search(text) and "#" not in text:
                    refs.append((key, text))
    return refs


#: Longest producer ``id`` (and id named by a relation key) read; a longer one is text.
MAX_ID_CHARS = 200


def _id_text(value: Any) -> str | None:
    """``value`` as an id: a string with no blank, ``/`` or ``\\`` and at most
    :data:`MAX_ID_CHARS` characters, or an integer (``id: 42``); else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > MAX_ID_CHARS or _NOT_ID.search(text):
        return None
    return text


def declared_id(data: dict[Any, Any]) -> str | None:
    """The producer's own ``id`` key as an id (:func:`_id_text`), or None."""
    return _id_text(data.get("id"))


def producer_ids(data: dict[Any, Any]) -> list[tuple[str, str]]:
    """``(key, id)`` of each value of a :data:`RELATION_KEYS` key that reads as an id
    rather than a path (``related: [flutter.widget_identity]``, ``related: [k8s-pod]``):
    not ending in ``.md``, with no blank or ``/``. The bundle resolves them
    against its concepts' ``id`` keys (:mod:`okfx.bundle.idlinks`)."""
    ids: list[tuple[str, str]] = []
    for key, value in data.items():
        if not (isinstance(key, str) and _is_relation(key)):
            continue
        for item in value if isinstance(value, list) else (value,):
            text = _id_text(item)
            if text is not None and not text.partition("#")[0].endswith(".md"):
                ids.append((key, text))
    return ids


def _looks_like_path(value: str) -> bool | None:
    """Whether a ``sources[].resource`` is a path, for it may be a scope descriptor (spec
    §5.1): ``True`` for one written as §6.2 writes a path (``/``, ``./``, ``../``) or
    naming a file (``reports/q3.csv``, ``x.md``), ``False`` for one with spaces or no
    ``/``, and ``None`` for a bare ``dashboards/exec-revenue`` (spec Appendix A's
    dashboard): a path only if it leads to a file of the bundle."""
    if _WS.search(value):
        return False
    if value.startswith(("/", "./", "../")) or value.endswith(".md"):
        return True
    if "/" not in value:
        return False
    return True if "." in value.rstrip("/").rpartition("/")[2].lstrip(".") else None


class DocumentParser:
    """Parses the documents of one bundle against its file set."""

    def __init__(
        self, resolver: Resolver, limits: Limits, warn: Warn, wikis: WikiIndex | None = None
    ) -> None:
        self.resolver = resolver
        self.limits = limits
        self.warn = warn
        self.wikis = wikis  # [[wikilinks]] are followed when set (okfx.bundle.wikilinks)
        # One object per distinct string of the bundle: frontmatter keys and short values,
        # link targets' hrefs and texts, descriptions and what index files list (a link's
        # href and text repeat across a bundle: at 100k they were 84 MB, half repeats).
        self.strings: dict[str, str] = {}
        self.budget = LoadBudget(limits)

    # -- links ---------------------------------------------------------------------------
    def _edge(
        self,
        path: str,
        base: str,
        href: str,
        text: str,
        field: str,
        line: int,
        frontmatter: bool,
    ) -> Link | None:
        try:
            target = self.resolver.resolve(href, base, frontmatter=frontmatter)
        except UnsafePath:
            shown = href[:200]
            # as written, or once decoded (viewer QA: java%0Ascript: was said to leave
            # the bundle, a newline encoded)
            what = forbidden_char(href)
            if what is None or what == "a backslash":
                what = forbidden_char(unquote(href)) or what
            if what is not None and what != "a backslash":
                # A control character or a direction control: no path out of the bundle,
                # a name okfx does not open (author QA: "leaves the bundle" named the
                # wrong mistake). A backslash is a Windows path: below, what it should be.
                message = (
                    f"{field} link {shown!r} is no path okfx opens (contains {what}); not followed"
                )
                self.warn(path, "unsafe_link", with_line(message, line or None))
                return None
            fixed = self._slashed(href, base, frontmatter) if what == "a backslash" else None
            if fixed is not None:
                # spec-audit QA: \tables\x.md was said to leave the bundle; it does not. No
                # control character follows (the slashed path would not resolve): shown as is.
                kept = "the source is kept, its path" if field.startswith("sources[") else "it"
                message = (
                    f"{field}{'' if frontmatter else ' link'} '{shown}' is written with "
                    f"backslashes, which no bundle path holds (a Windows path?); {kept} is not "
                    f"followed: write '{fixed[:200]}'"
                )
                self.warn(path, "unsafe_link", with_line(message, line or None))
                return None
            if field.startswith("sources["):
                code, message = (
                    "source_outside_bundle",
                    f"{field} {shown!r} points outside the bundle; the source is kept, "
                    "its path is not followed",
                )
            elif frontmatter:
                code, message = (
                    "unsafe_link",
                    f"{field} {shown!r} points outside the bundle; the value is kept, "
                    "its path is not followed",
                )
            else:
                code, message = (
                    "unsafe_link",
                    f"{field} link {shown!r} leaves the bundle; not followed: link a page "
                    "outside it by full URL, or bring the page into the bundle",
                )
            self.warn(path, code, with_line(message, line or None))
            return None
        if target is None:
            return None
        if field == "body" and not frontmatter and self.resolver.took_root(href, base, target):
            # spec QA: a link GitHub reads as broken, followed with no word to the author
            message = (
                f"body link {href[:200]!r} names nothing beside the page; okfx follows it "
                f"from the bundle root to {target[:200]}, which other readers will not: "
                f"write {target[:200]}"
            )
            self.warn(path, "link_from_root", with_line(message, line or None))
        elif frontmatter and (other := self.resolver.beside(href, base, target)) is not None:
            # spec QA: with both files there, okfx chose the root's silently, and for a
            # computation that decides which SQL is the sanctioned one
            message = (
                f"{field} {href[:200]!r} is read from the bundle root as {target[:200]}, but "
                f"{other[:200]} beside the page has that path too: write /{target[1:201]} or "
                f"./{other[len(base.rstrip('/')) + 1 :][:200]} to say which"
            )
            self.warn(path, "ambiguous_path", with_line(message, line or None))
        return self._link(path, target, href, text, field, line)

    def _slashed(self, href: str, base: str, frontmatter: bool) -> str | None:
        """``href`` with its backslashes written as ``/`` when that is a path of the
        bundle (it climbs above no root), else None: the fix for a Windows path. A
        segment of dots only (``....``: CommonMark reads ``..\\..\\x.md`` as
        ``....\\x.md``, ``\\.`` being an escaped dot) was meant to climb."""
        fixed = href.replace("\\", "/")
        if any(len(part) > 2 and not part.strip(".") for part in fixed.split("/")):
            return None
        try:
            self.resolver.resolve(fixed, base, frontmatter=frontmatter)
        except UnsafePath:
            return None
        return fixed

    def _leads_to_a_file(self, href: str, path: str) -> bool:
        """Whether ``href``, read as a path from the document at ``path``, is a file."""
        try:
            target = self.resolver.resolve(href, parent_dir(path), frontmatter=True)
        except UnsafePath:
            return False
        return target is not None and self.resolver.known(target) is not None

    def _link(self, path: str, target: str, href: str, text: str, field: str, line: int) -> Link:
        """The edge to a resolved ``target``; reports it when the file does not exist."""
        share = self.strings.setdefault
        text = share(text, text)
        known = self.resolver.canonical.get(target)
        if known is None and not target.isascii():
            known = self.resolver.known(target)  # another Unicode normal form
        if known is None:
            held = self.resolver.skipped_at(target)
            if held is not None:
                message = skipped_message(field, target, line, href, *held)
            else:
                hint = broken_hint(target, self.resolver.files.__contains__)
                message = broken_message(field, target, line, href, hint)
            self.warn(path, "broken_link", message)
            # one string for both: a flood of broken links costs less
            href = target if href == target else share(href, href)
            return _new_link((path, target, href, text, field, line, False))
        href = known if href == known else share(href, href)  # an absolute link: one string
        return _new_link((path, known, href, text, field, line, True))

    def body_links(
        self, path: str, body: str, body_line: int, kind: str = "concept"
    ) -> tuple[list[Link], list[str], list[str]]:
        cap = self.limits.max_links_per_concept
        if kind == "index":
            # An index may list every file of its bundle, some in more than one section
            # (databricks: 6,064 entries, 5,690 files): twice the bundle's file count bounds
            # it, and the bundle-wide budget still bounds every link kept.
            cap = max(cap, 2 * len(self.resolver.files))
        raw, footnotes = scan_markdown(body, cap + 1)  # never more kept in memory
        wikis: list[WikiLink] = []
        if self.wikis is not None and "[[" in body:
            wikis = scan_wikilinks(body, cap + 1)
        if len(raw) + len(wikis) > cap or len(footnotes) > cap:
            self.warn(
                path,
                "too_many_links",
                f"this {kind} has more than {cap} links (external and wikilinks included) "
                "or footnotes; the rest are ignored (Limits.max_links_per_concept bounds "
                "every document; an index.md, twice the bundle's file count if larger)",
            )
            del raw[cap:], footnotes[cap:], wikis[cap - len(raw) :]
        left = self.budget.links_left()
        wanted = len(raw) + len(wikis)
        self.budget.keep_links(path, min(wanted, left), wanted > left)
        del raw[left:], wikis[max(left - len(raw), 0) :]
        links: list[Link] = []
        externals: list[str] = []
        newline_at = 0
        line = body_line
        base = parent_dir(path)
        is_external = self.resolver.is_external
        resolve_simple = self.resolver.resolve_simple
        for href, text, offset in raw:
            line += body.count("\n", newline_at, offset)
            newline_at = offset
            if ":" in href or href.startswith(("//", "<")):
                bare = href.strip().strip("<>")
                if is_external(bare):
                    externals.append(bare)
                    continue
            label = text if "\n" not in text and "  " not in text else " ".join(text.split())
            # Most hrefs have a simple shape: resolve those without the general path.
            target = resolve_simple(href, base, False)
            if target is not None:
                links.append(self._link(path, target, href, label, "body", line))
                continue
            link = self._edge(path, base, href, label, "body", line, False)
            if link is not None:
                links.append(link)
        if wikis:
            links.extend(self._wikilinks(path, body, body_line, wikis))
        return links, externals, footnotes

    def _wikilinks(
        self, path: str, body: str, body_line: int, scanned: list[WikiLink]
    ) -> list[Link]:
        assert self.wikis is not None
        out: list[Link] = []
        base = parent_dir(path)
        for target, label, offset in scanned:
            line = body_line + body.count("\n", 0, offset)
            found, candidates = self.wikis.resolve(target, base)
            href = f"[[{target}]]"
            if found is not None:
                out.append(_new_link((path, found, href, label, "wikilink", line, True)))
            elif candidates:
                shown = ", ".join(candidates[:5]) + (" ..." if len(candidates) > 5 else "")
                self.warn(
                    path,
                    "ambiguous_wikilink",
                    f"{href} (line {line}) matches {len(candidates)} files ({shown}); "
                    "not followed: write more of the path",
                )
                # An unresolved edge, so get_neighbors and the viewer list it (viewer QA:
                # red in the body, missing from "Unresolved"); its candidates are found
                # again when it is shown (Bundle.wikilink_candidates).
                missing = wikilink_place(target, base)
                if missing is not None:
                    out.append(_new_link((path, missing, href, label, "wikilink", line, False)))
            else:
                missing = wikilink_place(target, base)
                if missing is None:
                    # said as a body link that climbs is (security QA: it vanished)
                    message = f"wikilink {href[:200]} leaves the bundle; not followed"
                    self.warn(path, "unsafe_link", with_line(message, line))
                    continue
                self.warn(path, "broken_link", f"wikilink {href} (line {line}) matches no file")
                out.append(_new_link((path, missing, href, label, "wikilink", line, False)))
        return out

    def _field_links(
        self, path: str, values: dict[str, Any], text: str, body_line: int, written: Any
    ) -> list[Link]:
        """The links of the path-valued fields; ``written`` is ``sources`` as written."""
        refs: list[tuple[str, str]] = []
        texts: dict[str, str] = {}  # a link's text: a source's title, else its field
        resource = values["resource"]
        if resource and not self.resolver.is_external(resource):
            # §6.2: a path may be written relative (``tables/t.md``); spec QA: only one
            # written / ./ ../ was followed, where computation and sources are read bare
            is_path = _looks_like_path(resource)
            if is_path or (is_path is None and self._leads_to_a_file(resource, path)):
                refs.append(("resource", resource))
        places = source_places(written) if values["sources"] else []
        for i, source in enumerate(values["sources"]):
            if self.resolver.is_external(source.resource):
                continue
            is_path = _looks_like_path(source.resource)
            if is_path is None:
                is_path = self._leads_to_a_file(source.resource, path)
            if is_path:
                # Named by its place as written (the entries skipped before it counted),
                # as warnings and extensions name it, and its line is that entry's.
                field = f"sources[{places[i] if i < len(places) else i}].resource"
                refs.append((field, source.resource))
                if source.title:
                    texts[field] = source.title
        comp = values["computation"]
        if comp is not None:
            for field, value in (
                ("computation", comp.computation_path),
                ("executor.resource", comp.executor_resource),
                ("attester.resource", comp.attester_resource),
            ):
                if value and not self.resolver.is_external(value):
                    refs.append((field, value))
        links = []
        base = parent_dir(path)
        lines = field_lines(text, body_line, [field for field, _ in refs]) if refs else []
        for (field, href), line in zip(refs, lines, strict=True):
            link = self._edge(path, base, href, texts.get(field, field), field, line or 0, True)
            if link is not None:
                links.append(link)
        return links

    def _producer_links(
        self,
        path: str,
        data: dict[Any, Any],
        text: str,
        body_line: int,
        others: tuple[list[Link], ...],
    ) -> tuple[list[Link], tuple[IdRef, ...]]:
        """The edges a producer's relation keys draw (:func:`producer_refs`), *beyond the
        spec*, to targets no other link of the concept (``others``) reaches, each with its
        key as its field and its value as its text (a broken one reads as the path the
        producer wrote); one to a file the bundle lacks is a broken link, as a
        body link's is, and one that leaves the bundle is no edge, an ``unsafe_link``. And the
        ids those keys name (:func:`producer_ids`), which the bundle resolves once it
        knows every concept's ``id``."""
        refs = producer_refs(data)
        ids = [(k, v) for k, v in producer_ids(data) if not self.resolver.is_external(v)]
        bare = self._bare_targets(path, data)
        if not refs and not ids and not bare:
            return [], ()  # the common case: no set of the concept's targets is built
        refs += [(key, href) for key, href, _ in bare]
        keys = list(dict.fromkeys(key for key, _ in (*refs, *ids)))
        lines = dict(zip(keys, field_lines(text, body_line, keys), strict=True))
        share = self.strings.setdefault
        at: dict[str, list[int]] = {}  # each value's own line, as its key's list gives it
        for key in dict.fromkeys(key for key, _ in ids):
            if lines[key]:
                values = [value for named, value in ids if named == key]
                at[key] = item_lines(text, body_line, lines[key] or 0, values)
        id_refs = tuple(
            IdRef(key, share(value, value), at[key].pop(0) if key in at else 0)
            for key, value in ids
        )
        if not refs:
            return [], id_refs
        linked = {link.target for links in others for link in links}
        base = parent_dir(path)
        links = []
        found = {(key, href): target for key, href, target in bare}
        for key, href in refs:
            named = found.get((key, href))
            if named is not None:
                if named not in linked:
                    linked.add(named)
                    links.append(self._link(path, named, href, href, key, lines[key] or 0))
                continue
            try:
                target = self.resolver.resolve(href, base, frontmatter=True)
            except UnsafePath:
                # said as a body link's is (new-producers QA: dharma-okf's related page in
                # a sibling bundle was warned in the body and dropped without a word here)
                message = (
                    f"{key} {href[:200]!r} points outside the bundle; not followed: name a "
                    "page outside it by full URL, or bring the page into the bundle"
                )
                self.warn(path, "unsafe_link", with_line(message, lines[key] or None))
                continue
            if target is not None and target not in linked:
                linked.add(target)
                links.append(self._link(path, target, href, href, key, lines[key] or 0))
        return links, id_refs

    def _bare_targets(self, path: str, data: dict[Any, Any]) -> list[tuple[str, str, str]]:
        """``(key, value, target)`` of each :func:`bare_refs` value that names an existing
        concept other than ``path`` once ``.md`` is added, read as a frontmatter path is."""
        out: list[tuple[str, str, str]] = []
        for key, href in bare_refs(data):
            if self.resolver.is_external(href):
                continue
            try:
                target = self.resolver.resolve(href, parent_dir(path), frontmatter=True)
            except UnsafePath:
                continue  # a value, not a link: nothing to warn about
            if (
                target is not None
                and target != path
                and target.endswith(".md")
                and self.resolver.known(target) is not None
            ):
                out.append((key, href, target))
        return out

    # -- documents -----------------------------------------------------------------------
    def concept(self, path: str, text: str) -> Concept | None:
        """The concept in ``text``, or None (with a warning) when it cannot be one."""
        return self.concepts([(path, text)])[0]

    def concepts(self, documents: Sequence[tuple[str, str]]) -> list[Concept | None]:
        """:meth:`concept` for each ``(path, text)``, run one stage at a time over all of
        them: frontmatter, then fields, then links. That is about 20% faster than one
        document after the other, since each stage's code and data stay in the CPU caches.

        Warnings come out stage by stage, so those of different documents interleave;
        :class:`~okfx.bundle.bundle.Bundle` replays them in document order.
        """
        heads = [self._head(path, text) for path, text in documents]
        fields = [
            None if head is None else self._fields(path, text, *head)
            for (path, text), head in zip(documents, heads, strict=True)
        ]
        return [
            None if head is None or values is None else self._assemble(path, text, *head, values)
            for (path, text), head, values in zip(documents, heads, fields, strict=True)
        ]

    def _head(self, path: str, text: str) -> tuple[Parsed, str] | None:
        """Stage 1: the parsed frontmatter and the concept type, or None if it has none."""
        try:
            parsed = parse(text, self.limits, self.strings)
        except FrontmatterError as exc:
            self.warn(path, exc.code, exc.message)
            return None
        raw_type = parsed.data.get("type")
        if raw_type is None or (isinstance(raw_type, str) and not raw_type.strip()):
            message, key = _missing_type(parsed.data)
            line = key_line(text, parsed.body_line, key) if key else None
            self.warn(path, "missing_type", with_line(message, line))
            return None
        if isinstance(raw_type, bool):
            # ``type: Yes`` is text to YAML 1.2 and true to YAML 1.1: read as written, as
            # a title is (spec QA: the concept was dropped and the bundle failed); true
            # and false are booleans to both, and a number is one: still no type
            written = written_scalars(parsed.yaml_text, ["type"]).get("type")
            if written is not None and written.lower() not in ("true", "false"):
                message = (
                    f"type is written {written[:100]!r}, which YAML 1.1 reads as "
                    f"{str(raw_type).lower()}; okfx keeps it as written: quote it so every "
                    "consumer reads the same text"
                )
                line = key_line(text, parsed.body_line, "type")
                self.warn(path, "unquoted_scalar", with_line(message, line))
                raw_type = written  # the concept's type; its frontmatter keeps YAML's value
        if not isinstance(raw_type, str):
            fix = "quote it" if not isinstance(raw_type, list | dict) else "write one type"
            message = f"'type' is {kind_of(raw_type)}; it must be a non-empty string ({fix})"
            line = key_line(text, parsed.body_line, "type")
            self.warn(path, "invalid_type", with_line(message, line))
            return None
        if not self.budget.admit(path, len(parsed.body)):
            return None  # over a bundle-wide cap: counted, reported once by the Bundle
        places = duplicate_places(parsed.yaml_text) if parsed.duplicate_keys else {}
        for key in parsed.duplicate_keys:
            # The line of the key's second occurrence, and the mapping it is in when nested
            line_at, place = places.get(key, (None, ""))
            line = key_line(text, parsed.body_line, key, nth=2) if not place else None
            if line is None and line_at is not None:
                line = line_at + 2  # the frontmatter's first line is the file's second
            where = f" in {place}" if place else ""
            message = (
                f"frontmatter key {key!r} appears twice{where}, which YAML does not allow "
                "(keys are unique, YAML 1.2 §3.2.1.1): okfx keeps the last one, other "
                "consumers reject the file; keep one"
            )
            self.warn(path, "duplicate_key", with_line(message, line))
        lines = text.splitlines() if parsed.quoted_lines else []
        for line in parsed.quoted_lines:
            written = lines[line] if line < len(lines) else ""
            self.warn(path, "unquoted_colon", f"{colon_fix(written)} (line {line + 1})")
        return parsed, raw_type.strip()

    def _fields(self, path: str, text: str, parsed: Parsed, type_: str) -> dict[str, Any]:
        """Stage 2: the normalised optional fields, and the spec's rules on them."""
        data = parsed.data
        lines = KeyLines(text, parsed.body_line)  # reads nothing until a line is asked for
        typed = typed_text_paths(data)
        if typed:
            data = self._as_written(path, parsed.yaml_text, data, typed, lines)
        values, report = normalize(data, type_, parsed.body)
        for code, message, key in report:
            self.warn(path, code, with_line(message, lines.line(key)))
        found = check_concept(parsed.data, type_, values, lines, parsed.body, parsed.body_line)
        for code, message in found:
            self.warn(path, code, message)
        return values

    def _as_written(
        self,
        path: str,
        yaml_text: str,
        data: dict[str, Any],
        typed: dict[str, Any],
        lines: KeyLines,
    ) -> dict[str, Any]:
        """``data`` with its text fields that YAML typed as numbers or booleans read as
        written (:mod:`okfx.bundle.written`) in ``yaml_text``, the text ``data`` was loaded
        from (its ': ' values quoted when the load had to: as written it does not compose,
        and tags had read 3.10 as 3.1 beside such a value), each reported."""
        written = written_scalars(yaml_text, typed)
        for key, as_written in list(written.items()):
            value = typed[key]
            if not isinstance(value, bool) and str(value) == as_written:
                del written[key]  # 2024 is "2024" to every reader: nothing to say
                continue
            read = str(value).lower() if isinstance(value, bool) else f"the number {value!r}"
            message = (
                f"{key} is written {as_written[:100]!r}, which YAML reads as {read}; okfx "
                "keeps it as written: quote it so every consumer reads the same text"
            )
            self.warn(path, "unquoted_scalar", with_line(message, lines.line(key)))
        return with_written(data, written) if written else data

    def _assemble(
        self, path: str, text: str, parsed: Parsed, type_: str, values: dict[str, Any]
    ) -> Concept:
        """Stage 3: links and citations, and the Concept itself."""
        links, externals, footnotes = self.body_links(path, parsed.body, parsed.body_line)
        fields = self._field_links(path, values, text, parsed.body_line, parsed.data.get("sources"))
        related, id_refs = self._producer_links(
            path, parsed.data, text, parsed.body_line, (links, fields)
        )
        fields += related
        left = self.budget.links_left()
        self.budget.keep_links(path, min(len(fields), left), len(fields) > left)
        links.extend(fields[:left])
        if footnotes:
            source_ids = {s.id for s in values["sources"] if s.id}
            if any(label not in source_ids for label in footnotes):
                # A footnote defined in the body that names no source is an ordinary
                # GFM footnote, not a citation.
                defined = footnote_definitions(parsed.body)
                footnotes = [f for f in footnotes if f in source_ids or f not in defined]
            unknown = [label for label in footnotes if label not in source_ids]
            at = footnote_offsets(parsed.body, unknown) if unknown else {}
            for label in unknown:
                offset = at.get(label)
                line = (
                    None
                    if offset is None
                    else parsed.body_line + parsed.body.count("\n", 0, offset)
                )
                message = f"footnote [^{label}] matches no sources[].id and has no definition"
                self.warn(path, "unknown_footnote", with_line(message, line))
        identifier = path[1:-3] if path.endswith(".md") else path[1:]
        share = self.strings.setdefault  # an index file lists the same title and description
        title = values.pop("title") or _derived_title(path)
        values["description"] = share(values["description"], values["description"])
        return Concept(
            path=path,
            id=identifier,
            type=type_,
            title=share(title, title),
            links=tuple(links),
            external_links=tuple(externals),
            citations=tuple(footnotes),
            declared_id=declared_id(parsed.data),
            id_refs=id_refs,
            frontmatter=parsed.data,
            body=parsed.body,
            body_line=parsed.body_line,
            trust_tier=trust_tier(v.by for v in values["verified"]),
            **values,
        )

    def _reserved_split(
        self,
        path: str,
        text: str,
        allowed: frozenset[str],
        code: str,
        held: list[tuple[str, str]] | None = None,
    ) -> tuple[dict[str, Any], str, int]:
        """A reserved file's frontmatter (ignored but for ``allowed`` keys) and body; its
        warnings are given, or kept in ``held`` (code, message) for the caller to give."""

        def warn(code: str, message: str) -> None:
            if held is None:
                self.warn(path, code, message)
            else:
                held.append((code, message))

        try:
            yaml_text, body, body_line = split(text)
        except FrontmatterError as exc:
            warn(exc.code, exc.message + "; read as plain markdown")
            return {}, text, 1
        if yaml_text is None:
            return {}, body, body_line
        try:
            data, _ = load_yaml(yaml_text, self.limits, self.strings)
        except FrontmatterError as exc:
            warn(code, f"unparseable frontmatter ignored: {exc.message}")
            return {}, body, body_line
        data = data if isinstance(data, dict) else {}
        extra = sorted(str(k) for k in data if k not in allowed)
        if extra or not data:
            warn(code, _reserved_message(path, allowed, extra))
        return data, body, body_line

    def _resolve_quiet(self, base: str) -> Callable[[str], str | None]:
        known = self.resolver.known

        def resolve(href: str) -> str | None:
            try:
                target = self.resolver.resolve(href, base)
            except UnsafePath:
                return None
            return target if target is None else known(target) or target

        return resolve

    def index(self, path: str, text: str) -> IndexFile:
        allowed = ROOT_INDEX_KEYS if path == "/index.md" else frozenset()
        fm, body, body_line = self._reserved_split(path, text, allowed, "reserved_frontmatter")
        if fm.get("okf_version") is not None and not isinstance(fm["okf_version"], str):
            fm = {**fm, "okf_version": self._version(path, text, body_line, fm["okf_version"])}
        links, _, _ = self.body_links(path, body, body_line, "index")
        sections = parse_index(body, self._resolve_quiet(parent_dir(path)), self.strings)
        off = unsectioned(body, body_line)
        if off is not None:
            self.warn(path, "index_no_section", off)
        if not any(section.entries for section in sections):
            rows, first = table_links(body)
            if rows:
                message = (
                    f"this index.md lists its links in a table ({rows} "
                    f"{'row' if rows == 1 else 'rows'}) and has no "
                    "entry: spec §8 lists a folder's concepts as '* [Title](url) - "
                    "description' items under a heading, which other consumers read; write "
                    "the rows that way"
                )
                line = None if first is None else body_line + first
                self.warn(path, "index_table", with_line(message, line))
        return IndexFile(path, body, fm, sections, tuple(links))

    def _version(self, path: str, text: str, body_line: int, value: Any) -> str | None:
        """An ``okf_version`` YAML read as no string: the version as written when it is a
        number (``0.10`` is a float 0.1 to YAML), reported when the two differ; ``None``
        (reported) for a list or mapping."""
        line = key_line(text, body_line, "okf_version")
        written = written_version(text) if line else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if written and written != str(value):
                self.warn(
                    path,
                    "okf_version_number",
                    with_line(
                        f"okf_version {written} is the number {value} to YAML: other "
                        f'consumers read {value}; quote it (okf_version: "{written}")',
                        line,
                    ),
                )
            return written or str(value)
        self.warn(
            path,
            "invalid_field",
            with_line(
                f"okf_version is {kind_of(value)}, not a version: ignored; write it as "
                'okf_version: "0.2" (spec §12)',
                line,
            ),
        )
        return None

    def log(self, path: str, text: str) -> LogFile:
        held: list[tuple[str, str]] = []
        fm, body, body_line = self._reserved_split(path, text, frozenset(), "log_frontmatter", held)
        links, _, _ = self.body_links(path, body, body_line, "log")
        title, entries, bad, ungrouped, first, date_lines = parse_log(body)
        type_ = concept_type(fm)
        if type_ and not any(e.heading and e.date for e in entries):
            # A concept's page under the reserved name (no heading is a date, or it has
            # none: spec QA, a typed page of plain text was only log_frontmatter): one
            # error that says so, not one per heading that is no date.
            rows = sum(1 for row in body.splitlines() if leading_date(row.strip(" |*-\t")))
            self.warn(path, "reserved_concept", _reserved_concept(path, type_, rows))
            return LogFile(path, body, fm, title, entries, tuple(links))
        for code, message in held:
            self.warn(path, code, message)
        if ungrouped:
            are = "entry stands" if ungrouped == 1 else "entries stand"
            # the days their text starts with, so the fix fits the file (validate QA:
            # one heading over entries of two days would misdate half)
            days = sorted({e.date for e in entries if not e.heading and e.date is not None})
            if len(days) > 1:
                shown = ", ".join(d.isoformat() for d in days[:3]) + (", ..." if days[3:] else "")
                fix = (
                    f"they start with {len(days)} dates ({shown}): put each day's entries "
                    "under its own heading"
                )
            elif days:
                written = days[0].isoformat()
                fix = f"they start with {written}: add '## {written}' above them"
            line = None if first is None else body_line + first
            if not days:
                found = _date_paragraph(body, body_line, first)
                # the line to edit is the date to make a heading (validate QA: the report
                # pointed at the first entry, five lines below it)
                fix, line = found if found is not None else ("add one above them", line)
            message = (
                f"{ungrouped} log {are} before any date heading: spec §9 groups a log's "
                f"entries under '## YYYY-MM-DD' headings; {fix}"
            )
            self.warn(path, "log_ungrouped", with_line(message, line))
        for heading, at in bad:
            if not any(char.isdigit() for char in heading):
                # A heading with no date in any form (``## Notes``, ``## Provenance
                # discipline``) is a section, not a date heading written wrong: a warning,
                # as a log with no heading at all is one (validate QA: adding the heading
                # to such a log's prose failed a passing bundle).
                message = (
                    f"log heading {heading[:80]!r} holds no date, so its entries get none: "
                    "spec §9's log is a list of changes grouped under '## YYYY-MM-DD' "
                    "headings; head them with the day they were made, or move the section "
                    "out of the log (to a concept or a README)"
                )
                self.warn(path, "log_section", with_line(message, body_line + at))
                continue
            message = (
                f"log heading {heading[:80]!r} is not a YYYY-MM-DD date (spec §9 requires one)"
            )
            day = leading_date(heading)
            marked = heading.strip().strip("*_`~").strip()
            shape = _DATE_SHAPE.fullmatch(heading.strip())
            if day is None and marked != heading.strip() and leading_date(marked) is not None:
                # "## **2026-05-22**": the day is written, in bold (CI QA)
                message += (
                    f"; its entries get no date: write the heading without its marks, as "
                    f"'{marked[:10]}'"
                )
            elif shape is not None:
                # "## 2026-02-30": the form is right, the day is no day (CI QA)
                month, day_of = int(shape.group(2)), int(shape.group(3))
                why = (
                    f"{_MONTHS[month - 1]} {shape.group(1)} has no day {day_of}"
                    if 1 <= month <= 12
                    else f"there is no month {shape.group(2)}"
                )
                message += f"; {why}, so its entries get no date: write the day the change was made"
            elif day is not None:
                fix = "move the rest into an entry" if heading_rest(heading) else "no time"
                message += (
                    f"; its entries are dated {day}, the day it starts with: write the "
                    f"heading as '{day}' alone ({fix})"
                )
            elif likely := likely_dates(heading):
                either = " (the day and the month could be either)" if len(likely) > 1 else ""
                message += (
                    "; its entries get no date: write the heading as "
                    f"{' or '.join(repr(day) for day in likely)}{either}"
                )
            else:
                message += (
                    "; its entries get no date: head them with the day they were made, or "
                    "move text that is no change above the first date heading"
                )
            self.warn(path, "invalid_log_date", with_line(message, body_line + at))
        dated = [(e.date, at) for e, at in zip(entries, date_lines, strict=True) if e.date]
        later = next((i for i in range(1, len(dated)) if dated[i][0] > dated[i - 1][0]), None)
        if later is not None:
            message = (
                f"log entries are not newest first (spec §9): {dated[later][0]} comes after "
                f"{dated[later - 1][0]}"
            )
            self.warn(path, "log_order", with_line(message, body_line + dated[later][1]))
        return LogFile(path, body, fm, title, entries, tuple(links))


#: Keys some producers write for what OKF calls ``type`` (rag-okf writes ``kind``).
_TYPE_LOOKALIKES = ("kind", "concept_type", "category")


def _missing_type(data: dict[Any, Any]) -> tuple[str, str | None]:
    """Why a file is no concept, naming the key the producer seems to have meant (another
    name for a type, or ``type`` misspelt: ``typo``, ``tpye``), and the key whose line
    to point at: that one, or an empty ``type``."""
    message = "frontmatter has no non-empty 'type' (spec §4.1)"
    for key, value in data.items():
        name = str(key)
        if name != "type" and (
            name.lower() == "type" or name in _TYPE_LOOKALIKES or _misspelt_type(name)
        ):
            if isinstance(value, str) and value.strip():
                shown = value.strip()[:80]
                rename = "rename that key to 'type' to make it a concept"
                return f"{message}; it has {name}: {shown!r}: {rename}", name
    return message, "type" if "type" in data else None


def _misspelt_type(name: str) -> bool:
    """Whether ``name`` is ``type`` with one letter wrong, missing, added or swapped."""
    if not 3 <= len(name) <= 5 or name == "type":
        return False
    return SequenceMatcher(None, name.lower(), "type").ratio() >= 0.75


def _date_paragraph(body: str, body_line: int, first: int | None) -> tuple[str, int] | None:
    """The fix for entries under a date written as a paragraph above them (``2026-07-07 —
    bundle created``, validate QA) and that paragraph's file line, or ``None`` when no
    line above them starts with one."""
    above = body.split("\n")[: first or 0]
    for i in range(len(above) - 1, -1, -1):
        day = leading_date(above[i].strip())
        if day is not None:
            return (
                f"line {body_line + i} starts with {day.isoformat()}: make it the heading "
                f"'## {day.isoformat()}'",
                body_line + i,
            )
    return None
