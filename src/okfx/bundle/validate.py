"""The spec §11 conformance report of a loaded bundle.

Rules 1 and 2 (parseable frontmatter, with no key written twice, and a non-empty ``type``
in every non-reserved ``.md`` file) and rule 3 (``index.md`` and ``log.md`` follow §8 and
§9: no frontmatter in an index but the root's ``okf_version``, its entries under headings,
``YYYY-MM-DD`` date headings in a log) are errors, and so is a folder without any concept
(a wrong path must not pass a CI check). Everything else okfx noticed is a warning: broken
links, ``status`` values off §5.4, bad optional fields, §5-§10 rules a producer should
follow (:mod:`okfx.bundle.conventions`), a frontmatter block in a ``log.md`` (§9 does not
mention one), skipped files. A bundle is conformant when it has no errors (§11: consumers
must not reject a bundle for broken links, unknown types or missing optional fields).

Counts are exact: a load records at most ``Limits.max_warnings`` problems but counts
every one by code (:meth:`Bundle.problem_counts`), so an error after a flood of warnings
still fails the check.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from okfx.bundle.anchors import closest_anchor, fragment_key, heading_anchors, other_anchors
from okfx.bundle.bundle import RESERVED, Bundle
from okfx.bundle.conventions import with_line
from okfx.bundle.habits import no_frontmatter_note, undated_log_note, version_in_concepts_note
from okfx.bundle.hidden import hidden_note
from okfx.bundle.images import broken_images
from okfx.bundle.links import scan_markdown
from okfx.bundle.meant import meant_by
from okfx.bundle.problems import (
    ERROR_CODES,
    ProblemGroup,
    group,
    kept_past,
    problem_dict,
    reading_order,
)
from okfx.bundle.scope import matches
from okfx.bundle.sourceform import in_source_terms
from okfx.bundle.upkeep import upkeep_notes
from okfx.bundle.wikilinks import scan_wikilinks
from okfx.model import Link, Problem

__all__ = [
    "ERROR_CODES",
    "ConformanceReport",
    "broken_anchors",
    "report_notes",
    "reported",
    "validate",
    "version_note",
    "why_empty",
]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass(frozen=True)
class ConformanceReport:
    bundle: str
    root: str
    okf_version: str | None
    concepts: int
    errors: tuple[Problem, ...]  # the recorded ones
    warnings: tuple[Problem, ...]  # the recorded ones
    by_code: dict[str, int] = field(default_factory=dict)  # every problem, exact
    excluded: tuple[str, ...] = ()  # .md files left out by exclude patterns (not problems)
    notes: tuple[str, ...] = ()  # what the check did not look at, and how to make it
    source: dict[str, Any] | None = None  # a fetched bundle's origin: which commit or archive

    def __post_init__(self) -> None:
        if not self.by_code:  # built by hand: count what is listed
            object.__setattr__(self, "by_code", self._listed_counts())

    def _listed_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for problem in (*self.errors, *self.warnings):
            counts[problem.code] = counts.get(problem.code, 0) + 1
        return counts

    @property
    def error_count(self) -> int:
        return sum(n for code, n in self.by_code.items() if code in ERROR_CODES)

    @property
    def warning_count(self) -> int:
        return sum(n for code, n in self.by_code.items() if code not in ERROR_CODES)

    @property
    def conformant(self) -> bool:
        return self.error_count == 0

    def passes(self, strict: bool = False) -> bool:
        """Whether the check passes: conformant, and with ``strict`` no warning either
        (``okfx validate --strict``)."""
        return self.conformant and not (strict and self.warning_count)

    def summary(self) -> str:
        """The verdict in one line: bundle, conformance, counts, declared version."""
        if self.conformant:
            verdict = "conformant with OKF v0.2"
        elif self.concepts == 0 and self.by_code.get("no_concepts"):
            verdict = "no concepts found (is this the bundle's folder?)"
        else:
            verdict = "NOT conformant with OKF v0.2"
        version = f", declares okf_version {self.okf_version}" if self.okf_version else ""
        return (
            f"{self.bundle}: {verdict} ({_count(self.concepts, 'concept')}, "
            f"{_count(self.error_count, 'error')}, {_count(self.warning_count, 'warning')}"
            f"{version}){self._fetched()}"
        )

    def _fetched(self) -> str:
        """Which commit or archive a fetched bundle was checked at (sources QA: a CI job
        that validated a pin could not show what it validated)."""
        source = self.source or {}
        if source.get("kind") == "git":
            return f"; {source.get('url')} at {str(source.get('commit'))[:12]}"
        if source.get("kind") == "archive":
            return f"; archive sha256 {str(source.get('sha256'))[:12]}"
        return ""

    @property
    def truncated(self) -> int:
        """1 when the lists hold a ``too_many_warnings`` entry (some problems are counted
        and not listed), else 0."""
        return int(any(p.code == "too_many_warnings" for p in self.warnings))

    def counts(self) -> dict[str, int]:
        """Number of problems per code (every one, recorded or not), sorted by code."""
        return dict(sorted(self.by_code.items()))

    def groups(self) -> list[ProblemGroup]:
        """The problems by code, errors first (what the text report prints)."""
        return group((*self.errors, *self.warnings), self.by_code)

    def to_dict(self, strict: bool = False) -> dict[str, Any]:
        """A stable, JSON-able form (the ``okfx validate --json`` output): with
        ``strict`` and ``passes``, the verdict the exit code gives, so a stored report
        says why a ``--strict`` job failed (validate QA)."""
        return {
            "bundle": self.bundle,
            "root": self.root,
            "source": self.source,
            "okf_version": self.okf_version,
            "conformant": self.conformant,
            "strict": strict,
            "passes": self.passes(strict),
            "concepts": self.concepts,
            "summary": {
                "errors": self.error_count,
                "warnings": self.warning_count,
                "by_code": self.counts(),
                # validate QA: past max_warnings the lists are partial, and only a magic
                # code in them said so (too_many_warnings, which is no counted problem).
                "listed": len(self.errors) + len(self.warnings) - self.truncated,
                "truncated": bool(self.truncated),
            },
            "errors": [problem_dict(p) for p in self.errors],
            "warnings": [problem_dict(p) for p in self.warnings],
            "excluded": list(self.excluded),
            "notes": list(self.notes),
        }


def why_empty(bundle: Bundle, where: bool = True) -> str:
    """Why a bundle has no concept, in words: what its folder holds, and what to do
    (``where``: naming the folder to load by its path on this machine, which an agent's
    tools do not show)."""
    markdown = [p for p in bundle.files if p.endswith(".md")]
    reserved = [p for p in markdown if p.rsplit("/", 1)[-1] in RESERVED]
    if not markdown:
        hidden = _hidden_bundles(bundle)
        if hidden:  # the okf gem writes its bundle to .okf/ (okf-gem QA)
            shown = ", ".join(hidden[:3])
            return (
                f"the folder has {_count(len(bundle.files), 'file')} and no .md file, but its "
                f"hidden folder {shown} holds an index.md, and okfx skips hidden names: load "
                + (f"{bundle.root / hidden[0]} itself" if where else f"{hidden[0]} itself")
            )
        if _bare_repository(bundle):  # platform QA: it loaded as an empty folder, no hint
            uri = f"its URL, {bundle.root.as_uri()}" if where else "its file:// URL"
            return (
                "the folder is a bare git repository, whose files are git's own: load it by " + uri
            )
    inner = _inner_bundles(bundle)
    if inner:  # new-producers QA: "each needs frontmatter" sent authors to README files
        shown = ", ".join(f"{folder}/" for folder in inner[:3])
        first = inner[0].lstrip("/")
        held = (
            f"{len(markdown) - len(reserved)} .md files, none of them a concept,"
            if markdown
            else f"{len(bundle.files)} files and no .md file,"
        )
        return (
            f"the folder has {held} and {shown} "
            f"{'holds a bundle' if len(inner) == 1 else 'hold bundles'} of its own that okfx "
            "does not read as part of this one: load "
            + (f"{bundle.root / first} itself" if where else f"{first}/ itself")
        )
    if not markdown:
        files = _count(len(bundle.files), "file")
        return f"the folder has {files} and no .md file: is the path right?"
    if len(reserved) == len(markdown):
        return (
            f"the folder has only index.md and log.md files ({len(reserved)}): add concept "
            "files (.md with a 'type' in their frontmatter)"
        )
    return (
        f"the folder has {len(markdown) - len(reserved)} .md files, none of them a concept: "
        "each needs frontmatter with a 'type'"
    )


def _inner_bundles(bundle: Bundle) -> list[str]:
    """The folders under the bundle's root that okfx reads as bundles of their own: its
    nested bundles (``okf_version`` in their ``index.md``), then the hidden folders right
    under the root that hold an ``index.md`` (``/.okf``), which the walk skips."""
    return [*bundle.nested_bundles, *("/" + name for name in _hidden_bundles(bundle))]


def _bare_repository(bundle: Bundle) -> bool:
    """Whether the bundle's folder looks like a bare git repository (``HEAD``,
    ``objects/``, ``refs/``): a repository given as a path, not as a URL."""
    root = bundle.guard.real_root
    return (
        os.path.isfile(os.path.join(root, "HEAD"))
        and os.path.isdir(os.path.join(root, "objects"))
        and os.path.isdir(os.path.join(root, "refs"))
    )


def _hidden_bundles(bundle: Bundle) -> list[str]:
    """The hidden folders (``.okf``) right under the bundle's root that hold an
    ``index.md``, sorted: a bundle the walk skipped, which is meant to be loaded."""
    try:
        entries = list(os.scandir(bundle.guard.real_root))
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.name.startswith(".") and entry.name not in (".git", ".github"):
            try:
                if entry.is_dir(follow_symlinks=False) and os.path.isfile(
                    os.path.join(entry.path, "index.md")
                ):
                    found.append(entry.name)
            except OSError:
                continue
    return sorted(found)


def unchecked_wikilinks(bundle: Bundle) -> int:
    """How many documents hold ``[[wikilinks]]`` (outside code) that were not followed,
    the bundle being loaded without them (0 when it was loaded with them)."""
    if bundle.wikilinks:
        return 0
    bodies = [c.body for c in bundle]
    bodies += [index.body for index in bundle.indexes.values()]
    bodies += [log.body for log in bundle.logs.values()]
    return sum(1 for body in bodies if scan_wikilinks(body, limit=1))


#: The codes of a file that is no concept, and the least of them in one folder for which
#: the report suggests leaving the folder out (a folder of mirrored pages, drafts, inbox).
_NOT_CONCEPTS = (
    "missing_type",
    "no_frontmatter",
    # broken frontmatter is no concept either (CLI QA: "all 867 files that are no concept"
    # in a vault whose 4 templates/ files have broken YAML, 871 in all)
    "malformed_yaml",
    "unterminated_frontmatter",
    "frontmatter_not_mapping",
    "invalid_type",
)
_CLUSTER = 10


def _most(counts: dict[str, int]) -> tuple[str, int]:
    """The key counted most, and its count; of equal counts, the first key in order (the
    same note on every machine)."""
    return max(sorted(counts.items()), key=lambda item: item[1])


def clustered(problems: list[Problem]) -> tuple[list[tuple[str, int]], int] | None:
    """``([(folder, n), ...], total)`` when at least 9 in 10 of the recorded files that
    are no concept (``missing_type``, ``no_frontmatter``) lie in one top-level folder, or
    in two or three (the vault bundle's 524 clippings in /news/, 344 in /inbox/: validate
    QA), each holding :data:`_CLUSTER` or more; else None. Folders come most first."""
    paths = [p.path for p in problems if p.code in _NOT_CONCEPTS]
    folders: dict[str, int] = {}
    for path in paths:
        top = path.split("/")[1] if path.count("/") > 1 else ""
        if top:
            folders[top] = folders.get(top, 0) + 1
    chosen: list[tuple[str, int]] = []
    covered = 0
    for top, n in sorted(folders.items(), key=lambda item: (-item[1], item[0]))[:3]:
        if n < _CLUSTER:
            break
        chosen.append((top, n))
        covered += n
        if covered * 10 >= len(paths) * 9:
            return chosen, len(paths)
    return None


def _cluster_note(folders: list[tuple[str, int]], total: int, bundle: Bundle) -> str:
    """The note of :func:`clustered`'s folders: where the files that are no concept lie,
    and the ``--exclude`` that leaves them out, with the concepts it would leave out too
    (CI QA: followed, it dropped 8 typed pages of /news/ and /inbox/ without a word)."""
    tops = tuple(f"/{top}/" for top, _ in folders)
    lost = sorted(c.path for c in bundle if c.path.startswith(tops))
    also = ""
    if lost:
        shown = ", ".join(lost[:3]) + (" ..." if len(lost) > 3 else "")
        also = f" (which leaves out {_count(len(lost), 'concept')} too: {shown})"
    if len(folders) == 1:
        top, n = folders[0]
        return (
            f"{_of(n, total)} files that are no concept are under /{top}/: give each a "
            f"'type', or leave the folder out with --exclude {top}/{also}"
        )
    n = sum(count for _, count in folders)
    where = " and ".join(f"/{top}/ ({count})" for top, count in folders)
    flags = " ".join(f"--exclude {top}/" for top, _ in folders)
    return (
        f"{_of(n, total)} files that are no concept are under {where}: give each a "
        f"'type', or leave the folders out with {flags}{also}"
    )


def _of(n: int, total: int) -> str:
    return f"all {total}" if n == total else f"{n} of the {total}"


def _broken_absolute(bundle: Bundle) -> list[Link]:
    """The bundle's broken links written from the root (``/x``, not ``//host``)."""
    return [
        link for link in bundle.unresolved_links() if link.href[:1] == "/" and link.href[:2] != "//"
    ]


def _broken_relative(bundle: Bundle) -> list[Link]:
    """The bundle's broken body links written relative (``./tags/x``, ``../a.md``)."""
    return [
        link
        for link in bundle.unresolved_links()
        if link.field == "body" and link.href[:1] not in ("/", "#") and ":" not in link.href
    ]


def link_roots(bundle: Bundle, broken: Sequence[Link]) -> tuple[str, int, int] | None:
    """``(folder, n, absolute)``: of the ``absolute`` broken absolute links, ``n`` resolve
    when read from ``folder``, the nearest folder above their source that has its own
    ``index.md`` and reads them right (``/components/x`` written in ``/knowledge/...``
    resolves as ``/knowledge/components/x``), the folder that most do; None if none does.
    ``broken``: the bundle's broken absolute links (:func:`_broken_absolute`)."""
    roots = {d for d in bundle.indexes if d != "/"}
    if not roots:
        return None
    files = bundle.files

    def resolves(folder: str, target: str) -> bool:
        if any(f"{folder}{target}{end}" in files for end in ("", ".md", "/index.md")):
            return True
        # a site's page link ends in "/" (``/docs/a/b/``, read as ``docs/a/b/index.md``)
        # and serves ``docs/a/b.md``
        page = target.removesuffix("/index.md")
        return page != target and f"{folder}{page}.md" in files

    found: dict[str, int] = {}
    for link in broken:
        folder = link.source.rsplit("/", 1)[0]
        while folder:
            if folder in roots and resolves(folder, link.target):
                found[folder] = found.get(folder, 0) + 1
                break
            folder = folder.rsplit("/", 1)[0]
    if not found:
        return None
    best, n = _most(found)
    return best, n, len(broken)


def inner_root(
    bundle: Bundle, problems: Sequence[Problem], roots: tuple[str, int, int] | None
) -> str | None:
    """A note when the bundle loaded is probably a folder above the real one, a folder
    with its own ``index.md`` that either reads most broken absolute links right
    (``roots``, :func:`link_roots`) or holds every concept, when files that are no
    concept lie outside it or the folder loaded has no ``index.md`` of its own (validate
    QA: a repository holding only ``knowledge/`` was told to rewrite 350 links, not to
    load that folder). Spec §3: a bundle may be a folder within a larger repository."""
    outside = [p.path for p in problems if p.code in _NOT_CONCEPTS]
    rootless = "/" not in bundle.indexes
    if not outside and not rootless:
        return None
    why = (
        f"{_count(len(outside), 'file')} here {'is' if len(outside) == 1 else 'are'} no concept"
        if outside
        else "this folder has no index.md"
    )
    hidden = _hidden_bundles(bundle)
    if hidden and len(bundle) < len(outside) + (1 if rootless else 0) + 1:
        # new-producers QA: a repository whose bundle is .okf/ loaded as one stray page
        return (
            f"the hidden folder {hidden[0]}/ holds an index.md, and okfx skips hidden "
            f"names: the bundle is probably {hidden[0]}/ (load that folder), not this one "
            f"({why})"
        )
    if roots is not None:
        best, n, absolute = roots
        if n >= 3 and n * 2 >= absolute:
            return (
                f"{n} of the {absolute} broken absolute links resolve when read from {best}/, "
                f"which has its own index.md: they are written from that folder's root, so "
                f"the bundle is probably {best}/ (load that folder), not this one ({why})"
            )
    concepts = [c.path for c in bundle]
    for folder in sorted((d for d in bundle.indexes if d != "/"), key=len):
        if concepts and all(path.startswith(folder + "/") for path in concepts):
            beside = [path for path in outside if not path.startswith(folder + "/")]
            if beside or rootless:
                said = (
                    f"{len(beside)} files that are no concept are not"
                    if beside
                    else "this folder has no index.md"
                )
                return (
                    f"all {len(concepts)} concepts are under {folder}/, which has its own "
                    f"index.md, and {said}: the bundle is probably {folder}/ (load that "
                    "folder), not this one"
                )
            break
    return None


def absent_folder(
    bundle: Bundle,
    broken: Sequence[Link],
    roots: tuple[str, int, int] | None = None,
    kind: str = "absolute",
) -> str | None:
    """A note when 5 or more broken absolute links, most of them, lead into one top-level
    folder the bundle does not have (m3e-okf's 47 links into ``/implementations/``, which
    sits beside its bundle in the repository): one cause, said once, with what to do.
    okfx does not look outside the bundle root to see whether the folder is there.
    ``broken``: the bundle's broken absolute links (:func:`_broken_absolute`); ``roots``:
    where some of them resolve (:func:`link_roots`): when the folder is there below one
    of the bundle's folders (pydantic-ai-book's ``/docs/`` is ``/pages/docs/``), the note
    says so rather than that it is missing (validate QA: 783 of 2,427 links resolved
    there, under the third :func:`site_root` asks for). ``kind`` names the links in the
    note: ``relative`` for the broken relative links (CI QA: 171 of jacksonw111's 211
    broken links were ``./tags/x`` from one page into a missing ``/tags/``, and no note)."""
    if any(w.code == "repository_root_links" for w in bundle.warnings):
        return None  # the links name the bundle's own path above it: that warning says so
    folders: dict[str, int] = {}
    for link in broken:
        top = link.target.split("/")[1] if link.target.count("/") > 1 else ""
        if top and "/" + top not in bundle.directories:
            folders[top] = folders.get(top, 0) + 1
    if not folders:
        return None
    top, n = _most(folders)
    if n < 5 or n * 2 < len(broken):
        return None
    if roots is not None and f"{roots[0]}/{top}" in bundle.directories and roots[1] >= 3:
        best, resolved, _ = roots
        return (
            f"{n} of the {len(broken)} broken {kind} links lead into /{top}/, which is "
            f"{best}/{top}/ in this bundle: {resolved} of them resolve when read from "
            f"{best}/, the site root they were written from; spec §6.1 reads /x from the "
            f"bundle root: write them with {best} in front, or relative"
        )
    return (
        f"{n} of the {len(broken)} broken {kind} links lead into /{top}/, a folder this bundle "
        f"does not have: if it lies beside the bundle, outside its root, link it by full URL, "
        f"or bring it in"
    )


def site_root(roots: tuple[str, int, int] | None) -> str | None:
    """A note when a third or more of the broken absolute links (at least 3) resolve read
    from one folder of the bundle: written from a site's root, as a docs converter keeps
    them (bun-book's ``/docs/x`` for ``/pages/docs/x.md``)."""
    if roots is None:
        return None
    best, n, absolute = roots
    if n < 3 or n * 3 < absolute:
        return None
    return (
        f"{n} of the {absolute} broken absolute links resolve when read from {best}/: they "
        f"are written from that folder's root (as a site serves it), but spec §6.1 reads /x "
        f"from the bundle root: write them with {best} in front, or relative"
    )


#: Fragments that name a place in any document: the page's top (HTML's "top").
_ANYWHERE = frozenset({"", "top"})


def _anchor_message(href: str, target: str, key: str, anchors: frozenset[str], line: int) -> str:
    shown = href.strip()[:200]
    where = "this document" if not shown.split("#", 1)[0].strip("<") else target
    near = closest_anchor(key, anchors)
    hint = f"; did you mean '#{near}'?" if near else ""
    return with_line(f"link {shown!r}: {where} has no heading or anchor {key!r}{hint}", line)


def broken_anchors(bundle: Bundle) -> tuple[list[Problem], int]:
    """``broken_anchor`` warnings: markdown links whose ``#fragment`` names no heading
    (GitHub's id, :mod:`okfx.bundle.anchors`) nor explicit anchor of their target, and
    how many there are (the list stops at ``Limits.max_warnings``). Looked at: the links of
    concepts, index and log files to an existing ``.md`` document, in the body and in
    frontmatter paths (``sources[].resource: /references/x.md#section``), and
    ``#fragment`` links within a concept. Each target's anchors are read once, only when linked to
    with a fragment."""
    bodies: dict[str, str | None] = {}
    headings: dict[str, frozenset[str]] = {}
    others: dict[str, frozenset[str]] = {}

    def names(path: str, key: str) -> frozenset[str] | None:
        """None when ``key`` names a place of ``path`` (or okfx has no text for it), else
        every anchor of ``path``: its headings first, the others only when they miss."""
        if path not in bodies:
            document = bundle.get(path)  # None: a .md file that is no document okfx keeps
            bodies[path] = None if document is None else document.body
        body = bodies[path]
        if body is None:
            return None
        found = headings.get(path)
        if found is None:
            found = headings[path] = heading_anchors(body)
        if key in found:
            return None
        extra = others.get(path)
        if extra is None:
            extra = others[path] = other_anchors(body)
        return None if key in extra else found | extra

    cap = bundle.limits.max_warnings
    problems: list[Problem] = []
    count = 0

    def check(source: str, href: str, target: str, line: int) -> None:
        nonlocal count
        key = fragment_key(href.strip().strip("<>").partition("#")[2])
        if key in _ANYWHERE:
            return
        known = names(target, key)
        if known is None:
            return
        count += 1
        if kept_past("broken_anchor", len(problems), cap):
            message = _anchor_message(href, target, key, known, line)
            problems.append(Problem(source, "broken_anchor", message))

    documents = [*bundle, *bundle.indexes.values(), *bundle.logs.values()]
    for document in documents:
        for link in document.links:
            if link.exists and "#" in link.href and link.target.endswith(".md"):
                check(link.source, link.href, link.target, link.line)
    for concept in bundle:
        body = concept.body
        if "#" not in body or ("(#" not in body and "(<#" not in body and ": #" not in body):
            continue
        raw, _ = scan_markdown(body, bundle.limits.max_links_per_concept)
        line, counted = concept.body_line, 0
        for href, _, offset in raw:
            if href.lstrip().lstrip("<").startswith("#"):
                line += body.count("\n", counted, offset)
                counted = offset
                check(concept.path, href, concept.path, line)
    return problems, count


def reported(bundle: Bundle, extra: Sequence[Problem] = ()) -> tuple[list[Problem], dict[str, int]]:
    """The problems ``okfx validate`` reports, and their exact counts by code: the load's,
    plus ``no_concepts``, ``broken_anchor``, ``broken_image`` and the file-name checks,
    which only the check looks for (the viewer shows the same), plus ``extra`` (problems
    a higher layer found: the computations'), each problem written several times over
    said once (:func:`without_repeats`)."""
    problems = list(bundle.warnings)
    counts = bundle.problem_counts()
    for problem in extra:
        problems.append(problem)
        counts[problem.code] = counts.get(problem.code, 0) + 1
    if len(bundle) == 0 and not any(code in ERROR_CODES for code in counts):
        # Nothing else fails the check (an empty folder, only index.md and log.md): a
        # wrong path in a CI job must not pass it.
        problems.append(Problem("/", "no_concepts", f"no concepts: {why_empty(bundle)}"))
        counts["no_concepts"] = 1
    anchor_problems, anchor_count = broken_anchors(bundle)
    if anchor_count:
        problems += anchor_problems
        counts["broken_anchor"] = anchor_count
    image_problems, image_count = broken_images(bundle)
    if image_count:
        problems += image_problems
        counts["broken_image"] = image_count
    collisions = case_collisions(bundle.files)
    if collisions:
        problems += collisions
        counts["case_collision"] = len(collisions)
    unread = md_in_other_case(bundle.files)
    if unread:
        problems += unread
        counts["md_case"] = len(unread)
    named = reserved_in_other_case(bundle.files)
    if named:
        problems += named
        counts["reserved_case"] = len(named)
    return without_repeats(problems, counts)


def reserved_in_other_case(files: Iterable[str]) -> list[Problem]:
    """A ``reserved_case`` for each file named ``index.md`` or ``log.md`` in other
    letters (``Index.md``, ``LOG.md``): okfx reads it as any other file (a concept, when
    typed), but on macOS and Windows it is the folder's reserved file, which §3.1 keeps
    from being a concept (validate QA: read as concepts without a word)."""
    found = []
    for path in sorted(files):
        folder, _, name = path.rpartition("/")
        if name.casefold() in ("index.md", "log.md") and name not in ("index.md", "log.md"):
            reserved = name.casefold()
            found.append(
                Problem(
                    path,
                    "reserved_case",
                    f"{name} differs from the reserved name {reserved} only in letter case "
                    f"(spec §3.1): on macOS and Windows it is {folder or ''}/{reserved}, which "
                    f"is never a concept; rename it (for example {folder}/overview.md)"
                    if reserved == "index.md"
                    else f"{name} differs from the reserved name {reserved} only in letter "
                    f"case (spec §3.1): on macOS and Windows it is {folder or ''}/{reserved}, "
                    f"the folder's update log; name it {folder}/{reserved} if it is one, else "
                    f"rename it (for example {folder}/changes.md)",
                )
            )
    return found


def without_repeats(
    problems: list[Problem], counts: dict[str, int]
) -> tuple[list[Problem], dict[str, int]]:
    """The problems with each one written several times over (the same file, code and
    message: four links on one line to one missing page) said once, with how many times,
    and the counts lowered to match (validate QA: byte-identical lines looked like a bug
    and stacked as identical annotations in GitHub)."""
    seen = Counter(problems)
    if len(seen) == len(problems):
        return problems, counts
    counts = dict(counts)
    kept: list[Problem] = []
    for problem in problems:
        n = seen.pop(problem, 0)
        if not n:
            continue
        if n > 1:
            counts[problem.code] = counts.get(problem.code, n) - (n - 1)
            problem = problem._replace(message=before_line(problem.message, f", {n} times"))
        kept.append(problem)
    return kept, counts


def md_in_other_case(files: Iterable[str]) -> list[Problem]:
    """An ``md_case`` for each file whose extension is ``.md`` in other letters (``B.MD``,
    ``c.Md``): a markdown file to macOS, Windows and most editors, which okfx (reading
    ``.md`` files, as the spec names them) never reads as a concept. Spec QA: such files
    were skipped without a word."""
    return [
        Problem(
            path,
            "md_case",
            f"{path} ends in {path[-3:]!r}, not '.md': okfx reads only .md files as concepts, "
            f"so it is not read; rename it {path[:-3]}.md",
        )
        for path in sorted(files)
        if path[-3:].lower() == ".md" and path[-3:] != ".md"
    ]


def case_collisions(files: Iterable[str]) -> list[Problem]:
    """A ``case_collision`` for each file whose path differs from another's only in
    letter case (``/guide.md``, ``/Guide.md``), named beside the first of them in order:
    a checkout on a case-insensitive file system (macOS, Windows) keeps one, so a link
    resolves, or a concept exists, on one machine and not another (author QA)."""
    first: dict[str, str] = {}
    found: list[Problem] = []
    for path in sorted(files):
        key = path.casefold()
        if key in first:
            found.append(
                Problem(
                    path,
                    "case_collision",
                    f"{path} and {first[key]} differ only in letter case: a macOS or Windows "
                    "checkout holds only one of them. Rename one, or merge them",
                )
            )
        else:
            first[key] = path
    return found


#: The OKF versions okfx reads as they are specified (v0.1 through its §13 migration).
_READ_VERSIONS = ("0.1", "0.2")


def unmatched_exclude_note(bundle: Bundle) -> str | None:
    """A note naming each ``--exclude`` pattern that matched no file of the bundle, with
    the fix when the pattern names the bundle's own folder or starts ``./`` (CI QA: the
    path a CI log shows, ``kb/templates/``, copied as a pattern excluded nothing, and
    nothing said so; patterns are read from the bundle root)."""
    if not bundle.exclude:
        return None
    files = bundle.files
    missed = [p for p in bundle.exclude if p.strip() and not any(matches(f, [p]) for f in files)]
    if not missed:
        return None
    name = bundle.root.name
    said = []
    for pattern in missed[:5]:
        text = pattern.strip()
        fixed = text[2:] if text.startswith("./") else None
        if text.lstrip("/").startswith(name + "/"):
            fixed = text.lstrip("/")[len(name) + 1 :]
        if fixed and any(matches(f, [fixed]) for f in files):
            said.append(f"--exclude {text} (write --exclude {fixed})")
        else:
            said.append(f"--exclude {text}")
    more = f" and {len(missed) - 5} more" if len(missed) > 5 else ""
    return (
        f"{', '.join(said)}{more} matched no file: patterns are read from the bundle root "
        f"({name}/), a name alone at any depth (templates/)"
    )


def version_note(declared: str | None) -> str | None:
    """What to say of a declared ``okf_version`` okfx does not read as specified: one newer
    than v0.2 or no ``<major>.<minor>`` at all. §12 asks for best-effort consumption, so it
    is a note (the check could not look at what that version adds), never a problem."""
    if declared is None or declared in _READ_VERSIONS:
        return None
    major, dot, minor = declared.partition(".")
    if dot and major.isdigit() and minor.isdigit():
        if (int(major), int(minor)) < (0, 2):
            return None  # an older 0.x: read as v0.1/v0.2 (okfx reads both)
        what = (
            "a major version, which may rename or retire fields"
            if int(major) > 0
            else "a newer minor version, whose additions are optional fields"
        )
        return (
            f"the bundle declares okf_version {declared}, {what}; okfx reads OKF 0.2 and read "
            "it best-effort (§12): fields that version adds are kept, not checked"
        )
    return (
        f"the bundle declares okf_version {declared[:40]!r}, which is no <major>.<minor> "
        'version (§12); it was read as OKF 0.2: write it as okf_version: "0.2"'
    )


#: Broken links whose likely target a report looks up (about 0.5 ms each); the rest of a
#: flood are reported plainly.
MEANT_LOOKUPS = 2_000


def _with_meant(bundle: Bundle, problem: Problem) -> Problem:
    """A ``broken_link`` problem naming the page its link most likely meant, before its
    line (``...; did you mean /a/b.md? (line 35)``), as ``get_neighbors`` and the viewer
    do (validate QA: a typo or a file's case, the commonest broken link in CI, left the
    author to find the target by hand)."""
    path = meant_by(bundle, problem)
    if path is None or f"did you mean {path}?" in problem.message:
        return problem  # none, or said already (a folder's index.md: validate QA)
    return problem._replace(message=before_line(problem.message, f"; did you mean {path}?"))


def before_line(message: str, text: str) -> str:
    """``message`` with ``text`` added before the ``(line N)`` it ends with, or at its
    end when it ends with none (where :func:`problem_line` still finds the line)."""
    head, said, line = message.rpartition(" (line ")
    if said and line[:-1].isdigit() and line.endswith(")"):
        return f"{head}{text}{said}{line}"
    return f"{message}{text}"


def report_notes(
    bundle: Bundle,
    problems: list[Problem],
    counts: Mapping[str, int],
    now: datetime | None = None,
) -> tuple[str, ...]:
    """The notes of ``okfx validate`` on ``bundle``, whose problems and counts are
    ``problems`` and ``counts`` (:func:`reported`): one cause said once, with what to do
    (unchecked wikilinks, the version, where the bundle really is, a folder to exclude,
    logs and versions written off the spec; with ``now``, its upkeep). The viewer's
    Problems page shows them too (viewer QA: only the CLI had said them)."""
    wikis = unchecked_wikilinks(bundle)
    notes: tuple[str, ...] = (
        (
            f"{wikis} {'file holds' if wikis == 1 else 'files hold'} [[wikilinks]], not checked: "
            "pass --wikilinks to follow them (an okfx extension; the spec links with markdown "
            "links only)",
        )
        if wikis
        else ()
    )
    version = version_note(bundle.okf_version)
    if version is not None:
        notes += (version,)
    broken = _broken_absolute(bundle)  # gathered once for the notes below
    roots = link_roots(bundle, broken)
    inner = inner_root(bundle, problems, roots)
    if inner is not None:
        notes += (inner,)
    elif (site := site_root(roots)) is not None:
        notes += (site,)
    elif (absent := absent_folder(bundle, broken, roots)) is not None:
        notes += (absent,)
    elif (absent := absent_folder(bundle, _broken_relative(bundle), kind="relative")) is not None:
        notes += (absent,)
    codes: dict[str, set[str]] = {}
    for problem in problems:
        codes.setdefault(problem.path, set()).add(problem.code)
    # A repository root holding its bundle deeper is said by the notes on that bundle.
    bare = None if inner or _inner_bundles(bundle) else no_frontmatter_note(bundle, counts)
    cluster = clustered(problems)
    if bare is not None:
        notes += (bare,)  # no bundle at all: excluding most of it is no advice
    elif inner is None and cluster is not None:
        notes += (_cluster_note(*cluster, bundle),)
    notes += tuple(
        note
        for note in (
            undated_log_note(bundle, codes),
            version_in_concepts_note(bundle),
            hidden_note(bundle, frozenset(_hidden_bundles(bundle))),
            unmatched_exclude_note(bundle),
        )
        if note is not None
    )
    if now is not None:
        notes += upkeep_notes(bundle, now)
    return notes


def validate(
    bundle: Bundle, extra: Sequence[Problem] = (), now: datetime | None = None
) -> ConformanceReport:
    """Classify the bundle's problems into §11 errors and warnings, with exact counts;
    ``extra`` are more problems to report (:func:`okfx.attest.lint.validate` adds the
    computations' that way). With ``now``, the notes also name the concepts stale at
    ``now`` and the links to deprecated concepts (:mod:`okfx.bundle.upkeep`)."""
    problems, counts = reported(bundle, extra)
    looked_up = [p for p in problems if p.code == "broken_link"][:MEANT_LOOKUPS]
    named = {p: _with_meant(bundle, p) for p in looked_up}
    ordered = sorted((named.get(p, p) for p in problems), key=reading_order)
    notes = report_notes(bundle, problems, counts, now)
    if bundle.origin is not None:  # fetched: advice names the source, not the cache path
        root, source = str(bundle.root), bundle.source
        ordered = [p._replace(message=in_source_terms(p.message, root, source)) for p in ordered]
        notes = tuple(in_source_terms(note, root, source) for note in notes)
    return ConformanceReport(
        bundle=bundle.name,
        root=str(bundle.root),
        okf_version=bundle.okf_version,
        concepts=len(bundle),
        errors=tuple(p for p in ordered if p.code in ERROR_CODES),
        warnings=tuple(p for p in ordered if p.code not in ERROR_CODES),
        by_code=counts,
        excluded=bundle.excluded,
        notes=notes,
        source=bundle.origin,
    )
