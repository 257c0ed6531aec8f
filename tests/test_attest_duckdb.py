"""The DuckDB executor: runs only the bound SELECT, over the application's files, locked down."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from attest_bundle import REVENUE_SQL, computation, write_bundle, write_orders
from conftest import PROJECT_ROOT, write_tree
from okfx import Bundle
from okfx.attest import ComputationSettings, attest, bind
from okfx.errors import InvalidArgument, NoExecutor, NotAttestable

duckdb = pytest.importorskip(
    "duckdb", reason="the DuckDB executor needs the duckdb extra: pip install -e '.[duckdb]'"
)
from okfx.attest.duckdb_executor import DuckDBExecutor  # noqa: E402

NOW = datetime(2026, 11, 30, tzinfo=UTC)


@pytest.fixture
def bundle(tmp_path: Path) -> Bundle:
    return Bundle.load(write_bundle(tmp_path / "kb"))


@pytest.fixture
def executor(tmp_path: Path) -> DuckDBExecutor:
    return DuckDBExecutor({"orders": write_orders(tmp_path / "orders.csv")}, timeout=5)


def test_a_run_returns_a_receipt_that_attests(bundle: Bundle, executor: DuckDBExecutor) -> None:
    bound = bind(bundle, "computations/revenue", {"year": 2026, "region": "north"})
    receipt = executor.run(bound)
    assert receipt["result"] == [100.5] and receipt["columns"] == ["revenue"]
    assert receipt["executed_sql"] == REVENUE_SQL and receipt["parameters"]["region"] == "north"
    assert receipt["run_id"].startswith("duckdb:") and "error" not in receipt
    verdict = attest(bound, receipt, now=NOW, value=100.5, attesters=[executor.attest])
    assert verdict.status == "pass", verdict.reasons
    assert {c.name: c.status for c in verdict.checks}["rerun"] == "pass"


def test_optional_parameters_bind_as_null(bundle: Bundle, executor: DuckDBExecutor) -> None:
    receipt = executor.run(bind(bundle, "computations/revenue", {"year": 2026}))
    assert receipt["result"] == [140.5]


def test_a_smuggled_string_is_a_value_and_changes_nothing(
    bundle: Bundle, executor: DuckDBExecutor
) -> None:
    smuggled = "north' OR '1'='1"
    bound = bind(bundle, "computations/revenue", {"year": 2026, "region": smuggled})
    receipt = executor.run(bound)
    assert receipt["result"] == [None]  # no region has that name: nothing matched
    assert receipt["executed_sql"] == REVENUE_SQL


def test_a_receipt_edited_after_the_run_fails_the_re_read(
    bundle: Bundle, executor: DuckDBExecutor
) -> None:
    bound = bind(bundle, "computations/revenue", {"year": 2026})
    receipt = {**executor.run(bound), "result": [999.0]}
    verdict = attest(bound, receipt, now=NOW, value=999.0, attesters=[executor.attest])
    assert verdict.status == "fail"
    assert "result differ from what run" in verdict.reasons[-1]
    unknown = {**executor.run(bound), "run_id": "duckdb:made-up"}
    # not re-read is not attested (spec §10.5 step 5): a run it did not make may hold any
    # result, so the value is not shown (Attested Computation QA: it only warned)
    checks = {c.name: c.status for c in executor.attest(bound, unknown)}
    assert checks == {"rerun": "fail"}
    made_up = attest(bound, unknown, now=NOW, attesters=[executor.attest], sent=True)
    assert not made_up.display and "source" not in {c.name for c in made_up.checks}
    # AC QA: forged rows (a table an agent may show) passed the re-read
    ran = executor.run(bound)
    forged = {**ran, "rows": [[999.0]]}
    assert [c.detail for c in executor.attest(bound, forged)] == [{"changed": ["rows"]}]
    trimmed = {k: v for k, v in ran.items() if k != "rows"}
    assert [c.status for c in executor.attest(bound, trimmed)] == ["pass"]


def test_only_a_single_select_runs(bundle: Bundle, executor: DuckDBExecutor) -> None:
    bound = bind(bundle, "computations/two-statements", {"year": 2026})
    with pytest.raises(NotAttestable, match="one SELECT statement"):
        executor.run(bound)
    # The DROP never ran: the table still answers.
    again = executor.run(bind(bundle, "computations/revenue", {"year": 2026}))
    assert again["result"] == [140.5]


@pytest.mark.parametrize(
    "change",
    [
        "WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) AS n FROM gone",
        "WITH x AS (INSERT INTO orders SELECT * FROM orders RETURNING *) SELECT count(*) FROM x",
        'WITH x AS (UPDATE "orders" SET amount = 0 RETURNING *) SELECT count(*) FROM x',
    ],
)
def test_a_select_that_changes_data_is_refused_and_changes_nothing(
    tmp_path: Path, executor: DuckDBExecutor, change: str
) -> None:
    """AC QA: DuckDB calls a DELETE inside a WITH a SELECT; it ran, and every later
    computation over the table read what was left, attested pass."""
    root = write_bundle(tmp_path / "kb")
    (root / "computations" / "hostile.md").write_text(
        computation("Hostile", f"# Computation\n\n```sql\n{change}\n```\n"), encoding="utf-8"
    )
    hostile = Bundle.load(root)
    with pytest.raises(NotAttestable, match="changes data"):
        executor.run(bind(hostile, "computations/hostile", {"year": 2026}))
    assert executor.run(bind(hostile, "computations/revenue", {"year": 2026}))["result"] == [140.5]


def test_a_run_is_rolled_back_whatever_it_did(
    tmp_path: Path, executor: DuckDBExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Beyond the word check (here switched off): no run changes what the next one reads.
    import okfx.attest.duckdb_executor as module

    monkeypatch.setattr(module, "_changes_data", lambda sql: None)
    root = write_bundle(tmp_path / "kb")
    change = "WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) AS n FROM gone"
    (root / "computations" / "hostile.md").write_text(
        computation("Hostile", f"# Computation\n\n```sql\n{change}\n```\n"), encoding="utf-8"
    )
    hostile = Bundle.load(root)
    assert executor.run(bind(hostile, "computations/hostile", {"year": 2026}))["result"][0] > 0
    assert executor.run(bind(hostile, "computations/revenue", {"year": 2026}))["result"] == [140.5]


def test_no_file_network_or_extension_access_from_a_computation(
    tmp_path: Path, executor: DuckDBExecutor
) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("password\nhunter2\n", encoding="utf-8")
    attempts = {
        "file": f"SELECT * FROM read_csv('{secret}') WHERE $year > 0",
        "glob": f"SELECT * FROM glob('{tmp_path}/*') WHERE $year > 0",
        "network": "SELECT * FROM read_parquet('https://example.invalid/x.parquet') "
        "WHERE $year > 0",
        "extension": "SELECT * FROM sqlite_scan('x.db', 't') WHERE $year > 0",
        "setting": "SELECT current_setting('lock_configuration') AS locked, $year AS y",
    }
    files = {
        f"computations/{k}.md": computation(k, f"# Computation\n\n```sql\n{v}\n```\n")
        for k, v in attempts.items()
    }
    loaded = Bundle.load(write_tree(tmp_path / "hostile", files))
    for name in ("file", "glob", "network"):
        receipt = executor.run(bind(loaded, f"computations/{name}", {"year": 1}))
        assert "disabled by configuration" in receipt["error"], receipt
        assert receipt["result"] is None
    extension = executor.run(bind(loaded, "computations/extension", {"year": 1}))
    assert "sqlite_scanner extension" in extension["error"]  # not loaded, not installed
    assert executor.run(bind(loaded, "computations/setting", {"year": 1}))["result"] == [True, 1]


def test_no_computation_reads_the_temp_folder_duckdb_allows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Security QA: DuckDB lets a query read its temp folder (<cwd>/.tmp by default)
    whatever enable_external_access says; the executor has none."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "canary.txt").write_text("CANARY\n", encoding="utf-8")
    sql = "SELECT content FROM read_text('.tmp/canary.txt') WHERE $year > 0"
    files = {"c/tmp.md": computation("Tmp", f"# Computation\n\n```sql\n{sql}\n```\n")}
    loaded = Bundle.load(write_tree(tmp_path / "hostile", files))
    executor = DuckDBExecutor({"orders": write_orders(tmp_path / "o.csv")}, timeout=5)
    receipt = executor.run(bind(loaded, "c/tmp", {"year": 1}))
    assert receipt["result"] is None and "CANARY" not in str(receipt)


def test_a_run_past_the_time_limit_is_interrupted(tmp_path: Path) -> None:
    # CPU, not memory: past memory_limit a query fails at once (no temp folder to spill to)
    slow = "SELECT COUNT(*) FROM range(CAST($year AS BIGINT) * 100000) a WHERE hash(a.range) = 0"
    body = f"# Computation\n\n```sql\n{slow}\n```\n"
    loaded = Bundle.load(write_tree(tmp_path / "kb", {"c/slow.md": computation("Slow", body)}))
    executor = DuckDBExecutor({"orders": write_orders(tmp_path / "o.csv")}, timeout=0.3)
    receipt = executor.run(bind(loaded, "c/slow", {"year": 100000000}))
    assert "interrupted" in receipt["error"] and receipt["result"] is None


def test_the_executor_takes_only_files_the_application_names(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="does not exist"):
        DuckDBExecutor({"orders": tmp_path / "missing.csv"})
    with pytest.raises(InvalidArgument, match="plain identifier"):
        DuckDBExecutor({'x"; DROP': write_orders(tmp_path / "o.csv")})
    with pytest.raises(InvalidArgument, match="is not one of"):
        DuckDBExecutor({"orders": PROJECT_ROOT / "README.md"})


def test_settings_find_the_executor_by_runtime_and_refuse_the_rest(
    executor: DuckDBExecutor,
) -> None:
    settings = ComputationSettings([executor])
    assert settings.can_run and settings.runtimes() == ["duckdb"]
    assert settings.executor("DuckDB") is executor
    assert settings.attesters_for("duckdb") == [executor.attest]
    with pytest.raises(NoExecutor, match="runs nothing by default"):
        settings.executor("bigquery")
    assert not ComputationSettings().can_run


def test_the_example_extract_runs_and_attests() -> None:
    data = PROJECT_ROOT / "examples" / "data"
    executor = DuckDBExecutor({"trips": data / "trips.csv", "bike_days": data / "bike_days.csv"})
    knowledge = Bundle.load(PROJECT_ROOT / "examples" / "knowledge")
    bound = bind(
        knowledge,
        "computations/trips-per-bike-day-extract",
        {"start_date": "2026-10-05", "end_date": "2026-10-11"},
    )
    receipt = executor.run(bound)
    (tpbd,) = receipt["result"]
    assert 1.0 < tpbd < 6.0
    verdict = attest(bound, receipt, now=NOW, value=tpbd, attesters=[executor.attest])
    assert verdict.status == "pass", verdict.reasons
