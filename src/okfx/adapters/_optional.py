"""Import an optional framework, or fail with the pip command that installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["require"]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``; raise ImportError naming ``pip install 'okfx[extra]'`` if missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"this okfx adapter needs {module!r}, which is not installed; "
            f"install it with: pip install 'okfx[{extra}]'"
        ) from exc
