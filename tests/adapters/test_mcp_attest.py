"""The computation tools over MCP: hints say which tool runs something, errors are results."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402  (installed with mcp)
from mcp_clients import in_process, over_stdio  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402
from okfx import Bundle, Toolbox  # noqa: E402
from okfx.adapters.mcp import build_server  # noqa: E402
from okfx.attest import ComputationSettings  # noqa: E402

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
DATA = PROJECT_ROOT / "examples" / "data"
PATH = "/computations/trips-per-bike-day-extract.md"
WEEK = {"start_date": "2026-10-05", "end_date": "2026-10-11"}


def session_calls(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}

    async def run() -> None:
        async with in_process(server, framed=True) as session:
            out["tools"] = {t["name"]: t for t in await session.tools()}
            for i, (name, args) in enumerate(calls):
                out[i] = await session.call(name, args)

    anyio.run(run)
    return out


def test_the_read_only_computation_tools_answer_over_mcp() -> None:
    got = session_calls(
        build_server(Bundle.load(EXAMPLE)),
        [
            ("prepare_computation", {"path": PATH, "parameters": WEEK}),
            ("prepare_computation", {"path": PATH, "parameters": {"start_date": "last week"}}),
        ],
    )
    assert "run_computation" not in got["tools"]
    assert got["tools"]["check_attestation"]["annotations"]["readOnlyHint"] is True
    prepared = got[0]["structuredContent"]
    assert prepared["query_parameters"]["start_date"] == "2026-10-05"
    error = got[1]["structuredContent"]["error"]
    assert error["code"] == "invalid_parameter" and "start_date" in error["message"]


def test_run_computation_over_mcp_is_marked_as_not_read_only(tmp_path: Path) -> None:
    pytest.importorskip("duckdb", reason="the DuckDB executor needs the duckdb extra")
    from okfx.attest.duckdb_executor import DuckDBExecutor

    executor = DuckDBExecutor({"trips": DATA / "trips.csv", "bike_days": DATA / "bike_days.csv"})
    box = Toolbox(Bundle.load(EXAMPLE), computations=ComputationSettings([executor]))
    got = session_calls(
        build_server(box), [("run_computation", {"path": PATH, "parameters": WEEK})]
    )
    hints = got["tools"]["run_computation"]["annotations"]
    assert hints == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    ran = got[0]["structuredContent"]
    assert ran["verdict"]["verdict"] == "pass" and ran["display"] is True
    assert ran["value"] == ran["receipt"]["result"][0]


def test_okfx_serve_offers_run_computation_only_when_told_which_executor_and_data() -> None:
    pytest.importorskip("duckdb", reason="the DuckDB executor needs the duckdb extra")
    got: dict[str, Any] = {}

    async def run(args: list[str], call: bool) -> None:
        async with over_stdio(sys.executable, ["-m", "okfx", *args], str(PROJECT_ROOT)) as session:
            got[len(args)] = {t["name"] for t in await session.tools()}
            if call:
                got["ran"] = await session.call(
                    "run_computation", {"path": PATH, "parameters": WEEK}
                )

    plain = ["serve", str(EXAMPLE)]
    anyio.run(run, plain, False)
    configured = [
        *plain,
        "--executor",
        "duckdb",
        "--data",
        f"trips={DATA / 'trips.csv'}",
        "--data",
        f"bike_days={DATA / 'bike_days.csv'}",
    ]
    anyio.run(run, configured, True)
    assert "run_computation" not in got[len(plain)]
    assert "run_computation" in got[len(configured)]
    verdict = got["ran"]["structuredContent"]["verdict"]
    assert verdict["verdict"] == "pass", verdict["reasons"]
