"""What each page shows: the template context of every page, from the tools and views.

Pages read through the :class:`~okfx.tools.toolbox.Toolbox` where a tool answers the
question (search, grep, neighbours, attached files) and through the same building
blocks as the tools otherwise (the filter predicate and facets of ``list_concepts``,
the payload builders of ``read_concept``), so a person sees what an agent would get.
A request that cannot be answered raises :class:`~okfx.web.answers.PageError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from markupsafe import Markup

from okfx.bundle.bundle import Bundle
from okfx.bundle.links import lines_outside_code
from okfx.bundle.meant import meant_by
from okfx.bundle.paths import parent_dir
from okfx.bundle.problems import unsaid_line
from okfx.bundle.reserved import (
    HEADING_LINES,
    heading_rest,
    heading_text,
    heading_time,
    page_heading,
)
from okfx.errors import InvalidArgument, NotFound, UnsafePath
from okfx.search.filters import TRUST_TIERS, ConceptFilter, normalize_directory
from okfx.search.suggest import closest
from okfx.tools.payloads import concept_row, generated_on
from okfx.tools.toolbox import Toolbox
from okfx.web import document, finding, urls
from okfx.web.answers import MAX_LISTED, PageError, flag_arg, int_arg, page_error
from okfx.web.graph import WHOLE_LIMIT, Graph, neighbourhood, whole
from okfx.web.markdown import render
from okfx.web.site import BundleView, view_of

__all__ = ["PER_PAGE", "Site"]

PER_PAGE = 50
PROBLEMS_SHOWN = 20  # per code on the summary; a code's own page shows PER_PAGE * 4
STALE_CHOICES = ("", "exclude", "only")


class Site:
    """The loaded bundles as the pages see them."""

    def __init__(self, box: Toolbox) -> None:
        self.box = box

    def now(self) -> datetime:
        return self.box.now()

    def bundles(self) -> list[Bundle]:
        return list(self.box.manager.bundles.values())

    def unreadable(self, name: str | None) -> str | None:
        """Why the folder of bundle ``name`` cannot be read now, when it cannot (the last
        reload failed, or the folder is gone), else None: its pages then show what was
        last read, and say so (viewer QA: they looked as ever, the reason only on
        stderr)."""
        if name is None:
            return None
        manager = self.box.manager
        failed = manager.reload_failures.get(name)
        found = manager.bundles.get(name)
        if failed is not None:
            # its folder by name, not the server's path (edit QA: the banner showed the
            # absolute path, which the tools keep to the server's log)
            return (
                failed if found is None else failed.replace(str(found.root), f"{found.root.name}/")
            )
        if found is not None and not found.root.is_dir():
            return f"its folder {found.root.name}/ is gone"
        return None

    def bundle(self, name: str) -> BundleView:
        try:
            return view_of(self.box.manager.bundle(name))
        except NotFound as exc:
            raise page_error(exc) from None

    # -- overview ------------------------------------------------------------------------
    def overview(self, only: str | None = None) -> dict[str, Any]:
        now = self.now()
        chosen = [self.bundle(only)] if only else [view_of(b) for b in self.bundles()]
        cards = []
        for view in chosen:
            counts, ranked = view.counts, view.ranked
            cards.append(
                {
                    **view.summary(now),
                    "types": ranked["type"][:24],
                    "more_types": max(len(ranked["type"]) - 24, 0),
                    "statuses": ranked["status"],
                    "tiers": [(tier, counts["tier"].get(tier, 0)) for tier in TRUST_TIERS],
                    "tags": ranked["tag"][:24],
                    "problems": [(g.code, g.count, g.severity) for g in view.problems],
                    "generated": [
                        (c, generated_on(c)) for c in view.recent_generated if c.generated
                    ],
                    "verified": [(c, c.last_verified) for c in view.recent_verified],
                    "has_log": bool(view.bundle.logs),
                    # The author's own way in, first (viewer QA: the root index, "Start
                    # here", was reachable only from Browse's sidebar).
                    "start": _start(view.bundle),
                    # Why a bundle holds nothing, said where a person looks first (viewer
                    # QA: a repository root showed an empty dashboard, its fix on Problems)
                    "empty": view.empty,
                }
            )
        # A bundle's own home is that bundle's page: its links in the top bar.
        if only:
            return {"cards": cards, "title": only, "bundle": only, "home": True}
        return {"cards": cards, "title": "Overview"}

    # -- browse --------------------------------------------------------------------------
    def browse(self, name: str, params: Mapping[str, Any]) -> dict[str, Any]:
        view = self.bundle(name)
        b = view.bundle
        tags = [t for t in params.get("tag", []) if t]
        stale = params.get("stale") or ""
        status = params.get("status") or None
        args: dict[str, Any] = {
            "dir": params.get("dir") or None,
            "type": params.get("type") or None,
            "tag": tags,
            "tier": params.get("tier") or None,
            "status": status,
            "stale": stale if stale in STALE_CHOICES else "",
            "deprecated": flag_arg(params.get("deprecated")) or status == "deprecated",
        }
        try:
            folder = normalize_directory(args["dir"])
            spec = ConceptFilter.create(
                directory=folder,
                type=args["type"],
                tags=tags or None,
                trust_tier=args["tier"],
                status=status,
                include_deprecated=args["deprecated"],
                include_stale=args["stale"] != "exclude",
                only_stale=args["stale"] == "only",
                now=self.now(),
            )
        except InvalidArgument as exc:
            raise page_error(exc) from None
        current = (folder or "/").rstrip("/") or "/"
        skipped = b.skipped_at(current) if current not in b.directories else None
        if skipped is not None:
            raise PageError(404, f"okfx does not read the folder {current}/ ({skipped})")
        if current not in b.directories:  # a mistyped link: no empty listing of nothing
            near = [f"{d}/" for d in closest(current, sorted(b.directories - {"/"}), 5)]
            raise PageError(404, f"no folder {current}/ in bundle {b.name!r}", near)
        page = int_arg(params.get("page"), 1, 1, 10**9)
        chosen = b.facets().select(b.name, spec, (page - 1) * PER_PAGE, PER_PAGE)
        pages = max((chosen.total + PER_PAGE - 1) // PER_PAGE, 1)
        if page > pages:  # past the end (an old link, a hand-made URL): the last page
            page = pages
            chosen = b.facets().select(b.name, spec, (page - 1) * PER_PAGE, PER_PAGE)
        rows = [concept_row(b.name, c, c.is_stale(spec.now)) for c in chosen.concepts]
        for row in rows:
            row["url"] = urls.concept(b.name, row["path"])
        crumbs = []
        walk = current
        while walk != "/":
            crumbs.append(walk)
            walk = parent_dir(walk)
        counts = view.counts
        subfolders = view.subfolders(current, args["deprecated"])

        def browse_url(**change: Any) -> str:
            return urls.browse(b.name, **{**args, "page": None, **change})

        return {
            "title": f"Browse {b.name}" + ("" if current == "/" else f" {current}"),
            "bundle": b.name,
            "args": args,
            "folder": current,
            "crumbs": [(c, urls.browse(b.name, dir=c)) for c in reversed(crumbs)],
            "subfolders": [
                (kid.rsplit("/", 1)[-1], n, browse_url(dir=kid))
                for kid, n in subfolders[:MAX_LISTED]
            ],
            "more_folders": max(len(subfolders) - MAX_LISTED, 0),
            # The folder's own index.md and log.md: read as pages, never listed as rows.
            "reserved": [
                (doc.path.rsplit("/", 1)[-1], urls.concept(b.name, doc.path))
                for doc in (b.indexes.get(current), b.logs.get(current))
                if doc is not None
            ],
            "files": [
                (path.rsplit("/", 1)[-1], urls.file(b.name, path))
                for path in view.other_files(current)[:MAX_LISTED]
            ],
            "more_files": max(len(view.other_files(current)) - MAX_LISTED, 0),
            "rows": rows,
            "total": chosen.total,
            "page": page,
            "pages": pages,
            "prev": browse_url(page=page - 1) if page > 1 else None,
            "next": browse_url(page=page + 1) if page < pages else None,
            "revealers": [
                (f"{n} {what} hidden", browse_url(**change))
                for key, what, change in (
                    ("deprecated", "deprecated", {"deprecated": True}),
                    ("stale", "stale", {"stale": ""}),
                )
                if (n := chosen.hidden.get(key, 0))
            ],
            "types": _options(view.ranked_in(current)["type"], [args["type"]]),
            "tags": _options(view.ranked_in(current)["tag"], tags),
            "tiers": TRUST_TIERS,
            "statuses": sorted(counts["status"]),
            "stale_choices": STALE_CHOICES,
            "clear": urls.browse(b.name, dir=args["dir"]),
        }

    # -- one document, search and grep (web.document, web.finding) ----------------------
    def document(self, name: str, path: str) -> dict[str, Any]:
        return document.document(self.bundle(name), self.box, self.now(), path)

    def file(self, name: str, path: str, params: Mapping[str, Any]) -> dict[str, Any]:
        offset = int_arg(params.get("offset"), 0, 0, 2**62)
        return document.file(self.bundle(name), self.box, path, offset)

    def search(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return finding.search(self.box, params)

    def grep(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return finding.grep(self.box, params)

    # -- graph ---------------------------------------------------------------------------
    def graph(self, name: str, params: Mapping[str, Any]) -> dict[str, Any]:
        path, depth = params.get("path"), params.get("depth")
        view = self.bundle(name)
        b = view.bundle
        drawn: Graph | None
        if path:
            try:
                doc = b.document(path)
            except (NotFound, UnsafePath) as exc:
                raise page_error(exc) from None
            level = int_arg(depth, 1, 1, 2)
            drawn = neighbourhood(view, doc.path, level, self.now())
            title = f"Graph around {getattr(doc, 'title', doc.path)}"
        else:
            level = 0
            doc = None
            drawn = whole(view, self.now())
            title = f"Graph of {b.name}"
        return {
            "title": title,
            "bundle": b.name,
            "path": doc.path if doc is not None else None,
            "depth": level,
            "graph": drawn,
            "unlinked": _unlinked(view, drawn),
            "limit": WHOLE_LIMIT,
            "concepts": len(b),
            "depth_urls": [(d, urls.graph(b.name, doc.path, d)) for d in (1, 2)] if doc else [],
            "whole_url": urls.graph(b.name),
            "page_url": urls.concept(b.name, doc.path) if doc is not None else None,
            # a whole-bundle graph of no concept says why, and where to look (viewer QA)
            "empty": view.empty if doc is None else "",
            "index_graph": (
                urls.graph(b.name, "/index.md", 1)
                if doc is None and not len(b) and "/index.md" in b.files
                else None
            ),
        }

    # -- problems and log ----------------------------------------------------------------
    def problems(self, name: str, params: Mapping[str, Any]) -> dict[str, Any]:
        code, page = params.get("code") or None, params.get("page")
        view = self.bundle(name)
        groups = view.problems
        at = int_arg(page, 1, 1, 10**9)
        shown = []
        for group in groups:
            if code and group.code != code:
                continue
            size = PER_PAGE * 4 if code else PROBLEMS_SHOWN
            if code:  # past the end: the last page
                at = min(at, max((len(group.problems) + size - 1) // size, 1))
            first = (at - 1) * size if code else 0
            chunk = group.problems[first : first + size]
            shown.append(
                {
                    "code": group.code,
                    "count": group.count,
                    "severity": group.severity,
                    "explanation": group.explanation,
                    # what most of a code's problems share, said once
                    "causes": view.missing_folders[:5] if group.code == "broken_link" else [],
                    "unlisted": group.unlisted,
                    # with the file's line where the message names it only inside
                    "problems": [
                        (p, view.url_of(p.path), unsaid_line(p), _meant_by(view, p)) for p in chunk
                    ],
                    "more": len(group.problems) - first - len(chunk),
                    "all": urls.problems(view.name, group.code),
                    "next": urls.problems(view.name, group.code, at + 1)
                    if code and first + size < len(group.problems)
                    else None,
                }
            )
        if code and not shown:  # a mistyped link: no page of nothing
            codes = ", ".join(group.code for group in groups) or "none"
            raise PageError(
                404, f"no problem with code {code!r} in bundle {view.name!r} (its codes: {codes})"
            )
        return {
            "title": f"Problems in {view.name}",
            "bundle": view.name,
            "groups": shown,
            "codes": [(g.code, g.count, urls.problems(view.name, g.code)) for g in groups],
            "total": sum(group.count for group in groups),
            "code": code,
            "notes": () if code else view.notes,
        }

    def log(self, name: str) -> dict[str, Any]:
        view = self.bundle(name)
        logs = []
        for folder, log in sorted(view.bundle.logs.items()):
            rewrite, wikilink = view.rewrite(folder), view.wikilink(folder)
            # One row a date heading: the entries under it (a change's title, its
            # paragraphs and points) read as one day's, the date shown once.
            groups: list[dict[str, Any]] = []
            sections = _day_sections(log.body)
            for entry in log.entries[:MAX_LISTED]:
                text = Markup(render(entry.text, rewrite, wikilink=wikilink).html)
                key = (entry.date, entry.heading)
                if groups and any(key) and key == (groups[-1]["date"], groups[-1]["heading"]):
                    groups[-1]["texts"].append(text)
                    continue
                groups.append(
                    {"date": entry.date, "heading": entry.heading, "texts": [text],
                     # What a heading that starts with a date says after it, and the
                     # time it gives (viewer QA: two runs of one day read the same).
                     "rest": heading_rest(entry.heading) if entry.date else "",
                     "time": heading_time(entry.heading) if entry.date else ""}
                )  # fmt: skip
                # A day's changes as written under its heading: a change's ### title,
                # its paragraph and its points (viewer QA: all one flat list).
                section = sections.get(entry.heading or "")
                if section:
                    groups[-1]["whole"] = Markup(
                        render(section.pop(0), rewrite, wikilink=wikilink).html
                    )
            said = {w.code: w.message for w in view.bundle.warnings if w.path == log.path}
            opening = _log_opening(log.body)
            logs.append(
                {"path": log.path, "title": log.title, "entries": groups,
                 # What the log says of itself before its first day (viewer QA: dropped).
                 "intro": Markup(render(opening, rewrite).html) if opening else None,
                 "more": max(len(log.entries) - MAX_LISTED, 0),
                 "url": urls.concept(view.name, log.path),
                 "not_a_log": said.get("reserved_concept"),
                 # Shown as written: a reader must not take its first row for the latest.
                 "out_of_order": "log_order" in said}
            )  # fmt: skip
        return {"title": f"Log of {view.name}", "bundle": view.name, "logs": logs}


def _day_sections(body: str) -> dict[str, list[str]]:
    """The text under each heading of a log that holds a subheading (``### Renamed the
    orders table``), by heading text, in order: a day whose changes are titled, shown as
    written. A day of points only is left to its entries."""
    found = list(lines_outside_code(body, HEADING_LINES))
    sections: dict[str, list[str]] = {}
    for at, match in enumerate(found):
        level = len(match.group(1))
        end = next((m.start() for m in found[at + 1 :] if len(m.group(1)) <= level), len(body))
        inner = [m for m in found[at + 1 :] if m.start() < end]
        if inner:
            text = body[match.end() : end].strip("\n")
            sections.setdefault(heading_text(match.group(2)), []).append(text)
    return sections


def _log_opening(body: str) -> str:
    """A log's prose between its title and its first other heading ("A running record
    of what entered the bundle..."), which no entry holds; "" when it has none. A
    list there is entries, not an opening."""
    lines = body.splitlines()
    at = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    if at < len(lines) and lines[at].startswith("# "):
        at += 1  # the title
    kept: list[str] = []
    for line in lines[at:]:
        if line.lstrip().startswith(("#", "- ", "* ", "+ ")):
            break
        kept.append(line)
    return "\n".join(kept).strip()


def _start(bundle: Bundle) -> tuple[str, str] | None:
    """The root index's page (its address and what it is headed), when the bundle has
    one."""
    index = bundle.index
    if index is None:
        return None
    return urls.concept(bundle.name, index.path), page_heading(index) or "index.md"


#: Values a filter's drop-down offers, the most common first (viewer QA: 60 left 74 of one
#: bundle's 134 tags out of reach).
OPTIONS = 200


def _options(ranked: list[tuple[str, int]], chosen: list[str | None]) -> list[tuple[str, int]]:
    """The most common values (for a drop-down), plus any chosen one that is not among
    them, with its count (viewer QA: a tag opened from an address read "(0)" beside the
    concept it lists)."""
    shown = ranked[:OPTIONS]
    names = {name for name, _ in shown}
    held = {name.casefold(): n for name, n in ranked}
    return shown + [
        (value, held.get(value.casefold(), 0)) for value in chosen if value and value not in names
    ]


def _unlinked(view: BundleView, drawn: Graph | None) -> dict[str, Any] | None:
    """Why a graph has no edge: how many links of the drawn documents point nowhere, and
    where the Problems page explains them (the ``repository_root_links`` warning when the
    bundle has it); None when it has edges."""
    if drawn is None or drawn.edges or not drawn.nodes:
        return None
    b = view.bundle
    broken = 0
    for node in drawn.nodes:
        doc = b.get(node.path)
        if doc is not None:
            broken += sum(1 for link in doc.links if not link.exists)
    codes = {group.code for group in view.problems}
    code = "repository_root_links" if "repository_root_links" in codes else "broken_link"
    return {
        "broken": broken,
        "code": code if code in codes else None,
        "url": urls.problems(b.name, code) if code in codes else None,
    }


def _meant_by(view: BundleView, problem: Any) -> tuple[str, str] | None:
    """For a ``broken_link`` problem, the page its link most likely meant and its URL, as
    the link's own page says it (viewer QA: an author fixing broken links from the
    Problems page had to open each page to learn the fix); else None."""
    path = meant_by(view.bundle, problem)
    url = view.url_of(path) if path else None
    return (path, url) if path and url else None
