"""``okfx validate --format github``: an annotation names the line when the problem does."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx import Bundle, validate
from okfx.bundle.validate import version_note
from okfx.cli.commands import cli

ANNOTATION = re.compile(r"^::(error|warning) file=([^,]+)(?:,line=(\d+))?,title=okfx (\w+)::")


def test_annotations_carry_the_line_the_message_knows(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": "---\ntype: Metric\ntitle: A\n---\n# A\n\nSee [gone](gone.md).\n",
            "b.md": "---\ntype: Metric\ntitle: [unclosed\n---\nbody\n",
            "c.md": "---\ntype: Metric\nstatus: weird\n---\nbody\n",
            "d.md": "---\ntitle: no type\n---\nno line here\n",
            "forged.md": "---\ntype: Metric\n---\nSee [x](</x (line 1).md>) (line 2)\n",
        }
    )
    result = CliRunner().invoke(cli, ["validate", str(root), "--format", "github"])
    found = {
        match.group(2).rsplit("/", 1)[-1]: (match.group(4), match.group(3))
        for line in result.output.splitlines()
        if (match := ANNOTATION.match(line))
    }
    files = {name: (root / name).read_text().splitlines() for name in ("a.md", "b.md", "c.md")}
    code, line = found["a.md"]
    assert code == "broken_link" and line == "7"
    assert "gone.md" in files["a.md"][int(line) - 1]
    code, line = found["b.md"]
    assert code == "malformed_yaml" and line is not None
    assert "[unclosed" in files["b.md"][int(line) - 1] or int(line) in (3, 4)
    code, line = found["c.md"]
    assert code == "unknown_status" and files["c.md"][int(line) - 1] == "status: weird"
    assert found["d.md"] == ("missing_type", None)  # the message names no line: none is given
    assert found["forged.md"][1] == "4"  # the line okfx found, not text in the link


def test_a_yaml_error_names_the_line_where_reading_began_and_type_in_words(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {
            "a.md": "---\ntype: Note\ntitle: x\n[resource: <url>]\nstatus: ok\n---\nbody\n",
            "b.md": "---\ntype: 5\n---\n",
        }
    )
    by_path = {w.path: w.message for w in Bundle.load(root).warnings}
    assert by_path["/a.md"] == (
        "YAML error: this line starts with '[', so YAML read it as a list used as a key, "
        "and no ':' follows: write 'key: value' (resource: <url>), or make the line a comment "
        "by starting it with '#' (line 4)"
    )  # line 4 of the file, "[resource: <url>]", not line 5 where YAML gave up
    shown = CliRunner().invoke(cli, ["validate", str(root)]).output
    assert f"{root.as_posix()}/a.md:4: YAML error: " in shown and "line 5" not in shown
    assert (
        by_path["/b.md"] == "'type' is a number; it must be a non-empty string (quote it) (line 2)"
    )


def test_trust_field_messages_say_what_is_missing_and_what_is_allowed(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {
            "a.md": "---\ntype: T\ngenerated: {at: 2026-01-01T00:00:00Z}\n---\n",
            "b.md": "---\ntype: T\nverified: [{by: 'human:ana'}]\n---\n",
            "c.md": "---\ntype: T\nverified: yes\n---\n",
        }
    )
    bundle = Bundle.load(root)
    by_path = {w.path: w.message for w in bundle.warnings}
    assert by_path == {
        "/a.md": "generated has no 'by' (spec §5.2 requires an actor) (line 3)",
        "/b.md": "verified[0] has no 'at' (spec §5.2: each event has by and at); "
        "kept without a date (line 3)",
        "/c.md": "verified must be a mapping or a list of mappings, not true or false; "
        "ignored, so the concept counts as unverified (spec §5.3): write verified: "
        "[{by: human:jane, at: 2026-06-25T09:00:00Z}] with the reviewer's id and the "
        "review's time (§5.2) (line 3)",
    }
    assert bundle.concept("b").trust_tier == "human-reviewed"  # the tier reads 'by' alone


def test_json_problems_carry_the_line_as_a_field(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": "---\ntype: Metric\n---\n# A\n\nintro\n\nSee [gone](gone.md).\n",
            "b.md": "---\ntype: Metric\ntitle: [unclosed\n---\nbody\n",
            "c.md": "---\ntitle: no type\n---\n",
        }
    )
    result = CliRunner().invoke(cli, ["validate", str(root), "--json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    problems = {p["path"]: p for p in data["errors"] + data["warnings"]}
    assert all(set(p) == {"path", "code", "message", "line"} for p in problems.values())
    lines = (root / "a.md").read_text().splitlines()
    assert "gone.md" in lines[problems["/a.md"]["line"] - 1]
    assert problems["/b.md"]["code"] == "malformed_yaml"
    assert isinstance(problems["/b.md"]["line"], int)
    assert problems["/c.md"]["line"] is None  # a whole-file problem: no line
    text = CliRunner().invoke(cli, ["validate", str(root)]).output
    # The text report names the file as a compiler does, at the line the JSON gives.
    assert f"{root.as_posix()}/a.md:8: body link 'gone.md' leads to /gone.md, which" in text
    assert "(line 8)" not in text


def test_a_broken_frontmatter_link_names_the_line_of_its_field(make_bundle: MakeBundle) -> None:
    text = (
        "---\ntype: Attested Computation\nresource: ./gone.md\nsources:\n"
        "  - resource: /b.md\n    title: fine\n  - title: x\n    resource: nothere.md\n"
        "  - {resource: also/missing.md}\ncomputation: q.sql\n"
        "executor:\n  runtime: duckdb\n  resource: run/gone.md\n---\n# Computation\n"
    )
    root = make_bundle({"a.md": text, "b.md": "---\ntype: Note\n---\nb\n"})
    lines = text.splitlines()
    links = Bundle.load(root).concept("a").links
    assert [link.field for link in links] == [
        "resource",
        "sources[0].resource",
        "sources[1].resource",
        "sources[2].resource",
        "computation",
        "executor.resource",
    ]
    for link in links:  # the line holds the field's value as written
        assert link.href in lines[link.line - 1], link
    result = CliRunner().invoke(cli, ["validate", str(root), "--format", "github"])
    broken = [
        int(match.group(3))
        for line in result.output.splitlines()
        if (match := ANNOTATION.match(line)) and match.group(4) == "broken_link"
    ]
    assert sorted(broken) == [3, 8, 9, 10, 13]


def test_link_footnote_and_log_problems_name_their_line(make_bundle: MakeBundle) -> None:
    """Seen on the real corpus without a line: 783 body links leaving one bundle, sources
    outside another, unknown footnotes, log headings that are no dates, a log out of
    order. Each now names the line an author has to change."""
    from okfx.bundle.problems import problem_dict

    files: dict[str, str | bytes] = {
        "a.md": (
            "---\ntype: T\nsources:\n  - id: s\n    resource: https://x.org\n"
            "  - resource: ../outside/README.md\n---\n# A\n\n```\n[^nope] in code\n```\n"
            "Text [^nope] and [^s].\n\n[up](../../etc/passwd)\n"
        ),
        "log.md": (
            "# Log\n\n## 2026-01-02\n- one\n\n## Someday\n- two\n\n## 2026-03-01\n- three\n"
        ),
    }
    root = make_bundle(files)
    lines = {name: str(text).split("\n") for name, text in files.items()}
    seen = {}
    for problem in map(problem_dict, Bundle.load(root).warnings):
        assert problem["line"] is not None, problem
        seen[problem["code"]] = lines[problem["path"][1:]][problem["line"] - 1]
    assert seen == {
        "source_outside_bundle": "  - resource: ../outside/README.md",
        "unknown_footnote": "Text [^nope] and [^s].",  # not the mention in code
        "unsafe_link": "[up](../../etc/passwd)",
        "log_section": "## Someday",
        "log_order": "## 2026-03-01",
    }


@pytest.mark.parametrize(
    ("declared", "said"),
    [
        (None, None),
        ("0.2", None),
        ("0.1", None),
        ("0.0", None),
        ("0.3", "a newer minor version"),
        ("9.9", "a major version"),
        ("v0.2", "no <major>.<minor> version"),
        ("latest", "no <major>.<minor> version"),
    ],
)
def test_a_version_okfx_does_not_read_as_specified_is_a_note(
    declared: str | None, said: str | None
) -> None:
    """§12: best-effort consumption, so a note (the check cannot look at what a later
    version adds), never a problem. Another validator's fixture declares "9.9"; okfx said
    nothing of it but the version in the verdict line."""
    note = version_note(declared)
    assert (note is None) == (said is None)
    if said is not None:
        assert note is not None and said in note and str(declared) in note


def test_the_note_reaches_the_report_and_not_the_verdict(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {"index.md": '---\nokf_version: "9.9"\n---\n# A\n\n* [A](a.md) - a\n', "a.md": concept()}
    )
    report = validate(Bundle.load(root))
    assert report.conformant and report.warning_count == 0
    assert [n for n in report.notes if "okf_version 9.9" in n]


def test_a_nested_duplicate_key_names_its_line_and_its_mapping(make_bundle: MakeBundle) -> None:
    """Validate QA: a key repeated inside a source entry or a flow mapping was reported
    with no line and without its parent; a top-level one had its line."""
    text = (
        "---\ntype: Note\nsources:\n  - id: s\n    resource: https://x\n"
        "    resource: https://y\ngenerated: { by: 'human:a', by: 'human:b' }\n"
        "title: T\ntitle: U\n---\nBody.\n"
    )
    bundle = Bundle.load(make_bundle({"a.md": text}))
    said = [w.message for w in bundle.warnings if w.code == "duplicate_key"]
    assert [m.split(",")[0] for m in said] == [
        "frontmatter key 'resource' appears twice in sources[0]",
        "frontmatter key 'by' appears twice in generated",
        "frontmatter key 'title' appears twice",
    ]
    assert [m.rsplit("(line ", 1)[1] for m in said] == ["6)", "7)", "9)"]
