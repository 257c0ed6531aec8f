"""Every code block in README.md and docs/ is run by a test, as a reader would run it.

- ``python``: a file in docs/snippets/ shown verbatim (the README's quick start aside, which
  ``test_docs.py`` runs from the root as the README says), run by the test of the extra its
  page installs (core snippets here), from a folder outside the project;
- ``bash``: each command is run: ``okfx`` commands here (``serve`` until it answers),
  ``pip install`` and ``git clone`` by ``test_install_lines.py``, the example agent by the
  pydantic-ai tests, a client's ``claude mcp add`` through the okfx command it starts;
- ``json``: client configs start a real server (stdio) or name the key the client reads
  (HTTP); the ``validate --json`` sample has the keys okfx prints;
- ``yaml``: the CI job's steps run as above;
- ``console``: a transcript; the command runs and prints the lines shown;
- ``text``: a diagram or a synopsis (each option a synopsis names exists).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner

from conftest import INITIALIZE, PROJECT_ROOT
from doc_blocks import PAGES, SNIPPETS, Block, blocks, commands, page
from okfx.cli.commands import cli

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
LANGS = {"bash", "python", "json", "yaml", "text", "console"}
#: Bundle paths the docs write for "your bundle"; the tests use the example bundle.
PLACEHOLDERS = {"/abs/path/to/knowledge", "/srv/knowledge", "knowledge", "./knowledge"}
WAIT = 60.0
ALL = blocks()


def test_every_block_says_its_language() -> None:
    unknown = [f"{b.where}: ```{b.lang}" for b in ALL if b.lang not in LANGS]
    assert not unknown, f"give each block one of {sorted(LANGS)}: {unknown}"


# -- python -------------------------------------------------------------------------------------
def _test_sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (PROJECT_ROOT / "tests").rglob("*.py"))


def test_every_python_block_is_a_snippet_file_that_a_test_runs() -> None:
    files = {p.read_text(encoding="utf-8"): p for p in SNIPPETS.glob("*.py")}
    tests = _test_sources()
    for block in ALL:
        if block.lang != "python":
            continue
        if block.page.name == "README.md":
            assert "def test_readme_quick_start_runs" in tests  # from the root, as it says
            continue
        snippet = files.get(block.body)
        assert snippet is not None, (
            f"{block.where}: put this block in docs/snippets/<name>.py and show the file "
            "verbatim, so a test can run it"
        )
        assert f'"{snippet.name}"' in tests, (
            f"no test runs docs/snippets/{snippet.name} ({block.where}): run it in the test "
            "of the extra its page installs"
        )


def _run(script: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_toolbox_snippet_runs_from_another_folder(tmp_path: Path) -> None:
    proc = _run(SNIPPETS / "toolbox.py", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["Dock availability human-reviewed", "not_found", "True"]


def _bundle(root: Path, title: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.md").write_text(f"---\ntype: Metric\ntitle: {title}\n---\nbody\n", "utf-8")
    return root


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _repository(path: Path, branches: dict[str, dict[str, str]], tags: dict[str, str]) -> Path:
    """A git repository with one commit per branch, each holding bundles at the given
    folders ({folder: title}); ``tags`` point at branches."""
    path.mkdir(parents=True)
    _git("init", "-q", "-b", "main", cwd=path)
    identity = ["-c", "user.name=t", "-c", "user.email=t@t"]
    for branch, folders in branches.items():
        if branch != "main":
            _git("checkout", "-q", "-b", branch, cwd=path)
        for folder, title in folders.items():
            _bundle(path / folder, title)
        _git("add", "-A", cwd=path)
        _git(*identity, "commit", "-q", "-m", branch, cwd=path)
    for tag, branch in tags.items():
        _git("tag", tag, branch, cwd=path)
    return path


def test_the_sources_snippets_load_every_kind_of_source_offline(tmp_path: Path) -> None:
    # git is told (insteadOf, in a HOME of the test's own) to fetch the URLs the page shows
    # from repositories made here; the paths the page names are made in the working folder.
    repo = _repository(
        tmp_path / "git" / "repo",
        {"main": {"okf": "Main okf", "okf/sales": "Sales"}},
        {"v2": "main"},
    )
    kb = _repository(tmp_path / "git" / "kb", {"main": {".": "Kb"}, "release": {".": "Kb 2"}}, {})
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f'[url "file://{repo}"]\n'
        "\tinsteadOf = https://github.com/org/repo\n"
        "\tinsteadOf = git@github.com:org/repo.git\n"
        f'[url "file://{kb}"]\n'
        "\tinsteadOf = file:///srv/git/kb.git\n",
        encoding="utf-8",
    )
    work = tmp_path / "work"
    (work / "examples").mkdir(parents=True)
    (work / "examples" / "knowledge").symlink_to(EXAMPLE)
    (work / "exports").mkdir()
    with tarfile.open(work / "exports" / "kb.tar.gz", "w:gz") as tar:
        tar.add(_bundle(tmp_path / "archived" / "kb", "Archived"), arcname="kb")
    with zipfile.ZipFile(work / "exports" / "kb-main.zip", "w") as archive:
        archive.write(_bundle(tmp_path / "download", "Sales") / "a.md", "kb-main/okf/sales/a.md")
    with zipfile.ZipFile(work / "kb.zip", "w") as archive:
        archive.write(_bundle(tmp_path / "zipped", "Zipped") / "a.md", "kb/a.md")
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    loaded = _run(SNIPPETS / "sources_load.py", work, **env)
    assert loaded.returncode == 0, loaded.stderr
    opened = _run(SNIPPETS / "sources_open.py", work, **env)
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.strip() == "kb ['a.md']"


# -- bash -----------------------------------------------------------------------------------------
#: What runs each kind of command (the first word of a bash line).
RUNNERS = {
    "okfx": "test_okfx_commands_in_the_docs_run",
    "claude": "test_okfx_commands_in_the_docs_run",  # the okfx command it registers
    "pip": "test_every_install_line_names_okfx_the_way_it_can_be_installed",
    "git": "test_git_clone_then_the_checkout_line_installs",
    "cd": "test_git_clone_then_the_checkout_line_installs",  # into the clone
    "export": "test_the_token_command_makes_a_token_okfx_serve_takes",
    "python": "test_the_example_agent_command_in_the_docs_runs",
    "pytest": "test_ci_runs_the_readme_test_command",
    "kill": "test_every_worker_answers_and_a_reload_reaches_them_all",  # SIGHUP: a reload
}


def test_every_bash_command_is_one_a_test_runs() -> None:
    tests = _test_sources()
    for block in ALL:
        if block.lang != "bash":
            continue
        for words in commands(block):
            runner = RUNNERS.get(words[0])
            assert runner is not None, f"{block.where}: no test runs {' '.join(words)}"
            assert f"def {runner}(" in tests, (block.where, runner)


def _okfx_lines() -> list[tuple[str, list[str]]]:
    """(where, arguments) of every okfx command the docs show, in code or config."""
    found = []
    for block in ALL:
        if block.lang == "bash":
            lines = commands(block)
        elif block.lang == "yaml":
            jobs = yaml.safe_load(block.body).get("jobs", {}).values()
            lines = [shlex.split(s["run"]) for j in jobs for s in j["steps"] if "run" in s]
        elif block.lang == "json" and "mcpServers" in block.body:
            servers = json.loads(block.body)["mcpServers"].values()
            lines = [[s["command"], *s["args"]] for s in servers if "command" in s]
        else:
            continue
        for words in lines:
            if "--" in words:  # claude mcp add okfx -- okfx serve ...
                words = words[words.index("--") + 1 :]
            if words[:1] == ["okfx"] and block.page.name != "attestation.md":
                found.append((block.where, words[1:]))
    return found


OKFX_LINES = _okfx_lines()


def _local(args: list[str]) -> list[str]:
    return [str(EXAMPLE) if word in PLACEHOLDERS else word for word in args]


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment the docs' commands run in: a cache of their own, git told to fetch
    the docs' example repository URL from a repository made here, no browser."""
    base = tmp_path_factory.mktemp("offline")
    repo = _repository(base / "repo", {"main": {".": "Repo", "okf": "Okf"}}, {})
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f'[url "file://{repo}"]\n\tinsteadOf = https://github.com/org/repo\n', "utf-8"
    )
    return {
        "HOME": str(home),
        "OKFX_CACHE_HOME": str(base / "cache"),
        "XDG_CACHE_HOME": str(base / "xdg"),
        "BROWSER": "true",  # --open "opens" the page with /bin/true
        "OKFX_TOKEN": "",
    }


def _address(url: str) -> tuple[str, str]:
    host_port, _, path = url.split("//", 1)[1].partition("/")
    return host_port.replace("0.0.0.0", "127.0.0.1"), "/" + path


def _serve(args: list[str], env: dict[str, str]) -> str:
    """Start ``okfx serve|view ARGS``, see it answer (HTTP: the URL it printed; stdio: the
    handshake), stop it; returns what it wrote to stderr."""
    import http.client

    http_server = "http" in args or args[0] == "view"
    if http_server:  # a free port, whatever the doc says
        args = [a for i, a in enumerate(args) if a != "--port" and args[i - 1 : i] != ["--port"]]
        args += ["--port", "0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "okfx", *args],
        cwd=PROJECT_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
        start_new_session=True,  # its workers too are stopped at the end
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    seen = ""
    try:
        if http_server:
            while not any(w in seen for w in ("URL: ", "Open: ")) or not seen.endswith("\n"):
                line = proc.stderr.readline().decode()
                assert line, "okfx exited before serving:\n" + seen
                seen += line
            url = next(w for w in seen.split() if w.startswith("http://"))
            address, path = _address(url)
            connection = http.client.HTTPConnection(address, timeout=WAIT)
            connection.request("GET", path)
            status = connection.getresponse().status
            connection.close()
            if args[0] == "view":
                assert status == 200  # the viewer's first page
            else:  # an MCP endpoint answers GET at once: 405, or 401 wanting a token
                assert status == (401 if env.get("OKFX_TOKEN") else 405)
            proc.send_signal(signal.SIGINT)
        else:
            proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["result"]["serverInfo"]["name"] == "okfx"
            proc.stdin.close()
        proc.wait(timeout=WAIT)
        return seen + proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()


@pytest.mark.parametrize(
    ("where", "args"), OKFX_LINES, ids=[f"{w}:{' '.join(a)[:60]}" for w, a in OKFX_LINES]
)
def test_okfx_commands_in_the_docs_run(
    where: str, args: list[str], offline: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _local(args)
    if args[0] in ("serve", "view"):
        if "--executor" in args:
            pytest.importorskip("duckdb", reason="--executor duckdb needs the duckdb extra")
        pytest.importorskip("mcp" if args[0] == "serve" else "okfx.web", reason="its extra")
        # a public address needs the token the doc exported before the command
        public = "--host" in args and args[args.index("--host") + 1] != "127.0.0.1"
        env = {**offline, "OKFX_TOKEN": "docs-token-1a2b" if public else ""}
        stderr = _serve(args, env)
        assert "Traceback" not in stderr, (where, stderr)
        return
    monkeypatch.chdir(PROJECT_ROOT)  # the docs' paths are relative to the repository
    result = CliRunner().invoke(cli, args, env=offline)
    # validate's exit status is its verdict; the example bundle has warnings on purpose
    allowed = {0, 1} if args[0] in ("validate", "attest") else {0}
    assert result.exit_code in allowed, (where, result.output, result.stderr)


def test_the_token_command_makes_a_token_okfx_serve_takes() -> None:
    (line,) = [
        " ".join(words)
        for block in ALL
        if block.lang == "bash"
        for words in commands(block)
        if words[0] == "export"
    ]
    body = next(b.body for b in ALL if b.lang == "bash" and "export OKFX_TOKEN" in b.body)
    export = next(text for text in body.splitlines() if text.startswith("export"))
    token = subprocess.run(
        ["bash", "-c", f'{export} && printf %s "$OKFX_TOKEN"'],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    ).stdout
    assert line.startswith("export OKFX_TOKEN=")
    from okfx.adapters._http import check_token

    assert check_token(token) == token and len(token) >= 32


# -- console, text, json --------------------------------------------------------------------------
def test_console_transcripts_print_the_lines_they_show(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PROJECT_ROOT)
    shown = [b for b in ALL if b.lang == "console"]
    assert shown
    for block in shown:
        command, *expected = block.body.splitlines()
        assert command.startswith("$ okfx "), block.where
        result = CliRunner().invoke(cli, shlex.split(command)[2:])
        assert result.exit_code == 0, (block.where, result.output)
        printed = result.output.splitlines()
        for i, line in enumerate(expected):
            if line != "...":
                assert printed[i].rstrip() == line.rstrip(), (block.where, printed[i], line)


def test_synopses_name_options_the_commands_have() -> None:
    for block in ALL:
        words = block.body.split()
        if block.lang != "text" or words[:1] != ["okfx"] or words[1] not in cli.commands:  # type: ignore[attr-defined]
            continue
        command = cli.commands[words[1]]  # type: ignore[attr-defined]
        commands = [command]
        if isinstance(command, click.Group):  # okfx cache path / clear: each its own
            commands = [command.commands[w] for w in words[2:] if w in command.commands]
        options = {o for c in commands for p in c.params for o in (*p.opts, *p.secondary_opts)}
        named = {
            option
            for w in words
            if w.lstrip("[").startswith("-")
            for option in w.strip("[]|.,").split("=")[0].split("/")
        }
        assert named - {"-"} <= options | {"--help"}, (block.where, named - options)


def _configs(name: str) -> dict[str, list[dict[str, Any]]]:
    """The MCP client configs of a page, by the heading above each."""
    text = page(name).read_text(encoding="utf-8")
    found: dict[str, list[dict[str, Any]]] = {}
    heading = ""
    for block in blocks([page(name)]):
        heading = next(
            (line for line in reversed(text[: text.find(block.body)].splitlines())
             if line.startswith("### ")),
            heading,
        )  # fmt: skip
        if block.lang == "json" and "mcpServers" in block.body:
            found.setdefault(heading, []).extend(json.loads(block.body)["mcpServers"].values())
    return found


def test_http_client_configs_use_the_key_each_client_reads() -> None:
    configs = _configs("mcp")
    keys = {"Claude Code": "url", "Gemini CLI": "httpUrl", "Cursor": "url"}
    for heading, servers in configs.items():
        client = next((c for c in keys if c in heading), None)
        for server in servers:
            if "command" in server:
                continue
            assert client is not None, heading
            assert keys[client] in server and server[keys[client]].endswith("/mcp"), heading
            other = {"url", "httpUrl"} - {keys[client]}
            assert not other & set(server), (heading, server)


def test_the_readme_sends_gemini_users_to_httpurl() -> None:
    readme = page("README").read_text(encoding="utf-8")
    if "Gemini" in readme:
        assert "httpUrl" in readme
    from okfx import Bundle, KnowledgeManager
    from okfx.cli import render

    banner = render.serve_banner(KnowledgeManager([Bundle.load(EXAMPLE)]), "http://h/mcp", None)
    assert '"url": "http://h/mcp"' in banner and '"httpUrl"' in banner


def test_the_validate_json_sample_has_the_keys_okfx_prints() -> None:
    (sample,) = [
        json.loads(b.body)
        for b in blocks([page("cli")])
        if b.lang == "json" and '"conformant"' in b.body
    ]
    real = json.loads(CliRunner().invoke(cli, ["validate", str(EXAMPLE), "--json"]).output)
    assert list(sample) == list(real)
    assert list(sample["summary"]) == list(real["summary"])
    assert list(sample["warnings"][0]) == list(real["warnings"][0])


def test_the_pages_checked_are_every_page() -> None:
    assert {p.name for p in PAGES} >= {"README.md", "install.md", "mcp.md", "cli.md"}
    assert all(isinstance(b, Block) for b in ALL)
