"""Version siblings among search hits: a page kept once per release, shown as one hit.

Versioned documentation bundles hold the same page in one folder per release
(``/products/scalardl/3.11/how-to-write-contract.md``, ``.../3.12/...``, ``.../3.13/...``).
Their texts barely differ, so a search fills its hits with copies of one page whose order
is length noise in the fourth decimal of the score (QA on the ScalarDB bundle: ten hits
were four pages, and the newest release came third). :func:`fold_versions` keeps one hit
per page and names the other versions on it, so a page of hits is a page of documents.

This is presentation, not ranking: :class:`~okfx.search.index.SearchIndex` and
``Bundle.search`` still return every version, in score order; the agent-facing search
tool folds what they return.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "MAX_OTHER_VERSIONS",
    "NEAR_TIE",
    "TIE_ROOM",
    "fold_versions",
    "newest_in_ties",
    "one_per_page",
    "other_versions",
    "release_family",
    "release_of",
    "version_key",
    "version_segment",
]

#: A release folder: ``v2``, ``v1.4``, ``3.16``, ``1.2.3``, ``2.x``. A bare number
#: (``2024``, ``3``) is no release: year and chapter folders hold different pages. Number
#: parts of up to nine digits, so every part reads as a small ``int``.
_VERSION = re.compile(r"(?:[vV][0-9]{1,9}|[0-9]{1,9}\.(?:[0-9]{1,9}|x))(?:\.(?:[0-9]{1,9}|x))*")
#: ``x`` in a version (``2.x``): above any number at its place (parts have nine digits).
_ANY = 10**9
#: Other versions named on a folded hit; ``other_versions_total`` counts them past this.
MAX_OTHER_VERSIONS = 10
#: A member scoring at least this share of its group's best is as good a match: the
#: newest of those represents the group (version copies differ in length noise only).
NEAR_TIE = 0.95
#: How far past a cut tied copies of a page are looked for (:func:`newest_in_ties`).
TIE_ROOM = 30
#: What is stripped from a query word before it is compared with a version ("3.16?").
_PUNCTUATION = "\"'()[]{},;:!?."


def version_key(segment: str) -> tuple[int, ...] | None:
    """``segment`` as a tuple of numbers to order releases by (``3.9`` < ``3.10``, ``x``
    above any number), or None when it is no version."""
    if _VERSION.fullmatch(segment) is None:
        return None
    return tuple(_ANY if part == "x" else int(part) for part in segment.lstrip("vV").split("."))


def version_segment(path: str) -> str | None:
    """The first folder of ``path`` that names a release (never its file name)."""
    around = _around_version(path)
    return None if around is None else around[1]


def _around_version(path: str) -> tuple[str, str, str] | None:
    """``path`` cut at its first release folder: what is before, the folder, what is after."""
    parts = path.split("/")
    for at, segment in enumerate(parts[:-1]):
        if version_key(segment) is not None:
            return "/".join(parts[:at]), segment, "/".join(parts[at + 1 :])
    return None


def release_family(path: str) -> tuple[str, str] | None:
    """What the copies of one page in release folders share (the path on each side of
    its first release folder), or ``None`` for a path with no release folder."""
    around = _around_version(path)
    return None if around is None else (around[0], around[2])


def newest_in_ties(
    ranked: Sequence[tuple[Any, float]], path_of: Callable[[Any], str]
) -> list[tuple[Any, float]]:
    """``ranked`` (``(key, score)``, best first) with the copies of a page in release
    folders that tie on score put newest first, each in the places its family held among
    the tied: a list cut at a tie then keeps the newest copies (hybrid QA: three copies
    tied and the cut kept 3.11 and 3.12, dropping 3.13)."""
    out = list(ranked)
    start = 0
    while start < len(out):
        end = start + 1
        while end < len(out) and out[end][1] == out[start][1]:
            end += 1
        if end - start > 1:
            families: dict[tuple[str, str], list[int]] = {}
            for at in range(start, end):
                family = release_family(path_of(out[at][0]))
                if family is not None:
                    families.setdefault(family, []).append(at)
            for places in families.values():
                if len(places) > 1:
                    members = [out[at] for at in places]
                    members.sort(key=lambda item: release_of(path_of(item[0])), reverse=True)
                    for at, item in zip(places, members, strict=True):
                        out[at] = item
        start = end
    return out


def release_of(path: str) -> tuple[int, ...]:
    """The version of ``path``'s first release folder as numbers; ``()`` for none."""
    return version_key(version_segment(path) or "") or ()


def _sibling_key(hit: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """What version siblings share: the bundle and the path on each side of its first
    release folder (so the folder is at the same place in each); None for a path
    without one."""
    family = release_family(str(hit["path"]))
    return None if family is None else (str(hit["bundle"]), *family)


def _release(hit: Mapping[str, Any]) -> tuple[int, ...]:
    """The version of a hit's first release folder, as numbers."""
    return release_of(str(hit["path"]))


def _newest_first(members: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``members`` newest version first, equal versions (``v2``, ``V2``) by path."""
    by_path = sorted(members, key=lambda m: str(m["path"]))
    return sorted(by_path, key=_release, reverse=True)  # stable: by path within a version


def _representative(members: list[dict[str, Any]], asked: set[str]) -> dict[str, Any]:
    """The member a group is shown as: the best-ranked one whose version the query
    names, else the newest of those scoring within :data:`NEAR_TIE` of the best."""
    named = [m for m in members if (version_segment(str(m["path"])) or "").casefold() in asked]
    if named:
        return named[0]
    best = max(float(m["score"]) for m in members)
    floor = best - (1 - NEAR_TIE) * abs(best)  # holds the best for a negative score too
    close = [m for m in members if float(m["score"]) >= floor]
    return _newest_first(close)[0]


def _query_words(query: str) -> set[str]:
    return {word.strip(_PUNCTUATION).casefold() for word in query.split()}


def fold_versions(hits: Sequence[dict[str, Any]], query: str = "") -> list[dict[str, Any]]:
    """``hits`` (search hit dicts, best first) with each group of version siblings shown
    as one hit, in score order: the kept copy may score up to 5% under the group's best,
    and takes its place by its own score, so the scores shown never rise down the list
    (they had: 10.84 above 11.03). Hits that fold nothing keep their order.

    Siblings are hits of one bundle whose paths are equal once their first version
    folder is taken out. The hit kept (see :func:`_representative`) gains
    ``other_versions``: the other members' paths, newest first, at most
    :data:`MAX_OTHER_VERSIONS`, and ``other_versions_total`` when there were more. A hit
    with no sibling is passed on as it is, so an unversioned bundle's hits are unchanged.
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    order: list[tuple[str, str, str] | int] = []
    for i, hit in enumerate(hits):
        key = _sibling_key(hit)
        if key is None:
            order.append(i)
        elif key in groups:
            groups[key].append(hit)
        else:
            groups[key] = [hit]
            order.append(key)
    asked = _query_words(query)
    out: list[dict[str, Any]] = []
    for place in order:
        if isinstance(place, int):
            out.append(hits[place])
            continue
        members = groups[place]
        if len(members) == 1:
            out.append(members[0])
            continue
        kept = _representative(members, asked)
        others = _newest_first([m for m in members if m is not kept])
        folded = {**kept, "other_versions": [str(m["path"]) for m in others[:MAX_OTHER_VERSIONS]]}
        if len(others) > MAX_OTHER_VERSIONS:
            folded["other_versions_total"] = len(others)
        out.append(folded)
    if len(out) < len(hits):  # a stable sort: hits of equal score keep the ranker's order
        out.sort(key=lambda h: -float(h["score"]))
    return out


def one_per_page(named: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Concepts named (``did_you_mean``: bundle, path, title, in the order of closeness)
    with each page kept once per release named once, by its newest release, at the place
    of its first: the close names of a misspelt title were three releases of one page."""
    newest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for item in named:
        key = _sibling_key(item)
        if key is not None and (key not in newest or _release(item) > _release(newest[key])):
            newest[key] = item
    out: list[dict[str, Any]] = []
    placed: set[tuple[str, str, str]] = set()
    for item in named:
        key = _sibling_key(item)
        if key is None:
            out.append(item)
        elif key not in placed:
            placed.add(key)
            out.append(newest[key])
    return out


def other_versions(hit: Mapping[str, Any]) -> tuple[list[tuple[str, str]], int]:
    """What a folded hit names of its other versions, for a reader: ``(version, path)``
    of each, newest first, and how many more it folded than it names (none past
    :data:`MAX_OTHER_VERSIONS`). An unfolded hit names none."""
    paths = [str(p) for p in hit.get("other_versions") or ()]
    named = [(version_segment(p) or p, p) for p in paths]
    total = hit.get("other_versions_total")
    return named, max(total - len(paths), 0) if isinstance(total, int) else 0
