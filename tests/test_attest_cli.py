"""``okfx computation`` prints the binding; ``okfx attest`` prints the verdict and fails CI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from attest_bundle import REVENUE_SQL, write_bundle
from okfx.cli.commands import cli


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin)


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_bundle(tmp_path_factory.mktemp("cli") / "kb"))


def test_computation_prints_the_bound_artifact(kb: str) -> None:
    result = run("computation", kb, "computations/revenue", "--param", "year=2026")
    assert result.exit_code == 0, result.output
    assert "year = 2026  (integer)" in result.output and "status = 'delivered'" in result.output
    assert "receipt must contain: run_id, executed_sql, result" in result.output
    as_json = json.loads(
        run("computation", kb, "computations/revenue", "--param", "year=2026", "--json").output
    )
    assert as_json["query_parameters"] == {"year": 2026, "region": None}


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["--param", "year=twenty"], 2, "'year' must be an integer"),
        (["--param", "year"], 2, "must be NAME=VALUE"),
        (["--param", "year=2026", "--param", "sql=DROP"], 2, "'sql' is not declared"),
        # the last of two values was bound silently (AC QA)
        (["--param", "year=2025", "--param", "year=2026"], 2, "--param year is given twice"),
        # CLI QA: said in the tool's words ("a JSON number without a fraction")
        ([], 2, "parameter 'year' is required: add --param year=VALUE, an integer"),
    ],
)
def test_computation_reports_bad_values(kb: str, args: list[str], code: int, text: str) -> None:
    result = run("computation", kb, "computations/revenue", *args)
    assert result.exit_code == code and text in result.output + result.stderr


def test_computation_refuses_a_concept_that_is_not_one(kb: str, tmp_path: Path) -> None:
    """Exit 3: okfx cannot judge it, which a CI job must tell from a failed verdict (1)."""
    result = run("computation", kb, "metrics/revenue", "--param", "year=2026")
    assert result.exit_code == 3 and "not_attestable" in result.stderr
    receipt = _receipt(tmp_path, "SELECT 1")
    attested = run("attest", kb, "metrics/revenue", "--param", "year=2026", "--receipt", receipt)
    assert attested.exit_code == 3 and "not_attestable" in attested.stderr


def _receipt(tmp_path: Path, sql: str, **extra: object) -> str:
    path = tmp_path / "receipt.json"
    body = {"run_id": "r1", "executed_sql": sql, "result": [140.5], **extra}
    path.write_text(json.dumps(body), encoding="utf-8")
    return str(path)


def attest(kb: str, receipt: str, *options: str, stdin: str | None = None) -> Result:
    """``okfx attest`` of the revenue computation for 2026 with ``receipt``."""
    args = ["attest", kb, "computations/revenue", "--param", "year=2026", "--receipt", receipt]
    return run(*args, *options, stdin=stdin)


def test_attest_passes_a_good_receipt_and_exits_zero(kb: str, tmp_path: Path) -> None:
    receipt = _receipt(tmp_path, REVENUE_SQL, parameters={"year": 2026, "region": None})
    result = attest(kb, receipt, "--value", "140.5", "--now", "2026-11-30T00:00:00Z")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("PASS") and "display: yes" in result.output
    assert "trust: human-reviewed" in result.output


def test_attest_fails_a_tampered_receipt_and_exits_one(kb: str, tmp_path: Path) -> None:
    result = attest(kb, _receipt(tmp_path, REVENUE_SQL.rstrip() + "; DROP TABLE orders"), "--json")
    assert result.exit_code == 1
    verdict = json.loads(result.output)
    assert verdict["verdict"] == "fail" and verdict["display"] is False
    assert verdict["difference"]["found"] == "`; drop table orders`"


def test_attest_refuses_past_stale_after_only_under_the_refuse_policy(
    kb: str, tmp_path: Path
) -> None:
    receipt = _receipt(tmp_path, REVENUE_SQL, parameters={"year": 2026})
    warned = attest(kb, receipt, "--now", "2027-01-05T00:00:00Z")
    assert warned.exit_code == 0 and warned.output.startswith("WARN")
    refused = attest(kb, receipt, "--now", "2027-01-05T00:00:00Z", "--stale-policy", "refuse")
    assert refused.exit_code == 1 and "past its stale_after" in refused.output


def test_attest_says_freshness_is_not_known_for_a_stale_after_it_cannot_read(
    tmp_path: Path,
) -> None:
    """Spec QA: the check said "not known" and the summary line "(fresh, ...)"."""
    root = write_bundle(tmp_path / "kb")
    page = root / "computations" / "revenue.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(re.sub(r"stale_after: \S+", "stale_after: soon", text), encoding="utf-8")
    receipt = _receipt(tmp_path, REVENUE_SQL, parameters={"year": 2026, "region": None})
    shown = attest(str(root), receipt, "--value", "140.5", "--now", "2026-11-30T00:00:00Z")
    assert "whether it is stale is not known" in shown.output
    assert "stale_after unreadable (freshness not known, policy warn)" in shown.output
    assert "fresh," not in shown.output


def test_attest_reads_the_receipt_from_stdin_and_rejects_bad_json(kb: str) -> None:
    body = json.dumps({"run_id": "r", "executed_sql": REVENUE_SQL, "result": [1]})
    ok = attest(kb, "-", stdin=body)
    assert ok.exit_code == 0, ok.output  # a warning: the values are not reported
    bad = attest(kb, "-", stdin="{not json")
    assert bad.exit_code == 2 and "is not JSON" in bad.stderr


@pytest.mark.parametrize(
    ("args", "stdin", "said"),
    [
        (["--receipt", "-"], "{not json", "the receipt - is not JSON"),
        (["--receipt", "-"], '{"result": [NaN]}', "NaN is not a JSON value"),
        (["--receipt", "/no/such/receipt.json"], None, "cannot read the receipt"),
        (["--receipt", "-", "--now", "garbage"], "{}", "'garbage' is not a valid ISO 8601"),
    ],
)
def test_attest_reports_a_bad_receipt_or_now_as_every_failure_is(
    kb: str, args: list[str], stdin: str | None, said: str
) -> None:
    """Docs audit: these printed click's usage block, and nothing on stdout with --json."""
    base = ["attest", kb, "computations/revenue", "--param", "year=2026", *args]
    text = run(*base, stdin=stdin)
    assert text.exit_code == 2
    assert text.stderr.startswith("error[invalid_argument]: ") and said in text.stderr
    assert "Usage:" not in text.stderr
    as_json = run(*base, "--json", stdin=stdin)
    assert as_json.exit_code == 2
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "invalid_argument" and said in error["message"]


def test_computation_and_attest_take_the_load_options(kb: str) -> None:
    for command in ("computation", "attest"):
        shown = run(command, "--help").output
        assert all(flag in shown for flag in ("--refresh", "--exclude", "--wikilinks"))
    bound = run("computation", kb, "computations/revenue", "--param", "year=2026", "--refresh")
    assert bound.exit_code == 0, bound.output


def test_serve_runs_nothing_unless_an_executor_and_its_data_are_named(kb: str) -> None:
    result = run("serve", kb, "--data", "orders=orders.csv")
    assert result.exit_code == 2 and "add --executor duckdb" in result.stderr
    result = run("serve", kb, "--executor", "duckdb")
    assert result.exit_code == 2 and "needs at least one --data" in result.stderr
