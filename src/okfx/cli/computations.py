"""``okfx computation`` and ``okfx attest``: bind and attest from the command line.

``computation`` prints what a computation binds to with the given values; ``attest``
prints the verdict on a receipt and exits 1 when it fails, so a CI job can attest a
published figure. Both call one tool (``prepare_computation``, ``check_attestation``).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import click

from okfx.attest.executor import ComputationSettings
from okfx.attest.values import from_text
from okfx.attest.verdict import STALE_POLICIES
from okfx.cli.commands import _finish, _load, _load_options, cli
from okfx.cli.executors import pairs
from okfx.cli.terminal import json_text, visible_data
from okfx.errors import InvalidArgument, OKFError
from okfx.tools.manager import KnowledgeManager
from okfx.tools.toolbox import Toolbox
from okfx.trust import parse_instant

__all__ = ["attest_cmd", "computation", "render_bound", "render_verdict"]

F = TypeVar("F", bound=Callable[..., Any])
_MARKS = {"pass": "[pass]", "warn": "[warn]", "fail": "[FAIL]", "skip": "[skip]"}


def _values(box: Toolbox, path: str, params: tuple[str, ...]) -> dict[str, Any]:
    """``--param k=v`` pairs, read by the types the computation declares."""
    given = pairs(params, "--param")
    try:
        concept = box.manager.bundle().concept(path)
    except OKFError:
        return dict(given)  # the tool reports the missing concept
    declared = concept.computation.parameters if concept.computation else ()
    return from_text(declared, given)


def _params(func: F) -> F:
    return click.option(
        "--param",
        "params",
        multiple=True,
        metavar="NAME=VALUE",
        help="A parameter value (repeatable); read by the type the computation declares.",
    )(func)


def _json_flag(func: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print the tool's payload as stable JSON."
    )(func)


def render_bound(payload: dict[str, Any]) -> str:
    lines = [
        f"{payload['path']}  {payload.get('title') or ''}  "
        f"[{payload['runtime']}] [{payload['gate']['trust_tier']}]",
        f"computation: {payload['computation']}",
        "",
        "-- sanctioned SQL (values travel as named query parameters) --",
        payload["sql"].rstrip("\n"),
        "",
        "-- query parameters --",
    ]
    for p in payload["parameters"]:
        default = ", its declared default" if p["from_default"] else ""
        lines.append(f"{p['name']} = {json.dumps(p['value'])}  ({p['type']}{default})")
    lines += [
        "",
        "-- expanded, as attestation compares it --",
        payload["expanded_sql"],
        "",
        f"receipt must contain: {', '.join(payload['receipt_fields']) or '(nothing declared)'}",
        *payload["gate"]["notices"],
    ]
    return "\n".join(lines)


def render_verdict(payload: dict[str, Any]) -> str:
    lines = [
        f"{payload['verdict'].upper()}  {payload['path']}  {payload.get('title') or ''} "
        f"({payload['runtime']})"
    ]
    for check in payload["checks"]:
        mark = _MARKS.get(check["status"], check["status"])
        lines.append(f"  {mark} {check['check']}: {check['message']}")
    verified = ", ".join(f"{v['by']} {v['at']}" for v in payload["verified"]) or "nobody"
    freshness = "STALE" if payload["stale"] else "fresh"
    after = f"stale_after {payload['stale_after']}" if payload["stale_after"] else "no stale_after"
    judged = [c for c in payload["checks"] if c["check"] == "freshness" and c["status"] != "pass"]
    if judged and not payload["stale"]:  # a stale_after okfx cannot read (spec QA: "fresh")
        after, freshness = "stale_after unreadable", "freshness not known"
    lines += [
        f"trust: {payload['trust_tier']} (verified by {verified}); "
        f"{after} ({freshness}, policy {payload['stale_policy']})",
        f"display: {'yes' if payload['display'] else 'no: do not show this value'}",
    ]
    return "\n".join(lines)


@cli.command()
@click.argument("bundle")
@click.argument("path")
@_params
@_load_options
@_json_flag
def computation(bundle: str, path: str, params: tuple[str, ...], as_json: bool) -> None:
    """Print what an Attested Computation binds to with these values.

    The sanctioned SQL as written, the values as named query parameters, the expanded
    statement attestation compares against, and the receipt fields a run must return.
    Nothing runs.

    Example:

    \b
        okfx computation examples/knowledge computations/trips-per-bike-day-extract \\
            --param start_date=2026-10-05 --param end_date=2026-10-11
    """
    box = Toolbox(KnowledgeManager([_load(bundle)]), controls_as_is=True)
    payload = box.prepare_computation(path=path, parameters=_values(box, path, params))
    if not as_json:
        _in_option_words(payload)
    _finish(payload, as_json, render_bound)


_REQUIRED = re.compile(r"parameter '([^']{1,200})' is required: give (.*)", re.DOTALL)


def _in_option_words(payload: dict[str, Any]) -> None:
    """A missing parameter said as the option that gives it (CLI QA: "give an integer
    (a JSON number without a fraction ...)", the tool's words)."""
    err = payload.get("error") or {}
    found = _REQUIRED.fullmatch(str(err.get("message") or ""))
    if found is not None:
        name, expected = found.groups()
        expected = expected.replace("(a JSON number without a fraction, within 64 bits)", "")
        err["message"] = (
            f"parameter {name!r} is required: add --param {name}=VALUE, {expected.strip()}"
        )


def _receipt(source: str) -> Any:
    try:
        if source == "-":
            text = sys.stdin.read()
        else:
            with open(source, encoding="utf-8") as handle:
                text = handle.read()
    except OSError as exc:
        raise InvalidArgument(
            f"cannot read the receipt {source}: {exc.strerror or exc}; --receipt takes a "
            "JSON file, or - for standard input"
        ) from None
    try:
        return json.loads(text, parse_constant=_not_json)
    except ValueError as exc:
        raise InvalidArgument(
            f"the receipt {source} is not JSON ({exc}): give the receipt the run wrote"
        ) from None


def _not_json(name: str) -> Any:
    """``NaN`` and ``Infinity``, which Python's reader takes and JSON does not have."""
    raise ValueError(f"{name} is not a JSON value")


def _instant(text: str | None) -> datetime | None:
    if text is None:
        return None
    when, reason = parse_instant(text)
    if when is None:
        raise InvalidArgument(f"--now {reason}")
    return when


@cli.command("attest")
@click.argument("bundle")
@click.argument("path")
@_params
@click.option(
    "--receipt", "receipt_file", required=True, metavar="FILE",
    help="The run's receipt as a JSON object ('-' reads standard input).",
)  # fmt: skip
@click.option("--value", help="The figure you will show; checked against the receipt's result.")
@click.option(
    "--stale-policy", type=click.Choice(STALE_POLICIES), default="warn", show_default=True,
    help="Past stale_after: warn, or refuse (fail).",
)  # fmt: skip
@click.option("--now", metavar="ISO8601", help="Judge staleness at this instant (default: now).")
@_load_options
@_json_flag
def attest_cmd(
    bundle: str,
    path: str,
    params: tuple[str, ...],
    receipt_file: str,
    value: str | None,
    stale_policy: str,
    now: str | None,
    as_json: bool,
) -> None:
    """Attest a run's receipt against an Attested Computation.

    Prints the verdict with its checks (receipt fields, provenance with the first
    difference, parameters, fidelity, freshness) and the trust tier. Exits 1 when the
    verdict is fail, so a CI job can attest a published figure, and 3 when okfx cannot
    attest the computation (not_attestable: a runtime that is not SQL okfx reads).

    Example:

    \b
        okfx attest examples/knowledge computations/trips-per-bike-day-extract \\
            --param start_date=2026-10-05 --param end_date=2026-10-11 \\
            --receipt receipt.json --value 3.614
    """
    when = _instant(now)
    box = Toolbox(
        KnowledgeManager([_load(bundle)]),
        now=(lambda: when) if when is not None else None,
        # the receipt is a file this command's user passes, not an agent's text
        computations=ComputationSettings(stale_policy=stale_policy, receipts_vouched=True),
        controls_as_is=True,  # shown as the CLI shows them
    )
    payload = box.check_attestation(
        path=path,
        parameters=_values(box, path, params),
        receipt=_receipt(receipt_file),
        value=value,
    )
    if "error" in payload:
        _finish(payload, as_json, render_verdict)
    if as_json:
        click.echo(json_text(payload))
    else:
        click.echo(render_verdict(visible_data(payload)))
    sys.exit(0 if payload["display"] else 1)
