"""The computation tools: results, never exceptions; run_computation only when configured."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from attest_bundle import REVENUE_SQL, write_bundle
from okfx import TOOL_NAMES, Bundle, Toolbox
from okfx.attest import Bound, Check, ComputationSettings

NOW = datetime(2026, 11, 30, tzinfo=UTC)


class RecordingExecutor:
    """An executor that runs nothing: it records what it was asked and returns a receipt
    for the bound text, so the tool plumbing is tested without a database."""

    runtime = "duckdb"

    def __init__(self) -> None:
        self.ran: list[Bound] = []

    def run(self, bound: Bound) -> dict[str, Any]:
        self.ran.append(bound)
        return {"run_id": "r1", "executed_sql": bound.sql_for("$"), "result": [7]}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return Bundle.load(write_bundle(tmp_path_factory.mktemp("tools") / "kb"))


def test_prepare_returns_the_bound_artifact_and_the_gate(bundle: Bundle) -> None:
    box = Toolbox(bundle, now=lambda: NOW)
    out = box.prepare_computation(path="computations/revenue", parameters={"year": 2026})
    assert out["sql"] == REVENUE_SQL and out["query_parameters"] == {"year": 2026, "region": None}
    assert out["executor"]["receipt"] == ["run_id", "executed_sql", "result"]
    assert out["gate"]["trust_tier"] == "human-reviewed" and out["gate"]["stale"] is False
    assert out["can_run"] is False and "check_attestation" in out["next"]
    assert out["content_is_untrusted_data"] is True


@pytest.mark.parametrize(
    ("call", "code"),
    [
        ({"path": "computations/revenue", "parameters": {"year": "2026"}}, "invalid_parameter"),
        ({"path": "computations/revenue", "parameters": {}}, "invalid_parameter"),
        ({"path": "computations/revenue", "parameters": ["year"]}, "invalid_argument"),
        ({"path": "metrics/revenue", "parameters": {"year": 2026}}, "not_attestable"),
        ({"path": "computations/escape", "parameters": {"year": 2026}}, "unsafe_path"),
        ({"path": "computations/nope"}, "not_found"),
        ({"path": 3}, "invalid_argument"),
    ],
)
def test_bad_calls_are_error_results(bundle: Bundle, call: dict[str, Any], code: str) -> None:
    out = Toolbox(bundle).prepare_computation(**call)
    assert out["error"]["code"] == code, out


def test_an_invalid_parameter_result_names_the_parameter_and_type(bundle: Bundle) -> None:
    out = Toolbox(bundle).prepare_computation(
        path="computations/revenue", parameters={"year": "2026"}
    )
    assert "'year' must be an integer" in out["error"]["message"]
    # the message quotes the contract (a declared name, type or value) an author wrote:
    # data for the agent to read, flagged as every payload with bundle text is (AC QA)
    assert out["content_is_untrusted_data"] is True
    python = Toolbox(bundle).prepare_computation(path="computations/python", parameters={})
    assert python["error"]["code"] == "not_attestable" and python["content_is_untrusted_data"]
    plain = Toolbox(bundle).prepare_computation(path="computations/revenue", parameters=3)
    assert plain["error"]["code"] == "invalid_argument"


def test_check_attestation_returns_the_verdict(bundle: Bundle) -> None:
    box = Toolbox(bundle, now=lambda: NOW)
    good = {
        "run_id": "r",
        "executed_sql": REVENUE_SQL.replace("SELECT", "select"),
        "result": [140.5],
    }
    verdict = box.check_attestation(
        path="computations/revenue", parameters={"year": 2026}, receipt=good, value=140.5
    )
    assert verdict["verdict"] == "warn" and verdict["display"] is True  # values not reported
    tampered = {**good, "executed_sql": REVENUE_SQL.replace("orders", "orders_2")}
    refused = box.check_attestation(
        path="computations/revenue", parameters={"year": 2026}, receipt=tampered
    )
    assert refused["verdict"] == "fail" and refused["display"] is False
    assert refused["difference"]["found"] == "`orders_2`"
    assert box.check_attestation(path="computations/revenue", receipt="x")["error"]["code"] == (
        "invalid_argument"
    )
    huge = {**good, "junk": "x" * 2_000_000}
    assert box.check_attestation(path="computations/revenue", receipt=huge)["error"]["code"] == (
        "too_large"
    )


def test_a_receipt_an_agent_wrote_is_not_vouched_for_by_its_own_result(bundle: Bundle) -> None:
    """The agent has the sanctioned SQL (prepare_computation hands it over); a receipt it
    writes itself, with a made-up result, passed and was shown (Attested Computation QA).
    Spec §10.5 step 5: fidelity is re-read by job id, not taken from the agent's text."""
    forged = {
        "run_id": "duckdb:0000",
        "executed_sql": REVENUE_SQL,
        "parameters": {"year": 2026, "region": None},
        "result": [9.9],
    }
    args = {"path": "computations/revenue", "parameters": {"year": 2026}, "receipt": forged}
    verdict = Toolbox(bundle, now=lambda: NOW).check_attestation(**args, value=9.9)
    checks = {c["check"]: c["status"] for c in verdict["checks"]}
    assert checks["fidelity"] == "pass" and checks["source"] == "warn"
    assert verdict["verdict"] == "warn"
    assert any("not re-read" in r for r in verdict["reasons"])
    # an application that vouches for its receipts (okfx attest: its user's file) is not told
    vouched = ComputationSettings(receipts_vouched=True)
    trusted = Toolbox(bundle, now=lambda: NOW, computations=vouched).check_attestation(**args)
    assert "source" not in {c["check"] for c in trusted["checks"]}
    assert trusted["verdict"] == "pass"


def test_run_computation_is_offered_only_with_an_executor(bundle: Bundle) -> None:
    plain = Toolbox(bundle)
    assert [t.__name__ for t in plain.tools()] == list(TOOL_NAMES)
    assert plain.run_computation(path="computations/revenue", parameters={"year": 2026})["error"][
        "code"
    ] == ("no_executor")
    executor = RecordingExecutor()
    box = Toolbox(bundle, now=lambda: NOW, computations=ComputationSettings([executor]))
    assert [t.__name__ for t in box.tools()] == [*TOOL_NAMES, "run_computation"]
    out = box.run_computation(path="computations/revenue", parameters={"year": 2026})
    assert out["display"] is True and out["value"] == 7
    assert out["verdict"]["checks"][1]["status"] == "pass"  # provenance
    (bound,) = executor.ran
    assert bound.path == "/computations/revenue.md" and bound.values["year"] == 2026


def test_run_computation_never_runs_a_computation_that_does_not_bind(bundle: Bundle) -> None:
    executor = RecordingExecutor()
    box = Toolbox(bundle, computations=ComputationSettings([executor]))
    for call in (
        {"path": "computations/revenue", "parameters": {"year": "2026; DROP TABLE orders"}},
        {"path": "computations/revenue", "parameters": {"year": 2026, "sql": "DROP"}},
        {"path": "computations/escape", "parameters": {"year": 2026}},
        {"path": "metrics/revenue", "parameters": {"year": 2026}},
        {"path": "computations/bq", "parameters": {"year": 2026}},  # no bigquery executor
    ):
        assert "error" in box.run_computation(**call)
    assert executor.ran == []


def test_the_stale_policy_of_the_settings_applies(bundle: Bundle) -> None:
    later = datetime(2027, 2, 1, tzinfo=UTC)
    receipt = {
        "run_id": "r",
        "executed_sql": REVENUE_SQL,
        "result": [1],
        "parameters": {"year": 2026},
    }
    for policy, expected in (("warn", "warn"), ("refuse", "fail")):
        box = Toolbox(
            bundle, now=lambda: later, computations=ComputationSettings(stale_policy=policy)
        )
        verdict = box.check_attestation(
            path="computations/revenue", parameters={"year": 2026}, receipt=receipt
        )
        assert verdict["verdict"] == expected and verdict["stale"] is True


def test_an_unknown_stale_policy_is_refused() -> None:
    with pytest.raises(Exception, match="stale_policy must be one of warn, refuse"):
        ComputationSettings(stale_policy="ignore")


def test_the_example_bundle_prepares_its_duckdb_computation() -> None:
    from conftest import PROJECT_ROOT

    box = Toolbox(Bundle.load(PROJECT_ROOT / "examples" / "knowledge"))
    out = box.prepare_computation(
        path="computations/trips-per-bike-day-extract",
        parameters={"start_date": "2026-10-05", "end_date": "2026-10-11", "bike_type": "ebike"},
    )
    assert out["runtime"] == "duckdb" and out["dialect"] == "standard"
    assert "bike_type = 'ebike'" in out["expanded_sql"]


def test_a_contracts_paths_are_given_as_read_resource_takes_them() -> None:
    """AC QA: read_concept showed './sql/trips_per_bike_day.sql' as written, which
    read_resource answered not_found; ``files`` gives each path field's bundle path."""
    from conftest import PROJECT_ROOT

    box = Toolbox(Bundle.load(PROJECT_ROOT / "examples" / "knowledge"))
    contract = box.read_concept(path="computations/trips-per-bike-day")["computation"]
    assert contract["computation"] == "./sql/trips_per_bike_day.sql"  # as written
    files = contract["files"]
    assert files["computation"] == "/computations/sql/trips_per_bike_day.sql"
    assert "error" not in box.read_resource(path=files["computation"])
    assert "error" not in box.read_resource(path=files["attester.resource"])


def test_an_application_attester_registered_for_a_runtime_runs_for_that_runtime_only(
    bundle: Bundle,
) -> None:
    seen: list[str] = []

    def reread_job(bound: Bound, receipt: Any) -> list[Check]:
        seen.append(bound.runtime)
        return [Check("job", "fail", f"job {receipt.get('run_id')} not found in the job log")]

    box = Toolbox(
        bundle,
        now=lambda: NOW,
        computations=ComputationSettings(attesters={"BigQuery": [reread_job]}),
    )
    sql = (
        "SELECT SUM(amount) FROM `acme.sales.orders` "
        "WHERE year = @year AND (@region IS NULL OR region = @region)"
    )
    bq = {"run_id": "j1", "executed_sql": sql, "result": [1]}
    verdict = box.check_attestation(path="computations/bq", parameters={"year": 2026}, receipt=bq)
    assert verdict["verdict"] == "fail" and verdict["checks"][-1]["check"] == "job"
    duck = {"run_id": "r", "executed_sql": REVENUE_SQL, "result": [1]}
    box.check_attestation(path="computations/revenue", parameters={"year": 2026}, receipt=duck)
    assert seen == ["bigquery"]


def test_a_contract_with_a_file_and_a_block_says_which_binds(make_bundle: Any) -> None:
    """prepare_computation and read_concept said nothing when a concept has both a
    computation file and a '# Computation' block; only validate did (AC QA)."""
    root = make_bundle(
        {
            "c/both.md": "---\ntype: Attested Computation\nruntime: duckdb\ncomputation: "
            "./ok.sql\n---\n\n# Computation\n\n```sql\nSELECT 999\n```\n",
            "c/ok.sql": "SELECT 1\n",
        }
    )
    box = Toolbox(Bundle.load(root))
    bound = box.prepare_computation(path="c/both", parameters={})
    assert bound["sql"] == "SELECT 1\n"
    assert any(n.startswith("TWICE:") for n in bound["gate"]["notices"])
    read = box.read_concept(path="c/both")
    assert "the file is the sanctioned computation" in read["computation"]["note"]


def test_a_contract_with_two_blocks_says_the_first_binds(make_bundle: Any) -> None:
    """A second fenced block under '# Computation' was taken silently (AC QA)."""
    root = make_bundle(
        {
            "c/two.md": "---\ntype: Attested Computation\nruntime: duckdb\n---\n\n"
            "# Computation\n\n```sql\nSELECT 1\n```\n\nOr:\n\n```sql\nSELECT 999\n```\n",
            "c/one.md": "---\ntype: Attested Computation\nruntime: duckdb\n---\n\n"
            "# Computation\n\n```sql\nSELECT 1\n```\n\n# Example\n\n```sql\nSELECT 2\n```\n",
        }
    )
    box = Toolbox(Bundle.load(root))
    bound = box.prepare_computation(path="c/two", parameters={})
    assert bound["sql"] == "SELECT 1\n"
    assert [n for n in bound["gate"]["notices"] if n.startswith("SECOND_BLOCK:")]
    read = box.read_concept(path="c/two")
    assert "the first is the sanctioned computation" in read["computation"]["note"]
    one = box.prepare_computation(path="c/one", parameters={})
    assert not [n for n in one["gate"]["notices"] if n.startswith(("SECOND_BLOCK", "TWICE"))]
    assert "sanctioned" not in box.read_concept(path="c/one")["computation"]["note"]


def test_a_status_the_spec_does_not_define_is_said_in_the_gate_and_verdict(
    make_bundle: Any,
) -> None:
    """AC QA: `status: retired` read as stable gave a silent `stable` in the gate and the
    verdict, where read_concept and okfx validate say it."""
    text = "---\ntype: Attested Computation\nruntime: duckdb\nstatus: {}\n---\n\n# Computation\n\n"
    root = make_bundle(
        {
            "c/retired.md": text.format("retired") + "```sql\nSELECT 1\n```\n",
            "c/stable.md": text.format("Stable") + "```sql\nSELECT 1\n```\n",
        }
    )
    box = Toolbox(Bundle.load(root), now=lambda: NOW)
    receipt = {"run_id": "r", "executed_sql": "SELECT 1", "result": [1]}
    gate = box.prepare_computation(path="c/retired", parameters={})["gate"]
    assert gate["status"] == "stable"
    assert any(n.startswith("STATUS: written 'retired'") for n in gate["notices"])
    verdict = box.check_attestation(path="c/retired", receipt=receipt, value=1)
    status = [c for c in verdict["checks"] if c["check"] == "status"]
    assert [c["status"] for c in status] == ["warn"] and "'retired'" in status[0]["message"]
    quiet = box.check_attestation(path="c/stable", receipt=receipt, value=1)
    assert not [c for c in quiet["checks"] if c["check"] == "status"]
    stable = box.prepare_computation(path="c/stable", parameters={})["gate"]["notices"]
    assert not [n for n in stable if n.startswith("STATUS")]


@pytest.mark.parametrize(
    ("line", "said"),
    [("", "has no runtime, which spec §10.2 requires"), ("runtime: [a, b]\n", "as a list")],
)
def test_a_missing_or_listed_runtime_is_named_as_such(
    make_bundle: Any, line: str, said: str
) -> None:
    # AC QA: both were "has runtime None"
    text = f"---\ntype: Attested Computation\n{line}---\n# Computation\n\n```sql\nSELECT 1\n```\n"
    box = Toolbox(Bundle.load(make_bundle({"c.md": text})))
    error = box.prepare_computation(path="c")["error"]
    assert error["code"] == "not_attestable" and said in error["message"]
    assert "None" not in error["message"] and "runtime: duckdb" in error["message"]


def test_receipt_parameters_reported_as_text_are_read_by_their_declared_type(
    bundle: Bundle,
) -> None:
    # AC QA: BigQuery's job API reports "2026"; the verdict said "ran as '2026', the
    # claim is 2026"
    box = Toolbox(bundle, now=lambda: NOW)
    sql = REVENUE_SQL
    for reported, expected in (("2026", "pass"), ("2027", "fail"), (" 2026x", "fail")):
        receipt = {"run_id": "r", "executed_sql": sql, "parameters": {"year": reported}}
        verdict = box.check_attestation(
            path="computations/revenue", parameters={"year": 2026}, receipt=receipt
        )
        (check,) = [c for c in verdict["checks"] if c["check"] == "parameters"]
        assert check["status"] == expected, (reported, check)
