from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from okfx.frontmatter import FrontmatterError, load_yaml, parse, split
from okfx.limits import Limits

LIMITS = Limits()


def _code(text: str, limits: Limits = LIMITS) -> str:
    with pytest.raises(FrontmatterError) as info:
        parse(text, limits)
    return info.value.code


def test_split_returns_yaml_body_and_body_line() -> None:
    yaml_text, body, line = split("---\ntype: A\ntitle: B\n---\n# Body\n")
    assert yaml_text == "type: A\ntitle: B\n"
    assert body == "# Body\n"
    assert line == 5


def test_text_without_opening_fence_has_no_frontmatter() -> None:
    assert split("# Just markdown\n") == (None, "# Just markdown\n", 1)
    assert _code("# Just markdown\n") == "no_frontmatter"


def test_four_dashes_is_not_an_opening_fence() -> None:
    assert _code("----\ntype: A\n----\n") == "no_frontmatter"


@pytest.mark.parametrize("text", ["---", "---\n", "---\ntype: A\n", "---\ntype: A\n--\n"])
def test_unterminated_frontmatter_is_reported(text: str) -> None:
    assert _code(text) == "unterminated_frontmatter"


def test_a_leading_utf8_bom_is_ignored() -> None:
    assert parse("\ufeff---\ntype: A\n---\nx", LIMITS).data == {"type": "A"}


def test_closing_fence_may_carry_trailing_spaces() -> None:
    assert parse("---  \ntype: A\n---  \nbody", LIMITS).body == "body"


def test_empty_block_and_non_mappings_are_not_mappings() -> None:
    assert _code("---\n---\n") == "frontmatter_not_mapping"
    assert _code("---\n- a\n- b\n---\n") == "frontmatter_not_mapping"
    assert _code("---\njust a string\n---\n") == "frontmatter_not_mapping"


def test_malformed_yaml_names_the_line() -> None:
    with pytest.raises(FrontmatterError) as info:
        parse("---\ntype: A\ntags: [a, b\n---\n", LIMITS)
    assert info.value.code == "malformed_yaml"
    assert "line" in info.value.message


def test_timestamps_stay_text_so_impossible_dates_do_not_fail_the_file() -> None:
    data = parse(
        "---\ntype: A\nstale_after: 2026-02-30T00:00:00Z\nd: 2026-05-22\n"
        "e: !!timestamp 2026-01-01\n---\n",
        LIMITS,
    ).data
    assert data["stale_after"] == "2026-02-30T00:00:00Z"
    assert data["d"] == "2026-05-22"
    assert data["e"] == "2026-01-01"


def test_yaml_11_scalars_keep_their_pyyaml_meaning() -> None:
    data = parse("---\ntype: A\npii: no\nn: 010\n---\n", LIMITS).data
    assert data["pii"] is False
    assert data["n"] == 8


def test_duplicate_keys_are_reported_and_the_last_wins() -> None:
    parsed = parse("---\ntype: A\ntype: B\nx: 1\n---\n", LIMITS)
    assert parsed.data["type"] == "B"
    assert parsed.duplicate_keys == ["type"]


def test_python_tags_are_never_constructed() -> None:
    text = "---\ntype: A\nx: !!python/object/apply:os.system ['touch /tmp/okfx-pwned']\n---\n"
    assert _code(text) == "malformed_yaml"


def test_alias_bomb_is_refused_before_expansion() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = "---\ntype: A\n" + "\n".join(lines) + "\n---\n"
    with pytest.raises(FrontmatterError) as info:
        parse(text, LIMITS)
    assert "alias" in info.value.message


@pytest.mark.parametrize("opener", ["[", "{a: ", "- "])
def test_very_deep_nesting_fails_cleanly(opener: str) -> None:
    text = "---\nx: " + opener * 100_000 + "\n---\n"
    assert _code(text) == "malformed_yaml"


def test_moderate_flow_nesting_within_bound_parses() -> None:
    text = "---\ntype: A\nx: " + "[" * 20 + "1" + "]" * 20 + "\n---\n"
    assert parse(text, LIMITS).data["type"] == "A"


def test_oversized_frontmatter_is_refused() -> None:
    text = "---\ntype: A\nx: '" + "a" * 300_000 + "'\n---\n"
    assert _code(text) == "malformed_yaml"
    small = Limits(max_frontmatter_bytes=10)
    assert _code("---\ntype: Alphabet\n---\n", small) == "malformed_yaml"


def test_huge_integer_is_malformed_not_a_crash() -> None:
    assert _code("---\ntype: A\nn: " + "9" * 10_000 + "\n---\n") == "malformed_yaml"


def test_nan_and_infinity_load_as_floats() -> None:
    data = parse("---\ntype: A\nx: .nan\ny: -.inf\n---\n", LIMITS).data
    assert data["x"] != data["x"]
    assert data["y"] == float("-inf")


def _reference(yaml_text: str) -> object:
    """PyYAML's own constructor on the same loader (timestamps as text)."""
    from okfx.frontmatter import _FastLoader

    loader = _FastLoader(yaml_text)
    loader.duplicate_keys = []
    try:
        return loader.construct_document(loader.get_single_node())
    finally:
        loader.dispose()


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["yes", "no", "on", "0x1f", "010", "1:30", "2026-02-30", "~", ".inf"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=10), _values, max_size=6))
@settings(max_examples=200, deadline=None)
def test_fast_builder_matches_pyyaml_constructor(data: dict[str, object]) -> None:
    text = yaml.safe_dump(data, default_flow_style=None, allow_unicode=True)
    assert load_yaml(text, LIMITS)[0] == _reference(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1, 2]\nb: *x\nc: {k: *x}\n",
        "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n",
        "s: !!set {a, b}\n",
        "p: !!omap [a: 1, b: 2]\n",
        "t: 2026-06-30T14:00:00Z\nd: !!timestamp 2026-01-01\n",
        "b: !!binary aGVsbG8=\n",
    ],
)
def test_fast_builder_matches_pyyaml_on_anchors_merges_and_tags(text: str) -> None:
    assert load_yaml(text, LIMITS)[0] == _reference(text)


def test_aliases_share_one_value() -> None:
    data, _ = load_yaml("a: &x [1]\nb: *x\n", LIMITS)
    assert data["a"] is data["b"]
