"""okfx.tools.prewarm: what a first call builds is built before okfx serve forks workers."""

from __future__ import annotations

from pathlib import Path

from conftest import PROJECT_ROOT
from okfx import KnowledgeManager, Toolbox
from okfx.cli.commands import prepare
from okfx.tools.prewarm import prewarm

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"


def _loaded(root: Path) -> KnowledgeManager:
    return KnowledgeManager.from_paths([str(root)])


def test_prewarm_builds_the_backlinks_and_the_search_parts_built_on_first_use() -> None:
    manager = _loaded(EXAMPLE)
    bundle = next(iter(manager.bundles.values()))
    index = bundle.search_index()
    assert bundle._backlinks is None and index.kinds._all is None
    assert index.named._by_term is None

    prewarm(manager)

    assert bundle._backlinks is not None
    assert index.kinds._all is not None
    assert index.named._by_term is not None
    corpus = getattr(next(iter(bundle)), "corpus", None)
    if corpus is not None:  # the texts a hit's snippet is taken from are located
        assert corpus._where is not None


def test_prewarm_without_search_builds_no_search_index() -> None:
    manager = _loaded(EXAMPLE)
    bundle = next(iter(manager.bundles.values()))
    prewarm(manager, search=False)
    assert bundle._backlinks is not None
    assert bundle._search_index is None


def test_answers_are_the_same_with_and_without_prewarm() -> None:
    warm, cold = _loaded(EXAMPLE), _loaded(EXAMPLE)
    prepare(warm)  # what okfx serve runs before it forks its workers
    warm_box, cold_box = Toolbox(warm), Toolbox(cold)
    paths = [concept.path for concept in next(iter(cold.bundles.values()))]
    assert len(paths) > 10
    for path in paths:
        assert warm_box.get_neighbors(path) == cold_box.get_neighbors(path)
    for query in ("dock availability", "station", "deprecated metric", "kinds of rides"):
        assert warm_box.search_concepts(query) == cold_box.search_concepts(query)


def _pending_terms(manager: KnowledgeManager) -> list[str]:
    postings = next(iter(manager.bundles.values())).search_index().postings
    pending = postings._pending
    if pending is None:
        return []
    return [term for term, tid in postings.terms.items() if pending[tid]]


def _search_rare_terms(manager: KnowledgeManager, terms: list[str]) -> tuple[bytes, bytes]:
    """Search each of ``terms``; the bytes of the postings arrays before the searches."""
    postings = next(iter(manager.bundles.values())).search_index().postings
    before = bytes(postings.docs), bytes(postings.impacts)
    for term in terms:
        manager.search(term, limit=3)
    return before


def test_searches_write_no_postings_after_a_prewarm_for_a_fork() -> None:
    # A forked worker shares the postings arrays until it writes to them: a search of a
    # rare term computed that term's impacts into them, so each worker copied the pages.
    cold = _loaded(EXAMPLE)
    cold.prepare_search()
    rare = _pending_terms(cold)[:40]
    assert rare  # the build leaves rare terms to their first search
    postings = next(iter(cold.bundles.values())).search_index().postings
    before = _search_rare_terms(cold, rare)
    assert before != (bytes(postings.docs), bytes(postings.impacts))

    warm = _loaded(EXAMPLE)
    prewarm(warm, fork=True)
    assert _pending_terms(warm) == []
    postings = next(iter(warm.bundles.values())).search_index().postings
    before = _search_rare_terms(warm, rare)
    assert before == (bytes(postings.docs), bytes(postings.impacts))
    for term in rare:  # and the answers are those of the lazily computed impacts
        assert warm.search(term, limit=3).to_dict() == cold.search(term, limit=3).to_dict()


def test_a_live_index_finishes_its_base_and_its_delta() -> None:
    from okfx.search.index import SearchIndex
    from okfx.search.live import LiveIndex

    concepts = list(next(iter(_loaded(EXAMPLE).bundles.values())))
    base = SearchIndex.build(("knowledge", c) for c in concepts)
    delta = SearchIndex.build(("knowledge", c) for c in concepts[:5])
    index = LiveIndex(base, frozenset({0}), delta)
    assert base.postings._pending is not None and delta.postings._pending is not None
    index.finish_pending()
    assert base.postings._pending is None and delta.postings._pending is None


def test_prepare_builds_the_backlinks_before_the_search_index() -> None:
    """Platform QA: a server's first get_neighbors took 2.6 s at 100k concepts, for the
    backlinks came after the index (minutes at that size)."""
    manager = _loaded(EXAMPLE)
    bundle = next(iter(manager.bundles.values()))
    seen: list[bool] = []
    real = manager.prepare_search

    def recording(**options: object) -> None:
        seen.append(bundle._backlinks is not None)
        real(**options)  # type: ignore[arg-type]

    manager.prepare_search = recording  # type: ignore[method-assign]
    prepare(manager)
    assert seen and all(seen)  # prewarm asks again: the index is ready then
