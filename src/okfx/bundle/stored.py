"""Concepts whose body and frontmatter mapping stay in their file until asked for.

A loaded bundle keeps in memory what search, filters, facets and listings need: every
normalised field, the links, the body's first line. The body text and the raw frontmatter
mapping (together about four fifths of a concept) are read again from the concept's file
when :attr:`StoredConcept.body` or :attr:`StoredConcept.frontmatter` is read: one read and
a split (plus a YAML parse for the mapping), through the same guarded reader as the load.

The file's size and mtime at load are kept (:attr:`StoredConcept.stamp`). A file changed
since is read as it is now (re-parsed, with a debug log), so a body never comes from a
mix of two versions of one file; a file that is gone, unreadable or no longer a concept
gives an empty body and mapping (with one warning) until the bundle is reloaded
(:meth:`okfx.Bundle.reload`, or ``okfx serve --watch``). A body whose file is unchanged
comes from the texts the load kept (memory-mapped, so every worker process shares them)
rather than from the file; other recently read texts are kept in a small cache shared by
all bundles, keyed by file and stamp.

grep does not read the files: it searches the texts of the load (:attr:`FileStore.corpus`,
:mod:`okfx.bundle.texts`), and reads a file only to show the lines of a concept whose
file changed since (:meth:`StoredConcept.body_now`).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable
from itertools import repeat
from operator import attrgetter, call
from typing import Any

from okfx.bundle.frontmatter import FrontmatterError, load_repaired, split
from okfx.bundle.paths import PathGuard
from okfx.bundle.walk import decode_text, read_file
from okfx.limits import Limits
from okfx.model import Concept, Link
from okfx.search.corpus import Corpus, loaded_body

__all__ = [
    "CACHE_CHARS",
    "ENTRY_CHARS",
    "LAZY_FIELDS",
    "SLIM_FIELDS",
    "FileStore",
    "StoredConcept",
    "relinked",
    "slim",
    "stamp_of",
    "stored_builder",
]

logger = logging.getLogger("okfx")

#: The Concept fields read from the file on demand; every other field stays in memory.
LAZY_FIELDS = ("body", "frontmatter")
#: Characters of recently read texts kept (shared by every bundle of the process), each
#: entry charged :data:`ENTRY_CHARS` more for its key and bookkeeping. Every worker of
#: ``okfx serve --workers`` fills its own, so it holds the hot concepts only: a read of a
#: concept it holds saves a file read (136 against 171 us a ``read_concept`` at 10k), and
#: reads spread over a whole 10k bundle were no faster with an 8M budget than with none.
CACHE_CHARS = 1_000_000
ENTRY_CHARS = 256


def stamp_of(st: os.stat_result) -> int:
    """A file's size and mtime as one int (what a stored concept checks its file by)."""
    return st.st_mtime_ns << 40 | st.st_size & ((1 << 40) - 1)


class _Texts:
    """``(host, stamp) -> (yaml text, body)``, least recently used first, bounded. The
    body is None where the load's texts hold it (the file is as loaded): it is read
    from them, shared by every process, rather than kept here once per process."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.items: OrderedDict[tuple[str, int], tuple[str, str | None]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[str, int]) -> tuple[str, str | None] | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def put(self, key: tuple[str, int], value: tuple[str, str | None]) -> None:
        size = _chars(value)
        if size > self.budget // 4:
            return
        with self.lock:
            held = self.items.get(key)
            if held is not None and (held[1] is not None or value[1] is None):
                return
            if held is not None:  # the body too now, for a bundle without the texts
                self.used -= _chars(self.items.pop(key))
            self.items[key] = value
            self.used += size
            while self.used > self.budget:
                self.used -= _chars(self.items.popitem(last=False)[1])


def _chars(value: tuple[str, str | None]) -> int:
    return len(value[0]) + len(value[1] or "") + ENTRY_CHARS


_TEXTS = _Texts(CACHE_CHARS)


class FileStore:
    """Where the concepts of one load are read from: the bundle's real root, the host
    path of files that are symlinks (inside the root), and the limits of the load; and
    the texts of those concepts as loaded, for grep (``corpus``, when the load has them).
    Files are opened below the root without following a symlink (:meth:`open`), so a
    folder swapped for one since the load is never read through."""

    __slots__ = ("root", "hosts", "limits", "guard", "corpus", "_warned")

    def __init__(self, real_root: str, limits: Limits, hosts: dict[str, str] | None = None):
        self.root = real_root.rstrip("/") if real_root != "/" else ""
        self.hosts = hosts or {}
        self.limits = limits
        self.guard = PathGuard(real_root)
        self.corpus: Corpus | None = None
        self._warned: set[tuple[str, int]] = set()

    def host(self, path: str) -> str:
        return self.hosts.get(path) or self.root + path

    def open(self, path: str) -> int:
        """A descriptor of the file at the bundle path ``path`` (the caller closes it),
        opened as :class:`~okfx.bundle.paths.BeneathOpener` does; ``OSError`` when it is
        gone or a folder on its way is now a symlink."""
        return self.guard.open(self.host(path)[len(self.root) + 1 :])

    def gone_now(self, path: str) -> bool:
        """Whether the file at the bundle path ``path`` is gone from the folder loaded, or
        is no regular file now (a symlink, a folder, a FIFO). False when it is there, and
        when the root itself is no longer the folder loaded (a symlink now, or gone): the
        bundle then serves what it last read."""
        if self.root_gone() or os.path.realpath(self.root) != self.guard.real_root:
            return False
        try:
            return not stat.S_ISREG(os.lstat(self.host(path)).st_mode)
        except (OSError, ValueError):
            return True

    def body(self, concept: StoredConcept) -> str:
        """The concept's body as its file holds it now: the text the load kept
        (:attr:`corpus`, memory-mapped: shared by every process that maps it, and put in
        no cache) while the file has the stamp that text was read with, else read."""
        where = self._kept(concept)
        if where is not None:
            return loaded_body(concept, where)[0]
        return self.read_now(concept)[1]

    def _kept(self, concept: StoredConcept) -> tuple[Any, int] | None:
        """Where the load's texts hold the concept, when they read as stored."""
        where = None if self.corpus is None else self.corpus.locate(concept.path)
        return where if where is not None and where[0].intact(where[1]) else None

    def read_now(self, concept: StoredConcept, body: bool = True) -> tuple[str, str, int]:
        """The concept's frontmatter text, body (``""`` without ``body``) and file stamp
        as its file holds them now; ``("", "", -1)`` (and one warning) when it is gone or
        no longer a concept."""
        host = self.host(concept.path)
        try:
            current = stamp_of(os.stat(host))
        except OSError:
            current = -1
        found = _TEXTS.get((host, current))
        if found is not None and (found[1] is not None or not body):
            return found[0], found[1] or "", current
        try:
            data, st = read_file(self.open(concept.path), self.limits.max_file_bytes)
            yaml_text, text, _ = split(decode_text(data))
        except (OSError, ValueError, FrontmatterError) as exc:
            if isinstance(exc, OSError) and self.gone_now(concept.path):
                self._lost(concept, "is gone, or no longer a file, since the bundle was loaded")
            else:
                self._lost(concept, f"cannot be read again ({exc})")
            return "", "", -1
        if yaml_text is None:
            self._lost(concept, "has no frontmatter any more")
            return "", "", -1
        current = stamp_of(st)
        if current != concept.stamp:
            logger.debug("okfx: %s changed since the bundle was loaded; read as it is now", host)
        where = self._kept(concept)
        kept = where is not None and where[0].stamp(where[1]) == current
        _TEXTS.put((host, current), (yaml_text, None if kept else text))
        return yaml_text, text, current

    def root_gone(self) -> bool:
        """Whether the bundle's folder is gone (a branch switched, a sync replacing it):
        the bundle then serves what it last read, until a reload can read it again."""
        return not os.path.isdir(self.root or "/")

    def stamp_now(self, concept: StoredConcept) -> int:
        """The stamp of the concept's file now; -1 when it cannot be read."""
        try:
            return stamp_of(os.stat(self.host(concept.path)))
        except OSError:
            return -1

    def body_now(self, concept: StoredConcept, stamp: int) -> tuple[str, int] | None:
        """None when the concept's file still has ``stamp``, else its body and the file
        line the body starts on as the file holds them now (empty when it is gone)."""
        if stamp >= 0 and (self.stamp_now(concept) == stamp or self.root_gone()):
            return None  # as loaded; a bundle whose folder went serves what it last read
        yaml_text, body, _ = self.read_now(concept)
        return body, yaml_text.count("\n") + 3  # as frontmatter.split counts it

    def _lost(self, concept: StoredConcept, why: str) -> None:
        if not os.path.isdir(self.root or "/"):
            # the bundle's whole folder is gone (moved, unmounted): one line for it, not
            # one per concept read (viewer QA: a line for every page viewed)
            if ("", 0) not in self._warned:
                self._warned.add(("", 0))
                logger.warning(
                    "okfx: the bundle folder %s cannot be read (%s); until it is back and "
                    "reloaded, each concept's text is served as the load kept it",
                    self.root,
                    why,
                )
            return
        key = (concept.path, concept.stamp)
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(
                # Not "reads as empty": the text the load kept is served where it has one
                # (author QA: the log said empty while reads served the whole body); and the
                # tools answer not_found for a file gone (edit QA: the line said otherwise)
                "okfx: the file of concept %s %s; until the bundle is reloaded, read_concept "
                "answers not_found or reads it as it is now, and Concept.body gives what the "
                "load kept of it (an empty body if it kept nothing)",
                concept.path,
                why,
            )

    def may_contain(self, concept: StoredConcept, needle: str, ignore_case: bool) -> bool:
        """False only when the concept's body cannot contain ``needle`` (casefolded when
        ``ignore_case``): one read of the file's bytes, no decoding. A grep over every
        concept asks this first and reads the texts of the few that may match."""
        if "\n" in needle or "\r" in needle:
            return True  # the file's line endings may differ from the text's
        try:
            data, _ = read_file(self.open(concept.path), self.limits.max_file_bytes)
        except (OSError, ValueError):
            return True  # let the body read report it
        if not ignore_case:
            return needle.encode("utf-8", "surrogatepass") in data
        if needle.isascii() and data.isascii():
            return needle.encode() in data.lower()
        return True

    def frontmatter(self, concept: StoredConcept) -> dict[str, Any]:
        yaml_text, _, _ = self.read_now(concept, body=False)
        if not yaml_text:
            return {}
        try:
            data = load_repaired(yaml_text, self.limits)[0]  # as the load read it
        except FrontmatterError:
            return {}
        return data if isinstance(data, dict) else {}


class StoredConcept(Concept):
    """A :class:`~okfx.model.Concept` whose ``body`` and ``frontmatter`` are read from its
    file when asked for (see the module docstring). Read-only like every concept."""

    __slots__ = ("_store", "stamp")

    _store: FileStore
    stamp: int

    @property
    def body(self) -> str:  # type: ignore[override]
        return self._store.body(self)

    @property
    def frontmatter(self) -> dict[str, Any]:  # type: ignore[override]
        return self._store.frontmatter(self)

    @property
    def corpus(self) -> Corpus | None:
        """The texts of the load that made this concept (``okfx.search.grep`` searches
        them), or None without them."""
        return self._store.corpus

    def body_now(self, stamp: int) -> tuple[str, int] | None:
        """See :meth:`FileStore.body_now` (``okfx.search.grep`` asks it)."""
        return self._store.body_now(self, stamp)

    def body_may_contain(self, needle: str, ignore_case: bool = False) -> bool:
        """See :meth:`FileStore.may_contain` (``okfx.search.grep`` asks it)."""
        return self._store.may_contain(self, needle, ignore_case)

    def __reduce__(self) -> tuple[Callable[[tuple[Any, ...]], Concept], tuple[Any, ...]]:
        # A copy made elsewhere is a plain Concept holding the texts read now.
        values = tuple([getattr(self, name) for name in Concept.__slots__])
        return _plain, (values,)


def _plain(values: tuple[Any, ...]) -> Concept:
    return Concept(**dict(zip(Concept.__slots__, values, strict=True)))


#: The in-memory fields of a stored concept, in ``Concept.__slots__`` order.
SLIM_FIELDS = tuple(name for name in Concept.__slots__ if name not in LAZY_FIELDS)
_SLIM_SETTERS = [vars(Concept)[name].__set__ for name in SLIM_FIELDS]
_SET_STORE = vars(StoredConcept)["_store"].__set__
_SET_STAMP = vars(StoredConcept)["stamp"].__set__


def stored_builder(store: FileStore, stamps: dict[str, int]) -> Callable[[tuple[Any, ...]], Any]:
    """Makes a :class:`StoredConcept` from its :data:`SLIM_FIELDS` values (``path``
    first among them), with its file's stamp looked up in ``stamps``."""
    new = object.__new__
    setters = _SLIM_SETTERS

    def make(values: tuple[Any, ...]) -> StoredConcept:
        concept: StoredConcept = new(StoredConcept)
        any(map(call, setters, repeat(concept), values))
        _SET_STORE(concept, store)
        _SET_STAMP(concept, stamps.get(values[0], -1))
        return concept

    return make


_slim_values = attrgetter(*SLIM_FIELDS)


def slim(concept: Concept, store: FileStore, stamp: int) -> StoredConcept:
    """``concept`` as a :class:`StoredConcept` reading its texts through ``store``."""
    stored: StoredConcept = object.__new__(StoredConcept)
    any(map(call, _SLIM_SETTERS, repeat(stored), _slim_values(concept)))
    _SET_STORE(stored, store)
    _SET_STAMP(stored, stamp)
    return stored


_SET_LINKS = vars(Concept)["links"].__set__


def relinked(concept: Concept, links: tuple[Link, ...]) -> Concept:
    """``concept`` with ``links`` for its links (a stored one still reads its texts
    through its store); every other field is the same object."""
    if isinstance(concept, StoredConcept):
        copy: Concept = slim(concept, concept._store, concept.stamp)
    else:
        copy = Concept(**{name: getattr(concept, name) for name in Concept.__slots__})
    _SET_LINKS(copy, links)
    return copy
