"""``okfx view`` and ``okfx serve --web`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the viewer needs the web extra")

from click.testing import CliRunner  # noqa: E402
from viewer_server import running  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402
from okfx.cli.commands import cli  # noqa: E402

EXAMPLE = str(PROJECT_ROOT / "examples" / "knowledge")


def _get(url: str, **headers: str) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode(), dict(answer.headers)
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode(), dict(exc.headers)


def test_view_refuses_a_public_address_without_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OKFX_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["view", EXAMPLE, "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "needs a bearer token" in result.output


def test_serve_web_needs_http() -> None:
    result = CliRunner().invoke(cli, ["serve", EXAMPLE, "--web"])
    assert result.exit_code == 2 and "--transport http" in result.output


def test_okfx_view_prints_its_url_and_serves_the_pages() -> None:
    with running(["view", EXAMPLE, "--port", "0"], "Open: ") as url:
        status, page, headers = _get(url)
        assert status == 200 and "<h1>Overview</h1>" in page
        assert headers["x-content-type-options"] == "nosniff"
        status, page, _ = _get(url + "b/knowledge/c/metrics/dock-availability.md")
        assert status == 200 and "<h1>Dock availability</h1>" in page
        assert _get(url, Host="attacker.example")[0] == 421


def test_okfx_view_with_a_token_asks_a_browser_to_sign_in() -> None:
    env = {"OKFX_TOKEN": "t0ken"}
    with running(["view", EXAMPLE, "--port", "0"], "Open: ", env) as url:
        assert _get(url, Accept="application/json")[0] == 401
        assert _get(url, Authorization="Bearer t0ken")[0] == 200
        status, page, _ = _get(url + "login")
        assert status == 200 and 'type="password"' in page


def test_serve_web_serves_mcp_and_the_pages_in_one_process() -> None:
    pytest.importorskip("mcp")
    args = ["serve", EXAMPLE, "--transport", "http", "--port", "0", "--web"]
    with running(args, "Viewer: ") as url:
        status, page, _ = _get(url)
        assert status == 200 and "<h1>Overview</h1>" in page
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}}
        ).encode()  # fmt: skip
        request = urllib.request.Request(
            url + "mcp",
            data=body,
            headers={"content-type": "application/json",
                     "accept": "application/json, text/event-stream"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert json.loads(answer.read())["result"]["serverInfo"]["name"] == "okfx"


def test_the_python_example_in_the_viewer_doc_runs() -> None:
    snippet = PROJECT_ROOT / "docs" / "snippets" / "viewer_app.py"
    doc = (PROJECT_ROOT / "docs" / "viewer.md").read_text(encoding="utf-8")
    assert snippet.read_text(encoding="utf-8") in doc, "docs/viewer.md is out of step"
    done = subprocess.run(
        [sys.executable, str(snippet)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["200", "default-src", "'none'", "True"]


def test_serve_web_with_workers_serves_the_pages_from_each_worker() -> None:
    pytest.importorskip("mcp")
    args = ["serve", EXAMPLE, "--transport", "http", "--port", "0", "--web", "--workers", "2"]
    with running(args, "Viewer: ") as url:
        for _ in range(6):  # several connections, so more than one worker answers
            status, page, _ = _get(url + "b/knowledge/browse")
            assert status == 200 and 'id="total"' in page


def test_okfx_view_shows_an_edit_without_a_restart(tmp_path: Path) -> None:
    bundle = tmp_path / "kb"
    bundle.mkdir()
    page = bundle / "note.md"
    page.write_text("---\ntype: Note\ntitle: First title\n---\nBody.\n", encoding="utf-8")
    env = {"OKFX_WATCH_POLLING": "1"}
    with running(["view", str(bundle), "--port", "0"], "Open: ", env) as url:
        assert "<h1>First title</h1>" in _get(url + "b/kb/c/note.md")[1]
        page.write_text("---\ntype: Note\ntitle: Second title\n---\nBody.\n", encoding="utf-8")
        (bundle / "added.md").write_text("---\ntype: Note\ntitle: Added\n---\n", "utf-8")
        deadline = time.monotonic() + 60
        # The page reads its file as now at once; the new page shows once the reload is in.
        while _get(url + "b/kb/c/added.md")[0] != 200:
            assert time.monotonic() < deadline, "the reload never came"
            time.sleep(0.2)
        assert "<h1>Second title</h1>" in _get(url + "b/kb/c/note.md")[1]


@pytest.mark.parametrize(("flag", "watched"), [([], True), (["--no-watch"], False)])
def test_okfx_view_watches_unless_told_not_to(
    monkeypatch: pytest.MonkeyPatch, flag: list[str], watched: bool
) -> None:
    from okfx.adapters import mcp as adapter
    from okfx.tools import watch

    started: list[bool] = []

    class Recorder:
        def __init__(self, manager: object, **options: object) -> None:
            self.options = options

        def start(self) -> Recorder:
            started.append(bool(self.options["watch"]))
            return self

    monkeypatch.setattr(watch, "Watcher", Recorder)
    monkeypatch.setattr(adapter, "serve_http", lambda app, sock: sock.close())
    result = CliRunner().invoke(cli, ["view", EXAMPLE, "--port", "0", *flag])
    assert result.exit_code == 0, result.output
    assert started == ([True] if watched else [])
