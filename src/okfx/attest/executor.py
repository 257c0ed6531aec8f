"""Executors and the application's settings for computations: nothing runs by default.

An :class:`Executor` runs a :class:`~okfx.attest.binding.Bound` computation for one
``runtime`` and returns a receipt shaped by ``executor.receipt``. okfx ships one
(:class:`~okfx.attest.duckdb_executor.DuckDBExecutor`); an application configures the
executors it trusts, over data it names, in :class:`ComputationSettings`, with its own
attesters per runtime and the staleness policy. Without settings, okfx binds and attests
but never runs anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from okfx.attest.binding import Bound
from okfx.attest.verdict import STALE_POLICIES, Attester
from okfx.errors import InvalidArgument, NoExecutor

__all__ = ["ComputationSettings", "Executor"]


@runtime_checkable
class Executor(Protocol):
    """Runs bound computations of one runtime.

    ``run`` executes exactly ``bound`` (its sanctioned text, values as query parameters)
    and returns the receipt: at least the fields of ``bound.receipt_fields``. It raises
    an :class:`~okfx.errors.OKFError` when the run cannot happen, and reports a failed run
    as a receipt with an ``error`` field.
    """

    runtime: str

    def run(self, bound: Bound) -> dict[str, Any]: ...


class ComputationSettings:
    """What an application allows: executors by runtime, its attesters, the stale policy.

    ``attesters`` maps a runtime to callables ``(bound, receipt) -> checks`` run after the
    built-in checks. An executor that also has an ``attest`` method (DuckDB re-reads its
    own runs by id) is registered as an attester of its runtime too. ``stale_policy`` is
    ``"warn"`` (a stale computation's value is shown, with a warning) or ``"refuse"``.
    ``receipts_vouched``: receipts given to ``check_attestation`` come from a source the
    application trusts (the ``okfx attest`` command: a file its user passes), not from an
    agent's text; otherwise a result no attester re-read is a ``source`` warning.
    """

    def __init__(
        self,
        executors: Iterable[Executor] = (),
        *,
        attesters: Mapping[str, Iterable[Attester]] | None = None,
        stale_policy: str = "warn",
        receipts_vouched: bool = False,
    ) -> None:
        if stale_policy not in STALE_POLICIES:
            raise InvalidArgument(
                f"stale_policy must be one of {', '.join(STALE_POLICIES)}, not {stale_policy!r}"
            )
        self.stale_policy = stale_policy
        self.receipts_vouched = receipts_vouched
        self._executors: dict[str, Executor] = {}
        for executor in executors:
            key = executor.runtime.strip().casefold()
            if key in self._executors:
                raise InvalidArgument(f"two executors for runtime {executor.runtime!r}")
            self._executors[key] = executor
        self._attesters = {
            name.strip().casefold(): list(found) for name, found in (attesters or {}).items()
        }

    def __repr__(self) -> str:
        return (
            f"ComputationSettings(runtimes={self.runtimes()!r}, stale_policy={self.stale_policy!r})"
        )

    @property
    def can_run(self) -> bool:
        """True when at least one executor is configured."""
        return bool(self._executors)

    def runtimes(self) -> list[str]:
        """The runtimes an executor is configured for, sorted."""
        return sorted(e.runtime for e in self._executors.values())

    def executor(self, runtime: str) -> Executor:
        """The executor for ``runtime``; :class:`NoExecutor` when none is configured."""
        found = self._executors.get(runtime.strip().casefold())
        if found is None:
            configured = ", ".join(self.runtimes()) or "none"
            raise NoExecutor(
                f"no executor is configured for runtime {runtime!r} (configured: "
                f"{configured}); okfx runs nothing by default. Run the bound computation "
                "yourself and pass the receipt to check_attestation."
            )
        return found

    def attesters_for(self, runtime: str) -> list[Attester]:
        """The application's attesters for ``runtime``, its executor's own first."""
        key = runtime.strip().casefold()
        found: list[Attester] = []
        own = getattr(self._executors.get(key), "attest", None)
        if callable(own):
            found.append(own)
        found.extend(self._attesters.get(key, ()))
        return found
