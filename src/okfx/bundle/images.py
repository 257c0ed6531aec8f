"""Images a concept shows from a file the bundle does not have (``broken_image``).

An image is no edge of the graph (docs/okf.md), so the load does not look at them. But to
an author a picture that shows as a broken icon is the same missing file a broken link is
(validate QA: ``![OKF System Architecture](/assets/diagram.png)`` in a bundle with no
``/assets/``, said by nothing). ``okfx validate`` checks them, as it checks anchors: the
inline images of concept bodies, outside code and HTML comments, whose destination is a
path (no scheme, no ``//`` host, no ``data:``), read from the bundle root when written with
a leading ``/`` and from the concept's folder otherwise. A path that climbs above the root
is not looked at (okfx never follows it, and the link checks say so for links).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from urllib.parse import unquote

from okfx.bundle.bundle import Bundle
from okfx.bundle.links import Resolver, destination, matches_outside_code
from okfx.bundle.paths import join, parent_dir
from okfx.errors import UnsafePath
from okfx.model import Problem

__all__ = ["broken_images"]

# An inline image: "![", alt text on one line, "](" and a destination with no blank
# (a title after it is left out). Each part is a run of one class, so it scans linearly.
_IMAGE = re.compile(r"!\[[^\]\n]{0,500}\]\(<?([^)\s>]{1,2000})")


def _images(body: str) -> Iterator[tuple[str, int]]:
    """The destinations of the body's inline images with their offsets, in order."""
    if "![" not in body:
        return
    for match in matches_outside_code(body, _IMAGE):
        yield match.group(1), match.start()


def _beneath(bundle: Bundle, target: str) -> bool:
    """Whether ``target`` is a regular file below the root that the load left out
    (hidden, excluded), opened without following any symlink (nothing outside is looked
    at) and closed unread."""
    try:
        fd = bundle.guard.open(target.lstrip("/"))
    except (OSError, ValueError):
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def broken_images(bundle: Bundle) -> tuple[list[Problem], int]:
    """``broken_image`` warnings, at most ``Limits.max_warnings`` listed, and how many
    there are."""
    cap = bundle.limits.max_warnings
    problems: list[Problem] = []
    count = 0
    files = bundle.files
    for concept in bundle:
        body = concept.body
        line, counted = concept.body_line, 0
        for href, offset in _images(body):
            written = destination(href)
            if Resolver.is_external(written):
                continue  # a URL: okfx does not fetch it
            path = unquote(written.partition("#")[0].partition("?")[0])
            if not path:
                continue
            try:
                target = join(parent_dir(concept.path), path)
            except UnsafePath:
                continue  # above the root, or a name okfx never opens
            if target in files or _beneath(bundle, target):
                continue  # there, or there but hidden or excluded (it still shows)
            line += body.count("\n", counted, offset)
            counted = offset
            count += 1
            if len(problems) < cap:
                problems.append(
                    Problem(
                        concept.path,
                        "broken_image",
                        f"image {href!r} leads to {target}, which is not in the bundle, so "
                        "the picture does not show: add the file, fix the path, or link it "
                        f"by full URL (line {line})",
                    )
                )
    return problems, count
