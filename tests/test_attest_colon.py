"""Computations as okf4net writes them: ``:name`` holes (pg8000 and SQLAlchemy's named
binding) in PostgreSQL SQL, with ``::`` casts beside them, and an executor that names its
receipt fields but no resource."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conftest import MakeBundle
from okfx import Bundle, Toolbox
from okfx.attest import attest, bind
from okfx.attest.lint import computation_problems
from okfx.attest.sqltext import STANDARD, tokenize

NOW = datetime(2026, 10, 1, tzinfo=UTC)
SQL = (
    "SELECT count(*) AS completed_trips FROM trips\n"
    "WHERE service_date = :service_date::date AND status = 'completed'"
)
DAILY = f"""\
---
type: Attested Computation
title: Daily ridership
runtime: postgres
parameters:
  - {{name: service_date, type: string, required: true}}
executor:
  receipt: [executed_sql, result]
---

Completed trips on one service day.

# Computation

```sql
{SQL}
```
"""


@pytest.fixture
def bundle(make_bundle: MakeBundle) -> Bundle:
    return Bundle.load(make_bundle({"computations/daily.md": DAILY}))


def test_a_colon_hole_of_a_declared_name_is_a_parameter_and_a_cast_is_not() -> None:
    names = frozenset({"d"})
    kinds = [
        (t.kind, t.text)
        for t in tokenize("SELECT :d::date, x::d, a:d, :other, ':d'", STANDARD, names)
    ]
    assert kinds == [
        ("word", "SELECT"),
        ("param", ":d"),
        ("op", "::"),
        ("word", "date"),
        ("op", ","),
        ("word", "x"),
        ("op", "::"),  # a cast to a type named d: no hole
        ("word", "d"),
        ("op", ","),
        ("word", "a"),
        ("op", ":"),  # after a word (a JSON path, a slice): no hole
        ("word", "d"),
        ("op", ","),
        ("op", ":"),  # undeclared: no hole
        ("word", "other"),
        ("op", ","),
        ("string", "':d'"),
    ]
    assert [t.kind for t in tokenize(":d", STANDARD)] == ["op", "word"]


def test_the_colon_hole_binds_and_the_lint_sees_it_used(bundle: Bundle) -> None:
    bound = bind(bundle, "computations/daily", {"service_date": "2026-09-10"})
    assert bound.query_parameters() == {"service_date": "2026-09-10"}
    assert "service_date = '2026-09-10' :: date" in bound.expanded
    assert computation_problems(bundle) == []


def test_a_receipt_is_attested_against_the_value_the_colon_hole_bound(bundle: Bundle) -> None:
    bound = bind(bundle, "computations/daily", {"service_date": "2026-09-10"})
    kept = attest(bound, {"executed_sql": SQL, "result": [{"completed_trips": 2}]}, now=NOW)
    assert kept.status == "warn"  # the receipt keeps the hole: the value is taken as claimed
    assert [c.name for c in kept.checks if c.status == "warn"] == ["parameters"]
    other_day = SQL.replace(":service_date", "'2026-09-11'")
    wrong = attest(bound, {"executed_sql": other_day, "result": [{"completed_trips": 2}]}, now=NOW)
    assert wrong.status == "fail" and not wrong.display
    assert "2026-09-11" in next(c.message for c in wrong.checks if c.name == "provenance")


def test_an_executor_that_declares_only_its_receipt_is_no_problem(
    make_bundle: MakeBundle,
) -> None:
    """§10.2 makes only ``runtime`` required and leaves packaging open: okf4net's host
    runs the runtime itself. An executor or attester that names nothing still is one."""
    empty = DAILY.replace("executor:\n  receipt: [executed_sql, result]\n", "executor: {}\n")
    no_check = DAILY.replace("executor:", "attester: {note: x}\nexecutor:")
    bundle = Bundle.load(
        make_bundle({"daily.md": DAILY, "empty.md": empty, "nocheck.md": no_check})
    )
    found = sorted((w.path, w.message) for w in bundle.warnings)
    assert [path for path, _ in found] == ["/empty.md", "/nocheck.md"]
    assert found[0][1].startswith("executor names neither a resource (what runs it) nor a")
    assert found[1][1].startswith("attester has no resource: it names no check of a run")


def test_a_computation_okfx_cannot_attest_says_so_where_an_agent_reads_it(
    make_bundle: MakeBundle,
) -> None:
    """okf4net's Python computations: the note does not send an agent to tools that will
    refuse it; a SQL one's still does."""
    capped = (
        "---\ntype: Attested Computation\nruntime: python\nparameters:\n"
        "  - {name: fare, type: number, required: true}\nexecutor: {receipt: [result]}\n---\n\n"
        "# Computation\n\n```python\nprint(min(fare, 2.5))\n```\n"
    )
    box = Toolbox(
        Bundle.load(make_bundle({"capped.md": capped, "daily.md": DAILY})), now=lambda: NOW
    )
    python = box.read_concept(path="capped")["computation"]["note"]
    assert "its runtime is 'python'" in python and "answer not_attestable" in python
    assert box.prepare_computation(path="capped", parameters={"fare": 3})["error"]["code"] == (
        "not_attestable"
    )
    sql = box.read_concept(path="daily")["computation"]["note"]
    assert "Bind values with prepare_computation" in sql
