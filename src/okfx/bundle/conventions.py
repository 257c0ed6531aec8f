"""Spec rules on a concept's fields that reading them (:mod:`okfx.bundle.fields`) leaves.

:func:`normalize` reads each field as well as it can; the checks here say where a concept,
read that way, still departs from what the spec asks of its producer: a ``status`` written
in capitals (§5.4), a ``usage_window`` that is no ``{from, to}`` range (§5.1), an
Attested Computation without its computation or with two of them (§10.3), an
``executor.receipt`` that is no list of field names (§10.2). They work on the values
``normalize`` built and on the raw frontmatter, never re-parse, and never change what is
loaded. All are warnings: §11 asks producers to follow §5 to §10 (SHOULD) and consumers
not to reject a concept over them.

Each check gives ``(code, message, key)``: ``key`` is the frontmatter key the problem is
on (``"executor.receipt"`` for a nested one), for
:meth:`~okfx.bundle.keylines.KeyLines.line`, or ``None``.
"""

from __future__ import annotations

from typing import Any

from okfx.bundle.fields import (
    STATUSES,
    computation_heading,
    kind_of,
    second_computation_block,
)
from okfx.bundle.keylines import KeyLines
from okfx.model import Computation, Source, UsageWindow

__all__ = ["COMPUTATION_TYPE", "Check", "check_concept", "with_line"]

COMPUTATION_TYPE = "attested computation"
Check = tuple[str, str, str | None]  # code, message, the frontmatter key it is on


def with_line(message: str, line: int | None) -> str:
    """``message`` with `` (line N)`` at its end, where :func:`problem_line` reads it."""
    return f"{message} (line {line})" if line else message


def _status(fm: dict[str, Any]) -> list[Check]:
    raw = fm.get("status")
    if not isinstance(raw, str):
        return []
    text = raw.strip()
    lower = text.casefold()
    if lower in STATUSES and text != lower:
        return [
            (
                "status_case",
                f"status {raw!r} is read as {lower!r}: write it in lower case, as spec "
                "§5.4 lists the values (draft, stable, deprecated); other consumers may "
                "compare them exactly",
                "status",
            )
        ]
    return []


def _window_ends(value: Any, name: str, key: str | None) -> list[Check]:
    if not isinstance(value, dict):
        return []  # not a mapping: fields.py reports it (invalid_field)
    missing = [end for end in ("from", "to") if value.get(end) is None]
    if not missing:
        return []
    which = " and ".join(repr(end) for end in missing)
    return [
        (
            "usage_window_incomplete",
            f"{name} has no {which}: spec §5.1 frames usage_count with a {{from, to}} "
            f"datetime range; add {'them' if len(missing) == 2 else 'it'}",
            key,
        )
    ]


def _reversed(window: UsageWindow | None, name: str, key: str | None) -> list[Check]:
    if window is None or window.start is None or window.end is None:
        return []
    if window.start <= window.end:
        return []
    return [
        (
            "usage_window_reversed",
            f"{name} runs backwards: 'from' ({window.start.isoformat()}) is after 'to' "
            f"({window.end.isoformat()}); spec §5.1 asks for a {{from, to}} range: swap them",
            key,
        )
    ]


def _windows(fm: dict[str, Any], values: dict[str, Any]) -> list[Check]:
    found = _window_ends(fm.get("usage_window"), "usage_window", "usage_window")
    found += _reversed(values["usage_window"], "usage_window", "usage_window")
    raw_sources = fm.get("sources")
    entries = [raw_sources] if isinstance(raw_sources, dict) else raw_sources
    if isinstance(entries, list):
        for i, entry in enumerate(entries):
            if isinstance(entry, dict):
                name = f"sources[{i}].usage_window"
                found += _window_ends(entry.get("usage_window"), name, None)
    source: Source
    for source in values["sources"]:
        found += _reversed(source.usage_window, f"the usage_window of {source.resource!r}", None)
    return found


def _receipt(fm: dict[str, Any]) -> list[Check]:
    executor = fm.get("executor")
    receipt = executor.get("receipt") if isinstance(executor, dict) else None
    if receipt is None or isinstance(receipt, list):
        return []
    return [
        (
            "receipt_not_list",
            f"executor.receipt is {kind_of(receipt)}; spec §10.2 declares the fields a run "
            "must return as a list, like [job_id, executed_sql, result]: okfx ignores it, "
            "so write it as a list",
            "executor.receipt",
        )
    ]


def _computation(comp: Computation, body: str, body_line: int) -> list[tuple[str, str, int]]:
    heading = computation_heading(body)
    line = body_line + body.count("\n", 0, heading) if heading is not None else 0
    if comp.computation_path is None and comp.inline is None:
        under = (
            "nothing under its '# Computation' heading"
            if heading is not None
            else ("no '# Computation' heading")
        )
        return [
            (
                "missing_computation",
                f"this Attested Computation has no computation ({under}, no 'computation' "
                "file): spec §10.3 asks for a fenced code block under '# Computation', or "
                "a 'computation' path to a file",
                line,
            )
        ]
    if comp.twice:
        return [
            (
                "computation_twice",
                f"'computation' names the file {comp.computation_path!r} and the body has a "
                "code block under '# Computation' as well: spec §10.3 asks to omit the body "
                "block when the file is given; okfx binds the file, and the block is not "
                "read even when the file is missing (a broken_link then says so, and the "
                "computation cannot run): fix the path, or drop the key to bind the block",
                line,
            )
        ]
    second = second_computation_block(body) if comp.inline is not None else None
    if second is not None:
        return [
            (
                "computation_blocks",
                "the body has more than one fenced code block under '# Computation': spec "
                "§10.3 asks for a single block; okfx binds the first, so move or remove "
                "this one",
                body_line + body.count("\n", 0, second),
            )
        ]
    return []


def check_concept(
    fm: dict[str, Any],
    type_: str,
    values: dict[str, Any],
    lines: KeyLines,
    body: str,
    body_line: int,
) -> list[tuple[str, str]]:
    """The ``(code, message)`` warnings of the checks above for one concept, each message
    ending with the file line it is on when known; ``values`` as :func:`normalize` built
    them from ``fm``, ``lines`` the file's frontmatter lines (shared with the warnings of
    ``normalize``, so its outline is made once)."""
    found: list[tuple[str, str]] = []
    checks = _status(fm) + _windows(fm, values)
    comp = values["computation"]
    if comp is not None:
        checks += _receipt(fm)
    for code, message, key in checks:
        line = lines.line(key) if key else None
        found.append((code, with_line(message, line)))
    if comp is not None and type_.casefold() == COMPUTATION_TYPE:
        for code, message, at in _computation(comp, body, body_line):
            found.append((code, with_line(message, at)))
    return found
