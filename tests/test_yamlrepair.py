"""A plain frontmatter value holding ": " is read as the text the author meant, reported
as ``unquoted_colon``; every other line, and every other YAML mistake, is left alone."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from conftest import MakeBundle
from okfx import Bundle, Toolbox
from okfx.bundle.frontmatter import FrontmatterError, parse
from okfx.bundle.problems import ERROR_CODES, problem_line
from okfx.bundle.validate import validate
from okfx.bundle.yamlrepair import quote_colon_values
from okfx.cli import render
from okfx.limits import Limits


def test_a_value_holding_a_colon_is_quoted_and_nothing_else_is() -> None:
    text = (
        "type: Approach\n"
        "title: 'Quoted: fine'\n"
        "description: RAG: search the docs, paste the winners\n"
        "tags: [a, b]\n"
        "  nested: x: y\n"
        "note: ends with a colon:\n"
        "other: has a comment # here: it is\n"
        'flow: {"a": 1}'
    )
    repaired = quote_colon_values(text)
    assert repaired is not None
    fixed, lines = repaired
    assert lines == [3, 6]
    assert fixed.split("\n")[2] == 'description: "RAG: search the docs, paste the winners"'
    assert fixed.split("\n")[5] == 'note: "ends with a colon:"'
    kept = [n for n in range(8) if n + 1 not in lines]
    assert [fixed.split("\n")[n] for n in kept] == [text.split("\n")[n] for n in kept]


def test_text_with_nothing_to_quote_gives_none() -> None:
    assert quote_colon_values("type: a\ntitle: plain text, no colon\n") is None


_PLAIN = st.text(alphabet="abcXYZ09 ,.-:/()é", min_size=1, max_size=40)


@given(before=_PLAIN, after=_PLAIN)
def test_a_repaired_value_reads_as_the_text_after_the_key(before: str, after: str) -> None:
    value = f"{before.strip()}: {after.strip()}".strip()
    line = f"description: {value}"
    try:
        yaml.safe_load(line)
    except yaml.YAMLError:
        pass
    else:
        return  # valid YAML as written: never rewritten by the loader
    repaired = quote_colon_values(line)
    if repaired is None:
        return  # a value the rewrite leaves alone (it opens like a flow or block value)
    assert yaml.safe_load(repaired[0]) == {"description": value}


def test_parse_reads_the_value_and_names_the_line() -> None:
    text = "---\ntype: Approach\ndescription: Fine-tuning: good for behaviour\n---\nBody\n"
    parsed = parse(text, Limits())
    assert parsed.data["description"] == "Fine-tuning: good for behaviour"
    assert parsed.quoted_lines == [2]


def test_another_mistake_still_fails_with_the_first_error() -> None:
    text = "---\ntype: a\ndescription: A: B\ntags: [unclosed\n---\nBody\n"
    with pytest.raises(FrontmatterError) as raised:
        parse(text, Limits())
    assert raised.value.code == "malformed_yaml"
    assert "mapping values are not allowed" in raised.value.problem
    assert raised.value.message.startswith("YAML error: the value of 'description' holds ': '")


def test_a_bundle_loads_the_concept_and_validate_reports_the_line(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {
            "approaches/rag.md": "---\ntype: Approach\ntitle: RAG\n"
            "description: Search the docs, paste the winners: the default answer\n---\n"
            "Retrieval, then generation.\n",
            "approaches/ok.md": "---\ntype: Approach\ntitle: OK\n---\nFine.\n",
        }
    )
    bundle = Bundle.load(root, state_cache=False)
    concept = bundle.get("/approaches/rag.md")
    assert concept.description == "Search the docs, paste the winners: the default answer"
    (problem,) = [p for p in bundle.warnings if p.code == "unquoted_colon"]
    assert problem.path == "/approaches/rag.md"
    assert problem_line(problem) == 4  # the file's line: after the opening ---
    # validate QA: the message names the key and the line as it must be written
    assert problem.message.startswith(
        "the value of 'description' holds ': ', which YAML reads as a second key: write the "
        'line as description: "Search the docs, paste the winners: the default answer"'
    )
    assert "unquoted_colon" in ERROR_CODES  # other consumers skip the file: §11 rule 1
    report = validate(bundle)
    assert any(p.code == "unquoted_colon" for p in report.errors)
    assert bundle.search("default answer")[0].path == "/approaches/rag.md"


def test_the_advised_line_is_never_cut_inside_its_quotes(make_bundle: MakeBundle) -> None:
    """CI QA: the advised line was cut at 60 characters inside the quotes; pasted, it
    passed validate and cut the title short (26 of the corpus's 30 advised lines). A value
    up to 240 characters quoted is written out whole; a longer one is said in words."""
    title = (
        "HashMap vs ConcurrentHashMap (CHM 1.8 源码: CAS+synchronized 桶锁/CounterCell/forwarding)"
    )
    long = "Notes: " + "a long description of the approach, " * 8
    root = make_bundle(
        {
            "a.md": f"---\ntype: Note\ntitle: {title}\n---\nText.\n",
            "b.md": f"---\ntype: Note\ndescription: {long.strip()}\n---\nText.\n",
        }
    )
    bundle = Bundle.load(root, state_cache=False)
    messages = {p.path: p.message for p in bundle.warnings if p.code == "unquoted_colon"}
    advised = messages["/a.md"].split("write the line as ", 1)[1].split("; okfx reads", 1)[0]
    fixed = root / "a.md"
    fixed.write_text(f"---\ntype: Note\n{advised}\n---\nText.\n", encoding="utf-8")
    again = Bundle.load(root, state_cache=False)
    assert again.get("/a.md").title == title  # the advice, pasted, keeps the whole title
    assert "/a.md" not in {p.path for p in again.warnings}
    said = messages["/b.md"]
    assert "put the whole value in double quotes, from 'Notes: a long description" in said
    assert "..." not in said.split("from ", 1)[1].split("'")[1]  # nothing cut in quotes


def test_a_repaired_concept_keeps_its_whole_frontmatter(make_bundle: MakeBundle) -> None:
    """flutter-okf's ``layout_passes.md``: the typed fields read through the repair, and so
    must the raw frontmatter (its ``id``, ``prerequisites`` and ``related``, the agent's
    extensions and the MCP resource's text), not an empty mapping; the CLI names the
    file's line, as every other problem does."""
    text = (
        "---\nid: demo.a\ntype: concept\ntitle: A\n"
        "description: Layout runs in passes: constraints down\nprerequisites: [demo.b]\n---\n"
        "Body.\n"
    )
    bundle = Bundle.load(make_bundle({"a.md": text}), state_cache=False)
    assert bundle.get("a").frontmatter == {
        "id": "demo.a",
        "type": "concept",
        "title": "A",
        "description": "Layout runs in passes: constraints down",
        "prerequisites": ["demo.b"],
    }
    payload = Toolbox(bundle).read_concept(path="a")
    assert payload["extensions"] == {"id": "demo.a", "prerequisites": ["demo.b"]}
    shown = render.report(validate(bundle))
    assert "a.md:5: the value of 'description' holds ': '" in shown and "(line 5)" not in shown


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("  - title: Guide: part 1", "the value of 'title' holds ': '"),
        ('title: a "b": c', 'title: "a \\"b\\": c"'),
        ("description: " + "x: " * 40, 'write the line as description: "x: x: '),
        ("description: " + "x: " * 90, "put the whole value in double quotes, from 'x: x: "),
        (": a: b", "a value holding ': ' must be quoted"),
    ],
)
def test_the_colon_fix_names_the_key_and_the_quoted_line(written: str, said: str) -> None:
    from okfx.bundle.yamlerrors import colon_fix

    assert said in colon_fix(written)
