"""Absolute links written from the repository root instead of the bundle root.

Spec §6.1 reads ``/x.md`` from the bundle root. A bundle kept in ``docs/kb`` of a
repository is often written with links from the repository root (``/docs/kb/x.md``), which
browse well on a forge and all break in the bundle. When every absolute link of a bundle
is broken, all of them start with the bundle's own path inside the folders above it, and
dropping that prefix makes links resolve, okfx says so in one ``repository_root_links``
warning with the fix, instead of one ``broken_link`` per link. The links stay broken:
okfx does not guess them right (docs/okf.md, "Beyond the spec").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from okfx.bundle.parse import broken_hint, broken_message
from okfx.model import Link, Problem

__all__ = ["RootLinks", "find_root_links"]


@dataclass(frozen=True, slots=True)
class RootLinks:
    prefix: str  # "/docs/kb"
    links: tuple[Link, ...]  # every absolute link (all broken)
    fixed: int  # how many resolve once the prefix is dropped

    def broken_warnings(self, exists: Callable[[str], bool]) -> set[Problem]:
        """The ``broken_link`` warnings the parse gave these links (one warning replaces
        them); ``exists``: whether a bundle path is a file, as the parse saw it."""
        return {
            Problem(
                link.source,
                "broken_link",
                broken_message(
                    link.field,
                    link.target,
                    link.line,
                    link.href,
                    broken_hint(link.target, exists),
                ),
            )
            for link in self.links
        }


def find_root_links(
    links: Iterable[Link], root_parts: Sequence[str], exists: Callable[[str], bool]
) -> RootLinks | None:
    """The shared prefix when every absolute link is broken and starts with the last
    folders of the bundle's path (``root_parts``, its host path split on ``/``), and
    dropping it makes at least one link resolve; else None."""
    absolute = []
    for link in links:
        href = link.href
        if href[:1] == "/" and href[:2] != "//":
            if link.exists:  # one absolute link resolves: they are not written that way
                return None
            absolute.append(link)
    if not absolute:
        return None
    for depth in range(len(root_parts), 0, -1):
        prefix = "/" + "/".join(root_parts[-depth:])
        if not all(link.target.startswith(prefix + "/") for link in absolute):
            continue
        fixed = sum(1 for link in absolute if exists(link.target[len(prefix) :]))
        return RootLinks(prefix, tuple(absolute), fixed) if fixed else None
    return None


def message(found: RootLinks) -> str:
    """The one warning that replaces a broken_link per link."""
    n = len(found.links)
    return (
        f"all {n} absolute links start with {found.prefix}/, this bundle's own path in the "
        f"folders above it: they are written from the repository root, but spec §6.1 reads "
        f"/x.md from the bundle root, so all of them are broken ({found.fixed} of {n} would "
        f"resolve without the prefix). Fix: drop {found.prefix} from them (write /x.md), "
        "or load the repository root as the bundle"
    )
