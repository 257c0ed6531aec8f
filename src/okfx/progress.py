"""A "loading…" status line with a spinner and the elapsed time, on a terminal only.

``Bundle.load`` reports no progress, so this only shows that work is going on and for how
long. It writes to stderr and only when stderr is a terminal: piped output and the stdio
MCP transport (whose stdout is the protocol) stay clean.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import click

__all__ = ["status"]

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1
QUIET = 0.5  # a load faster than this leaves no line behind


@contextmanager
def status(label: str, stream: TextIO | None = None) -> Iterator[None]:
    """Show ``⠋ label… 1.2s`` while the block runs, then ``label: done in 1.3s``.

    A block faster than ``QUIET`` seconds leaves nothing behind.
    """
    out = stream if stream is not None else sys.stderr
    if not out.isatty():
        yield
        return
    done = threading.Event()
    start = time.monotonic()

    def spin() -> None:
        frame = 0
        # Event.wait is the tick: it returns at once when the block finishes
        while not done.wait(TICK):
            elapsed = time.monotonic() - start
            click.echo(f"\r{FRAMES[frame % len(FRAMES)]} {label}… {elapsed:.1f}s", out, nl=False)
            frame += 1

    thread = threading.Thread(target=spin, name="okfx-status", daemon=True)
    thread.start()
    outcome = "failed after"
    try:
        yield
        outcome = "done in"
    finally:
        done.set()
        thread.join()
        elapsed = time.monotonic() - start
        click.echo("\r\x1b[2K", out, nl=False, color=True)  # erase the spinner line
        if elapsed >= QUIET or outcome != "done in":
            click.echo(f"{label}: {outcome} {elapsed:.1f}s", out)
