"""The line of a frontmatter value (``okfx.bundle.keylines``): what ``validate`` annotates.

A field problem (``invalid_field``, ``assumed_utc``, ...) had no line, so ``okfx validate
--format github`` annotated the file and not the value; on the real corpus that was every
one of 3,809 ``invalid_field`` and 2,585 ``assumed_utc`` warnings of one bundle."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import MakeBundle
from okfx import Bundle
from okfx.bundle.keylines import KeyLines
from okfx.bundle.problems import problem_dict


def _file(frontmatter: str) -> tuple[str, int]:
    text = "---\n" + frontmatter + "---\nbody\n"
    return text, frontmatter.count("\n") + 3


@pytest.mark.parametrize(
    ("frontmatter", "key", "expected"),
    [
        ("type: T\nstatus: weird\n", "status", 3),
        ("type: T\n'status': weird\n", "status", 3),
        ("type: T\ngenerated:\n  by: x\n  at: 2026-01-01\n", "generated.at", 5),
        ("type: T\ngenerated: {by: x, at: 2026-01-01}\n", "generated.at", 3),  # flow
        (
            "type: T\nsources:\n- resource: a\n- resource: b\n  author: Tiago\n",
            "sources[1].author",
            6,
        ),
        ("type: T\nsources:\n  - resource: a\n    author: Ann\n", "sources[0].author", 5),
        (
            "sources:\n  - resource: a\n    usage_window:\n      from: x\n",
            "sources[0].usage_window.from",
            5,
        ),
        ("type: T\nsources:\n  - resource: a\n", "sources[3]", 3),  # the deepest found
        ("type: T\nverified: [{by: 'human:a'}]\n", "verified[0].at", 3),
        ("type: T\ntags:\n  - a\n  - 5\n", "tags[1]", 5),
        ("type: T\nnotes: |\n  status: not a key\nstatus: x\n", "status", 5),  # block text
        ("type: T\n# status: a comment\nstatus: x\n", "status", 4),
        ("type: T\n", "status", None),
        ("type: T\ntitle: 'a: b'\nstatus: x\n", "status", 4),
    ],
)
def test_a_value_path_gives_the_line_of_its_value(
    frontmatter: str, key: str, expected: int | None
) -> None:
    text, body_line = _file(frontmatter)
    assert KeyLines(text, body_line).line(key) == expected


# Keys and values the path syntax can name; block layout as PyYAML writes it.
_KEYS = st.text("abcdefghij_", min_size=1, max_size=6)
_SCALARS = st.one_of(
    st.integers(-5, 5), st.booleans(), st.text("xyz :#-'\"|>{}[]", max_size=8), st.none()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.dictionaries(_KEYS, inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)


def _paths(node: yaml.Node, prefix: str) -> list[tuple[str, int]]:
    """Every key and list item of a composed YAML node: (its path, its 0-based line)."""
    found: list[tuple[str, int]] = []
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = f"{prefix}.{key.value}" if prefix else key.value
            found.append((path, key.start_mark.line))
            found += _paths(value, path)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            found.append((f"{prefix}[{i}]", item.start_mark.line))
            found += _paths(item, f"{prefix}[{i}]")
    return found


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4),
    st.sampled_from([2, 4]),
    st.booleans(),
)
def test_every_key_and_item_line_matches_the_yaml_parser(
    data: dict[str, Any], indent: int, indent_lists: bool
) -> None:
    """The oracle is PyYAML's own composer: each key's and item's start line."""

    class Dumper(yaml.SafeDumper):
        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, indentless and not indent_lists)

    frontmatter = yaml.dump(data, Dumper=Dumper, default_flow_style=False, indent=indent)
    if frontmatter.rstrip().endswith("..."):
        return  # a lone scalar document: no keys
    text, body_line = _file(frontmatter)
    lines = KeyLines(text, body_line)
    for path, line in _paths(yaml.compose(frontmatter), ""):
        assert lines.line(path) == line + 2, (path, frontmatter)


def test_field_warnings_name_their_line_and_a_source_author_name_is_kept(
    make_bundle: MakeBundle,
) -> None:
    """Seen in a published bundle: a book's author written as a name, and dates without
    a time. The name was dropped ("not an actor; ignored") though nothing reads it as an
    actor: a source's author is a signal for the reader, not a trust input."""
    text = (
        "---\ntype: Note\ngenerated:\n  by: human:ana\n  at: 2026-08-19\nsources:\n"
        "  - resource: https://example.org/book\n    author: Tiago Forte\n"
        "  - resource: https://example.org/other\n    author: [not, text]\n---\nbody\n"
    )
    bundle = Bundle.load(make_bundle({"n.md": text}))
    lines = text.split("\n")
    found = {(p["code"], lines[p["line"] - 1].strip()) for p in map(problem_dict, bundle.warnings)}
    assert found == {
        ("assumed_utc", "at: 2026-08-19"),
        ("invalid_field", "author: Tiago Forte"),
        ("invalid_field", "author: [not, text]"),
    }
    sources = bundle.concept("n").sources
    assert [s.author for s in sources] == ["Tiago Forte", None]


@pytest.mark.parametrize(
    ("sources", "lines"),
    [
        # block entries: the resource key's line, wherever it sits in the entry
        ("  - id: a\n    resource: /x.md\n  - {title: B, resource: /y.md}\n", [5, 6]),
        # a bare path, then an entry with no resource (skipped), then one with
        ("  - /x.md\n  - {title: none}\n  - resource: /y.md\n", [4, 6]),
        # one mapping, not a list
        ("  title: T\n  resource: /x.md\n", [5]),
        # a flow list on the key's line: the key's line
        (None, [3, 3]),
    ],
)
def test_a_source_link_carries_its_entrys_line(
    make_bundle: MakeBundle, sources: str | None, lines: list[int]
) -> None:
    head = "---\ntype: Note\n"
    block = (
        "sources: [{resource: /x.md}, {resource: /y.md}]\n"
        if sources is None
        else "sources:\n" + sources
    )
    root = make_bundle({"a.md": head + block + "---\nBody.\n", "x.md": "---\ntype: N\n---\n"})
    found = [link.line for link in Bundle.load(root).concept("a").links]
    assert found == lines
