"""Text fields written as plain values YAML types as numbers or booleans are read as
written (``okfx.bundle.written``): ``tags: [python, 3.10]`` holds ``3.10``, not 3.1."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import MakeBundle
from okfx import Bundle, validate
from okfx.bundle.written import typed_text_paths, with_written, written_scalars

NORWAY = """---
type: Country
title: 0012
description: 10:30
tags: [NO, python, 3.10, 2024, "1.50"]
sources:
  - id: 01
    resource: https://example.org/a
    title: 1.50
---
Read [^01].
"""


def test_text_fields_keep_what_was_written(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({"a.md": NORWAY}))
    (c,) = bundle
    assert c.title == "0012"  # not "10" (YAML 1.1 reads a leading 0 as octal)
    assert c.description == "10:30"  # not "630" (base 60)
    assert c.tags == ("NO", "python", "3.10", "2024", "1.50")
    assert c.sources[0].id == "01" and c.sources[0].title == "1.50"
    # The footnote written [^01] now finds its source.
    assert c.citations == ("01",) and c.source_for("01") is c.sources[0]
    # What YAML read is still there, raw.
    assert c.frontmatter["tags"][:3] == [False, "python", 3.1]
    found = [(w.code, w.message) for w in bundle.warnings]
    assert [code for code, _ in found] == ["unquoted_scalar"] * 6
    messages = dict((m.split(" is written")[0], m) for _, m in found)
    # 2024 reads "2024" either way, and a quoted value is text: neither is reported.
    assert sorted(messages) == [
        "description",
        "sources[0].id",
        "sources[0].title",
        "tags[0]",
        "tags[2]",
        "title",
    ]
    assert "YAML reads as false" in messages["tags[0]"]
    assert "the number 3.1;" in messages["tags[2]"]
    assert messages["title"].endswith("(line 3)")
    assert messages["tags[2]"].endswith("(line 5)")
    assert messages["sources[0].id"].endswith("(line 7)")
    assert messages["sources[0].title"].endswith("(line 9)")


def test_a_warning_not_an_error(make_bundle: MakeBundle) -> None:
    report = validate(Bundle.load(make_bundle({"a.md": NORWAY})))
    assert report.conformant
    assert {p.code for p in report.warnings} == {"unquoted_scalar"}


def test_a_type_yaml_reads_as_a_boolean_or_number_is_kept_as_written(
    make_bundle: MakeBundle,
) -> None:
    """Spec QA: ``type: Yes`` (text to YAML 1.2, true to YAML 1.1) was invalid_type, the
    concept dropped and the bundle not conformant; ``type: 3.10`` read 3.1."""
    files: dict[str, str | bytes] = {
        "a.md": "---\ntype: Yes\n---\nA.\n",
        "b.md": "---\ntype: off\n---\nB.\n",
        "c.md": "---\ntype: true\n---\nC.\n",  # a boolean to YAML 1.2 too
        "d.md": "---\ntype: 3.10\n---\nD.\n",  # a number to both
    }
    bundle = Bundle.load(make_bundle(files))
    assert {c.path: c.type for c in bundle} == {"/a.md": "Yes", "/b.md": "off"}
    said = {w.path: (w.code, w.message) for w in bundle.warnings}
    assert said["/a.md"][0] == "unquoted_scalar" and "1.1 reads as true" in said["/a.md"][1]
    assert said["/b.md"][0] == "unquoted_scalar" and "(line 2)" in said["/b.md"][1]
    assert said["/c.md"][0] == said["/d.md"][0] == "invalid_type"
    assert bundle.get("/a.md").frontmatter["type"] is True  # type: ignore[union-attr]


def test_a_bare_source_mapping_and_aliases(make_bundle: MakeBundle) -> None:
    text = (
        "---\ntype: T\ntags:\n  - &v 3.10\n  - *v\n  - yes\n"
        "sources: {id: 007, resource: https://example.org}\n---\nBody\n"
    )
    (c,) = Bundle.load(make_bundle({"a.md": text}))
    assert c.tags == ("3.10", "yes")
    assert c.sources[0].id == "007"


def test_quoted_and_plain_text_cost_nothing(make_bundle: MakeBundle) -> None:
    text = '---\ntype: T\ntitle: "0012"\ntags: [a, "3.10", \'NO\']\n---\nBody\n'
    bundle = Bundle.load(make_bundle({"a.md": text}))
    assert bundle.warnings == []
    assert next(iter(bundle)).tags == ("a", "3.10", "NO")
    assert typed_text_paths({"type": "T", "title": "0012", "tags": ["a"]}) == {}


def test_with_written_copies_and_leaves_the_data_alone() -> None:
    data = {"type": "T", "tags": [False, "x"], "sources": {"id": 1, "resource": "r"}}
    out = with_written(data, {"tags[0]": "NO", "sources[0].id": "01"})
    assert out["tags"] == ["NO", "x"] and out["sources"] == [{"id": "01", "resource": "r"}]
    assert data == {"type": "T", "tags": [False, "x"], "sources": {"id": 1, "resource": "r"}}


def test_text_that_does_not_compose_keeps_the_typed_reading() -> None:
    assert written_scalars("title: [unclosed", ["title"]) == {}
    assert written_scalars("title: 1.10\n", ["title", "tags[0]", "sources[3].id"]) == {
        "title": "1.10"
    }


# Plain scalars YAML 1.1 types as numbers or booleans, in the forms people write.
_TYPED = st.one_of(
    st.sampled_from(["yes", "No", "ON", "off", "true", "FALSE", "y", ".inf", "-.Inf"]),
    st.integers(0, 10**6).map(lambda n: f"0{n}"),  # leading zero: octal, or an int
    st.integers(0, 999).map(lambda n: f"{n}.{n % 7}0"),  # trailing zero: 3.10
    st.tuples(st.integers(1, 59), st.integers(0, 59)).map(lambda t: f"{t[0]}:{t[1]:02d}"),
    st.integers(1, 10**6).map(lambda n: f"0x{n:X}"),
    st.integers(1, 10**6).map(lambda n: f"{n:_}"),
)


# make_bundle gives a fresh folder on each call, so sharing it between examples is safe.
@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_TYPED, min_size=1, max_size=6, unique=True), st.booleans())
def test_every_typed_tag_reads_as_written(
    make_bundle: MakeBundle, words: list[str], flow: bool
) -> None:
    tags = (
        f"tags: [{', '.join(words)}]\n"
        if flow
        else "tags:\n" + "".join(f"  - {w}\n" for w in words)
    )
    text = f"---\ntype: T\n{tags}---\nBody\n"
    typed = yaml.safe_load(text.split("---")[1])["tags"]
    bundle = Bundle.load(make_bundle({"a.md": text}))
    (c,) = bundle
    assert c.tags == tuple(words)
    reported = sum(isinstance(v, bool) or str(v) != w for v, w in zip(typed, words, strict=True))
    assert len(bundle.warnings) == reported


def test_beside_a_repaired_colon_value_tags_still_read_as_written(
    make_bundle: MakeBundle,
) -> None:
    """Docs audit: a frontmatter that loads only with its ': ' value quoted did not
    compose as written, and its tags went the YAML way (3.10 as 3.1, NO dropped)."""
    root = make_bundle(
        {
            "a.md": "---\ntype: Metric\ntags: [python, 3.10, NO]\n"
            "description: RAG: search, then paste\n---\nx\n"
        }
    )
    bundle = Bundle.load(root, state_cache=False)
    concept = bundle.get("a")
    assert concept.tags == ("python", "3.10", "NO")
    assert concept.description == "RAG: search, then paste"
    codes = sorted(w.code for w in bundle.warnings)
    assert codes == ["unquoted_colon", "unquoted_scalar", "unquoted_scalar"]
