"""KnowledgeManager: several named bundles served together, with access events.

A manager owns the bundles an agent can read, the combined search (one index over every
bundle, with shared statistics), the ``<knowledge>`` prompt block, and the access-event
callbacks the tools fire. ``Toolbox(bundle)`` wraps a single bundle in a manager.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from okfx.bundle.bundle import Bundle, folder_name, told_apart
from okfx.bundle.reload import Changes, content_changes
from okfx.deadline import Aside, acquire
from okfx.errors import InvalidArgument, NotFound, OKFError
from okfx.search.suggest import closest
from okfx.statecache import StateCache

__all__ = ["AccessEvent", "Changes", "KnowledgeManager"]

logger = logging.getLogger("okfx")

AccessEvent = dict[str, Any]
Callback = Callable[[AccessEvent], Any]


class KnowledgeManager:
    """Named, read-only bundles plus the settings the tools and prompt use."""

    def __init__(
        self,
        bundles: Iterable[Bundle] = (),
        *,
        max_body_chars: int = 8000,
        index_char_budget: int = 4000,
    ) -> None:
        self._bundles: dict[str, Bundle] = {}
        self.max_body_chars = max_body_chars
        self.index_char_budget = index_char_budget
        self._callbacks: list[Callback] = []
        self._lock = threading.Lock()
        self._aside = Aside()  # the combined index's build, for a call with a budget
        self._combined: Any = None
        self._reload_lock = threading.Lock()
        self._reload_failures: dict[str, str] = {}
        self._refresh_failures: dict[str, str] = {}
        self._unavailable: dict[str, str] = {}
        self.ranker: Any = None  # the override seam: see ``search``
        self.semantic: Any = None  # hybrid search settings: see ``enable_semantic``
        #: How the bundles are reloaded, for what a read of an edited file tells an agent
        #: (:data:`okfx.tools.notices.RELOADS`): "watch" (a Watcher reloads them when their
        #: files change), "operator" (someone must ask: okfx serve --workers, SIGHUP),
        #: "never" (a server that reads them once), None (unknown: a library's caller).
        self.reloads: str | None = None
        for bundle in bundles:
            self.add(bundle)

    @classmethod
    def from_paths(
        cls,
        sources: Iterable[Any] | Mapping[str, Any],
        *,
        refresh: bool = False,
        max_body_chars: int = 8000,
        index_char_budget: int = 4000,
        cache_dir: str | os.PathLike[str] | None = None,
        timeout: float = 30.0,
        state_cache: str | os.PathLike[str] | bool | None = None,
        exclude: Sequence[str] = (),
        wikilinks: bool = False,
    ) -> KnowledgeManager:
        """Load every source: folders, git URLs, :class:`GitSource`s, archives or Bundles.

        Pass a mapping ``{name: source}`` (or ``(name, source)`` pairs) to name bundles
        yourself; otherwise each takes its default name (the folder name). Two folders of
        one name (``AV-OKF/knowledge``, ``okf-poc/knowledge``) are named by their parent
        folders too (``AV-OKF-knowledge``), as the CLI names them, and said in the
        ``okfx`` log.
        ``state_cache``, ``exclude`` and ``wikilinks`` are passed to :meth:`Bundle.load`
        (see :mod:`okfx.statecache`).
        """
        from okfx.sources.spec import FetchOnce

        manager = cls(max_body_chars=max_body_chars, index_char_budget=index_char_budget)
        items = list(sources.items() if isinstance(sources, Mapping) else sources)
        fetched = FetchOnce()  # a source refreshed once serves its other folders
        folders = told_apart(
            Path(item).resolve()
            for item in items
            if isinstance(item, str | os.PathLike) and os.path.isdir(item)
        )
        for item in items:
            name, source = item if isinstance(item, tuple) else (None, item)
            if name is None and isinstance(source, str | os.PathLike) and folders:
                name = folders.get(Path(source).resolve()) if os.path.isdir(source) else None
                if name is not None:
                    logger.warning(
                        "two folders are named %r; naming %s %r (pass {name: source} to "
                        "name bundles yourself)", folder_name(Path(source).resolve()),
                        os.fspath(source), name,
                    )  # fmt: skip
            if isinstance(source, Bundle):
                manager.add(source, name=name)
                continue
            bundle = Bundle.load(
                source,
                name,
                cache_dir=cache_dir,
                refresh=fetched.refresh(source, refresh),
                timeout=timeout,
                state_cache=state_cache,
                exclude=exclude,
                wikilinks=wikilinks,
            )
            manager.add(bundle)
        return manager

    # -- bundles ---------------------------------------------------------------------------
    def add(self, bundle: Bundle, name: str | None = None) -> Bundle:
        """Serve ``bundle`` (under ``name`` when given); names must be unique. ``name``
        renames the Bundle object itself: one object is served under one name (load a
        bundle twice to serve it under two)."""
        if name is not None and name != bundle.name:
            bundle.name = name
        with self._lock:
            if bundle.name in self._bundles:
                raise ValueError(
                    f"two bundles are named {bundle.name!r}; pass name= to tell them apart, "
                    "e.g. KnowledgeManager.from_paths({'sales': path1, 'ops': path2})"
                )
            # A new dict, never changed in place: a reader holding the old one keeps it.
            self._bundles = {**self._bundles, bundle.name: bundle}
            self._combined = None
        if self.semantic is not None:
            bundle.semantic = self.semantic
        return bundle

    def replace(self, bundle: Bundle) -> None:
        """Serve ``bundle`` instead of the bundle of the same name (a source fetched
        again); a tool call in flight keeps the one it started with."""
        with self._lock:
            if bundle.name not in self._bundles:
                raise NotFound(f"no bundle named {bundle.name!r} to replace", path=bundle.name)
            self._bundles = {**self._bundles, bundle.name: bundle}
            self._combined = None

    @property
    def bundles(self) -> dict[str, Bundle]:
        """The bundles by name, in the order they were added."""
        return dict(self._bundles)

    @property
    def names(self) -> list[str]:
        return list(self._bundles)

    def __len__(self) -> int:
        return len(self._bundles)

    def bundle(self, name: str | None = None) -> Bundle:
        """The bundle called ``name``; with one bundle, ``None`` selects it."""
        if name is None or name == "":
            if len(self._bundles) == 1:
                return next(iter(self._bundles.values()))
            raise InvalidArgument(  # an argument missing: no bundle is missing
                f"{len(self._bundles)} bundles are loaded; pass bundle= one of "
                + ", ".join(map(repr, self.names))
            )
        found = self._bundles.get(name)
        if found is None:  # "OPS" for ops: the one bundle of that name in any case
            same = [b for key, b in self._bundles.items() if key.casefold() == name.casefold()]
            found = same[0] if len(same) == 1 else None
        if found is None:
            near = closest(name, self.names)  # the closest first, then the others
            raise NotFound(
                f"no bundle named {name!r}; loaded bundles: " + ", ".join(map(repr, self.names)),
                path=name,
                suggestions=near + [other for other in self.names if other not in near],
            )
        return found

    # -- prompt and search -----------------------------------------------------------------
    def prompt(self, tool_names: Mapping[str, str] | None = None) -> str:
        """The ``<knowledge>`` block: the workflow and each bundle's root index;
        ``tool_names``: the tools offered, each to the name the model sees it by (a
        framework's prefix), when that is not every tool by its own name."""
        from okfx.tools.prompt import render_prompt

        return render_prompt(
            self._bundles.values(),
            self.index_char_budget,
            tool_names,
            unavailable=len(self._unavailable),
        )

    def prepare_search(self, *, finish: bool = False) -> None:
        """Build (or read back from the state cache) the index that :meth:`search`
        across the bundles uses, now instead of on the first search: the bundle's own
        with one bundle, the combined index with several. ``okfx serve`` runs it in a
        background thread as it starts; a search meanwhile waits for it to finish.
        ``finish`` also computes what the index leaves to a term's first search
        (:meth:`~okfx.search.index.SearchIndex.finish_pending`), before a fork."""
        if len(self._bundles) == 1:
            index = next(iter(self._bundles.values())).search_index()
        elif self._bundles:
            with self._lock:
                if self._combined is None:
                    self._combined = self._combined_index()
                index = self._combined
        else:
            return
        if finish:
            index.finish_pending()
        if self.semantic is not None:  # hybrid search: its vectors too
            self.semantic.attach(index)

    def search(
        self,
        query: str,
        limit: int = 10,
        type: str | None = None,
        tags: list[str] | None = None,
        *,
        bundle: str | None = None,
        **filters: Any,
    ) -> Any:
        """Ranked hits across every bundle (one combined index, shared statistics), or
        within ``bundle`` (that bundle's own index).

        The override seam: set ``manager.ranker`` to an object with the same ``search``
        signature (a :class:`okfx.search.ranking.Ranker`) to plug in embeddings or hybrid retrieval.
        """
        if self.ranker is not None:
            from okfx.search.index import SearchHit, SearchResults, hit_dicts

            found = self.ranker.search(
                query, bundle=bundle, limit=limit, type=type, tags=tags, **filters
            )
            if isinstance(found, SearchResults):
                return found
            hits = [SearchHit(**hit) for hit in hit_dicts(found, max(limit, 1))]
            return SearchResults(query, hits, {}, "", "ranker")
        if bundle is not None:
            return self.bundle(bundle).search(query, limit, type, tags, **filters)
        if len(self._bundles) == 1:
            return next(iter(self._bundles.values())).search(query, limit, type, tags, **filters)
        index = self._combined
        if index is None:
            # a call with a budget waits for the build, on a thread of its own, only so long
            self._aside.run(self._build_combined, "the search index, which is being built")
            index = self._combined
        if self.semantic is not None:
            self.semantic.attach(index)
        return index.search(query, limit=limit, type=type, tags=tags, **filters)

    def missing_words(
        self, query: str, *, bundle: str | None = None, within: str | None = None
    ) -> tuple[str, ...]:
        """The words of ``query`` that no concept holds, in the index :meth:`search`
        ranks in (none under a plug-in ranker, whose vocabulary okfx does not know);
        ``within``: no concept of that bundle, in the index of every bundle. Call it after
        a search: it uses the index that search built."""
        if self.ranker is not None or not self._bundles:
            return ()
        if bundle is not None:
            index = self.bundle(bundle).search_index()
        elif len(self._bundles) == 1:
            index = next(iter(self._bundles.values())).search_index()
        else:
            index = self._combined
        return () if index is None else tuple(index.missing_words(query, within))

    def enable_semantic(self, embedder: Any = None, **options: Any) -> Any:
        """Search with hybrid retrieval (BM25F and an embedding), for every bundle and
        the combined index, in :meth:`search` and so in the ``search_concepts`` tool of
        every adapter. ``embedder`` and ``options`` as :meth:`Bundle.enable_semantic`
        takes them; vectors are built when an index is first searched (or prepared),
        in the background with ``background=True``. Raises
        :class:`okfx.errors.SemanticUnavailable` without ``okfx[semantic]``."""
        from okfx.search.hybrid import Semantic

        self.semantic = Semantic(embedder, **options)
        for bundle in self._bundles.values():
            bundle.semantic = self.semantic
        return self.semantic

    def _build_combined(self) -> None:
        acquire(self._lock, "the search index, which is being built", build=True)
        try:
            if self._combined is None:
                self._combined = self._combined_index()
        finally:
            self._lock.release()

    def _combined_index(self) -> Any:
        """The index over every bundle: read back from the bundles' state cache when
        they all use the same one and none changed, else built (and then stored)."""
        from okfx.gcpause import gc_paused
        from okfx.search.index import SearchIndex
        from okfx.search.saved import SEARCH_KIND, read_index, write_index

        bundles = sorted(self._bundles.values(), key=lambda b: b.name)
        shared = _shared_state(bundles)
        if shared is None:
            return SearchIndex.build((b.name, c) for b in bundles for c in b)
        cache, key, generation = shared

        def stored() -> Any:
            with gc_paused(), cache.open(key, SEARCH_KIND) as file:
                if file is not None and file.meta.get("generation") == generation:
                    return read_index(file, [(b.name, b._concepts) for b in bundles])
            return None

        index = stored()
        if index is not None:
            return index
        # Another process building this index stores it once: wait for it, then read it
        # (platform QA: four agents' servers started together on three bundles each built
        # it, and every first search answered timeout), as a bundle's own index does.
        with cache.lock(key):
            index = stored()
            if index is None:
                index = SearchIndex.build((b.name, c) for b in bundles for c in b)
                cache.store(key, SEARCH_KIND, write_index(index, {"generation": generation}))
        return index

    # -- reloading ---------------------------------------------------------------------------
    def reload(self) -> dict[str, Changes]:
        """Reload every bundle (:meth:`Bundle.reload`, parsing only what changed) and swap
        the changed ones in at once, with the combined index brought up to date; a tool
        call in flight keeps the bundles it started with. Returns what changed, by bundle
        name (a bundle loaded whole again maps to :class:`Changes` with only ``whole``:
        its concept counts before and after).

        A bundle that cannot be read now (its folder is gone, or unreadable) keeps what it
        last read and does not stop the others; :attr:`reload_failures` says which and
        why, until a reload reads it again."""
        with self._reload_lock:
            current = self._bundles
            fresh: dict[str, Bundle] = {}
            failures: dict[str, str] = {}
            for name, bundle in current.items():
                try:
                    fresh[name] = bundle.reload()
                except (OSError, OKFError) as exc:
                    fresh[name] = bundle
                    failures[name] = str(exc) or type(exc).__name__
            self._reload_failures = failures
            changed = {name: b for name, b in fresh.items() if b is not current[name]}
            if not changed:
                return {}
            with self._lock:
                combined = self._combined
            if combined is not None:
                combined = _carry_combined(combined, current, changed)
            with self._lock:
                self._bundles = {n: changed.get(n, b) for n, b in self._bundles.items()}
                self._combined = combined
        return {
            name: b.changes or Changes(whole=(len(current[name]), len(b)))
            for name, b in changed.items()
        }

    def note_unavailable(self, source: str, reason: str) -> None:
        """Record a source that did not load, so that ``list_bundles`` says it is not
        served and why (``okfx serve`` serves the sources that load)."""
        self._unavailable[source] = reason

    @property
    def unavailable(self) -> dict[str, str]:
        """The sources that did not load, with the reason, by source as written."""
        return dict(self._unavailable)

    def note_refresh(self, name: str, failure: str | None) -> None:
        """Record that fetching bundle ``name``'s git source again failed, and why
        (``failure``), or that it worked or was not needed (None): ``list_bundles`` and a
        read say it serves the commit it read before (author QA: only stderr said so).
        A new dict replaces the old, as :meth:`reload` does its failures, so no lock is
        taken: ``_lock`` is held through a combined index's build, which a refresh and a
        ``list_bundles`` must not wait for."""
        failures = dict(self._refresh_failures)
        if failure is None:
            failures.pop(name, None)
        else:
            failures[name] = failure
        self._refresh_failures = failures

    @property
    def refresh_failures(self) -> dict[str, str]:
        """The git bundles whose last refresh failed, by name, with the reason; each
        still serves the commit it last read."""
        return dict(self._refresh_failures)

    @property
    def reload_failures(self) -> dict[str, str]:
        """The bundles the last :meth:`reload` could not read, by name, with the reason;
        each still serves what it last read."""
        return dict(self._reload_failures)

    # -- access events ---------------------------------------------------------------------
    def on_access(self, callback: Callback) -> Callback:
        """Call ``callback(event)`` after every tool call (sync or async callables).

        An event has ``tool``, ``bundle`` and ``found``, plus ``query`` and ``hits`` for
        searches, ``path`` and ``body_chars`` for reads, ``path`` and ``hits`` for
        neighbours. A failing callback is logged and never breaks the tool.
        """
        self._callbacks.append(callback)
        return callback

    def emit(self, event: AccessEvent) -> None:
        for callback in list(self._callbacks):
            try:
                result = callback(dict(event))
                if inspect.isawaitable(result):
                    _schedule(result)
            except Exception:
                logger.exception("okfx access callback %r failed", callback)


def _shared_state(bundles: list[Bundle]) -> tuple[StateCache, str, str] | None:
    """Where a combined index over ``bundles`` (in name order) is stored: the state
    cache they all use, a key naming each (name, bundle key) and the generations of their
    states; None when one has no state cache or they use different ones."""
    entries = []
    for bundle in bundles:
        entry = bundle._state_entry()
        if entry is None:
            return None
        entries.append(entry)
    if not entries or len({cache.directory for cache, *_ in entries}) != 1:
        return None
    cache = entries[0][0]
    key = cache.key("combined", *((b.name, e[1]) for b, e in zip(bundles, entries, strict=True)))
    generation = hashlib.sha256(" ".join(e[2] for e in entries).encode()).hexdigest()
    return cache, key, generation


def _carry_combined(combined: Any, before: dict[str, Bundle], after: dict[str, Bundle]) -> Any:
    """The combined index after the bundles of ``after`` replaced those of ``before``;
    None (built again when needed) when one was loaded whole again."""
    from okfx.search.live import updated

    drop: list[tuple[str, str]] = []
    add: list[tuple[str, Any]] = []
    for name, bundle in after.items():
        if bundle.changes is None:
            return None
        dirty = content_changes(bundle.changes)
        drop.extend((name, path) for path in dirty)
        add.extend((name, c) for p in sorted(dirty) if (c := bundle.get(p)) is not None)
    return updated(combined, drop, add)


def _schedule(awaitable: Any) -> None:
    """Run an async callback's coroutine without blocking the tool."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:
        task = loop.create_task(_guarded(awaitable))
        _PENDING.add(task)
        task.add_done_callback(_PENDING.discard)
    else:
        asyncio.run(_guarded(awaitable))


_PENDING: set[asyncio.Task[None]] = set()


async def _guarded(awaitable: Any) -> None:
    try:
        await awaitable
    except Exception:
        logger.exception("okfx async access callback failed")
