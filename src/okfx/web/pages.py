"""What each page shows: the template context of every page, from the tools and views.

Pages read through the :class:`~okfx.tools.toolbox.Toolbox` where a tool answers the
question (search, grep, neighbours, attached files) and through the same building
blocks as the tools otherwise (the filter predicate and facets of ``list_concepts``,
the payload builders of ``read_concept``), so a person sees what an agent would get.
A request that cannot be answered raises :class:`PageError` with an HTTP status.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import re2
from markupsafe import Markup

from okfx.bundle.bundle import Bundle
from okfx.bundle.paths import normalize, parent_dir
from okfx.errors import InvalidArgument, NotFound, OKFError, UnsafePath
from okfx.model import Concept, IndexFile, LogFile
from okfx.search.filters import TRUST_TIERS, ConceptFilter, normalize_directory
from okfx.tools.payloads import concept_header, concept_row
from okfx.tools.toolbox import Toolbox
from okfx.web import urls
from okfx.web.graph import WHOLE_LIMIT, Graph, neighbourhood, whole
from okfx.web.markdown import render, url_kind
from okfx.web.site import BundleView, raster_type, view_of

__all__ = ["PER_PAGE", "PageError", "Site"]

PER_PAGE = 50
#: The most rows of one kind a page lists (subfolders, links of each kind, log entries);
#: the page says how many more there are, so a hub or a huge folder stays a page.
MAX_LISTED = 300
PROBLEMS_SHOWN = 20  # per code on the summary; a code's own page shows PER_PAGE * 4
STALE_CHOICES = ("", "exclude", "only")


class PageError(Exception):
    """A request the viewer cannot answer: the HTTP status and a sentence for a person."""

    def __init__(self, status: int, message: str, suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.suggestions = suggestions or []


def _error(exc: OKFError) -> PageError:
    status = 404 if isinstance(exc, NotFound) else 400
    return PageError(status, exc.message, getattr(exc, "suggestions", None))


def _int(value: str | None, default: int, lo: int, hi: int) -> int:
    try:
        return min(max(int(value or default), lo), hi)
    except ValueError:
        return default


def _check(payload: dict[str, Any]) -> dict[str, Any]:
    """A tool payload, or the PageError its error result calls for."""
    err = payload.get("error")
    if err:
        status = 404 if err.get("code") == "not_found" else 400
        raise PageError(status, str(err.get("message")), list(err.get("did_you_mean") or []))
    return payload


def marked(text: str, terms: list[str]) -> list[tuple[str, bool]]:
    """``text`` cut into ``(piece, is_match)`` where a word starts with a matched term."""
    words = sorted({t for t in terms if t}, key=len, reverse=True)
    if not words:
        return [(text, False)]
    return _pieces(text, re.compile(r"(?i)\b(?:" + "|".join(map(re.escape, words)) + r")\w*"))


class Site:
    """The loaded bundles as the pages see them."""

    def __init__(self, box: Toolbox) -> None:
        self.box = box

    def now(self) -> datetime:
        return self.box.now()

    def bundles(self) -> list[Bundle]:
        return list(self.box.manager.bundles.values())

    def bundle(self, name: str) -> BundleView:
        try:
            return view_of(self.box.manager.bundle(name))
        except NotFound as exc:
            raise _error(exc) from None

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
                    "problems": [(code, len(items)) for code, items in view.problems],
                    "generated": [
                        (c, c.generated.at) for c in view.recent_generated if c.generated
                    ],
                    "verified": [(c, c.last_verified) for c in view.recent_verified],
                    "has_log": bool(view.bundle.logs),
                }
            )
        return {"cards": cards, "title": only or "Overview"}

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
            "deprecated": bool(params.get("deprecated")) or status == "deprecated",
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
            raise _error(exc) from None
        page = _int(params.get("page"), 1, 1, 10**9)
        chosen = b.facets().select(b.name, spec, (page - 1) * PER_PAGE, PER_PAGE)
        pages = max((chosen.total + PER_PAGE - 1) // PER_PAGE, 1)
        rows = [concept_row(b.name, c, c.is_stale(spec.now)) for c in chosen.concepts]
        for row in rows:
            row["url"] = urls.concept(b.name, row["path"])
        current = (folder or "/").rstrip("/") or "/"
        crumbs = []
        walk = current
        while walk != "/":
            crumbs.append(walk)
            walk = parent_dir(walk)
        counts = view.counts

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
                for kid, n in view.subfolders(current)[:MAX_LISTED]
            ],
            "more_folders": max(len(view.subfolders(current)) - MAX_LISTED, 0),
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
            "types": _options(view.ranked["type"], [args["type"]]),
            "tags": _options(view.ranked["tag"], tags),
            "tiers": TRUST_TIERS,
            "statuses": sorted(counts["status"]),
            "stale_choices": STALE_CHOICES,
            "clear": urls.browse(b.name, dir=args["dir"]),
        }

    # -- one document --------------------------------------------------------------------
    def document(self, name: str, path: str) -> dict[str, Any]:
        view = self.bundle(name)
        b = view.bundle
        try:
            doc = b.get(path)
        except UnsafePath as exc:
            raise _error(exc) from None
        if doc is None:
            canon = normalize(path)
            if canon in b.files:  # an attached file: its own page
                raise Redirect(urls.file(b.name, canon))
            raise PageError(404, f"no concept at {canon} in bundle {b.name!r}", b.suggest(canon))
        body = render(doc.body, view.rewrite(doc.directory))
        context: dict[str, Any] = {
            "bundle": b.name,
            "path": doc.path,
            "body": Markup(body.html),
            "outline": body.outline,
            "cut": body.cut,
            "raw": urls.raw(b.name, doc.path),
            "graph": urls.graph(b.name, doc.path),
            "folder": (
                doc.directory,
                urls.browse(b.name, dir=None if doc.directory == "/" else doc.directory),
            ),
            "neighbors": self._neighbors(view, doc.path),
        }
        if isinstance(doc, Concept):
            context.update(self._concept(view, doc))
        else:
            kind = "index" if isinstance(doc, IndexFile) else "log"
            context.update({"kind": kind, "title": f"{doc.path} ({kind})"})
            if isinstance(doc, LogFile):
                context["log"] = urls.log(b.name)
        return context

    def _concept(self, view: BundleView, c: Concept) -> dict[str, Any]:
        b = view.bundle
        now = self.now()
        header = concept_header(b.name, c, c.is_stale(now))
        fields = {link.field: link.target for link in c.links if link.field != "body"}

        def where(value: str | None, field: str) -> str | None:
            if not value:
                return None
            if url_kind(value) == "external":
                return value
            target = fields.get(field)
            return view.url_of(target) if target else None

        sources = header["sources"]
        for i, source in enumerate(sources):
            source["url"] = where(source.get("resource"), f"sources[{i}].resource")
        contract = header["computation"]
        if contract is not None:
            contract["url"] = where(contract["computation"], "computation")
            contract["executor"]["url"] = where(
                contract["executor"]["resource"], "executor.resource"
            )
            contract["attester"]["url"] = where(
                contract["attester"]["resource"], "attester.resource"
            )
            contract["language"] = c.computation.inline_language if c.computation else None
        return {
            "kind": "concept",
            "title": c.title,
            "concept": header,
            "resource_url": where(c.resource, "resource"),
            "tag_urls": [(t, urls.browse(b.name, tag=t)) for t in c.tags],
            "type_url": urls.browse(b.name, type=c.type),
            "extra": {k: v for k, v in header["frontmatter"].items() if k not in _SHOWN_KEYS},
        }

    def _neighbors(self, view: BundleView, path: str) -> dict[str, Any]:
        payload = _check(self.box.get_neighbors(path=path, bundle=view.name))
        for key in ("outbound", "backlinks", "unresolved"):
            edges = payload[key]
            payload[f"{key}_count"] = len(edges)
            payload[key] = edges = edges[:MAX_LISTED]
            for edge in edges:
                edge["url"] = view.url_of(edge["path"]) if key != "unresolved" else None
        return payload

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
                raise _error(exc) from None
            level = _int(depth, 1, 1, 2)
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
            "limit": WHOLE_LIMIT,
            "concepts": len(b),
            "depth_urls": [(d, urls.graph(b.name, doc.path, d)) for d in (1, 2)] if doc else [],
            "whole_url": urls.graph(b.name),
            "page_url": urls.concept(b.name, doc.path) if doc is not None else None,
        }

    # -- search and grep -----------------------------------------------------------------
    def _filters(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "bundle": params.get("bundle") or None,
            "type": params.get("type") or None,
            "tags": [t for t in params.get("tag", []) if t] or None,
            "directory": params.get("dir") or None,
            "include_deprecated": bool(params.get("deprecated")),
        }

    def _placed(self, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Search hits or grep matches, each with the ``url`` of its page."""
        for item in found:
            item["url"] = view_of(self.box.manager.bundle(item["bundle"])).url_of(item["path"])
        return found

    def search(self, params: Mapping[str, Any]) -> dict[str, Any]:
        query = (params.get("q") or "").strip()
        filters = self._filters(params)
        tier = params.get("tier") or None
        stale = params.get("stale") != "exclude"
        context: dict[str, Any] = {
            "title": f"Search: {query}" if query else "Search",
            "q": query,
            "params": {**filters, "tier": tier, "stale": "" if stale else "exclude"},
            "hits": [],
            "bundles": [b.name for b in self.bundles()],
        }
        if not query:
            return context
        payload = _check(
            self.box.search_concepts(
                query=query,
                limit=_int(params.get("limit"), 20, 1, 50),
                trust_tier=tier,
                include_stale=stale,
                **filters,
            )
        )
        for hit in self._placed(payload["hits"]):
            hit["pieces"] = marked(hit["snippet"], hit["matched"])
        context.update({"hits": payload["hits"], "notice": payload.get("notice", "")})
        return context

    def grep(self, params: Mapping[str, Any]) -> dict[str, Any]:
        pattern = params.get("pattern") or ""
        regex = bool(params.get("regex"))
        ignore_case = bool(params.get("i"))
        filters = self._filters(params)
        context: dict[str, Any] = {
            "title": f"Grep: {pattern}" if pattern else "Grep",
            "pattern": pattern,
            "regex": regex,
            "ignore_case": ignore_case,
            "params": filters,
            "matches": [],
            "bundles": [b.name for b in self.bundles()],
        }
        if not pattern:
            return context
        payload = _check(
            self.box.grep_concepts(
                pattern=pattern, regex=regex, ignore_case=ignore_case, limit=200, **filters
            )
        )
        finder = _finder(pattern, regex, ignore_case)
        for match in self._placed(payload["matches"]):
            match["pieces"] = _pieces(match["text"], finder)
        context.update(
            {"matches": payload["matches"], "notice": payload.get("notice", ""),
             "concepts": payload.get("concepts", 0)}
        )  # fmt: skip
        return context

    # -- problems and log ----------------------------------------------------------------
    def problems(self, name: str, params: Mapping[str, Any]) -> dict[str, Any]:
        code, page = params.get("code") or None, params.get("page")
        view = self.bundle(name)
        groups = view.problems
        at = _int(page, 1, 1, 10**9)
        shown = []
        for group_code, items in groups:
            if code and group_code != code:
                continue
            size = PER_PAGE * 4 if code else PROBLEMS_SHOWN
            first = (at - 1) * size if code else 0
            chunk = items[first : first + size]
            shown.append(
                {
                    "code": group_code,
                    "count": len(items),
                    "problems": [(p, view.url_of(p.path)) for p in chunk],
                    "more": len(items) - first - len(chunk),
                    "all": urls.problems(view.name, group_code),
                    "next": urls.problems(view.name, group_code, at + 1)
                    if code and first + size < len(items)
                    else None,
                }
            )
        return {
            "title": f"Problems in {view.name}",
            "bundle": view.name,
            "groups": shown,
            "codes": [(c, len(items), urls.problems(view.name, c)) for c, items in groups],
            "total": len(view.bundle.warnings),
            "code": code,
        }

    def log(self, name: str) -> dict[str, Any]:
        view = self.bundle(name)
        logs = []
        for folder, log in sorted(view.bundle.logs.items()):
            rewrite = view.rewrite(folder)
            entries = [
                {
                    "date": entry.date,
                    "heading": entry.heading,
                    "text": Markup(render(entry.text, rewrite).html),
                }
                for entry in log.entries[:MAX_LISTED]
            ]
            logs.append(
                {"path": log.path, "title": log.title, "entries": entries,
                 "more": max(len(log.entries) - MAX_LISTED, 0),
                 "url": urls.concept(view.name, log.path)}
            )  # fmt: skip
        return {"title": f"Log of {view.name}", "bundle": view.name, "logs": logs}

    # -- attached files ------------------------------------------------------------------
    def file(self, name: str, path: str) -> dict[str, Any]:
        view = self.bundle(name)
        b = view.bundle
        try:
            canon = normalize(path)
        except UnsafePath as exc:
            raise _error(exc) from None
        if isinstance(b.get(canon), Concept | IndexFile | LogFile) and canon in b.files:
            raise Redirect(urls.concept(b.name, canon))
        context: dict[str, Any] = {
            "title": canon,
            "bundle": b.name,
            "path": canon,
            "raw": urls.raw(b.name, canon),
            "image": bool(raster_type(canon)) and canon in b.files,
            "folder": (parent_dir(canon), urls.browse(b.name, dir=parent_dir(canon))),
            "backlinks": [(src, urls.concept(b.name, src)) for src in view.linking_to_file(canon)],
        }
        if context["image"]:
            return context
        payload = self.box.read_resource(path=canon, bundle=b.name)
        err = payload.get("error")
        if err and err.get("code") == "not_found":
            raise PageError(404, str(err["message"]), list(err.get("did_you_mean") or []))
        context.update(
            {"text": payload.get("text"), "truncated": payload.get("truncated"),
             "bytes": payload.get("bytes"), "error": err and err.get("message")}
        )  # fmt: skip
        return context


class Redirect(Exception):  # noqa: N818 - a control-flow signal, not an error
    """The answer is another page (``url``)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


def _options(ranked: list[tuple[str, int]], chosen: list[str | None]) -> list[tuple[str, int]]:
    """The most common values (for a drop-down), plus any chosen one that is not among them."""
    shown = ranked[:60]
    names = {name for name, _ in shown}
    return shown + [(value, 0) for value in chosen if value and value not in names]


_SHOWN_KEYS = frozenset(
    {
        "type", "title", "description", "resource", "tags", "status", "stale_after",
        "sources", "usage_window", "generated", "verified", "timestamp", "id", "runtime",
        "parameters", "computation", "executor", "attester",
    }
)  # fmt: skip


def _finder(pattern: str, regex: bool, ignore_case: bool) -> Any:
    text = pattern if regex else re.escape(pattern)
    try:
        return re2.compile(("(?i)" if ignore_case else "") + text)
    except Exception:  # the tool reported it already
        return None


def _pieces(text: str, finder: Any) -> list[tuple[str, bool]]:
    if finder is None:
        return [(text, False)]
    out: list[tuple[str, bool]] = []
    at = 0
    for match in finder.finditer(text):
        if match.end() == match.start():
            continue
        out.append((text[at : match.start()], False))
        out.append((match.group(), True))
        at = match.end()
    out.append((text[at:], False))
    return [piece for piece in out if piece[0]]
