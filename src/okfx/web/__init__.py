"""The viewer: a local, read-only web app over loaded bundles, for people (``okfx view``).

Owns the pages (overview, browse, concept, graph, search and grep, problems, log), their
templates and static files, and the markdown renderer that keeps bundle text inert. It
reads through ``okfx.tools`` (the Toolbox, its payloads, the filter predicate and facets)
and the bundle layer's path guard; it must not import ``okfx.adapters`` or ``okfx.cli``
(the CLI starts it and wraps it in the HTTP guards that ``okfx serve`` uses). Needs the
``web`` extra (docs/install.md).
"""

from __future__ import annotations

from okfx.version import install_command

try:
    import jinja2  # noqa: F401
    import markdown_it  # noqa: F401
    import mdit_py_plugins  # noqa: F401
    import starlette  # noqa: F401
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
    raise ModuleNotFoundError(
        f"the okfx viewer needs {exc.name}, which is not installed; install it with: "
        f"{install_command('web')}",
        name=exc.name,
    ) from exc

from okfx.web.app import create_app, static_app  # noqa: E402

__all__ = ["create_app", "static_app"]
