"""Build now what the first call of a kind would otherwise build, for forked workers.

Some structures are built on first use: a bundle's backlinks (the first
``get_neighbors``), the search index's kind words, title index and text locations
(the first search that finds something), and the impacts of each rare term, which its
first search computes into the index's arrays. Each walks every concept. Built in a process
that forks workers afterwards (``okfx serve --workers N``), they are built once and
shared; built in each worker, each builds its own copy, and its walk writes reference
counts into every concept it passes, which copies those pages into the worker.
Measured at 10k concepts: the first 20 ``get_neighbors`` calls of a worker copied
17.5 MB, 5 MB with the backlinks built before the fork; the first 20 searches 13 MB,
9 MB; 1,000 searches wrote 10.2 MB of the two 11.7 MB postings arrays, none once the
impacts are computed before the fork.
"""

from __future__ import annotations

from okfx.tools.manager import KnowledgeManager

__all__ = ["prewarm"]


def prewarm(manager: KnowledgeManager, *, search: bool = True, fork: bool = False) -> None:
    """Build each bundle's backlinks and (with ``search``) run one search whose words
    come from a concept's title, which builds what a search builds on first use. With
    ``fork`` (the caller forks workers next), first compute every term's impacts too:
    about 3 s at 10k concepts, spent once instead of by each worker's searches into
    its own copy. The answers of later calls do not change."""
    first = None
    for bundle in manager.bundles.values():
        bundle.backlink_map()
        if first is None:
            first = next(iter(bundle), None)
    if not search:
        return
    manager.prepare_search(finish=fork)
    if first is not None:
        manager.search(first.title or first.path.rsplit("/", 1)[-1], limit=1)
