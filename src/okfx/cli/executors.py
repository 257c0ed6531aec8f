"""The executor options of ``okfx serve``: ``--executor duckdb --data TABLE=FILE``.

Without them nothing runs; with them the server offers ``run_computation`` over the files
named here (never paths from a bundle).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from okfx.attest.executor import ComputationSettings
from okfx.attest.verdict import STALE_POLICIES
from okfx.cli.extras import need_extra
from okfx.errors import OKFError

__all__ = ["EXECUTORS", "executor_options", "executor_settings", "pairs"]

F = TypeVar("F", bound=Callable[..., Any])
EXECUTORS = ("duckdb",)


def pairs(options: tuple[str, ...], what: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a mapping; a usage error names the malformed one."""
    found: dict[str, str] = {}
    for option in options:
        name, sep, value = option.partition("=")
        if not sep or not name:
            raise click.UsageError(f"{what} {option!r} must be NAME=VALUE")
        if name in found and found[name] != value:
            # Which one was meant? Silently the last (AC QA): a figure for another value.
            raise click.UsageError(f"{what} {name} is given twice ({found[name]!r}, {value!r})")
        found[name] = value
    return found


def executor_options(func: F) -> F:
    """``--executor``, ``--data`` and ``--stale-policy`` for a command that serves tools."""
    for option in reversed(
        [
            click.option(
                "--executor",
                type=click.Choice(EXECUTORS),
                help="Offer run_computation, running Attested Computations of this runtime "
                "(needs --data). Off by default: okfx runs nothing.",
            ),
            click.option(
                "--data",
                "data",
                multiple=True,
                metavar="TABLE=FILE",
                help="A data file the executor loads as TABLE (repeatable; csv, tsv, "
                "parquet, json, jsonl).",
            ),
            click.option(
                "--stale-policy",
                type=click.Choice(STALE_POLICIES),
                default="warn",
                show_default=True,
                help="Attestation past stale_after: warn, or refuse.",
            ),
        ]
    ):
        func = option(func)
    return func


def executor_settings(
    executor: str | None, data: tuple[str, ...], stale_policy: str
) -> ComputationSettings:
    """The settings ``--executor``/``--data``/``--stale-policy`` ask for."""
    if executor is None:
        if data:
            raise click.UsageError("--data names files for an executor: add --executor duckdb")
        return ComputationSettings(stale_policy=stale_policy)
    tables = pairs(data, "--data")
    if not tables:
        raise click.UsageError(f"--executor {executor} needs at least one --data TABLE=FILE")
    # DuckDBExecutor imports duckdb on its first run: without it, say so before serving
    need_extra("duckdb", ("duckdb",), f"okfx serve --executor {executor}")
    from okfx.attest.duckdb_executor import DuckDBExecutor

    try:
        return ComputationSettings([DuckDBExecutor(tables)], stale_policy=stale_policy)
    except OKFError as exc:
        raise click.UsageError(exc.message) from exc
