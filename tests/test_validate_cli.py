from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import PROJECT_ROOT, MakeBundle, concept, write_tree
from okfx import Bundle, validate
from okfx.cli.commands import cli

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"


def test_rules_one_and_two_are_errors_and_the_rest_warnings(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "ok.md": concept(body="[gone](/gone.md)", status="retired"),
            "nofm.md": "# plain\n",
            "notype.md": "---\ntitle: x\n---\n",
        }
    )
    report = validate(Bundle.load(root))
    assert not report.conformant
    assert [(p.path, p.code) for p in report.errors] == [
        ("/nofm.md", "no_frontmatter"),
        ("/notype.md", "missing_type"),
    ]
    # in reading order: the status (line 3) before the body's link (line 5)
    assert [p.code for p in report.warnings] == ["unknown_status", "broken_link"]
    data = report.to_dict()
    assert data["summary"] == {
        "errors": 2,
        "warnings": 2,
        "by_code": {"broken_link": 1, "missing_type": 1, "no_frontmatter": 1, "unknown_status": 1},
        "listed": 4,
        "truncated": False,
    }
    assert json.loads(json.dumps(data)) == data


@pytest.mark.parametrize(
    ("files", "code"),
    [
        # §8: an index below the root carries no frontmatter; the root one only okf_version.
        ({"a/index.md": "---\ntitle: A\n---\n# A\n"}, "reserved_frontmatter"),
        ({"index.md": "---\nokf_version: '0.2'\nowner: x\n---\n# I\n"}, "reserved_frontmatter"),
        # §9: date headings MUST be YYYY-MM-DD.
        ({"log.md": "# Log\n\n## 2026-07-28T00:57:10Z\n* x\n"}, "invalid_log_date"),
    ],
)
def test_rule_three_reserved_files_off_their_structure_are_errors(
    make_bundle: MakeBundle, files: dict[str, str], code: str
) -> None:
    report = validate(Bundle.load(make_bundle({"ok.md": concept(), **files})))
    assert [p.code for p in report.errors] == [code] and not report.conformant
    assert "NOT conformant with OKF v0.2" in report.summary()


def test_what_stays_a_warning_in_reserved_files(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "ok.md": concept(),
            # okf_version and okfx's own exclude in the root index; a log's frontmatter,
            # which §9 does not mention (the published acme_retail sample has one)
            "index.md": "---\nokf_version: '0.2'\nexclude: [drafts/]\n---\n# I\n",
            "log.md": "---\ntitle: Log\n---\n# Log\n\n## 2026-07-28\n* x\n",
        }
    )
    report = validate(Bundle.load(root))
    assert report.conformant and [p.code for p in report.warnings] == ["log_frontmatter"]
    assert "§9" in report.warnings[0].message


def test_an_empty_folder_says_no_concepts_were_found(make_bundle: MakeBundle) -> None:
    report = validate(Bundle.load(make_bundle({"index.md": "# Nothing yet\n"})))
    assert not report.passes()
    assert "no concepts found (is this the bundle's folder?)" in report.summary()
    assert "NOT conformant" not in report.summary()


def test_cli_validate_exit_codes_and_json(make_bundle: MakeBundle) -> None:
    runner = CliRunner()
    good = make_bundle({"a.md": concept()})
    result = runner.invoke(cli, ["validate", str(good)])
    assert result.exit_code == 0, result.output
    assert "conformant" in result.output
    bad = make_bundle({"a.md": "no frontmatter"})
    result = runner.invoke(cli, ["validate", str(bad), "--json"])
    assert result.exit_code == 1, result.output
    payload = json.loads(result.output)
    assert payload["conformant"] is False
    assert payload["errors"][0] == {
        "path": "/a.md",
        "code": "no_frontmatter",
        "message": payload["errors"][0]["message"],
        "line": None,  # the whole file, no line of it
    }


def test_cli_usage_errors_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["validate"]).exit_code == 2
    assert runner.invoke(cli, ["validate", str(tmp_path / "missing")]).exit_code == 2
    assert runner.invoke(cli, ["nonsense"]).exit_code == 2


def test_validate_help_ends_with_an_example() -> None:
    result = CliRunner().invoke(cli, ["validate", "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "okfx validate" in result.output


def test_the_example_bundle_is_conformant_as_a_real_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "okfx", "validate", str(EXAMPLE), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["conformant"] is True
    assert report["okf_version"] == "0.2"
    assert report["concepts"] == 29
    # station-offline's [^vendor-runbook] is defined in its body: a footnote, not a citation;
    # join-paths shows a diagram "not exported into the bundle yet"
    assert report["summary"]["by_code"] == {"broken_image": 1, "broken_link": 1}


def test_strict_makes_warnings_fail_the_check(make_bundle: MakeBundle) -> None:
    runner = CliRunner()
    clean = make_bundle({"a.md": concept()})
    warned = make_bundle({"a.md": concept(body="[gone](/gone.md)")})
    assert runner.invoke(cli, ["validate", str(clean), "--strict"]).exit_code == 0
    assert runner.invoke(cli, ["validate", str(warned)]).exit_code == 0
    result = runner.invoke(cli, ["validate", str(warned), "--strict"])
    assert result.exit_code == 1
    assert "--strict: the warnings below fail the check" in result.output
    assert runner.invoke(cli, ["validate", str(warned), "--strict", "--json"]).exit_code == 1


def test_github_format_annotates_each_problem_on_its_file(
    make_bundle: MakeBundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_bundle(
        {
            "ok.md": concept(body="[gone](/gone.md)"),
            "docs/nofm.md": "# plain\n",
        }
    )
    monkeypatch.chdir(root.parent)  # as a CI job runs at the repository root
    result = CliRunner().invoke(cli, ["validate", root.name, "--format", "github"])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith(f"::error file={root.name}/docs/nofm.md,title=okfx no_frontmatter::")
    assert lines[1] == (
        f"::warning file={root.name}/ok.md,line=4,title=okfx broken_link::"
        "body link to /gone.md does not exist"  # the line is the annotation's, not said twice
    )
    assert (
        lines[2]
        == f"okfx: {root.name}: NOT conformant with OKF v0.2 (1 concept, 1 error, 1 warning)"
    )


def test_github_format_gives_the_reports_notes(make_bundle: MakeBundle) -> None:
    """Validate QA: the notes (stale concepts, unchecked wikilinks, a folder to exclude),
    the most actionable lines of a report, were not in the CI log."""
    root = make_bundle({"a.md": concept(body="[[Elsewhere]]\n")})
    result = CliRunner().invoke(cli, ["validate", str(root), "--format", "github"])
    notes = [line for line in result.output.splitlines() if line.startswith("::notice")]
    assert notes and notes[0].startswith("::notice title=okfx note::1 file holds [[wikilinks]]")
    assert result.output.splitlines()[-1].startswith("okfx: ")


def test_github_format_cannot_be_made_to_run_a_workflow_command(
    make_bundle: MakeBundle,
) -> None:
    # A file name with a line break tries to start a workflow command of its own (the
    # walk refuses the file, and the warning names it).
    name = "x\n::set-output name=a::b, 100%.md"
    root = make_bundle({"ok.md": concept(), name: "no frontmatter"})
    result = CliRunner().invoke(cli, ["validate", str(root), "--format", "github"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::warning file=")
    assert "x%0A%3A%3Aset-output name=a%3A%3Ab%2C 100%25.md,title=okfx unsafe_path::" in lines[0]
    assert not any(line.startswith("::set-output") for line in lines)


def test_a_file_name_cannot_print_a_line_of_its_own_in_the_text_report(
    make_bundle: MakeBundle,
) -> None:
    """Author QA: a file named "x\\n✓ b: conformant ... \\n.md" printed a green verdict
    line in the middle of a failing report; its line breaks now show as ^J."""
    name = "x\n✓ b: conformant with OKF v0.2 (2 concepts, 0 errors, 0 warnings)\n.md"
    root = make_bundle({"ok.md": concept(), "bad.md": "---\ntitle: t\n---\n", name: "x"})
    result = CliRunner().invoke(cli, ["validate", str(root), "--all"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert sum(1 for line in lines if "conformant with OKF" in line) == 2  # verdict, name
    assert lines[0].startswith("✗") and not any(line.startswith("✓") for line in lines)
    assert "x^J✓ b: conformant with OKF v0.2 (2 concepts, 0 errors, 0 warnings)^J.md" in (
        result.output
    )


def test_a_file_name_with_characters_that_print_as_nothing_shows_them(
    make_bundle: MakeBundle,
) -> None:
    """Security QA: a zero-width space or a TAG character in a file name printed as is in
    the text and github reports, and --json wrote bidi controls raw: two names that look
    alike could not be told apart, and TAG characters carried hidden text into CI logs."""
    name = "a\u200bb\U000e0041.md"
    root = make_bundle({"ok.md": concept(body="[x](gone\u2060.md)"), name: "no frontmatter"})
    text = CliRunner().invoke(cli, ["validate", str(root), "--all"]).output
    github = CliRunner().invoke(cli, ["validate", str(root), "--format", "github"]).output
    raw = CliRunner().invoke(cli, ["validate", str(root), "--json"]).output
    for shown in (text, github):
        assert "\u200b" not in shown and "\U000e0041" not in shown and "\u2060" not in shown
        assert "<U+200B>" in shown and "<U+E0041>" in shown
    assert all(ord(char) < 0x2000 or ord(char) in (0x2014, 0x2026) for char in raw)
    assert any(
        p["path"] == "/" + name for p in json.loads(raw)["errors"] + json.loads(raw)["warnings"]
    )


def test_file_names_that_differ_only_in_case_are_a_warning(make_bundle: MakeBundle) -> None:
    """Author QA: guide.md and Guide.md passed without a word; a macOS or Windows checkout
    holds one of them, so the bundle, and where its links lead, differ by machine."""
    root = make_bundle(
        {"guide.md": concept(), "Guide.md": concept(), "docs/A.sql": "x", "docs/a.sql": "y"}
    )
    result = CliRunner().invoke(cli, ["validate", str(root), "--json"])
    assert result.exit_code == 0, result.output  # a warning: the bundle conforms
    data = json.loads(result.output)
    found = [p for p in data["warnings"] if p["code"] == "case_collision"]
    assert [(p["path"], p["message"].split(":")[0]) for p in found] == [
        ("/docs/a.sql", "/docs/a.sql and /docs/A.sql differ only in letter case"),
        ("/guide.md", "/guide.md and /Guide.md differ only in letter case"),
    ]
    strict = CliRunner().invoke(cli, ["validate", str(root), "--strict"])
    assert strict.exit_code == 1 and "warning[case_collision] ×2" in strict.output


def test_a_markdown_file_in_other_letters_is_said_not_read(make_bundle: MakeBundle) -> None:
    """Spec QA: B.MD (no frontmatter) and c.Md (no type) passed as conformant, skipped
    without a word, where macOS, Windows and editors read them as markdown."""
    root = make_bundle({"a.md": concept(), "B.MD": "# B\n", "sub/c.Md": "---\ntitle: c\n---\n"})
    result = CliRunner().invoke(cli, ["validate", str(root), "--json"])
    assert result.exit_code == 0, result.output  # a warning: the bundle conforms
    found = [p for p in json.loads(result.output)["warnings"] if p["code"] == "md_case"]
    assert [(p["path"], p["message"]) for p in found] == [
        ("/B.MD", "/B.MD ends in '.MD', not '.md': okfx reads only .md files as concepts, so "
         "it is not read; rename it /B.md"),
        ("/sub/c.Md", "/sub/c.Md ends in '.Md', not '.md': okfx reads only .md files as "
         "concepts, so it is not read; rename it /sub/c.md"),
    ]  # fmt: skip


def test_json_and_another_format_together_are_a_usage_error(make_bundle: MakeBundle) -> None:
    root = make_bundle({"a.md": concept()})
    result = CliRunner().invoke(cli, ["validate", str(root), "--json", "--format", "github"])
    assert result.exit_code == 2
    assert (
        CliRunner().invoke(cli, ["validate", str(root), "--json", "--format", "json"]).exit_code
        == 0
    )


def test_github_format_names_files_from_the_bundle_root_when_it_is_the_cwd(
    make_bundle: MakeBundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_bundle({"ok.md": concept(body="[gone](/gone.md)")})
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["validate", ".", "--format", "github", "--strict"])
    assert result.exit_code == 1
    first, verdict = result.output.splitlines()
    # --strict: the warnings fail the job, and are annotated as errors (validate QA)
    assert first.startswith("::error file=ok.md,line=4,title=okfx broken_link::")
    assert verdict.endswith("1 warning); --strict: the warnings fail the check")


def test_github_format_names_files_from_the_workspace_a_step_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI QA F10: a step with ``working-directory: kb`` annotated ``file=ok.md``, which
    GitHub looks for at the repository root; GITHUB_WORKSPACE is that root."""
    repo = tmp_path / "repo"
    root = write_tree(repo / "kb", {"ok.md": concept(body="[gone](/gone.md)")})
    monkeypatch.chdir(root)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    first = CliRunner().invoke(cli, ["validate", ".", "--format", "github"]).output
    assert first.startswith("::warning file=kb/ok.md,line=4,title=okfx broken_link::")
    # a bundle outside the workspace is named from the working directory, as before
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "elsewhere"))
    first = CliRunner().invoke(cli, ["validate", ".", "--format", "github"]).output
    assert first.startswith("::warning file=ok.md,line=4,title=okfx broken_link::")
    # the text report is not GitHub's: it names the files as before
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    assert "kb/ok.md" not in CliRunner().invoke(cli, ["validate", "."]).output


def test_unfollowed_wikilinks_are_noted_with_the_option_that_follows_them(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {
            "a.md": concept(body="See [[b]].\n"),
            "b.md": concept(body="`[[code]]` and\n\n```\n[[fenced]]\n```\n"),
            "c.md": concept(body="![[embed.png]]\n"),
        }
    )
    report = validate(Bundle.load(root))
    assert report.notes == (
        "1 file holds [[wikilinks]], not checked: pass --wikilinks to follow them "
        "(an okfx extension; the spec links with markdown links only)",
    )
    assert report.to_dict()["notes"] == list(report.notes) and report.passes(strict=True)
    assert validate(Bundle.load(root, wikilinks=True)).notes == ()
    shown = CliRunner().invoke(cli, ["validate", str(root)]).output
    assert "  note: 1 file holds [[wikilinks]]" in shown


def test_files_that_are_no_concept_in_one_folder_are_noted_with_the_exclude_to_try(
    make_bundle: MakeBundle,
) -> None:
    mirrored = {f"references/page{i}.md": "---\ntitle: mirrored\n---\ntext\n" for i in range(12)}
    root = make_bundle({"a.md": concept(), "notes/loose.md": "# no frontmatter\n", **mirrored})
    report = validate(Bundle.load(root))
    assert report.notes == (
        "12 of the 13 files that are no concept are under /references/: give each a "
        "'type', or leave the folder out with --exclude references/",
    )
    # the exclude the note names does make it pass
    excluded = validate(Bundle.load(root, exclude=["references/", "notes/"]))
    assert excluded.conformant and excluded.notes == ()
    spread = {f"d{i}/x.md": "---\ntitle: t\n---\n" for i in range(12)}
    assert validate(Bundle.load(make_bundle({"a.md": concept(), **spread}))).notes == ()
    # split over two folders (the vault bundle: /news/ and /inbox/, validate QA)
    two = {
        **{f"news/twitter/p{i}.md": "---\ntitle: t\n---\n" for i in range(14)},
        **{f"inbox/done/p{i}.md": "# no frontmatter\n" for i in range(11)},
        "notes/loose.md": "# no frontmatter\n",
        # CLI QA: a file of broken YAML is no concept either, and was not counted
        "templates/t.md": "---\ntype: [unclosed\n---\n",
    }
    root = make_bundle({"a.md": concept(), **two})
    assert validate(Bundle.load(root)).notes == (
        "25 of the 27 files that are no concept are under /news/ (14) and /inbox/ (11): give "
        "each a 'type', or leave the folders out with --exclude news/ --exclude inbox/",
    )
    excluded = validate(Bundle.load(root, exclude=["news/", "inbox/", "notes/", "templates/"]))
    assert excluded.conformant
    # CI QA: the exclusion also leaves out the concepts in those folders: said so
    typed = {"news/2026-06-21.md": concept(), "inbox/README.md": concept()}
    root = make_bundle({"a.md": concept(), **two, **typed})
    (note,) = validate(Bundle.load(root)).notes
    assert note.endswith(
        "--exclude news/ --exclude inbox/ (which leaves out 2 concepts too: "
        "/inbox/README.md, /news/2026-06-21.md)"
    )


def test_a_repository_root_above_the_bundle_is_noted_with_the_folder_to_load(
    make_bundle: MakeBundle,
) -> None:
    """m3e-okf keeps its bundle in knowledge/ (links written from there: /components/x)
    beside plain markdown; graphql-okf keeps every concept in okf/countries-api/. Loaded
    at the repository root, validate said nothing of where the bundle is."""
    kb = {
        "kb/index.md": "# KB\n\n* [Button](/parts/button) - a button\n",
        **{
            f"kb/parts/{name}.md": concept(body=f"See [{other}](/parts/{other}).\n")
            for name, other in (("button", "dialog"), ("dialog", "menu"), ("menu", "button"))
        },
        "impl/button.md": "# Button API\n",
        "README.md": "# Repo\n",
    }
    report = validate(Bundle.load(make_bundle(kb)))
    assert report.notes == (
        "4 of the 4 broken absolute links resolve when read from /kb/, which has its own "
        "index.md: they are written from that folder's root, so the bundle is probably /kb/ "
        "(load that folder), not this one (2 files here are no concept)",
    )
    assert validate(Bundle.load(make_bundle(kb) / "kb")).notes == ()
    nested = {
        "okf/api/index.md": "# API\n\n* [Query](q.md) - a query\n",
        "okf/api/q.md": concept(body="[type](t.md)\n"),
        "okf/api/t.md": concept(),
        "README.md": "# Tool\n",
        "docs/plan.md": "# Plan\n",
    }
    report = validate(Bundle.load(make_bundle(nested)))
    assert report.notes == (
        "all 2 concepts are under /okf/api/, which has its own index.md, and 2 files that "
        "are no concept are not: the bundle is probably /okf/api/ (load that folder), not "
        "this one",
    )
    shown = CliRunner().invoke(cli, ["validate", str(make_bundle(nested))]).output
    assert "note: all 2 concepts are under /okf/api/" in shown
    # validate QA: a repository that holds nothing but its bundle folder, and no index.md
    alone = {k: v for k, v in nested.items() if k.startswith("okf/")}
    assert validate(Bundle.load(make_bundle(alone))).notes == (
        "all 2 concepts are under /okf/api/, which has its own index.md, and this folder has "
        "no index.md: the bundle is probably /okf/api/ (load that folder), not this one",
    )
    kb_alone = {k: v for k, v in kb.items() if k.startswith("kb/")}
    assert (
        validate(Bundle.load(make_bundle(kb_alone)))
        .notes[0]
        .endswith(
            "the bundle is probably /kb/ (load that folder), not this one (this folder has no "
            "index.md)"
        )
    )
    with_root = {**alone, "index.md": "# Root\n\n* [API](okf/api/index.md) - the api\n"}
    assert validate(Bundle.load(make_bundle(with_root))).notes == ()  # a root index: as given


def test_a_bundle_in_a_hidden_folder_or_a_nested_one_is_named_from_the_root_above(
    make_bundle: MakeBundle,
) -> None:
    """New-producers QA: nhis-okf-compiler keeps its bundle in .okf/ beside its code, and
    loaded at the repository root it was one stray page with 50 errors and no word of
    .okf/; edu_effect-okf keeps one in house-plants-okf/ (okf_version in its index.md),
    and "each needs frontmatter with a 'type'" sent authors to the README files."""
    hidden = {
        ".okf/index.md": "---\nokf_version: '0.2'\n---\n# KB\n",
        ".okf/a.md": concept(),
        "concepts/template.md": concept(),
        "README.md": "# Tool\n",
        "docs/plan.md": "# Plan\n",
    }
    report = validate(Bundle.load(make_bundle(hidden)))
    assert report.notes == (
        "the hidden folder .okf/ holds an index.md, and okfx skips hidden names: the bundle "
        "is probably .okf/ (load that folder), not this one (2 files here are no concept)",
    )
    nested = {
        "plants/index.md": "---\nokf_version: '0.2'\n---\n# Plants\n",
        "plants/fern.md": concept(),
        "README.md": "# Repo\n",
        "AGENTS.md": "# Agents\n",
    }
    root = make_bundle(nested)
    assert len(Bundle.load(root)) == 0
    listed = CliRunner().invoke(cli, ["--no-state-cache", "bundles", str(root)]).output
    assert (
        "no concepts: the folder has 2 .md files, none of them a concept, and /plants/ holds "
        "a bundle of its own that okfx does not read as part of this one: load plants/ itself"
    ) in " ".join(listed.split())


def test_links_written_from_a_sites_root_inside_the_bundle_are_noted(
    make_bundle: MakeBundle,
) -> None:
    """bun-book keeps its pages in pages/ and links them as the site serves them
    (/docs/runtime/x for /pages/docs/runtime/x.md): 38 of 73 broken links, each reported
    alone, with nothing saying they share one cause."""
    files = {
        "index.md": "# Book\n\n* [Docs](pages/index.md) - the docs\n",
        "pages/index.md": "# Pages\n\n* [Intro](docs/intro.md) - start\n",
        "pages/docs/intro.md": concept(
            body="[a](/docs/a) [b](/docs/b) [c](/docs/c) [x](/nowhere)\n"
        ),
        **{f"pages/docs/{n}.md": concept() for n in "abc"},
    }
    report = validate(Bundle.load(make_bundle(files)))
    assert report.conformant and report.notes == (
        "3 of the 4 broken absolute links resolve when read from /pages/: they are written "
        "from that folder's root (as a site serves it), but spec §6.1 reads /x from the "
        "bundle root: write them with /pages in front, or relative",
    )


def test_links_into_a_folder_the_bundle_lacks_are_noted_once(make_bundle: MakeBundle) -> None:
    """m3e-okf's 47 component pages each link their card in /implementations/, a folder
    beside the bundle in its repository: 47 broken_link warnings, no word of one cause."""
    files = {
        **{f"c/{n}.md": concept(body=f"[api](/impl/{n})\n") for n in "abcdef"},
        "c/g.md": concept(body="[gone](/c/nothing.md)\n"),
    }
    assert validate(Bundle.load(make_bundle(files))).notes == (
        "6 of the 7 broken absolute links lead into /impl/, a folder this bundle does not "
        "have: if it lies beside the bundle, outside its root, link it by full URL, or "
        "bring it in",
    )
    few = {f"c/{n}.md": concept(body=f"[api](/impl/{n})\n") for n in "abcd"}
    assert validate(Bundle.load(make_bundle(few))).notes == ()
    # written relative, as Quartz writes its tag links (CI QA: 171 of 211 into /tags/)
    tags = " ".join(f"[{n}](./tags/{n})" for n in "abcdef")
    relative = {"overview.md": concept(body=tags + " [gone](nothing.md)\n")}
    assert validate(Bundle.load(make_bundle(relative))).notes == (
        "6 of the 7 broken relative links lead into /tags/, a folder this bundle does not "
        "have: if it lies beside the bundle, outside its root, link it by full URL, or "
        "bring it in",
    )


def test_links_into_a_folder_the_bundle_has_below_a_site_root_say_where_it_is(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: pydantic-ai-book links ``/docs/x/`` for ``/pages/docs/x.md``; 783 of
    its 2,427 broken links resolve from /pages/, under the third the site-root note asks
    for, and the note said /docs/ was a folder the bundle does not have. A page link
    ending in "/" counts as resolving to the page."""
    files = {
        "index.md": "# Book\n\n* [Docs](pages/index.md) - the docs\n",
        "pages/index.md": "# Pages\n\n* [Intro](docs/intro.md) - start\n",
        "pages/docs/intro.md": concept(
            body="".join(f"[{n}](/docs/{n}/) " for n in "abc")
            + "".join(f"[api {n}](/docs/api/{n}/) " for n in "defghij")
            + "\n"
        ),
        **{f"pages/docs/{n}.md": concept() for n in "abc"},
    }
    report = validate(Bundle.load(make_bundle(files)))
    assert report.notes == (
        "10 of the 10 broken absolute links lead into /docs/, which is /pages/docs/ in this "
        "bundle: 3 of them resolve when read from /pages/, the site root they were written "
        "from; spec §6.1 reads /x from the bundle root: write them with /pages in front, or "
        "relative",
    )


def test_a_broken_link_names_the_page_it_most_likely_meant(make_bundle: MakeBundle) -> None:
    """Validate QA: a typo, a file's case and a wikilink written as a title each left the
    author to find the target by hand, though get_neighbors named it."""
    root = make_bundle(
        {
            "guides/provider-contracts.md": concept(title="Provider contracts"),
            "guides/Composition.md": concept(title="Composition"),
            "guides/row-filter-policies.md": concept(title="Row Filter Policies"),
            "start.md": concept(
                body="[a](guides/provider-contract.md)\n[b](guides/composition.md)\n"
                "[[Row Filter Policies]]\n[c](guides/nothing-like-it.md)\n"
            ),
        }
    )
    report = validate(Bundle.load(root, wikilinks=True))
    said = [p.message for p in report.warnings if p.code == "broken_link"]
    assert said[0].endswith("; did you mean /guides/provider-contracts.md? (line 4)")
    assert said[1].endswith("; did you mean /guides/Composition.md? (line 5)")
    assert said[2].endswith("matches no file; did you mean /guides/row-filter-policies.md?")
    assert "did you mean" not in said[3]
    line = [p["line"] for p in report.to_dict()["warnings"]]
    assert line == [4, 5, 6, 7]  # the line is still read from the message


def test_each_broken_link_of_a_line_is_given_its_own_suggestion(make_bundle: MakeBundle) -> None:
    """Validate QA: every broken link of a line was given the first one's suggestion (or
    none, when the first had none); a folder's link said its suggestion twice."""
    root = make_bundle(
        {
            "concepts/alpha-table.md": concept(),
            "concepts/gamma-runbook.md": concept(),
            "audits.md": concept(),
            "page.md": concept(
                body="[x](z/nothing-like-it.md), [a](concepts/x/alpha-table.md), "
                "[c](concepts/z/gamma-runbook.md)\n[f](audits/)\n"
            ),
        }
    )
    said = {
        p.message.split("'")[1]: p.message
        for p in validate(Bundle.load(root)).warnings
        if p.code == "broken_link"
    }
    assert "did you mean" not in said["z/nothing-like-it.md"]
    assert "; did you mean /concepts/alpha-table.md?" in said["concepts/x/alpha-table.md"]
    assert "; did you mean /concepts/gamma-runbook.md?" in said["concepts/z/gamma-runbook.md"]
    assert said["audits/"].count("did you mean /audits.md?") == 1


def test_strict_json_says_why_the_job_failed(make_bundle: MakeBundle) -> None:
    root = make_bundle({"a.md": concept(body="[gone](/gone.md)")})
    runner = CliRunner()
    strict = runner.invoke(cli, ["validate", str(root), "--strict", "--json"])
    plain = runner.invoke(cli, ["validate", str(root), "--json"])
    assert (strict.exit_code, plain.exit_code) == (1, 0)
    assert (
        json.loads(strict.stdout)["strict"] is True and json.loads(strict.stdout)["passes"] is False
    )
    assert (
        json.loads(plain.stdout)["strict"] is False and json.loads(plain.stdout)["passes"] is True
    )


def test_no_color_is_honoured_on_a_terminal(make_bundle: MakeBundle) -> None:
    root = make_bundle({"a.md": concept(body="[gone](/gone.md)")})
    coloured = CliRunner().invoke(cli, ["validate", str(root)], color=True)
    plain = CliRunner(env={"NO_COLOR": "1"}).invoke(cli, ["validate", str(root)], color=True)
    assert "\x1b[" in coloured.output and "\x1b[" not in plain.output


def test_file_level_errors_name_their_line(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "latin.md": "---\ntype: Note\ntitle: caf\xe9 au lait\n---\n".encode("latin-1"),
            "list.md": "---\ntitle: x\ntype: [a, b]\n---\n",
            "typo.md": "---\ntitle: x\ntpye: Metric\n---\n",
            "empty.md": '---\ntitle: x\ntype: ""\n---\n',
            # CI QA: the column of a bad byte after CJK text is the character's, not the
            # byte offset (14 after 'title: 日本')
            "cjk.md": "---\ntype: Note\ntitle: 日本".encode() + b"\xff\n---\n",
        }
    )
    by_path = {p.path: p.message for p in validate(Bundle.load(root)).errors}
    assert by_path["/cjk.md"].startswith("not UTF-8: byte 0xFF at column 10 (invalid start")
    assert by_path["/latin.md"] == (
        "not UTF-8: byte 0xE9 at column 11 (invalid continuation byte); skipped: save the "
        "file as UTF-8 (line 3)"
    )
    assert by_path["/list.md"].endswith("must be a non-empty string (write one type) (line 3)")
    assert "it has tpye: 'Metric': rename that key to 'type'" in by_path["/typo.md"]
    assert by_path["/typo.md"].endswith("(line 3)")
    assert by_path["/empty.md"].endswith("(line 3)")


def test_github_format_annotates_at_most_fifty_of_a_code_unless_all(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: one producer-wide status gave 3,492 identical annotations of 5,679."""
    from okfx.cli.render import ANNOTATIONS_PER_CODE

    files = {f"c{i:03}.md": concept(status="active") for i in range(ANNOTATIONS_PER_CODE + 7)}
    root = make_bundle({**files, "gone.md": concept(body="[x](/x.md)")})
    capped = CliRunner().invoke(cli, ["validate", str(root), "--format", "github"]).output
    assert capped.count(",title=okfx unknown_status::") == ANNOTATIONS_PER_CODE
    assert "::notice title=okfx unknown_status::7 more unknown_status problems" in capped
    assert capped.count("title=okfx broken_link::") == 1  # other codes are not crowded out
    every = CliRunner().invoke(cli, ["validate", str(root), "--format", "github", "--all"])
    assert every.output.count(",title=okfx unknown_status::") == ANNOTATIONS_PER_CODE + 7
    assert "::notice" not in every.output


def test_github_format_annotates_every_kind_of_a_code_and_counts_them(
    make_bundle: MakeBundle,
) -> None:
    """CI QA: okf-explorer's 50 invalid_field annotations were all one field's (verified,
    141 files), and the 3,167 'tags is one string' were never annotated nor named."""
    from okfx.cli.render import ANNOTATIONS_PER_CODE

    verified = {f"a{i:03}.md": concept(verified="'yes'") for i in range(ANNOTATIONS_PER_CODE + 5)}
    tags = {f"b{i:03}.md": concept(tags="'one string'") for i in range(ANNOTATIONS_PER_CODE + 20)}
    root = make_bundle({**verified, **tags})
    shown = CliRunner().invoke(cli, ["validate", str(root), "--format", "github"]).output
    annotations = [line for line in shown.splitlines() if ",title=okfx invalid_field::" in line]
    assert len(annotations) == ANNOTATIONS_PER_CODE
    assert any("::verified must be" in line for line in annotations)
    assert any("::tags " in line for line in annotations)
    total = 2 * ANNOTATIONS_PER_CODE + 25
    assert (
        f"::notice title=okfx invalid_field::{total - ANNOTATIONS_PER_CODE} more invalid_field "
        f"problems are not annotated here (of the listed ones: tags {ANNOTATIONS_PER_CODE + 20}, "
        f"verified {ANNOTATIONS_PER_CODE + 5})"
    ) in shown


def test_github_format_annotates_a_bundle_that_does_not_load(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "nope"), "--format", "github"])
    assert result.exit_code == 2
    assert result.stdout.startswith("::error title=okfx invalid_argument::cannot load ")


def test_notes_name_stale_concepts_and_links_to_deprecated_ones(make_bundle: MakeBundle) -> None:
    """Validate QA: a stale_after in 2020 and a deprecated concept that live pages still
    link to passed without a word, though the tools flag both to an agent."""
    from datetime import UTC, datetime

    root = make_bundle(
        {
            "old.md": concept(status="deprecated"),
            "expired.md": concept(
                stale_after="2020-01-01T00:00:00Z", body="[o](old.md)\n\n[again](old.md)"
            ),
            "fresh.md": concept(stale_after="2030-01-01T00:00:00Z", body="[o](old.md)"),
            "retired.md": concept(status="deprecated", body="[o](old.md)"),
        }
    )
    bundle = Bundle.load(root)
    notes = validate(bundle, now=datetime(2026, 12, 1, tzinfo=UTC)).notes
    assert notes == (
        "1 concept is past its stale_after: /expired.md (2020-01-01); the tools mark such a "
        "concept stale to an agent: review it, then move its stale_after on",
        # one entry per page, with its lines (validate QA: a page linking twice was twice)
        "2 pages link a deprecated concept: /expired.md:5,7 -> /old.md, /fresh.md:5 -> "
        "/old.md; unless the link is kept as history, link the current concept",
    )
    assert validate(bundle).notes == ()  # no time given: nothing that depends on it
    later = validate(bundle, now=datetime(2031, 1, 1, tzinfo=UTC)).notes[0]
    assert later.startswith("2 concepts are past their stale_after: /expired.md")


def test_a_bare_git_repository_given_as_a_folder_says_to_load_its_url(tmp_path: Path) -> None:
    """Platform QA: a bare repository given as a path loaded as an empty folder, no hint."""
    import shutil

    work = tmp_path / "work"
    work.mkdir()
    (work / "a.md").write_text("---\ntype: Note\n---\n", encoding="utf-8")
    git = shutil.which("git") or "git"
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    author = [
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.org",
        "-c",
        "init.defaultBranch=main",
    ]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "a"]):
        subprocess.run([git, *author, *args], cwd=work, check=True, env=env)
    subprocess.run(
        [git, "clone", "-q", "--bare", str(work), str(tmp_path / "kb.git")], check=True, env=env
    )
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "kb.git")])
    assert result.exit_code == 1
    url = (tmp_path / "kb.git").as_uri()
    assert f"bare git repository, whose files are git's own: load it by its URL, {url}" in (
        result.output
    )


def test_text_report_names_each_problem_as_file_line(
    make_bundle: MakeBundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_bundle({"ok.md": concept(body="[gone](/gone.md)"), "docs/nofm.md": "# plain\n"})
    monkeypatch.chdir(root.parent)
    relative = CliRunner().invoke(cli, ["validate", root.name]).output.splitlines()
    assert f"      {root.name}/ok.md:4: body link to /gone.md does not exist" in relative
    assert any(line.startswith(f"      {root.name}/docs/nofm.md: no YAML") for line in relative)
    monkeypatch.chdir(root)  # the bundle itself: paths in the bundle, no "./"
    inside = CliRunner().invoke(cli, ["validate", "."]).output
    assert "\n      ok.md:4: body link" in inside
    absolute = CliRunner().invoke(cli, ["validate", str(root)]).output
    assert f"\n      {root.as_posix()}/ok.md:4: body link" in absolute
    empty = make_bundle({"notes.txt": "x"})
    monkeypatch.chdir(empty.parent)
    whole = CliRunner().invoke(cli, ["validate", empty.name]).output
    assert f"\n      {empty.name}: no concepts" in whole  # a problem of the whole bundle


def test_typed_files_under_a_hidden_name_are_noted(make_bundle: MakeBundle) -> None:
    """Session 63: a `.draft.md` or a `.notes/` folder of typed pages loaded as nothing,
    and validate said "conformant, 1 concept"; only typed .md files count, and a symlink
    is never followed."""
    files = {
        "a/one.md": concept(),
        ".drafts/two.md": concept(),
        ".drafts/deeper/three.md": concept(),
        "a/.four.md": concept(),
        ".untyped.md": "---\ntitle: Notes\n---\ntype: in the body\n",
        ".github/PULL_REQUEST_TEMPLATE.md": "# Template\n",
        ".git/notes.md": concept(),
    }
    root = make_bundle(files)
    (root / ".linked.md").symlink_to(root / "a" / "one.md")
    report = validate(Bundle.load(root))
    assert len(Bundle.load(root)) == 1
    assert report.notes == (
        "3 .md files with a type in their frontmatter are not read, for a name starting "
        "with '.' (their own or a folder's), which okfx skips as hidden: /.drafts/deeper/"
        "three.md, /.drafts/two.md, /a/.four.md; rename without the dot to make them concepts",
    )
    assert validate(Bundle.load(make_bundle({"a/one.md": concept()}))).notes == ()


def test_hidden_files_are_looked_at_within_a_bound(make_bundle: MakeBundle, monkeypatch) -> None:
    from okfx.bundle import hidden

    files = {f".many/{i:03d}.md": concept() for i in range(50)}
    monkeypatch.setattr(hidden, "MAX_ENTRIES", 10)
    found = hidden.hidden_concepts(Bundle.load(make_bundle({**files, "a.md": concept()})))
    assert 0 < len(found) < 10


def test_a_reserved_name_in_other_letters_is_said(make_bundle: MakeBundle) -> None:
    """Validate QA: sub/Index.md and LOG.md were read as concepts without a word, though
    on macOS and Windows they are the reserved index.md and log.md (§3.1)."""
    root = make_bundle({"a.md": concept(), "sub/Index.md": concept(), "LOG.md": concept()})
    result = CliRunner().invoke(cli, ["validate", str(root), "--json"])
    assert result.exit_code == 0, result.output  # a warning: okfx reads them as concepts
    found = [p for p in json.loads(result.output)["warnings"] if p["code"] == "reserved_case"]
    assert [p["path"] for p in found] == ["/LOG.md", "/sub/Index.md"]
    assert (
        "on macOS and Windows it is /sub/index.md, which is never a concept" in found[1]["message"]
    )
    assert (
        validate(Bundle.load(make_bundle({"a.md": concept(), "b/index.md": "# B\n"}))).by_code.get(
            "reserved_case"
        )
        is None
    )


def test_the_text_report_counts_a_codes_problems_by_kind_and_shows_one_of_each(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: okf-explorer's 3,809 invalid_field showed three of its 141 verified
    strings and none of its 3,167 tags strings; cricketstudio's 3,492 unknown_status were
    one value written everywhere, which nothing said."""
    files = {f"t{i}.md": concept(tags="'a, b'") for i in range(6)}
    files |= {"v.md": concept(verified="'yes'"), "s.md": concept(timestamp="''")}
    files |= {f"st{i}.md": concept(status="active") for i in range(5)}
    output = CliRunner().invoke(cli, ["validate", str(make_bundle(files))]).output
    block = output[output.index("warning[invalid_field]") :]
    assert "listed by kind: tags 6, timestamp 1, verified 1" in block
    shown = block.split("\n")[2:5]
    assert [line.split(": ", 1)[1].split(" ", 1)[0] for line in shown] == [
        "timestamp",
        "tags",
        "verified",
    ]
    assert "all 5 listed are 'active': one fix for every file" in output
    everything = CliRunner().invoke(cli, ["validate", "--all", str(make_bundle(files))]).output
    assert "listed by kind" not in everything


def test_a_kind_line_shows_bundle_text_safely(make_bundle: MakeBundle) -> None:
    """A kind quotes a frontmatter value: an escape written there is shown, not sent to
    the terminal."""
    files = {f"s{i}.md": concept(status='"act\\x1b[2Jive"') for i in range(5)}
    output = CliRunner().invoke(cli, ["validate", str(make_bundle(files))]).output
    assert "\x1b[2J" not in output and "all 5 listed are" in output


def test_one_file_is_one_file(make_bundle: MakeBundle) -> None:
    """New-producers QA: "the folder has 1 files and no .md file"."""
    root = make_bundle({"okf_validate.py": "print()\n"})
    from okfx.bundle.validate import why_empty

    assert why_empty(Bundle.load(root)).startswith("the folder has 1 file and no .md file")


def test_no_page_of_another_folder_is_offered_for_a_link_into_a_folder_the_bundle_lacks(
    make_bundle: MakeBundle,
) -> None:
    """CI QA: Quartz's tag links (./tags/tool) were said to mean /templates/tool.md;
    followed, the warnings went and the links pointed at a template. A moved file (a
    folder of the link's path is there) and a path from the repository root (its folders
    end as the page's do) still get theirs."""
    root = make_bundle(
        {
            "templates/tool.md": concept(title="Tool template"),
            "concepts/x.md": concept(title="X"),
            "commits/a.md": concept(title="A"),
            "overview.md": concept(
                body="[t](./tags/tool)\n\n[x](concepts/note/x.md)\n\n[a](/kb/commits/a.md)\n"
            ),
        }
    )
    said = [p.message for p in validate(Bundle.load(root)).warnings if p.code == "broken_link"]
    tags, moved, from_repository = sorted(said, key=lambda m: ("tags" not in m, "kb" in m))
    assert "/tags/tool" in tags and "did you mean" not in tags
    assert "did you mean /concepts/x.md?" in moved
    assert "did you mean /commits/a.md?" in from_repository


def test_an_exclude_pattern_that_matches_no_file_is_noted_with_the_fix(
    make_bundle: MakeBundle,
) -> None:
    """CI QA: --exclude kb/templates/, the path the CI log shows, and ./templates/
    excluded nothing, and nothing said so: patterns are read from the bundle root."""
    root = make_bundle({"a.md": concept(), "templates/t.md": "no frontmatter\n"})
    name = root.name
    loaded = Bundle.load(root, exclude=[f"{name}/templates/", "./templates/", "nothing-here"])
    (note,) = [n for n in validate(loaded).notes if "matched no file" in n]
    assert note.startswith(
        f"--exclude {name}/templates/ (write --exclude templates/), --exclude ./templates/ "
        "(write --exclude templates/), --exclude nothing-here matched no file: patterns are "
        f"read from the bundle root ({name}/)"
    )
    assert not [
        n for n in validate(Bundle.load(root, exclude=["templates/"])).notes if "matched" in n
    ]


def test_a_link_to_the_bundle_folders_index_from_the_repository_root_means_the_root_index(
    make_bundle: MakeBundle,
) -> None:
    """New-producers QA: okf-cocce links /okf/index.md, okf/ being the bundle's own
    folder; /okf/cocce.md got a suggestion, the root index none."""
    others = "".join(f"[{n}](/{n}.md) " for n in "bcdef")
    files = {"index.md": "# Root\n", **{f"{n}.md": concept() for n in "bcdef"}}
    root = make_bundle({**files, "a.md": concept()})
    body = f"[home](/{root.name}/index.md) {others}\n"
    (root / "a.md").write_text(concept(body=body), encoding="utf-8")
    (said,) = [p.message for p in validate(Bundle.load(root)).warnings if p.code == "broken_link"]
    assert "did you mean /index.md?" in said


def test_a_page_linked_from_the_repository_root_means_the_same_page_of_the_bundle(
    make_bundle: MakeBundle,
) -> None:
    """New-producers QA F10: okf-cocce's /okf/cocce.md (okf/ the bundle's own folder)
    lost its suggestion when a link into folders the bundle lacks stopped being matched
    by file name; the same path from the bundle's root is meant. A page never means
    itself."""
    root = make_bundle({"b.md": concept(), "x/c.md": concept()})
    body = (
        f"[b](/{root.name}/b.md) [c](/{root.name}/x/c.md) [self](/{root.name}/a.md) "
        "[readme](/README.md)\n"  # a file of the repository too: the pattern is mixed
    )
    (root / "a.md").write_text(concept(body=body), encoding="utf-8")
    said = sorted(
        p.message for p in validate(Bundle.load(root)).warnings if p.code == "broken_link"
    )
    assert [m.partition("; did you mean ")[2].partition("?")[0] for m in said] == [
        "",
        "",
        "/b.md",
        "/x/c.md",
    ]
