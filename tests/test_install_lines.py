"""Every install line in README.md and docs/ installs okfx as written.

okfx is not on PyPI, so the docs install it from a checkout (``pip install -e ".[mcp]"``)
or from the repository's git URL (``pip install "okfx[mcp] @ git+https://github.com/OWNER/
okfx"``, ``OWNER`` a placeholder until there is a public repository). The tests make a git
repository and a clone of the project (the real ``git``), point the documented URL at it,
and run the lines against it, offline (pip reads the package index configured on the
machine). Every line is checked for its form and extras; one line of each form is
installed for real and the installed okfx is run. Resolving every line's dependencies
takes a few minutes, so it runs when ``OKFX_INSTALL_TESTS=1`` (``.ci/run`` sets it).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from conftest import PROJECT_ROOT
from doc_blocks import REPOSITORY_URL, blocks, commands, inline_install_lines
from okfx.version import REPOSITORY, install_command

PYPROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS = set(PYPROJECT["project"]["optional-dependencies"])
#: Every distribution name an extra asks for, e.g. "pydantic-ai-slim".
EXTRA_PACKAGES = {
    Requirement(dep).name
    for deps in PYPROJECT["project"]["optional-dependencies"].values()
    for dep in deps
}
FULL = os.environ.get("OKFX_INSTALL_TESTS") == "1"
WAIT = 600


def install_lines() -> list[tuple[str, list[str]]]:
    """(where, words) of every ``pip install`` and ``git clone`` the docs show."""
    found: list[tuple[str, list[str]]] = []
    for block in blocks():
        if block.lang == "bash":
            lines = commands(block)
        elif block.lang == "yaml":
            import yaml

            steps = [
                step["run"]
                for job in yaml.safe_load(block.body).get("jobs", {}).values()
                for step in job.get("steps", [])
                if "run" in step
            ]
            lines = [shlex.split(run) for run in steps]
        else:
            continue
        for words in lines:
            if words[:2] in (["pip", "install"], ["git", "clone"]):
                found.append((block.where, words))
    for where, line in inline_install_lines():
        found.append((where, shlex.split(line)))
    return found


LINES = install_lines()
IDS = [f"{where}:{' '.join(words)}" for where, words in LINES]
#: Each distinct command once (several pages show the same line), for the slow check.
DISTINCT = list({" ".join(words): (where, words) for where, words in LINES}.values())


def _requirements(words: list[str]) -> list[str]:
    return [w for w in words[2:] if not w.startswith("-")]


@pytest.mark.parametrize(("where", "words"), LINES, ids=IDS)
def test_every_install_line_names_okfx_the_way_it_can_be_installed(
    where: str, words: list[str]
) -> None:
    if words[:2] == ["git", "clone"]:
        assert words[2] == REPOSITORY_URL, where
        return
    for text in _requirements(words):
        if text.startswith("."):  # a checkout: ".", ".[mcp]"
            assert "-e" in words or text != ".", where
            extras = set(text[2:-1].split(",")) if text.startswith(".[") else set()
            assert extras <= EXTRAS, (where, extras - EXTRAS)
            continue
        requirement = Requirement(text)
        if requirement.name == "okfx":
            assert requirement.url == f"git+{REPOSITORY_URL}", (where, text)
            assert requirement.extras <= EXTRAS, (where, requirement.extras - EXTRAS)
        else:  # a framework's own extra, e.g. a pydantic-ai model provider
            assert requirement.name in EXTRA_PACKAGES, (where, text)


def test_the_docs_cover_both_forms_and_okfx_says_the_same_in_its_errors() -> None:
    shown = [" ".join(words) for _, words in LINES]
    assert any(f"okfx[mcp] @ git+{REPOSITORY_URL}" in line for line in shown)
    assert "pip install -e .[mcp]" in shown  # shlex dropped the quotes
    assert any(words[:2] == ["git", "clone"] for _, words in LINES)
    assert REPOSITORY == REPOSITORY_URL
    # the command that runs as printed first (framework QA: OWNER was given to run)
    assert install_command("mcp") == (
        f'pip install -e ".[mcp]" in a checkout of okfx, or pip install "okfx[mcp] @ '
        f'git+{REPOSITORY_URL}" (OWNER: the account that hosts okfx; docs/install.md)'
    )


def test_okfx_never_tells_a_user_to_pip_install_okfx_by_name() -> None:
    # okfx is not on PyPI: a message or help text that says pip install 'okfx[x]' fails
    import re

    by_name = re.compile(r"""pip install ['"]?okfx(\[|['"\s]|$)""")
    found = [
        f"{path.relative_to(PROJECT_ROOT)}:{number}"
        for path in sorted((PROJECT_ROOT / "src").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if by_name.search(line)
    ]
    assert not found, f"use okfx.version.install_command(extra) or docs/install.md: {found}"


def test_the_extras_table_names_every_extra() -> None:
    table = (PROJECT_ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip().strip("`") for line in table.splitlines() if "| `" in line}
    assert rows == EXTRAS, sorted(EXTRAS ^ rows)


# -- running them --------------------------------------------------------------------------
def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository holding the project as it is in the working tree."""
    repo = tmp_path_factory.mktemp("okfx-repo") / "okfx"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT_ROOT,
        check=True,
        capture_output=True,
        timeout=60,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = PROJECT_ROOT / name.decode()
        if source.is_file():
            target = repo / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    _git("init", "-q", "-b", "main", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "okfx", cwd=repo)
    return repo


def _local(words: list[str], repo: Path) -> list[str]:
    """The line with the documented repository URL pointing at the test's repository
    (``file://localhost/...``: older pips refuse an empty host in a direct reference)."""
    url = f"file://localhost{repo}"
    return [w.replace(REPOSITORY_URL, url) for w in words]


def _pip(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args, "--disable-pip-version-check"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def test_the_git_url_line_installs_an_okfx_that_runs(repository: Path, tmp_path: Path) -> None:
    line = next(words for _, words in LINES if f"okfx @ git+{REPOSITORY_URL}" in words)
    target = tmp_path / "site"
    # the documented line, into a folder of its own; the dependencies are this venv's
    installed = _pip(
        [*_local(line, repository)[1:], "--no-deps", "--target", str(target)], tmp_path
    )
    assert installed.returncode == 0, installed.stderr
    run = subprocess.run(
        [sys.executable, "-c", "import okfx, sys; print(okfx.__file__); sys.argv[0] = 'okfx'; "
         "from okfx.cli import main; main()", "validate",
         str(PROJECT_ROOT / "examples" / "knowledge")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )  # fmt: skip
    assert run.stdout.startswith(str(target)), run.stdout  # the copy pip installed
    assert "knowledge: conformant with OKF v0.2" in run.stdout, run.stderr


def test_git_clone_then_the_checkout_line_installs(repository: Path, tmp_path: Path) -> None:
    clone = next(words for _, words in LINES if words[:2] == ["git", "clone"])
    done = subprocess.run(
        _local(clone, repository), cwd=tmp_path, capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    checkout = tmp_path / "okfx"
    assert (checkout / "pyproject.toml").is_file()
    line = next(words for _, words in LINES if words[2:] == ["-e", ".[mcp]"])
    resolved = _pip([*line[1:], "--dry-run", "--no-deps"], checkout)
    assert resolved.returncode == 0, resolved.stderr
    assert "Would install okfx-" in resolved.stdout


@pytest.mark.skipif(not FULL, reason="resolves every line: set OKFX_INSTALL_TESTS=1 (CI does)")
@pytest.mark.parametrize(("where", "words"), DISTINCT, ids=[" ".join(w) for _, w in DISTINCT])
def test_every_install_line_resolves_offline(
    where: str, words: list[str], repository: Path, tmp_path: Path
) -> None:
    if words[:2] == ["git", "clone"]:
        done = subprocess.run(
            _local(words, repository), cwd=tmp_path, capture_output=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return
    report = tmp_path / "report.json"
    args = [*_local(words, repository)[1:], "--dry-run", "--ignore-installed"]
    resolved = _pip([*args, "--report", str(report)], repository)
    assert resolved.returncode == 0, (where, resolved.stderr)
    names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    for text in _requirements(words):
        extras: set[str] = set()
        if text.startswith(".["):
            extras = set(text[2:-1].split(","))
        elif not text.startswith("."):
            requirement = Requirement(text)
            assert requirement.name.lower() in names, (where, text)
            extras = set(requirement.extras) if requirement.name == "okfx" else set()
        for extra in extras:
            for dep in PYPROJECT["project"]["optional-dependencies"][extra]:
                name = Requirement(dep).name.lower()
                assert name == "okfx" or name in names, (where, extra, name)
