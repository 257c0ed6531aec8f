"""``okfx view`` and ``okfx serve --web``: the viewer behind the guards of ``okfx serve``.

The viewer (``okfx.web``) is a plain ASGI app; here it gets the same protection as the
MCP endpoint, from the same code (``okfx.adapters.mcp``): the Host/Origin check on
loopback, and the bearer token (which a browser carries in a cookie, see
``okfx.web.auth``) whenever one is set, as it must be off loopback. With ``--web`` the
pages and ``/mcp`` share one server: ``/mcp`` goes to the MCP app, everything else to
the viewer.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from okfx.cli.terminal import visible
from okfx.tools.manager import KnowledgeManager

__all__ = ["beside_mcp", "viewer", "viewer_banner"]

MCP_PATH = "/mcp"


def viewer(
    manager: KnowledgeManager, host: str, token: str | None, *, background: bool = True
) -> Any:
    """The viewer's ASGI app over ``manager``, guarded for ``host`` (and ``token``).

    Its per-bundle figures are computed in a background thread, or now when
    ``background`` is false (before ``--workers`` fork, so that every worker shares them
    and no thread is caught mid-way by the fork)."""
    from okfx.adapters import mcp as http  # the HTTP guards `okfx serve` uses
    from okfx.web import create_app, static_app
    from okfx.web.auth import browser_login

    app = create_app(manager)
    if background:
        threading.Thread(target=_prepare, args=(manager,), name="okfx-viewer", daemon=True).start()
    else:
        _prepare(manager)
    if token:
        app = browser_login(http.bearer_auth(app, token), http.token_matcher(token), static_app())
    return http.host_guard(app, host)


def _prepare(manager: KnowledgeManager) -> None:
    from okfx.web.site import view_of

    try:
        for bundle in manager.bundles.values():
            view_of(bundle).prepare()
    except Exception:  # the first page computes them again and reports the problem
        logging.getLogger("okfx").exception("okfx: preparing the viewer's figures failed")


def beside_mcp(mcp_app: Any, web_app: Any) -> Any:
    """One ASGI app: ``/mcp`` (and the lifespan the MCP session manager needs) to
    ``mcp_app``, every other request to ``web_app``."""

    async def dispatch(scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == MCP_PATH or path.startswith(MCP_PATH + "/"):
            await mcp_app(scope, receive, send)
        else:
            await web_app(scope, receive, send)

    return dispatch


def viewer_banner(manager: KnowledgeManager, url: str, token: bool) -> str:
    """What ``okfx view`` prints to stderr before serving."""
    # control characters made visible, as every other command shows bundle text (security
    # QA: an archive's folder name set the terminal's window title here)
    names = visible(
        ", ".join(
            f"{b.name} ({len(b)} concept{'' if len(b) == 1 else 's'})"
            for b in manager.bundles.values()
        )
    )
    lines = [f"okfx: viewing {names}", f"Open: {url}"]
    if token:
        lines.append(f"Sign in at {url}login with the token (OKFX_TOKEN).")
    lines.append("Stop with Ctrl+C.")
    return "\n".join(lines)
