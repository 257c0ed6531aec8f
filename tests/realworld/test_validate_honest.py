"""okfx validate on real-world shapes: every problem counted, grouped by code, honest
about empty folders (issue 17, items 1 and 6)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx import Bundle, Limits, Toolbox, validate
from okfx.cli.commands import cli


def broken_links(n: int, prefix: str = "gone") -> str:
    return "\n".join(f"[x{i}](/{prefix}{i}.md)" for i in range(n))


def test_an_error_past_the_warning_cap_still_fails_validation(make_bundle: MakeBundle) -> None:
    root = make_bundle({"a.md": concept(body=broken_links(20)), "zz.md": "# no frontmatter\n"})
    bundle = Bundle.load(root, limits=Limits(max_warnings=5))
    report = validate(bundle)
    assert not report.conformant
    assert [(p.path, p.code) for p in report.errors] == [("/zz.md", "no_frontmatter")]
    assert report.counts()["broken_link"] == 20  # counted, though 5 were recorded
    assert "1 error," in report.summary() and "20 warnings" in report.summary()
    assert bundle.problem_counts()["broken_link"] == 20


def test_cli_validate_fails_on_one_error_after_more_warnings_than_the_cap(
    make_bundle: MakeBundle,
) -> None:
    files: dict[str, str | bytes] = {
        f"c{i}.md": concept(body=broken_links(4_000, f"g{i}-")) for i in range(3)
    }
    files["zz.md"] = "no frontmatter at all\n"
    root = make_bundle(files)
    result = CliRunner().invoke(cli, ["validate", str(root)])
    assert result.exit_code == 1, result.output
    assert "NOT conformant" in result.output
    assert "1 error, 12000 warnings" in result.output
    assert "/zz.md" in result.output
    as_json = json.loads(CliRunner().invoke(cli, ["validate", str(root), "--json"]).output)
    assert as_json["conformant"] is False
    assert as_json["summary"]["by_code"]["broken_link"] == 12_000
    assert as_json["summary"]["errors"] == 1


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ({}, "no .md file"),
        ({"notes.txt": "hello", "data.csv": "a,b\n"}, "no .md file"),
        ({"index.md": "# Home\n", "log.md": "# Log\n"}, "only index.md and log.md"),
    ],
)
def test_validate_fails_on_a_folder_without_concepts(
    make_bundle: MakeBundle, files: dict[str, str | bytes], says: str
) -> None:
    root = make_bundle(files)
    report = validate(Bundle.load(root))
    assert not report.conformant
    assert [p.code for p in report.errors] == ["no_concepts"]
    assert says in report.errors[0].message
    result = CliRunner().invoke(cli, ["validate", str(root)])
    assert result.exit_code == 1
    assert "no_concepts" in result.output and says in result.output


def test_serve_says_on_stderr_when_a_bundle_has_no_concepts(
    make_bundle: MakeBundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mcp", reason="okfx serve needs the mcp extra")
    from okfx.adapters import mcp as adapter

    monkeypatch.setattr(adapter, "serve_stdio", lambda server: None)
    root = make_bundle({"readme.md": "# Just markdown\n", "notes/a.md": "plain\n"})
    result = CliRunner().invoke(cli, ["serve", str(root), "--lazy-index"])
    assert result.exit_code == 0, result.output
    assert "0 concepts" in result.stderr
    assert "2 .md files" in result.stderr and "okfx validate" in result.stderr


def test_the_text_report_groups_problems_by_code(make_bundle: MakeBundle) -> None:
    files: dict[str, str | bytes] = {f"c{i:02}.md": concept(status="active") for i in range(30)}
    files["bad.md"] = "---\ntitle: no type\n---\n"
    root = make_bundle(files)
    text = CliRunner().invoke(cli, ["validate", str(root)]).output
    assert text.count("status 'active'") == 3  # three examples, not 30 lines
    group_line = next(line for line in text.splitlines() if "unknown_status" in line)
    assert "30" in group_line
    assert "/c00.md" in text and "/c02.md" in text and "/c29.md" not in text
    assert "27 more" in text and "--all" in text
    assert text.index("missing_type") < text.index("unknown_status")  # errors first
    everything = CliRunner().invoke(cli, ["validate", str(root), "--all"]).output
    assert "/c29.md" in everything
    as_json = json.loads(CliRunner().invoke(cli, ["validate", str(root), "--json"]).output)
    assert len([p for p in as_json["warnings"] if p["code"] == "unknown_status"]) == 30


def test_problems_by_code_is_the_same_grouping_for_tools(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(body=broken_links(3), status="active"),
            "b.md": concept(status="active"),
            "c.md": "plain\n",
        }
    )
    bundle = Bundle.load(root, limits=Limits(max_warnings=2))
    groups = bundle.problems_by_code()
    assert [(g.code, g.severity, g.count) for g in groups] == [
        ("no_frontmatter", "error", 1),
        ("broken_link", "warning", 3),
        ("unknown_status", "warning", 2),
        ("too_many_warnings", "warning", 1),
    ]
    assert groups[1].explanation and groups[1].unlisted == 2
    first = groups[1].problems[0]
    assert groups[1].to_dict(examples=1)["problems"] == [{**first._asdict(), "line": 5}]


def test_messages_fit_where_the_problem_is(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "index.md": '---\nokf_version: "0.2"\ntitle: Home\n---\n# Home\n',
            "sub/index.md": "---\ntitle: Sub\n---\n"
            + "\n".join(f"* [t{i}](/t{i}.md)" for i in range(12)),  # past twice its 5 files
            "sub/log.md": "---\ntitle: Log\n---\n# Log\n",
            "a.md": concept() + "\n",
            "docs/b.md": "---\ntype: Note\nsources:\n  - resource: ../../README.md\n---\n",
        }
    )
    bundle = Bundle.load(root, limits=Limits(max_links_per_concept=3))
    by_path = {(p.path, p.code): p.message for p in bundle.warnings}
    root_msg = by_path[("/index.md", "reserved_frontmatter")]
    assert "only okf_version (spec §8, §12) and okfx's exclude" in root_msg
    assert "'title'" in root_msg
    assert "only the bundle-root" not in root_msg
    sub_msg = by_path[("/sub/index.md", "reserved_frontmatter")]
    assert "not the bundle root" in sub_msg
    assert "log.md" in by_path[("/sub/log.md", "log_frontmatter")]
    links_msg = by_path[("/sub/index.md", "too_many_links")]
    assert "this index has more than 10 links" in links_msg  # its bundle has 5 files
    assert ("/docs/b.md", "unsafe_link") not in by_path
    assert "kept" in by_path[("/docs/b.md", "source_outside_bundle")]
    assert bundle.concept("docs/b").sources[0].resource == "../../README.md"


def test_list_bundles_counts_every_problem(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(body=broken_links(12)),
            "b.md": "---\ntitle: no type\n---\nSkipped.\n",  # a §11 error: missing_type
        }
    )
    box = Toolbox(Bundle.load(root, limits=Limits(max_warnings=5)))
    row = box.list_bundles()["bundles"][0]
    assert (row["errors"], row["warnings"]) == (1, 12)  # apart, as okfx validate counts


def test_the_json_says_when_its_lists_are_partial(make_bundle: MakeBundle) -> None:
    """Validate QA: past max_warnings the JSON lists were partial, and only a magic code
    in them said so; `listed` and `truncated` say it, and the counts stay exact."""
    root = make_bundle({"a.md": concept(body=broken_links(20)), "b.md": concept()})
    full = validate(Bundle.load(root)).to_dict()["summary"]
    assert (full["listed"], full["truncated"], full["warnings"]) == (20, False, 20)
    capped = validate(Bundle.load(root, limits=Limits(max_warnings=5))).to_dict()
    summary = capped["summary"]
    assert summary["truncated"] is True and summary["warnings"] == 20
    assert summary["listed"] == len(capped["errors"]) + len(capped["warnings"]) - 1 < 20


def test_one_problem_written_several_times_on_a_line_is_said_once(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: four links on one line to one missing page gave four byte-identical
    problems (databricks-okf), which looked like a bug and stacked in GitHub."""
    line = "[a](gone.md), [b](gone.md), [c](gone.md) and [d](gone.md).\n[e](other.md)\n"
    root = make_bundle({"p.md": concept(body=line)})
    report = validate(Bundle.load(root))
    broken = [w for w in report.warnings if w.code == "broken_link"]
    assert len(broken) == 2 and report.by_code["broken_link"] == 2
    gone = next(w.message for w in broken if "gone.md" in w.message)
    assert gone.endswith("which does not exist, 4 times (line 4)")
    result = CliRunner().invoke(cli, ["validate", "--format", "json", str(root)])
    listed = json.loads(result.output)["warnings"]
    assert [w["line"] for w in listed if w["code"] == "broken_link"] == [4, 5]
