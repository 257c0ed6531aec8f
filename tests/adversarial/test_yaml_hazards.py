"""YAML hazards in frontmatter: bombs, deep nesting, huge blocks, code-running tags, odd values.

Each case is a whole bundle: the bad file is skipped (or loaded) with a stable warning code,
``Bundle.load`` never raises, and every tool result stays strict JSON
(``json.dumps(result, allow_nan=False)``). ``tests/test_frontmatter.py`` unit-tests the
parser; this file checks what reaches a bundle and the tools.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import (
    as_json,
    assert_clean,
    call,
    codes,
    concept,
    per_call,
    write,
)

from okfx import Bundle, Toolbox
from okfx.bundle.frontmatter import FrontmatterError, parse
from okfx.limits import Limits


def bomb(levels: int = 9, fan: int = 9) -> str:
    lines = ["a0: &a0 [" + ",".join(['"lol"'] * fan) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * fan) + "]")
    return "\n".join(lines)


def merge_bomb(levels: int = 20) -> str:
    lines = ["m0: &m0 {k0: v, k1: v}"]
    for i in range(1, levels):
        lines.append(f"m{i}: &m{i} {{x{i}: *m{i - 1}, y{i}: *m{i - 1}, <<: *m{i - 1}}}")
    return "\n".join(lines)


def indented(levels: int) -> str:
    return "\n".join(" " * i + "a:" for i in range(levels)) + " 1"


def fm(yaml_text: str, body: str = "body\n") -> str:
    return "---\n" + yaml_text + "\n---\n" + body


SKIPPED = [
    ("billion-laughs", fm("type: A\n" + bomb())),
    ("merge-key-bomb", fm("type: A\n" + merge_bomb())),
    ("deep-brackets", fm("type: A\nx: " + "[" * 100_000)),
    ("deep-braces", fm("type: A\nx: " + "{a: " * 100_000)),
    ("deep-dashes", fm("type: A\nx:\n  " + "- " * 100_000 + "1")),
    ("deep-questions", fm("type: A\nx:\n  " + "? " * 100_000 + "1")),
    ("deep-indentation", fm("type: A\nx:\n" + indented(700))),
    ("multi-megabyte", fm("type: A\nx: '" + "a" * 3_000_000 + "'")),
    ("many-keys", fm("type: A\n" + "".join(f"k{i}: {i}\n" for i in range(40_000)))),
    ("huge-decimal-int", fm("type: A\nn: " + "9" * 10_000)),
    ("unhashable-key", fm("type: A\n[a, b]: c")),
    ("nul-in-yaml", fm("type: A\nx: 'a\x00b'")),
    ("tab-indentation", fm("type: A\nx:\n\t- 1")),
    # security QA: PyYAML's constructors raised KeyError, IndexError, AttributeError, and
    # the whole load with them; a !!str mapping came back as raw nodes
    ("bool-tag-on-a-word", fm("type: A\nx: !!bool maybe")),
    ("empty-bool-tag", fm("type: A\nx: !!bool")),
    ("empty-int-tag", fm("type: A\nx: !!int")),
    ("seq-tag-on-a-mapping", fm("type: A\nx: !!seq {a: 1}")),
    ("seq-tag-on-a-word", fm("type: A\nx: !!seq a")),
    ("str-tag-on-a-mapping", fm("type: A\nx: !!str {a: 1}")),
    ("str-tag-in-a-list", fm("type: A\nx: [!!str {a: 1}]")),
    ("str-tag-on-a-key", fm("type: A\n? !!str [a]\n: 1")),
    ("map-tag-on-a-list", fm("type: A\nx: !!map [1]")),
]


@pytest.mark.parametrize(("name", "text"), SKIPPED, ids=[n for n, _ in SKIPPED])
def test_hostile_yaml_skips_the_file_with_malformed_yaml(
    tmp_path: Path, name: str, text: str
) -> None:
    bundle = Bundle.load(write(tmp_path / "b", {"bad.md": text, "ok.md": concept()}))
    assert [c.path for c in bundle] == ["/ok.md"]
    assert codes(bundle, "/bad.md") == ["malformed_yaml"]
    assert as_json([w.message for w in bundle.warnings])


def test_two_documents_are_read_up_to_the_first_closing_fence(tmp_path: Path) -> None:
    # "---" closes the frontmatter, so "type: B" is body text, never a second document.
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": "---\ntype: A\n---\ntype: B\n---\n"}))
    assert bundle.concept("a").type == "A"


TAGS = [
    "!!python/object/apply:os.system ['touch {marker}']",
    "!!python/object/new:subprocess.Popen [['touch', '{marker}']]",
    "!!python/name:os.system",
    "!!python/module:os",
    "!<tag:yaml.org,2002:python/object/apply:os.system> ['touch {marker}']",
    "!!python/object:__main__.X {a: 1}",
]


@pytest.mark.parametrize("tag", TAGS)
def test_python_tags_are_refused_and_run_nothing(tmp_path: Path, tag: str) -> None:
    marker = tmp_path / "pwned"
    text = fm("type: A\nx: " + tag.replace("{marker}", str(marker)))
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": text}))
    assert codes(bundle) == ["malformed_yaml"]
    assert not marker.exists()
    with pytest.raises(FrontmatterError):
        parse(text, Limits())
    assert not marker.exists()


@pytest.mark.parametrize(
    ("yaml_text", "code"),
    [
        ("- type: A", "frontmatter_not_mapping"),
        ("just a string", "frontmatter_not_mapping"),
        ("42", "frontmatter_not_mapping"),
        ("", "frontmatter_not_mapping"),
        ("~", "frontmatter_not_mapping"),
        ("type: [Metric, Table]", "invalid_type"),
        ("type: 42", "invalid_type"),
        ("type: {a: b}", "invalid_type"),
        ("type: true", "invalid_type"),
        ("type: ''", "missing_type"),
        ("type: '   '", "missing_type"),
        ("type:", "missing_type"),
        ("title: no type", "missing_type"),
    ],
)
def test_frontmatter_of_the_wrong_shape_is_reported(
    tmp_path: Path, yaml_text: str, code: str
) -> None:
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": fm(yaml_text)}))
    assert len(bundle) == 0
    assert codes(bundle) == [code]


def test_duplicate_keys_are_reported_and_the_concept_kept(tmp_path: Path) -> None:
    text = fm("type: A\ntitle: first\ntitle: second\ntags: [a]\ntags: [b]")
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": text}))
    assert bundle.concept("a").title == "second"
    assert codes(bundle) == ["duplicate_key", "duplicate_key"]


@pytest.mark.parametrize(
    "field",
    [
        "stale_after: 2026-02-30T00:00:00Z",
        "stale_after: 2026-13-01T00:00:00Z",
        "stale_after: 2026-01-01T25:61:00Z",
        "stale_after: 0000-01-01T00:00:00Z",
        "stale_after: 2026-02-29",
        "stale_after: !!timestamp 2026-02-30",
        "generated: {by: x/1, at: 2026-02-30T00:00:00Z}",
        "verified: [{by: 'human:a', at: 2026-02-30T00:00:00Z}]",
        "usage_window: {from: 2026-02-30T00:00:00Z, to: 99999-01-01T00:00:00Z}",
    ],
)
def test_impossible_dates_are_warned_and_the_concept_kept(tmp_path: Path, field: str) -> None:
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": fm("type: A\n" + field)}))
    assert len(bundle) == 1
    assert "invalid_field" in codes(bundle)
    assert_clean(Toolbox(bundle).read_concept(path="a"))


@pytest.mark.parametrize(
    "field",
    [
        "stale_after: '9999-12-31T23:59:59-23:59'",
        "verified: [{by: 'human:a', at: '0001-01-01T00:00:00+23:59'}]",
    ],
)
def test_datetimes_at_the_edge_of_the_range_are_warned_not_raised(
    tmp_path: Path, field: str
) -> None:
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": fm("type: A\n" + field)}))
    assert len(bundle) == 1 and "invalid_field" in codes(bundle)


NON_FINITE = fm(
    "type: A\ntitle: .nan\ndescription: -.inf\ntags: [.nan, .inf, ok]\n"
    "x: .nan\ny: [.inf, -.inf, {z: .NaN}]\nsources: [{resource: a.md, usage_count: .nan}]\n"
    "stale_after: .inf\nusage_window: {from: .nan, to: .inf}\n"
    "1: int key\nnull: null key\ntrue: bool key\n.nan: nan key\n? [1, 2]\n: seq key\n"
    "bin: !!binary aGVsbG8=\nset: !!set {a, b}\nomap: !!omap [a: 1, b: 2]\n"
    "big: " + "9" * 4000,
    body="NaN body [link](a.md)\n",
)


@pytest.fixture
def odd_values(tmp_path: Path) -> Toolbox:
    return Toolbox(Bundle.load(write(tmp_path / "b", {"a.md": NON_FINITE, "i.md": concept()})))


def test_nan_inf_odd_keys_and_tags_load_without_raising(tmp_path: Path) -> None:
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": NON_FINITE}))
    # The mapping with a sequence key is unhashable, so the whole block is refused...
    assert codes(bundle) == ["malformed_yaml"]
    hashable = NON_FINITE.replace("? [1, 2]\n: seq key\n", "")
    bundle = Bundle.load(write(tmp_path / "c", {"a.md": hashable}))
    assert len(bundle) == 1  # ...and without it, everything loads.
    assert as_json([w.message for w in bundle.warnings])


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_concept", {"path": "a"}),
        ("get_neighbors", {"path": "a"}),
        ("list_bundles", {}),
        ("list_concepts", {}),
        ("search_concepts", {"query": "nan body"}),
        ("grep_concepts", {"pattern": "NaN"}),
    ],
)
def test_tool_results_stay_strict_json_with_nan_inf_and_odd_keys(
    tmp_path: Path, tool: str, arguments: dict[str, object]
) -> None:
    text = NON_FINITE.replace("? [1, 2]\n: seq key\n", "")
    box = Toolbox(Bundle.load(write(tmp_path / "b", {"a.md": text})))
    call(box, tool, **arguments)  # strict JSON is checked inside


def huge_int(kind: str) -> str:
    if kind == "hex":
        return "0x" + "f" * 5000  # 20,000 bits: over the 4,300-digit int-to-str limit
    if kind == "binary":
        return "0b" + "1" * 20_000
    return "1" + ":1" * 6000  # YAML 1.1 base 60


@pytest.mark.parametrize("kind", ["hex", "binary", "base60"])
def test_a_huge_non_decimal_integer_keeps_tool_results_serialisable(
    tmp_path: Path, kind: str
) -> None:
    text = fm("type: A\nbig: " + huge_int(kind))
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": text}))
    result = Toolbox(bundle).read_concept(path="a")
    as_json(result)


@pytest.mark.parametrize("field", ["title", "description", "status", "tags"])
def test_a_huge_hex_integer_in_a_text_field_never_makes_load_raise(
    tmp_path: Path, field: str
) -> None:
    value = huge_int("hex") if field != "tags" else f"[{huge_int('hex')}]"
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": fm(f"type: A\n{field}: {value}")}))
    assert len(bundle) == 1 or codes(bundle) == ["malformed_yaml"]


def test_many_anchors_and_short_aliases_within_bounds_still_load(tmp_path: Path) -> None:
    lines = [f"a{i}: &a{i} v{i}" for i in range(2000)] + [f"b{i}: *a{i}" for i in range(2000)]
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": fm("type: A\n" + "\n".join(lines))}))
    assert bundle.concept("a").frontmatter["b1999"] == "v1999"


def parse_quietly(text: str) -> None:
    try:
        parse(text, Limits())
    except FrontmatterError:
        pass


def test_refusing_deep_brackets_costs_no_more_than_parsing_flat_yaml_of_that_size() -> None:
    deep = fm("type: A\nx: " + "[" * 1000)
    flat = fm("type: A\nx: [" + "1," * 500 + "]")
    assert len(deep) <= len(flat)
    assert per_call(parse_quietly, deep) < 20 * per_call(parse_quietly, flat)


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\ufffe"], ids=["nul", "escape", "nonchar"])
def test_a_non_printable_character_in_deep_yaml_is_malformed_not_a_crash(
    tmp_path: Path, char: str
) -> None:
    text = fm("type: A\nx: " + "[" * 70 + char)
    bundle = Bundle.load(write(tmp_path / "b", {"bad.md": text, "ok.md": concept()}))
    assert [c.path for c in bundle] == ["/ok.md"]
    assert codes(bundle, "/bad.md") == ["malformed_yaml"]


def test_indented_nesting_past_max_yaml_depth_is_refused(tmp_path: Path) -> None:
    text = fm("type: A\nx:\n" + indented(150))
    assert len(text) < 16_384
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": text}))
    assert codes(bundle) == ["malformed_yaml"]
