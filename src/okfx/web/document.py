"""The page of one document (a concept, an ``index.md``, a ``log.md``) and of an attached
file: the body rendered inert, the header ``read_concept`` gives (badges, provenance, the
Attested Computation contract), the links ``get_neighbors`` gives, each placed in the
viewer."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from markupsafe import Markup

from okfx.bundle.fields import source_places
from okfx.bundle.links import footnote_citations
from okfx.bundle.paths import normalize, parent_dir
from okfx.bundle.problems import ERROR_CODES, unsaid_line
from okfx.bundle.reserved import page_heading
from okfx.bundle.wikilinks import scan_wikilinks
from okfx.codeblocks import prose_segments
from okfx.errors import UnsafePath
from okfx.model import Concept, IndexFile, LogFile
from okfx.search.cjk import language_of
from okfx.search.scoring import new_names
from okfx.search.snippets import without_title_heading
from okfx.tools.notices import changed_since_load, gone_since_load
from okfx.tools.payloads import concept_header
from okfx.tools.toolbox import Toolbox
from okfx.web import urls
from okfx.web.answers import MAX_LISTED, PageError, Redirect, checked, page_error
from okfx.web.markdown import render, url_kind
from okfx.web.site import BundleView, raster_type

__all__ = ["document", "file"]


#: A concept page whose body writes [[wikilinks]] that the bundle's load did not follow.
WIKILINKS_OFF = (
    "This page writes [[wikilinks]], shown as text: okfx follows them only for a bundle "
    "loaded with --wikilinks (okfx view --wikilinks ...), an okfx extension; the spec "
    "links with markdown links only."
)


def document(view: BundleView, box: Toolbox, now: datetime, path: str) -> dict[str, Any]:
    """The page of a concept, an ``index.md`` or a ``log.md``."""
    b = view.bundle
    try:
        doc = b.get(path)
    except UnsafePath as exc:
        raise page_error(exc) from None
    if doc is None:
        canon = normalize(path)
        if canon in b.files:  # an attached file: its own page
            raise Redirect(urls.file(b.name, canon))
        if canon in b.directories:  # a folder without an index.md: its listing (viewer QA)
            raise Redirect(urls.browse(b.name, dir=None if canon == "/" else canon))
        skipped = b.skipped_at(canon)
        if skipped is not None:
            raise PageError(404, f"okfx does not read {canon} ({skipped})")
        raise PageError(404, f"no concept at {canon} in bundle {b.name!r}", b.suggest(canon))
    changed = False
    if isinstance(doc, Concept):
        # One version of the file, header and body alike, as read_concept reads it (live
        # edit QA: right after a save the page had the loaded title over the new body).
        fresh = b.as_now(doc)
        if fresh is None:
            raise PageError(404, gone_since_load(doc.path, b.name, box.manager.reloads), [])
        changed, doc = fresh is not doc, fresh
    text = doc.body
    if isinstance(doc, Concept):  # its opening heading, when only the title again, is the h1
        text = cited_sources(without_title_heading(text, doc.title), doc)
    body = render(text, view.rewrite(doc.directory), wikilink=view.wikilink(doc.directory))
    context: dict[str, Any] = {
        "bundle": b.name,
        "path": doc.path,
        "body": Markup(body.html),
        # the language of a page written in Chinese, Japanese or Korean, for screen
        # readers and CJK glyphs (viewer QA: a Chinese vault's pages said lang="en")
        "lang": language_of(_prose(text[:8000])[:4000]),
        "outline": body.outline,
        "cut": body.cut,
        "raw": urls.raw(b.name, doc.path),
        "graph": urls.graph(b.name, doc.path),
        "folder": (
            doc.directory,
            urls.browse(b.name, dir=None if doc.directory == "/" else doc.directory),
        ),
        "crumbs": _crumbs(b.name, doc.directory),
        "neighbors": _neighbors(view, box, doc.path),
        "listed_in": _listed_in(view, doc.path),
        "problems": _own_problems(view, doc.path),
    }
    if isinstance(doc, Concept):
        context.update(_concept(view, doc, now))
        if changed:
            context["concept"]["notices"].append(changed_since_load(box.manager.reloads))
        if not b.wikilinks and scan_wikilinks(doc.body, limit=1):
            # Viewer QA: databricks' "[[Unity Catalog]]" showed as bracket text, and
            # nothing said why (okfx validate says it; the viewer's pages did not).
            context["concept"]["notices"].append(WIKILINKS_OFF)
    else:
        kind = "index" if isinstance(doc, IndexFile) else "log"
        # Its first heading (a log's title), as a reader knows the page; else its path.
        context.update({"kind": kind, "title": f"{page_heading(doc) or doc.path} ({kind})"})
        if isinstance(doc, LogFile):
            context["log"] = urls.log(b.name)
    return context


def _concept(view: BundleView, c: Concept, now: datetime) -> dict[str, Any]:
    b = view.bundle
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
    # Links name sources by their place as written (only read when there are sources:
    # the frontmatter of a stored concept is read from its file).
    places = source_places(c.frontmatter.get("sources")) if sources else []
    for i, source in enumerate(sources):
        place = places[i] if i < len(places) else i
        url = where(source.get("resource"), f"sources[{place}].resource")
        fragment = str(source.get("resource") or "").partition("#")[2]
        # A source citing a section (/references/x.md#section) leads to that heading.
        source["url"] = view.with_fragment(url, fragment) if url else None
        # The producer's own keys of this entry (m3e-okf's note and retrieved) in its row.
        prefix = f"sources[{place}]."
        source["extra"] = {
            key.removeprefix(prefix): value
            for key, value in header["extensions"].items()
            if key.startswith(prefix)
        }
    shown = {k for source in sources for k, v in source.items() if v is not None and v != ""}
    columns = [c for c in ("title", "author", "last_modified", "usage_count") if c in shown]
    contract = header["computation"]
    if contract is not None:
        contract["url"] = where(contract["computation"], "computation")
        contract["executor"]["url"] = where(contract["executor"]["resource"], "executor.resource")
        contract["attester"]["url"] = where(contract["attester"]["resource"], "attester.resource")
        contract["language"] = c.computation.inline_language if c.computation else None
        contract["constraints"] = any(_constrained(p) for p in contract["parameters"])
        for parameter in contract["parameters"]:
            parameter["allowed"] = _allowed(parameter)
    return {
        "kind": "concept",
        "title": c.title,
        "title_lang": language_of(c.title),  # the h1's own (viewer QA: a Korean title)
        # Other names the producer gives (docs/okf.md), as search reads them: not the
        # ones that only spell the title again (the explorer lists its titles as aliases).
        "aliases": new_names(c.aliases, (c.title,)),
        "concept": header,
        "resource_url": where(c.resource, "resource"),
        "tag_urls": [(t, urls.browse(b.name, tag=t)) for t in c.tags],
        "type_url": urls.browse(b.name, type=c.type),
        # The header's extensions are the keys it does not show (a producer's own ``id``
        # among them: the concept's ID is its path, spec §2, so this is another key); a
        # source entry's own keys show in its row.
        "extra": {k: v for k, v in header["extensions"].items() if not k.startswith("sources[")},
        "source_columns": columns,
        # The keys read_concept left out for its budget (a 12k-character ``owl``): named,
        # with the raw file to read them in.
        "extra_cut": [note for note in header.get("cut", []) if note.startswith("extensions:")],
    }


def _crumbs(bundle: str, folder: str) -> list[tuple[str, str]]:
    """Each folder on the way to ``folder`` (``/a/b``: a, then b), named and linked to
    its listing, so a reader can go up one level at a time (viewer QA: one link for
    ``functions/function-go-templating``)."""
    parts = folder.strip("/").split("/") if folder.strip("/") else []
    return [
        (part, urls.browse(bundle, dir="/" + "/".join(parts[: at + 1])))
        for at, part in enumerate(parts)
    ]


#: A file's own problems listed on its page at most (the Problems page has them all).
OWN_PROBLEMS = 10


def _own_problems(view: BundleView, path: str) -> dict[str, Any] | None:
    """The problems reported for the file at ``path`` (errors first), for its
    page: an author checking a bundle sees them where the file is, not only on the
    Problems page grouped by code (flutter QA: a page whose frontmatter other consumers
    reject looked healthy). None when it has none."""
    b = view.bundle
    # What the Problems page lists (okfx validate's checks too: a broken_anchor had shown
    # there and not here, viewer QA), errors first, each code's in file order.
    own = [p for found in view.problems for p in found.problems if p.path == path]
    if not own:
        return None
    rows = [
        {
            "severity": "error" if p.code in ERROR_CODES else "warning",
            "code": p.code,
            "message": p.message,
            "line": unsaid_line(p),  # when the message does not end with it
            "url": urls.problems(b.name, p.code),
        }
        for p in own[:OWN_PROBLEMS]
    ]
    errors = sum(p.code in ERROR_CODES for p in own)
    return {"rows": rows, "total": len(own), "errors": errors, "all": urls.problems(b.name)}


def _listed_in(view: BundleView, path: str) -> list[tuple[str, str]]:
    """The ``index.md`` and ``log.md`` files that link ``path``, with their pages."""
    b = view.bundle
    return [(source, urls.concept(b.name, source)) for source in b.listed_in(path)]


def cited_sources(text: str, concept: Concept) -> str:
    """``text`` with each ``[^label]`` that names a ``sources[].id`` and has no
    ``[^label]: ...`` definition in the body written as a link to that source's row of
    the Sources table, ``[label]`` (viewer QA: it showed as the literal ``[^src1]``, while
    the table said "cited as src1"). Labels in code stay as written."""
    rows = {s.id: at for at, s in enumerate(concept.sources, 1) if s.id and "[^" + s.id in text}
    if not rows:
        return text
    out: list[str] = []
    at = 0
    for m in footnote_citations(text):
        row = rows.get(m.group(1))
        if row is None or f"[^{m.group(1)}]:" in text:
            continue  # no source of that id, or a footnote the body defines
        # the renderer gives a fragment the page's h- prefix: the row's id is h-src-N
        out += [text[at : m.start()], f"[\\[{m.group(1)}\\]](#src-{row})"]
        at = m.end()
    return "".join(out) + text[at:]


#: What a reader does not read as prose: a link's destination, inline code, an address.
_NOT_PROSE = re.compile(r"\]\([^()\s]*\)|`[^`\n]*`|https?://\S+")


def _prose(text: str) -> str:
    """``text`` without code blocks, inline code, link destinations and addresses: the
    words a page's language is told by (viewer QA: 148 of a Korean wiki's 182 pages read
    as English, for their link paths and identifiers outnumbered the Korean words)."""
    kept = "\n".join(text[a:b] for a, b in prose_segments(text))
    return _NOT_PROSE.sub(" ", kept)


def _neighbors(view: BundleView, box: Toolbox, path: str) -> dict[str, Any]:
    payload = checked(box.get_neighbors(path=path, bundle=view.name, limit=MAX_LISTED))
    for key in ("outbound", "backlinks", "unresolved"):
        edges = payload[key]
        payload[f"{key}_count"] = payload["total"][key]  # a hub's count, not its page's
        for edge in edges:
            edge["url"] = view.url_of(edge["path"]) if key != "unresolved" else None
            meant = edge.get("did_you_mean")
            edge["meant_url"] = view.url_of(meant) if meant else None
            edge["candidate_urls"] = [(p, view.url_of(p)) for p in edge.get("candidates") or ()]
    leaving = payload.get("leaves_bundle") or []
    for edge in leaving:  # one landing in a sibling bundle shown beside it: its page
        edge["url"] = urls.concept(edge["bundle"], edge["path"]) if edge.get("bundle") else None
    payload["leaves_bundle_count"] = len(leaving)
    payload["leaves_bundle"] = leaving[:MAX_LISTED]
    return payload


def file(view: BundleView, box: Toolbox, path: str, offset: int = 0) -> dict[str, Any]:
    """The page of an attached file: its text from byte ``offset`` on, through the
    read_resource tool, one tool page at a time, with links to the part before and after."""
    b = view.bundle
    try:
        canon = normalize(path)
    except UnsafePath as exc:
        raise page_error(exc) from None
    if isinstance(b.get(canon), Concept | IndexFile | LogFile) and canon in b.files:
        raise Redirect(urls.concept(b.name, canon))
    if canon in b.directories and canon not in b.files:
        # a folder: its listing, as /c/<folder> gives (viewer QA: a 404 in tool words)
        raise Redirect(urls.browse(b.name, dir=None if canon == "/" else canon))
    context: dict[str, Any] = {
        "title": canon,
        "bundle": b.name,
        "path": canon,
        "raw": urls.raw(b.name, canon),
        "image": bool(raster_type(canon)) and canon in b.files,
        "folder": (parent_dir(canon), urls.browse(b.name, dir=parent_dir(canon))),
        "crumbs": _crumbs(b.name, parent_dir(canon)),
        "backlinks": [(src, urls.concept(b.name, src)) for src in view.linking_to_file(canon)],
        "problems": _own_problems(view, canon),
    }
    if context["image"]:
        return context
    payload = box.read_resource(path=canon, bundle=b.name, offset=offset)
    err = payload.get("error")
    if err and err.get("code") == "not_found":
        raise PageError(404, str(err["message"]), list(err.get("did_you_mean") or []))
    context.update(
        {"text": payload.get("text"), "bytes": payload.get("bytes"),
         "error": err and err.get("message")}
    )  # fmt: skip
    if not err:
        back = _previous_start(box, b.name, canon, payload["offset"], b.limits.max_resource_bytes)
        context["part"] = _part(b.name, canon, payload, back)
    return context


def _previous_start(box: Toolbox, bundle: str, path: str, start: int, cap: int) -> int | None:
    """Where the part before the one at ``start`` begins: one page back, moved on to the
    next line's start (pages end at line ends, so a part read from there starts a line and
    runs on to ``start`` at least); ``None`` at the start, 0 within a page of it."""
    if start <= 0:
        return None
    back = start - cap
    if back <= 0:
        return 0
    page = box.read_resource(path=path, bundle=bundle, offset=back)
    text, at = str(page.get("text") or ""), int(page.get("offset") or back)
    head = text[: len(text) // 2]
    line = head.find("\n")
    return at if line < 0 else at + len(head[: line + 1].encode("utf-8"))


def _part(
    bundle: str, path: str, payload: dict[str, Any], back: int | None
) -> dict[str, Any] | None:
    """Where the shown text sits in the file, and the links to the parts around it (the
    part before starts at ``back``); None when the page shows the whole file."""
    start, size, after = payload["offset"], payload["bytes"], payload["next_offset"]
    if start == 0 and after is None:
        return None
    end = after if after is not None else size
    return {  # first and last are 1-based and inclusive; no last: nothing past the end
        "first": start + 1,
        "last": end if end > start else None,
        "start": urls.file(bundle, path) if start else None,
        "previous": urls.file(bundle, path, back) if back else None,
        "next": urls.file(bundle, path, after) if after is not None else None,
    }


_CONSTRAINT_KEYS = ("default", "example", "enum", "min", "max")


def _constrained(parameter: dict[str, Any]) -> bool:
    """Does a contract's parameter carry a producer's constraints (``default``, ...)?"""
    return any(key in parameter for key in _CONSTRAINT_KEYS)


def _allowed(parameter: dict[str, Any]) -> str:
    """The values a parameter allows, in words: its ``enum``, or its ``min``/``max``."""
    if "enum" in parameter:
        return ", ".join(str(v) for v in parameter["enum"])
    low, high = parameter.get("min"), parameter.get("max")
    if low is not None and high is not None:
        return f"{low} to {high}"
    if low is not None:
        return f"at least {low}"
    return f"at most {high}" if high is not None else ""
