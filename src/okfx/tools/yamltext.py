"""Frontmatter as YAML text: what an MCP resource and the viewer show a reader.

One emitter for both (the viewer had its own ``yaml.safe_dump`` with options of its own).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["frontmatter_yaml"]

_YAML_OPTIONS: dict[str, Any] = {"sort_keys": False, "allow_unicode": True, "width": 1_000_000}
_C_DUMPER: Any = yaml.CSafeDumper if yaml.__with_libyaml__ else None


def frontmatter_yaml(data: Any) -> str:
    """``yaml.safe_dump`` of ``data`` (JSON-like values). Written by libyaml's emitter,
    a fifth of the CPU of PyYAML's own, when every key and string in ``data`` is
    printable ASCII: there the two write the same text (``tests/adapters/
    test_resource_yaml.py`` compares them); elsewhere they differ (control characters,
    characters past U+FFFF, empty keys), and PyYAML's own writes it."""
    if _C_DUMPER is not None and _printable_ascii(data):
        return str(yaml.dump(data, Dumper=_C_DUMPER, **_YAML_OPTIONS))
    return str(yaml.safe_dump(data, **_YAML_OPTIONS))


def _printable_ascii(data: Any) -> bool:
    """True when ``data`` holds only None, bools, ints, floats and printable ASCII
    strings, in lists and in dicts whose keys are non-empty such strings."""
    if isinstance(data, str):
        return data.isascii() and data.isprintable()
    if isinstance(data, dict):
        return all(
            isinstance(k, str) and k != "" and _printable_ascii(k) and _printable_ascii(v)
            for k, v in data.items()
        )
    if isinstance(data, list):
        return all(_printable_ascii(item) for item in data)
    return data is None or isinstance(data, int | float)
