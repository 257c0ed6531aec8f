"""NAME=SOURCE on every command that takes bundles (issue 17, item 10): three of the
real bundles are folders named ``okf``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import concept, write_tree
from okfx.cli.commands import cli


@pytest.fixture
def two_okf(tmp_path: Path) -> tuple[str, str]:
    a = write_tree(tmp_path / "a" / "okf", {"x.md": concept(title="Alpha widget")})
    b = write_tree(tmp_path / "b" / "okf", {"y.md": concept(title="Beta widget")})
    return str(a), str(b)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_same_folder_names_are_told_apart_by_their_parents(two_okf: tuple[str, str]) -> None:
    """Two folders named okf were an error to fix by hand; their parents tell them apart
    (session 54's MCP QA: the error stopped okfx serve before a client could connect).
    Two names given the same name are still the error, with its fix."""
    a, b = two_okf
    code, out, err = run("search", a, b, "widget", "--json")
    assert code == 0
    assert sorted(h["bundle"] for h in json.loads(out)["hits"]) == ["a-okf", "b-okf"]
    assert "NAME=SOURCE" in err  # said on stderr, with how to choose the names
    code, _, err = run("search", f"okf={a}", f"okf={b}", "widget")
    assert code == 2
    assert "NAME=SOURCE" in err and "name=" not in err.replace("NAME=SOURCE", "")


def test_name_equals_source_names_the_bundles(two_okf: tuple[str, str]) -> None:
    a, b = two_okf
    code, out, _ = run("search", f"one={a}", f"two={b}", "widget", "--json")
    assert code == 0
    assert sorted(h["bundle"] for h in json.loads(out)["hits"]) == ["one", "two"]
    code, out, _ = run("bundles", f"one={a}", f"two={b}", "--json")
    assert [row["name"] for row in json.loads(out)["bundles"]] == ["one", "two"]
    code, out, _ = run("read", f"one={a}", f"two={b}", "y", "--bundle", "two", "--json")
    assert code == 0 and json.loads(out)["title"] == "Beta widget"
    code, out, _ = run("validate", f"mine={a}")
    assert code == 0 and out.split()[1] == "mine:"
    for command in ("index", "neighbors", "grep"):
        extra = {"index": [], "neighbors": ["y"], "grep": ["widget"]}[command]
        code, out, err = run(command, f"one={a}", f"two={b}", *extra, "-b", "two")
        assert code == 0, (command, err)


def test_serve_takes_name_equals_source(
    two_okf: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mcp", reason="okfx serve needs the mcp extra")
    from okfx.adapters import mcp as adapter

    served: list[list[str]] = []
    monkeypatch.setattr(adapter, "build_server", lambda box, **_: served.append(box.manager.names))
    monkeypatch.setattr(adapter, "serve_stdio", lambda server: None)
    a, b = two_okf
    code, _, err = run("serve", f"one={a}", f"two={b}", "--lazy-index")
    assert code == 0, err
    assert served == [["one", "two"]]


def test_a_folder_whose_name_holds_an_equals_sign_is_still_a_folder(tmp_path: Path) -> None:
    odd = write_tree(tmp_path / "k=v", {"x.md": concept()})
    code, out, _ = run("bundles", str(odd), "--json")
    assert code == 0 and json.loads(out)["bundles"][0]["name"] == "k=v"


def test_a_folder_and_a_clone_of_one_name_are_told_apart_by_where_they_come_from(
    two_okf: tuple[str, str], tmp_path: Path
) -> None:
    """Platform QA: two local okf folders were told apart, a local one and a git one
    stopped the command; now the clone is named by its repository."""
    import subprocess

    a, _ = two_okf
    work = tmp_path / "kb1"
    write_tree(work / "okf", {"z.md": concept(title="Gamma widget")})
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@x", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "kb"]):
        subprocess.run([*git, *args], cwd=work, check=True, env=env)
    url = f"{work.as_uri()}#:okf"
    code, out, err = run("bundles", a, url, "--json")
    assert code == 0, err
    assert [b["name"] for b in json.loads(out)["bundles"]] == ["okf", "kb1-okf"]
    assert "naming" in err and "'kb1-okf'" in err
    code, out, err = run("bundles", a, f"other.zip={a}", url, "--json")  # a named one stays
    assert [b["name"] for b in json.loads(out)["bundles"]] == ["okf", "other.zip", "kb1-okf"]
    # the clone given first is renamed as well (docs QA: it stopped the command, exit 2)
    code, out, err = run("bundles", url, a, "--json")
    assert code == 0, err
    assert [b["name"] for b in json.loads(out)["bundles"]] == ["kb1-okf", "okf"]


def test_pins_of_one_repository_and_archives_of_one_name_get_names_that_tell_them_apart(
    tmp_path: Path,
) -> None:
    """Sources QA: two pins of one repository were named after the repository alone
    (nothing said which commit) and a third was refused; three teams' ``kb.zip`` the
    same. A pin now takes its short commit, an archive its folder too."""
    import subprocess
    import zipfile

    work = tmp_path / "kb1"
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@x", "-c", "init.defaultBranch=main"]
    commits = []
    for step in range(2):
        write_tree(work / "okf", {f"z{step}.md": concept(title=f"Step {step}")})
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", f"s{step}"]):
            subprocess.run([*git, *args], cwd=work, check=True, env=env)
        commits.append(
            subprocess.run(
                [*git, "rev-parse", "HEAD"], cwd=work, env=env, capture_output=True, text=True
            ).stdout.strip()
        )
    pins = [f"{work.as_uri()}#{commit}:okf" for commit in commits]
    code, out, err = run("bundles", *pins, f"{work.as_uri()}#main:okf", "--json")
    assert code == 0, err
    names = [b["name"] for b in json.loads(out)["bundles"]]
    assert names == ["okf", f"okf-{commits[1][:7]}", "okf-main"]
    # Sources QA: three refs of one repository stopped the command; one source given in
    # two spellings was loaded twice, under two names.
    subprocess.run([*git, "tag", "v1", commits[0]], cwd=work, check=True, env=env)
    subprocess.run([*git, "branch", "team/dev", commits[0]], cwd=work, check=True, env=env)
    refs = [f"{work.as_uri()}#{ref}:okf" for ref in ("", "team/dev", "v1", "main")]
    code, out, err = run("bundles", *refs, f"{work.as_uri()}#:okf/", "--json")
    assert code == 0, err
    names = [b["name"] for b in json.loads(out)["bundles"]]
    assert names == ["okf", "okf-team-dev", "okf-v1", "okf-main"]
    assert f"okfx: {work.as_uri()}#:okf/ is {work.as_uri()}#:okf again; reading it once" in err
    archives = []
    for team in ("teama", "teamb", "teamc"):
        (tmp_path / team).mkdir()
        archives.append(tmp_path / team / "kb.zip")
        with zipfile.ZipFile(archives[-1], "w") as out_zip:
            out_zip.writestr("kb/okf/a.md", concept(title=team))
    code, out, err = run("bundles", *(f"{a}#okf" for a in archives), "--json")
    assert code == 0, err
    assert [b["name"] for b in json.loads(out)["bundles"]] == ["okf", "kb-okf", "teamc-kb-okf"]
    again = f"{archives[0].parent}/../{archives[0].parent.name}/kb.zip#okf/"
    code, out, err = run("bundles", f"{archives[0]}#okf", again, "--json")
    assert code == 0 and [b["name"] for b in json.loads(out)["bundles"]] == ["okf"], err
    assert "again; reading it once" in err
