"""The viewer's ASGI app: routes, templates, static files and the headers every answer
carries.

Every answer has a strict Content-Security-Policy (scripts, styles and images from the
viewer's own origin only; no inline script, no plug-ins, no framing), ``nosniff``, no
referrer, and pages are never cached. A bundle file's bytes (``/raw/``) are served as
``text/plain`` (raster images as themselves) under ``Content-Security-Policy: sandbox``,
so an ``.html`` or ``.svg`` attachment is shown as text and can never run script on the
viewer's origin. Every path goes through the bundle's path guard. The app is read-only:
GET and HEAD only.

The app itself trusts whoever can reach it: ``okfx view`` binds loopback by default and
wraps it in the token rule and Host/Origin checks of ``okfx serve``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from okfx.bundle.bundle import Bundle
from okfx.bundle.paths import normalize
from okfx.bundle.walk import decode_text, read_head
from okfx.errors import UnsafePath
from okfx.tools.display import inert_text
from okfx.tools.manager import KnowledgeManager
from okfx.tools.payloads import iso
from okfx.tools.toolbox import Toolbox
from okfx.version import __version__
from okfx.web import urls
from okfx.web.answers import PageError, Redirect
from okfx.web.finding import page_words
from okfx.web.headers import RAW_CSP, security_headers
from okfx.web.markdown import as_written, inline
from okfx.web.pages import Site
from okfx.web.site import raster_type

__all__ = ["create_app", "static_app"]

logger = logging.getLogger("okfx")

HERE = Path(__file__).resolve().parent
#: The most bytes of one file ``/raw/`` serves (the loader's own per-file bound).
RAW_CAP = 8 * 1024 * 1024


def _toolbox(
    source: Bundle | KnowledgeManager | Toolbox, now: Callable[[], datetime] | None
) -> Toolbox:
    if isinstance(source, Toolbox):
        return source
    return Toolbox(source, now=now, controls_as_is=True)


def _params(request: Request) -> dict[str, Any]:
    query = request.query_params
    params: dict[str, Any] = {key: query[key] for key in query}
    params["tag"] = query.getlist("tag")
    return params


def create_app(
    source: Bundle | KnowledgeManager | Toolbox,
    *,
    now: Callable[[], datetime] | None = None,
) -> ASGIApp:
    """The viewer over ``source`` as an ASGI app (serve it with any ASGI server)."""
    site = Site(_toolbox(source, now))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update({"urls": urls, "iso": iso, "version": __version__})
    env.filters["inline"] = inline  # a description's inline marks (code spans, links)
    env.filters["as_written"] = as_written  # a frontmatter value as YAML reads

    def html(template: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
        names = [b.name for b in site.bundles()]
        full = {"bundle_names": names, "bundle": names[0] if len(names) == 1 else None, **context}
        full["unreadable"] = site.unreadable(full["bundle"])
        page = env.get_template(template).render(full)
        # Bundle text's control characters shown, not obeyed: a title "invoice\u202etxt.exe"
        # read "invoiceexe.txt" (viewer QA), as the CLI and the tools show them.
        return HTMLResponse(inert_text(page), status_code=status)

    def error(exc: PageError, request: Request | None = None) -> HTMLResponse:
        context = {"title": f"Error {exc.status}", "status": exc.status,
                   "message": page_words(exc.message), "suggestions": exc.suggestions}  # fmt: skip
        # A page of one bundle keeps its navigation and links its suggestions, however
        # many bundles are served (viewer QA: with six, they were plain text).
        asked = request.path_params.get("bundle") if request is not None else None
        if asked in {b.name for b in site.bundles()}:
            context["bundle"] = asked
        return html("error.html", context, exc.status)

    def page(template: str, build: Callable[[Request], dict[str, Any]]) -> Callable[..., Response]:
        def endpoint(request: Request) -> Response:
            try:
                context = build(request)  # "status": a page that answers a bad request
                return html(template, context, int(context.get("status", 200)))
            except Redirect as move:
                return RedirectResponse(move.url, status_code=303)
            except PageError as exc:
                return error(exc, request)

        return endpoint

    def raw(request: Request) -> Response:
        try:
            return _raw(site, named(request), path(request))
        except PageError as exc:
            return Response(
                inert_text(exc.message), status_code=exc.status, media_type="text/plain"
            )

    def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 405:
            return Response("The viewer is read-only: GET only.", status_code=405)
        return error(PageError(status, f"no page at {request.url.path}"))

    def named(r: Request) -> str:
        return str(r.path_params["bundle"])

    def path(r: Request) -> str:
        return str(r.path_params["path"])

    home = "/b/{bundle}"
    pages: list[tuple[str, str, Callable[[Request], dict[str, Any]]]] = [
        ("/", "overview.html", lambda r: site.overview()),
        (home + "/", "overview.html", lambda r: site.overview(named(r))),
        (home + "/browse", "browse.html", lambda r: site.browse(named(r), _params(r))),
        (home + "/c/{path:path}", "concept.html", lambda r: site.document(named(r), path(r))),
        (
            home + "/file/{path:path}",
            "file.html",
            lambda r: site.file(named(r), path(r), _params(r)),
        ),
        (home + "/graph", "graph.html", lambda r: site.graph(named(r), _params(r))),
        (home + "/problems", "problems.html", lambda r: site.problems(named(r), _params(r))),
        (home + "/log", "log.html", lambda r: site.log(named(r))),
        ("/search", "search.html", lambda r: site.search(_params(r))),
        ("/grep", "grep.html", lambda r: site.grep(_params(r))),
    ]
    routes: list[Route | Mount] = [Route(u, page(t, build)) for u, t, build in pages]
    routes += [
        Route(home + "/raw/{path:path}", raw),
        _static_mount(),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found})
    return security_headers(app)


def static_app() -> ASGIApp:
    """The viewer's own stylesheet and scripts alone, under ``/static/``, with its headers:
    what a viewer with a token serves before sign-in (:func:`okfx.web.auth.browser_login`).
    Any other path is a bare 404 that names nothing of the bundles (security QA: the whole
    viewer answered there, its 404 page listing every bundle)."""
    return security_headers(Starlette(routes=[_static_mount()]))


def _static_mount() -> Mount:
    """The viewer's own files (stylesheet, scripts, icon) under ``/static``."""
    return Mount("/static", StaticFiles(directory=HERE / "static"), name="static")


def _raw(site: Site, name: str, path: str) -> Response:
    """A bundle file's bytes, served so that nothing in them can run on this origin."""
    b = site.bundle(name).bundle
    try:
        canon = normalize(path)
        if canon not in b.files:
            raise PageError(404, f"no file at {canon} in bundle {b.name!r}")
    except UnsafePath as exc:
        raise PageError(400, exc.message) from None
    try:
        data, size = read_head(b.open_file(canon), RAW_CAP)  # no symlink followed
    except OSError:
        raise PageError(404, f"{canon} cannot be read") from None
    media = raster_type(canon)
    inline = True
    if media is None:
        try:
            decode_text(data)
            media = "text/plain; charset=utf-8"
        except UnicodeDecodeError:
            media, inline = "application/octet-stream", False
    filename = quote(canon.rsplit("/", 1)[-1], safe="")
    shown = "inline" if inline else "attachment"
    headers = {
        "content-security-policy": RAW_CSP,
        "content-disposition": f"{shown}; filename*=UTF-8''{filename}",
    }
    if size > len(data):
        headers["x-okfx-truncated"] = f"{len(data)} of {size} bytes"
    return Response(data, media_type=media, headers=headers)
