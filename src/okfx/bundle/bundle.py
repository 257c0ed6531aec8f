"""Bundle: load an OKF bundle (spec §3) and look things up in it.

``Bundle.load`` never raises for bundle *content*: bad files are skipped and reported in
``warnings`` as ``Problem(path, code, message)``. It raises only when the bundle itself
cannot be reached (a missing folder, a failed clone).
"""

from __future__ import annotations

import os
import threading
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from okfx.bundle.links import Resolver, nfc_index
from okfx.bundle.parse import DocumentParser
from okfx.bundle.paths import PathGuard, normalize
from okfx.bundle.persist import StateCache, default_dir, fingerprint
from okfx.bundle.problems import ERROR_CODES, ProblemGroup, group
from okfx.bundle.rootlinks import find_root_links
from okfx.bundle.rootlinks import message as root_links_message
from okfx.bundle.scope import find_scope
from okfx.bundle.walk import FileEntry, Walk, decode_text, read_bytes, walk
from okfx.bundle.wikilinks import WikiIndex
from okfx.deadline import acquire
from okfx.errors import NotFound, UnsafePath
from okfx.gcpause import gc_paused
from okfx.limits import Limits
from okfx.model import Concept, IndexFile, Link, LogFile, Problem

if TYPE_CHECKING:
    from okfx.search.facets import Facets
    from okfx.search.grep import GrepResults
    from okfx.search.index import SearchIndex, SearchResults
    from okfx.search.suggest import NameIndex
    from okfx.sources import GitSource, SourceLimits

__all__ = ["Bundle", "Document", "Neighbors"]

Document = Concept | IndexFile | LogFile
RESERVED = frozenset({"index.md", "log.md"})


@dataclass(frozen=True, slots=True)
class Neighbors:
    """The link graph around one document (spec §6)."""

    path: str
    outbound: tuple[Link, ...]  # links whose target exists in the bundle
    backlinks: tuple[Link, ...]  # links from concepts pointing at ``path``
    unresolved: tuple[Link, ...]  # links whose target does not exist


_BATCH = 256  # files parsed together; also how often ``progress`` is told


class _HeldWarnings:
    """Warnings held back while a batch of files is parsed, to replay in file order."""

    def __init__(self) -> None:
        self._by_path: dict[str, list[tuple[str, str]]] = {}

    def add(self, path: str, code: str, message: str) -> None:
        self._by_path.setdefault(path, []).append((code, message))

    def replay(self, paths: list[str], warn: Callable[[str, str, str], None]) -> None:
        """Warnings of ``paths``, in that order, then any others (none are expected)."""
        for path in [*paths, *self._by_path]:
            for code, message in self._by_path.pop(path, ()):
                warn(path, code, message)


class _Reader:
    """Reads markdown files as text within the limits, reporting the ones it skips."""

    def __init__(self, limits: Limits, warn: Callable[[str, str, str], None]) -> None:
        self.limits = limits
        self.warn = warn
        self.total = 0  # bytes read so far
        self.stopped = False  # max_total_bytes reached: read nothing more

    def batch(self, entries: list[FileEntry]) -> list[tuple[str, str]]:
        """``(path, text)`` of the readable files of ``entries``, in order."""
        texts: list[tuple[str, str]] = []
        for entry in entries:
            text = self.text(entry)
            if self.stopped:
                break
            if text is not None:
                texts.append((entry.path, text))
        return texts

    def text(self, entry: FileEntry) -> str | None:
        limits = self.limits
        try:
            data = read_bytes(entry.host, limits.max_file_bytes)
        except ValueError as exc:
            self.warn(entry.path, "file_too_large", f"{exc}; skipped")
            return None
        except OSError as exc:
            self.warn(entry.path, "unreadable", f"cannot read: {exc.strerror or exc}")
            return None
        self.total += len(data)
        if self.total > limits.max_total_bytes:
            self.warn(
                entry.path,
                "bundle_too_large",
                f"stopped reading at max_total_bytes={limits.max_total_bytes}",
            )
            self.stopped = True
            return None
        try:
            return decode_text(data)
        except UnicodeDecodeError as exc:
            self.warn(entry.path, "invalid_encoding", f"not UTF-8 ({exc.reason}); skipped")
            return None


class Bundle:
    """A loaded, read-only OKF bundle. Safe to share between threads."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        name: str | None = None,
        limits: Limits | None = None,
        *,
        exclude: Sequence[str] = (),
        wikilinks: bool = False,
    ) -> None:
        absolute = Path(os.path.abspath(root))
        self.root: Path = absolute
        self.name: str = name or absolute.name or "bundle"
        self.limits: Limits = limits or Limits()
        # okfx extensions beyond the spec (docs/okf.md): exclude patterns, [[wikilinks]].
        self.exclude: tuple[str, ...] = tuple(exclude)
        self.wikilinks = wikilinks
        #: Roots of bundles inside this one (left out of it), and .md files excluded.
        self.nested_bundles: tuple[str, ...] = ()
        self.excluded: tuple[str, ...] = ()
        self.guard = PathGuard(absolute)
        self.warnings: list[Problem] = []
        # Every problem by code, recorded in ``warnings`` or not (see ``_warn``).
        self._problem_counts: dict[str, int] = {}
        self._unrecorded = 0
        self.okf_version: str | None = None
        self._concepts: dict[str, Concept] = {}
        self._indexes: dict[str, IndexFile] = {}
        self._logs: dict[str, LogFile] = {}
        self._files: frozenset[str] = frozenset()
        self._dirs: frozenset[str] = frozenset({"/"})
        self._backlinks: dict[str, list[Link]] = {}
        self._lock = threading.Lock()  # the search index's build
        self._names_lock = threading.Lock()
        self._search_index: SearchIndex | None = None
        self._facets: Facets | None = None
        self._nfc: dict[str, str] | None = None  # NFC form -> path, for non-ASCII paths
        self._names: dict[bool, NameIndex] = {}  # by files: of the concepts or all files
        # (cache, key, fingerprint, newest mtime) when loaded with a state cache
        self._state: tuple[StateCache, str, str, int] | None = None

    # -- loading -------------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        source: str | os.PathLike[str] | GitSource,
        name: str | None = None,
        *,
        limits: Limits | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        refresh: bool = False,
        timeout: float = 30.0,
        source_limits: SourceLimits | None = None,
        progress: Callable[[int, int], None] | None = None,
        state_cache: str | os.PathLike[str] | bool | None = None,
        exclude: Sequence[str] = (),
        wikilinks: bool = False,
    ) -> Bundle:
        """Load a bundle from a folder, a git URL / :class:`GitSource`, or an archive.

        ``name`` defaults to the folder name (for git: the subdirectory's last part, else
        the repository name). Raises ``FileNotFoundError`` when the folder is missing.
        ``progress(done, total)`` is called as markdown files are read (for a progress bar).
        ``state_cache`` (a directory, or True for :func:`okfx.bundle.persist.default_dir`) keeps
        the parsed state and search index between runs (:mod:`okfx.bundle.persist`): an unchanged
        bundle then loads without parsing a file.
        Beyond the spec (docs/okf.md): ``exclude`` patterns name ``.md`` files that are not
        concepts (:mod:`okfx.bundle.scope`), and ``wikilinks`` follows ``[[name]]`` links.
        """
        state = _state_cache(state_cache)
        if isinstance(source, str | os.PathLike):
            if os.path.isdir(source):
                bundle = cls(source, name, limits, exclude=exclude, wikilinks=wikilinks)
                return bundle._load(progress, state)
            text = os.fspath(source)
            remote = "://" in text or "::" in text or text.startswith("git@")
            if not os.path.exists(text) and not remote:
                raise FileNotFoundError(f"bundle folder not found: {os.path.abspath(text)}")
        from okfx.sources import open_source  # only needed for git URLs and archives

        with open_source(
            source, cache_dir=cache_dir, refresh=refresh, timeout=timeout, limits=source_limits
        ) as (root, default_name):
            bundle = cls(root, name or default_name, limits, exclude=exclude, wikilinks=wikilinks)
            return bundle._load(progress, state)

    @classmethod
    def from_git(
        cls,
        url: str,
        ref: str | None = None,
        subdir: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        refresh: bool = False,
        timeout: float = 30.0,
        *,
        name: str | None = None,
        limits: Limits | None = None,
    ) -> Bundle:
        """Clone (shallow, cached) and load a bundle from a git repository."""
        from okfx.sources import GitSource

        return cls.load(
            GitSource(url, ref=ref, subdir=subdir),
            name,
            limits=limits,
            cache_dir=cache_dir,
            refresh=refresh,
            timeout=timeout,
        )

    def _warn(self, path: str, code: str, message: str) -> None:
        """Record a problem; past ``max_warnings`` only count it, except a §11 error,
        which is recorded until as many again (a report must show what failed it)."""
        counts = self._problem_counts
        counts[code] = counts.get(code, 0) + 1
        cap = self.limits.max_warnings
        recorded = len(self.warnings)
        if recorded < cap or (code in ERROR_CODES and recorded < 2 * cap):
            self.warnings.append(Problem(path, code, message))
        else:
            self._unrecorded += 1

    def _close_warnings(self) -> None:
        if self._unrecorded:
            cap = self.limits.max_warnings
            self.warnings.append(
                Problem(
                    "/",
                    "too_many_warnings",
                    f"{self._unrecorded} more problems were counted but not recorded "
                    f"(max_warnings={cap}); the counts by code are exact",
                )
            )
            self._unrecorded = 0

    def _load(
        self,
        progress: Callable[[int, int], None] | None = None,
        state: StateCache | None = None,
    ) -> Bundle:
        if not os.path.isdir(self.root):
            raise FileNotFoundError(f"bundle folder not found: {self.root}")
        with gc_paused():
            self._read_all(progress, state)
        return self

    def _read_all(
        self,
        progress: Callable[[int, int], None] | None = None,
        state: StateCache | None = None,
    ) -> None:
        limits = self.limits
        listing = walk(self.guard.real_root, limits, self._warn)
        scope = find_scope(listing, self.exclude, limits, self._warn, str(self.root))
        self.nested_bundles, self.excluded = scope.nested, scope.excluded
        inside = scope.apply(listing)
        self._files = frozenset(f.path for f in inside.files)
        self._dirs = frozenset(inside.dirs)
        if state is not None:
            self._state = self._fingerprint(state, listing)
            if self._restore():
                if progress is not None:
                    progress(len(self._concepts), len(self._concepts))
                return
        held = _HeldWarnings()
        wikis = WikiIndex(self._files) if self.wikilinks else None
        resolver = Resolver(set(self._files), set(self._dirs))
        parser = DocumentParser(resolver, limits, held.add, wikis)
        skip = frozenset(scope.excluded)
        markdown = [e for e in inside.files if e.path.endswith(".md") and e.path not in skip]
        read = _Reader(limits, held.add)
        # Files go through in batches, each parsed stage by stage (see
        # DocumentParser.concepts); the warnings held meanwhile are then replayed in file
        # order, so the result is the same as reading one file after the other.
        for first in range(0, len(markdown), _BATCH):
            if progress is not None:
                progress(first, len(markdown))
            batch = markdown[first : first + _BATCH]
            self._parse_batch(parser, read.batch(batch))
            held.replay([entry.path for entry in batch], self._warn)
            if read.stopped:
                break
        if progress is not None:
            progress(len(markdown), len(markdown))
        root_index = self._indexes.get("/")
        if root_index is not None and root_index.frontmatter.get("okf_version") is not None:
            self.okf_version = str(root_index.frontmatter["okf_version"])
        for concept in self._concepts.values():
            for link in concept.links:
                self._backlinks.setdefault(link.target, []).append(link)
        self._report_root_links()
        self._close_warnings()
        self._persist("bundle", self._parsed_state())

    def _report_root_links(self) -> None:
        """One ``repository_root_links`` warning instead of a ``broken_link`` per link
        when every absolute link is written from the repository root (okfx.bundle.rootlinks)."""
        docs: list[Document] = [*self._concepts.values(), *self._indexes.values()]
        docs += self._logs.values()
        found = find_root_links(
            (link for doc in docs for link in doc.links),
            self.root.parts[1:],
            lambda path: path in self._files or path + ".md" in self._files,
        )
        if found is None:
            return
        dropped = found.broken_warnings()
        kept = [p for p in self.warnings if p not in dropped]
        self._unrecorded -= len(found.links) - (len(self.warnings) - len(kept))
        self.warnings = kept
        self._problem_counts["broken_link"] -= len(found.links)
        if not self._problem_counts["broken_link"]:
            del self._problem_counts["broken_link"]
        self._warn("/", "repository_root_links", root_links_message(found))

    def _parse_batch(self, parser: DocumentParser, texts: list[tuple[str, str]]) -> None:
        concepts: list[tuple[str, str]] = []
        for path, text in texts:
            basename = path.rsplit("/", 1)[-1]
            if basename == "index.md":
                index = parser.index(path, text)
                self._indexes[index.directory] = index
            elif basename == "log.md":
                log = parser.log(path, text)
                self._logs[log.directory] = log
            else:
                concepts.append((path, text))
        for concept in parser.concepts(concepts):
            if concept is not None:
                self._concepts[concept.path] = concept

    # -- persisted state (okfx.bundle.persist) -----------------------------------------------------
    def _fingerprint(self, state: StateCache, listing: Walk) -> tuple[StateCache, str, str, int]:
        """What the cached state must match: every file's stat, the folders, and what
        the walk reported (so a new FIFO or symlink warning is not lost)."""
        stats = []
        for entry in listing.files:
            try:
                stats.append((entry.path, os.stat(entry.host)))
            except OSError:
                pass  # gone since the walk: the parse reports it, the digest differs
        digest, newest = fingerprint(stats, extra=(sorted(listing.dirs), self.warnings))
        options = (self.limits, self.exclude, self.wikilinks)
        return state, state.key(self.guard.real_root, options), digest, newest

    def _parsed_state(self) -> dict[str, Any]:
        return {
            "concepts": self._concepts,
            "indexes": self._indexes,
            "logs": self._logs,
            "backlinks": self._backlinks,
            "warnings": self.warnings,
            "problem_counts": self._problem_counts,
            "okf_version": self.okf_version,
        }

    def _restore(self) -> bool:
        if self._state is None:
            return False
        cache, key, digest, _ = self._state
        saved = cache.fetch(key, "bundle", digest)
        if not isinstance(saved, dict) or saved.keys() != self._parsed_state().keys():
            return False
        self._concepts = saved["concepts"]
        self._indexes = saved["indexes"]
        self._logs = saved["logs"]
        self._backlinks = saved["backlinks"]
        self.warnings = saved["warnings"]
        self._problem_counts = saved["problem_counts"]
        self.okf_version = saved["okf_version"]
        return True

    def _state_entry(self) -> tuple[StateCache, str, str, int] | None:
        """The state cache this bundle was loaded with: ``(cache, key, digest of the
        files, newest mtime)``, or None without one (for a combined index's state)."""
        return self._state

    def _persist(self, kind: str, value: Any) -> None:
        if self._state is not None:
            cache, key, digest, newest = self._state
            cache.store(key, kind, digest, newest, value)

    # -- container protocol --------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._concepts)

    def __iter__(self) -> Iterator[Concept]:
        return iter(self._concepts.values())

    def __contains__(self, path: object) -> bool:
        try:
            return isinstance(self.get(path), Concept)
        except UnsafePath:
            return False

    def __repr__(self) -> str:
        return f"<Bundle {self.name!r} concepts={len(self)} root={str(self.root)!r}>"

    # -- look-ups ------------------------------------------------------------------------
    @property
    def concepts(self) -> list[Concept]:
        """All concepts in path order."""
        return list(self._concepts.values())

    @property
    def files(self) -> frozenset[str]:
        """Every regular file of the bundle (concepts, reserved files and resources)."""
        return self._files

    @property
    def directories(self) -> frozenset[str]:
        return self._dirs

    @property
    def index(self) -> IndexFile | None:
        """The root ``index.md``, when present."""
        return self._indexes.get("/")

    @property
    def indexes(self) -> dict[str, IndexFile]:
        """``index.md`` files by directory (``/``, ``/tables``...)."""
        return dict(self._indexes)

    @property
    def logs(self) -> dict[str, LogFile]:
        """``log.md`` files by directory."""
        return dict(self._logs)

    def get(self, path: object) -> Document | None:
        """The concept (or reserved file) at ``path``, or None.

        Accepts ``/a/b.md``, ``a/b.md``, ``a/b`` and ``/a/b``; a directory path (``/tables``
        or ``tables/``) gives its ``index.md``. Raises :class:`~okfx.errors.UnsafePath` for
        paths that would leave the bundle.
        """
        canon = normalize(path)
        trailing = isinstance(path, str) and path.endswith("/")
        if not canon.isascii():  # paths compare in Unicode NFC (see Resolver.known)
            canon = self._nfc_paths().get(unicodedata.normalize("NFC", canon), canon)
        if canon in self._dirs and (trailing or canon not in self._files):
            return self._indexes.get(canon)
        for candidate in (canon, canon + ".md"):
            found = self._document(candidate)
            if found is None and not candidate.isascii():
                nfc = unicodedata.normalize("NFC", candidate)
                found = self._document(self._nfc_paths().get(nfc, candidate))
            if found is not None:
                return found
        return None

    def _nfc_paths(self) -> dict[str, str]:
        index = self._nfc
        if index is None:  # two threads may both build it: the results are equal
            index = self._nfc = nfc_index([*self._files, *self._dirs])
        return index

    def _document(self, path: str) -> Document | None:
        concept = self._concepts.get(path)
        if concept is not None:
            return concept
        directory, _, base = path.rpartition("/")
        if base == "index.md":
            return self._indexes.get(directory or "/")
        if base == "log.md":
            return self._logs.get(directory or "/")
        return None

    def document(self, path: object) -> Document:
        """Like :meth:`get`, but raises :class:`~okfx.errors.NotFound` with suggestions."""
        found = self.get(path)
        if found is None:
            raise self._not_found(path)
        return found

    def concept(self, path: object) -> Concept:
        """The concept at ``path``; raises :class:`~okfx.errors.NotFound` with suggestions."""
        found = self.get(path)
        if not isinstance(found, Concept):
            raise self._not_found(path)
        return found

    def _not_found(self, path: object) -> NotFound:
        canon = normalize(path)
        return NotFound(
            f"no concept at {canon} in bundle {self.name!r}",
            path=canon,
            suggestions=self.suggest(canon),
        )

    def suggest(self, text: str, limit: int = 5) -> list[str]:
        """Concept paths close to ``text`` by path, file name or title ("did you mean"),
        from an index made on the first call (:mod:`okfx.search.suggest`)."""
        return self.names().suggest(text, limit)

    def names(self, files: bool = False) -> NameIndex:
        """The index behind :meth:`suggest`: of the concepts' paths and titles, or with
        ``files`` of every file's path. Built on first use (``okfx serve`` builds the
        concepts' in the background)."""
        found = self._names.get(files)
        if found is not None:
            return found
        acquire(self._names_lock, "the name index, which is being built")
        try:
            found = self._names.get(files)
            if found is None:
                from okfx.search.suggest import NameIndex

                if files:
                    found = NameIndex((path, "") for path in sorted(self._files))
                else:
                    found = NameIndex((c.path, c.title) for c in self)
                self._names[files] = found
            return found
        finally:
            self._names_lock.release()

    # -- problems ------------------------------------------------------------------------
    def problem_counts(self) -> dict[str, int]:
        """Every problem of the load by code, sorted by code: exact, including those
        past ``Limits.max_warnings`` that ``warnings`` does not list."""
        return dict(sorted(self._problem_counts.items()))

    def problems_by_code(self) -> list[ProblemGroup]:
        """The problems grouped by code (errors first, then by count), each with its
        exact count, a one-line explanation and the recorded problems."""
        return group(self.warnings, self._problem_counts)

    # -- link graph ----------------------------------------------------------------------
    def neighbors(self, path: object) -> Neighbors:
        """Outbound links, backlinks and unresolved links of the document at ``path``."""
        doc = self.document(path)
        return Neighbors(
            path=doc.path,
            outbound=tuple(link for link in doc.links if link.exists),
            backlinks=tuple(self._backlinks.get(doc.path, ())),
            unresolved=tuple(link for link in doc.links if not link.exists),
        )

    def links(self) -> Iterator[Link]:
        """Every edge from a concept, in source path order."""
        for concept in self._concepts.values():
            yield from concept.links

    def unresolved_links(self) -> list[Link]:
        """Every link (from concepts and reserved files) whose target does not exist."""
        docs: list[Document] = [
            *self._concepts.values(),
            *self._indexes.values(),
            *self._logs.values(),
        ]
        out = [link for doc in docs for link in doc.links if not link.exists]
        out.sort(key=lambda link: (link.source, link.line, link.target))
        return out

    def facets(self) -> Facets:
        """Bit-set columns of the concepts' filter values, built on first use: a
        filtered listing then counts and pages without visiting every concept."""
        facets = self._facets
        if facets is None:  # two threads may both build it: the results are equal
            from okfx.search.facets import Facets

            facets = self._facets = Facets(self.concepts)
        return facets

    # -- search --------------------------------------------------------------------------
    def search_index(self) -> SearchIndex:
        """The bundle's BM25F index, built on first use (``Bundle.load`` stays lean)."""
        if self._search_index is not None:
            return self._search_index
        # a call with a deadline waits for another thread's build only until then
        acquire(self._lock, "the search index, which is being built")
        try:
            if self._search_index is None:
                from okfx.search.index import SearchIndex

                self._search_index = self._restore_index()
                if self._search_index is None:
                    index = SearchIndex.build((self.name, c) for c in self)
                    self._persist("search", index.state())
                    self._search_index = index
            return self._search_index
        finally:
            self._lock.release()

    def _restore_index(self) -> SearchIndex | None:
        if self._state is None:
            return None
        from okfx.search.index import SearchIndex

        cache, key, digest, _ = self._state
        with gc_paused():
            saved = cache.fetch(key, "search", digest)
            return SearchIndex.restore(saved, [(self.name, self._concepts)])

    def search(
        self,
        query: str,
        limit: int = 10,
        type: str | None = None,
        tags: list[str] | str | None = None,
        **filters: Any,
    ) -> SearchResults:
        """Ranked hits (BM25F) for ``query``; filters as :meth:`SearchIndex.search` takes
        them (``directory``, ``trust_tier``, ``include_deprecated``, ``include_stale``,
        ``now``)."""
        return self.search_index().search(query, limit, type, tags, **filters)

    def grep(self, pattern: str, regex: bool = False, **options: Any) -> GrepResults:
        """Deterministic substring (or RE2 regex) matches in titles, descriptions and
        bodies, with line numbers; options as :func:`okfx.search.grep.grep` takes them."""
        from okfx.search.grep import grep

        return grep(((self.name, c) for c in self), pattern, regex=regex, **options)


def _state_cache(option: str | os.PathLike[str] | bool | None) -> StateCache | None:
    if option is None or option is False:
        return None
    return StateCache(default_dir() if option is True else option)
