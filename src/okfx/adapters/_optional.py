"""Import an optional framework, or fail with the pip command that installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from okfx.version import install_command

__all__ = ["require"]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``; raise ImportError naming the pip command for ``okfx[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if missing and not f"{module}.".startswith(f"{missing}."):
            # the framework is there, one of its own imports failed (framework QA: "not
            # installed" sent the reader to a pip command that changes nothing)
            raise ImportError(
                f"this okfx adapter needs {module!r}, which is installed but could not be "
                f"imported: {exc}; reinstall it with: {install_command(extra)}"
            ) from exc
        raise ImportError(
            f"this okfx adapter needs {module!r}, which is not installed; "
            f"install it with: {install_command(extra)}"
        ) from exc
