"""Where a link that leaves its bundle lands when that place is another loaded bundle.

dharma-okf keeps 13 bundles side by side and links a sibling's page by
``../../nyaya-vaisheshika/concepts/anumana.md``. Each bundle alone rightly never follows
such a link (it leaves the bundle); with the sibling loaded beside it, an agent can still
read that page through the sibling (new-producers QA). This is path arithmetic on the
loaded bundles' roots and a lookup among their documents: nothing is opened or read, so
no link can reach a file outside a loaded bundle.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from urllib.parse import unquote

from okfx.bundle.bundle import Bundle
from okfx.bundle.links import destination

__all__ = ["landing"]


def landing(
    bundles: Mapping[str, Bundle], source: Bundle, base_dir: str, href: str
) -> tuple[str, str] | None:
    """``(bundle name, path)`` of the document of another loaded bundle that ``href``, a
    link of a page of ``source`` in ``base_dir`` that leaves ``source``, names: the file
    itself, else ``<path>.md``, else the folder's ``index.md``. None when it names none."""
    if len(bundles) < 2:
        return None
    written = destination(href.strip()).split("#", 1)[0].split("?", 1)[0]
    if not written or "\\" in written or "\x00" in written or written.startswith("/"):
        return None
    origin = source.root.as_posix() + ("" if base_dir == "/" else base_dir)
    place = posixpath.normpath(posixpath.join(origin, unquote(written)))
    for name, other in sorted(bundles.items()):
        if other is source:
            continue
        root = other.root.as_posix().rstrip("/")
        if not place.startswith(root + "/"):
            continue
        inside = place[len(root) :]
        for path in (inside, inside + ".md", inside.rstrip("/") + "/index.md"):
            found = other.get(path)
            if found is not None:
                return name, found.path
    return None
