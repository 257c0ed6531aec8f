"""okfx.tools.results, the reference of what each tool returns, against the results
themselves: every tool is called in many situations (tests/result_calls.py); a key a
result holds that the reference does not describe fails, and so does a key the reference
describes that no call returns."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import NO_PACKAGE
from okfx import Bundle, Toolbox
from okfx.search.hits import HIT_KEYS
from okfx.tools.results import ALWAYS, ERROR, RESULTS, Table
from okfx.tools.toolbox import RUN_TOOL, TOOL_NAMES
from result_calls import EXAMPLES, NOW, Answer, answers


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory) -> list[Answer]:
    pytest.importorskip("duckdb", reason=NO_PACKAGE.format("duckdb"))
    return answers(tmp_path_factory.mktemp("results"))


def tables_for(answer: Answer) -> tuple[Table, ...]:
    """The reference a result is read against: the tool's, or a failure's."""
    return ERROR if "error" in answer.payload else RESULTS[answer.tool]


def objects_at(payload: dict[str, Any], at: str) -> list[dict[str, Any]]:
    """The objects a table's place names in ``payload`` (``verdict.checks[]``: each
    check of the verdict); none where the payload has no such object."""
    found = [payload]
    for part in filter(None, at.split(".")):
        name, many = part.removesuffix("[]"), part.endswith("[]")
        below: list[dict[str, Any]] = []
        for obj in found:
            value = obj.get(name)
            if many and isinstance(value, list):
                below += [item for item in value if isinstance(item, dict)]
            elif not many and isinstance(value, dict):
                below.append(value)
        found = below
    return found


def undescribed(answer: Answer) -> list[str]:
    """Each key of the result (and of the objects in it the reference has a table for)
    that the reference does not describe, as ``"place: key"``."""
    out = []
    for table in tables_for(answer):
        for at in table.at:
            for obj in objects_at(answer.payload, at):
                out += [f"{at or 'result'}: {key}" for key in obj if key not in table.names()]
    return out


def test_every_tool_has_its_reference_in_the_contract_order() -> None:
    assert list(RESULTS) == [*TOOL_NAMES, RUN_TOOL]
    for tables in [*RESULTS.values(), ERROR]:
        assert tables[0].at == ("",)  # the result's own keys first
        for table in tables:
            assert len(set(table.names())) == len(table.keys), table.at
            assert all(key.what.endswith(".") and key.when for key in table.keys), table.at


def test_a_hit_is_described_by_exactly_the_keys_the_search_index_gives() -> None:
    (hits,) = [t for t in RESULTS["search_concepts"] if t.at == ("hits[]",)]
    assert hits.names()[: len(HIT_KEYS)] == HIT_KEYS  # then what folding releases adds
    assert hits.names()[len(HIT_KEYS) :] == ("other_versions", "other_versions_total")


def test_each_situation_succeeds_or_fails_as_it_says(answered: list[Answer]) -> None:
    wrong = [
        (a.tool, a.situation, a.payload.get("error"))
        for a in answered
        if ("error" in a.payload) != a.fails
    ]
    assert not wrong


def test_every_key_a_result_holds_is_described(answered: list[Answer]) -> None:
    found = {(a.tool, a.situation): undescribed(a) for a in answered}
    assert not {call: keys for call, keys in found.items() if keys}


def test_a_key_the_reference_does_not_describe_is_found() -> None:
    """The check above can fail: an added key, in a result or in an item of its list."""
    answer = Answer("search_concepts", "made up", {"query": "q", "hits": [{"path": "/a.md"}]})
    assert undescribed(answer) == []
    answer.payload["hits"][0]["rank"] = 1
    answer.payload["score"] = 0.5
    assert undescribed(answer) == ["result: score", "hits[]: rank"]


def test_every_described_key_comes_back_from_some_call(answered: list[Answer]) -> None:
    seen: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for answer in answered:
        owner = "error" if "error" in answer.payload else answer.tool
        for table in tables_for(answer):
            for at in table.at:
                for obj in objects_at(answer.payload, at):
                    seen.setdefault((owner, table.at), set()).update(obj)
    unseen = {
        (owner, table.at): sorted(set(table.names()) - seen.get((owner, table.at), set()))
        for owner, tables in [*RESULTS.items(), ("error", ERROR)]
        for table in tables
    }
    assert not {place: keys for place, keys in unseen.items() if keys}


def test_keys_always_there_are_in_every_result(answered: list[Answer]) -> None:
    """``when`` is "always" only for a key no call leaves out."""
    absent = [
        (a.tool, a.situation, table.at, key.name)
        for a in answered
        for table in tables_for(a)
        for at in table.at
        for obj in objects_at(a.payload, at)
        for key in table.keys
        if key.when == ALWAYS and key.name not in obj
    ]
    assert not absent


def test_keys_come_in_the_order_the_reference_lists_them(answered: list[Answer]) -> None:
    """``cut`` is left out: where it stands depends on what added it."""
    wrong = []
    for answer in answered:
        for table in tables_for(answer):
            for at in table.at:
                for obj in objects_at(answer.payload, at) if table.ordered else ():
                    keys = [key for key in obj if key != "cut" and key in table.names()]
                    if keys != sorted(keys, key=table.names().index):
                        wrong.append((answer.tool, answer.situation, at, keys))
    assert not wrong


@pytest.fixture(scope="module")
def example() -> Toolbox:
    return Toolbox(Bundle.load(EXAMPLES / "knowledge"), now=lambda: NOW)


_WORDS = st.sampled_from(["trips", "tirps", "dock", "availabilty", "the", "zzqx", "bike"])
_PATHS = st.sampled_from(["tables/trips", "index.md", "metrics/", "log.md", "metrics/nope"])
_FILTERS = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["Metric", "BigQuery Table", "Nope"]),
        "directory": st.sampled_from(["/tables", "/metrics", "/nope"]),
        "include_deprecated": st.booleans(),
    },
)


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(_WORDS, min_size=1, max_size=3),
    path=_PATHS,
    filters=_FILTERS,
    limit=st.integers(1, 60),
    offset=st.integers(0, 40),
)
def test_any_arguments_give_only_described_keys(
    example: Toolbox,
    words: list[str],
    path: str,
    filters: dict[str, Any],
    limit: int,
    offset: int,
) -> None:
    query = " ".join(words)
    calls = {
        "list_concepts": {**filters, "limit": limit, "offset": offset},
        "search_concepts": {**filters, "query": query, "limit": limit},
        "grep_concepts": {**filters, "pattern": words[0], "limit": limit},
        "read_concept": {"path": path, "offset": offset * 50, "max_chars": limit * 20},
        "get_neighbors": {"path": path, "limit": limit, "offset": offset},
    }
    for tool, kwargs in calls.items():
        answer = Answer(tool, "generated", getattr(example, tool)(**kwargs))
        assert not undescribed(answer), (tool, kwargs, answer.payload)
