"""Text fields written as plain YAML values that YAML reads as something else.

A title, a description, a tag, or a source's ``id`` or ``title`` is text, but YAML 1.1
types a plain value by its looks: ``tags: [python, 3.10]`` holds the number 3.1,
``tags: [NO, SE]`` holds ``false``, ``title: 0012`` is the number 10 and ``title: 10:30``
is 630. Turning the value back into text (``str(3.1)``) gives what nobody wrote, and a
boolean has no text at all. What the author meant is the value as written, so that is
what okfx reads; the file is reported (``unquoted_scalar``), since another consumer reads
the typed value: quoting it makes every reader agree.

Only files with such a value pay for it: their frontmatter is composed once more (YAML's
own node graph, never constructed, so no value is built twice) and the scalars on those
paths read as written. A path YAML does not hold as a plain scalar (an alias through a
merge key, a layout the walk does not follow) keeps the typed reading.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import yaml

__all__ = ["typed_text_paths", "with_written", "written_scalars"]

_LOADER: Any = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
_TOP = ("title", "description")
_SOURCE_KEYS = ("id", "title")


_TYPED = frozenset({bool, int, float})  # what YAML builds from these plain scalars


def _typed(value: Any) -> bool:
    """Is ``value`` one that YAML typed from a plain scalar: a number or true/false?"""
    return type(value) in _TYPED


def _source_entries(value: Any) -> list[Any]:
    return [value] if isinstance(value, dict) else value if isinstance(value, list) else []


def typed_text_paths(data: Mapping[str, Any]) -> dict[str, Any]:
    """The text fields whose value YAML typed as a number or a boolean, by path (``title``,
    ``tags[1]``, ``sources[0].id``) in the order the fields are read, with that value."""
    tags, sources = data.get("tags"), data.get("sources")
    found = {name: value for name in _TOP if _typed(value := data.get(name))}
    if isinstance(tags, list) and not all(type(tag) is str for tag in tags):
        found.update((f"tags[{i}]", tag) for i, tag in enumerate(tags) if _typed(tag))
    if not sources:
        return found  # most concepts: no sources to look through
    for i, entry in enumerate(_source_entries(sources)):
        if isinstance(entry, dict):
            found.update(
                (f"sources[{i}].{key}", value)
                for key in _SOURCE_KEYS
                if _typed(value := entry.get(key))
            )
    return found


def _parts(path: str) -> Iterator[str | int]:
    """``sources[0].id`` -> ``"sources", 0, "id"``."""
    for piece in path.split("."):
        name, _, rest = piece.partition("[")
        yield name
        if rest:
            yield int(rest.rstrip("]"))


def _child(node: Any, part: str | int) -> Any:
    if isinstance(part, int):
        if isinstance(node, yaml.MappingNode) and part == 0:
            return node  # a bare mapping is a one-element list (spec §5.2)
        if isinstance(node, yaml.SequenceNode) and part < len(node.value):
            return node.value[part]
        return None
    if not isinstance(node, yaml.MappingNode):
        return None
    found = None
    for key, value in node.value:  # the last of duplicate keys wins, as when loading
        if isinstance(key, yaml.ScalarNode) and key.value == part:
            found = value
    return found


def written_scalars(yaml_text: str, paths: Iterable[str]) -> dict[str, str]:
    """The text of each plain scalar at ``paths`` in ``yaml_text`` as it is written;
    paths that hold no plain scalar are left out, and so is every path when the text
    does not compose (given the text a load read, it does)."""
    loader = _LOADER(yaml_text)
    try:
        root = loader.get_single_node()
    except (yaml.YAMLError, ValueError, RecursionError):
        return {}
    finally:
        loader.dispose()
    out: dict[str, str] = {}
    for path in paths:
        node = root
        for part in _parts(path):
            node = _child(node, part)
            if node is None:
                break
        # A plain scalar's style is None in PyYAML and "" in libyaml.
        if isinstance(node, yaml.ScalarNode) and not node.style and node.value.strip():
            out[path] = node.value.strip()
    return out


def with_written(data: dict[str, Any], written: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``data`` with the values at ``written``'s paths replaced by their text;
    the lists and mappings on the way are copied, ``data`` itself is not changed."""
    out = dict(data)
    for path, text in written.items():
        parts = list(_parts(path))
        holder: Any = out
        for i, part in enumerate(parts[:-1]):
            inner = holder[part]
            if isinstance(parts[i + 1], int) and isinstance(inner, dict):
                inner = [inner]  # a bare mapping read as its one-element list
            copy = list(inner) if isinstance(inner, list) else dict(inner)
            holder[part] = copy
            holder = copy
        holder[parts[-1]] = text
    return out
