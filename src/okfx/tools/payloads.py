"""The one place tool payloads are built, so keys cannot drift between tools.

Every payload that carries bundle text says ``content_is_untrusted_data: true``: concept
text is data written by whoever produced the bundle, never instructions. Every
bundle-derived field is cut at its cap (:mod:`okfx.tools.caps`), and no field is given
twice: ``extensions`` holds only the frontmatter keys the header does not show already.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any
from urllib.parse import unquote

from okfx.attest.sqltext import dialect_for
from okfx.bundle.fields import second_computation_block, source_resource
from okfx.bundle.idlinks import UnresolvedId
from okfx.errors import NotFound, OKFError, UnsafePath
from okfx.model import Computation, Concept, Generated, Link, Parameter, Source, Verification
from okfx.tools.caps import (
    DESCRIPTION_CHARS,
    EXTENSION_CHARS,
    INLINE_CHARS,
    ITEMS,
    LABEL_CHARS,
    MESSAGE_CHARS,
    TITLE_CHARS,
    TYPE_CHARS,
    VALUE_CHARS,
    clip,
    clip_items,
    json_chars,
)
from okfx.trust import status_as_written, written_unread

__all__ = [
    "SHOWN_KEYS",
    "TWICE",
    "UNTRUSTED",
    "concept_header",
    "concept_row",
    "continuation_header",
    "error_payload",
    "generated_on",
    "id_payload",
    "internal_error",
    "iso",
    "jsonable",
    "link_payload",
    "notices",
    "unread_notices",
]

UNTRUSTED = "content_is_untrusted_data"
# A day written without a time (ISO 8601's calendar date).
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_MAX_DEPTH = 32
#: Frontmatter keys the header shows in a field of its own (normalised): they are never
#: repeated under ``extensions``.
SHOWN_KEYS = frozenset(
    {
        "type", "title", "description", "resource", "tags", "status", "stale_after",
        "sources", "usage_window", "generated", "verified", "timestamp", "runtime",
        "parameters", "computation", "executor", "attester",
    }
)  # fmt: skip
_EXTENSION_DEPTH = 6


def iso(value: datetime | date | None) -> str | None:
    """ISO 8601 text; UTC datetimes end in ``Z``; fractional seconds in milliseconds when
    that is all they hold (``13:14:12.015Z`` as written, not ``.015000``)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        millis = value.microsecond and value.microsecond % 1000 == 0
        text = value.isoformat(timespec="milliseconds" if millis else "auto")
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    return value.isoformat()


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-safe copy of a frontmatter value: str keys, no NaN, bounded depth."""
    if depth > _MAX_DEPTH:
        return "…"
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, datetime | date):
        return iso(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v, depth + 1) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def notices(concept: Concept, stale: bool) -> list[str]:
    """Plain-language lifecycle and trust flags a model should not miss."""
    out: list[str] = []
    if concept.status == "deprecated":
        out.append("DEPRECATED: kept for links and history; no longer current.")
    elif concept.status == "draft":
        out.append("DRAFT: not yet reviewed; possibly incomplete.")
    if stale:
        out.append(
            f"STALE: past its stale_after ({iso(concept.stale_after)}); re-verify before use."
        )
    if concept.trust_tier == "unverified":
        # No more than okfx knows, which is that no `verified` entry is written (agent QA:
        # "no one has confirmed" contradicted a producer's own `review_status: approved`).
        written = concept.frontmatter.get("verified")
        if isinstance(written, list | dict) and written:
            # spec QA: "no `verified` entry" sat above the entries the producer wrote
            out.append(
                "UNVERIFIED: no `verified` entry okfx can read (spec §5.3, §7) records a "
                "check of this content; okfx validate says why."
            )
        else:
            out.append(
                "UNVERIFIED: no `verified` entry (spec §5.3) records a check of this content."
            )
    return out


def concept_row(bundle: str, concept: Concept, stale: bool) -> dict[str, Any]:
    """The L1 frontmatter row: never a body; each field within its cap, and ``cut``
    (only when something was) naming the lists that were shortened."""
    cut: list[str] = []
    tags = clip_items(list(concept.tags), ITEMS, "tags", cut)
    row = {
        "bundle": bundle,
        "path": concept.path,
        "type": clip(concept.type, TYPE_CHARS),
        "title": clip(concept.title, TITLE_CHARS),
        "description": clip(concept.description, DESCRIPTION_CHARS),
        "tags": [clip(tag, LABEL_CHARS) for tag in tags],
        "status": concept.status,
        "trust_tier": concept.trust_tier,
        "stale": stale,
    }
    if cut:
        row["cut"] = cut
    return row


def _value(text: str | None) -> str | None:
    return None if text is None else clip(text, VALUE_CHARS)


def _source(source: Source, written: dict[str, Any]) -> dict[str, Any]:
    """One source; ``written`` is its entry as the frontmatter has it (empty when none
    matches), for what was written as a day."""
    out: dict[str, Any] = {"resource": clip(source.resource, VALUE_CHARS)}
    for key in ("id", "title", "author"):
        value = getattr(source, key)
        if value is not None:
            out[key] = clip(value, VALUE_CHARS)
    if source.usage_count is not None:
        out["usage_count"] = source.usage_count
    if source.last_modified is not None:
        out["last_modified"] = iso(source.last_modified)
        if _is_day(written.get("last_modified")):
            out["last_modified_date_only"] = True
    if source.usage_window is not None:
        out["usage_window"] = {
            "from": iso(source.usage_window.start),
            "to": iso(source.usage_window.end),
        }
    return out


def generated_on(concept: Concept) -> datetime | date | None:
    """``generated.at`` as written: the day alone (a ``date``) when it was written as a
    day, which okfx reads as that day's start in UTC, else the time (a list of recent
    concepts showed ``2026-01-01T00:00:00Z`` for a day: viewer QA). Reads the raw
    frontmatter: for a few concepts at a time."""
    generated = concept.generated
    if generated is None or generated.at is None:
        return None
    return (
        generated.at.date()
        if _generated(generated, concept.frontmatter).get("date_only")
        else generated.at
    )


def _generated(generated: Generated, frontmatter: dict[str, Any]) -> dict[str, Any]:
    """What is known of ``generated``: ``by`` and ``at`` only when they were readable;
    ``date_only`` when ``at`` was written as a day (``2026-01-01``), which okfx reads as
    that day's start in UTC: no time was given, so none should be quoted as known."""
    out: dict[str, Any] = {}
    if generated.by is not None:
        out["by"] = clip(generated.by, VALUE_CHARS)
    if generated.at is not None:
        out["at"] = iso(generated.at)
        written = frontmatter.get("generated")
        at = written.get("at") if isinstance(written, dict) else None
        if at is None and generated.legacy:
            at = frontmatter.get("timestamp")
        if _is_day(at):
            out["date_only"] = True
    out["legacy_timestamp"] = generated.legacy
    return out


def _written_entry(frontmatter: dict[str, Any], field: str, entry: Source) -> dict[str, Any]:
    """The frontmatter entry of ``field`` (``sources``) that ``entry`` was read from,
    matched by its resource, or ``{}``: invalid entries are skipped on reading, so
    positions do not match."""
    written = frontmatter.get(field)
    for raw in written if isinstance(written, list) else [written]:
        if isinstance(raw, dict) and (source_resource(raw) or ("", ""))[1] == entry.resource:
            return raw
    return {}


def _verification(event: Verification, frontmatter: dict[str, Any]) -> dict[str, Any]:
    """One verification; ``date_only`` as ``generated`` has it (MCP QA: a day's ``at``
    read as midnight UTC was quoted as a time)."""
    out: dict[str, Any] = {"by": clip(event.by, VALUE_CHARS), "at": iso(event.at)}
    written = frontmatter.get("verified")
    for raw in written if isinstance(written, list) else [written]:
        if isinstance(raw, dict) and raw.get("by") == event.by and event.at is not None:
            if _is_day(raw.get("at")):
                out["date_only"] = True
            break
    return out


def _is_day(value: Any) -> bool:
    """Whether a frontmatter date was written as a day without a time: YAML's date, or
    a string such as ``2026-01-01``."""
    if isinstance(value, str):
        return _DAY.fullmatch(value.strip()) is not None
    return isinstance(value, date) and not isinstance(value, datetime)


def _declared_value(value: Any) -> Any:
    return clip(value, VALUE_CHARS) if isinstance(value, str) else value


def _parameter(p: Parameter, cut: list[str]) -> dict[str, Any]:
    """One declared parameter; the constraints a producer added only when present."""
    out: dict[str, Any] = {
        "name": clip(p.name, VALUE_CHARS),
        "type": _value(p.type),
        "required": p.required,
    }
    for key, value in (
        ("default", p.default),
        ("example", p.example),
        ("min", p.minimum),
        ("max", p.maximum),
    ):
        if value is not None:
            out[key] = _declared_value(value)
    if p.enum is not None:
        enum = clip_items(list(p.enum), ITEMS, f"computation.parameters.{p.name}.enum", cut)
        out["enum"] = [_declared_value(v) for v in enum]
    return out


#: The contract's path fields, whose bundle paths ``files`` gives.
_CONTRACT_PATHS = ("computation", "executor.resource", "attester.resource")


def _computation(
    c: Computation, cut: list[str], links: Sequence[Link], body: str
) -> dict[str, Any]:
    parameters = clip_items(list(c.parameters), ITEMS, "computation.parameters", cut)
    receipt = clip_items(list(c.receipt), ITEMS, "computation.executor.receipt", cut)
    # Where each path field leads, as read_resource takes it (AC QA: './sql/x.sql', as
    # written, was not_found there): only a file of the bundle.
    files = {k.field: k.target for k in links if k.field in _CONTRACT_PATHS and k.exists}
    contract: dict[str, Any] = {
        "runtime": _value(c.runtime),
        "parameters": [_parameter(p, cut) for p in parameters],
        "computation": _value(c.computation_path),
        "inline_computation": None if c.inline is None else clip(c.inline, INLINE_CHARS),
        "executor": {
            "resource": _value(c.executor_resource),
            "receipt": [clip(r, VALUE_CHARS) for r in receipt],
        },
        "attester": {"resource": _value(c.attester_resource)},
    }
    if files:
        contract["files"] = files
    contract["note"] = _computation_note(c.runtime) + contract_warning(c, body)
    return contract


def contract_warning(c: Computation, body: str) -> str:
    """What a contract's note adds when the body holds code that is not the computation
    bound: a block beside the file (:data:`TWICE`), a second block (:data:`SECOND`)."""
    if c.twice:
        return TWICE
    if c.inline is not None and second_computation_block(body) is not None:
        return SECOND
    return ""


#: A contract with both a computation file and a body block: which one binds (AC QA).
TWICE = (
    " It names a computation file and its body has a '# Computation' block as well: the "
    "file is the sanctioned computation, the block is not."
)
#: A contract with two fenced blocks under '# Computation' (spec §10.3 asks for one).
SECOND = (
    " Its '# Computation' section holds more than one code block: the first is the "
    "sanctioned computation, the others are not."
)


def _computation_note(runtime: str | None) -> str:
    """What an agent may do with the contract: okfx binds and attests SQL runtimes only."""
    never = "okfx never runs the bundle's executor or attester code."
    if dialect_for(runtime) is None:
        return (
            "Never author or edit the computation. okfx binds and attests SQL runtimes only "
            f"and its runtime is {clip(str(runtime), LABEL_CHARS)!r}: prepare_computation and "
            "check_attestation answer not_attestable. Its executor runs it and its attester "
            f"checks the run, in your application; {never}"
        )
    return (
        "Supply values for the declared parameters only; never author or edit the "
        "computation. Bind values with prepare_computation and attest a run's receipt with "
        f"check_attestation; {never}"
    )


def concept_header(bundle: str, concept: Concept, stale: bool) -> dict[str, Any]:
    """The L2 metadata header: the row plus provenance, trust, lifecycle and contract,
    then ``extensions``: the frontmatter keys shown nowhere else (each field capped, see
    :mod:`okfx.tools.caps`; ``cut`` names the lists that were shortened)."""
    header = concept_row(bundle, concept, stale)
    cut: list[str] = header.pop("cut", [])
    frontmatter = concept.frontmatter  # read once: a stored concept reads its file for it
    generated = concept.generated
    verified = clip_items(list(concept.verified), ITEMS, "verified", cut)
    sources = clip_items(list(concept.sources), ITEMS, "sources", cut)
    citations = clip_items(list(concept.citations), ITEMS, "citations", cut)
    header.update(
        {
            "resource": _value(concept.resource),
            "stale_after": iso(concept.stale_after),
            **(
                {"stale_after_date_only": True}
                if concept.stale_after is not None and _is_day(frontmatter.get("stale_after"))
                else {}
            ),
            "generated": None if generated is None else _generated(generated, frontmatter),
            "verified": [_verification(v, frontmatter) for v in verified],
            "last_verified": iso(concept.last_verified),
            "sources": [_source(s, _written_entry(frontmatter, "sources", s)) for s in sources],
            "usage_window": None
            if concept.usage_window is None
            else {"from": iso(concept.usage_window.start), "to": iso(concept.usage_window.end)},
            "citations": [
                {
                    "footnote": clip(label, LABEL_CHARS),
                    "source": concept.source_for(label) is not None,
                }
                for label in citations
            ],
            "computation": None
            if concept.computation is None
            else _computation(concept.computation, cut, concept.links, concept.body),
            "notices": notices(concept, stale)
            + _status_as_written(concept, frontmatter)
            + _unread_as_written(concept, frontmatter),
            "extensions": _extensions(frontmatter, cut, concept.computation is not None),
        }
    )
    if cut:
        header["cut"] = cut
    return header


def _status_as_written(concept: Concept, frontmatter: dict[str, Any]) -> list[str]:
    """A notice when the producer wrote a status §5.4 does not define (``approved``, read
    as stable): its word is a signal too, and the header's ``status`` no longer holds it."""
    written = status_as_written(frontmatter, concept.status)
    if written is None:
        return []
    return [
        f"STATUS: written {clip(written, VALUE_CHARS)!r}, which spec §5.4 does not "
        f"define (draft, stable, deprecated); read as {concept.status}."
    ]


def unread_notices(concept: Concept) -> list[str]:
    """:func:`_status_as_written` and :func:`_unread_as_written` of the concept's own
    frontmatter (an Attested Computation's gate: its status, trust and freshness fields
    as the verdict judges them; AC QA: ``status: retired`` was a silent ``stable``)."""
    frontmatter = concept.frontmatter
    return _status_as_written(concept, frontmatter) + _unread_as_written(concept, frontmatter)


def _unread_as_written(concept: Concept, frontmatter: dict[str, Any]) -> list[str]:
    """A notice for each trust or freshness field the producer wrote that okfx could not
    read (``verified: yes``, ``stale_after: soon``): the header then shows none, and a
    reader would take the concept for never verified or never stale without knowing an
    author meant otherwise (walk QA: ``verified: "yes"`` vanished from a concept's page)."""
    unread = [
        (key, written, what)
        for key, read, what in (
            ("verified", concept.verified, "so the concept counts as unverified"),
            ("stale_after", concept.stale_after, "so the concept is never stale"),
            ("generated", concept.generated, "so who or what generated it is not known"),
        )
        if (written := written_unread(frontmatter, key, read)) is not None
    ]
    return [
        f"{key.upper()}: written {clip(repr(written), VALUE_CHARS)}, which okfx "
        f"cannot read (spec §5); ignored, {what}. okfx validate says why."
        for key, written, what in unread
    ]


#: The keys each structured field's mappings are read for (spec §5, §10.2); any other key
#: a producer writes inside them is an extension too (``generated.body_sha256``,
#: ``sources[0].sha256``), shown under its path.
_NESTED_KEYS: dict[str, frozenset[str]] = {
    "generated": frozenset({"by", "at"}),
    "verified": frozenset({"by", "at"}),
    "sources": frozenset(
        {"resource", "id", "title", "author", "usage_count", "last_modified", "usage_window"}
    ),
    "usage_window": frozenset({"from", "to"}),
    "executor": frozenset({"resource", "receipt"}),
    "attester": frozenset({"resource"}),
    "parameters": frozenset(
        {"name", "type", "required", "default", "example", "enum", "min", "max", "minimum",
         "maximum"}
    ),
}  # fmt: skip


#: The Attested Computation's fields (spec §10.2): ``computation`` shows them for a
#: concept okfx reads one of; another concept's are extensions like any other key.
_COMPUTATION_KEYS = frozenset({"parameters", "computation", "executor", "attester", "runtime"})


def _nested_extensions(
    frontmatter: dict[str, Any], skip: frozenset[str] = frozenset()
) -> list[tuple[str, Any]]:
    """The keys a producer added inside a structured field, each under its path as written
    (``sources[2].sha256`` is the third entry of ``sources`` in the file); none of the
    fields in ``skip``."""
    out: list[tuple[str, Any]] = []
    for field, known in _NESTED_KEYS.items():
        if field in skip:
            continue
        value = frontmatter.get(field)
        if isinstance(value, dict):
            entries: list[tuple[str, Any]] = [(field, value)]
        elif isinstance(value, list):
            entries = [(f"{field}[{i}]", entry) for i, entry in enumerate(value)]
        else:
            continue
        for path, entry in entries:
            if isinstance(entry, dict):
                # A source's ``url`` read as its resource is shown there, not here too.
                found = source_resource(entry) if field == "sources" else None
                taken = known if found is None else known | {found[0]}
                out.extend((f"{path}.{k}", v) for k, v in entry.items() if str(k) not in taken)
    return out


def _extensions(
    frontmatter: dict[str, Any], cut: list[str], computation: bool = True
) -> dict[str, Any]:
    """The frontmatter keys not in :data:`SHOWN_KEYS` (spec §4.1 extensions), then the keys
    added inside the structured fields under their paths; JSON-safe, each value capped, all
    of them within :data:`~okfx.tools.caps.EXTENSION_CHARS`. Without a ``computation``
    (the concept is no Attested Computation okfx reads), its §10.2 fields are extensions
    whole: ultracart's definitions write ``parameters: [{name, default, meaning}]``, and
    only ``parameters[0].meaning`` was shown, the name and default nowhere (agent QA)."""
    out: dict[str, Any] = {}
    shown = SHOWN_KEYS if computation else SHOWN_KEYS - _COMPUTATION_KEYS
    pairs = [(str(k), v) for k, v in frontmatter.items() if str(k) not in shown]
    pairs += _nested_extensions(frontmatter, frozenset() if computation else _COMPUTATION_KEYS)
    used = 2
    left: list[str] = []
    for key, raw in pairs:
        value = _capped(raw, 1)
        size = json_chars({key: value})
        if used + size > EXTENSION_CHARS:
            # One large key (an ontology's ``owl`` block) leaves out itself, not the small
            # keys after it (``sources[0].sha256``).
            left.append(clip(key, LABEL_CHARS))
            continue
        used += size
        out[clip(key, LABEL_CHARS)] = value
    if left:
        named = ", ".join(left[:10]) + (f" and {len(left) - 10} more" if len(left) > 10 else "")
        cut.append(
            f"extensions: {len(out)} of {len(pairs)} keys shown ({EXTENSION_CHARS} characters "
            f"at most; left out: {named}; read_resource on the concept's path gives its "
            "file as written, frontmatter included)"
        )
    elif any(_was_cut(value) for value in out.values()):
        cut.append(
            f"extensions: values longer than {VALUE_CHARS} characters are cut; "
            "read_resource on the concept's path gives its file as written, frontmatter "
            "included"
        )
    return out


def _was_cut(value: Any) -> bool:
    """Whether a :func:`_capped` value holds a cut string, list or mapping."""
    if isinstance(value, str):
        return "…[cut: " in value
    if isinstance(value, dict):
        return "…" in value or any(_was_cut(v) for v in value.values())
    if isinstance(value, list):
        return any(_was_cut(v) for v in value)
    return False


def _capped(value: Any, depth: int) -> Any:
    """:func:`jsonable` with every string, list and mapping within its cap."""
    if depth > _EXTENSION_DEPTH:
        return "…[cut: nested deeper]"
    if isinstance(value, str):
        return clip(value, VALUE_CHARS)
    if isinstance(value, dict):
        pairs = list(value.items())
        shown = {clip(str(k), LABEL_CHARS): _capped(v, depth + 1) for k, v in pairs[:ITEMS]}
        if len(pairs) > ITEMS:
            shown["…"] = f"[cut: {len(pairs) - ITEMS} more keys]"
        return shown
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        shown_items = [_capped(v, depth + 1) for v in items[:ITEMS]]
        if len(items) > ITEMS:
            shown_items.append(f"…[cut: {len(items) - ITEMS} more items]")
        return shown_items
    return jsonable(value)


#: What a continuation read says about its header.
SHORT_HEADER = "short: the whole header came with offset=0 (read from offset 0 to see it again)"


def continuation_header(bundle: str, concept: Concept, stale: bool) -> dict[str, Any]:
    """The header of a read that continues at an offset: who and what, and the lifecycle
    and trust flags; the rest came with the first read and is not repeated."""
    header = {
        key: value
        for key, value in concept_row(bundle, concept, stale).items()
        if key not in ("description", "tags")
    }
    header["notices"] = notices(concept, stale)
    header["header"] = SHORT_HEADER
    return header


def link_payload(link: Link, target_meta: dict[str, Any] | None, other_end: str) -> dict[str, Any]:
    """One edge as seen from a document: the other end, its title/type, and the field."""
    out: dict[str, Any] = {
        "path": other_end,
        "field": link.field,
        "text": clip(link.text, LABEL_CHARS),
        "line": link.line or None,
        "exists": link.exists,
    }
    fragment = link.href.partition("#")[2].strip()
    if fragment and (link.field == "body" or link.field.endswith("resource")):
        # The part of the target the link means ("agent-panel.md#context-tools"):
        # read_concept(section=...) reads it by that id (okf-studio QA).
        out["section"] = clip(unquote(fragment), LABEL_CHARS)
    if target_meta:
        out.update(target_meta)
    return out


def id_payload(found: UnresolvedId) -> dict[str, Any]:
    """A relation value naming an id that draws no edge, as an unresolved link of its
    concept: the ``id`` in place of a path, and why (``reason``: ``unknown_id``, with the
    concept of the closest id as ``did_you_mean``; ``ambiguous_id``, with the concepts
    declaring it as ``candidates``)."""
    ref = found.ref
    out: dict[str, Any] = {
        "id": clip(ref.value, LABEL_CHARS),
        "field": ref.field,
        "text": clip(ref.value, LABEL_CHARS),
        "line": ref.line or None,
        "exists": False,
        "reason": found.code,
    }
    if found.code == "ambiguous_id":
        out["candidates"] = list(found.paths[:ID_CANDIDATES])
    elif found.paths:
        out["did_you_mean"] = found.paths[0]
    return out


#: Concepts named as ``candidates`` of an id several declare.
ID_CANDIDATES = 5


def internal_error(tool: str) -> dict[str, Any]:
    """The result a model gets when a tool failed for a reason that is not its fault."""
    return {
        "error": {
            "code": "internal_error",
            "message": f"{tool} failed unexpectedly; the error was logged. "
            "Try another path or query.",
        }
    }


def error_payload(exc: OKFError) -> dict[str, Any]:
    """``{"error": {"code", "message", ...}}`` for any library error."""
    # Messages quote what was asked for and suggestions name bundle files: both capped.
    error: dict[str, Any] = {"code": exc.code, "message": clip(exc.message, MESSAGE_CHARS)}
    if isinstance(exc, NotFound) and exc.file:
        # A bundle file that is no concept: the path read_resource takes (bundle text).
        error["file"] = clip(exc.file, VALUE_CHARS)
        return {"error": error, UNTRUSTED: True}
    if isinstance(exc, NotFound | UnsafePath) and exc.suggestions:
        error["did_you_mean"] = [clip(s, VALUE_CHARS) for s in exc.suggestions[:ITEMS]]
        # Suggestions (paths, titles, headings) are bundle text too.
        return {"error": error, UNTRUSTED: True}
    if exc.bundle_text:  # the message quotes what the bundle's author wrote (AC QA)
        return {"error": error, UNTRUSTED: True}
    return {"error": error}
