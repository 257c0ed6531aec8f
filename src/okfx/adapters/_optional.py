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
        raise ImportError(
            f"this okfx adapter needs {module!r}, which is not installed; "
            f"install it with: {install_command(extra)}"
        ) from exc
