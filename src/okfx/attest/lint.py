"""Can each Attested Computation be bound? What ``okfx validate`` checks beyond spec §11.

A computation that no value can bind (a placeholder its parameters do not declare, SQL
okfx cannot read, a parameter type okfx does not know, a default or an ``enum`` that
breaks its own type) passes the spec's conformance rules, yet every ``prepare_computation``
of it fails. Its author should hear so from the check they run in CI, not from an agent.
A declared parameter the statement never uses is reported too: it is most often a hole
written in a syntax the runtime does not read as a placeholder.

Only computations in a SQL runtime okfx binds are looked at (others are the consumer's
own binder's business), and only what the load did not already report: a missing
computation, a ``computation`` file outside the bundle or not in it are the load's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from okfx.attest.binding import COMPUTATION_TYPE, computation_text
from okfx.attest.sqltext import SqlSyntaxError, dialect_for, tokenize
from okfx.attest.values import contract_problems
from okfx.bundle.bundle import Bundle
from okfx.bundle.conventions import with_line
from okfx.bundle.fields import computation_heading
from okfx.bundle.frontmatter import split
from okfx.bundle.keylines import KeyLines
from okfx.bundle.validate import ConformanceReport
from okfx.bundle.validate import validate as validate_spec
from okfx.bundle.walk import decode_text, read_bytes
from okfx.errors import OKFError, UnsafePath
from okfx.model import Concept, Problem

__all__ = ["computation_problems", "validate"]

UNBINDABLE = "unbindable_computation"
UNUSED = "unused_parameter"
_MAX_CONCEPT_BYTES = 1024 * 1024


def validate(bundle: Bundle, now: datetime | None = None) -> ConformanceReport:
    """The spec's conformance check (:func:`okfx.bundle.validate.validate`) with the
    computations' problems (:func:`computation_problems`) among its warnings: what
    ``okfx validate`` and the viewer report; with ``now``, the upkeep notes too."""
    return validate_spec(bundle, extra=computation_problems(bundle), now=now)


def computation_problems(bundle: Bundle) -> list[Problem]:
    """The problems that keep each SQL Attested Computation of ``bundle`` from binding,
    and the declared parameters its statement never uses, in path order."""
    found: list[Problem] = []
    for concept in bundle:
        comp = concept.computation
        if comp is None or concept.type.strip().casefold() != COMPUTATION_TYPE:
            continue
        if dialect_for(comp.runtime) is None or (comp.inline is None and not comp.computation_path):
            continue
        found.extend(_problems(bundle, concept))
    return found


def _key_lines(bundle: Bundle, concept: Concept) -> KeyLines | None:
    """The concept file's frontmatter outline, for the lines of its parameters."""
    try:
        text = decode_text(read_bytes(bundle.open_file(concept.path), _MAX_CONCEPT_BYTES))
        _, _, body_line = split(text)
    except (OSError, ValueError, OKFError):
        return None
    return KeyLines(text, body_line)


def _problems(bundle: Bundle, concept: Concept) -> Iterable[Problem]:
    comp = concept.computation
    assert comp is not None
    path = concept.path
    lines: KeyLines | None = None
    for i, parameter in enumerate(comp.parameters):
        for key, message in contract_problems(parameter):
            lines = lines or _key_lines(bundle, concept)
            line = lines.line(f"parameters[{i}].{key}") if lines else None
            yield Problem(path, UNBINDABLE, with_line(message, line))
    names = Counter(p.name.casefold() for p in comp.parameters)
    for name, n in sorted(names.items()):
        if n > 1:
            yield Problem(
                path,
                UNBINDABLE,
                f"parameter {name!r} is declared {n} times (names are compared without case)",
            )
    try:
        sql, source = computation_text(bundle, concept)
    except UnsafePath:
        return  # outside the bundle: the load reported the path (unsafe_link)
    except OKFError as exc:
        if any(k.field == "computation" and not k.exists for k in concept.links):
            return  # not in the bundle: the load reported the path (broken_link)
        # In the bundle but not readable as a computation: not UTF-8, over the size a
        # computation may be, a URL (AC QA: validate was clean, binding refused).
        yield Problem(path, UNBINDABLE, exc.message)
        return
    where = "its '# Computation' block" if source == "inline" else source
    first = _block_line(concept, sql) if source == "inline" else None

    def in_file(message: str, at: int) -> str:
        """``message`` with the file line of the block's line ``at`` (AC QA: a CI
        annotation of an inline block's problem had no line)."""
        return with_line(message, None if first is None else first + at - 1)

    dialect = dialect_for(comp.runtime)
    assert dialect is not None
    try:
        tokens = tokenize(sql, dialect, frozenset(names))
    except SqlSyntaxError as exc:
        at = sql.count("\n", 0, exc.offset) + 1
        message = f"{where} cannot be read as SQL at its line {at}: {exc}"
        yield Problem(path, UNBINDABLE, in_file(message, at))
        return
    used: dict[str, int] = {}
    for token in tokens:
        if token.kind == "param":
            used.setdefault(token.key, sql.count("\n", 0, token.start) + 1)
    for key, at in sorted(used.items(), key=lambda item: item[1]):
        if key not in names:
            declared = ", ".join(sorted(p.name for p in comp.parameters)) or "none"
            message = (
                f"{where} uses the placeholder {key!r} at its line {at}, which the "
                f"parameters do not declare (declared: {declared})"
            )
            yield Problem(path, UNBINDABLE, in_file(message, at))
    prefix = "@" if "@" in dialect.param_prefixes else "$"
    for i, parameter in enumerate(comp.parameters):
        if parameter.name.casefold() not in used:
            lines = lines or _key_lines(bundle, concept)
            message = (
                f"parameter {parameter.name!r} is declared but {where} never uses it "
                f"(written {prefix}{parameter.name} in {comp.runtime} SQL)"
            )
            # at its declaration, for an editor or a CI annotation (validate QA)
            line = lines.line(f"parameters[{i}]") if lines else None
            yield Problem(path, UNUSED, with_line(message, line))


def _block_line(concept: Concept, sql: str) -> int | None:
    """The file line of the first line of the concept's '# Computation' block (``sql``,
    as the load read it), or None when it cannot be found in the body."""
    body = concept.body
    heading = computation_heading(body)  # as the load found the block
    lead = next((line for line in sql.split("\n") if line.strip()), "")
    at = body.find(lead, heading or 0) if lead else -1
    if at < 0:
        return None
    skipped = sql[: sql.find(lead)].count("\n")  # blank lines the block opens with
    return concept.body_line + body.count("\n", 0, at) - skipped
