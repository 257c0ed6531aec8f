"""The built-in attester: tampering fails with the first difference, formatting passes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attest_bundle import REVENUE_SQL, write_bundle
from okfx import Bundle
from okfx.attest import Bound, Check, attest, bind
from okfx.attest.sqltext import KEYWORDS, tokenize

NOW = datetime(2026, 11, 30, tzinfo=UTC)
LATER = datetime(2027, 1, 2, tzinfo=UTC)  # past stale_after 2026-12-31


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return Bundle.load(write_bundle(tmp_path_factory.mktemp("verdict") / "kb"))


@pytest.fixture(scope="module")
def bound(bundle: Bundle) -> Bound:
    return bind(bundle, "computations/revenue", {"year": 2026, "region": "north"})


def receipt(sql: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"run_id": "r1", "executed_sql": sql, "result": [100.5]}
    return {**base, **fields}


def statuses(verdict: Any) -> dict[str, str]:
    return {c.name: c.status for c in verdict.checks}


def test_the_sanctioned_sql_reformatted_attests(bound: Bound) -> None:
    reformatted = (
        "select sum(AMOUNT) as revenue from ORDERS /* same */ where STATUS = 'delivered' "
        "and YEAR = $YEAR and ($region is null or REGION = $Region);"
    )
    verdict = attest(
        bound,
        receipt(reformatted, parameters={"year": 2026, "region": "north"}),
        now=NOW,
        value=100.5,
    )
    assert verdict.status == "pass" and verdict.display, verdict.reasons
    assert statuses(verdict) == {
        "receipt": "pass",
        "provenance": "pass",
        "parameters": "pass",
        "fidelity": "pass",
        "freshness": "pass",
    }


def test_values_written_as_literals_attest_when_they_are_the_bound_ones(bound: Bound) -> None:
    expanded = REVENUE_SQL.replace("$year", "2026").replace("$region", "'north'")
    verdict = attest(bound, receipt(expanded), now=NOW)
    assert verdict.status == "pass", verdict.reasons
    typed = REVENUE_SQL.replace("$year", "CAST(2026 AS INTEGER)").replace(
        "$region", "CAST('north' AS VARCHAR)"
    )
    assert attest(bound, receipt(typed), now=NOW).status == "pass"


# The bad-input cases of the issue: each fails provenance and names the first difference.
TAMPERED = {
    "extra statement": (
        REVENUE_SQL.rstrip() + "; DROP TABLE orders",
        "expected the end of the statement, found `; drop table orders`",
    ),
    "different table": (
        REVENUE_SQL.replace("FROM orders", "FROM orders_backup"),
        "expected `orders`, found `orders_backup`",
    ),
    "changed literal": (
        REVENUE_SQL.replace("'delivered'", "'returned'"),
        "expected `'delivered'`, found `'returned'`",
    ),
    "added filter": (
        REVENUE_SQL.replace("WHERE status", "WHERE amount > 0 AND status"),
        "expected `status`, found `amount`",
    ),
    "other value inlined": (
        REVENUE_SQL.replace("$year", "2025"),
        "expected `@year` or a literal of its bound value `2026`, found `2025`",
    ),
    "smuggled string spliced unquoted": (
        REVENUE_SQL.replace("$region", "'north' OR '1'='1'"),
        "found `or`",
    ),
    "other parameter": (
        REVENUE_SQL.replace("year = $year", "year = $region"),
        "expected the parameter `@year`, found `@region`",
    ),
    "comment hiding code": (
        REVENUE_SQL.replace("SELECT", "SELECT /* x /* y */ 1, */"),
        "engines disagree",
    ),
}


@pytest.mark.parametrize("case", TAMPERED)
def test_a_tampered_query_fails_with_the_first_difference(bound: Bound, case: str) -> None:
    sql, difference = TAMPERED[case]
    verdict = attest(bound, receipt(sql), now=NOW, value=100.5)
    assert verdict.status == "fail" and not verdict.display
    assert statuses(verdict)["provenance"] == "fail"
    provenance = next(c for c in verdict.checks if c.name == "provenance")
    assert difference in provenance.message
    assert "line" in provenance.message


def test_the_difference_names_line_and_column_in_the_receipt(bound: Bound) -> None:
    sql = REVENUE_SQL.replace("FROM orders", "FROM orders_backup")
    verdict = attest(bound, receipt(sql), now=NOW)
    assert verdict.difference is not None
    assert (verdict.difference.line, verdict.difference.column) == (3, 6)
    assert verdict.to_dict()["difference"]["found"] == "`orders_backup`"
    # the words before it as the receipt writes them, which a search of it finds (docs
    # QA: canonical text, `@end_date` for `$end_date`, was in neither SQL)
    late = REVENUE_SQL.replace("OR region = $region", "OR Region <> $region")
    difference = attest(bound, receipt(late), now=NOW).difference
    assert difference is not None and difference.after.endswith("( $region IS NULL OR Region")


def test_declared_receipt_fields_must_be_present(bound: Bound) -> None:
    verdict = attest(bound, {"executed_sql": REVENUE_SQL}, now=NOW)
    assert statuses(verdict)["receipt"] == "fail"
    assert "run_id, result" in verdict.reasons[0]


def test_a_receipt_without_sql_fails_provenance(bound: Bound) -> None:
    verdict = attest(bound, {"run_id": "r", "result": [1]}, now=NOW)
    assert statuses(verdict)["provenance"] == "fail"


def test_a_run_that_reported_an_error_fails(bound: Bound) -> None:
    verdict = attest(bound, receipt(REVENUE_SQL, error="Binder Error", result=None), now=NOW)
    assert statuses(verdict)["receipt"] == "fail" and statuses(verdict)["fidelity"] == "fail"


def test_reported_values_must_be_the_claimed_ones(bound: Bound) -> None:
    ran_other = receipt(REVENUE_SQL, parameters={"year": 2025, "region": "north"})
    verdict = attest(bound, ran_other, now=NOW)
    assert statuses(verdict)["parameters"] == "fail"
    assert "year ran as 2025" in verdict.reasons[0]
    unreported = attest(bound, receipt(REVENUE_SQL), now=NOW)
    assert statuses(unreported)["parameters"] == "warn" and unreported.display


def test_fidelity_compares_the_displayed_value_with_the_result(bound: Bound) -> None:
    good = receipt(REVENUE_SQL, parameters={"year": 2026, "region": "north"})
    assert statuses(attest(bound, good, now=NOW, value="100.5"))["fidelity"] == "pass"
    wrong = attest(bound, good, now=NOW, value=101)
    assert statuses(wrong)["fidelity"] == "fail" and not wrong.display
    assert statuses(attest(bound, good, now=NOW))["fidelity"] == "skip"


def test_the_gate_warns_or_refuses_past_stale_after(bound: Bound) -> None:
    good = receipt(REVENUE_SQL, parameters={"year": 2026, "region": "north"})
    warned = attest(bound, good, now=LATER)
    assert warned.status == "warn" and warned.display
    assert "past its stale_after (2026-12-31T00:00:00Z)" in warned.reasons[0]
    refused = attest(bound, good, now=LATER, stale_policy="refuse")
    assert refused.status == "fail" and not refused.display
    data = refused.to_dict()
    assert data["stale"] is True and data["stale_policy"] == "refuse"
    assert data["trust_tier"] == "human-reviewed"
    assert data["verified"] == [{"by": "human:ana", "at": "2026-06-01T00:00:00Z"}]


def test_an_application_attester_adds_checks_and_cannot_hide_a_failure(bound: Bound) -> None:
    def reread(b: Bound, r: Any) -> list[Check]:
        return [Check("job", "pass", f"re-read {r['run_id']}")]

    def broken(b: Bound, r: Any) -> list[Check]:
        raise RuntimeError("no network")

    tampered = receipt(REVENUE_SQL.replace("orders", "orders_backup"))
    verdict = attest(bound, tampered, now=NOW, attesters=[reread])
    assert verdict.status == "fail" and statuses(verdict)["job"] == "pass"
    failing = attest(bound, receipt(REVENUE_SQL), now=NOW, attesters=[broken])
    assert failing.status == "fail" and "no network" in failing.reasons[-1]


def test_the_bundle_attester_resource_is_never_run(bundle: Bundle, tmp_path: Any) -> None:
    # The contract names /attesters/check.py; it does not even exist here, and attesting
    # neither needs nor looks for it.
    assert "/attesters/check.py" not in bundle.files
    verdict = attest(
        bind(bundle, "computations/revenue", {"year": 2026}), receipt(REVENUE_SQL), now=NOW
    )
    assert "attester" not in {c.name for c in verdict.checks}


@settings(max_examples=150, deadline=None)
@given(value=st.text(max_size=30))
def test_no_string_value_can_make_a_spliced_receipt_attest_unless_it_is_the_literal(
    bundle: Bundle, value: str
) -> None:
    """A receipt that pasted the value in unquoted (the classic injection) never attests,
    whatever the value; only the properly quoted literal does."""
    if "\x00" in value:
        return
    bound = bind(bundle, "computations/revenue", {"year": 2026, "region": value})
    quoted = "'" + value.replace("'", "''") + "'"
    sql = REVENUE_SQL.replace("$year", "2026")
    good = sql.replace("$region", quoted)
    assert attest(bound, receipt(good), now=NOW).status == "pass"
    spliced = sql.replace("$region", "'" + value + "'")
    if spliced != good:
        assert attest(bound, receipt(spliced), now=NOW).status == "fail"


SEPARATORS = st.sampled_from([" ", "\n", "\t  ", " -- note\n", " /* c */ ", "\n\n"])


@settings(max_examples=150, deadline=None)
@given(
    seps=st.lists(SEPARATORS, min_size=1, max_size=12),
    upper=st.lists(st.booleans(), min_size=1, max_size=12),
    bigquery=st.booleans(),
    prefix=st.sampled_from(["$", "@"]),
)
def test_any_reformatting_of_the_bound_sql_attests(
    bundle: Bundle, seps: list[str], upper: list[bool], bigquery: bool, prefix: str
) -> None:
    # DuckDB writes $name; BigQuery @name, and $name can only mean the same there.
    path, prefix = ("computations/bq", prefix) if bigquery else ("computations/revenue", "$")
    bound = bind(bundle, path, {"year": 2026, "region": "north"})
    pieces = []
    for i, token in enumerate(tokenize(bound.sql_for(prefix), bound.dialect)):
        # BigQuery identifiers are case-sensitive: there only keywords change case.
        foldable = bound.dialect.fold_case or token.key in KEYWORDS
        change = token.kind == "word" and foldable and upper[i % len(upper)]
        text = token.text.upper() if change else token.text
        pieces.append(text + seps[i % len(seps)])
    verdict = attest(bound, receipt("".join(pieces)), now=NOW)
    assert {c.name: c.status for c in verdict.checks}["provenance"] == "pass", verdict.reasons


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_changed_token_fails_provenance(bound: Bound, data: st.DataObject) -> None:
    tokens = tokenize(REVENUE_SQL, bound.dialect)
    index = data.draw(st.integers(0, len(tokens) - 1))
    new = data.draw(st.sampled_from(["x", "0", "'y'", "(", "orders2", "OR", "$other", ";"]))
    replaced = tokenize(new, bound.dialect)[0]
    if (replaced.kind, replaced.key) == (tokens[index].kind, tokens[index].key):
        return
    pieces = [t.text for t in tokens]
    pieces[index] = new
    verdict = attest(bound, receipt(" ".join(pieces)), now=NOW)
    assert {c.name: c.status for c in verdict.checks}["provenance"] == "fail"


def test_a_receipt_that_stops_early_differs_where_its_text_ends(bound: Bound) -> None:
    """QA: the difference of a cut-short receipt read "line 0, column 0"."""
    cut = REVENUE_SQL[: REVENUE_SQL.index("WHERE")].rstrip() + "\n\n"
    verdict = attest(bound, receipt(cut), now=NOW)
    assert verdict.difference is not None
    last = cut.rstrip().splitlines()
    assert (verdict.difference.line, verdict.difference.column) == (len(last), len(last[-1]) + 1)
    assert verdict.difference.found == "the end of the statement"
    assert f"line {len(last)}, column {len(last[-1]) + 1}" in verdict.difference.message


def test_a_stale_after_okfx_cannot_read_is_not_taken_for_fresh(tmp_path: Any) -> None:
    """``stale_after: soon`` passed the gate as "no stale_after", even under the refuse
    policy (Attested Computation QA): whether it is stale is not known, so the gate warns,
    or refuses under "refuse", and prepare_computation's gate says why."""
    from attest_bundle import FILES
    from conftest import write_tree
    from okfx import Toolbox

    text = str(FILES["computations/revenue.md"])
    files = {**FILES, "computations/revenue.md": text.replace("2026-12-31T00:00:00Z", "soon")}
    kb = Bundle.load(write_tree(tmp_path / "kb", files))
    soon = bind(kb, "computations/revenue", {"year": 2026, "region": "north"})
    good = receipt(REVENUE_SQL, parameters={"year": 2026, "region": "north"})
    warned = attest(soon, good, now=NOW, value=100.5)
    assert (warned.status, warned.display) == ("warn", True)
    assert "stale_after is written 'soon'" in warned.reasons[0]
    refused = attest(soon, good, now=NOW, value=100.5, stale_policy="refuse")
    assert (refused.status, refused.display) == ("fail", False)
    gate = Toolbox(kb).prepare_computation(
        path="computations/revenue", parameters={"year": 2026, "region": "north"}
    )["gate"]
    assert any(n.startswith("STALE_AFTER: written 'soon'") for n in gate["notices"])


def test_a_receipt_whose_sql_fields_disagree_fails(bound: Bound) -> None:
    """A right executed_sql beside compiled_sql "SELECT 1" passed (AC QA): every SQL
    field a receipt carries is the computation, or the receipt contradicts itself."""
    fields = {"parameters": {"year": 2026, "region": "north"}}
    same = receipt(REVENUE_SQL, compiled_sql=REVENUE_SQL.lower(), **fields)
    assert attest(bound, same, now=NOW).status == "pass"
    other = attest(bound, receipt(REVENUE_SQL, compiled_sql="SELECT 1", **fields), now=NOW)
    assert other.status == "fail" and "contradicts itself" in other.reasons[0]
    assert statuses(other)["provenance"] == "fail"


def test_a_value_from_another_column_than_the_first_is_said(bound: Bound) -> None:
    """AC QA: a result (revenue, row_count) attested a displayed row count as the
    revenue: any cell of the first row passed. The first cell passes; another warns,
    naming its column."""
    fields = {"parameters": {"year": 2026, "region": "north"}}
    first = attest(bound, receipt(REVENUE_SQL, result=[3.614, 1], **fields), now=NOW, value=3.614)
    assert statuses(first)["fidelity"] == "pass"
    rows = receipt(REVENUE_SQL, result=[[3.614, 1]], columns=["revenue", "rows"], **fields)
    other = attest(bound, rows, now=NOW, value=1)
    assert statuses(other)["fidelity"] == "warn" and other.display
    assert "result column 'rows', not its first cell" in other.reasons[0]
    mapped = receipt(REVENUE_SQL, result={"revenue": 3.614, "n": 1}, **fields)
    assert "column 'n'" in attest(bound, mapped, now=NOW, value=1).reasons[0]
