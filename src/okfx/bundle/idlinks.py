"""Edges a producer draws by id, *beyond the spec*: ``related: [flutter.widget_identity]``.

Several producers give each concept an ``id`` key and name related concepts by it in a
relation key (``related``, ``prerequisites``, ... :data:`okfx.bundle.parse.RELATION_KEYS`)
rather than by path: in the real corpus, flutter-okf's 260 values, skupper-okf's 322 and
the Kishore-08 runbooks' 12. Each value becomes a :class:`~okfx.model.Link` to the
concept whose ``id`` it is, with the key as the link's ``field`` and the id as its
``href`` and ``text``, so the graph, backlinks and every view that reads links see it.

A concept's ids are known only once every file is parsed, so the parse records them
(``Concept.declared_id``, ``Concept.id_refs``) and :func:`link_ids` draws the edges when
a bundle installs what it parsed (a load, a stored state read back, a reload: each
draws them again from the whole bundle, so a reload still equals a fresh load). What a
producer names is compared as written (ids are case-sensitive, as YAML keys are).

- An id no concept declares is reported as ``unknown_id`` (with close ids, when some
  are), but only in a bundle that declares ids at all: elsewhere such values are
  slugs or names of something else, and are no edges.
- An id two concepts declare is ``ambiguous_id`` (each such reference, naming them),
  and no edge; each concept declaring it is ``duplicate_id`` (where the fix is), in a
  bundle whose concepts name ids at all.
- An id whose concept another link of the naming concept reaches already draws
  nothing, as a relation key's path does not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from difflib import get_close_matches
from typing import NamedTuple

from okfx.bundle.conventions import with_line
from okfx.bundle.stored import relinked
from okfx.model import Concept, IdRef, Link

__all__ = ["CLOSE_IDS_AMONG", "UnresolvedId", "declared_paths", "link_ids", "unresolved_ids"]

#: Close ids are looked for among at most this many declared ids (a difflib scan per
#: unknown id); a bigger bundle reports its unknown ids without them.
CLOSE_IDS_AMONG = 5_000
#: Unknown ids per bundle whose close ids are looked for; the rest are reported plainly.
_CLOSE_LOOKUPS = 200

Warn = Callable[[str, str, str], None]


class UnresolvedId(NamedTuple):
    """A relation value that names an id and draws no edge: ``code`` ``unknown_id`` (no
    concept declares it; ``paths``: the concepts of up to three close ids, each declared
    once) or ``ambiguous_id`` (``paths``: the concepts that declare it)."""

    ref: IdRef
    code: str
    paths: tuple[str, ...]


def link_ids(concepts: dict[str, Concept], warn: Warn) -> tuple[dict[str, Concept], frozenset[str]]:
    """``concepts`` with the edges their ``id_refs`` name added to their links, in path
    order, and the paths of the concepts that name ids (their links may change whenever
    another concept's ``id`` does). The mapping itself, unchanged, when none names one."""
    holders = [concept for concept in concepts.values() if concept.id_refs]
    if not holders:
        return concepts, frozenset()
    declared = declared_paths(concepts)
    twice = {key: paths for key, paths in declared.items() if len(paths) > 1}
    for key, declaring in sorted(twice.items(), key=lambda item: item[1]):
        for path in declaring:  # where the fix is: the files that declare it
            warn(path, "duplicate_id", _duplicate(key, path, declaring))
    out = dict(concepts)
    lookups = _CLOSE_LOOKUPS if len(declared) <= CLOSE_IDS_AMONG else 0
    for concept in holders:
        linked = {link.target for link in concept.links}
        added: list[Link] = []
        for ref in concept.id_refs:
            paths = declared.get(ref.value)
            if paths is None:
                if declared:
                    close = _close(ref.value, declared) if lookups > 0 else []
                    lookups -= 1
                    warn(concept.path, "unknown_id", _unknown(ref, close))
                continue
            if len(paths) > 1:
                warn(concept.path, "ambiguous_id", _ambiguous(ref, paths))
                continue
            target = paths[0]
            if target not in linked:
                linked.add(target)
                added.append(
                    Link(concept.path, target, ref.value, ref.value, ref.field, ref.line, True)
                )
        if added:
            out[concept.path] = relinked(concept, (*concept.links, *added))
    return out, frozenset(concept.path for concept in holders)


def unresolved_ids(concept: Concept, declared: Mapping[str, list[str]]) -> list[UnresolvedId]:
    """The relation values of ``concept`` that name an id and draw no edge, in its order,
    as :func:`link_ids` reports them (none in a bundle that declares no id), for the
    views that list a concept's unresolved links (viewer QA: its Unresolved list read
    "none" beside two unknown ids)."""
    if not declared:
        return []
    out: list[UnresolvedId] = []
    for ref in concept.id_refs:
        paths = declared.get(ref.value)
        if paths is None:
            close = _close(ref.value, declared) if len(declared) <= CLOSE_IDS_AMONG else []
            meant = tuple(declared[c][0] for c in close if len(declared[c]) == 1)
            out.append(UnresolvedId(ref, "unknown_id", meant))
        elif len(paths) > 1:
            out.append(UnresolvedId(ref, "ambiguous_id", tuple(paths)))
    return out


def declared_paths(concepts: Mapping[str, Concept]) -> dict[str, list[str]]:
    """Each ``id`` the concepts declare, and the paths of those declaring it, in order."""
    declared: dict[str, list[str]] = {}
    for concept in concepts.values():
        if concept.declared_id is not None:
            declared.setdefault(concept.declared_id, []).append(concept.path)
    return declared


def _close(value: str, declared: Mapping[str, list[str]]) -> list[str]:
    return get_close_matches(value, declared, n=3, cutoff=0.75)


def _unknown(ref: IdRef, close: list[str]) -> str:
    hint = f"; close: {', '.join(repr(c) for c in close)}" if close else ""
    message = (
        f"{ref.field} names the id {ref.value!r}, which no concept of the bundle declares "
        f"(its 'id' key): no edge{hint}"
    )
    return with_line(message, ref.line or None)


def _duplicate(key: str, path: str, paths: list[str]) -> str:
    others = [p for p in paths if p != path]
    shown = ", ".join(others[:5]) + (" ..." if len(others) > 5 else "")
    return (
        f"the id {key!r} is declared by {len(paths)} concepts (also {shown}): a relation "
        "key naming it draws no edge; give each concept its own id"
    )


def _ambiguous(ref: IdRef, paths: list[str]) -> str:
    shown = ", ".join(paths[:5]) + (" ..." if len(paths) > 5 else "")
    message = (
        f"{ref.field} names the id {ref.value!r}, which {len(paths)} concepts declare "
        f"({shown}): no edge; give each concept its own id"
    )
    return with_line(message, ref.line or None)
