"""Watch the bundles a manager serves and reload them when their files change.

Used by ``okfx serve --watch`` and meant for any long-running reader (a viewer's
``--watch`` builds one the same way)::

    watcher = Watcher(manager, on_reload=lambda report: print(report.line())).start()
    ...
    watcher.stop()

Local folders are watched with ``watchfiles`` (the ``watch`` extra,
docs/install.md), or, without it, by a stat scan every :data:`POLL_SECONDS`. Once changes
pause for 50 ms (at most ``debounce`` apart during a longer burst, and once when the watch
starts), :meth:`KnowledgeManager.reload` parses what changed and
swaps the new bundles in at once; each reload is one log line (what changed, how long it
took) and one call of ``on_reload``. A file saved half-written is parsed as it is, and
again on its next change; when the last scan saw a file modified within the racy window
(:data:`okfx.bundle.state.RACY_SECONDS`) another reload follows once that window has
passed, so a write that kept its size and mtime is not served stale.

Git sources get ``refresh_interval``: that often, the remote is asked for the commit its
ref points at (``git ls-remote``) and, when it moved, the bundle is cloned again and
swapped in. A failing reload or fetch is logged and retried at the next event.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okfx.bundle import state as bundle_state
from okfx.bundle.bundle import Bundle
from okfx.bundle.ignorefile import IGNORE_FILE
from okfx.bundle.reload import Changes
from okfx.model import Concept
from okfx.tools.manager import KnowledgeManager
from okfx.version import install_command

__all__ = ["DEBOUNCE_SECONDS", "POLL_SECONDS", "Reload", "Watcher"]

logger = logging.getLogger("okfx")

#: During a burst of changes, a reload at most this often (a pause of 50 ms ends a burst).
DEBOUNCE_SECONDS = 0.3
#: How often bundles are scanned when ``watchfiles`` is not installed.
POLL_SECONDS = 1.0


@dataclass
class Reload:
    """What one reload did: changes by bundle name, bundles fetched again, its time."""

    changes: dict[str, Changes] = field(default_factory=dict)
    refreshed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: Bundles that could not be read, with the reason: only when that is news (a bundle
    #: that goes on failing the same way is reported once).
    failed: dict[str, str] = field(default_factory=dict)
    #: Bundles read again after failing (edit QA: "served until the folder is back" stayed
    #: the last word once it was back).
    recovered: list[str] = field(default_factory=list)
    #: Git sources fetched again after a failed refresh.
    reached: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.changes or self.refreshed or self.failed or self.recovered or self.reached)

    def line(self) -> str:
        """The one log line of this reload."""
        parts = [f"{name}: {c.summary()}" for name, c in self.changes.items()]
        parts += [f"{name}: fetched a new commit" for name in self.refreshed]
        parts += [f"{name}: not reloaded: {why}" for name, why in self.failed.items()]
        parts += [f"{name}: read again, its folder is back" for name in self.recovered]
        parts += [f"{name}: its git source answers again" for name in self.reached]
        return f"okfx: reloaded in {self.seconds:.2f} s ({'; '.join(parts)})"


class Watcher:
    """Reloads ``manager``'s bundles when their files change (see the module docstring).

    ``watch`` False leaves local folders alone (only ``refresh_interval`` runs);
    ``polling`` True scans instead of using ``watchfiles``; ``log`` receives each line.
    """

    def __init__(
        self,
        manager: KnowledgeManager,
        *,
        on_reload: Callable[[Reload], Any] | None = None,
        watch: bool = True,
        refresh_interval: float | None = None,
        debounce: float = DEBOUNCE_SECONDS,
        polling: bool | None = None,
        log: Callable[[str], Any] | None = None,
    ) -> None:
        self.manager = manager
        self.on_reload = on_reload
        self.watch = watch
        self.refresh_interval = refresh_interval
        self.debounce = debounce
        # OKFX_WATCH_POLLING=1 scans even where watchfiles is installed.
        self.polling = os.environ.get("OKFX_WATCH_POLLING") == "1" if polling is None else polling
        self.log = log or logger.info
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one reload at a time
        self._threads: list[threading.Thread] = []
        self._commits: dict[str, str] = {}
        self._failed: dict[str, str] = {}  # what the last reload could not read

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> Watcher:
        if self.watch and self.roots():
            self._spawn(self._watch_files, "okfx-watch")
        if self.refresh_interval and self._git_bundles():
            self._spawn(self._refresh_loop, "okfx-refresh")
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def roots(self) -> list[Path]:
        """The local bundle folders watched (git checkouts and archives are not)."""
        return sorted({b.root for b in self.manager.bundles.values() if _is_local(b)})

    # -- reloading -----------------------------------------------------------------------
    def reload_now(self) -> Reload:
        """Reload every bundle now; log and report what changed (nothing: no line)."""
        with self._lock:
            started = time.perf_counter()
            before = self.manager.bundles
            try:
                changes = _news(self.manager.reload(), before, self.manager.bundles)
            except Exception:  # a bug must not end the watch: the next event retries
                logger.exception("okfx: reloading the bundles failed")
                return Reload()
            failed = self.manager.reload_failures
            news = {n: why for n, why in failed.items() if self._failed.get(n) != why}
            back = [n for n in self._failed if n not in failed and n in self.manager.bundles]
            self._failed = failed
            report = Reload(
                changes, seconds=time.perf_counter() - started, failed=news, recovered=back
            )
        if report:
            self._report(report)
        return report

    def _report(self, report: Reload) -> None:
        self.log(report.line())
        if self.on_reload is not None:
            try:
                self.on_reload(report)
            except Exception:
                logger.exception("okfx: the reload callback failed")

    def _unsettled(self) -> bool:
        """Did the last scan see a file too recent to trust its stat?"""
        return any(b.unsettled for b in self.manager.bundles.values())

    def _watch_files(self) -> None:
        roots = [str(root) for root in self.roots()]
        watch = None if self.polling else _watchfiles()
        if watch is None:
            if not self.polling:
                self.log(f"okfx: watchfiles is not installed ({install_command('watch')}): polling")
            while not self._stop.wait(POLL_SECONDS):
                self.reload_now()
            return
        # A watch follows the folders it started on: once one goes, a folder of the same
        # name that comes back is not watched. So the watch starts again whenever the set
        # of roots that exist changes, and a reload reads what happened meanwhile.
        while not self._stop.is_set():
            present = _present(roots)
            if present:
                try:
                    self._watch_roots(watch, roots, present)
                except OSError as exc:  # a root went while the watch started
                    logger.debug("okfx: watching %s failed: %s", present, exc)
                    self._stop.wait(POLL_SECONDS)
            elif self._stop.wait(POLL_SECONDS):
                return
            if not self._stop.is_set():
                self.reload_now()  # what happened while no watch was on (a quick check)

    def _watch_roots(
        self, watch: Callable[..., Iterable[set[Any]]], roots: list[str], present: list[str]
    ) -> None:
        """Watch ``present`` (the roots that exist) until stopped, until that set changes,
        or until one of them is another folder than the one the watch started on: removed
        and made again, a folder renamed over it, a symlinked root pointed elsewhere (live
        edit QA: the watch went on following the old folder, and no edit was seen again)."""
        settle = bundle_state.RACY_SECONDS + 0.1
        # One reload once the watch is on, at its first wake (an event, or rust_timeout):
        # what changed between the load and the watch's start gives no event (edit QA: an
        # edit saved while `serve --watch` was starting was never served).
        follow_up: float | None = time.monotonic()
        started = _identities(present)
        watched = {os.path.normpath(root) for root in present}
        for batch in watch(
            *present,
            watch_filter=_loaded_names(present),
            debounce=int(self.debounce * 1000),
            step=50,
            stop_event=self._stop,
            yield_on_timeout=True,
            rust_timeout=int(settle * 1000),
            raise_interrupt=False,
        ):
            due = follow_up is not None and time.monotonic() >= follow_up
            if batch or due:
                self.reload_now()
                follow_up = time.monotonic() + settle if self._unsettled() else None
            if _present(roots) != present:
                return
            if any(os.path.normpath(str(path)) in watched for _, path in batch or ()):
                return  # a root itself was removed or made: watch whatever is there now
            if _identities(present) != started:
                return

    # -- git -----------------------------------------------------------------------------
    def _git_bundles(self) -> list[Bundle]:
        return [b for b in self.manager.bundles.values() if _git_source(b) is not None]

    def _refresh_loop(self) -> None:
        interval = float(self.refresh_interval or 0)
        while not self._stop.wait(interval):
            self.refresh_now()

    def _fetched_again(self, name: str, report: Reload) -> None:
        """Bundle ``name``'s git source answered: a failure noted before is over, and
        the report says so once."""
        if name in self.manager.refresh_failures:
            report.reached.append(name)
        self.manager.note_refresh(name, None)

    def refresh_now(self) -> Reload:
        """Fetch each git bundle whose remote commit moved, and swap it in."""
        from okfx.sources.refresh import cached_commit, remote_commit
        from okfx.sources.spec import is_commit_id, redact

        report = Reload()
        started = time.perf_counter()
        for bundle in self._git_bundles():
            source = _git_source(bundle)
            if is_commit_id(source.ref):
                continue  # a pinned commit never moves
            options = bundle.load_options
            try:
                remote = remote_commit(source, timeout=float(options.get("timeout", 30.0)))
                # The commit this bundle was loaded from, not the cache's: two folders of one
                # repository share a clone, and the first one's refresh moves the cache's
                # commit (sources QA: the second was never reloaded).
                cached = cached_commit(source, options.get("cache_dir"))
                loaded = (
                    self._commits.get(bundle.name) or (bundle.origin or {}).get("commit") or cached
                )
                if remote == loaded:
                    self._fetched_again(bundle.name, report)
                    continue
                with self._lock:
                    fresh = Bundle.load(
                        bundle.source,
                        bundle.name,
                        limits=bundle.limits,
                        refresh=cached != remote,  # fetched already for another folder
                        **options,
                    )
                    self.manager.replace(fresh)
                self._commits[bundle.name] = (fresh.origin or {}).get("commit") or remote
                self._fetched_again(bundle.name, report)
                report.refreshed.append(bundle.name)
            except Exception as exc:
                why = redact(str(exc)) or type(exc).__name__
                # once per failure, as a local folder's (edit QA: the same line every
                # interval, 1,440 a day at 60 s)
                if self.manager.refresh_failures.get(bundle.name) != why:
                    logger.warning("okfx: refreshing %s failed: %s", bundle.name, exc)
                self.manager.note_refresh(bundle.name, why)
        report.seconds = time.perf_counter() - started
        if report:
            self._report(report)
        return report


def _present(roots: list[str]) -> list[str]:
    return [root for root in roots if os.path.isdir(root)]


def _loaded_names(roots: list[str]) -> Callable[[Any, str], bool]:
    """The watch filter: a change matters unless a name below its root starts with "."
    (the loader skips those: ``.git``, ``.obsidian``, an editor's ``.x.md.swp``), but for
    the ``.okfignore`` it reads.
    watchfiles' default filter also dropped ``node_modules``, ``__pycache__``, ``x~`` and
    ``*.pyc``, which the loader reads (live edit QA: such an edit waited for the next)."""
    prefixes = sorted((os.path.join(os.path.normpath(r), "") for r in roots), key=len)

    def matters(_change: Any, path: str) -> bool:
        path = os.path.normpath(path)
        for prefix in reversed(prefixes):  # the deepest root holding it
            if path.startswith(prefix):
                *folders, name = path[len(prefix) :].split(os.sep)
                if any(part.startswith(".") for part in folders):
                    return False
                return not name.startswith(".") or name == IGNORE_FILE  # which it reads
        return True  # a root itself (removed or made), or outside: a reload finds out

    return matters


def _identities(roots: list[str]) -> list[tuple[str, int, int] | None]:
    """Which folder each root is: its resolved path, device and inode (None when gone)."""
    found: list[tuple[str, int, int] | None] = []
    for root in roots:
        try:
            stat = os.stat(root)
        except OSError:
            found.append(None)
            continue
        found.append((os.path.realpath(root), stat.st_dev, stat.st_ino))
    return found


def _news(
    changes: dict[str, Changes], before: dict[str, Bundle], after: dict[str, Bundle]
) -> dict[str, Changes]:
    """``changes`` without the bundles whose reload only read files again (too recent at
    the last scan to trust their stat) and found every document as it was: a reload that
    changed nothing logs no line and tells no client (QA: one new file, then a second
    "reloaded ... 1 read again" line)."""
    news = {}
    for name, change in changes.items():
        moved = change.files or change.dirs_added or change.dirs_removed or change.walk_changed
        old, new = before.get(name), after.get(name)
        if (
            not moved
            and change.whole is None
            and old is not None
            and new is not None
            and all(_same(old.get(path), new.get(path)) for path in change.rechecked)
        ):
            continue
        news[name] = change
    return news


def _same(old: Any, new: Any) -> bool:
    """Whether a document read again is the one read before: an index or a log by value,
    a concept by its fields and body (its raw frontmatter mapping is read from the file
    on demand, so the fields read from it stand for it)."""
    if not isinstance(old, Concept) or not isinstance(new, Concept):
        return bool(old == new)
    return all(
        getattr(old, slot) == getattr(new, slot)
        for slot in Concept.__slots__
        if slot != "frontmatter"
    )


def _is_local(bundle: Bundle) -> bool:
    source = bundle.source
    if source is None:
        return True
    from okfx.sources import LocalDir, parse_source

    try:
        return isinstance(parse_source(source), LocalDir)
    except (ValueError, TypeError):
        return False


def _git_source(bundle: Bundle) -> Any:
    from okfx.sources import GitSource, parse_source

    try:
        parsed = parse_source(bundle.source) if bundle.source is not None else None
    except (ValueError, TypeError):
        return None
    return parsed if isinstance(parsed, GitSource) else None


def _watchfiles() -> Callable[..., Iterable[set[Any]]] | None:
    try:
        from watchfiles import watch
    except ImportError:
        return None
    return watch
