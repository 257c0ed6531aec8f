"""The computation tools: prepare (bind), check (attest) and, when configured, run.

``prepare_computation`` and ``check_attestation`` are read-only: they read the contract and
compute. ``run_computation`` exists only when the application configured an executor
(:class:`~okfx.attest.executor.ComputationSettings`); it runs the bound computation through
it and attests the receipt at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from okfx.attest.binding import Bound, bind, json_value
from okfx.attest.executor import ComputationSettings
from okfx.attest.verdict import NO_VALUE, attest
from okfx.bundle.bundle import Bundle
from okfx.errors import InvalidArgument, TooLarge
from okfx.tools.manager import KnowledgeManager
from okfx.tools.payloads import UNTRUSTED, contract_warning, notices, unread_notices
from okfx.tools.views import EVENT, located

__all__ = ["MAX_RECEIPT_CHARS", "check", "prepare", "run"]

MAX_RECEIPT_CHARS = 1_000_000


class Toolbox(Protocol):
    """What these tools need of the toolbox: bundles, the clock, the computation settings."""

    @property
    def manager(self) -> KnowledgeManager: ...

    @property
    def computations(self) -> ComputationSettings: ...

    def now(self) -> datetime: ...


def _event(**fields: Any) -> None:
    event = EVENT.get(None)
    if event is not None:
        event.update(fields)


def _bound(box: Toolbox, path: Any, parameters: Any, bundle: Any) -> tuple[Bundle, Bound]:
    if bundle is not None and not isinstance(bundle, str):
        raise InvalidArgument(f"bundle must be a string, got {type(bundle).__name__}")
    if not isinstance(path, str):
        raise InvalidArgument(f"path must be a string, got {type(path).__name__}")
    if parameters is not None and not isinstance(parameters, Mapping):
        raise InvalidArgument(
            f"parameters must be an object of name: value pairs, got {type(parameters).__name__}"
        )
    b, path = located(box, path, bundle)  # an okf:// address; the one bundle holding it
    _event(bundle=b.name)
    bound = bind(b, path, parameters)
    _event(path=bound.path, found=True)
    return b, bound


def _gate(box: Toolbox, bound: Bound) -> dict[str, Any]:
    concept = bound.concept
    stale = concept.is_stale(box.now())
    return {
        "trust_tier": concept.trust_tier,
        "verified": [{"by": v.by, "at": json_value(v.at)} for v in concept.verified],
        "status": concept.status,
        "stale": stale,
        "stale_after": json_value(concept.stale_after),
        "stale_policy": box.computations.stale_policy,
        # a body block beside the file it binds, or a second block, is said (AC QA)
        "notices": notices(concept, stale) + unread_notices(concept) + _code_notice(bound),
    }


def _code_notice(bound: Bound) -> list[str]:
    warning = contract_warning(bound.computation, bound.concept.body)
    if not warning:
        return []
    return [f"{'TWICE' if bound.computation.twice else 'SECOND_BLOCK'}:{warning}"]


def prepare(box: Toolbox, path: Any, parameters: Any, bundle: Any) -> dict[str, Any]:
    _, bound = _bound(box, path, parameters, bundle)
    comp = bound.computation
    runtime = bound.runtime
    can_run = runtime.casefold() in {r.casefold() for r in box.computations.runtimes()}
    payload = bound.to_dict()
    payload.update(
        {
            "executor": {"resource": comp.executor_resource, "receipt": list(comp.receipt)},
            "attester": {
                "resource": comp.attester_resource,
                "note": "okfx never runs it; check_attestation is its built-in checker",
            },
            "gate": _gate(box, bound),
            "can_run": can_run,
            "next": (
                "call run_computation with the same path and parameters"
                if can_run
                else "run `sql` with `query_parameters` as named query parameters (never "
                "pasted into the text), then call check_attestation with the receipt"
            ),
            UNTRUSTED: True,
        }
    )
    return payload


def _receipt(receipt: Any) -> Mapping[str, Any]:
    if not isinstance(receipt, Mapping):
        raise InvalidArgument(
            f"receipt must be an object of the fields executor.receipt declares, "
            f"got {type(receipt).__name__}"
        )
    try:
        size = len(json.dumps(receipt, default=str))
    except (TypeError, ValueError, RecursionError):
        raise InvalidArgument("receipt must be JSON data") from None
    if size > MAX_RECEIPT_CHARS:
        raise TooLarge(f"the receipt is {size} characters, over the {MAX_RECEIPT_CHARS} limit")
    return receipt


def check(
    box: Toolbox, path: Any, parameters: Any, receipt: Any, value: Any, bundle: Any
) -> dict[str, Any]:
    checked = _receipt(receipt)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float | str)):
        raise InvalidArgument(f"value must be a number or a string, got {type(value).__name__}")
    _, bound = _bound(box, path, parameters, bundle)
    settings = box.computations
    verdict = attest(
        bound,
        checked,
        now=box.now(),
        stale_policy=settings.stale_policy,
        value=NO_VALUE if value is None else value,
        attesters=settings.attesters_for(bound.runtime),
        # an agent's text: only an attester's re-read vouches for its result
        sent=not settings.receipts_vouched,
    )
    _event(verdict=verdict.status)
    return {**verdict.to_dict(), UNTRUSTED: True}


def run(box: Toolbox, path: Any, parameters: Any, bundle: Any) -> dict[str, Any]:
    _, bound = _bound(box, path, parameters, bundle)
    settings = box.computations
    executor = settings.executor(bound.runtime)
    receipt = executor.run(bound)
    verdict = attest(
        bound,
        receipt,
        now=box.now(),
        stale_policy=settings.stale_policy,
        attesters=settings.attesters_for(bound.runtime),
    )
    _event(verdict=verdict.status)
    result = receipt.get("result")
    return {
        "receipt": receipt,
        "verdict": verdict.to_dict(),
        "display": verdict.display,
        "value": result[0] if verdict.display and isinstance(result, list) and result else None,
        "note": "Show the value with the verdict; if display is false, do not show it.",
        UNTRUSTED: True,
    }
