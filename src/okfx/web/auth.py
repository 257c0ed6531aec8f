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
<p>This viewer is served off loopback and needs its token (the one given to
<code>okfx view --token</code> or set in <code>OKFX_TOKEN</code>).</p>
%s<form method="post" action="/login"><label>Token <input name="token" type="password"
autocomplete="current-password" autofocus required></label> <button type="submit">Open</button>
</form></main></body></html>"""
_FORM = (_PAGE % "").encode()
_WRONG = (
    _PAGE % '<p role="alert"><strong>That token is not the one this viewer was started with.'
    "</strong></p>\n"
).encode()


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


async def _form_token(receive: Receive) -> str | None:
    body = b""
    while True:
        message: Message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_FORM_BYTES:
            return None
        if not message.get("more_body"):
            break
    values = parse_qs(body.decode("utf-8", "replace")).get("token")
    return values[0] if values else None


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


def browser_login(app: ASGIApp, matches: Callable[[bytes], bool]) -> ASGIApp:
    """Wrap ``app`` (a bearer-token check in front of the viewer) so a browser can sign
    in once and carry the token in a cookie; ``matches`` tells whether a token given to
    the form is the right one (the bearer check's own test,
    ``okfx.adapters.mcp.token_matcher``)."""

    async def login(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "POST":
            given = await _form_token(receive)
        elif scope["method"] in ("GET", "HEAD"):
            given = (parse_qs(scope.get("query_string", b"").decode()).get("token") or [None])[0]
        else:
            await _answer(send, 405, [(b"allow", b"GET, POST")], b"")
            return
        html = [(b"content-type", b"text/html; charset=utf-8")]
        if not given:
            await _answer(send, 200, html, _FORM)
            return
        if not matches(given.encode("utf-8", "replace")):
            await _answer(send, 401, html, _WRONG)
            return
        cookie = f"{COOKIE}={quote(given, safe='')}; HttpOnly; SameSite=Strict; Path=/"
        await _answer(send, 303, [(b"location", b"/"), (b"set-cookie", cookie.encode())], b"")

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        if scope["path"] == LOGIN_PATH:
            await login(scope, receive, send)
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
                await _answer(send, 303, [(b"location", LOGIN_PATH.encode())], b"")
                return
        await app(scope, receive, send)

    return wrapped
