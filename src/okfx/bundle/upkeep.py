"""Notes on a bundle's upkeep for ``okfx validate``: concepts past their ``stale_after``,
and links from live concepts to deprecated ones. Neither breaks conformance (§11); both
are what an author's CI would want to hear of (validate QA: a ``stale_after`` in 2020 and a
deprecated concept eight pages still link to passed without a word, though the tools
flag both to an agent).

Both depend on the time only through ``now``, which the caller passes."""

from __future__ import annotations

from datetime import datetime

from okfx.bundle.bundle import Bundle

__all__ = ["upkeep_notes"]

_SHOWN = 3  # examples a note names


def upkeep_notes(bundle: Bundle, now: datetime) -> tuple[str, ...]:
    """The notes on ``bundle`` at ``now``: its stale concepts, its links to deprecated ones."""
    notes: tuple[str, ...] = ()
    stale = [c for c in bundle if c.stale_after is not None and c.is_stale(now)]
    if stale:
        shown = ", ".join(f"{c.path} ({c.stale_after:%Y-%m-%d})" for c in stale[:_SHOWN])
        more = f" and {len(stale) - _SHOWN} more" if len(stale) > _SHOWN else ""
        said = (
            "1 concept is past its stale_after"
            if len(stale) == 1
            else f"{len(stale)} concepts are past their stale_after"
        )
        notes += (
            f"{said}: {shown}{more}; the tools mark such a concept stale to an agent: review "
            "it, then move its stale_after on",
        )
    deprecated = {c.path for c in bundle if c.status == "deprecated"}
    # One entry per (page, deprecated concept) with the lines that link it (validate QA:
    # a page linking a legacy metric twice was listed twice, with no line).
    pairs: dict[tuple[str, str], list[int]] = {}
    for target in sorted(deprecated):
        for link in bundle.neighbors(target).backlinks:
            if link.source not in deprecated:
                lines = pairs.setdefault((link.source, target), [])
                if link.line and link.line not in lines:
                    lines.append(link.line)
    if pairs:
        listed = list(pairs.items())
        shown = ", ".join(
            f"{source}{':' + ','.join(map(str, sorted(lines))) if lines else ''} -> {target}"
            for (source, target), lines in listed[:_SHOWN]
        )
        more = f" and {len(listed) - _SHOWN} more" if len(listed) > _SHOWN else ""
        notes += (
            f"{_count(len(listed), 'page links', 'pages link')} a deprecated concept: "
            f"{shown}{more}; unless the link is kept as history, link the current concept",
        )
    return notes


def _count(n: int, one: str, many: str) -> str:
    return f"1 {one}" if n == 1 else f"{n} {many}"
