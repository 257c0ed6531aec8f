"""okfx.records: every field of every model class round-trips, types and all.

The sample values are made from each field's type annotation, so a field added to a class
of ``okfx.model`` is covered without this test naming it; a field of a type this test (and
okfx.records) does not know fails here, with what to do.
"""

from __future__ import annotations

import types
import typing
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any

import pytest

from okfx import Bundle
from okfx.bundle.stored import LAZY_FIELDS, SLIM_FIELDS
from okfx.model import Concept, Link
from okfx.records import (
    Decoder,
    Encoder,
    Unstorable,
    decoding,
    model_classes,
    model_fields,
)
from okfx.statefile import StateFormatError


def _hints(cls: type) -> dict[str, Any]:
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__ == "okfx.model":
            hints.update(typing.get_type_hints(klass))
    return hints


def sample(tp: Any, n: int) -> Any:
    """A value of type ``tp``, different for each ``n`` and from any default."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        return sample(kept[n % len(kept)], n)
    if tp is str:
        return f"text {n} é\udc80"  # a lone surrogate, as YAML escapes can make
    if tp is bool:
        return True
    if tp is int:
        return 10_000 + n
    if tp is float:
        return n + 0.25
    if tp is datetime:
        return datetime(2026, 1, 1 + n % 28, 12, 30, n % 60, 123, timezone(timedelta(hours=n % 3)))
    if tp is date:
        return date(2025, 2, 1 + n % 28)
    if origin is tuple:
        return tuple(sample(args[0], n + i) for i in range(2))
    if origin is dict or tp is Any:
        return {
            "key": [1, 2.5, None, True, "x"],
            "when": datetime(2026, 3, 4, tzinfo=UTC),
            "day": date(2026, 3, 4),
            7: ("tuple", b"\x00bytes"),
            "nested": {"set": {1, 2}, "naive": datetime(2020, 1, 1)},
        }
    if isinstance(tp, type) and tp.__name__ in model_classes():
        return instance(tp, n)
    raise AssertionError(
        f"no sample value for {tp!r}: teach tests/test_records.py (and check that "
        "okfx.records can store it)"
    )


def instance(cls: type, n: int) -> Any:
    hints = _hints(cls)
    values = {field: sample(hints[field], n + i) for i, field in enumerate(model_fields(cls))}
    if issubclass(cls, tuple):
        return cls(**values)
    return cls(**values)


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and not hasattr(a, "_fields"):
        return len(a) == len(b) and all(map(same, a, b))
    if type(a).__name__ in model_classes():
        return all(same(getattr(a, f), getattr(b, f)) for f in model_fields(type(a)))
    return bool(a == b)


def round_trip(objects: list[Any], cls: type, fields: Any = None) -> list[Any]:
    encoder = Encoder()
    spec = encoder.table(objects, cls, fields)
    return Decoder(encoder.string_table(), encoder.arrays).table(spec, cls, fields)


@pytest.mark.parametrize("name", sorted(model_classes()))
def test_every_field_of_every_model_class_round_trips(name: str) -> None:
    cls = model_classes()[name]
    objects = [instance(cls, 0), instance(cls, 5)]
    back = round_trip(objects, cls)
    for before, after in zip(objects, back, strict=True):
        assert type(after) is cls
        for field in model_fields(cls):
            assert same(getattr(before, field), getattr(after, field)), (name, field)


def test_the_model_classes_are_all_known_and_concepts_keep_every_other_field() -> None:
    assert {"Concept", "Link", "Problem", "Source", "IndexFile", "LogFile"} <= set(model_classes())
    # A concept's fields are either kept in memory (and stored) or read from its file.
    assert sorted(SLIM_FIELDS + LAZY_FIELDS) == sorted(Concept.__slots__)


def test_columns_pick_compact_encodings_and_none_mixes() -> None:
    encoder = Encoder()
    assert encoder.column(["a", None, "b"])["k"] == "str"
    assert encoder.column([1, 2])["k"] == "int"
    assert encoder.column([True, False])["k"] == "bool"
    assert encoder.column([None, None])["k"] == "none"
    assert encoder.column([("a",), ()])["k"] == "tuple"
    assert encoder.column([1, "a"])["k"] == "any"
    assert encoder.column([1 << 70])["k"] == "any"
    values: list[Any] = [1, "a", None, (1, [2]), {"k": {3}}, 1 << 70, float("inf")]
    back = Decoder(encoder.string_table(), encoder.arrays).column(encoder.column(values), 7)
    assert all(map(same, values, back))


def test_values_of_other_types_cannot_be_stored() -> None:
    class Custom:
        pass

    with pytest.raises(Unstorable):
        Encoder().column([Custom()])
    with pytest.raises(Unstorable):
        Encoder().column([datetime(2026, 1, 1, tzinfo=_OddZone())])


class _OddZone(tzinfo):
    def utcoffset(self, dt: Any) -> timedelta:
        return timedelta(hours=1)


def test_a_table_of_another_shape_is_refused() -> None:
    links = [Link("/a.md", "/b.md", "b.md", "b", "body", 3, True)]
    encoder = Encoder()
    spec = encoder.table(links, Link)
    decoder = Decoder(encoder.string_table(), encoder.arrays)
    for bad in (
        {**spec, "fields": spec["fields"][:-1]},
        {**spec, "class": "Concept"},
        {**spec, "class": "os.system"},
        {**spec, "n": 2},
        {**spec, "columns": spec["columns"][:-1]},
    ):
        with pytest.raises(StateFormatError):
            decoder.table(bad, Link)
    with pytest.raises(StateFormatError), decoding():  # an id past the string table
        Decoder(encoder.string_table()[:-1], encoder.arrays).table(spec, Link)


def test_tagged_values_build_only_known_types() -> None:
    decoder = Decoder([], [])
    for bad in (["o", "Path", "x"], ["zz", 1], [], [3], {"a": 1}, ["d", 1], ["o", "Link"]):
        with pytest.raises(StateFormatError):
            decoder.any(bad)


def test_real_concepts_round_trip_their_in_memory_fields(samples: Path) -> None:
    bundle = Bundle.load(samples / "ga4", state_cache=False)
    concepts = [Concept(**{f: getattr(c, f) for f in Concept.__slots__}) for c in bundle]
    back = round_trip(concepts, Concept)
    assert all(
        same(getattr(a, f), getattr(b, f))
        for a, b in zip(concepts, back, strict=True)
        for f in Concept.__slots__
    )
