"""The quick YAML reader returns exactly what the PyYAML path returns, or steps aside.

Every check compares :func:`okfx.bundle.quickyaml.quick_load` with the loader's PyYAML path
(``frontmatter._load_with_pyyaml``) on the same text: the same values with the same
types (``True`` is not ``1``, NaN equals NaN, ``-0.0`` is not ``0.0``), the same
duplicate keys, the same shared strings. None ("ask PyYAML") is always allowed, except
on documents written in the subset, which must be read.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okfx.bundle import frontmatter, quickyaml
from okfx.bundle.frontmatter import FrontmatterError, _load_with_pyyaml, load_yaml, split
from okfx.bundle.quickyaml import quick_load
from okfx.limits import Limits

LIMITS = Limits()
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
from conftest import NO_SAMPLES, SAMPLES  # noqa: E402

GEN_BUNDLE = SHARED / "bench" / "gen_bundle.py"


def same(a: Any, b: Any) -> bool:
    """Equal values of identical types, recursively, keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, dict):
        return (
            len(a) == len(b)
            and all(same(x, y) for x, y in zip(a, b, strict=True))
            and all(same(a[k], b[k]) for k in a)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def shared_everywhere(data: Any, strings: dict[str, str]) -> bool:
    """Every key and every string up to 32 characters is the object held in ``strings``."""
    if isinstance(data, dict):
        return all(strings.get(k) is k and shared_everywhere(v, strings) for k, v in data.items())
    if isinstance(data, list):
        return all(shared_everywhere(v, strings) for v in data)
    if isinstance(data, str) and len(data) <= 32:
        return strings.get(data) is data
    return True


def check(text: str) -> bool:
    """Assert the quick reader agrees with PyYAML on ``text``; whether it read it."""
    quick_strings: dict[str, str] = {}
    got = quick_load(text, quick_strings)
    if got is None:
        return False
    reference_strings: dict[str, str] = {}
    try:
        expected = _load_with_pyyaml(text, LIMITS, reference_strings)
    except FrontmatterError as exc:
        pytest.fail(f"read {text!r} as {got!r}, but PyYAML refuses it: {exc.message}")
    assert same(got[0], expected[0]), f"{text!r}: quick {got[0]!r} != PyYAML {expected[0]!r}"
    assert got[1] == expected[1], f"{text!r}: duplicate keys {got[1]} != {expected[1]}"
    assert quick_strings == reference_strings, text
    assert shared_everywhere(got[0], quick_strings), text
    return True


def test_strict_equality_tells_types_apart() -> None:
    assert same({"a": [1, "x"]}, {"a": [1, "x"]})
    assert same(float("nan"), float("nan"))
    assert not same(True, 1)
    assert not same(1, 1.0)
    assert not same(0.0, -0.0)
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same(None, "")


# -- documents written in the subset are read, as PyYAML reads them --------------------------


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ("pii: yes\nx: No\ny: OFF\nz: True\n", {"pii": True, "x": False, "y": False, "z": True}),
        ("a: ~\nb: null\nc:\nd: NULL\n", {"a": None, "b": None, "c": None, "d": None}),
        (
            "a: 010\nb: 0x1F\nc: 1_000\nd: 1:30\ne: -0b101\n",
            {"a": 8, "b": 31, "c": 1000, "d": 90, "e": -5},
        ),
        (
            "a: .5\nb: -.inf\nc: 1.0e+3\nd: 1e3\n",
            {"a": 0.5, "b": -math.inf, "c": 1000.0, "d": "1e3"},
        ),
        (
            "t: 2026-02-30\nu: 2026-01-01T00:00:00Z\n",
            {"t": "2026-02-30", "u": "2026-01-01T00:00:00Z"},
        ),
        ("tags: [a, b-c, 'd e', \"f g\"]\n", {"tags": ["a", "b-c", "d e", "f g"]}),
        (
            "verified: { by: human:ahormati, at: 2026-04-21T00:00:39Z }\n",
            {"verified": {"by": "human:ahormati", "at": "2026-04-21T00:00:39Z"}},
        ),
        (
            "generated:\n  by: x/1.0\n  at: '2026-01-01'\n",
            {"generated": {"by": "x/1.0", "at": "2026-01-01"}},
        ),
        (
            "sources:\n  - id: a\n    resource: https://a.b/c?d=1&e=2\n  - id: b\n",
            {"sources": [{"id": "a", "resource": "https://a.b/c?d=1&e=2"}, {"id": "b"}]},
        ),
        ("tags:\n- a\n- b\nnext: 1\n", {"tags": ["a", "b"], "next": 1}),
        ("d: one\n  two\n   three\n", {"d": "one two three"}),
        ("a: x # a comment\n# a full line\nb: 'q''t' # c\n", {"a": "x", "b": "q't"}),
        ("a: 1\na: 2\nb:\n  c: 1\n  c: 2\na: 3\n", {"a": 3, "b": {"c": 2}}),
        (
            "e: []\nf: {}\ng: [a,]\nh: {a: , b: 1}\n",
            {"e": [], "f": {}, "g": ["a"], "h": {"a": None, "b": 1}},
        ),
        ("- a\n- b: 1\n  c: 2\n-\n  - d\n", ["a", {"b": 1, "c": 2}, ["d"]]),
        ("", None),
        ("# only a comment\n\n", None),
    ],
)
def test_subset_documents_are_read_like_pyyaml(text: str, data: Any) -> None:
    assert check(text), f"{text!r} was left to PyYAML"
    got = quick_load(text)
    assert got is not None and same(got[0], data)


def test_nan_is_read() -> None:
    got = quick_load("x: .nan\ny: .NaN\n")
    assert got is not None and math.isnan(got[0]["x"]) and math.isnan(got[0]["y"])
    assert check("x: .nan\n")
    # PyYAML's own NaN object: dicts holding it compare equal only through identity.
    assert got[0]["x"] is _load_with_pyyaml("x: .nan\n", LIMITS, {})[0]["x"]


def test_duplicate_keys_are_reported_once_in_order_of_reading() -> None:
    text = "b: 1\na:\n  x: 1\n  x: 2\n  x: 3\nb: 2\nv: {k: 1, k: 2}\n"
    assert check(text)
    assert quick_load(text) == (
        {"b": 2, "a": {"x": 3}, "v": {"k": 2}},
        ["x", "b", "k"],
    )
    # A repeated key is reported before the duplicates inside its value, as PyYAML does.
    assert check("a: 1\na:\n  x: 1\n  x: 2\n")
    assert quick_load("a: 1\na:\n  x: 1\n  x: 2\n") == ({"a": {"x": 2}}, ["a", "x"])


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",  # anchors, aliases
        "a: !!str 1\n",  # tags
        "a: |\n  text\n",  # block scalars
        "a: >\n  text\n",
        "? a\n: b\n",  # complex keys
        "%YAML 1.1\n---\na: 1\n",  # directives, markers
        "---\na: 1\n",
        "a: 1\n...\n",
        "a:\n\tb: 1\n",  # tabs
        "a: 'one\n  two'\n",  # quoted scalars over lines
        'a: "x\\ty"\n',  # escapes
        "a: [b, [c]]\n",  # nested flow
        "base: {x: 1}\nd:\n  <<: {y: 2}\n",  # merge keys
        "1: a\n",  # keys that are not strings
        "yes: a\n",
        "'quoted key': a\n",
        "a: one\n\n  two\n",  # a blank line in a scalar
        "a: x\r\nb: y\r\n",  # CR
        "a: \x00\n",  # control characters
        "a: 1:30.5\n",  # base-60 float
        "a: [a?b]\n",  # "?" in a flow scalar: PyYAML and libyaml differ
        "a: b: c\n",  # invalid: PyYAML raises, the reader must not answer
        "a: b:\n",
        "- a\n-x\n",
        "k:\n- a\n-x: 1\n",  # valid, but keys starting with "-" are left to PyYAML
        "a: [b\n",
        "  a: 1\nb: 2\n",
        "a:\n  b: 1\n c: 2\n",
        "a: 9" + "9" * 200 + "\n",
    ],
)
def test_outside_the_subset_is_left_to_pyyaml(text: str) -> None:
    assert quick_load(text) is None
    check(text)


def test_depth_and_node_bounds_are_left_to_pyyaml() -> None:
    deep = "a:\n  b:\n    c: 1\n"
    assert quick_load(deep, max_depth=3) is None
    assert quick_load(deep, max_depth=4) is not None
    with pytest.raises(FrontmatterError):
        load_yaml(deep, Limits(max_yaml_depth=2))
    assert quick_load("a: [1, 2, 3]\n", max_nodes=10) is None


@pytest.mark.parametrize(
    "text",
    [
        "k: [a" + " " * 50_000 + "b\n",  # backtracking through the spaces was quadratic
        "k: {a: b" + " " * 50_000 + "c\n",
        "k: ['a'" + " " * 50_000 + "\n",
        "k: '" + "''" * 25_000 + "\n",
        "k" + " " * 50_000 + "x: 1\n",
        "k: a\n" + "  b\n" * 10_000,
    ],
)
def test_hostile_text_is_read_or_refused_in_linear_time(text: str) -> None:
    start = time.perf_counter()
    quick_load(text, {}, max_nodes=10**9)
    assert time.perf_counter() - start < 1.0


def test_load_yaml_takes_the_quick_path_and_shares_strings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_pyyaml(*args: object) -> object:
        raise AssertionError("the PyYAML path was taken")

    monkeypatch.setattr(frontmatter, "_load_with_pyyaml", no_pyyaml)
    strings: dict[str, str] = {}
    first, _ = load_yaml("type: Metric\ntags: [kpi]\n", LIMITS, strings)
    second, _ = load_yaml("type: Metric\ntags:\n- kpi\n", LIMITS, strings)
    assert first["tags"][0] is second["tags"][0] is strings["kpi"]
    assert next(iter(first)) is next(iter(second))


def test_the_resolver_table_is_the_loaders() -> None:
    loader_table = frontmatter._FastLoader._by_first
    assert set(quickyaml._BY_FIRST) == set(loader_table)
    for first, entries in quickyaml._BY_FIRST.items():
        assert [(tag, rx.pattern) for tag, rx in entries] == [
            (tag, rx.pattern) for tag, rx in loader_table[first]
        ]
    assert quickyaml._WILDCARD == frontmatter._FastLoader._wildcard == ()
    assert quickyaml._SHARED_MAX == frontmatter._SHARED_MAX


_NUMBER_PATTERNS = [
    rx
    for entries in quickyaml._BY_FIRST.values()
    for tag, rx in entries
    if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
]


@given(st.text(alphabet="0123456789_:.+-eExXbBoOaAfFiInNTZ ", max_size=12))
@settings(max_examples=500, deadline=None)
def test_every_number_pyyaml_resolves_uses_only_number_characters(text: str) -> None:
    if any(rx.match(text) for rx in _NUMBER_PATTERNS):
        assert not text.lstrip(quickyaml._NUMBER_CHARS)


# -- generated documents: the subset's shapes, then nasty ones -------------------------------

HEALTHY_SCALARS = [
    "stable", "Reference", "API Endpoint", "yes", "No", "on", "OFF", "true", "~", "null",
    "010", "0x1F", "-0b101", "1_000", "1:30", "-5", "+3", "0", ".5", "1.5", "-.inf", ".nan",
    "1e3", "2026-02-30", "2026-01-01T00:00:00Z", "human:ahormati", "process:x-nightly",
    "docs_bot/1.4.2", "https://wiki.example.com/a/b?c=1&d=2", "a b  c", "héllo wörld",
    "日本語", "😀 ok", "x" * 40, "-x", "a#b", "it's", 'say "hi"', "a[0]", "a{b}", "--",
]  # fmt: skip
HEALTHY_FLOW = [s for s in HEALTHY_SCALARS if not re.search(r"[\[\]{},#?]", s)]
HEALTHY_KEYS = ["type", "title", "a", "b", "tags", "usage_count", "key with space", "é"]
HEALTHY_WORDS = ["more", "text here", "and-more", "x/y", "日本"]

TRICKY = [
    "yes", "No", "ON", "off", "y", "n", "0x1F", "-0x1f", "0b101", "0b", "010", "08", "0o17",
    "1_000", "1__0", "_1", "1:30", "-1:30:59", "1:60", "190:20:30", ".5", "1.", "-1.5", "1e3",
    "1.0e+3", "1.0e3", "1:30.5", ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "-", "--", "---",
    "...", "~", "null", "Null", "nULL", "", "2026-02-30", "2026-01-01T00:00:00Z",
    "2001-12-14 21:59:43.10 -5", "a: b", "a #b", "a#b", "#x", "'q''t'", "'", '"d\\"q"', '"',
    "[", "]", "{", "}", ",", "a,b", "&a", "*a", "!tag", "!!str x", "|", ">", "%", "@", "`",
    "?", "?x", ":x", "x:", "a:b", "-x", "- x", "<<", "=", "héllo", "日本", "😀", "a\xa0b",
    "\xa0", "trail  ", " lead", "tab\there", "a  b", "human:ahormati", "x" * 40, "0", "-0",
    "-0.0", "+1", "a\\b", "\ufeff", "\u2028", "\x85", "é:", "[a]", "{a: b}", "a:\n  b",
]  # fmt: skip
TRICKY_KEYS = [
    *HEALTHY_KEYS, "yes", "1", "null", "~", "<<", "a#b", "a #b", "-k", "?k", "'q'", '"d"',
    "k:", "x" * 40, "[k]", "k k", "=", "a\tb", "",
]  # fmt: skip


def _quoted(values: list[str], only_valid: bool) -> st.SearchStrategy[str]:
    """The values plain, single-quoted and double-quoted (as they are: ``"a"b"`` too,
    unless ``only_valid``)."""
    base = st.sampled_from(values)
    double = [v for v in values if '"' not in v and "\\" not in v] if only_valid else values
    return st.one_of(
        base,
        base.map(lambda v: "'" + v.replace("'", "''") + "'"),
        st.sampled_from(double).map(lambda v: '"' + v + '"'),
    )


# Each tricky scalar in each place a scalar can take, plain and quoted.
PLACES = [
    "k: {}\n", "k: {} # c\n", "- {}\n", "k:\n  - {}\n", "k:\n- {}\nj: 1\n", "k: [{}]\n",
    "k: [a, {}, b]\n", "k: {{a: {}}}\n", "k: {{a: {}, b: 1}}\n", "{}: v\n", "- {}: v\n",
    "k: {}\n  more\n", "- {}\n  more\n", "- k: {}\n  j: 1\n", "k:\n  j: {}\n",
]  # fmt: skip


@pytest.mark.parametrize("place", PLACES)
def test_tricky_scalars_in_every_place_are_read_like_pyyaml(place: str) -> None:
    for value in TRICKY:
        for written in (value, "'" + value.replace("'", "''") + "'", '"' + value + '"'):
            check(place.format(written))


@st.composite
def documents(
    draw: st.DrawFn,
    scalars: st.SearchStrategy[str],
    flow_scalars: st.SearchStrategy[str],
    keys: st.SearchStrategy[str],
    words: st.SearchStrategy[str],
) -> str:
    """A frontmatter-like document: block mappings and sequences (also compact ones and
    sequences at their key's indentation), flow collections, folded plain scalars."""
    lines: list[str] = []

    def inline_and_below(indent: int, depth: int, in_mapping: bool) -> str:
        kinds = ["scalar", "scalar", "folded", "flow_seq", "flow_map", "empty"]
        kinds += ["map", "seq"] if depth < 4 else []
        kind = draw(st.sampled_from(kinds))
        if kind == "scalar":
            return " " + draw(scalars)
        if kind == "folded":
            more = draw(st.lists(words, min_size=1, max_size=2))
            step = draw(st.integers(1, 3))
            lines_after = [" " * (indent + step) + w for w in more]
            pending.extend(lines_after)
            return " " + draw(words)
        if kind == "flow_seq":
            items = draw(st.lists(flow_scalars, max_size=4))
            return " [" + draw(st.sampled_from([", ", ",", " , "])).join(items) + "]"
        if kind == "flow_map":
            pairs = draw(st.lists(st.tuples(keys, flow_scalars), max_size=3))
            return " { " + ", ".join(f"{k}: {v}" for k, v in pairs) + " }"
        if kind == "empty":
            return ""
        step = draw(st.integers(1, 3))
        if kind == "map":
            deferred.append(("map", indent + step, depth + 1))
        else:
            same_column = in_mapping and draw(st.booleans())
            deferred.append(("seq", indent if same_column else indent + step, depth + 1))
        return ""

    pending: list[str] = []
    deferred: list[tuple[str, int, int]] = []

    def flush() -> None:
        lines.extend(pending)
        pending.clear()
        while deferred:
            kind, indent, depth = deferred.pop()
            (mapping if kind == "map" else sequence)(indent, depth, "")

    def mapping(indent: int, depth: int, dash: str) -> None:
        for n in range(draw(st.integers(1, 4))):
            prefix = dash if n == 0 and dash else " " * indent
            key = draw(keys)
            lines.append(prefix + key + ":" + inline_and_below(indent, depth, True))
            flush()

    def sequence(indent: int, depth: int, _dash: str) -> None:
        for _ in range(draw(st.integers(1, 3))):
            if depth < 4 and draw(st.booleans()):
                spaces = draw(st.integers(1, 3))
                mapping(indent + 1 + spaces, depth + 1, " " * indent + "-" + " " * spaces)
            else:
                lines.append(" " * indent + "-" + inline_and_below(indent, depth, False))
                flush()

    mapping(draw(st.integers(0, 2)), 1, "")
    return "\n".join(lines) + "\n"


healthy = documents(
    _quoted(HEALTHY_SCALARS, only_valid=True),
    _quoted(HEALTHY_FLOW, only_valid=True),
    st.sampled_from(HEALTHY_KEYS),
    st.sampled_from(HEALTHY_WORDS),
)
nasty_scalars = st.one_of(
    _quoted(HEALTHY_SCALARS, only_valid=True),
    _quoted(TRICKY, only_valid=False),
    st.text(max_size=6),
    st.text(alphabet=" -:#'\"[]{},&*!|>?%@`\\ax", max_size=6),
)
nasty = documents(
    nasty_scalars,
    nasty_scalars,
    st.one_of(st.sampled_from(HEALTHY_KEYS), st.sampled_from(TRICKY_KEYS), st.text(max_size=4)),
    st.one_of(st.sampled_from(TRICKY), st.sampled_from(HEALTHY_WORDS)),
)
NOISE = [
    " ", "  ", "\t", "\r", "\n", "\n\n", "\r\n", "#", " #", " # c", ":", ": ", "-", "- ", "?",
    ",", "[", "]", "{", "}", "'", '"', "\\", "&", "*", "!", "|", ">", "%", "@", "`", "~",
    "\xa0", "\x85", "\u2028", "\ufeff", "\x00", "é", "\n---\n", "\n...\n", "<<: ", "\n  ",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> str:
    """``texts`` with a few characters inserted, deleted or doubled anywhere."""
    text = draw(texts)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "insert", "delete", "double_line"]))
        if action == "insert":
            text = text[:at] + draw(st.sampled_from(NOISE)) + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 3)) :]
        else:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            line = text[start : end + 1 if end >= 0 else len(text)]
            text = text[:start] + line + text[start:]
    return text


@given(healthy)
@settings(max_examples=400, deadline=None)
def test_documents_in_the_subset_are_all_read_like_pyyaml(text: str) -> None:
    assert check(text), f"{text!r} was left to PyYAML"


@given(st.one_of(nasty, mutated(healthy), mutated(nasty)))
@settings(max_examples=1500, deadline=None)
def test_any_document_is_read_like_pyyaml_or_left_to_it(text: str) -> None:
    check(text)


@given(st.lists(st.sampled_from([*NOISE, "a", "b", "1", "yes", "x: "]), max_size=20).map("".join))
@settings(max_examples=800, deadline=None)
def test_arbitrary_text_never_raises_and_never_differs(text: str) -> None:
    check(text)


# -- real frontmatter ---------------------------------------------------------------------------


def _frontmatters(root: Path) -> list[tuple[Path, str]]:
    found = []
    for path in sorted(root.rglob("*.md")):
        try:
            yaml_text = split(path.read_text(encoding="utf-8").replace("\r\n", "\n"))[0]
        except FrontmatterError:
            continue
        if yaml_text is not None:
            found.append((path, yaml_text))
    return found


def test_sample_bundles_are_read_like_pyyaml() -> None:
    if not SAMPLES.is_dir():
        pytest.skip(NO_SAMPLES)
    frontmatters = _frontmatters(SAMPLES)
    read = sum(check(text) for _, text in frontmatters)
    assert frontmatters
    # All 54 are today (folded descriptions, quoted timestamps, block sources included).
    assert read >= 0.9 * len(frontmatters), f"{read} of {len(frontmatters)} read"


def test_a_generated_bundle_is_read_like_pyyaml(tmp_path: Path) -> None:
    if not GEN_BUNDLE.is_file():
        pytest.skip("needs the bundle generator of ../shared/bench beside the checkout")
    out = tmp_path / "okf-300"
    subprocess.run(
        [sys.executable, str(GEN_BUNDLE), "--concepts", "300", "--out", str(out)],
        check=True,
        capture_output=True,
    )
    frontmatters = _frontmatters(out)
    read = sum(check(text) for _, text in frontmatters)
    assert len(frontmatters) >= 300
    assert read >= 0.95 * len(frontmatters), f"{read} of {len(frontmatters)} read"
