"""A concept resource's frontmatter reads the same whichever YAML emitter writes it.

``frontmatter_yaml`` hands printable-ASCII frontmatter to libyaml's emitter (a fifth of
the CPU of PyYAML's own) and everything else to PyYAML's: its text must be exactly what
``yaml.safe_dump`` writes, for any JSON-like value, including the ones where the two
emitters differ (control characters, characters past U+FFFF, empty keys).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp")

from okfx.tools.yamltext import frontmatter_yaml  # noqa: E402

OPTIONS: dict[str, Any] = {"sort_keys": False, "allow_unicode": True, "width": 1_000_000}

ASCII = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=150)
ANY_TEXT = st.text(max_size=40)


def values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), text)
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)
        ),
        max_leaves=12,
    )


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(ASCII, values(ASCII), max_size=6))
def test_printable_ascii_frontmatter_is_what_safe_dump_writes(data: dict[str, Any]) -> None:
    assert frontmatter_yaml(data) == yaml.safe_dump(data, **OPTIONS)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(ANY_TEXT, values(ANY_TEXT), max_size=6))
def test_any_frontmatter_is_what_safe_dump_writes(data: dict[str, Any]) -> None:
    assert frontmatter_yaml(data) == yaml.safe_dump(data, **OPTIONS)


@pytest.mark.parametrize(
    "data",
    [
        {"": None},  # libyaml writes '': null, PyYAML ? '' : null
        {"\U00059166": None},  # libyaml escapes a character past U+FFFF
        {"a\rb": []},  # and a key holding a control character
        {"title": "Caf\u00e9", "tags": ["x"]},
    ],
)
def test_where_the_emitters_differ_pyyaml_writes_it(data: dict[str, Any]) -> None:
    assert frontmatter_yaml(data) == yaml.safe_dump(data, **OPTIONS)
