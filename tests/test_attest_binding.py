"""Binding: typed values only, the computation read through the path guard, never spliced."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attest_bundle import REVENUE_SQL, write_bundle
from okfx import Bundle
from okfx.attest import bind
from okfx.attest.sqltext import tokenize
from okfx.attest.values import check_values, from_text
from okfx.errors import InvalidParameter, NotAttestable, NotFound, UnsafePath
from okfx.model import Parameter


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return Bundle.load(write_bundle(tmp_path_factory.mktemp("attest") / "kb"))


def test_inline_and_file_computations_bind_the_same_text(bundle: Bundle) -> None:
    inline = bind(bundle, "computations/revenue", {"year": 2026})
    by_file = bind(bundle, "/computations/revenue-file.md", {"year": 2026})
    assert inline.source == "inline" and by_file.source == "/computations/sql/revenue.sql"
    assert inline.sql == by_file.sql == REVENUE_SQL
    assert inline.values == {"year": 2026, "region": None}
    assert inline.query_parameters() == {"year": 2026, "region": None}


def test_values_travel_as_parameters_and_never_enter_the_text(bundle: Bundle) -> None:
    smuggled = "north' OR '1'='1'; DROP TABLE orders; --"
    bound = bind(bundle, "computations/revenue", {"year": 2026, "region": smuggled})
    assert smuggled not in bound.sql_for("$") and "DROP" not in bound.sql_for("$")
    assert bound.sql_for("$") == REVENUE_SQL  # duckdb placeholders as written
    assert bound.sql_for("@").count("@region") == 2
    assert bound.query_parameters()["region"] == smuggled
    # The expanded form holds the value as one string literal: the statement is unchanged.
    sanctioned = [t.kind for t in bound.tokens]
    expanded = tokenize(bound.expanded, bound.dialect)
    assert len(expanded) == len(sanctioned)
    assert [t.kind for t in expanded].count("string") == sanctioned.count("string") + 2


@pytest.mark.parametrize(
    ("values", "parameter", "expected"),
    [
        ({}, "year", "integer"),  # a missing required parameter
        ({"year": "2026"}, "year", "integer"),  # text is not an integer
        ({"year": 2026.5}, "year", "integer"),
        ({"year": True}, "year", "integer"),  # a boolean is not an integer
        ({"year": 2**63}, "year", "integer"),  # outside 64 bits
        ({"year": 2026, "region": 3}, "region", "string"),
        ({"year": 2026, "region": "x" * 5000}, "region", "string"),  # bounded size
        ({"year": 2026, "sql": "DROP TABLE orders"}, "sql", "a declared parameter name"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_parameter_and_its_type(
    bundle: Bundle, values: dict[str, Any], parameter: str, expected: str
) -> None:
    with pytest.raises(InvalidParameter) as raised:
        bind(bundle, "computations/revenue", values)
    assert raised.value.parameter == parameter and raised.value.expected == expected
    assert raised.value.code == "invalid_parameter"
    assert parameter in raised.value.message


def test_each_declared_type_is_checked() -> None:
    declared = tuple(
        Parameter(name, type_, False)
        for name, type_ in [
            ("s", "string"),
            ("i", "INT64"),
            ("n", "number"),
            ("b", "boolean"),
            ("d", "date"),
            ("t", "timestamp"),
        ]
    )
    good = {"s": "x", "i": -3, "n": 2.5, "b": False, "d": "2026-10-05", "t": "2026-10-05T08:00Z"}
    assert check_values(declared, good) == {
        "s": "x",
        "i": -3,
        "n": 2.5,
        "b": False,
        "d": date(2026, 10, 5),
        "t": datetime(2026, 10, 5, 8, tzinfo=UTC),
    }
    for name, bad in [
        ("n", float("nan")),
        ("b", "true"),
        ("d", "20261005"),
        ("d", "2026-02-30"),
        ("t", "2026-10-05T08:00"),  # no offset: never guessed
        ("s", "a\x00b"),
    ]:
        with pytest.raises(InvalidParameter, match=name):
            check_values(declared, {name: bad})


def test_a_huge_number_is_refused_as_one_not_a_crash() -> None:
    """An integer past what a float holds (``10**400``) is a JSON number an agent may
    send: refused as out of range, where converting it raised OverflowError
    (``internal_error``; Attested Computation QA)."""
    declared = (Parameter("n", "number", True), Parameter("d", "date", True))
    for value in (10**400, -(10**400), 1e300):
        with pytest.raises(InvalidParameter, match="under 1e300") as caught:
            check_values(declared, {"n": value, "d": "2026-01-01"})
        assert len(caught.value.message) < 300  # no 400-digit repr
    assert check_values(declared, {"n": 10**299, "d": "2026-01-01"})["n"] == 10**299
    with pytest.raises(InvalidParameter, match="names no day of the calendar"):
        check_values(declared, {"n": 1, "d": "2024-02-30"})


def test_a_timestamp_finer_than_a_microsecond_is_refused_not_cut() -> None:
    """Nanoseconds were cut silently, binding another instant than the one sent (AC QA)."""
    declared = (Parameter("t", "timestamp", True),)
    with pytest.raises(InvalidParameter, match="finer than a microsecond"):
        check_values(declared, {"t": "2026-10-05T12:00:00.123456789Z"})
    for text, micro in [
        ("2026-10-05T12:00:00.123456Z", 123456),
        ("2026-10-05T12:00:00.123456000+00:00", 123456),  # zeros past the sixth cut nothing
        ("2026-10-05T12:00:00.5Z", 500000),
    ]:
        assert check_values(declared, {"t": text})["t"].microsecond == micro


def test_a_bound_breach_shows_a_date_as_written() -> None:
    declared = (Parameter("d", "date", True, minimum="2025-01-01"),)
    with pytest.raises(InvalidParameter) as caught:
        check_values(declared, {"d": "2024-12-31"})
    assert "'2024-12-31' is below the declared min '2025-01-01'" in caught.value.message
    assert "datetime" not in caught.value.message


def test_an_unknown_declared_type_is_refused_not_guessed() -> None:
    with pytest.raises(InvalidParameter, match="declares type 'geography'"):
        check_values((Parameter("g", "geography", True),), {"g": "POINT(1 2)"})


def test_command_line_text_is_read_by_the_declared_type() -> None:
    declared = (Parameter("i", "integer", True), Parameter("b", "bool", False))
    assert from_text(declared, {"i": "2026", "b": "TRUE"}) == {"i": 2026, "b": True}
    # Text that is not of the type stays text, and the check names the parameter.
    with pytest.raises(InvalidParameter, match="'i' must be an integer"):
        check_values(declared, from_text(declared, {"i": "twenty"}))


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=40))
def test_any_string_binds_as_itself(text: str) -> None:
    declared = (Parameter("s", "string", True),)
    if "\x00" in text:
        with pytest.raises(InvalidParameter):
            check_values(declared, {"s": text})
    else:
        assert check_values(declared, {"s": text}) == {"s": text}


def test_a_concept_that_is_not_an_attested_computation_cannot_be_bound(bundle: Bundle) -> None:
    with pytest.raises(NotAttestable, match="not an Attested Computation"):
        bind(bundle, "metrics/revenue", {"year": 2026})
    with pytest.raises(NotFound):
        bind(bundle, "computations/nope", {})


def test_a_computation_file_outside_the_bundle_is_refused(bundle: Bundle) -> None:
    with pytest.raises(UnsafePath, match="climbs above the bundle root"):
        bind(bundle, "computations/escape", {"year": 2026})


def test_a_symlinked_computation_file_leading_out_is_refused(tmp_path: Path) -> None:
    root = write_bundle(tmp_path / "kb")
    outside = tmp_path / "secret.sql"
    outside.write_text("SELECT password FROM users WHERE year = $year\n", encoding="utf-8")
    os.remove(root / "computations" / "sql" / "revenue.sql")
    os.symlink(outside, root / "computations" / "sql" / "revenue.sql")
    loaded = Bundle.load(root)
    with pytest.raises((UnsafePath, NotAttestable)):
        bind(loaded, "computations/revenue-file", {"year": 2026})


def test_runtimes_okfx_cannot_read_as_sql_are_refused(bundle: Bundle) -> None:
    with pytest.raises(NotAttestable, match="runtime 'python'"):
        bind(bundle, "computations/python", {"year": 2026})


def test_a_placeholder_the_contract_does_not_declare_is_refused(bundle: Bundle) -> None:
    with pytest.raises(NotAttestable, match=r"\$other"):
        bind(bundle, "computations/undeclared", {"year": 2026})


def test_the_bound_artifact_as_data(bundle: Bundle) -> None:
    data = bind(bundle, "computations/bq", {"year": 2026, "region": "it's"}).to_dict()
    assert data["dialect"] == "bigquery" and data["runtime"] == "bigquery"
    assert data["query_parameters"] == {"year": 2026, "region": "it's"}
    assert data["expanded_sql"].endswith(
        "where year = 2026 and ( 'it\\'s' is null or region = 'it\\'s' )"
    )
    assert data["receipt_fields"] == ["run_id", "executed_sql", "result"]


def test_a_snowflake_value_with_a_backslash_stays_one_literal(tmp_path: Path) -> None:
    """Security QA: Snowflake reads \\' inside '...' as an escaped quote, and a value
    \\' OR 1=1 -- was written 'x\\'' OR 1=1 --': to Snowflake the literal ended early and the
    filter after it became a comment. Snowflake runtimes are read with backslash escapes."""
    from conftest import write_tree

    text = (
        "---\ntype: Attested Computation\nruntime: snowflake\nparameters:\n"
        "  - {name: region, type: string, required: true}\n---\n\n# Computation\n\n"
        "```sql\nSELECT SUM(a) FROM t WHERE region = $region AND tenant = 7\n```\n"
    )
    loaded = Bundle.load(write_tree(tmp_path / "kb", {"c.md": text}))
    bound = bind(loaded, "c", {"region": "\\' OR 1=1 --"})
    assert bound.dialect.name == "snowflake"
    expanded = tokenize(bound.expanded, bound.dialect)  # as Snowflake reads it
    assert [t.kind for t in expanded].count("string") == 1  # the value, whole
    assert [t.text for t in expanded][-3:] == ["tenant", "=", "7"]  # the filter stays
