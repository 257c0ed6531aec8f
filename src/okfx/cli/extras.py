"""A command that needs an extra okfx was installed without refuses to start, before it
loads anything, as ``error[missing_extra]: ...`` naming the pip command (exit 2).

QA: ``okfx serve --executor duckdb`` without ``duckdb`` started, offered
``run_computation`` and answered every call ``internal_error``; a missing ``mcp`` or
``web`` was reported as click's ``Error: this okfx adapter needs ...`` after the load.
"""

from __future__ import annotations

import importlib

from okfx.errors import OKFError
from okfx.version import install_command

__all__ = ["MissingExtra", "need_extra"]


class MissingExtra(OKFError):
    """An optional package a command needs is not installed; the message names the
    command that installs its extra. Never a tool's answer: a server does not start."""

    code = "missing_extra"


def need_extra(extra: str, modules: tuple[str, ...], what: str) -> None:
    """Import ``modules`` (those of okfx's ``extra``), or raise :class:`MissingExtra`
    saying that ``what`` (``okfx serve``) needs them."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            missing = exc.name or module
            raise MissingExtra(
                f"{what} needs the {extra} extra ({missing!r} is not installed); "
                f"install it with: {install_command(extra)}"
            ) from None
