"""A folder of a fetched bundle named as its source, not as its cache path.

A bundle loaded from a git URL or an archive lives in okfx's cache of sources; advice that
names a folder to load ("load catalog/ itself", a nested bundle's ``okfx validate
<path>``) gave that cache path, which a refresh replaces and ``okfx cache clear`` deletes
(sources QA: a CI job pointed at it would freeze the commit). :func:`in_source_terms`
rewrites such paths as the source form that loads the same folder: ``URL#ref:subdir``
for git, ``archive#folder`` for an archive (docs/sources.md).
"""

from __future__ import annotations

import os
from typing import Any

from okfx.errors import OKFError

__all__ = ["in_source_terms", "source_form"]

#: What ends a path quoted in a message.
_ENDS = frozenset(" '\";),:")


def source_form(source: Any, inner: str) -> str | None:
    """The source spec that loads the folder ``inner`` (relative to the bundle's root,
    ``""`` for the root) of a bundle loaded from ``source``; None for a folder read in
    place or a source okfx does not parse."""
    if not isinstance(source, str | os.PathLike):
        return None
    from okfx.sources.spec import ArchiveSource, GitSource, parse_source

    try:
        parsed = parse_source(os.fspath(source))
    except (OKFError, ValueError, TypeError):  # a source okfx cannot read: no form to offer
        return None
    inner = inner.strip("/")
    if isinstance(parsed, GitSource):
        subdir = "/".join(part for part in (parsed.subdir or "", inner) if part)
        if not subdir:
            return parsed.url + (f"#{parsed.ref}" if parsed.ref else "")
        return f"{parsed.url}#{parsed.ref or ''}:{subdir}"
    if isinstance(parsed, ArchiveSource):
        folder = "/".join(part for part in (parsed.subdir or "", inner) if part)
        return f"{parsed.path}#{folder}" if folder else str(parsed.path)
    return None


def in_source_terms(text: str, root: str, source: Any) -> str:
    """``text`` with each path under ``root`` (a fetched bundle's cache folder) written as
    the :func:`source_form` that loads it; unchanged for a bundle read in place."""
    if not root or root not in text or source_form(source, "") is None:
        return text
    out: list[str] = []
    at = 0
    while (found := text.find(root, at)) >= 0:
        end = found + len(root)
        if end < len(text) and text[end] not in _ENDS and text[end] != "/":
            out.append(text[at:end])  # a longer name that only starts like the root
            at = end
            continue
        stop = end
        while stop < len(text) and text[stop] not in _ENDS:
            stop += 1
        form = source_form(source, text[end:stop])
        out.append(text[at:found] + (form if form is not None else text[found:stop]))
        at = stop
    out.append(text[at:])
    return "".join(out)
