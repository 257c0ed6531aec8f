"""Docs that tests keep honest: README snippets run, commands in docs exist."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator

from click.testing import CliRunner

from conftest import PROJECT_ROOT
from okfx.cli.commands import cli

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(r"```" + lang + r"\n(.*?)```", text, flags=re.S)


def test_readme_starts_with_exactly_two_setup_commands() -> None:
    commands = _blocks(README, "bash")
    assert commands[:2] == [
        'pip install -e ".[mcp]" && okfx serve examples/knowledge --transport http\n',
        'pip install -e ".[dev]" && pytest\n',
    ]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (PROJECT_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _blocks(README, "bash")[1].strip() in ci


def test_readme_quick_start_runs() -> None:
    (snippet,) = _blocks(README, "python")
    assert len(snippet.strip().splitlines()) <= 10
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", snippet],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "/metrics/dock-availability.md" in proc.stdout
    assert "trip_id" in proc.stdout


def test_every_cli_command_is_documented() -> None:
    doc = (PROJECT_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name, command in cli.commands.items():  # type: ignore[attr-defined]
        assert f"## okfx {name}" in doc, name
        help_text = CliRunner().invoke(cli, [name, "--help"]).output
        assert "Example:" in help_text, name
        for sub in getattr(command, "commands", {}):  # okfx cache path (QA: no example)
            help_text = CliRunner().invoke(cli, [name, sub, "--help"]).output
            assert "Example:" in help_text, f"{name} {sub}"


def _okfx_commands(text: str) -> Iterator[list[str]]:
    """The arguments of every ``okfx`` command in the doc's bash blocks, also after ``--``."""
    for block in _blocks(text, "bash"):
        for line in block.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part)
                if "--" in words:  # e.g. claude mcp add okfx -- okfx serve ...
                    words = words[words.index("--") + 1 :]
                if words[:1] == ["okfx"]:
                    yield words[1:]


def test_every_okfx_command_in_the_docs_parses() -> None:
    seen = 0
    for doc in ("README.md", "docs/cli.md", "docs/mcp.md", "docs/state.md"):
        text = (PROJECT_ROOT / doc).read_text(encoding="utf-8")
        for name, *rest in _okfx_commands(text):
            command = cli.commands[name]  # type: ignore[attr-defined]
            command.make_context(name, rest)  # a wrong option or argument raises UsageError
            seen += 1
    assert seen >= 4


def test_every_stdio_client_config_in_the_mcp_doc_runs_a_real_okfx_command() -> None:
    text = (PROJECT_ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    stdio = [
        server
        for block in _blocks(text, "json")
        for server in json.loads(block)["mcpServers"].values()
        if "command" in server
    ]
    assert len(stdio) == 3  # Claude Desktop, Gemini CLI, Cursor
    for server in stdio:
        assert server["command"] == "okfx"
        name, *rest = server["args"]
        cli.commands[name].make_context(name, rest)  # type: ignore[attr-defined]


def test_tools_doc_matches_the_tool_signatures() -> None:
    sys.path.insert(0, str(PROJECT_ROOT / "scripts"))
    try:
        from tools_doc import block
    finally:
        sys.path.pop(0)
    doc = (PROJECT_ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    generated = doc.split("<!-- tools:start -->\n", 1)[1].split("<!-- tools:end -->", 1)[0]
    expected = block()
    assert generated.strip() == expected.strip(), "run: python scripts/tools_doc.py"


def test_the_tools_doc_lists_every_result_key_under_its_tool() -> None:
    from okfx.tools.results import ERROR, RESULTS

    doc = (PROJECT_ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    generated = doc.split("<!-- tools:start -->\n", 1)[1].split("<!-- tools:end -->", 1)[0]
    sections = {part.split("\n", 1)[0]: part for part in generated.split("## ")[1:]}
    head = "| key | type | when | what |\n|---|---|---|---|\n"
    for name, tables in [*RESULTS.items(), ("A failed call", ERROR)]:
        listed = [
            re.findall(r"^\| `([^`]+)` \|", rows.split("\n\n", 1)[0], re.MULTILINE)
            for rows in sections[name].split(head)[1:]
        ]
        assert listed == [list(table.names()) for table in tables], name


def test_the_ci_workflow_in_the_cli_doc_runs_real_okfx_commands() -> None:
    import yaml

    text = (PROJECT_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    configs = [yaml.safe_load(block) for block in _blocks(text, "yaml")]
    runs = [
        step["run"]
        for config in configs
        for job in config.get("jobs", {}).values()
        for step in job["steps"]
        if str(step.get("run", "")).startswith("okfx ")
    ]
    assert runs == ["okfx validate knowledge --strict --format github"]
    # the pre-commit hook (CI QA): the bundle's folder, never the files staged
    hooks = [
        hook for config in configs for repo in config.get("repos", []) for hook in repo["hooks"]
    ]
    assert [(hook["entry"], hook["pass_filenames"]) for hook in hooks] == [
        ("okfx validate knowledge", False)
    ]
    runs += [hook["entry"] for hook in hooks]
    for run in runs:
        name, *rest = shlex.split(run)[1:]
        cli.commands[name].make_context(name, rest)  # type: ignore[attr-defined]


def test_the_state_page_shows_its_reload_snippet_whole_and_it_runs(tmp_path: object) -> None:
    path = PROJECT_ROOT / "docs" / "snippets" / "reload_and_watch.py"
    doc = (PROJECT_ROOT / "docs" / "state.md").read_text(encoding="utf-8")
    assert path.read_text(encoding="utf-8") in doc
    proc = subprocess.run(
        [sys.executable, str(path)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OKFX_CACHE_HOME": str(tmp_path)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    changed, title, reloaded, count = proc.stdout.splitlines()
    assert changed.startswith("1 changed, 0 added, 0 removed")
    assert title == "Dock capacity"
    assert "0 changed, 1 added, 0 removed" in reloaded
    from okfx import Bundle

    assert int(count) == len(Bundle.load(PROJECT_ROOT / "examples" / "knowledge")) + 1


def test_each_framework_page_lists_the_error_codes_of_the_tools_table() -> None:
    """Docs QA: the four framework pages left out no_executor and timeout."""
    tools = (PROJECT_ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    table = tools.split("| code | when |", 1)[1].split("\n\n", 1)[0]
    codes = re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M)
    assert "no_executor" in codes and "internal_error" in codes
    for page in ("adk", "langchain", "pydantic-ai", "openai-agents"):
        text = (PROJECT_ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
        listed = text.split("(codes: ", 1)[1].split(";", 1)[0]
        assert re.findall(r"`([a-z_]+)`", listed) == codes, page
