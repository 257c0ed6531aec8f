"""The Attested Computation loop in Python: bind, run on DuckDB, attest, gate (offline)."""

from datetime import UTC, datetime
from pathlib import Path

from okfx import Bundle, Toolbox
from okfx.attest import ComputationSettings, attest, bind
from okfx.attest.duckdb_executor import DuckDBExecutor  # the okfx[duckdb] extra

examples = Path(__file__).resolve().parents[2] / "examples"
bundle = Bundle.load(examples / "knowledge")
now = datetime(2026, 12, 1, tzinfo=UTC)  # staleness is judged at an instant you pass

# 1. Bind: values only, checked against the declared parameters.
week = {"start_date": "2026-10-05", "end_date": "2026-10-11"}
bound = bind(bundle, "computations/trips-per-bike-day-extract", week)

# 2. Execute: the application names the data files; a bundle never does.
data = examples / "data"
duckdb = DuckDBExecutor({"trips": data / "trips.csv", "bike_days": data / "bike_days.csv"})
receipt = duckdb.run(bound)  # run_id, executed_sql, parameters, result, ...

# 3. Attest and 4. gate: show the value only when the verdict allows it.
value = receipt["result"][0]
verdict = attest(bound, receipt, now=now, value=value, attesters=[duckdb.attest])
print(verdict.status, verdict.display, value)  # pass True 3.614

# A receipt for any other query is refused, with the first difference.
tampered = {**receipt, "executed_sql": receipt["executed_sql"].replace("AND NOT is_test\n", "")}
refused = attest(bound, tampered, now=now, value=value)
print(refused.status, refused.display, refused.reasons[0])

# The same loop as agent tools: run_computation exists because an executor is configured.
box = Toolbox(bundle, now=lambda: now, computations=ComputationSettings([duckdb]))
print(box.run_computation(path=bound.path, parameters=week)["verdict"]["verdict"])  # pass
