"""What the pages need of one loaded bundle, computed once per bundle and kept.

A bundle is immutable once loaded, so its counts (by type, status, trust tier, tag),
its folder tree, its stale deadlines, its most recently generated and verified concepts
and its link resolver are computed on first use and kept beside it (a reload gives a
new :class:`~okfx.bundle.bundle.Bundle`, hence fresh figures). Each is one pass over the
concepts, so a page never scans a 100k-concept bundle again.
"""

from __future__ import annotations

import heapq
import threading
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from okfx.attest.lint import computation_problems
from okfx.bundle.anchors import fragment_key
from okfx.bundle.bundle import Bundle
from okfx.bundle.links import Resolver
from okfx.bundle.paths import missing_folder, parent_dir
from okfx.bundle.problems import ProblemGroup, group
from okfx.bundle.validate import report_notes, reported, why_empty
from okfx.bundle.wikilinks import WikiIndex
from okfx.errors import UnsafePath
from okfx.model import Concept, IndexFile, LogFile, Problem
from okfx.web import urls
from okfx.web.markdown import Rewrite, Target, WikiRewrite, slug

__all__ = ["RASTER_TYPES", "BundleView", "view_of"]

#: Bundle files shown as images (by extension): raster formats, which cannot run script.
RASTER_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".bmp": "image/bmp",
    ".ico": "image/x-icon",
}
RECENT = 8


def raster_type(path: str) -> str | None:
    dot = path.rfind(".")
    return RASTER_TYPES.get(path[dot:].lower()) if dot > path.rfind("/") else None


#: Folders whose filter counts a view keeps (a bundle's browse pages, one folder at a time).
FOLDER_COUNTS = 32


def _counts(concepts: Iterable[Concept]) -> dict[str, Counter[str]]:
    """Concepts by ``type``, ``status``, ``tier`` and ``tag`` (a tag counted once per
    concept, under its first spelling; a type too, as the type filter reads any case:
    viewer QA, "Reference 1" beside "reference 7" listed 8)."""
    types: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    tiers: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    spelling: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for concept in concepts:
        types[kinds.setdefault(concept.type.casefold(), concept.type)] += 1
        statuses[concept.status] += 1
        tiers[concept.trust_tier] += 1
        for tag in {t.casefold(): t for t in concept.tags}.values():
            tags[spelling.setdefault(tag.casefold(), tag)] += 1
    return {"type": types, "status": statuses, "tier": tiers, "tag": tags}


def _ranked(counts: dict[str, Counter[str]]) -> dict[str, list[tuple[str, int]]]:
    """Each count, most common first (ties by name)."""
    return {
        kind: sorted(counter.items(), key=lambda item: (-item[1], item[0]))
        for kind, counter in counts.items()
    }


#: The tooltip of a link whose href leaves the bundle's root.
LEAVES_BUNDLE = "outside the bundle: okfx does not follow it (listed under Leaves the bundle)"


class BundleView:
    """Figures and look-ups of one bundle for the pages; each made on first use."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.name = bundle.name
        self._folder_ranked: dict[str, dict[str, list[tuple[str, int]]]] = {}
        self._folder_lock = threading.Lock()

    # -- counts ----------------------------------------------------------------------------
    @cached_property
    def counts(self) -> dict[str, Counter[str]]:
        """Concepts by ``type``, ``status``, ``tier`` and ``tag`` (a tag counted once per
        concept, under its first spelling)."""
        return _counts(self.bundle)

    @cached_property
    def ranked(self) -> dict[str, list[tuple[str, int]]]:
        """Each of :attr:`counts`, most common first (ties by name)."""
        return _ranked(self.counts)

    def ranked_in(self, folder: str) -> dict[str, list[tuple[str, int]]]:
        """:attr:`ranked` of the concepts under ``folder`` (``/components``), for the
        browse page's filters there: the bundle's counts offered "pattern (8)" under a
        folder that holds none (viewer QA). The last few folders' are kept."""
        if folder == "/":
            return self.ranked
        with self._folder_lock:
            found = self._folder_ranked.get(folder)
        if found is None:
            prefix = folder.rstrip("/") + "/"
            found = _ranked(_counts(c for c in self.bundle if c.path.startswith(prefix)))
            with self._folder_lock:
                self._folder_ranked[folder] = found
                while len(self._folder_ranked) > FOLDER_COUNTS:
                    del self._folder_ranked[next(iter(self._folder_ranked))]
        return found

    @cached_property
    def _reported(self) -> tuple[list[Problem], dict[str, int]]:
        return reported(self.bundle, computation_problems(self.bundle))

    @cached_property
    def problems(self) -> list[ProblemGroup]:
        """What ``okfx validate`` reports, grouped by code, errors first: the load's
        problems and the checks it adds (``broken_anchor``, ``no_concepts``)."""
        return group(*self._reported)

    @cached_property
    def empty(self) -> str:
        """Why the bundle holds no concept, in words (``""`` when it holds some): what
        its folder holds and what to load instead, by bundle paths only."""
        return "" if len(self.bundle) else why_empty(self.bundle, where=False)

    @cached_property
    def notes(self) -> tuple[str, ...]:
        """``okfx validate``'s notes (:func:`~okfx.bundle.validate.report_notes`), made
        when the Problems page is first asked for: they read every body once to count
        unchecked wikilinks (viewer QA: only the CLI said them)."""
        return report_notes(self.bundle, *self._reported)

    @cached_property
    def missing_folders(self) -> list[tuple[str, int]]:
        """The folders the bundle lacks that its broken links lead into, with how many
        links lead into each, the most first (viewer QA: 47 broken links into one
        missing folder were 47 rows, their one cause said nowhere on the page)."""
        into: dict[str, int] = {}
        dirs = self.bundle.directories
        for doc in (*self.bundle, *self.bundle.indexes.values(), *self.bundle.logs.values()):
            for link in doc.links:
                if not link.exists and self.bundle.skipped_at(link.target) is None:
                    folder = missing_folder(dirs, link.target)
                    if folder is not None:
                        into[folder] = into.get(folder, 0) + 1
        return sorted(into.items(), key=lambda item: (-item[1], item[0]))

    @cached_property
    def _deadlines(self) -> list[datetime]:
        return sorted(c.stale_after for c in self.bundle if c.stale_after is not None)

    def stale_count(self, now: datetime) -> int:
        when = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
        return bisect_right(self._deadlines, when)

    @cached_property
    def recent_generated(self) -> list[Concept]:
        dated = [c for c in self.bundle if c.generated is not None and c.generated.at is not None]
        return heapq.nlargest(RECENT, dated, key=lambda c: (c.generated.at, c.path))  # type: ignore[union-attr]

    @cached_property
    def recent_verified(self) -> list[Concept]:
        dated = [c for c in self.bundle if c.last_verified is not None]
        return heapq.nlargest(RECENT, dated, key=lambda c: (c.last_verified, c.path))

    # -- folders ---------------------------------------------------------------------------
    @cached_property
    def _tree(self) -> tuple[dict[str, list[str]], Counter[str], Counter[str]]:
        """Each folder's subfolders, and the concepts under each folder: all of them, and
        the deprecated ones (a listing hides those unless asked)."""
        children: dict[str, list[str]] = {}
        for folder in self.bundle.directories:
            if folder != "/":
                children.setdefault(parent_dir(folder), []).append(folder)
        for kids in children.values():
            kids.sort()
        under: Counter[str] = Counter()
        deprecated: Counter[str] = Counter()
        for concept in self.bundle:
            counter = (under, deprecated) if concept.status == "deprecated" else (under,)
            folder = concept.directory
            while True:
                for count in counter:
                    count[folder] += 1
                if folder == "/":
                    break
                folder = parent_dir(folder)
        return children, under, deprecated

    def subfolders(self, folder: str, include_deprecated: bool = True) -> list[tuple[str, int]]:
        """The folders directly in ``folder``, each with the concepts under it (the
        deprecated ones left out unless ``include_deprecated``, as its listing does)."""
        children, under, deprecated = self._tree
        if include_deprecated:
            return [(kid, under[kid]) for kid in children.get(folder, ())]
        return [(kid, under[kid] - deprecated[kid]) for kid in children.get(folder, ())]

    @cached_property
    def _others(self) -> dict[str, list[str]]:
        """By folder, its files that are not documents (attachments, skipped markdown),
        sorted: a listing shows concepts only, and a folder of images would look empty."""
        b = self.bundle
        documents = {c.path for c in b}
        documents.update(index.path for index in b.indexes.values())
        documents.update(log.path for log in b.logs.values())
        out: dict[str, list[str]] = {}
        for path in sorted(self.bundle.files):
            if path not in documents:
                out.setdefault(parent_dir(path), []).append(path)
        return out

    def other_files(self, folder: str) -> list[str]:
        """The files directly in ``folder`` that are not documents, by path."""
        return self._others.get(folder, [])

    def concepts_under(self, folder: str) -> int:
        return self._tree[1][folder]

    # -- links -----------------------------------------------------------------------------
    @cached_property
    def _file_links(self) -> dict[str, list[str]]:
        """The concepts linking to each attached (non-document) file."""
        out: dict[str, list[str]] = {}
        for link in self.bundle.links():
            if link.exists and not link.target.endswith(".md"):
                sources = out.setdefault(link.target, [])
                if not sources or sources[-1] != link.source:
                    sources.append(link.source)
        return out

    def linking_to_file(self, path: str) -> list[str]:
        return self._file_links.get(path, [])

    @cached_property
    def resolver(self) -> Resolver:
        return Resolver(set(self.bundle.files), set(self.bundle.directories))

    def url_of(self, path: str) -> str | None:
        """The viewer page of a canonical bundle path: a document's page, a folder's
        listing, an attached file's text page; None when the bundle has no such thing."""
        b = self.bundle
        if path in b.files:
            found = b.get(path)
            if isinstance(found, Concept | IndexFile | LogFile):
                return urls.concept(self.name, path)
            return urls.file(self.name, path)
        folder = path.removesuffix("/index.md").rstrip("/") or "/"
        if folder in b.directories:
            return urls.browse(self.name, dir=None if folder == "/" else folder)
        return None

    def rewrite(self, base_dir: str) -> Rewrite:
        """Map relative links in a document of ``base_dir`` to viewer URLs, resolved
        exactly as the loader resolves them (through the path guard)."""

        def to_viewer(href: str, image: bool) -> Target | None:
            path, _, fragment = href.partition("#")
            try:
                target = self.resolver.resolve(path, base_dir) if path else None
            except UnsafePath:
                # no broken link: a place outside the bundle, never followed (viewer QA:
                # it read "unresolved link" beside a panel saying Unresolved 0)
                return Target("", why=LEAVES_BUNDLE)
            if target is None:
                return None
            if image:
                if target in self.bundle.files and raster_type(target):
                    return Target(urls.raw(self.name, target), image=True)
            if target.endswith("/index.md") and target not in self.bundle.files:
                # "sub/index.md" that sub/ lacks is a broken link, as the loader says, not
                # a link to the folder (viewer QA: a working link beside "Unresolved")
                return None
            url = self.url_of(target)
            if url is None:
                return None
            return Target(self.with_fragment(url, fragment))

        return to_viewer

    def with_fragment(self, url: str, fragment: str | None) -> str:
        """``url`` with the heading id of ``fragment`` (as written in a link: percent
        escapes read) when it is a document's page."""
        if fragment and url.startswith(urls.concept(self.name, "/")):
            return url + "#" + slug(fragment_key(fragment))
        return url

    @cached_property
    def _wikis(self) -> WikiIndex:
        return WikiIndex(self.bundle.files)

    def wikilink(self, base_dir: str) -> WikiRewrite | None:
        """Map ``[[wikilinks]]`` in a document of ``base_dir`` to viewer URLs, resolved
        as the loader resolves them; None when the bundle was loaded without them."""
        if not self.bundle.wikilinks:
            return None

        def to_viewer(target: str, anchor: str | None) -> Target | None:
            path, candidates = self._wikis.resolve(target, base_dir)
            if candidates:  # viewer QA: shown as any broken link, its files unsaid
                shown = ", ".join(candidates[:5]) + (", ..." if len(candidates) > 5 else "")
                return Target(
                    "", why=f"names {len(candidates)} files, so it is not followed: {shown}"
                )
            url = None if path is None else self.url_of(path)
            return None if url is None else Target(self.with_fragment(url, anchor))

        return to_viewer

    def prepare(self) -> None:
        """Compute every kept figure now (``okfx view`` does, in the background), so the
        first overview or listing of a large bundle does not pay for them."""
        for figure in (
            "counts",
            "ranked",
            "problems",
            "_deadlines",
            "_tree",
            "_others",
            "resolver",
        ):
            getattr(self, figure)

    def summary(self, now: datetime) -> dict[str, Any]:
        counts = self.counts
        return {
            "name": self.name,
            "concepts": len(self.bundle),
            "okf_version": self.bundle.okf_version,
            "stale": self.stale_count(now),
            "deprecated": counts["status"].get("deprecated", 0),
            "warnings": sum(group.count for group in self.problems),
        }


_VIEWS: weakref.WeakKeyDictionary[Bundle, BundleView] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def view_of(bundle: Bundle) -> BundleView:
    """The kept :class:`BundleView` of ``bundle`` (made on first use)."""
    with _LOCK:
        found = _VIEWS.get(bundle)
        if found is None:
            found = _VIEWS[bundle] = BundleView(bundle)
        return found
