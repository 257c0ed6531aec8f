"""Attested Computations end to end (spec §10.5): bind, execute, attest, gate.

Owns binding a computation with checked values (:mod:`~okfx.attest.binding`,
:mod:`~okfx.attest.values`), the SQL tokenizer and literals the comparison rests on
(:mod:`~okfx.attest.sqltext`, :mod:`~okfx.attest.literals`, :mod:`~okfx.attest.compare`),
the built-in deterministic verdict (:mod:`~okfx.attest.verdict`), the executor protocol and
the application's settings (:mod:`~okfx.attest.executor`), and the DuckDB executor
(:mod:`~okfx.attest.duckdb_executor`, imported only by name: it needs the duckdb extra).

It never runs a bundle's ``attester.resource`` and never lets a caller supply the
computation: values only. Sits between ``okfx.tools`` (which imports it) and
``okfx.bundle`` (which it reads through); it must not import tools, adapters or the CLI.
"""

from okfx.attest.binding import Bound, bind
from okfx.attest.executor import ComputationSettings, Executor
from okfx.attest.verdict import STALE_POLICIES, Attester, Check, Verdict, attest

__all__ = [
    "STALE_POLICIES",
    "Attester",
    "Bound",
    "Check",
    "ComputationSettings",
    "Executor",
    "Verdict",
    "attest",
    "bind",
]
