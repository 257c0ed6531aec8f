"""The headers every answer of the viewer carries, and the stricter ones of a bundle
file's own bytes.

Pages: a Content-Security-Policy that allows scripts, styles and images from the
viewer's own origin only (no inline script, no ``eval``, no plug-ins, no framing, forms
only to itself), ``nosniff``, no referrer to other origins, no caching. ``/raw/`` answers carry
:data:`RAW_CSP` instead: a sandbox with nothing allowed, so a file's bytes can never run
script with the viewer's origin even when a browser is told to render them.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CSP", "HEADERS", "RAW_CSP", "security_headers"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: For a bundle file's own bytes: no script, no plug-in, no request, a unique origin.
RAW_CSP = "default-src 'none'; sandbox"
HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    # same-origin, not no-referrer: with no referrer a browser posts the sign-in form
    # with "Origin: null", which the loopback guard refuses (viewer QA: the right token
    # was answered 403); other origins still get no referrer.
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


def security_headers(app: ASGIApp) -> ASGIApp:
    """Add the viewer's security headers to every HTTP answer of ``app`` (a
    Content-Security-Policy the answer set itself is kept: ``/raw/`` sets a stricter one)."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", CSP.encode()))
                if b"cache-control" not in names:
                    headers.append((b"cache-control", b"no-store"))
                headers.extend(h for h in HEADERS if h[0] not in names)
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_with_headers)

    return wrapped
