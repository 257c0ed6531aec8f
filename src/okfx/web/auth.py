"""A browser's way to carry the bearer token that ``okfx serve`` requires off loopback.

A browser cannot add ``Authorization: Bearer`` to a link it follows, so
:func:`browser_login` lets it hold the token in a cookie instead: ``/login`` shows a
form (or takes ``?token=`` once, for ``okfx view --open``), answers with an ``HttpOnly``,
``SameSite=Strict`` cookie and sends the browser on to the overview. A wrong token gets
the form again and no cookie, so a link to ``/login?token=x`` cannot sign a user out by
replacing a right cookie. Every later request that has the cookie and no
``Authorization`` header gets ``Authorization: Bearer <cookie>`` added before the wrapped
app, which is the bearer check itself (``okfx.adapters.mcp.bearer_auth``, applied by the
CLI). A browser without the cookie is sent to ``/login``, and so is one whose cookie the
check refused (a viewer started again with another token; the cookie is cleared).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from urllib.parse import parse_qs, quote, unquote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from okfx.web.headers import CSP, HEADERS

__all__ = ["COOKIE", "LOGIN_PATH", "browser_login"]

COOKIE = "okfx_token"
LOGIN_PATH = "/login"
MAX_FORM_BYTES = 8192
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in - okfx</title>
<link rel="stylesheet" href="/static/style.css"></head>
<body><main id="main"><h1>okfx viewer</h1>
<p>This viewer needs its token (the one given to <code>okfx view --token</code> or set
in <code>OKFX_TOKEN</code>).</p>
%s<form method="post" action="/login"><label>Token <input name="token" type="password"
autocomplete="current-password" autofocus required></label>%s <button type="submit">Open</button>
</form></main></body></html>"""
_WRONG = (
    '<p role="alert"><strong>That token is not the one this viewer was started with.</strong></p>\n'
)


def _page(wrong: bool, next_path: str) -> bytes:
    """The sign-in form; ``next_path``, a page of this viewer, is where it goes after."""
    hidden = (
        f'<input type="hidden" name="next" value="{html.escape(next_path, quote=True)}">'
        if next_path != "/"
        else ""
    )
    return (_PAGE % (_WRONG if wrong else "", hidden)).encode()


def _next_path(value: str | None) -> str:
    """A page of this viewer to go to after signing in: a path of its own (``/b/x/c/a.md``,
    with its query), else the overview; never another site (``//host``, ``/\\host``, a
    scheme) nor a line break."""
    if (
        not value
        or not value.startswith("/")
        or value.startswith(("//", "/\\"))
        or any(c in value for c in "\r\n\\")
        or value.startswith(LOGIN_PATH)
    ):
        return "/"
    return value


def _cookie_token(headers: dict[bytes, bytes]) -> str | None:
    for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value:
            return unquote(value)
    return None


async def _answer(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers = [
        *headers,
        (b"content-length", str(len(body)).encode()),
        (b"content-security-policy", CSP.encode()),
        (b"cache-control", b"no-store"),
        *HEADERS,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _form(receive: Receive) -> dict[str, list[str]]:
    body = b""
    while True:
        message: Message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_FORM_BYTES:
            return {}
        if not message.get("more_body"):
            break
    return parse_qs(body.decode("utf-8", "replace"))


def _login_for(scope: Scope) -> bytes:
    """The sign-in page's address that comes back to the page ``scope`` asked for."""
    path = scope.get("raw_path") or scope["path"].encode("utf-8")
    query = scope.get("query_string", b"")
    asked = path.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
    if _next_path(asked) == "/":
        return LOGIN_PATH.encode()
    return f"{LOGIN_PATH}?next={quote(asked, safe='')}".encode()


def _back_to_login(send: Send) -> Send:
    """``send``, except that a 401 becomes a redirect to the form that clears the cookie."""
    refused = False

    async def relay(message: Message) -> None:
        nonlocal refused
        if message["type"] == "http.response.start" and message["status"] == 401:
            refused = True
            forget = f"{COOKIE}=; Max-Age=0; HttpOnly; SameSite=Strict; Path=/".encode()
            await _answer(
                send, 303, [(b"location", LOGIN_PATH.encode()), (b"set-cookie", forget)], b""
            )
        elif not refused:
            await send(message)

    return relay


#: The viewer's own stylesheet and scripts, which hold no bundle data: served without the
#: token, so the sign-in page is styled (viewer QA: its stylesheet answered 401).
STATIC_PREFIX = "/static/"


def browser_login(
    app: ASGIApp, matches: Callable[[bytes], bool], static: ASGIApp | None = None
) -> ASGIApp:
    """Wrap ``app`` (a bearer-token check in front of the viewer) so a browser can sign
    in once and carry the token in a cookie; ``matches`` tells whether a token given to
    the form is the right one (the bearer check's own test,
    ``okfx.adapters.mcp.token_matcher``); ``static``, the viewer without the check,
    answers :data:`STATIC_PREFIX` paths."""

    async def login(scope: Scope, receive: Receive, send: Send) -> None:
        asked = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if scope["method"] == "POST":
            fields = await _form(receive)
        elif scope["method"] in ("GET", "HEAD"):
            fields = asked
        else:
            await _answer(send, 405, [(b"allow", b"GET, POST")], b"")
            return
        given = (fields.get("token") or [""])[0]
        # Where the browser was going when it was sent here (viewer QA: a shared link to a
        # concept landed on the overview after signing in).
        after = _next_path((fields.get("next") or asked.get("next") or [""])[0])
        content = [(b"content-type", b"text/html; charset=utf-8")]
        if not given:
            await _answer(send, 200, content, _page(False, after))
            return
        if not matches(given.encode("utf-8", "replace")):
            await _answer(send, 401, content, _page(True, after))
            return
        cookie = f"{COOKIE}={quote(given, safe='')}; HttpOnly; SameSite=Strict; Path=/"
        location = quote(after, safe="/?&=%:;,+-._~!$'()*@")
        await _answer(
            send, 303, [(b"location", location.encode()), (b"set-cookie", cookie.encode())], b""
        )

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        if scope["path"] == LOGIN_PATH:
            await login(scope, receive, send)
            return
        if static is not None and scope["path"].startswith(STATIC_PREFIX):
            await static(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        browser = b"text/html" in headers.get(b"accept", b"")
        if b"authorization" not in headers:
            token = _cookie_token(headers)
            if token is not None:
                added = (b"authorization", f"Bearer {token}".encode("utf-8", "replace"))
                scope = {**scope, "headers": [*scope.get("headers", ()), added]}
                if browser:  # a wrong token in the cookie: forget it, sign in again
                    send = _back_to_login(send)
            elif browser:
                await _answer(send, 303, [(b"location", _login_for(scope))], b"")
                return
        await app(scope, receive, send)

    return wrapped
