"""Reading a folder that has no ``index.md``: a bounded listing of what it holds.

The spec links folders (``[Sub](subdir/)``, §8) and makes ``index.md`` optional, so a
folder is always readable: its own ``index.md`` when it has one (``read_concept`` returns
that), else the concepts directly in it and its subfolders, a page at a time like
``list_concepts``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from okfx.bundle.bundle import Bundle
from okfx.bundle.paths import normalize
from okfx.errors import NotFound
from okfx.tools.notices import FOLDER_FILES, nested_in
from okfx.tools.payloads import UNTRUSTED, concept_row

__all__ = ["MAX_LISTING", "folder_listing", "folder_no_links"]

#: Concepts (and subfolders) a folder listing shows, as one ``list_concepts`` page.
MAX_LISTING = 50


def folder_listing(bundle: Bundle, path: str, now: datetime) -> dict[str, Any] | None:
    """The listing of the folder at ``path`` when it is a folder without an ``index.md``
    (None otherwise: then ``path`` is a document, or nothing)."""
    canon = _bare_folder(bundle, path)
    if canon is None:
        return None
    prefix = "/" if canon == "/" else canon + "/"
    direct = [c for c in bundle if c.directory == canon]
    below: dict[str, int] = {}
    for folder in bundle.directories:
        # not the folder itself: the root listed "/" as its own subfolder (agent QA)
        if folder != canon and folder.startswith(prefix) and "/" not in folder[len(prefix) :]:
            below[folder] = 0
    for c in bundle:
        if c.path.startswith(prefix) and c.directory != canon:
            child = prefix + c.path[len(prefix) :].split("/", 1)[0]
            if child in below:
                below[child] += 1
    rows = [concept_row(bundle.name, c, c.is_stale(now)) for c in direct[:MAX_LISTING]]
    folders = [{"path": f, "concepts": n} for f, n in sorted(below.items())[:MAX_LISTING]]
    # The files in it that are no concept (SQL, scripts, images), which read_resource
    # reads (agent QA: a folder of two attached files was listed as empty).
    held = {c.path for c in direct}
    attached = sorted(
        f for f in bundle.files if f.rpartition("/")[0] == canon.rstrip("/") and f not in held
    )
    truncated = len(direct) > MAX_LISTING or len(below) > MAX_LISTING
    # The call names the bundle: without it, it listed the folder of that name in every
    # bundle loaded (agent QA: 5,379 rows for a folder of 5,120, the rest another's).
    shown = f"{len(rows)} of {len(direct)} concepts"
    if below:
        shown += f" and {len(folders)} of {len(below)} folders"
    notice = (
        f"Showing {shown}; call list_concepts(directory={canon!r}, bundle={bundle.name!r}, "
        f"offset={len(rows)}) for more."
        if truncated
        else ""
    )
    # A subfolder that is a bundle of its own reads as empty: say why (agent QA,
    # ultracart: /okf/ultracart_warehouse listed with 0 concepts and no word of it).
    notice = " ".join(filter(None, [notice, *nested_in([bundle], prefix)]))
    return {
        "bundle": bundle.name,
        "path": canon,
        "kind": "folder",
        "note": "This folder has no index.md; here is what it holds.",
        "concepts": rows,
        "folders": folders,
        "files": attached[:MAX_LISTING],
        "total": len(direct),
        "truncated": truncated,
        "notice": notice,
        UNTRUSTED: True,
    }


def folder_no_links(bundle: Bundle, path: str) -> NotFound | None:
    """The error for ``get_neighbors`` on a folder without an ``index.md``: no document
    there has links; it names the concepts directly in it, whose links are; ``None`` when
    ``path`` is no such folder."""
    name = _bare_folder(bundle, path)
    if name is None:
        return None
    inside = [c.path for c in bundle if c.directory == name]
    message = (
        f"{name} is a folder without an index.md: it has no links of its own. "
        "read_concept lists what it holds"
    )
    if inside:
        message += f"; get_neighbors of one of its {len(inside)} concepts gives that one's links"
    return NotFound(message + ".", path=name, suggestions=inside[:FOLDER_FILES])


def _bare_folder(bundle: Bundle, path: str) -> str | None:
    """``path`` as the bundle names it, when it is a folder without an ``index.md``."""
    canon = normalize(path)
    if canon.endswith("/index.md") and canon not in bundle.files:
        # A folder's index.md that is not there, the first read an agent is told to make
        # (agent QA: a bundle with no root index.md answered a bare not_found): the
        # folder's listing, which says it has no index.md.
        canon = canon.removesuffix("index.md").rstrip("/") or "/"
        return canon if canon in bundle.directories else None
    return canon if canon in bundle.directories and bundle.get(path) is None else None
