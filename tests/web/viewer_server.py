"""Run the real ``okfx view`` (or ``okfx serve --web``) in a subprocess for a test."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

WAIT = 90.0  # seconds the server gets to print its URL before the test fails


@contextmanager
def running(args: list[str], marker: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start ``okfx ARGS``, wait for the stderr line starting with ``marker`` and yield
    the URL after it; stop the server (Ctrl+C, then kill) when done."""
    command = [sys.executable, "-m", "okfx", *args]
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            lines.put(raw.decode("utf-8", "replace"))
        lines.put("")

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    seen = []
    try:
        while True:
            try:
                line = lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"okfx printed no {marker!r} line: {seen}") from None
            if not line:
                raise AssertionError(f"okfx exited before serving: {''.join(seen)}")
            seen.append(line)
            if line.startswith(marker):
                yield line[len(marker) :].strip()
                break
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=15)
        assert process.stderr is not None
        process.stderr.close()


def chromium_path() -> Path:
    return Path(os.environ.get("OKFX_CHROMIUM", "/usr/bin/chromium"))
