"""Incremental reload: parse again only the files that changed, and what depends on them.

Given the parsed state of a bundle and a new stat scan (:mod:`okfx.bundle.state`), the
files are sorted into changed, added and removed by their stat (size, mtime, ctime,
inode, host path). What is parsed again:

- every markdown file that changed or was added;
- when files or folders were added or removed, every document (concept or reserved
  file) holding a link that could resolve differently now: a link's target depends on
  which files and folders exist (``b.md`` tries the file's folder, then the root; a
  folder link reads its ``index.md``; ``x`` may mean ``x.md``), and always ends in a name
  taken from the link itself, so a link can only be affected by a path whose name (less
  ``.md``) appears in its href, or, for an ``index.md``, by a link to a folder. Names
  and hrefs are compared in Unicode NFC and case-folded, as wikilinks resolve (``[[Foo]]``
  finds ``foo.md``) and a link spelled in NFD finds a file named in NFC. A ``[[wikilink]]``
  that matched several files made no link to read a name from, so a document holding one
  (``ambiguous_wikilink``) is parsed again whenever files come or go.

The result equals a fresh load of the bundle: the same concepts, links, warnings (in the
same order), backlinks and ``okf_version``; the property test in ``tests/test_reload.py``
holds it to that. Past ``Limits.max_warnings`` each file's unlisted problems are
counted by file, so a reload replaces a changed file's counts and keeps the others'; a
file whose problems a fresh load would now list (one before it lost some) is parsed
again for their messages. A load that a limit cut short (``max_files``,
``max_total_bytes``, a size cap) is never updated, only loaded again whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TypeVar
from unicodedata import normalize
from urllib.parse import unquote

from okfx.bundle.problems import kept_past
from okfx.bundle.state import Manifest, Parsed, okf_version_of
from okfx.model import Concept, IndexFile, Link, LogFile, Problem

__all__ = [
    "Changes",
    "Reparsed",
    "Updated",
    "content_changes",
    "diff",
    "update",
    "update_backlinks",
]

Document = Concept | IndexFile | LogFile
_D = TypeVar("_D", Concept, IndexFile, LogFile)
_path = attrgetter("path")
_folder = attrgetter("directory")
_source = attrgetter("source")


@dataclass
class Changes:
    """What differs between two scans of one bundle."""

    changed: list[str] = field(default_factory=list)
    # same stat, but modified too recently at the last scan to trust it: read again
    rechecked: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    dirs_added: list[str] = field(default_factory=list)
    dirs_removed: list[str] = field(default_factory=list)
    walk_changed: bool = False
    #: A bundle read whole again (an exclusion or a nested bundle changed what belongs to
    #: it): its concepts before and after, which the file counts do not tell.
    whole: tuple[int, int] | None = None

    def __bool__(self) -> bool:
        return bool(
            self.changed
            or self.rechecked
            or self.added
            or self.removed
            or self.dirs_added
            or self.dirs_removed
            or self.walk_changed
        )

    @property
    def files(self) -> int:
        return len(self.changed) + len(self.added) + len(self.removed)

    def summary(self) -> str:
        if self.whole is not None and not self.files:
            before, after = self.whole
            counts = f"{after} concept{'' if after == 1 else 's'}"
            counts += f", {before} before" if before != after else ""
            return f"read whole again: {counts}"
        text = f"{len(self.changed)} changed, {len(self.added)} added, {len(self.removed)} removed"
        return text + (f", {len(self.rechecked)} read again" if self.rechecked else "")


def diff(old: Manifest, new: Manifest) -> Changes:
    """The changes from ``old`` to ``new``; a file ``old`` recorded as racy is changed."""
    before = old.by_path()
    after = new.by_path()
    racy = old.racy
    changes = Changes()
    for path, seen in after.items():
        was = before.get(path)
        if was is None:
            changes.added.append(path)
        elif was != seen:
            changes.changed.append(path)
        elif path in racy:
            changes.rechecked.append(path)
    changes.removed = [p for p in before if p not in after]
    old_dirs, new_dirs = set(old.dirs), set(new.dirs)
    changes.dirs_added = sorted(new_dirs - old_dirs)
    changes.dirs_removed = sorted(old_dirs - new_dirs)
    changes.walk_changed = old.walk_warnings != new.walk_warnings
    return changes


def content_changes(changes: Changes) -> frozenset[str]:
    """The markdown files whose content changed, appeared or went."""
    paths = (*changes.changed, *changes.rechecked, *changes.added, *changes.removed)
    return frozenset(p for p in paths if p.endswith(".md"))


@dataclass
class Reparsed:
    """What parsing a set of files gave: documents by path and warnings by file."""

    concepts: dict[str, Concept]
    indexes: dict[str, IndexFile]  # by folder
    logs: dict[str, LogFile]  # by folder
    warnings: dict[str, list[Problem]]
    complete: bool
    # problems counted but not kept (past max_warnings), by file, then by code
    overflow: dict[str, dict[str, int]] = field(default_factory=dict)


Reparse = Callable[[list[str]], Reparsed]


def _fold(text: str) -> str:
    """``text`` as names are compared: NFC, case-folded."""
    return text.casefold() if text.isascii() else normalize("NFC", text).casefold()


def _names(paths: Iterable[str]) -> tuple[set[str], bool]:
    """The names (folded, :func:`_fold`) a link must mention to be affected by ``paths``
    appearing or going, and whether a folder's ``index.md`` (or a folder) is among them."""
    names: set[str] = set()
    folders = False
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        if name == "index.md" or "." not in name:
            folders = True
        names.add(_fold(name.removesuffix(".md")))
        parent = path.rsplit("/", 1)[0].rsplit("/", 1)[-1]
        if name == "index.md" and parent:
            names.add(_fold(parent))
    names.discard("")
    return names, folders


def _may_change(href: str, names: set[str], folders: bool) -> bool:
    text = _fold(unquote(href.split("#", 1)[0].split("?", 1)[0]).strip().strip("<>"))
    if folders:
        last = text.rstrip("/").rsplit("/", 1)[-1]
        if text.endswith("/") or last in ("", ".", ".."):
            return True
    return any(name in text for name in names)


def _hrefs(doc: Document) -> Iterable[str]:
    yield from (link.href for link in doc.links)
    if isinstance(doc, IndexFile):
        for section in doc.sections:
            yield from (entry.href for entry in section.entries)


def affected(parsed: Parsed, changes: Changes) -> list[str]:
    """Paths of documents whose links may resolve differently after ``changes``."""
    moved = [*changes.added, *changes.removed, *changes.dirs_added, *changes.dirs_removed]
    if not moved:
        return []
    names, folders = _names(moved)
    docs: list[Document] = [
        *parsed.concepts.values(),
        *parsed.indexes.values(),
        *parsed.logs.values(),
    ]
    unsure = _ambiguous(parsed)
    return [
        doc.path
        for doc in docs
        if doc.path in unsure or any(_may_change(h, names, folders) for h in _hrefs(doc))
    ]


def _ambiguous(parsed: Parsed) -> set[str]:
    """The files holding a ``[[wikilink]]`` that matched several files (it made no link)."""
    code = "ambiguous_wikilink"
    found = {
        path for path, kept in parsed.file_warnings.items() if any(p.code == code for p in kept)
    }
    found.update(path for path, counted in parsed.file_overflow.items() if counted.get(code))
    return found


@dataclass
class Updated:
    """A parsed state brought up to date, and the files whose documents were replaced
    (removed or parsed again)."""

    parsed: Parsed
    replaced: set[str]


def update(
    old: Parsed,
    manifest: Manifest,
    changes: Changes,
    reparse: Reparse,
    max_bytes: int,
    max_warnings: int,
) -> Updated | None:
    """The parsed state after ``changes`` (see the module docstring); None when the old
    state is incomplete or the new scan hit a limit (``max_files``, or more than
    ``max_bytes`` of markdown), so the bundle must be loaded whole."""
    if not old.complete or _limited(manifest.walk_warnings):
        return None
    pairs = zip(manifest.paths, manifest.sizes(), strict=True)
    if sum(size for path, size in pairs if path.endswith(".md")) > max_bytes:
        return None
    files = set(manifest.paths)
    markdown = [
        p for p in [*changes.changed, *changes.rechecked, *changes.added] if p.endswith(".md")
    ]
    todo = set(markdown) | {p for p in affected(old, changes) if p in files}
    gone = set(changes.removed) | todo
    fresh = reparse(sorted(todo))
    if not fresh.complete:
        return None
    warnings = {p: w for p, w in old.file_warnings.items() if p not in gone}
    warnings.update(fresh.warnings)
    overflow = {p: n for p, n in old.file_overflow.items() if p not in gone}
    overflow.update(fresh.overflow)
    # Past max_warnings, a file whose problems were only counted may be listed now (one
    # before it lost problems): parse it again for its messages.
    refill = _unlisted(warnings, overflow, max_warnings)
    if refill:
        more = reparse(refill)
        if not more.complete:
            return None
        for path in refill:
            warnings.pop(path, None)
            overflow.pop(path, None)
        gone.update(refill)
        warnings.update(more.warnings)
        overflow.update(more.overflow)
        for name in ("concepts", "indexes", "logs"):
            getattr(fresh, name).update(getattr(more, name))
    concepts = _merged(old.concepts, gone, fresh.concepts, _path)
    indexes = _merged(old.indexes, gone, fresh.indexes, _folder)
    logs = _merged(old.logs, gone, fresh.logs, _folder)
    warnings, overflow = _settled(warnings, overflow, max_warnings)
    parsed = Parsed(
        manifest=manifest,
        concepts=concepts,
        indexes=indexes,
        logs=logs,
        file_warnings=warnings,
        okf_version=okf_version_of(indexes),
        complete=True,
        file_overflow=overflow,
    )
    return Updated(parsed, gone)


def _unlisted(
    warnings: Mapping[str, list[Problem]], overflow: Mapping[str, dict[str, int]], cap: int
) -> list[str]:
    """Files with problems only counted that a fresh load would reach while it still
    lists problems (counting what the files before them list, at least)."""
    kept, found = 0, []
    for path in sorted({*warnings, *overflow}):
        counted = overflow.get(path)
        if counted and any(kept_past(code, kept, cap) for code in counted):
            found.append(path)
        for problem in warnings.get(path, ()):
            if kept_past(problem.code, kept, cap):
                kept += 1
    return found


def _settled(
    warnings: Mapping[str, list[Problem]], overflow: Mapping[str, dict[str, int]], cap: int
) -> tuple[dict[str, list[Problem]], dict[str, dict[str, int]]]:
    """The problems a fresh load keeps, file by file in path order, and the counts of the
    rest by file (as :meth:`okfx.bundle.Bundle._reparse` splits them)."""
    kept_by_file: dict[str, list[Problem]] = {}
    counted: dict[str, dict[str, int]] = {p: dict(n) for p, n in overflow.items()}
    kept = 0
    for path in sorted(warnings):
        listed = []
        for problem in warnings[path]:
            if kept_past(problem.code, kept, cap):
                listed.append(problem)
                kept += 1
            else:
                counts = counted.setdefault(path, {})
                counts[problem.code] = counts.get(problem.code, 0) + 1
        if listed:
            kept_by_file[path] = listed
    return kept_by_file, {p: counted[p] for p in sorted(counted)}


def _limited(warnings: Iterable[Problem]) -> bool:
    return any(w.code == "too_many_files" for w in warnings)


def _merged(
    old: Mapping[str, _D], gone: set[str], fresh: Mapping[str, _D], key: Callable[[_D], str]
) -> dict[str, _D]:
    """``old`` without the documents of ``gone`` files, plus ``fresh``, in path order (as
    a fresh load has them), keyed by ``key`` (the path, or the folder of a reserved file)."""
    kept: list[_D] = [doc for doc in old.values() if doc.path not in gone]
    if fresh:
        kept.extend(fresh.values())
        kept.sort(key=_path)
    return {key(doc): doc for doc in kept}


def update_backlinks(
    old: Mapping[str, list[Link]], before: Iterable[Concept], after: Iterable[Concept]
) -> dict[str, list[Link]]:
    """Backlinks after the concepts ``before`` were replaced by ``after`` (either side may
    lack some); lists of other targets are shared with ``old``. A fresh load lists a
    target's backlinks by source path, each source's links in their order: so do these."""
    sources = {c.path for c in before} | {c.path for c in after}
    added: dict[str, list[Link]] = {}
    targets: set[str] = set()
    for concept in before:
        targets.update(link.target for link in concept.links)
    for concept in after:
        for link in concept.links:
            added.setdefault(link.target, []).append(link)
    targets.update(added)
    backlinks = dict(old)
    for target in targets:
        links = [link for link in old.get(target, ()) if link.source not in sources]
        links.extend(added.get(target, ()))
        links.sort(key=_source)
        if links:
            backlinks[target] = links
        else:
            backlinks.pop(target, None)
    return backlinks
