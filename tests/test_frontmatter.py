from __future__ import annotations

import pytest

from okfx.frontmatter import FrontmatterError, parse, split
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
