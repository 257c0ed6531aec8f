"""The page a broken link most likely meant: a typo, a moved file, a path written from the
repository root, a wikilink written as a title. The tools give it as ``did_you_mean``,
the viewer beside the link and its problem, and ``okfx validate`` in the problem's
message (validate QA: an author fixing a CI failure had to find the target by hand)."""

from __future__ import annotations

from functools import lru_cache

from okfx.bundle.bundle import Bundle
from okfx.bundle.parse import broken_message
from okfx.bundle.problems import problem_line
from okfx.model import Problem
from okfx.search.suggest import fold, similarity

__all__ = ["MEANT_SIMILARITY", "meant", "meant_by"]

#: How close a broken link's file name and a concept's must be for the concept to be
#: named as the one the link meant (the indel similarity of their words).
MEANT_SIMILARITY = 0.85


def meant(b: Bundle, target: str, source: str) -> str | None:
    """The concept a broken link to ``target`` most likely meant, for an agent to read
    in one step: a typo, a moved file, a path written from the repository root
    (``/oks/kb/commits/a.md`` for ``/commits/a.md``), a folder's ``index.md`` for a page
    of the folder's name. The closest names by path and title (``Bundle.suggest``) count
    only when their file name is that of the link (:data:`MEANT_SIMILARITY`): two paths
    that share a long prefix are close whatever file they end in. Never ``source``, the
    page that holds the link: m3e's ``/components/button.md`` links
    ``/implementations/m3e-web/components/button``, a card outside the bundle, and was
    told it meant itself. Of several such names, the one whose folders end as the link's
    do (agent QA, pydantic-ai book: ``/docs/ai/models/overview/`` meant
    ``/pages/docs/ai/models/overview.md``, not the closer-ranked
    ``/pages/docs/ai/capabilities/overview.md``)."""
    own = f"/{b.root.name}/"
    if (
        target.startswith(own)
        and source != target.removeprefix(own[:-1])
        and b.get(target.removeprefix(own[:-1])) is not None
    ):
        # /okf/cocce.md written from the repository root, okf/ being the bundle's own
        # folder (new-producers QA, okf-cocce): the same page from the bundle's root
        return target.removeprefix(own[:-1])
    head, _, name = target.rstrip("/").rpartition("/")
    stem = name.removesuffix(".md")
    if stem.casefold() in ("index", "readme") and head:
        head, _, stem = head.rpartition("/")
        target = f"{head}/{stem}.md"
        if not head and stem == b.root.name and "/index.md" in b.files:
            # /okf/README.md written from the repository root, okf/ being the bundle's
            # own folder: its root index (new-producers QA, okf-cocce; /okf/index.md is
            # the page of that name, found above)
            return "/index.md"
    wanted = fold(stem)  # its words: "Delta_Duplicate-Columns" -> "delta duplicate columns"
    folders = _folders(head)
    # A link into folders none of which the bundle has (Quartz's /tags/x, a card in
    # /implementations/ beside the bundle) means a page of another place, not one of the
    # same name elsewhere, unless the folders end as the candidate's do (a path written
    # from the repository root): CI QA, /tags/tool was said to mean /templates/tool.md.
    elsewhere = bool(folders) and not _any_folder(b, head)
    best: tuple[int, str] | None = None
    for path in b.suggest(target, 5):
        parent, _, leaf = path.rpartition("/")
        shared = _shared_tail(folders, _folders(parent))
        if path == source or (best is not None and shared <= best[0]):
            continue  # no better than the one found (most often: no other)
        if elsewhere and not shared:
            continue
        if similarity(wanted, fold(leaf.removesuffix(".md"))) >= MEANT_SIMILARITY:
            best = (shared, path)
    return None if best is None else best[1]


def _any_folder(b: Bundle, head: str) -> bool:
    """Whether the bundle has a folder on the path ``head`` (``/a``, ``/a/b``...), or a
    folder anywhere named as its first one (``/docs/x`` written from the site root
    ``/pages/``, whose ``docs/`` is there)."""
    parts = [part for part in head.split("/") if part]
    dirs = b.directories
    if any("/" + "/".join(parts[: i + 1]) in dirs for i in range(len(parts))):
        return True
    return bool(parts) and parts[0].casefold() in _folder_names(dirs)


@lru_cache(maxsize=8)
def _folder_names(dirs: frozenset[str]) -> frozenset[str]:
    """The names of the folders ``dirs``, case-folded (once per set of folders)."""
    return frozenset(d.rsplit("/", 1)[-1].casefold() for d in dirs)


def _folders(head: str) -> list[str]:
    return [part.casefold() for part in head.split("/") if part]


def _shared_tail(a: list[str], b: list[str]) -> int:
    """How many last folders ``a`` and ``b`` have in common, in order."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def meant_by(b: Bundle, problem: Problem) -> str | None:
    """For a ``broken_link`` problem, the path its link most likely meant, else None."""
    if problem.code != "broken_link":
        return None
    doc = b.get(problem.path)
    line = problem_line(problem)
    if doc is None or line is None:
        return None
    # The link the problem is about: on its line, and the one its message names (validate
    # QA: every broken link of a line was given the first one's suggestion).
    on_line = [k for k in doc.links if not k.exists and k.line == line]
    named = [
        k
        for k in on_line
        if problem.message.startswith(broken_message(k.field, k.target, 0, k.href))
    ]
    link = named[0] if named else on_line[0] if len(on_line) == 1 else None
    return None if link is None else meant(b, link.target, problem.path)
