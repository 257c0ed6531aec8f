"""The MCP server over its real transports: ``okfx serve`` on stdio, and streamable HTTP."""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from adapter_contract import run_doc_snippet  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from mcp_clients import INITIALIZE, Session, over_http, over_stdio, uvicorn_thread  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402
from okfx import TOOL_NAMES, Bundle, KnowledgeManager  # noqa: E402
from okfx.adapters.mcp import bind, build_server, http_app, url_for  # noqa: E402
from okfx.cli.commands import cli  # noqa: E402

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
TOKEN = "test-token-3f9a"
WAIT = 60.0  # seconds a subprocess gets to answer before the test fails instead of hanging


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return Bundle.load(EXAMPLE)


async def _session_checks(session: Session) -> dict[str, Any]:
    """One short agent session; returns what the test asserts on."""
    return {
        "tools": [tool["name"] for tool in await session.tools()],
        "instructions": session.instructions,
        "read": await session.call("read_concept", {"path": "metrics/dock-availability"}),
        "missing": await session.call("get_neighbors", {"path": "nope"}),
        "resources": len(await session.resources()),
        "prompt": (await session.prompt("knowledge"))["messages"][0]["content"]["text"],
    }


def _assert_session(got: dict[str, Any], bundle: Bundle) -> None:
    prompt = KnowledgeManager([bundle]).prompt()
    assert sorted(got["tools"]) == sorted(TOOL_NAMES)
    assert got["instructions"] == prompt
    assert got["prompt"] == prompt
    assert got["read"]["structuredContent"]["path"] == "/metrics/dock-availability.md"
    assert got["missing"]["structuredContent"]["error"]["code"] == "not_found"
    assert got["resources"] == len(bundle) + 1


class Lines:
    """The lines a subprocess writes to one pipe, each waited for with a timeout.

    A thread reads the pipe: select() on a buffered pipe misses lines already buffered.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._queue: queue.Queue[bytes] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[bytes]) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(b"")  # end of stream

    def next(self) -> bytes:
        try:
            return self._queue.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"no output within {WAIT}s") from None

    def rest(self) -> bytes:
        """Everything after the lines read so far (call once the process has ended)."""
        self._thread.join(WAIT)
        return b"".join(iter(self._queue.get_nowait, b""))


def test_okfx_serve_speaks_mcp_over_stdio(bundle: Bundle) -> None:
    got: dict[str, Any] = {}

    async def run() -> None:
        args = ["-m", "okfx", "serve", str(EXAMPLE)]
        async with over_stdio(sys.executable, args, str(PROJECT_ROOT)) as session:
            got.update(await _session_checks(session))

    anyio.run(run)
    _assert_session(got, bundle)


def test_okfx_serve_on_stdio_writes_nothing_but_protocol_to_stdout() -> None:
    command = [sys.executable, "-m", "okfx", "serve", str(EXAMPLE)]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for message in (
                INITIALIZE,
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            ):
                proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            stdout = Lines(proc.stdout)
            replies = [json.loads(stdout.next()) for _ in range(2)]
            proc.stdin.close()  # the client hangs up: the server ends
            proc.wait(timeout=WAIT)
            rest = stdout.rest()
        finally:
            if proc.poll() is None:
                proc.kill()
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["result"]["instructions"].startswith("<knowledge>")
    assert len(replies[1]["result"]["tools"]) == len(TOOL_NAMES)
    assert rest == b"", rest
    assert proc.returncode == 0


def test_http_on_loopback_serves_without_a_token(bundle: Bundle) -> None:
    sock = bind("127.0.0.1", 0)
    got: dict[str, Any] = {}

    async def run() -> None:
        async with over_http(url_for(sock)) as session:
            got.update(await _session_checks(session))

    with uvicorn_thread(http_app(build_server(bundle)), sock):
        anyio.run(run)
    _assert_session(got, bundle)


def _post(url: str, headers: dict[str, str]) -> int:
    request = urllib.request.Request(
        url,
        data=json.dumps(INITIALIZE).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        exc.close()
        assert exc.headers.get("WWW-Authenticate", "").startswith("Bearer") or exc.code != 401
        return exc.code


def test_http_with_a_token_answers_401_without_it_and_serves_with_it(bundle: Bundle) -> None:
    sock = bind("127.0.0.1", 0)
    url = url_for(sock)
    got: dict[str, Any] = {}

    async def run() -> None:
        async with over_http(url, {"Authorization": f"Bearer {TOKEN}"}) as session:
            got.update(await _session_checks(session))

    with uvicorn_thread(http_app(build_server(bundle), token=TOKEN), sock):
        assert _post(url, {}) == 401
        assert _post(url, {"Authorization": "Bearer wrong"}) == 401
        assert _post(url, {"Authorization": TOKEN}) == 401
        assert _post(url, {"Authorization": f"Bearer {TOKEN}"}) == 200
        anyio.run(run)
    _assert_session(got, bundle)


def _status_for_host(url: str, host_header: str, token: str | None) -> int:
    _, _, rest = url.partition("//")
    address, _, path = rest.partition("/")
    connection = http.client.HTTPConnection(address, timeout=WAIT)
    headers = {
        "Host": host_header,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request("POST", "/" + path, json.dumps(INITIALIZE), headers)
        return connection.getresponse().status
    finally:
        connection.close()


def test_off_loopback_the_token_replaces_the_host_header_check(bundle: Bundle) -> None:
    # Served on loopback sockets, but configured for other addresses: the Host header a
    # client sends is what the check sees.
    public, local, alias = bind("127.0.0.1", 0), bind("127.0.0.1", 0), bind("127.0.0.1", 0)
    public_app = http_app(build_server(bundle), host="0.0.0.0", token=TOKEN)
    alias_app = http_app(build_server(bundle), host="127.0.0.2")
    with (
        uvicorn_thread(public_app, public),
        uvicorn_thread(http_app(build_server(bundle)), local),
        uvicorn_thread(alias_app, alias),
    ):
        # every interface: clients use names the server cannot know, so only the token counts
        assert _status_for_host(url_for(public), "kb.internal.example:8765", TOKEN) == 200
        assert _status_for_host(url_for(public), "kb.internal.example:8765", None) == 401
        # loopback: the SDK's DNS-rebinding guard rejects a foreign Host header...
        assert _status_for_host(url_for(local), "attacker.example:80", None) in (403, 421)
        assert _status_for_host(url_for(local), "localhost:8765", None) == 200
        # ...and accepts the loopback address the server was told to bind
        assert _status_for_host(url_for(alias), "127.0.0.2:8765", None) == 200


def _lines_until(lines: Lines, marker: str) -> list[str]:
    seen: list[str] = []
    while not seen or not seen[-1].startswith(marker):
        line = lines.next().decode("utf-8")
        assert line, "okfx serve exited early:\n" + "".join(seen)
        seen.append(line)
    return seen


def test_okfx_serve_http_prints_the_url_and_a_client_config_then_serves(bundle: Bundle) -> None:
    command = [sys.executable, "-m", "okfx", "serve", str(EXAMPLE), "--transport", "http"]
    command += ["--port", "0", "--token", TOKEN]
    got: dict[str, Any] = {}
    with subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "OKFX_TOKEN": ""},
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            stderr = Lines(proc.stderr)
            banner = _lines_until(stderr, "Stop with Ctrl+C")
            url = next(line.split()[1] for line in banner if line.startswith("URL: "))
            start = next(i for i, line in enumerate(banner) if line.startswith("{"))
            end = next(i for i, line in enumerate(banner) if line.startswith("}"))
            config = json.loads("".join(banner[start : end + 1]))

            async def run() -> None:
                async with over_http(url, {"Authorization": f"Bearer {TOKEN}"}) as session:
                    got.update(await _session_checks(session))

            anyio.run(run)
            assert _post(url, {}) == 401
            proc.send_signal(signal.SIGINT)  # Ctrl+C
            proc.wait(timeout=WAIT)
            out = proc.stdout.read()
            after = stderr.rest().decode("utf-8")
        finally:
            if proc.poll() is None:
                proc.kill()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    # stderr is not a terminal here, so the banner shows a placeholder, not the token
    assert config == {
        "mcpServers": {
            "okfx": {
                "type": "http",
                "url": url,
                "headers": {"Authorization": "Bearer <OKFX_TOKEN>"},
            }
        }
    }
    assert TOKEN not in "".join(banner)
    _assert_session(got, bundle)
    assert out == b""
    assert (proc.returncode, after) == (0, "okfx: stopped\n")


def test_serve_takes_the_token_from_okfx_token(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_bind(host: str, port: int) -> None:
        raise OSError(f"test stops before binding {host}:{port}")

    monkeypatch.setattr("okfx.adapters.mcp.bind", no_bind)
    result = CliRunner().invoke(
        cli,
        ["serve", str(EXAMPLE), "--transport", "http", "--host", "0.0.0.0"],
        env={"OKFX_TOKEN": TOKEN},
    )
    # past the token rule: it got as far as binding
    assert result.exit_code == 1, result.output
    assert "test stops before binding 0.0.0.0:8765" in result.output


def test_the_in_process_client_example_lists_the_tools_and_searches(bundle: Bundle) -> None:
    ran = run_doc_snippet("mcp", "mcp_in_process.py")  # shown verbatim, run from elsewhere
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == "tools: " + ", ".join(sorted(TOOL_NAMES))
    first = bundle.search("dock availability", limit=1)[0]
    assert lines[1].split("  ")[0] == first.path  # the library's own first hit


def test_the_python_example_of_the_mcp_doc_serves_over_stdio(
    bundle: Bundle, tmp_path: Path
) -> None:
    snippet = PROJECT_ROOT / "docs" / "snippets" / "mcp_server.py"
    doc = (PROJECT_ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert snippet.read_text(encoding="utf-8") in doc
    got: dict[str, Any] = {}

    async def run() -> None:
        # from another folder: the snippet finds its bundle relative to itself
        async with over_stdio(sys.executable, [str(snippet)], str(tmp_path)) as session:
            got.update(await _session_checks(session))

    anyio.run(run)
    _assert_session(got, bundle)
