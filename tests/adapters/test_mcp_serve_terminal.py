"""``okfx serve BUNDLE`` started by a person in a terminal says what it is waiting for."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("mcp")

from mcp_clients import INITIALIZE  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
NOTICE = "waiting for an MCP client to talk to it on stdin"


def _read_until(stream: int, marker: str, seconds: float = 60) -> str:
    seen = b""
    deadline = time.monotonic() + seconds
    while marker.encode() not in seen and time.monotonic() < deadline:
        # wait at most until the deadline: a server that prints nothing must not hang the test
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(stream, 4096)
        if not chunk:
            break
        seen += chunk
    return seen.decode()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_serve_on_a_terminal_says_it_waits_for_a_client_and_how_to_use_http() -> None:
    controller, terminal = pty.openpty()
    command = [sys.executable, "-m", "okfx", "serve", str(EXAMPLE)]
    with subprocess.Popen(
        command,
        stdin=terminal,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # as in a person's shell: Ctrl+C is not ignored (a CI job run in the background
        # has SIGINT ignored, which the child would inherit)
        preexec_fn=_default_sigint,
    ) as proc:
        assert proc.stderr is not None
        try:
            stderr = _read_until(proc.stderr.fileno(), "Stop with Ctrl+C", seconds=60)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # Ctrl+C did not stop it
                proc.kill()
                raise
            finally:
                os.close(controller)
                os.close(terminal)
    assert NOTICE in stderr
    assert "--transport http" in stderr
    assert stderr.count(NOTICE) == 1


def test_serve_started_by_a_client_prints_no_notice() -> None:
    command = [sys.executable, "-m", "okfx", "serve", str(EXAMPLE)]
    proc = subprocess.run(
        command,
        input=json.dumps(INITIALIZE).encode() + b"\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert json.loads(proc.stdout.splitlines()[0])["id"] == 1
    assert NOTICE not in proc.stderr.decode()
