"""``okfx serve`` serves the sources that load: one that does not (a hostile archive, a
missing folder, a name another bundle takes) is said on stderr and listed by
``list_bundles`` as unavailable (platform QA: one team's broken archive stopped the
server, and the MCP client saw only "Connection closed")."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import concept, write_tree
from okfx import Bundle, KnowledgeManager, Toolbox
from okfx.cli.commands import cli


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Toolbox]:
    pytest.importorskip("mcp", reason="okfx serve needs the mcp extra")
    from okfx.adapters import mcp as adapter

    boxes: list[Toolbox] = []
    monkeypatch.setattr(adapter, "build_server", lambda box, **_: boxes.append(box))
    monkeypatch.setattr(adapter, "serve_stdio", lambda server: None)
    return boxes


def hostile_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("../../escape.md", "---\ntype: Note\n---\n")
    return path


def test_a_source_that_does_not_load_leaves_the_others_served(
    tmp_path: Path, served: list[Toolbox]
) -> None:
    good = write_tree(tmp_path / "ops", {"a.md": concept(title="Deploy")})
    clash = write_tree(tmp_path / "other" / "x", {"b.md": concept()})
    bad = hostile_zip(tmp_path / "bad.zip")
    result = CliRunner().invoke(
        cli,
        ["serve", str(good), str(bad), str(tmp_path / "gone"), f"ops={clash}", "--lazy-index"],
    )
    assert result.exit_code == 0, result.output
    (box,) = served
    assert box.manager.names == ["ops"]
    listed: dict[str, Any] = box.list_bundles()
    unavailable = {row["source"]: row["reason"] for row in listed["unavailable"]}
    # each by its last part: the server's folders are not said (security QA)
    assert list(unavailable) == ["…/bad.zip", "…/gone", "…/x"]
    assert "'..' in its name" in unavailable["…/bad.zip"]
    assert "two bundles are named 'ops'" in unavailable["…/x"]
    assert str(tmp_path) not in str(listed)
    assert result.stderr.count("okfx: not serving ") == 3


def test_with_no_source_that_loads_serve_stops_with_the_first_reason(
    tmp_path: Path, served: list[Toolbox]
) -> None:
    bad = hostile_zip(tmp_path / "bad.zip")
    result = CliRunner().invoke(cli, ["serve", str(bad), "--lazy-index"])
    assert result.exit_code != 0 and served == []
    assert "'..' in its name" in result.stderr


def test_one_shot_commands_still_stop_at_a_source_that_does_not_load(tmp_path: Path) -> None:
    good = write_tree(tmp_path / "ops", {"a.md": concept()})
    result = CliRunner().invoke(
        cli, ["search", str(good), str(hostile_zip(tmp_path / "b.zip")), "x"]
    )
    assert result.exit_code != 0 and "'..' in its name" in result.stderr


def test_list_bundles_without_unavailable_sources_has_no_such_key(tmp_path: Path) -> None:
    box = Toolbox(KnowledgeManager([Bundle.load(write_tree(tmp_path / "k", {"a.md": concept()}))]))
    assert "unavailable" not in box.list_bundles()


TOKEN = "s3cr3tTOKEN"


def test_a_git_urls_token_reaches_no_message_output_or_agent(
    tmp_path: Path, served: list[Toolbox], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sources QA: a failed load repeated the source as typed, token and all, on stderr,
    in --json, in a GitHub annotation, in the two-bundles error, and in the reason
    ``list_bundles`` gives every agent (the stderr line of serve alone was redacted)."""
    import subprocess

    repo = write_tree(tmp_path / "repo", {"kb/a.md": concept(title="A")})
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    config = tmp_path / "gitconfig"
    url = f"https://alice:{TOKEN}@git.example.org/kb"
    config.write_text(f'[url "{repo.as_uri()}"]\n\tinsteadOf = {url}\n', encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "T")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "t@t")
    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path / "cache"))
    runner = CliRunner()
    calls = [
        ["bundles", f"{url}#:nope"],
        ["index", "--json", f"{url}#:nope"],
        ["validate", "--format", "github", f"{url}#:nope"],
        ["bundles", f"{url}#:kb", f"{url}#:kb/"],
        ["bundles", f"{url}#:kb", f"{url}#:kb/", f"{url}#:./kb"],
    ]
    for args in calls:
        result = runner.invoke(cli, args)
        said = result.output + result.stderr
        assert "https://***@git.example.org/kb" in said and TOKEN not in said, (args, said)
    result = runner.invoke(cli, ["serve", f"{url}#:kb", f"{url}#:nope", "--lazy-index"])
    assert result.exit_code == 0, result.output
    (box,) = served
    listed = box.list_bundles()
    assert listed["unavailable"] and TOKEN not in str(listed) and TOKEN not in result.stderr


def test_serving_with_watch_names_the_bundles_an_archive_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Sources QA: an operator replaced a served archive and waited for a reload that
    --watch and --refresh-interval never make; the server now says so when it starts."""
    from okfx.cli.commands import _say_unwatched

    archive = tmp_path / "kb.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("kb/a.md", concept())
    folder = write_tree(tmp_path / "ops", {"a.md": concept()})
    manager = KnowledgeManager(
        [Bundle.load(archive, cache_dir=tmp_path / "c"), Bundle.load(folder)]
    )
    _say_unwatched(manager)
    said = capsys.readouterr().err.splitlines()
    assert said == [
        "okfx: kb is read from an archive, which is not reloaded while it is served: start "
        "again with a new archive (--refresh extracts it again)"
    ]
