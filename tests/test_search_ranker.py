import re
from pathlib import Path

import pytest

from conftest_search import NOW, FakeConcept, entries
from okfx.errors import InvalidArgument
from okfx.search.index import HIT_KEYS, SearchIndex
from okfx.search.ranking import BM25Ranker, Ranker, check_hits

DOC = Path(__file__).resolve().parents[1] / "docs" / "search.md"
SNIPPET = DOC.parent / "snippets" / "search_ranker.py"


def test_the_hybrid_ranker_example_in_the_docs_is_the_snippet_and_runs():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks == [SNIPPET.read_text(encoding="utf-8")], "docs/search.md shows the snippet"
    namespace: dict[str, object] = {"__name__": "docs_search_example"}
    exec(compile(SNIPPET.read_text(encoding="utf-8"), str(SNIPPET), "exec"), namespace)  # noqa: S102
    assert namespace["hits"]


def test_bm25_ranker_is_a_ranker_returning_hit_dicts():
    index = SearchIndex.build(entries(FakeConcept("/a.md", title="Revenue")))
    ranker = BM25Ranker(index)
    assert isinstance(ranker, Ranker)
    hits = ranker.search("revenue", limit=5, now=NOW)
    assert [list(hit) for hit in hits] == [list(HIT_KEYS)]
    assert check_hits(hits, 5) == hits


def test_bm25_ranker_refuses_unknown_filters():
    ranker = BM25Ranker(SearchIndex.build([]))
    with pytest.raises(InvalidArgument, match="colour"):
        ranker.search("x", colour="red")


def test_check_hits_names_what_a_plug_in_got_wrong():
    with pytest.raises(InvalidArgument, match="list"):
        check_hits(({},), 5)
    with pytest.raises(InvalidArgument, match="limit=1"):
        check_hits([{}, {}], 1)
    with pytest.raises(InvalidArgument, match="hit 0 has keys"):
        check_hits([{"path": "/a.md"}], 5)
