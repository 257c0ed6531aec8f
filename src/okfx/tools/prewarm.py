"""Build now what the first call of a kind would otherwise build, for forked workers.

Some structures are built on first use: a bundle's backlinks (the first
``get_neighbors``), and the search index's kind words, title index and text locations
(the first search that finds something). Each walks every concept. Built in a process
that forks workers afterwards (``okfx serve --workers N``), they are built once and
shared; built in each worker, each builds its own copy, and its walk writes reference
counts into every concept it passes, which copies those pages into the worker.
Measured at 10k concepts: the first 20 ``get_neighbors`` calls of a worker copied
17.5 MB, 5 MB with the backlinks built before the fork; the first 20 searches 13 MB,
9 MB.
"""

from __future__ import annotations

from okfx.tools.manager import KnowledgeManager

__all__ = ["prewarm"]


def prewarm(manager: KnowledgeManager, *, search: bool = True) -> None:
    """Build each bundle's backlinks and (with ``search``) run one search whose words
    come from a concept's title, which builds what a search builds on first use. The
    answers of later calls do not change."""
    first = None
    for bundle in manager.bundles.values():
        bundle.backlink_map()
        if first is None:
            first = next(iter(bundle), None)
    if search and first is not None:
        manager.search(first.title or first.path.rsplit("/", 1)[-1], limit=1)
