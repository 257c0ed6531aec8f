"""Bind an Attested Computation (spec §10.3): the sanctioned text plus checked values.

The caller supplies values only. The computation is the concept's ``# Computation``
block or the file its ``computation`` field names, read through the bundle's path guard;
the values travel beside it as named query parameters and are never spliced into the text
an executor runs. :attr:`Bound.expanded` is the statement with each value written as a
quoted literal, for people and for receipts that show an expanded artifact.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import unquote

from okfx.attest import literals
from okfx.attest.sqltext import (
    Dialect,
    SqlSyntaxError,
    Token,
    canonical_text,
    dialect_for,
    strip_terminators,
    tokenize,
)
from okfx.attest.values import check_values, declared_type, defaults_used
from okfx.bundle.bundle import Bundle
from okfx.bundle.fields import kind_of
from okfx.bundle.paths import join, open_error
from okfx.bundle.walk import decode_text, read_bytes
from okfx.errors import NotAttestable, TooLarge, Unreadable
from okfx.model import Computation, Concept

__all__ = ["MAX_COMPUTATION_BYTES", "Bound", "bind", "computation_of", "computation_text"]

MAX_COMPUTATION_BYTES = 1024 * 1024
COMPUTATION_TYPE = "attested computation"


@dataclass(frozen=True, slots=True)
class Bound:
    """A sanctioned computation bound with checked values: what an executor may run."""

    bundle: str
    concept: Concept
    dialect: Dialect
    source: str  # "inline" or the bundle path of the computation file
    sql: str  # the sanctioned text, as written
    tokens: tuple[Token, ...]  # its tokens, without the final ``;``
    types: dict[str, str]  # parameter name -> okfx type
    values: dict[str, Any]  # parameter name -> typed value (None: bound as NULL)
    references: dict[str, str]  # parameter key (case-folded) -> declared name
    defaults: frozenset[str] = frozenset()  # the parameters bound to their declared default

    @property
    def path(self) -> str:
        return self.concept.path

    @property
    def runtime(self) -> str:
        return (self.computation.runtime or "").strip()

    @property
    def computation(self) -> Computation:
        assert self.concept.computation is not None
        return self.concept.computation

    @property
    def names(self) -> frozenset[str]:
        """The declared parameters' names, case-folded (what ``@name`` may stand for)."""
        return _declared_names(self.computation)

    @property
    def receipt_fields(self) -> tuple[str, ...]:
        return self.computation.receipt

    def sql_for(self, prefix: str) -> str:
        """The sanctioned text with each parameter written ``<prefix>name`` (``$`` for
        DuckDB, ``@`` for BigQuery): only the placeholders change, nothing else."""
        out: list[str] = []
        last = 0
        for token in tokenize(self.sql, self.dialect, self.names):
            if token.kind == "param":
                out.append(self.sql[last : token.start])
                out.append(prefix + self.references[token.key])
                last = token.start + len(token.text)
        out.append(self.sql[last:])
        return "".join(out)

    def query_parameters(self) -> dict[str, Any]:
        """The values of the parameters the text uses, by declared name."""
        used = set(self.references.values())
        return {name: value for name, value in self.values.items() if name in used}

    @property
    def canonical(self) -> str:
        """The statement as compared: one line, keywords lower-case, ``@name`` parameters."""
        return canonical_text(list(self.tokens))

    @property
    def expanded(self) -> str:
        """The canonical statement with every parameter replaced by its quoted literal."""
        parts: list[str] = []
        for token in self.tokens:
            if token.kind == "param":
                name = self.references[token.key]
                parts.append(literals.render(self.values[name], self.types[name], self.dialect))
            else:
                parts.append(canonical_text([token]))
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The bound artifact as JSON-able data."""
        return {
            "bundle": self.bundle,
            "path": self.path,
            "title": self.concept.title,
            "runtime": self.runtime,
            "dialect": self.dialect.name,
            "computation": self.source,
            "sql": self.sql,
            "parameters": [
                {
                    "name": p.name,
                    "type": self.types[p.name],
                    "required": p.required,
                    "value": json_value(self.values[p.name]),
                    "from_default": p.name in self.defaults,
                }
                for p in self.computation.parameters
            ],
            "query_parameters": {k: json_value(v) for k, v in self.query_parameters().items()},
            "canonical_sql": self.canonical,
            "expanded_sql": self.expanded,
            "receipt_fields": list(self.receipt_fields),
        }


def json_value(value: Any) -> Any:
    """A bound value as JSON: dates and timestamps as ISO 8601 text."""
    if isinstance(value, datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(value, date):
        return value.isoformat()
    return value


def _declared_names(computation: Computation) -> frozenset[str]:
    """The names of ``computation``'s parameters, case-folded."""
    return frozenset(p.name.casefold() for p in computation.parameters)


def computation_of(concept: Concept) -> Computation:
    """The contract of an Attested Computation concept, or :class:`NotAttestable`."""
    if concept.type.strip().casefold() != COMPUTATION_TYPE or concept.computation is None:
        raise NotAttestable(
            f"{concept.path} is a {concept.type!r}, not an Attested Computation; only a "
            "concept of type 'Attested Computation' can be bound and attested "
            "(a Metric links to the computation that produces it)",
            path=concept.path,
        )
    return concept.computation


def computation_text(bundle: Bundle, concept: Concept) -> tuple[str, str]:
    """``(text, source)``: the inline block, or the ``computation`` file read through the
    path guard (``source`` is ``"inline"`` or the file's bundle path)."""
    comp = computation_of(concept)
    if comp.computation_path is None:
        if comp.inline is None:
            raise NotAttestable(
                f"{concept.path} has no fenced block under '# Computation' and no "
                "'computation' file",
                path=concept.path,
            )
        return comp.inline, "inline"
    if "://" in comp.computation_path:
        raise NotAttestable(
            f"{concept.path}: computation {comp.computation_path!r} is a URL; okfx reads "
            "computations only from files inside the bundle",
            path=concept.path,
        )
    # Where the load's link of the field leads, as okfx validate reads it: a bare path is
    # read from the root first, then beside the concept (spec §6.2 allows both; producers
    # write both: AC QA saw validate and binding disagree). Else its file-relative reading,
    # for the message (UnsafePath when it climbs out).
    linked = next((k.target for k in concept.links if k.field == "computation"), None)
    # percent-decoded as the load reads a link (AC QA: ``..%2F..%2Fx.sql`` was the load's
    # unsafe_link and binding's "not in the bundle", said twice)
    written = unquote(comp.computation_path.split("#", 1)[0].split("?", 1)[0])
    target = linked or join(concept.directory, written)
    if target not in bundle.files:
        raise NotAttestable(
            f"{concept.path}: its computation file {target} is not in the bundle",
            path=concept.path,
        )
    try:
        # Opened below the root without following a symlink: a folder swapped for one
        # since the load fails the open instead of leading outside the bundle.
        data = read_bytes(bundle.open_file(target), MAX_COMPUTATION_BYTES)
    except ValueError as exc:
        raise TooLarge(f"computation file {target}: {exc}", path=target) from None
    except OSError as exc:
        raise Unreadable(
            f"computation file {target} cannot be read: {open_error(exc)}", path=target
        ) from None
    try:
        return decode_text(data), target
    except UnicodeDecodeError:
        raise NotAttestable(f"computation file {target} is not UTF-8 text", path=target) from None


def _references(concept: Concept, tokens: list[Token]) -> dict[str, str]:
    comp = computation_of(concept)
    declared: dict[str, str] = {}
    for parameter in comp.parameters:
        key = parameter.name.casefold()
        if key in declared:
            raise NotAttestable(
                f"{concept.path} declares parameter {parameter.name!r} twice (names are "
                "compared without case)",
                path=concept.path,
            )
        declared[key] = parameter.name
    references: dict[str, str] = {}
    for token in tokens:
        if token.kind != "param":
            continue
        if token.key not in declared:
            raise NotAttestable(
                f"{concept.path}: the computation uses {token.text}, which its parameters "
                f"do not declare ({', '.join(sorted(declared.values())) or 'none'})",
                path=concept.path,
            )
        references[token.key] = declared[token.key]
    return references


def bind(bundle: Bundle, path: str | Concept, values: Any) -> Bound:
    """Bind the Attested Computation at ``path`` with ``values`` (a name -> value mapping).

    Raises ``NotFound`` (no such concept), :class:`~okfx.errors.NotAttestable` (not an
    Attested Computation, no computation, not SQL okfx reads), ``UnsafePath`` (a
    computation file outside the bundle) or :class:`~okfx.errors.InvalidParameter`.
    """
    concept = path if isinstance(path, Concept) else bundle.concept(path)
    comp = computation_of(concept)
    dialect = dialect_for(comp.runtime)
    if dialect is None:
        if comp.runtime is None:  # AC QA: "has runtime None", also for a list written
            written = concept.frontmatter.get("runtime")
            said = (
                "has no runtime, which spec §10.2 requires"
                if written is None
                else f"has runtime written as {kind_of(written)}, not one name"
            )
            raise NotAttestable(
                f"{concept.path} {said}: its author should write the engine it runs on, "
                "e.g. runtime: duckdb (okfx binds and attests SQL runtimes: bigquery, "
                "duckdb, postgres, ...)",
                path=concept.path,
            )
        raise NotAttestable(
            f"{concept.path} has runtime {comp.runtime!r}; okfx binds and attests SQL "
            "runtimes only (bigquery, duckdb, postgres, ...). Use your own binder for it.",
            path=concept.path,
        )
    sql, source = computation_text(bundle, concept)
    try:
        tokens = strip_terminators(tokenize(sql, dialect, _declared_names(comp)))
    except SqlSyntaxError as exc:
        raise NotAttestable(
            f"{concept.path}: the computation cannot be read as SQL at character "
            f"{exc.offset}: {exc}",
            path=concept.path,
        ) from None
    if not tokens:
        raise NotAttestable(f"{concept.path}: the computation is empty", path=concept.path)
    references = _references(concept, tokens)
    types = {p.name: declared_type(p) for p in comp.parameters}
    bound_values = check_values(comp.parameters, values)
    return Bound(
        bundle=bundle.name,
        concept=concept,
        dialect=dialect,
        source=source,
        sql=sql,
        tokens=tuple(tokens),
        types=types,
        values=bound_values,
        references=references,
        defaults=frozenset(defaults_used(comp.parameters, values)),
    )
