"""What a page answers when it cannot show itself: an HTTP status with a sentence for a
person, or another page; and the bounds every page keeps to."""

from __future__ import annotations

from typing import Any

from okfx.errors import NotFound, OKFError

__all__ = [
    "MAX_LISTED",
    "PageError",
    "Redirect",
    "checked",
    "flag_arg",
    "int_arg",
    "page_error",
]

#: The most rows of one kind a page lists (subfolders, links of each kind, log entries);
#: the page says how many more there are, so a hub or a huge folder stays a page.
MAX_LISTED = 300


class PageError(Exception):
    """A request the viewer cannot answer: the HTTP status and a sentence for a person."""

    def __init__(self, status: int, message: str, suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.suggestions = suggestions or []


def page_error(exc: OKFError) -> PageError:
    status = 404 if isinstance(exc, NotFound) else 400
    return PageError(status, exc.message, getattr(exc, "suggestions", None))


def int_arg(value: str | None, default: int, lo: int, hi: int) -> int:
    try:
        return min(max(int(value or default), lo), hi)
    except ValueError:
        return default


#: The values of a query parameter that turn an option on (the pages send ``1``).
_ON = frozenset({"1", "true", "on", "yes"})


def flag_arg(value: str | None) -> bool:
    """An on/off query parameter: on for ``1``, ``true``, ``on`` or ``yes`` (any case);
    off when absent, empty, ``0``, ``false``, ``off``, ``no`` or anything else."""
    return value is not None and value.strip().casefold() in _ON


def checked(payload: dict[str, Any]) -> dict[str, Any]:
    """A tool payload, or the PageError its error result calls for."""
    err = payload.get("error")
    if err:
        status = 404 if err.get("code") == "not_found" else 400
        raise PageError(status, str(err.get("message")), list(err.get("did_you_mean") or []))
    return payload


class Redirect(Exception):  # noqa: N818 - a control-flow signal, not an error
    """The answer is another page (``url``)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url
