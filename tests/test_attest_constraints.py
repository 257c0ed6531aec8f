"""Computations as another producer writes them (aws-samples/sample-okf-llm-wiki's harvest):
``@name`` holes in Athena and Redshift SQL, and parameters with ``default``, ``example``,
``enum``, ``min`` and ``max`` beside spec §10.2's ``{name, type, required}``."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import write_tree
from okfx import Bundle, Toolbox
from okfx.attest import attest, bind
from okfx.attest.sqltext import STANDARD, tokenize
from okfx.errors import InvalidParameter

NOW = datetime(2026, 11, 30, tzinfo=UTC)

# The shape of the producer's own template (its references/templates.md).
REVENUE = """\
---
type: Attested Computation
title: Revenue, month vs same month in prior years
runtime: {runtime}
parameters:
  - {{name: month, type: date, required: true, example: "2026-07-01"}}
  - {{name: region, type: string, required: false, default: "EMEA",
     enum: [EMEA, NA, APAC], column: customers.region}}
  - {{name: top, type: integer, required: false, default: 10, min: 1, max: 100}}
  - {{name: since, type: date, min: 2020-01-01}}
verified: null
verified_by: null
---

Revenue for one month and region.

# Computation

```sql
SELECT m, revenue
FROM monthly
WHERE m IN (@month, @month - INTERVAL '1' YEAR)
  AND region = @region  -- @region here is a comment
  AND note <> '@month'
  AND (@since IS NULL OR m >= @since)
ORDER BY revenue DESC
LIMIT @top
```
"""

BAD = """\
---
type: Attested Computation
runtime: athena
parameters:
  - {name: region, type: string, default: "EU", enum: [EMEA, NA]}
  - {name: n, type: integer, default: ten}
  - {name: tag, type: string, enum: EMEA, example: [1, 2]}
---

# Computation

```sql
SELECT 1 WHERE r = @region AND k = @n AND t = @tag
```
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    root = tmp_path_factory.mktemp("producer") / "kb"
    files: dict[str, str | bytes] = {
        f"{runtime}.md": REVENUE.format(runtime=runtime)
        for runtime in ("athena", "redshift", "duckdb")
    }
    files["bad.md"] = BAD
    return Bundle.load(write_tree(root, files))


@pytest.mark.parametrize("runtime", ["athena", "redshift", "duckdb"])
def test_at_holes_of_declared_parameters_bind(bundle: Bundle, runtime: str) -> None:
    bound = bind(bundle, runtime, {"month": "2026-07-01", "region": "NA"})
    # Five holes: @month twice, @region, @since twice, @top; not the comment nor the string.
    assert sorted(t.key for t in bound.tokens if t.kind == "param") == [
        "month",
        "month",
        "region",
        "since",
        "since",
        "top",
    ]
    assert "'@month'" in bound.expanded and "@region here" not in bound.expanded
    assert "DATE '2026-07-01'".casefold() in bound.expanded.casefold()
    assert bound.sql_for("$").count("$month") == 2 and "@" not in bound.sql_for("$").split("--")[0]
    assert bound.values == {"month": date(2026, 7, 1), "region": "NA", "top": 10, "since": None}


def test_an_at_sign_that_is_no_declared_hole_stays_what_it_was() -> None:
    names = frozenset({"month"})
    kinds = [
        (t.kind, t.text) for t in tokenize("SELECT @x, a@month, @@month, @month", STANDARD, names)
    ]
    assert kinds == [
        ("word", "SELECT"),
        ("op", "@"),  # PostgreSQL's absolute value of x: x is no parameter
        ("word", "x"),
        ("op", ","),
        ("word", "a"),
        ("op", "@"),  # after a word: an operator
        ("word", "month"),
        ("op", ","),
        ("word", "@@month"),  # a system variable
        ("op", ","),
        ("param", "@month"),
    ]
    # Without declared names nothing changes: $ is the standard dialect's only prefix.
    assert [t.kind for t in tokenize("@month", STANDARD)] == ["op", "word"]


def test_a_default_fills_an_omitted_value_and_says_so(bundle: Bundle) -> None:
    bound = bind(bundle, "athena", {"month": "2026-07-01"})
    assert bound.values["region"] == "EMEA" and bound.values["top"] == 10
    assert bound.defaults == {"region", "top"}
    shown = {p["name"]: p for p in bound.to_dict()["parameters"]}
    assert shown["region"]["from_default"] and not shown["month"]["from_default"]
    assert bind(bundle, "athena", {"month": "2026-07-01", "top": 3}).values["top"] == 3


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"region": "EU"}, "'EU' is not one of the declared values ('EMEA', 'NA', 'APAC')"),
        ({"top": 0}, "0 is below the declared min 1"),
        ({"top": 101}, "101 is above the declared max 100"),
        ({"since": "2019-12-31"}, "is below the declared min '2020-01-01'"),
        ({"region": 3}, "must be a string"),  # the type is checked first
    ],
)
def test_values_outside_the_declared_constraints_are_refused(
    bundle: Bundle, values: dict[str, Any], words: str
) -> None:
    with pytest.raises(InvalidParameter) as caught:
        bind(bundle, "redshift", {"month": "2026-07-01", **values})
    assert words in caught.value.message
    assert caught.value.code == "invalid_parameter"


def test_a_contract_whose_default_breaks_it_is_the_contracts_fault(bundle: Bundle) -> None:
    with pytest.raises(InvalidParameter) as caught:
        bind(bundle, "bad", {"n": 1, "tag": "x"})
    assert "declares default 'EU', but 'EU' is not one of the declared values" in (
        caught.value.message
    )
    with pytest.raises(InvalidParameter) as caught:
        bind(bundle, "bad", {"region": "NA", "tag": "x"})
    assert "declares default 'ten', which is not an integer" in caught.value.message


def test_constraints_that_are_no_values_are_reported_and_left_out(bundle: Bundle) -> None:
    found = {w.message for w in bundle.warnings if w.path == "/bad.md"}
    assert "parameters[2].enum must be a non-empty list of values; ignored (line 7)" in found
    assert "parameters[2].example is a list, not one value; ignored (line 7)" in found
    tag = bundle.concept("bad").computation.parameters[2]  # type: ignore[union-attr]
    assert tag.enum is None and tag.example is None


def test_an_agent_reads_the_constraints_with_the_contract(bundle: Bundle) -> None:
    result = Toolbox(bundle).read_concept("athena")
    parameters = {p["name"]: p for p in result["computation"]["parameters"]}
    assert parameters["month"] == {
        "name": "month",
        "type": "date",
        "required": True,
        "example": "2026-07-01",
    }
    assert parameters["region"]["enum"] == ["EMEA", "NA", "APAC"]
    assert parameters["region"]["default"] == "EMEA"
    assert (parameters["top"]["min"], parameters["top"]["max"]) == (1, 100)


def test_a_receipt_of_the_expanded_statement_attests(bundle: Bundle) -> None:
    bound = bind(bundle, "athena", {"month": "2026-07-01"})
    receipt = {"executed_sql": bound.expanded, "result": [1.0]}
    verdict = attest(bound, receipt, now=NOW)
    assert {c.name: c.status for c in verdict.checks}["provenance"] == "pass", verdict.reasons
    # A receipt that ran another region does not.
    other = bound.expanded.replace("'EMEA'", "'NA'")
    verdict = attest(bound, {"executed_sql": other, "result": [1.0]}, now=NOW)
    assert {c.name: c.status for c in verdict.checks}["provenance"] == "fail"


def test_duckdb_runs_a_computation_with_at_holes_and_defaults(tmp_path: Path) -> None:
    pytest.importorskip("duckdb", reason="needs the duckdb extra: pip install -e '.[duckdb]'")
    from okfx.attest.duckdb_executor import DuckDBExecutor

    sales = tmp_path / "sales.csv"
    sales.write_text("region,amount\nEMEA,5\nEMEA,7\nNA,100\n", encoding="utf-8")
    text = (
        "---\ntype: Attested Computation\nruntime: duckdb\nparameters:\n"
        "  - {name: region, type: string, default: EMEA, enum: [EMEA, NA]}\n---\n\n"
        "# Computation\n\n```sql\nSELECT SUM(amount) AS total FROM sales "
        "WHERE region = @region\n```\n"
    )
    bundle = Bundle.load(write_tree(tmp_path / "kb", {"total.md": text}))
    executor = DuckDBExecutor({"sales": sales}, timeout=5)
    bound = bind(bundle, "total", {})
    receipt = executor.run(bound)
    assert receipt["result"] == [12] and "error" not in receipt
    verdict = attest(bound, receipt, now=NOW, value=12, attesters=[executor.attest])
    assert verdict.status in ("pass", "warn") and verdict.display, verdict.reasons
