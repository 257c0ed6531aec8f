"""Bundle text cannot drive the terminal or forge a CI annotation through the CLI.

Escape sequences in a title, a body or a bundle's name would set the window title,
write the clipboard (OSC 52), plant hidden hyperlinks or clear the screen when ``okfx``
prints them (issue 16). Every human-readable output shows control characters the way
``cat -v`` does, piped or not, while ``--json`` stays exact. In ``validate --format
github`` every bundle-derived string is escaped, and no line starts with ``::`` unless
okfx wrote the command.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hostile import concept, write

from okfx import Bundle, KnowledgeManager
from okfx.cli import render
from okfx.cli.commands import cli
from okfx.cli.terminal import visible

TITLE_SET = "\x1b]0;PWNED\x07"
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"
LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
CLEAR = "\x1b[2J\x1b[H"
C1_CSI = "\x9b31m"
HOSTILE = TITLE_SET + CLIPBOARD + LINK + CLEAR + C1_CSI + "\r\x08"
# What a terminal would act on: ESC, BEL, the C1 CSI, CR and backspace.
ACTIVE = re.compile("[\x1b\x07\x9b\r\x08]")
YAML_HOSTILE = json.dumps(HOSTILE)  # a YAML double-quoted scalar takes JSON escapes


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    return write(
        tmp_path / "kb",
        {
            "a.md": concept(
                title=YAML_HOSTILE,
                description=YAML_HOSTILE,
                tags=f"[{YAML_HOSTILE}]",
                body=f"# Head {HOSTILE}\n\nfindme {HOSTILE}\n\n[{HOSTILE}](b.md)\n",
            ),
            "b.md": concept(title="plain", body="findme too\n"),
        },
    )


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def assert_inert(result: Result) -> None:
    for stream, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        assert not ACTIVE.search(text), f"{stream} carries a control sequence: {text!r:.300}"


@pytest.mark.parametrize(
    "args",
    [
        ["read", "{b}", "a"],
        ["read", "{b}", "a", "--section", "Head " + HOSTILE],
        ["index", "{b}"],
        ["grep", "{b}", "findme"],
        ["search", "{b}", "findme"],
        ["neighbors", "{b}", "a"],
        ["neighbors", "{b}", "b"],
    ],
)
def test_human_output_shows_control_characters_instead_of_sending_them(
    bundle: Path, args: list[str]
) -> None:
    result = run(*[a.replace("{b}", str(bundle)) for a in args])
    assert_inert(result)
    assert "^[]0;PWNED^G" in result.stdout + result.stderr


def test_a_load_error_from_a_source_cannot_drive_the_terminal(tmp_path: Path) -> None:
    archive = tmp_path / "kb.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../" + TITLE_SET + ".md", "x")  # refused: the message names the entry
    result = run("index", str(archive))
    assert result.exit_code == 1
    assert_inert(result)


def test_json_output_stays_exact_and_escapes_what_json_leaves_raw(bundle: Path) -> None:
    for args in (["read", str(bundle), "a", "--json"], ["validate", str(bundle), "--json"]):
        result = run(*args)
        assert not ACTIVE.search(result.stdout)  # JSON escapes C0; okfx escapes C1 and DEL
    payload = json.loads(run("read", str(bundle), "a", "--json").stdout)
    assert payload["title"] == HOSTILE
    assert HOSTILE.replace("\r", "\n") in payload["body"]  # the load makes CR a newline


def test_newlines_and_tabs_stay_layout() -> None:
    assert visible("a\tb\nc\x1b[2Jd\x7f\x9b") == "a\tb\nc^[[2Jd^?M-^["


def hostile_zip(tmp_path: Path, top: str) -> Path:
    path = tmp_path / "kb.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{top}/a.md", concept(status='"bad\\nstatus"'))
        zf.writestr(f"{top}/b.md", "no frontmatter\n")
    return path


def test_a_bundle_name_cannot_drive_the_terminal(tmp_path: Path) -> None:
    archive = hostile_zip(tmp_path, "kb" + TITLE_SET + CLEAR)
    for args in (["validate", str(archive)], ["bundles", str(archive)]):
        result = run(*args)
        assert_inert(result)
        assert "kb^[]0;PWNED^G" in result.stdout
    manager = KnowledgeManager([Bundle.load(archive, cache_dir=tmp_path / "c")])
    banner = render.serve_banner(manager, "http://127.0.0.1:8765/mcp", None)
    assert not ACTIVE.search(banner) and "kb^[]0;PWNED^G" in banner
    notice = render.stdio_notice(manager)  # okfx serve on stdio, started in a terminal
    assert not ACTIVE.search(notice) and "kb^[]0;PWNED^G" in notice
    # okfx view's first line too (security QA: it printed the name raw)
    from okfx.cli.webserve import viewer_banner

    viewing = viewer_banner(manager, "http://127.0.0.1:8765/", False)
    assert not ACTIVE.search(viewing) and "kb^[]0;PWNED^G" in viewing


def test_github_annotations_cannot_be_forged_by_a_bundle_name(tmp_path: Path) -> None:
    archive = hostile_zip(tmp_path, "::error title=x::forged")
    result = run("validate", str(archive), "--format", "github")
    lines = result.stdout.splitlines()
    commands = [line for line in lines if line.startswith("::")]
    # okfx's own commands: one per problem, each naming a file and an okfx code.
    assert commands and all(re.match(r"::(error|warning) file=", line) for line in commands)
    assert len(commands) == len([line for line in lines if "okfx " in line])
    verdict = lines[-1]
    assert verdict.startswith("okfx: ::error title=x::forged: NOT conformant")


def test_github_annotations_escape_every_bundle_string(tmp_path: Path) -> None:
    name = "kb\n::warning::x,%y:z"
    archive = hostile_zip(tmp_path, name.replace("\n", "_"))
    result = run("validate", str(archive), "--format", "github")
    lines = result.stdout.splitlines()
    assert len(lines) == 3  # two problems and the verdict: the name added no line
    for line in lines:
        assert line.startswith(("::error file=", "::warning file=", "okfx: ")), line
        assert "##[" not in line and not ACTIVE.search(line)


def test_a_legacy_workflow_command_in_bundle_text_is_broken_up(tmp_path: Path) -> None:
    root = write(tmp_path / "kb", {"a.md": concept(status='"##[error]forged"')})
    result = run("validate", str(root), "--format", "github")
    assert "##[" not in result.stdout and "##%5Berror]forged" in result.stdout
