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
