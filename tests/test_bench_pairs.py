"""bench/search.py compares two searches query by query: each query is asked of both,
one right after the other, which goes first alternating, so a drift of the machine's
speed falls on both alike."""

from __future__ import annotations

import sys

from conftest import PROJECT_ROOT

sys.path.insert(0, str(PROJECT_ROOT / "bench"))
import search as bench_search  # noqa: E402


def test_each_query_is_asked_of_both_in_turn_and_the_order_alternates() -> None:
    calls: list[tuple[str, str]] = []
    first = lambda query: calls.append(("a", query))  # noqa: E731
    second = lambda query: calls.append(("b", query))  # noqa: E731
    queries = [f"q{i}" for i in range(40)]
    a, b = bench_search.time_pair((first, second), queries, 0)
    assert [q for _, q in calls] == [q for q in queries for _ in (0, 1)]
    pairs = [calls[i : i + 2] for i in range(0, len(calls), 2)]
    assert [p[0][0] for p in pairs[:4]] == ["a", "b", "a", "b"]
    assert all({who for who, _ in p} == {"a", "b"} for p in pairs)
    assert set(a) == set(b) == {"p50", "p95", "cpu_p50", "cpu_p95"}
    calls.clear()
    bench_search.time_pair((first, second), queries, 1)  # the next pass starts with b
    assert calls[0][0] == "b"


def test_a_slower_search_shows_as_slower_in_every_figure() -> None:
    def fast(query: str) -> None:
        sum(range(100))

    def slow(query: str) -> None:
        sum(range(20_000))

    queries = [str(i) for i in range(60)]
    quick, heavy = bench_search.measure_pair(fast, slow, queries)
    for key in ("p50", "p95", "cpu_p50", "cpu_p95"):
        assert heavy["warm"][key] > quick["warm"][key]
