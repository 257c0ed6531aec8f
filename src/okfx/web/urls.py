"""The viewer's stable URLs, built in one place so templates and links cannot drift.

Every page of one bundle lives under ``/b/<bundle>/``; bundle paths keep their leading
slash in the URL (``/b/knowledge/c/metrics/revenue.md``). Query strings drop empty
values so a URL names only the filters that are set.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote, urlencode

__all__ = [
    "bundle_home",
    "browse",
    "concept",
    "file",
    "graph",
    "grep",
    "log",
    "problems",
    "query",
    "raw",
    "search",
]


def query(params: Mapping[str, object]) -> str:
    """``?a=1&b=x`` of the parameters that are set (``None``, ``""`` and ``False`` are not)."""
    items: list[tuple[str, str]] = []
    for key, value in params.items():
        if value is None or value == "" or value is False:
            continue
        if isinstance(value, list | tuple):
            items.extend((key, str(v)) for v in value)
        else:
            items.append((key, "1" if value is True else str(value)))
    return "?" + urlencode(items) if items else ""


def _b(bundle: str) -> str:
    return "/b/" + quote(bundle, safe="")


def _p(path: str) -> str:
    return quote(path.lstrip("/"), safe="/")


def bundle_home(bundle: str) -> str:
    return _b(bundle) + "/"


def browse(bundle: str, **params: object) -> str:
    return _b(bundle) + "/browse" + query(params)


def concept(bundle: str, path: str, fragment: str | None = None) -> str:
    return _b(bundle) + "/c/" + _p(path) + ("#" + quote(fragment, safe="-_") if fragment else "")


def file(bundle: str, path: str, offset: int = 0) -> str:
    """The page showing an attached file as text (never rendered on the viewer's origin),
    from byte ``offset`` on."""
    return _b(bundle) + "/file/" + _p(path) + query({"offset": offset or None})


def raw(bundle: str, path: str) -> str:
    """The file's bytes: text as ``text/plain`` in a sandbox, raster images as images."""
    return _b(bundle) + "/raw/" + _p(path)


def graph(bundle: str, path: str | None = None, depth: int = 1) -> str:
    return _b(bundle) + "/graph" + query({"path": path, "depth": depth if path else None})


def problems(bundle: str, code: str | None = None, page: int = 1) -> str:
    return _b(bundle) + "/problems" + query({"code": code, "page": page if page > 1 else None})


def log(bundle: str) -> str:
    return _b(bundle) + "/log"


def search(**params: object) -> str:
    return "/search" + query(params)


def grep(**params: object) -> str:
    return "/grep" + query(params)
