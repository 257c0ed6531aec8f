"""Bundle: load an OKF bundle (spec §3) and look things up in it.

``Bundle.load`` never raises for bundle *content*: bad files are skipped and reported in
``warnings`` as ``Problem(path, code, message)``. It raises only when the bundle itself
cannot be reached (a missing folder, a failed clone).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from okfx.bundle.budget import CAP_CODES
from okfx.bundle.idlinks import UnresolvedId, declared_paths, link_ids, unresolved_ids
from okfx.bundle.links import Resolver, nfc_index, skipped_at
from okfx.bundle.parse import DocumentParser, skipped_paths
from okfx.bundle.paths import (
    BeneathOpener,
    PathGuard,
    hidden_said,
    normalize,
    open_error,
    parent_dir,
)
from okfx.bundle.problems import ERROR_CODES, ProblemGroup, group, kept_past
from okfx.bundle.reload import (
    Changes,
    Reparsed,
    Updated,
    content_changes,
    diff,
    update,
    update_backlinks,
)
from okfx.bundle.rootlinks import find_root_links
from okfx.bundle.rootlinks import message as root_links_message
from okfx.bundle.scope import find_scope
from okfx.bundle.settle import digest, still_racy
from okfx.bundle.state import BUNDLE_KIND, Manifest, Parsed, decode, encode, okf_version_of, scan
from okfx.bundle.stored import FileStore, StoredConcept, slim
from okfx.bundle.texts import TEXTS_KIND, TextsBuilder, attach, read_texts
from okfx.bundle.walk import FileEntry, decode_text, encoding_problem, read_bytes, read_file, walk
from okfx.bundle.wikilinks import WikiIndex
from okfx.deadline import Aside, acquire
from okfx.errors import NotFound, OKFError, UnsafePath
from okfx.gcpause import gc_paused
from okfx.limits import Limits
from okfx.model import Concept, IndexFile, Link, LogFile, Problem
from okfx.statecache import StateCache, resolve, store_later
from okfx.statefile import StateFormatError, StateWriter

if TYPE_CHECKING:
    from okfx.search.facets import Facets
    from okfx.search.grep import GrepResults
    from okfx.search.index import SearchResults
    from okfx.search.live import Index
    from okfx.search.suggest import NameIndex, WordIndex
    from okfx.sources import GitSource, SourceLimits

__all__ = ["Bundle", "Document", "Neighbors"]

logger = logging.getLogger("okfx")

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
# A batch also ends once its texts hold this many bytes: a batch's texts and the bodies
# parsed from them are in memory together.
_BATCH_BYTES = 16 * 1024 * 1024


class _HeldWarnings:
    """Warnings held back while a batch of files is parsed, to replay in file order.

    At most :data:`PER_FILE` messages of one code are held for one file; the rest are
    only counted, so a batch of files full of broken links (5,000 each) cannot hold
    millions of messages at once. The counts stay exact.
    """

    PER_FILE = 1_000

    def __init__(self) -> None:
        self._by_path: dict[str, list[tuple[str, str]]] = {}
        self._counts: dict[str, dict[str, int]] = {}

    def add(self, path: str, code: str, message: str) -> None:
        counts = self._counts.setdefault(path, {})
        seen = counts[code] = counts.get(code, 0) + 1
        if seen <= self.PER_FILE:
            self._by_path.setdefault(path, []).append((code, message))

    def take(self, paths: list[str]) -> Iterator[tuple[str, list[tuple[str, str]], dict[str, int]]]:
        """``(path, warnings, more)`` of ``paths`` in that order, then of any other path
        (none are expected), each path once and only with warnings; ``more`` counts the
        warnings of each code that were only counted."""
        for path in [*paths, *self._by_path]:
            found = self._by_path.pop(path, None)
            counts = self._counts.pop(path, {})
            if found:
                more = {c: n - self.PER_FILE for c, n in counts.items() if n > self.PER_FILE}
                yield path, found, more


class _Reader:
    """Reads markdown files as text within the limits, reporting the ones it skips."""

    def __init__(
        self,
        limits: Limits,
        warn: Callable[[str, str, str], None],
        guard: PathGuard,
        racy: frozenset[str] = frozenset(),
        digests: dict[str, bytes] | None = None,
    ) -> None:
        self.limits = limits
        self.warn = warn
        self.guard = guard
        # the digest of each racy file read, to find it settled later (okfx.bundle.settle)
        self.racy = racy
        self.digests = {} if digests is None else digests
        self.total = 0  # bytes read so far
        self.stopped = False  # max_total_bytes reached: read nothing more

    def batch(self, entries: list[FileEntry]) -> tuple[list[tuple[str, str]], int]:
        """``(path, text)`` of the readable files of the first entries of ``entries``, in
        order, and how many entries that took: reading stops once the texts hold
        :data:`_BATCH_BYTES`."""
        texts: list[tuple[str, str]] = []
        size = used = 0
        with self.guard.opener() as opener:
            for entry in entries:
                if size >= _BATCH_BYTES:
                    break
                used += 1
                text = self.text(entry, opener)
                if self.stopped:
                    break
                if text is not None:
                    texts.append((entry.path, text))
                    size += len(text)
        return texts, used

    def text(self, entry: FileEntry, opener: BeneathOpener) -> str | None:
        limits = self.limits
        try:
            # Opened below the root, no symlink followed: a folder swapped since the
            # walk fails here instead of leading outside (okfx.bundle.paths).
            data = read_bytes(opener.open(opener.relative(entry.host)), limits.max_file_bytes)
        except ValueError as exc:
            self.warn(entry.path, "file_too_large", f"{exc}; skipped, unchecked: split the file")
            return None
        except OSError as exc:
            self.warn(entry.path, "unreadable", f"cannot read: {open_error(exc)}")
            return None
        self.total += len(data)
        if entry.path in self.racy:
            self.digests[entry.path] = digest(data)
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
            self.warn(entry.path, "invalid_encoding", encoding_problem(data, exc))
            return None


def folder_name(folder: Path) -> str:
    """A bundle's default name: its folder's, or for a hidden folder (``.okf``, as two
    producers keep a bundle beside their code) the name of the folder holding it
    (``okf-pro`` for ``gems/okf-pro/.okf``), which says more to an agent than ``.okf``."""
    name = folder.name
    if name.startswith(".") and folder.parent.name:
        return folder.parent.name
    return name or "bundle"


_NOT_IN_NAME = re.compile(r"[^\w.\-]")


def as_name(text: str) -> str:
    """``text`` as a bundle NAME (``NAME=SOURCE``) takes it: other characters as ``-``,
    from its first letter or digit, at most 64 characters."""
    name = _NOT_IN_NAME.sub("-", text).lstrip("_.-")
    return name[:64] or "bundle"


def told_apart(folders: Iterable[Path], clean: Callable[[str], str] = as_name) -> dict[Path, str]:
    """Names for the ``folders`` (resolved) whose default name another of them shares
    (``AV-OKF/knowledge`` and ``okf-poc/knowledge``): their parent folder's name, a
    ``-`` and their own (``AV-OKF-knowledge``), made a name by ``clean``. A group the
    parents do not tell apart, or one folder given twice, gets no names."""
    groups: dict[str, list[Path]] = {}
    for folder in dict.fromkeys(folders):
        groups.setdefault(folder_name(folder), []).append(folder)
    names: dict[Path, str] = {}
    for name, members in groups.items():
        longer = [clean(f"{folder_name(folder.parent)}-{name}") for folder in members]
        if len(members) > 1 and len(set(longer)) == len(members):
            names.update(zip(members, longer, strict=True))
    return names


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
        self.name: str = name or folder_name(absolute)
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
        self._id_holders: frozenset[str] = frozenset()  # concepts naming ids (idlinks)
        self._indexes: dict[str, IndexFile] = {}
        self._logs: dict[str, LogFile] = {}
        self._files: frozenset[str] = frozenset()
        self._dirs: frozenset[str] = frozenset({"/"})
        self._backlinks: dict[str, list[Link]] | None = None  # built on first use
        self._backlinks_lock = threading.Lock()
        self._listed: dict[str, list[str]] | None = None  # built on first use
        self._lock = threading.Lock()  # the search index's build
        self._aside = Aside()  # that build, on a thread of its own for a call with a budget
        self._names_lock = threading.Lock()
        self._search_index: Index | None = None
        self._facets: Facets | None = None
        self._nfc: dict[str, str] | None = None  # NFC form -> path, for non-ASCII paths
        self._declared_ids: dict[str, list[str]] | None = None  # producer id -> its paths
        self._wiki_index: WikiIndex | None = None  # files by name, for wikilink_candidates
        self._names: dict[bool, NameIndex] = {}  # by files: of the concepts or all files
        self._name_words: WordIndex | None = None  # built on first use
        self._leaves: dict[str, list[str]] | None = None  # files by name, on first use
        self._skip: frozenset[str] = frozenset()  # excluded .md files: files, not concepts
        self._walk_overflow: dict[str, int] = {}
        #: What :meth:`load` was given (a folder, git URL, GitSource or archive).
        self.source: Any = None
        #: Where a bundle from a git URL or an archive came from (``kind``, ``url``, ``ref``,
        #: ``commit``, ``sha256``: :func:`okfx.sources.cache.origin_of`); None for a folder.
        self.origin: dict[str, Any] | None = None
        #: The other options :meth:`load` was given (to load the source again).
        self.load_options: dict[str, Any] = {}
        #: What the last :meth:`reload` found changed (None after a load).
        self.changes: Changes | None = None
        self._parsed: Parsed | None = None
        self._skipped: tuple[Manifest, dict[str, str]] | None = None  # see skipped_at
        #: Whether the root as given was a symlink when first loaded: a reload follows a
        #: symlinked root where it points next (a release switched), never a folder that
        #: became a symlink since (:meth:`reload`).
        self._root_link = os.path.islink(self.root)
        self._store = FileStore(self.guard.real_root, self.limits)
        self._cache: StateCache | None = None
        self._key = ""
        # (generation of a stored index, paths changed since): how to get the search
        # index from the state cache when it is first needed.
        self._index_plan: tuple[str, frozenset[str]] | None = None
        #: Hybrid search settings (:meth:`enable_semantic`); None searches lexically.
        self.semantic: Any = None
        # The texts of the concepts this load parses, for grep; and how many concepts
        # are not in the stored texts (okfx.bundle.texts).
        self._texts: TextsBuilder | None = None
        self._texts_stale = 0
        # The digest of each racy file this load parsed (okfx.bundle.settle).
        self._read_digests: dict[str, bytes] = {}

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

        The parsed state and search index are kept between runs in the state cache
        (:mod:`okfx.statecache`): an unchanged bundle then loads without parsing a file,
        and a changed one parses only what changed. ``state_cache`` is a folder, True
        (the default folder), False (no cache) or None (the default: on, unless
        ``$OKFX_STATE_CACHE`` says ``off`` or names another folder).
        Beyond the spec (docs/okf.md): ``exclude`` patterns name ``.md`` files that are not
        concepts (:mod:`okfx.bundle.scope`), and ``wikilinks`` follows ``[[name]]`` links.
        """
        if isinstance(source, str) and not source.strip():
            # an unset setting (os.environ.get("KB", "")) read as the working folder's
            # missing self (framework QA: "bundle folder not found: /work/...")
            raise FileNotFoundError(
                errno.ENOENT, "the bundle path is empty: give a folder, a git URL or an archive"
            )
        if isinstance(source, str) and source.startswith("~"):
            source = os.path.expanduser(source)  # "~/team-kb" from a setting, as a shell does
        state = resolve(state_cache)
        options: dict[str, Any] = {
            "cache_dir": cache_dir,
            "timeout": timeout,
            "source_limits": source_limits,
            "state_cache": False if state is None else state.directory,
            "exclude": exclude,
            "wikilinks": wikilinks,
        }
        if isinstance(source, str | os.PathLike):
            if os.path.isdir(source):
                bundle = cls(source, name, limits, exclude=exclude, wikilinks=wikilinks)
                return bundle._load(progress, state, source, options)
            text = os.fspath(source)
            if not os.path.exists(text):
                # Read as okfx.sources reads it (sources QA: "alice@host:org/kb.git", a
                # git URL, was called a missing folder, and so was a missing archive).
                from okfx.sources.spec import ArchiveSource, LocalDir, parse_source

                try:
                    parsed = parse_source(text)
                except (OKFError, ValueError):
                    parsed = None  # open_source below says what is wrong with it
                if isinstance(parsed, LocalDir):
                    raise FileNotFoundError(f"bundle folder not found: {os.path.abspath(text)}")
                if isinstance(parsed, ArchiveSource) and not parsed.path.exists():
                    raise FileNotFoundError(f"archive not found: {os.path.abspath(parsed.path)}")
        from okfx.sources import open_source  # only needed for git URLs and archives
        from okfx.sources.cache import origin_of

        with open_source(
            source, cache_dir=cache_dir, refresh=refresh, timeout=timeout, limits=source_limits
        ) as (root, default_name):
            bundle = cls(root, name or default_name, limits, exclude=exclude, wikilinks=wikilinks)
            bundle.origin = origin_of(Path(root))
            return bundle._load(progress, state, source, options)

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
        # A memory cap reached is recorded past max_warnings too: never silently.
        if kept_past(code, recorded, cap) or code in CAP_CODES:
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
                    f"(max_warnings={cap}, and {_HeldWarnings.PER_FILE} of one code per "
                    "file); the counts by code are exact",
                )
            )
            self._unrecorded = 0

    def _load(
        self,
        progress: Callable[[int, int], None] | None = None,
        state: StateCache | None = None,
        source: Any = None,
        options: dict[str, Any] | None = None,
    ) -> Bundle:
        if not os.path.isdir(self.root):
            raise FileNotFoundError(f"bundle folder not found: {self.root}")
        self.source = source
        self.load_options = options or {}
        with gc_paused():
            self._read_all(progress, state)
        return self

    def _read_all(
        self,
        progress: Callable[[int, int], None] | None = None,
        state: StateCache | None = None,
    ) -> None:
        manifest = self._scan()
        parsed = None
        if state is not None:
            self._cache = state
            self._key = state.key("bundle", self.guard.real_root, *self._state_key_parts())
            parsed = self._from_cache(manifest)
            if parsed is None:
                # Another process loading this bundle now stores it once: wait for it.
                with state.lock(self._key):
                    parsed = self._from_cache(manifest)
                    if parsed is None:
                        parsed = self._parse_all(manifest, progress)
                        self._settle(parsed)
                        self._save(parsed)
                    self._attach_texts(parsed)
            else:
                self._attach_texts(parsed)
        else:
            parsed = self._parse_all(manifest, progress)
            self._attach_texts(parsed)
        self._install(parsed)
        if progress is not None:
            markdown = sum(1 for path in manifest.paths if self._parses(path))
            progress(markdown, markdown)

    def _state_key_parts(self) -> tuple[object, ...]:
        """What a stored state must have been loaded with to be used: the limits, and any
        load option that changes what a load produces (add each new one here; its
        ``repr`` goes into the key)."""
        return (self.limits, self.exclude, self.wikilinks)

    def _scan(self) -> Manifest:
        """Walk the folder and find what belongs to the bundle (reporting what is skipped
        or left out), and stat every file, those of nested bundles too (their
        ``index.md`` decides what is left out)."""
        listing = walk(self.guard.real_root, self.limits, self._warn)
        scope = find_scope(
            listing, self.exclude, self.limits, self._warn, str(self.root), self.guard
        )
        self.nested_bundles, self.excluded = scope.nested, scope.excluded
        inside = scope.apply(listing)
        self._files = frozenset(f.path for f in inside.files)
        self._dirs = frozenset(inside.dirs)
        self._skip = frozenset(scope.excluded)
        prefix = self.guard.real_root.rstrip("/")
        hosts = {f.path: f.host for f in inside.files if f.host != prefix + f.path}
        self._store = FileStore(self.guard.real_root, self.limits, hosts)
        # What the walk counted but did not record (past max_warnings).
        recorded = Counter(w.code for w in self.warnings)
        self._walk_overflow = dict(Counter(self._problem_counts) - recorded)
        return scan(listing, self.warnings, real_root=self.guard.real_root)

    def _parses(self, path: str) -> bool:
        """Is ``path`` a markdown file this bundle parses (not nested, not excluded)?"""
        return path.endswith(".md") and path in self._files and path not in self._skip

    def _parse_all(
        self, manifest: Manifest, progress: Callable[[int, int], None] | None = None
    ) -> Parsed:
        markdown = [p for p in manifest.paths if self._parses(p)]
        self._texts = TextsBuilder(self._texts_folder(), full=True)
        fresh = self._reparse(markdown, manifest, progress)
        limited = any(w.code == "too_many_files" for w in self.warnings)
        return Parsed(
            manifest,
            fresh.concepts,
            fresh.indexes,
            fresh.logs,
            fresh.warnings,
            okf_version_of(fresh.indexes),
            fresh.complete and not limited and not self._walk_overflow,
            overflow=dict(self._walk_overflow),
            file_overflow=fresh.overflow,
            nested=self.nested_bundles,
            excluded=self.excluded,
        )

    def _reparse(
        self,
        paths: list[str],
        manifest: Manifest,
        progress: Callable[[int, int], None] | None = None,
    ) -> Reparsed:
        """Parse the markdown files at ``paths`` (in path order) against the current file
        set; their warnings by file. Past ``max_warnings`` only §11 errors are kept (up
        to as many again), as :meth:`_warn` records them; the rest are counted by file in
        ``overflow``, so a reload can replace one file's count."""
        limits = self.limits
        stamps = manifest.stamps()
        held = _HeldWarnings()
        parser = self._parser(held.add, manifest)
        read = _Reader(limits, held.add, self.guard, manifest.racy, self._read_digests)
        out = Reparsed({}, {}, {}, {}, True)
        if self._texts is None:
            self._texts = TextsBuilder(self._texts_folder())
        texts = self._texts
        kept, cap = 0, limits.max_warnings
        # Files go through in batches, each parsed stage by stage (see
        # DocumentParser.concepts); the warnings held meanwhile are then collected by
        # file, so the result is the same as reading one file after the other.
        entries = [FileEntry(p, manifest.host(p)) for p in paths]
        first = 0
        while first < len(entries):
            if progress is not None:
                progress(first, len(entries))
            files, used = read.batch(entries[first : first + _BATCH])
            concepts = self._parse_batch(parser, files, out)
            for concept in concepts:
                texts.add(concept, stamps[concept.path])
                out.concepts[concept.path] = slim(concept, self._store, stamps[concept.path])
            batch = [entry.path for entry in entries[first : first + used]]
            for path, found, more in held.take(batch):
                problems = []
                counted = dict(more)  # only counted while the batch was held
                for code, message in found:
                    if kept_past(code, kept, cap):
                        problems.append(Problem(path, code, message))
                        kept += 1
                    else:  # never recorded, only counted
                        counted[code] = counted.get(code, 0) + 1
                if problems:
                    out.warnings[path] = problems
                if counted:
                    out.overflow[path] = counted
            first += used
            if read.stopped:
                out.complete = False
                break
            if parser.budget.full:  # no concept fits any more: read only index and log files
                entries = entries[:first] + parser.budget.leave_out(entries[first:])
        for path, code, message in parser.budget.report():
            out.warnings.setdefault(path, []).append(Problem(path, code, message))
            out.complete = False  # a reload parses it all again, under the same caps
        return out

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
        dropped = found.broken_warnings(self._files.__contains__)
        kept = [p for p in self.warnings if p not in dropped]
        self._unrecorded -= len(found.links) - (len(self.warnings) - len(kept))
        self.warnings = kept
        self._problem_counts["broken_link"] -= len(found.links)
        if not self._problem_counts["broken_link"]:
            del self._problem_counts["broken_link"]
        self._warn("/", "repository_root_links", root_links_message(found))

    def _parse_batch(
        self, parser: DocumentParser, texts: list[tuple[str, str]], out: Reparsed
    ) -> list[Concept]:
        concepts: list[tuple[str, str]] = []
        for path, text in texts:
            basename = path.rsplit("/", 1)[-1]
            if basename == "index.md":
                index = parser.index(path, text)
                out.indexes[index.directory] = index
            elif basename == "log.md":
                log = parser.log(path, text)
                out.logs[log.directory] = log
            else:
                concepts.append((path, text))
        return [c for c in parser.concepts(concepts) if c is not None]

    def _install(self, parsed: Parsed) -> None:
        """Make ``parsed`` this bundle's content; warnings are the walk's, then each
        file's in path order, recorded and counted as a load records them (:meth:`_warn`),
        then the repository-root links check."""
        self._parsed = parsed
        self._indexes = parsed.indexes
        self._logs = parsed.logs
        self.okf_version = parsed.okf_version
        self.warnings, self._problem_counts, self._unrecorded = [], {}, 0
        for warning in parsed.manifest.walk_warnings:
            self._warn(*warning)
        for found in parsed.file_warnings.values():
            for warning in found:
                self._warn(*warning)
        counts = self._problem_counts
        for unlisted in (parsed.overflow, *parsed.file_overflow.values()):
            for code, count in unlisted.items():
                counts[code] = counts.get(code, 0) + count
                self._unrecorded += count
        # Edges named by id need every concept's id (okfx.bundle.idlinks); what the
        # parse stored stays without them, so each install draws them from the whole.
        self._concepts, self._id_holders = link_ids(parsed.concepts, self._warn)
        self._report_root_links()
        self._close_warnings()

    # -- persisted state (okfx.statecache, okfx.bundle.state) ----------------------------
    def _texts_folder(self) -> str | None:
        """Where the texts of a parse spill over (okfx.bundle.texts): the state cache's
        folder, else the system's temporary folder."""
        folder = self._cache.usable() if self._cache is not None else None
        return None if folder is None else str(folder)

    def _attach_texts(self, parsed: Parsed, later: bool = False, stale: int = 0) -> None:
        """Give grep the texts of the concepts this load made: those it parsed, the
        others from the stored texts file when the state was read back; store them
        after a full parse (okfx.bundle.texts)."""
        builder, self._texts = self._texts, None
        cache = self._cache
        stored = None
        if not later and cache is not None and (builder is None or not builder.full):
            stored = read_texts(cache, self._key, parsed.concepts, self._store)
        folder = self._texts_folder()
        store, self._texts_stale = attach(self._store, parsed, builder, stored, stale, folder)
        if store is not None and cache is not None:
            full = builder is not None and builder.full
            self._store_state(cache, TEXTS_KIND, store, later or not full)

    def _from_cache(self, manifest: Manifest) -> Parsed | None:
        """The state stored for this bundle, brought up to date with ``manifest`` (only
        the files that differ are parsed); None without a usable one."""
        cache = self._cache
        if cache is None:
            return None
        self._texts = None  # what an earlier try parsed
        with cache.open(self._key, BUNDLE_KIND) as file:
            if file is None:
                return None
            try:
                stored = decode(file, self.guard.real_root, self._store)
            except StateFormatError as exc:
                logger.info("okfx state of %s rebuilt: %s", self.root, exc)
                return None
        changes = diff(stored.manifest, manifest)
        if not changes:
            self._index_plan = (stored.generation, frozenset())
            return stored
        updated = self._update(stored, manifest, changes)
        if updated is None:
            return None
        self._index_plan = (stored.generation, content_changes(changes))
        self._settle(updated.parsed)
        self._save(updated.parsed)
        return updated.parsed

    def _settle(self, parsed: Parsed) -> None:
        """Drop from ``parsed``'s racy files those found settled (okfx.bundle.settle), so
        the state stored for the next load trusts them."""
        digests, self._read_digests = self._read_digests, {}
        manifest = parsed.manifest
        if not manifest.racy:
            return
        cap = self.limits.max_file_bytes
        with self.guard.opener() as opener:

            def read(path: str) -> bytes | None:
                try:  # below the root, no symlink followed, as the load read it
                    return read_bytes(opener.open(opener.relative(manifest.host(path))), cap)
                except (OSError, ValueError):
                    return None

            manifest.racy = still_racy(manifest, digests, self._parses, read)

    def _save(self, parsed: Parsed, later: bool = False) -> None:
        """Store ``parsed``; ``later`` in a background thread (a reload answers at once)."""
        cache = self._cache
        if cache is None or parsed.manifest.racy.issuperset(parsed.manifest.paths):
            return  # every file was just written: nothing in this state would be reused
        real_root = self.guard.real_root
        self._store_state(cache, BUNDLE_KIND, lambda: encode(parsed, real_root), later)

    def _store_state(
        self, cache: StateCache, kind: str, build: Callable[[], StateWriter], later: bool
    ) -> None:
        """Store what ``build`` makes (in a background thread when ``later``); a value
        the format cannot hold means no state, logged, never a failed load."""
        root = self.root

        def make() -> StateWriter | None:
            try:
                return build()
            except Exception as exc:
                logger.warning("okfx %s state of %s not stored: %s", kind, root, exc)
                return None

        if later:
            store_later(cache, self._key, kind, make)
            return
        writer = make()
        if writer is not None:
            cache.store(self._key, kind, writer)

    def _state_entry(self) -> tuple[StateCache, str, str] | None:
        """The state cache this bundle uses, its key and its generation (for a combined
        index's state), or None without one."""
        if self._cache is None or self._parsed is None:
            return None
        return self._cache, self._key, self._parsed.generation

    # -- reloading -----------------------------------------------------------------------
    def reload(self) -> Bundle:
        """The bundle as its folder holds it now, parsing only what changed.

        A stat scan finds the files that changed, appeared or went; only those (and the
        documents whose links may now resolve differently) are parsed again, links,
        backlinks and the search index are updated without a rebuild, and the result
        equals a fresh :meth:`load` (:mod:`okfx.bundle.reload`). Returns ``self`` when
        nothing changed, else a new :class:`Bundle`; this one stays as it was, so a
        caller still holding it never sees a mix of the two. ``changes`` on the new one
        says what changed.

        Raises :class:`FileNotFoundError` when the folder is gone and
        :class:`PermissionError` when it cannot be listed: this bundle keeps what it last
        read, and :meth:`KnowledgeManager.reload` goes on with the others.
        """
        if not os.path.isdir(self.root):
            raise FileNotFoundError(
                f"bundle folder not found: {self.root} (it was there when the bundle was "
                "loaded; what it last read is served until the folder is back)"
            )
        try:  # edit QA: a root made unreadable (chmod 000) reloaded as an empty bundle
            with os.scandir(self.root) as entries:
                next(entries, None)
        except OSError as exc:
            raise PermissionError(
                f"bundle folder cannot be read: {self.root} ({exc.strerror or exc}); what it "
                "last read is served until it can be read again"
            ) from None
        new = Bundle(
            self.root, self.name, self.limits, exclude=self.exclude, wikilinks=self.wikilinks
        )
        self._pinned(new.guard.real_root)
        new._root_link = self._root_link
        new.source, new.load_options, new.origin = self.source, self.load_options, self.origin
        new._cache, new._key = self._cache, self._key
        new.semantic = self.semantic  # hybrid search goes on over the updated index
        with gc_paused():
            manifest = new._scan()
            old = self._parsed
            changes = diff(old.manifest, manifest) if old is not None else Changes()
            scope = (new.nested_bundles, new.excluded)
            if old is not None and not changes and (old.nested, old.excluded) == scope:
                # (an .okfignore edited alone changes what belongs to the bundle, with no
                # file of it changed: the live edit QA's reload saw it only by chance)
                return self
            updated = None if old is None else new._update(old, manifest, changes)
            if updated is None:
                parsed = new._parse_all(manifest)
                new._settle(parsed)
                new._attach_texts(parsed, later=True)
                new._install(parsed)
                new._save(parsed, later=True)
                return new
            new._settle(updated.parsed)
            new._attach_texts(updated.parsed, later=True, stale=self._texts_stale)
            new._install(updated.parsed)
            new.changes = changes
            with self._backlinks_lock:
                backlinks = self._backlinks
            if backlinks is not None:
                # A concept naming ids may link elsewhere now that another's id changed.
                replaced = updated.replaced | self._id_holders | new._id_holders
                before = [c for p, c in self._concepts.items() if p in replaced]
                after = [c for p, c in new._concepts.items() if p in replaced]
                new._backlinks = update_backlinks(backlinks, before, after)
            new._carry_index(self, content_changes(changes))
        new._save(updated.parsed, later=True)
        return new

    def _pinned(self, real_root: str) -> None:
        """Raise :class:`UnsafePath` when the root now resolves to ``real_root``, another
        place than the one loaded that okfx must not follow: a folder replaced by a
        symlink (security QA: a ``git pull`` committing the bundle folder as a symlink to
        ``../../secret`` made a reload serve that), or a symlinked root pointed outside
        the folder that holds the link. A symlinked root pointed at a sibling (``ln -sfn
        v2 current``) is followed."""
        if real_root == self.guard.real_root:
            return
        if self._root_link:
            holder = os.path.realpath(os.path.dirname(os.path.abspath(self.root)))
            if real_root.startswith(holder.rstrip("/") + "/"):
                return
        raise UnsafePath(
            f"bundle folder {self.root} now resolves to {real_root}, not where it was loaded "
            f"({self.guard.real_root}): okfx does not follow it; what it last read is served "
            "until the folder is back",
            path=str(self.root),
        )

    @property
    def unsettled(self) -> bool:
        """True when the last scan saw a file modified too recently to trust its stat:
        the next :meth:`reload` parses it again even if its stat is the same."""
        return self._parsed is not None and bool(self._parsed.manifest.racy)

    def _update(self, old: Parsed, manifest: Manifest, changes: Changes) -> Updated | None:
        """``old`` brought up to date; None when the whole bundle must be parsed: what
        belongs to it changed (a nested bundle or an exclusion, from an ``index.md``), or
        the walk counted more problems than it recorded."""
        scope = (self.nested_bundles, self.excluded)
        if self._walk_overflow or (old.nested, old.excluded) != scope:
            return None

        def reparse(paths: list[str]) -> Reparsed:
            return self._reparse([p for p in paths if self._parses(p)], manifest)

        limits = self.limits
        updated = update(
            old, manifest, changes, reparse, limits.max_total_bytes, limits.max_warnings
        )
        if updated is not None:
            updated.parsed.nested, updated.parsed.excluded = scope
        return updated

    def _carry_index(self, old: Bundle, dirty: frozenset[str]) -> None:
        """Bring ``old``'s search index (built, or stored) over to this bundle."""
        index = old._search_index  # one read: built, or not (yet)
        if index is not None:
            from okfx.search.live import updated

            name = self.name
            add = [(name, self._concepts[p]) for p in sorted(dirty) if p in self._concepts]
            self._search_index = updated(index, [(name, p) for p in dirty], add)
            self._save_index(self._search_index, later=True)
        elif old._index_plan is not None:
            generation, before = old._index_plan
            self._index_plan = (generation, before | dirty)

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

    def open_file(self, path: str) -> int:
        """A read-only descriptor of the file at the bundle path ``path`` (one of
        :attr:`files`; the caller closes it), opened below the root without following any
        symlink (see :class:`~okfx.bundle.paths.BeneathOpener`). Raises ``OSError`` when
        it is not there, not a regular file, or a folder on its way was swapped since the
        load."""
        return self._store.open(path)

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
        or ``tables/``) gives its ``index.md``, but ``a/b`` names the concept ``a/b.md``
        when there is one beside the folder ``a/b/`` (its concept ID, spec §2). When no
        path matches, a producer's ``id`` that one concept declares
        (``flutter.stateful_widget``) names that concept, as its relation keys do. Raises
        :class:`~okfx.errors.UnsafePath` for paths that would leave the bundle.
        """
        canon = normalize(path)
        trailing = isinstance(path, str) and path.endswith("/")
        if not canon.isascii():  # paths compare in Unicode NFC (see Resolver.known)
            canon = self._nfc_paths().get(unicodedata.normalize("NFC", canon), canon)
        if canon in self._dirs and (
            trailing or (canon not in self._files and canon + ".md" not in self._concepts)
        ):
            return self._indexes.get(canon)
        for candidate in (canon, canon + ".md"):
            found = self._document(candidate)
            if found is None and not candidate.isascii():
                nfc = unicodedata.normalize("NFC", candidate)
                found = self._document(self._nfc_paths().get(nfc, candidate))
            if found is not None:
                return found
        return self._by_declared_id(canon)

    def _by_declared_id(self, canon: str) -> Concept | None:
        """The one concept whose producer ``id`` key is ``canon`` less its leading ``/``
        (``flutter.stateful_widget``, as relation keys name concepts: okfx.bundle.idlinks),
        or None; only when no path matched, and never an id two concepts declare."""
        paths = self._declared().get(canon[1:])
        return self._concepts.get(paths[0]) if paths and len(paths) == 1 else None

    def _declared(self) -> dict[str, list[str]]:
        """Each producer ``id`` the concepts declare, and the paths declaring it."""
        ids = self._declared_ids
        if ids is None:  # two threads may both build it: the results are equal
            ids = self._declared_ids = declared_paths(self._concepts)
        return ids

    def wikilink_candidates(self, link: Link) -> list[str]:
        """The files an unresolved ``[[wikilink]]`` edge names when it names several
        (``ambiguous_wikilink``), sorted; ``[]`` for any other link."""
        if link.field != "wikilink" or link.exists or not self.wikilinks:
            return []
        wikis = self._wiki_index
        if wikis is None:  # two threads may both build it: the results are equal
            wikis = self._wiki_index = WikiIndex(self._files)
        target = link.href.removeprefix("[[").removesuffix("]]")
        return wikis.resolve(target, parent_dir(link.source))[1]

    def unresolved_ids(self, path: object) -> list[UnresolvedId]:
        """The relation values of the concept at ``path`` that name an id and draw no
        edge (``unknown_id``, ``ambiguous_id``: okfx.bundle.idlinks), in its order; ``[]``
        for a path that is no concept, or a concept that names no id."""
        concept = self.get(path)
        if not isinstance(concept, Concept) or not concept.id_refs:
            return []
        return unresolved_ids(concept, self._declared())

    def file_path(self, canon: str) -> str:
        """``canon``, or the path of the bundle file it names in another Unicode form
        (``café.md`` typed composed for a file named decomposed), as :meth:`get` reads
        concepts (security QA: read_resource did not)."""
        if canon in self._files or canon.isascii():
            return canon
        return self._nfc_paths().get(unicodedata.normalize("NFC", canon), canon)

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

    def as_now(self, concept: Concept) -> Concept | None:
        """``concept`` as its file holds it now: itself while the file is as loaded,
        else the file parsed again (every field and the body of one version, its links
        against the files the load saw), or None when it is gone or no longer a concept.
        A read between an author's save and the reload it starts (``okfx serve
        --watch``) had shown the loaded title over the new body, and a deleted file as
        a concept with an empty body (watch-mode QA)."""
        if not isinstance(concept, StoredConcept):
            return concept  # its texts are in memory, as loaded: nothing to mix
        store = self._store
        if store.stamp_now(concept) == concept.stamp or store.root_gone():
            return concept  # as loaded; a bundle whose folder went serves what it last read
        try:
            return self._parsed_now(concept.path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            if self.gone_now(concept.path):
                return None  # now a symlink, a folder or a FIFO: no file of the bundle (edit QA)
            return concept  # unreadable now (a folder swapped): its reads say so

    def gone_now(self, path: str) -> bool:
        """Whether the file at the bundle path ``path`` is gone since the load, or is a
        symlink, a folder or a FIFO now: no file of the bundle (False while the root itself
        is not the folder loaded, which serves what it last read)."""
        return self._store.gone_now(path)

    def whole_now(self, file: str) -> Concept | None:
        """The bundle file ``file``, which its load read as no concept (a frontmatter cut
        by a save half-written), parsed as it is now; None when it is still no concept,
        or is not a ``.md`` file the load read. Live edit QA: the file was whole again
        but read "not a concept (unterminated_frontmatter)" until the reload."""
        if not file.endswith(".md") or file not in self._files or file in self._skip:
            return None
        try:
            return self._parsed_now(file)
        except (OSError, ValueError):
            return None

    def _parsed_now(self, path: str) -> Concept | None:
        """The file at ``path`` read (below the root, within the size limit) and parsed as
        it is now: its concept, or None when it is no concept. Raises ``OSError`` or
        ``ValueError`` when it cannot be read."""
        data, _ = read_file(self._store.open(path), self.limits.max_file_bytes)
        return self._parser(lambda *_: None).concept(path, decode_text(data))

    def _parser(
        self, warn: Callable[[str, str, str], None], manifest: Manifest | None = None
    ) -> DocumentParser:
        """A parser of this bundle's documents against its current file set and what
        the walk of ``manifest`` (else of the last load) left out."""
        wikis = WikiIndex(self._files) if self.wikilinks else None
        if manifest is None and self._parsed is not None:
            manifest = self._parsed.manifest
        skipped = skipped_paths(manifest.walk_warnings) if manifest is not None else {}
        resolver = Resolver(set(self._files), set(self._dirs), skipped)
        return DocumentParser(resolver, self.limits, warn, wikis)

    @property
    def state_cached(self) -> bool:
        """Whether this bundle reads and stores the state cache (off: every process
        parses it and builds its index again)."""
        cache = self._cache
        return cache is not None and cache.usable(create=False) is not None

    def nested_root(self, path: str) -> str | None:
        """The root of the nested bundle (:attr:`nested_bundles`) that holds the bundle
        path ``path``, or None."""
        return next((r for r in self.nested_bundles if path.startswith(r.rstrip("/") + "/")), None)

    def nested_not_found(self, canon: str, what: str) -> NotFound | None:
        """The ``not_found`` for a path inside a nested bundle, which this bundle leaves
        out (agent QA, ultracart: /okf/ultracart_warehouse/index.md was "not found" with
        /index.md suggested, and nothing said it is a bundle of its own); else None."""
        root = self.nested_root(canon)
        if root is None:
            return None
        # No host path: an agent reads this (list_bundles does not name folders either).
        found = NotFound(
            f"no {what} at {canon} in bundle {self.name!r}: {root}/ is a bundle of its own "
            f"(its index.md declares okf_version), which okfx leaves out of this one. To "
            f"read it, the bundle's operator loads that folder as a bundle of its own "
            f"(okfx serve outer=FOLDER inner=FOLDER{root})",
            path=canon,
        )
        found.quoting_bundle()  # the folder's name is the bundle's
        return found

    def skipped_at(self, path: str) -> str | None:
        """Why the load does not read ``path``, when the walk left it or a folder above
        it out (a symlink out of the bundle, a FIFO...): ``/outdir: symlink points
        outside the bundle``; None otherwise (viewer QA: a link to such a symlink, and
        its page, read as a file that does not exist)."""
        parsed = self._parsed
        if parsed is None:
            return None
        known = self._skipped
        if known is None or known[0] is not parsed.manifest:  # once per load or reload
            known = self._skipped = (parsed.manifest, skipped_paths(parsed.manifest.walk_warnings))
        held = skipped_at(known[1], normalize(path))
        return None if held is None else f"{held[0]}: {held[1]}"

    def _not_found(self, path: object) -> NotFound:
        canon = normalize(path)
        file = next((p for p in (canon, canon + ".md") if p in self._files), None)
        nested = self.nested_not_found(canon, "concept") if file is None else None
        if nested is not None:
            return nested
        skipped = self.skipped_at(canon) if file is None else None
        fix = "copy the file into the bundle"
        if file is None and skipped is None:
            # new-producers QA: a .github.md page was a bare not_found
            skipped, fix = hidden_said(canon), "rename it without the dot"
        if skipped is not None:
            return NotFound(
                f"no concept at {canon} in bundle {self.name!r}: okfx does not read it "
                f"({skipped}); the bundle's author can {fix}",
                path=canon,
            )
        if file is None:
            # a path written from the repository root (/oks/kb/commits/index.md for
            # /commits/index.md): the document its last folders name comes first (docs
            # QA: an index page's had no suggestion, a concept's had)
            tail = self._tail_document(canon)
            close = self.suggest(canon)
            said = f"no concept at {canon} in bundle {self.name!r}"
            dropped = canon[: len(canon) - len(tail)] if tail else ""
            if dropped.rstrip("/").rpartition("/")[2] == self.root.name:
                # the folders above the bundle: say so (agent QA: every link of
                # git-best-practices is written that way, and a path copied from one
                # was a bare not_found)
                said += (
                    f": {canon} is written from the repository root ({dropped}/ is this "
                    f"bundle's own folder); in the bundle it is {tail}"
                )
            return NotFound(
                said,
                path=canon,
                suggestions=[tail, *(p for p in close if p != tail)] if tail else close,
            )
        # A file of the bundle that is no concept (a README.md without frontmatter, a
        # card the graph links to): say why, and how to read it, not only "not found".
        return NotFound(
            f"{file} is a file of bundle {self.name!r} but not a concept "
            f"({self._not_a_concept(file)}); read it as an attached file (read_resource)",
            path=file,
            file=file,
        )

    def _tail_document(self, canon: str) -> str | None:
        """The document (a concept, an index or a log) at ``canon`` less its first
        folders, the longest such tail first, or None."""
        parts = canon.strip("/").split("/")
        for start in range(1, len(parts)):
            tail = "/" + "/".join(parts[start:])
            if self.get(tail) is not None:
                return tail
        return None

    def _not_a_concept(self, file: str) -> str:
        """Why the bundle file ``file`` is no concept, in a few words."""
        if file in self._skip:
            return "left out by an exclude pattern or .okfignore"
        if not file.endswith(".md"):
            return "not a .md file"
        said = [w for w in self.warnings if w.path == file]
        # An error of §11 first; else what the load said of it (file_too_large: live edit
        # QA read "not loaded as one" for a file over the size limit).
        why = next((w for w in said if w.code in ERROR_CODES), said[0] if said else None)
        return f"{why.code}: {why.message}" if why is not None else "not loaded as one"

    def suggest(self, text: str, limit: int = 5, cutoff: float | None = None) -> list[str]:
        """Concept paths close to ``text`` by path, file name or title ("did you mean"),
        from an index made on the first call (:mod:`okfx.search.suggest`); ``cutoff``
        is the least similarity (difflib's 0.6 by default)."""
        names = self.names()
        found = names.suggest(text, limit) if cutoff is None else names.suggest(text, limit, cutoff)
        # Not a file that went since the load (edit QA: in the reload window a renamed
        # folder's old paths were offered, and reading one said it is gone).
        gone = getattr(self._store, "gone_now", None)
        return found if gone is None else [p for p in found if not gone(p)]

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

    def files_named(self, name: str) -> list[str]:
        """The bundle's files whose name (case-folded), or whose name less its extension,
        is ``name`` case-folded, in path order; from an index made on the first call."""
        leaves = self._leaves
        if leaves is None:
            leaves = {}
            for path in sorted(self._files):
                leaf = path.rsplit("/", 1)[-1].casefold()
                leaves.setdefault(leaf, []).append(path)
                stem, dot, _ = leaf.rpartition(".")
                if dot and stem:
                    leaves.setdefault(stem, []).append(path)
            self._leaves = leaves
        return leaves.get(name.casefold(), [])

    def name_words(self) -> WordIndex:
        """The words of the concepts' titles and file names (``EnvironmentConfig`` ->
        environment, config, environmentconfig), for respelling a query word no concept
        holds ("instrinsic" -> intrinsic). Built on first use."""
        found = self._name_words
        if found is not None:
            return found
        acquire(self._names_lock, "the name index, which is being built")
        try:
            if self._name_words is None:
                from okfx.search.suggest import WordIndex, name_words

                names = (f"{c.title} {c.path.rpartition('/')[2].rsplit('.', 1)[0]}" for c in self)
                self._name_words = WordIndex(word for name in names for word in name_words(name))
            return self._name_words
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
            backlinks=tuple(self.backlink_map().get(doc.path, ())),
            unresolved=tuple(link for link in doc.links if not link.exists),
        )

    def backlink_map(self) -> dict[str, list[Link]]:
        """Every link from a concept, by target (existing or not), in source path order;
        built on first use. Do not change it."""
        with self._backlinks_lock:
            if self._backlinks is None:
                backlinks: dict[str, list[Link]] = {}
                for concept in self._concepts.values():
                    for link in concept.links:
                        backlinks.setdefault(link.target, []).append(link)
                self._backlinks = backlinks
            return self._backlinks

    def listed_in(self, path: str) -> list[str]:
        """The ``index.md`` and ``log.md`` files that link ``path`` (not itself), sorted:
        links the concept graph leaves out (a backlink is a concept's), which a reader
        still follows to it. From a map built on first use."""
        with self._backlinks_lock:
            if self._listed is None:
                listed: dict[str, set[str]] = {}
                reserved: list[IndexFile | LogFile] = [
                    *self._indexes.values(),
                    *self._logs.values(),
                ]
                for file in reserved:
                    for link in file.links:
                        if link.exists and link.target != link.source:
                            listed.setdefault(link.target, set()).add(link.source)
                self._listed = {target: sorted(held) for target, held in listed.items()}
            return list(self._listed.get(path, ()))

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
    def search_index(self) -> Index:
        """The bundle's BM25F index: read back from the state cache, or built on first use
        (``Bundle.load`` stays lean). After a :meth:`reload` it is a
        :class:`~okfx.search.live.LiveIndex` until its delta is merged."""
        if self._search_index is not None:
            return self._search_index
        # a call with a budget waits for the build, on a thread of its own, only so long
        self._aside.run(self._build_search_index, "the search index, which is being built")
        assert self._search_index is not None
        return self._search_index

    def _build_search_index(self) -> Index:
        acquire(self._lock, "the search index, which is being built", build=True)
        try:
            if self._search_index is None:
                from okfx.search.index import SearchIndex

                index = self._index_from_cache()
                if index is None:
                    # Another process building this index stores it once: wait for it,
                    # then read it (platform QA: three agents' servers started together
                    # each spent the 13 s of a 10k build, two minutes at 100k).
                    cache = self._cache
                    with cache.lock(self._key) if cache is not None else nullcontext():
                        index = self._index_from_cache()
                        if index is None:
                            index = SearchIndex.build((self.name, c) for c in self)
                            self._save_index(index)
                self._search_index = index
            return self._search_index
        finally:
            self._lock.release()

    def enable_semantic(self, embedder: Any = None, **options: Any) -> Any:
        """Search this bundle with hybrid retrieval (BM25F and an embedding,
        :mod:`okfx.search.hybrid`); ``embedder`` defaults to the model ``okfx[semantic]``
        installs. ``options``: ``store``, ``max_concepts``, ``background``, ``progress``
        (:class:`okfx.search.hybrid.Semantic`). Encodes the concepts the vector store does
        not hold yet, now unless ``background``; returns the index's ranker. Raises
        :class:`okfx.errors.SemanticUnavailable` without the extra or over the cap."""
        from okfx.search.hybrid import Semantic

        self.semantic = Semantic(embedder, **options)
        return self.semantic.attach(self.search_index())

    def semantic_state(self) -> Any:
        """The vectors' :class:`okfx.search.hybrid.SemanticState` of this bundle's index
        (None before :meth:`enable_semantic`; after a reload, the base index's)."""
        ranker = getattr(self.search_index(), "ranker", None)
        return getattr(ranker, "state", None)

    def _index_from_cache(self) -> Index | None:
        """The stored index of this bundle's generation, or of the stored generation it
        was brought up from, updated with the files changed since."""
        cache, plan, parsed = self._cache, self._index_plan, self._parsed
        if cache is None or plan is None or parsed is None:
            return None
        from okfx.search.live import updated
        from okfx.search.saved import SEARCH_KIND, read_index

        with gc_paused(), cache.open(self._key, SEARCH_KIND) as file:
            if file is None:
                return None
            generation = file.meta.get("generation")
            if generation not in (parsed.generation, plan[0]):
                return None
            gone = [p for p in plan[1] if p not in self._concepts]  # the update drops them
            index = read_index(file, [(self.name, self._concepts)], gone)
        if index is None or generation == parsed.generation:
            return index
        dirty = plan[1]
        add = [(self.name, self._concepts[p]) for p in sorted(dirty) if p in self._concepts]
        name = index.bundles[0] if len(index.bundles) == 1 else self.name
        index = updated(index, [(name, p) for p in dirty], add)
        self._save_index(index, later=True)
        return index

    def _save_index(self, index: Index, later: bool = False) -> None:
        cache, parsed = self._cache, self._parsed
        if cache is None or parsed is None:
            return
        from okfx.search.saved import SEARCH_KIND, write_index

        meta = {"generation": parsed.generation}
        self._store_state(cache, SEARCH_KIND, lambda: write_index(index, meta), later)

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
        index = self.search_index()
        if self.semantic is not None:  # hybrid search (enable_semantic)
            self.semantic.attach(index)
        return index.search(query, limit, type, tags, **filters)

    def grep(self, pattern: str, regex: bool = False, **options: Any) -> GrepResults:
        """Deterministic substring (or RE2 regex) matches in titles, descriptions and
        bodies, with line numbers; options as :func:`okfx.search.grep.grep` takes them."""
        from okfx.search.grep import grep

        return grep(((self.name, c) for c in self), pattern, regex=regex, **options)
