"""A loading progress bar (files read of total, elapsed time), on a terminal only.

``Bundle.load(progress=bar.update)`` reports ``(done, total)``; until the first report the
line is a spinner. It writes to stderr and only when stderr is a terminal: piped output
and the stdio MCP transport (whose stdout is the protocol) stay clean.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import click

from okfx.cli.terminal import columns, visible_line

__all__ = ["Progress", "status"]

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1
QUIET = 0.5  # a load faster than this leaves no line behind


BAR = 24


class Progress:
    """What the bar shows; ``update`` is the ``Bundle.load(progress=...)`` callback."""

    def __init__(self, unit: str = "files") -> None:
        self.done = 0
        self.total = 0
        self.unit = unit

    def update(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def render(self, frame: str, label: str, elapsed: float) -> str:
        if not self.total:
            return f"{frame} {label}… {elapsed:.1f}s"
        filled = BAR * self.done // self.total
        bar = "█" * filled + "·" * (BAR - filled)
        return f"{label} [{bar}] {self.done:,}/{self.total:,} {self.unit} {elapsed:.1f}s"


@contextmanager
def status(label: str, stream: TextIO | None = None, unit: str = "files") -> Iterator[Progress]:
    """Show ``⠋ label… 1.2s`` while the block runs, then ``label: done in 1.3s``.

    A block faster than ``QUIET`` seconds leaves nothing behind.
    """
    out = stream if stream is not None else sys.stderr
    progress = Progress(unit)
    if not out.isatty():
        yield progress
        return
    # The label names a folder, which an archive or a clone may name with control
    # characters: shown as every line of bundle text is (CLI QA: an OSC reached the
    # terminal); and each frame fits the terminal, since a wrapped line leaves its first
    # rows behind at every redraw.
    label = visible_line(label)
    width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
    done = threading.Event()
    start = time.monotonic()

    def spin() -> None:
        frame = 0
        # Event.wait is the tick: it returns at once when the block finishes
        while not done.wait(TICK):
            elapsed = time.monotonic() - start
            line = progress.render(FRAMES[frame % len(FRAMES)], label, elapsed)
            click.echo(f"\r{cut_start(line, width)}", out, nl=False)
            frame += 1

    thread = threading.Thread(target=spin, name="okfx-status", daemon=True)
    thread.start()
    outcome = "failed after"
    try:
        yield progress
        outcome = "done in"
    finally:
        done.set()
        thread.join()
        elapsed = time.monotonic() - start
        click.echo("\r\x1b[2K", out, nl=False, color=True)  # erase the spinner line
        if elapsed >= QUIET or outcome != "done in":
            click.echo(f"{label}: {outcome} {elapsed:.1f}s", out)


def cut_start(line: str, width: int) -> str:
    """``line`` in ``width`` columns, its start cut (``…`` first) when it is longer: the
    bar and the counts at its end are what changes."""
    if columns(line) <= width:
        return line
    kept = ""
    for char in reversed(line):
        if columns(kept) + columns(char) + 1 > width:
            break
        kept = char + kept
    return "…" + kept
