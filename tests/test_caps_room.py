"""okfx.tools.caps.room_for: how many items of a result's list fit its budget, the same
whether the whole payload fits at once or the items are counted one by one."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from okfx.tools.caps import json_chars, room_for

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)


def _counted(payload: dict[str, Any], key: str, budget: int) -> int:
    """The items that fit, counted one by one (at least one)."""
    used = json_chars({k: v for k, v in payload.items() if k != key}) + 2
    kept = 0
    for item in payload[key]:
        used += json_chars(item) + 1
        if used > budget and kept:
            break
        kept += 1
    return kept


@given(
    rest=st.dictionaries(st.text(max_size=5), _VALUES, max_size=3),
    key=st.text(max_size=5),
    items=st.lists(_VALUES, max_size=8),
    budget=st.integers(0, 400),
)
def test_room_for_counts_as_the_items_one_by_one(
    rest: dict[str, Any], key: str, items: list[Any], budget: int
) -> None:
    payload = {**rest, key: items}
    assert room_for(payload, key, budget) == _counted(payload, key, budget)


def test_a_payload_that_fits_keeps_every_item_and_one_that_does_not_is_cut() -> None:
    payload = {"query": "q", "hits": [{"snippet": "x" * 90} for _ in range(10)]}
    whole = json_chars(payload)
    assert room_for(payload, "hits", whole) == 10
    assert room_for(payload, "hits", whole - 200) == 8
