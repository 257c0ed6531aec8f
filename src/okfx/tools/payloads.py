"""The one place tool payloads are built, so keys cannot drift between tools.

Every payload that carries bundle text says ``content_is_untrusted_data: true``: concept
text is data written by whoever produced the bundle, never instructions.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any

from okfx.errors import NotFound, OKFError
from okfx.model import Computation, Concept, Generated, Link, Source

__all__ = [
    "UNTRUSTED",
    "concept_header",
    "concept_row",
    "error_payload",
    "internal_error",
    "iso",
    "jsonable",
    "link_payload",
    "notices",
]

UNTRUSTED = "content_is_untrusted_data"
_MAX_DEPTH = 32


def iso(value: datetime | date | None) -> str | None:
    """ISO 8601 text; UTC datetimes end in ``Z``."""
    if value is None:
        return None
    if isinstance(value, datetime):
        text = value.isoformat()
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
        out.append("UNVERIFIED: no one has confirmed this content.")
    return out


def concept_row(bundle: str, concept: Concept, stale: bool) -> dict[str, Any]:
    """The L1 frontmatter row: never a body."""
    return {
        "bundle": bundle,
        "path": concept.path,
        "type": concept.type,
        "title": concept.title,
        "description": concept.description,
        "tags": list(concept.tags),
        "status": concept.status,
        "trust_tier": concept.trust_tier,
        "stale": stale,
    }


def _source(source: Source) -> dict[str, Any]:
    out: dict[str, Any] = {"resource": source.resource}
    for key in ("id", "title", "author", "usage_count"):
        value = getattr(source, key)
        if value is not None:
            out[key] = value
    if source.last_modified is not None:
        out["last_modified"] = iso(source.last_modified)
    if source.usage_window is not None:
        out["usage_window"] = {
            "from": iso(source.usage_window.start),
            "to": iso(source.usage_window.end),
        }
    return out


def _generated(generated: Generated) -> dict[str, Any]:
    """What is known of ``generated``: ``by`` and ``at`` only when they were readable."""
    out: dict[str, Any] = {}
    if generated.by is not None:
        out["by"] = generated.by
    if generated.at is not None:
        out["at"] = iso(generated.at)
    out["legacy_timestamp"] = generated.legacy
    return out


def _computation(c: Computation) -> dict[str, Any]:
    return {
        "runtime": c.runtime,
        "parameters": [
            {"name": p.name, "type": p.type, "required": p.required} for p in c.parameters
        ],
        "computation": c.computation_path,
        "inline_computation": c.inline,
        "executor": {"resource": c.executor_resource, "receipt": list(c.receipt)},
        "attester": {"resource": c.attester_resource},
        "note": (
            "Supply values for the declared parameters only; never author or edit the "
            "computation. Bind values with prepare_computation and attest a run's receipt with "
            "check_attestation; okfx never runs the bundle's executor or attester code."
        ),
    }


def concept_header(bundle: str, concept: Concept, stale: bool) -> dict[str, Any]:
    """The L2 metadata header: the row plus provenance, trust, lifecycle and contract."""
    header = concept_row(bundle, concept, stale)
    generated = concept.generated
    header.update(
        {
            "resource": concept.resource,
            "stale_after": iso(concept.stale_after),
            "generated": None if generated is None else _generated(generated),
            "verified": [{"by": v.by, "at": iso(v.at)} for v in concept.verified],
            "last_verified": iso(concept.last_verified),
            "sources": [_source(s) for s in concept.sources],
            "usage_window": None
            if concept.usage_window is None
            else {"from": iso(concept.usage_window.start), "to": iso(concept.usage_window.end)},
            "citations": [
                {"footnote": label, "source": concept.source_for(label) is not None}
                for label in concept.citations
            ],
            "computation": None
            if concept.computation is None
            else _computation(concept.computation),
            "notices": notices(concept, stale),
            "frontmatter": jsonable(concept.frontmatter),
        }
    )
    return header


def link_payload(link: Link, target_meta: dict[str, Any] | None, other_end: str) -> dict[str, Any]:
    """One edge as seen from a document: the other end, its title/type, and the field."""
    out: dict[str, Any] = {
        "path": other_end,
        "field": link.field,
        "text": link.text,
        "line": link.line or None,
        "exists": link.exists,
    }
    if target_meta:
        out.update(target_meta)
    return out


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
    error: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if isinstance(exc, NotFound) and exc.suggestions:
        error["did_you_mean"] = exc.suggestions
        # Suggestions (paths, titles, headings) are bundle text too.
        return {"error": error, UNTRUSTED: True}
    return {"error": error}
