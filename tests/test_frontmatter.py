from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.resolver import BaseResolver

from okfx.bundle.frontmatter import (
    FrontmatterError,
    _FastLoader,
    _markers,
    _nesting_bound,
    _QuickResolveMixin,
    load_yaml,
    parse,
    split,
)
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


def test_no_frontmatter_names_the_common_mistakes() -> None:
    """Author QA: an empty file (an editor that crashed mid-save) and a block after blank
    lines were told only the rule, with no word of what was wrong."""
    said = {}
    for text in ("", "\n\n---\ntype: A\n---\nbody\n", " --- \ntype: A\n---\n", "# Notes\n"):
        with pytest.raises(FrontmatterError) as caught:
            parse(text, Limits())
        assert caught.value.code == "no_frontmatter"
        said[text[:4]] = caught.value.message
    assert "the file is empty" in said[""]
    assert "its '---' is on line 3, after blank lines" in said["\n\n--"]
    assert "with spaces around it" in said[" ---"]
    assert "a 'type: ...' line and a closing '---' line" in said["# No"]
    # validate QA: the way out for a README was in the text report's header alone
    assert said["# No"].endswith("is left out with --exclude or a line in .okfignore")


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


@pytest.mark.parametrize(
    ("written", "data"),
    [
        ("1: one\ntrue: yes\n", {1: "one", "true": True}),
        ("1: one\n1.0: yes\n", {1: "one", "1.0": True}),
        ("0: zero\nfalse: no\n", {0: "zero", "false": False}),
        ("m:\n  1: x\n  true: y\n", {"m": {1: "x", "true": "y"}}),
    ],
)
def test_keys_yaml_tells_apart_are_no_duplicates(written: str, data: dict[object, object]) -> None:
    """Spec QA: ``1`` and ``true`` are two YAML keys, one dict key in Python (True == 1):
    the block was a duplicate_key error and "one" was lost. The later key is kept by its
    text."""
    parsed = parse(f"---\ntype: A\n{written}---\n", LIMITS)
    assert parsed.duplicate_keys == []
    assert {k: v for k, v in parsed.data.items() if k != "type"} == data
    # equal YAML values still are duplicates: null and ~, 1 and 0x1
    assert parse("---\ntype: A\nnull: a\n~: b\n---\n", LIMITS).duplicate_keys == ["~"]
    assert parse("---\ntype: A\n1: a\n0x1: b\n---\n", LIMITS).duplicate_keys == ["0x1"]


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


class _ReferenceLoader(_FastLoader):
    """Our loader with PyYAML's own resolver methods back: the reference for ours."""

    resolve = BaseResolver.resolve
    descend_resolver = BaseResolver.descend_resolver
    ascend_resolver = BaseResolver.ascend_resolver


def _reference(yaml_text: str) -> object:
    """PyYAML's own resolver and constructor on the same loader (timestamps as text)."""
    loader = _ReferenceLoader(yaml_text)
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


def test_a_yaml_set_is_its_members_in_written_order() -> None:
    # A Python set prints in hash order, which differs from run to run.
    data, _ = load_yaml("s: !!set {zeta, a, m, b}\nt: !!set {}\n", LIMITS)
    assert data == {"s": ["zeta", "a", "m", "b"], "t": []}


def test_aliases_share_one_value() -> None:
    data, _ = load_yaml("a: &x [1]\nb: *x\n", LIMITS)
    assert data["a"] is data["b"]


# -- the quick resolver: the same tag as PyYAML's for every scalar --------------------------

# Plain scalars at every edge of PyYAML's implicit resolvers (YAML 1.1 ints, floats, bools,
# nulls, timestamps, merge and value keys), and near misses of each.
_RESOLVER_EDGES = [
    *("0 -1 +1 1_000 0x1F -0x1f 0b101 0b 017 08 1:30 -1:30:59 190:20:30 1:60 0o17".split()),
    *("1.5 -1.5 .5 1. 1e3 1.0e+3 1.0e3 6.8523015e+5 1:30.5 .inf -.Inf +.INF .nan .NaN".split()),
    *("yes Yes YES no No NO on On ON off Off OFF true True TRUE false False FALSE".split()),
    *("y Y n N yES tRUE nO oN".split()),
    *("~ null Null NULL nULL none None".split()),
    *("2026-01-01 2026-1-1 2026-01-01T10:00:00Z 2026-01-01t10:00:00.5+02:00".split()),
    "2001-12-14 21:59:43.10 -5",
    *("<< < <<< = == ! & * a 0a a0 -- +-1 - + . ..".split()),
    "",
    " ",
]
_scalar_text = st.one_of(
    st.sampled_from(_RESOLVER_EDGES),
    st.sampled_from(_RESOLVER_EDGES).map(lambda v: v + "\n"),  # ``$`` matches before "\n"
    st.sampled_from(_RESOLVER_EDGES).map(lambda v: " " + v),
    st.text(max_size=12),
    st.text(alphabet="0123456789_:.+-eExXbBoOaAfFnNyYtT~<=!&* \n", max_size=10),
)
_implicit = st.tuples(st.booleans(), st.booleans())


class _FullTable(_QuickResolveMixin, yaml.CSafeLoader):  # type: ignore[misc]
    """The quick resolver over PyYAML's complete table (timestamps included)."""


_FullTable.index_resolvers()


@pytest.mark.parametrize("loader_class", [_FastLoader, _FullTable])
@given(value=_scalar_text, implicit=_implicit)
@settings(max_examples=400, deadline=None)
def test_quick_resolver_gives_pyyaml_tag_for_every_scalar(
    loader_class: type, value: str, implicit: tuple[bool, bool]
) -> None:
    loader = loader_class("")
    try:
        expected = BaseResolver.resolve(loader, yaml.ScalarNode, value, implicit)
        assert loader.resolve(yaml.ScalarNode, value, implicit) == expected
    finally:
        loader.dispose()


@pytest.mark.parametrize("kind", [yaml.SequenceNode, yaml.MappingNode])
@pytest.mark.parametrize("implicit", [True, False])
def test_quick_resolver_gives_pyyaml_tag_for_collections(kind: type, implicit: bool) -> None:
    loader = _FastLoader("")
    try:
        expected = BaseResolver.resolve(loader, kind, None, implicit)
        assert loader.resolve(kind, None, implicit) == expected
    finally:
        loader.dispose()


def test_quick_resolver_table_drops_only_timestamps() -> None:
    assert "tag:yaml.org,2002:timestamp" not in {
        tag for entries in _FastLoader._by_first.values() for tag, _ in entries
    }
    assert _FullTable._by_first["2"][-1][0] == "tag:yaml.org,2002:timestamp"


def test_quick_resolver_refuses_path_resolvers() -> None:
    class WithPaths(_QuickResolveMixin, yaml.CSafeLoader):  # type: ignore[misc]
        pass

    WithPaths.add_path_resolver("tag:yaml.org,2002:str", ["x"], str)
    with pytest.raises(TypeError):
        WithPaths.index_resolvers()


def _tags(node: yaml.Node) -> list[object]:
    if isinstance(node, yaml.ScalarNode):
        return [node.tag]
    if isinstance(node, yaml.MappingNode):
        return [node.tag, [_tags(k) + _tags(v) for k, v in node.value]]
    return [node.tag, [_tags(item) for item in node.value]]


def _outcome(load: Callable[[], object]) -> object:
    try:
        return load()
    except yaml.YAMLError as exc:
        return type(exc).__name__


# Whole documents with plain (unquoted) scalars as keys, values and list items, in block
# and flow style, including explicit tags and quoted look-alikes.
_plain = st.sampled_from([v for v in _RESOLVER_EDGES if v.strip() and "\n" not in v])
_documents = st.lists(
    st.tuples(
        _plain,
        st.one_of(
            _plain,
            _plain.map(lambda v: f"'{v}'"),
            _plain.map(lambda v: f"! {v}"),
            _plain.map(lambda v: f"!!str {v}"),
            st.lists(_plain, max_size=3).map(lambda vs: "[" + ", ".join(vs) + "]"),
            st.lists(_plain, min_size=1, max_size=3).map(
                lambda vs: "".join(f"\n  - {v}" for v in vs)
            ),
            st.just(""),
        ),
    ),
    min_size=1,
    max_size=6,
).map(lambda pairs: "".join(f"{k}: {v}\n" for k, v in pairs))


def _tags_with(loader_class: type, text: str) -> object:
    loader = loader_class(text)
    try:
        return _tags(loader.get_single_node())
    finally:
        loader.dispose()


@given(_documents)
@settings(max_examples=300, deadline=None)
def test_quick_resolver_tags_whole_documents_like_pyyaml(text: str) -> None:
    assert _outcome(lambda: _tags_with(_FastLoader, text)) == _outcome(
        lambda: _tags_with(_ReferenceLoader, text)
    )
    try:
        expected = _reference(text)
    except (yaml.YAMLError, ValueError, TypeError):
        with pytest.raises(FrontmatterError):
            load_yaml(text, LIMITS)
    else:
        loaded = load_yaml(text, LIMITS)[0]
        if not _kept_by_text(loaded):  # PyYAML merges 0 and false; okfx keeps both
            assert loaded == expected


def _kept_by_text(data: object) -> bool:
    """Whether ``data`` holds a key okfx kept by its text because another key of another
    type is equal to its value in Python (``0`` and ``false``)."""
    if not isinstance(data, dict):
        return False
    for key in data:
        if isinstance(key, str):
            try:
                value = yaml.safe_load(key)
            except yaml.YAMLError:
                continue
            if not isinstance(value, str) and any(
                other == value and not isinstance(other, str) for other in data
            ):
                return True
    return any(_kept_by_text(value) for value in data.values())


# -- cheap bounds and the closing line ------------------------------------------------------


@given(st.text(alphabet="[]{}-? \t\na:#'\"", max_size=200))
@settings(max_examples=300, deadline=None)
def test_marker_count_never_underestimates_the_nesting_bound(text: str) -> None:
    assert _markers(text) >= _nesting_bound(text)


_OLD_CLOSE = re.compile(r"^---[ \t]*$", re.MULTILINE)


def _split_with_a_line_start_regex(text: str) -> object:
    """``split`` as written with ``^---`` (tried at every position), for comparison."""
    text = text.removeprefix("\ufeff")
    opened = re.match(r"---[ \t]*(?:\n|$)", text)
    if not opened:
        return None, text, 1
    close = _OLD_CLOSE.search(text, opened.end())
    if close is None:
        return "unterminated"
    yaml_text = text[opened.end() : close.start()]
    body_start = close.end() + 1 if close.end() < len(text) else close.end()
    return yaml_text, text[body_start:], yaml_text.count("\n") + 3


@given(st.lists(st.sampled_from(["---", "-", "\n", " ", "\t", "a", "\ufeff", "\r"])).map("".join))
@settings(max_examples=500, deadline=None)
def test_split_finds_the_closing_line_like_a_line_start_regex(text: str) -> None:
    try:
        got: object = split(text)
    except FrontmatterError:
        got = "unterminated"
    assert got == _split_with_a_line_start_regex(text)


# -- shared strings ---------------------------------------------------------------------------


def test_keys_and_short_values_are_shared_across_documents() -> None:
    strings: dict[str, str] = {}
    long = "a description long enough that it is unlikely to repeat anywhere"
    first = load_yaml(f"type: Metric\ntags: [kpi]\nd: {long}\n", LIMITS, strings)[0]
    second = load_yaml(f"type: Metric\ntags: [kpi]\nd: {long}\n", LIMITS, strings)[0]
    assert first == second == load_yaml(f"type: Metric\ntags: [kpi]\nd: {long}\n", LIMITS)[0]
    (key_1, type_1), (key_2, type_2) = next(iter(first.items())), next(iter(second.items()))
    assert key_1 is key_2 and type_1 is type_2
    assert first["tags"][0] is second["tags"][0]
    assert first["d"] is not second["d"]  # long values are not kept in the table
