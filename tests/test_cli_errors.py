"""Every way a command can fail reports the same way: ``error[code]: message`` on stderr, or
the error payload on stdout with ``--json``, and the exit code of the code (2: the
caller's argument, 1: anything else)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conftest import PROJECT_ROOT
from okfx.cli.commands import cli
from okfx.version import install_command

EXAMPLE = str(PROJECT_ROOT / "examples" / "knowledge")
TRIPS = str(PROJECT_ROOT / "examples" / "data" / "trips.csv")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def a_file(tmp_path: Path) -> str:
    path = tmp_path / "notes.txt"
    path.write_text("not a bundle\n", encoding="utf-8")
    return str(path)


def _bad_bundles(tmp_path: Path, a_file: str) -> list[str]:
    return [a_file, str(tmp_path / "missing-folder"), str(tmp_path / "missing.zip")]


@pytest.mark.parametrize(
    "command",
    [
        ["read", "{bundle}", "x"],
        ["search", "{bundle}", "dock"],
        ["grep", "{bundle}", "dock"],
        ["index", "{bundle}"],
        ["neighbors", "{bundle}", "x"],
        ["bundles", "{bundle}"],
        ["validate", "{bundle}"],
    ],
    ids=lambda c: c[0],
)
def test_a_bundle_that_is_not_one_is_the_same_error_for_every_command(
    tmp_path: Path, a_file: str, command: list[str]
) -> None:
    for bad in _bad_bundles(tmp_path, a_file):
        args = [bad if word == "{bundle}" else word for word in command]
        text = run(*args)
        assert text.exit_code == 2, (args, text.output)
        assert text.stdout == ""
        assert text.stderr.startswith(f"error[invalid_argument]: cannot load {bad}: "), text.stderr
        assert "BUNDLE is a folder, a git URL or an archive" in text.stderr
        assert "[Errno" not in text.stderr and "Usage:" not in text.stderr
        as_json = run(*args, "--json")
        assert as_json.exit_code == 2
        payload = json.loads(as_json.stdout)
        assert payload["error"]["code"] == "invalid_argument"
        assert payload["error"]["message"] == text.stderr.split(": ", 1)[1].strip()


def test_serve_reports_a_bad_bundle_the_same_way(a_file: str) -> None:
    pytest.importorskip("mcp")
    result = run("serve", a_file)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error[invalid_argument]: cannot load {a_file}: ")


def test_several_bundles_without_one_chosen_read_the_one_holding_the_path(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("---\ntype: Metric\n---\n", encoding="utf-8")
    (other / "index.md").write_text("# Other\n\n## All\n\n* [A](a.md) - a\n", encoding="utf-8")
    result = run("read", EXAMPLE, str(other), "index", "--json")  # both bundles hold it
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "invalid_argument"
    assert "'knowledge', 'other'" in error["message"]
    text = run("read", EXAMPLE, str(other), "index")
    assert text.stderr.startswith("error[invalid_argument]: 'index' is in 2 of the loaded")
    assert "choose one with --bundle NAME: 'knowledge', 'other'" in text.stderr
    # a path one bundle holds is read there; one that none holds names the close ones
    assert run("read", EXAMPLE, str(other), "a").exit_code == 0
    missing = run("read", EXAMPLE, str(other), "metrics/dock-availabilty")
    assert missing.stderr.startswith("error[not_found]: no loaded bundle holds")
    assert "knowledge:/metrics/dock-availability.md" in missing.stderr


def test_two_bundles_with_one_name_is_an_error_payload_under_json(tmp_path: Path) -> None:
    for top in ("a", "b"):  # x/kb twice: the parents do not tell them apart
        folder = tmp_path / top / "x" / "kb"
        folder.mkdir(parents=True)
        (folder / "d.md").write_text("---\ntype: Note\n---\nDock.\n", encoding="utf-8")
    first, second = tmp_path / "a" / "x" / "kb", tmp_path / "b" / "x" / "kb"
    result = run("search", str(first), str(second), "dock", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "invalid_argument"


def test_grep_regex_errors_speak_of_the_command_line() -> None:
    result = run("grep", EXAMPLE, "(a", "--regex")
    assert result.exit_code == 2
    assert "(?m)" not in result.stderr and "regex=false" not in result.stderr
    assert "missing ): (a." in result.stderr
    assert "drop --regex" in result.stderr
    tool = json.loads(run("grep", EXAMPLE, "(a", "--regex", "--json").stdout)
    assert "(?m)" not in tool["error"]["message"]
    assert "pass regex=false" in tool["error"]["message"]  # the tool's own words, for a model


@pytest.mark.parametrize(
    ("pattern", "said"),
    [
        ("DOCKS_AVAILABLE", "match ignoring case (add -i)."),
        (r"\w+_available", "match as a regular expression (add --regex)."),
        (
            "zzzqqq",
            "in any letter case. grep matches text as written: try a shorter piece, or okfx "
            "search for the words.",
        ),
    ],
)
def test_grep_hints_name_options_not_tool_arguments(pattern: str, said: str) -> None:
    """Docs audit: grep's no-match hints said "pass ignore_case=true" on the command line."""
    shown = run("grep", EXAMPLE, pattern).stdout
    assert shown.rstrip().endswith(said)
    assert "=true" not in shown and "search_concepts" not in shown


def test_two_folders_of_one_name_are_told_apart_by_their_parents(tmp_path: Path) -> None:
    """MCP QA: AV-OKF/knowledge and okf-poc/knowledge stopped okfx serve before an MCP
    client could connect (it saw "Connection closed"). Each is now named by its parent
    folder too, and stderr says so."""
    for parent in ("AV-OKF", "okf+poc"):
        folder = tmp_path / parent / "knowledge"
        folder.mkdir(parents=True)
        (folder / "a.md").write_text("---\ntype: Note\n---\nBody.\n", encoding="utf-8")
    first, second = str(tmp_path / "AV-OKF" / "knowledge"), str(tmp_path / "okf+poc" / "knowledge")
    result = run("bundles", first, second, "--json")
    assert result.exit_code == 0, result.output
    names = [b["name"] for b in json.loads(result.stdout)["bundles"]]
    assert names == ["AV-OKF-knowledge", "okf-poc-knowledge"]  # "+" is no name character
    assert "two folders are named 'knowledge'; naming" in result.stderr
    named = run("bundles", f"av={first}", second, "--json")  # one named: no clash left
    assert [b["name"] for b in json.loads(named.stdout)["bundles"]] == ["av", "knowledge"]
    # the library, which every adapter loads through, names them alike (agent QA F1:
    # "okf+poc-knowledge" there, so a prompt written against okfx serve broke)
    from okfx import KnowledgeManager

    assert list(KnowledgeManager.from_paths([first, second]).bundles) == names


def test_the_same_folder_given_twice_is_read_once(tmp_path: Path) -> None:
    """Platform QA: the same folder twice stopped okfx serve, with a hint to name the two
    copies; it is one bundle, read once, and stderr says so in words that fit every
    command (QA: "serving it once" from okfx bundles)."""
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntype: Note\n---\nBody.\n", encoding="utf-8")
    result = run("bundles", str(folder), f"{folder}/", str(tmp_path / "." / "kb"), "--json")
    assert result.exit_code == 0, result.output
    assert [b["name"] for b in json.loads(result.stdout)["bundles"]] == ["kb"]
    assert result.stderr.count("again; reading it once") == 2
    assert f"{folder}/ is {folder} again" in result.stderr
    named = run("bundles", f"one={folder}", f"two={folder}", "--json")  # named: as asked
    assert [b["name"] for b in json.loads(named.stdout)["bundles"]] == ["one", "two"]


def test_searching_a_bundle_without_concepts_points_to_validate(tmp_path: Path) -> None:
    """Platform QA: the CLI said "list_bundles says why (its empty field)"."""
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "notes.txt").write_text("no concept here\n", encoding="utf-8")
    shown = run("search", str(tmp_path / "kb"), "anything").stdout
    assert shown.rstrip().endswith(
        "has no concepts, so no search can find anything: okfx validate says why."
    )
    assert "list_bundles" not in shown


def test_an_option_of_okfx_itself_after_the_command_says_where_it_goes() -> None:
    """Docs QA: `okfx bundles --no-state-cache ...` said only "No such option"."""
    result = run("bundles", "--no-state-cache", EXAMPLE)
    assert result.exit_code == 2
    said = "--no-state-cache is an option of okfx itself: put it before the command"
    assert said in result.stderr and "(okfx --no-state-cache bundles ...)" in result.stderr
    other = run("search", EXAMPLE, "x", "--state-cache", "/tmp/x")
    assert "(okfx --state-cache DIR search ...)" in other.stderr
    typo = run("search", EXAMPLE, "x", "--limt", "3")  # any other option: click's own
    assert "Did you mean '--limit'?" in typo.stderr


def test_bundles_says_why_a_bundle_holds_no_concept_and_index_counts_one_concept(
    tmp_path: Path,
) -> None:
    """Docs QA: a bundle in a hidden .okf read "0" with no reason but under --json, and
    one row read "1-1 of 1 concepts"."""
    hidden = tmp_path / "kb" / ".okf"
    hidden.mkdir(parents=True)
    (hidden / "index.md").write_text("# KB\n", encoding="utf-8")
    (hidden / "a.md").write_text("---\ntype: Note\n---\nBody.\n", encoding="utf-8")
    shown = run("bundles", str(tmp_path / "kb"), EXAMPLE).stdout
    assert "kb: no concepts: " in shown and "load .okf itself" in shown
    assert "knowledge:" not in shown  # a bundle with concepts gets no such line
    one = run("index", EXAMPLE, "--tag", "stations", "--type", "Metric").stdout
    assert "1-1 of 1 concept in knowledge" in one


def test_an_archive_okfx_cannot_read_says_what_to_do(tmp_path: Path) -> None:
    """Docs QA: a corrupt archive's error ended with Python's words and no next step."""
    broken = tmp_path / "kb.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip" * 10)
    result = run("bundles", str(broken))
    assert result.exit_code == 1 and result.stderr.startswith("error[unreadable]: ")
    assert "fetch or build it again" in result.stderr


@pytest.mark.parametrize(
    ("missing", "args", "what", "extra"),
    [
        (
            "duckdb",
            ["serve", EXAMPLE, "--executor", "duckdb", "--data", f"trips={TRIPS}"],
            "okfx serve --executor duckdb",
            "duckdb",
        ),
        ("mcp", ["serve", EXAMPLE], "okfx serve", "mcp"),
        (
            "starlette",
            ["serve", EXAMPLE, "--transport", "http", "--web"],
            "okfx serve --web",
            "web",
        ),
        ("jinja2", ["view", EXAMPLE], "okfx view", "web"),
    ],
    ids=["executor", "serve", "serve-web", "view"],
)
def test_a_command_without_its_extra_refuses_to_start_and_names_the_pip_command(
    monkeypatch: pytest.MonkeyPatch, missing: str, args: list[str], what: str, extra: str
) -> None:
    """QA: --executor duckdb without duckdb served run_computation, which answered
    internal_error; serve and view said `Error: this okfx adapter needs ...` (exit 1)."""
    monkeypatch.setitem(sys.modules, missing, None)  # its import raises ImportError
    monkeypatch.delitem(sys.modules, "okfx.web", raising=False)  # checks its packages again
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error[missing_extra]: {what} needs the {extra} extra ({missing!r} is not "
        f"installed); install it with: {install_command(extra)}\n"
    )


@pytest.mark.parametrize(
    ("command", "name"),
    [("search", "QUERY"), ("read", "PATH"), ("grep", "PATTERN"), ("neighbors", "PATH")],
)
def test_a_missing_last_argument_is_named_not_the_bundle_given(command: str, name: str) -> None:
    """QA: `okfx search kb` said "Missing argument 'BUNDLE...'" when QUERY was missing."""
    for result in (run(command, EXAMPLE), run(command, EXAMPLE, "--json")):
        assert result.exit_code == 2
        assert f"Error: Missing argument '{name}' (give BUNDLE... then {name})." in result.stderr
        assert "Usage: " in result.stderr  # click's usage text, as for a malformed command line
    nothing = run(command)
    assert nothing.exit_code == 2
    assert f"Missing argument 'BUNDLE...' (give BUNDLE... then {name})." in nothing.stderr


def test_a_token_for_a_stdio_server_is_refused(tmp_path: Path) -> None:
    """QA: `okfx serve KB --token abc` served stdio and said nothing, as if the token
    protected it; --workers and --web without --transport http were refused already."""
    pytest.importorskip("mcp")
    token_file = tmp_path / "token"
    token_file.write_text("a-long-enough-token-for-the-test\n", encoding="utf-8")
    for option in (
        ["--token", "a-long-enough-token-for-the-test"],
        ["--token-file", str(token_file)],
    ):
        result = run("serve", EXAMPLE, *option)
        assert result.exit_code == 2, result.output
        assert "--token and --token-file protect an HTTP server: add --transport http" in (
            result.stderr
        )


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0.5"])
def test_a_refresh_interval_that_is_no_number_of_seconds_is_refused(value: str) -> None:
    """Sources QA: nan ran git ls-remote back to back; inf ended the refresh thread."""
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    for command in ("serve", "view"):
        result = CliRunner().invoke(cli, [command, str(EXAMPLE), "--refresh-interval", value])
        assert result.exit_code == 2 and "--refresh-interval" in result.output, result.output


def test_a_name_in_any_script_names_a_bundle_and_a_name_with_a_space_is_explained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CLI QA: 知识库=DIR and "my kb=DIR" were both "bundle folder not found"."""
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntype: Note\n---\nBody.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    named = run("bundles", "知识库=kb", "위키.v2=kb", "--json")
    assert named.exit_code == 0, named.output
    assert [b["name"] for b in json.loads(named.stdout)["bundles"]] == ["知识库", "위키.v2"]
    spaced = run("bundles", "my kb=kb")
    assert spaced.exit_code == 2
    assert "if 'my kb' is meant as a NAME, a bundle NAME takes letters, digits" in spaced.stderr


def test_a_state_cache_folder_okfx_refuses_is_said_by_a_read_command(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """CLI QA: `--state-cache DIR` that okfx refuses seemed ignored by read commands. (A
    terminal shows okfx's warnings on stderr; under pytest they reach its log capture.)"""
    import os

    if not hasattr(os, "getuid"):
        pytest.skip("needs POSIX user ids")
    folder, shared = tmp_path / "kb", tmp_path / "shared"
    folder.mkdir()
    shared.mkdir()
    shared.chmod(0o777)
    (folder / "a.md").write_text("---\ntype: Note\n---\nBody.\n", encoding="utf-8")
    result = run("--state-cache", str(shared), "index", str(folder))
    assert result.exit_code == 0, result.output
    assert f"okfx will not use the cache folder {shared}" in caplog.text
    assert caplog.text.count("Loading without the state cache.") == 1


def test_a_query_or_path_written_before_the_bundle_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CLI QA: `okfx search "composite resource" KB` said the folder "composite
    resource" was not found; a concept's file given as BUNDLE said "not a folder"."""
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntype: Note\n---\nBody.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    swapped = run("search", "composite resource", "kb")
    assert swapped.exit_code == 2
    assert "BUNDLE comes first, then what to look for, as in okfx search kb 'composite" in (
        swapped.stderr
    )
    assert "as in okfx read kb 'a.md'" in run("read", "a.md", "kb").stderr
    as_bundle = run("search", "kb/a.md", "body")
    assert as_bundle.exit_code == 2 and "it is a markdown file; BUNDLE is the folder" in (
        as_bundle.stderr
    )


def test_a_path_given_as_a_file_on_disk_is_read_in_its_bundle_or_refused_outside(
    tmp_path: Path,
) -> None:
    """CLI QA: another bundle's file given by its path on disk was not_found with this
    bundle's /index.md as "did you mean"."""
    kb, other = tmp_path / "kb", tmp_path / "other"
    for folder in (kb / "core", other):
        folder.mkdir(parents=True)
    (kb / "core" / "a.md").write_text("---\ntype: Note\ntitle: Aye\n---\nBody.\n", encoding="utf-8")
    (other / "index.md").write_text("# Other\n", encoding="utf-8")
    inside = run("read", str(kb), str(kb / "core" / "a.md"))
    assert inside.exit_code == 0 and "Aye" in inside.stdout, inside.output
    outside = run("read", str(kb), str(other / "index.md"))
    assert outside.exit_code == 2
    assert "is a file on disk outside the bundle loaded ('kb')" in outside.stderr
    assert "did you mean" not in outside.stderr
