"""``okfx serve --transport http`` as a newcomer meets it: a browser on the URL, token
spelling, the token kept out of ``ps``, a bare ``Host: localhost``, and the server version."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from mcp_clients import INITIALIZE, okfx_serve_http, over_http, uvicorn_thread  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402
from okfx import Bundle  # noqa: E402
from okfx.adapters.mcp import bearer_auth, bind, build_server, http_app, url_for  # noqa: E402
from okfx.cli.commands import cli  # noqa: E402
from okfx.version import __version__  # noqa: E402

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
TOKEN = "test-token-7c1d"
WAIT = 20.0


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return Bundle.load(EXAMPLE)


def request(
    url: str, method: str = "POST", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request to ``url``; a server that does not answer in WAIT seconds fails."""
    _, _, rest = url.partition("//")
    address, _, path = rest.partition("/")
    connection = http.client.HTTPConnection(address, timeout=WAIT)
    sent = {"Accept": "application/json, text/event-stream", **(headers or {})}
    body = None
    if method == "POST":
        sent["Content-Type"] = "application/json"
        body = json.dumps(INITIALIZE)
    try:
        connection.request(method, "/" + path, body, sent)
        response = connection.getresponse()
        headers = {k.lower(): v for k, v in response.getheaders()}
        if headers.get("content-type", "").startswith("text/event-stream"):
            return response.status, headers, b""  # a stream that may never end: not read
        return response.status, headers, response.read()
    finally:
        connection.close()


def test_get_on_the_endpoint_answers_405_at_once_instead_of_an_endless_stream(
    bundle: Bundle,
) -> None:
    sock = bind("127.0.0.1", 0)
    url = url_for(sock)
    with uvicorn_thread(http_app(build_server(bundle)), sock):
        for accept in ("text/html,application/xhtml+xml,*/*;q=0.8", "*/*", "text/event-stream"):
            status, headers, body = request(url, "GET", {"Accept": accept})
            assert status == 405, accept
            assert headers["allow"] == "POST"
            assert "MCP server" in json.loads(body)["error"]
        assert request(url)[0] == 200  # POST still serves


def test_the_bearer_scheme_is_accepted_in_any_letter_case(bundle: Bundle) -> None:
    sock = bind("127.0.0.1", 0)
    url = url_for(sock)
    with uvicorn_thread(http_app(build_server(bundle), token=TOKEN), sock):
        for scheme in ("Bearer", "bearer", "BEARER", "bEaReR"):
            assert request(url, headers={"Authorization": f"{scheme} {TOKEN}"})[0] == 200
        for wrong in (f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer{TOKEN}", TOKEN, "Bearer "):
            assert request(url, headers={"Authorization": wrong})[0] == 401, wrong


def test_the_token_is_compared_in_constant_time_whatever_its_length(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    # hmac.compare_digest takes the same time for any content, but not for any length: a
    # wrong token of another length must be compared as a value of the same length
    import hmac

    compared: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def recording(a: bytes, b: bytes) -> bool:
        compared.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)
    sock = bind("127.0.0.1", 0)
    url = url_for(sock)
    with uvicorn_thread(http_app(build_server(bundle), token=TOKEN), sock):
        for given in ("x", TOKEN[:-1], TOKEN + "-and-more", TOKEN):
            request(url, headers={"Authorization": f"Bearer {given}"})
    assert len(compared) == 4
    assert all(a == b for a, b in compared), compared


@pytest.mark.parametrize("token", [" ", "\t", "two words", "tab\there", "ünïcode"])
def test_a_token_no_client_could_send_is_refused(token: str) -> None:
    with pytest.raises(ValueError, match="token"):
        bearer_auth(lambda *args: None, token)  # type: ignore[arg-type, return-value]
    result = CliRunner().invoke(
        cli, ["serve", str(EXAMPLE), "--transport", "http", "--token", token], env={}
    )
    assert result.exit_code == 2, result.output
    assert "token" in result.output


def test_host_localhost_without_a_port_is_accepted_on_loopback(bundle: Bundle) -> None:
    sock = bind("127.0.0.1", 0)
    url = url_for(sock)
    with uvicorn_thread(http_app(build_server(bundle)), sock):
        assert request(url, headers={"Host": "localhost"})[0] == 200
        assert request(url, headers={"Host": "127.0.0.1"})[0] == 200
        assert request(url, headers={"Host": "evil.example"})[0] in (403, 421)


def test_server_info_names_okfx_and_its_version(bundle: Bundle) -> None:
    sock = bind("127.0.0.1", 0)
    with uvicorn_thread(http_app(build_server(bundle)), sock):
        status, _, body = request(url_for(sock))
    assert status == 200
    info = json.loads(body)["result"]["serverInfo"]
    assert (info["name"], info["version"]) == ("okfx", __version__)


def test_the_token_can_come_from_a_file_and_stays_out_of_ps(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    token_file.chmod(0o600)
    served = okfx_serve_http(EXAMPLE, ["--token-file", str(token_file)], {"OKFX_TOKEN": ""})
    try:
        cmdline = Path(f"/proc/{served.proc.pid}/cmdline").read_bytes().decode()
        assert TOKEN not in cmdline
        assert request(served.url)[0] == 401
        assert request(served.url, headers={"Authorization": f"Bearer {TOKEN}"})[0] == 200
    finally:
        stderr = served.stop()
    assert "visible to other users" not in stderr


def test_a_token_on_the_command_line_gets_a_warning_and_okfx_token_none() -> None:
    served = okfx_serve_http(EXAMPLE, ["--token", TOKEN], {"OKFX_TOKEN": ""})
    try:
        assert request(served.url, headers={"Authorization": f"Bearer {TOKEN}"})[0] == 200
    finally:
        stderr = served.stop()
    assert "visible to other users" in stderr and "OKFX_TOKEN" in stderr
    served = okfx_serve_http(EXAMPLE, [], {"OKFX_TOKEN": TOKEN})
    try:
        assert request(served.url, headers={"Authorization": f"Bearer {TOKEN}"})[0] == 200
        assert request(served.url)[0] == 401
    finally:
        stderr = served.stop()
    assert "visible to other users" not in stderr


@pytest.mark.parametrize(
    ("content", "words"),
    [("", "blank"), ("  \n", "blank"), ("a b\n", "printable ASCII")],
)
def test_a_token_file_must_hold_a_usable_token(tmp_path: Path, content: str, words: str) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["serve", str(EXAMPLE), "--transport", "http", "--token-file", str(token_file)]
    )
    assert result.exit_code == 2, result.output
    assert words in result.output


def test_token_and_token_file_together_are_refused(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN, encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        ["serve", str(EXAMPLE), "--transport", "http", "--token", TOKEN, "--token-file",
         str(token_file)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--token-file" in result.output


def _session(url: str, token: str | None) -> dict[str, Any]:
    got: dict[str, Any] = {}

    async def run() -> None:
        headers = {"Authorization": f"bearer {token}"} if token else None
        async with over_http(url, headers) as session:
            got["read"] = await session.call("read_concept", {"path": "tables/trips"})

    anyio.run(run)
    return got


def test_a_real_client_with_a_lower_case_scheme_gets_through(bundle: Bundle) -> None:
    sock = bind("127.0.0.1", 0)
    with uvicorn_thread(http_app(build_server(bundle), token=TOKEN), sock):
        got = _session(url_for(sock), TOKEN)
    assert got["read"]["structuredContent"]["path"] == "/tables/trips.md"
