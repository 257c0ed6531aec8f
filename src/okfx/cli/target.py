"""The command line's one path form: ``bundle:path``, printed and accepted.

``okfx read`` and ``okfx neighbors`` take PATH as ``bundle:/metrics/x.md`` (what search,
grep and read print) or as a bare path with ``--bundle NAME``; a prefix is a bundle only
when it is the name of a loaded bundle, so a path with a colon of its own stays a path.
"""

from __future__ import annotations

from collections.abc import Collection

from okfx.errors import InvalidArgument

__all__ = ["shown", "split"]


def shown(bundle: object, path: object) -> str:
    """A concept as the command line prints it, and takes it back."""
    return f"{bundle}:{path}"


def split(names: Collection[str], path: str, bundle: str | None) -> tuple[str | None, str]:
    """``(bundle, path)`` from PATH and ``--bundle``: a ``name:`` prefix naming a loaded
    bundle chooses it (and must agree with ``--bundle``)."""
    prefix, colon, rest = path.partition(":")
    if not colon or not rest or prefix not in names:
        return bundle, path
    if bundle is not None and bundle != prefix:
        raise InvalidArgument(
            f"--bundle {bundle} and {shown(prefix, rest)} name two bundles; give one of them"
        )
    return prefix, rest
