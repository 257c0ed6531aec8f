"""The ``okfx`` command line: thin click commands over the library, and terminal output.

Owns the commands (:mod:`~okfx.cli.commands`, and :mod:`~okfx.cli.computations` for
Attested Computations), the text rendering of tool payloads
(:mod:`~okfx.cli.render`) and the loading progress bar (:mod:`~okfx.cli.progress`).

The top layer: may import every other okfx package (``serve`` starts the MCP adapter).
Nothing in okfx imports it but ``okfx.__main__``.
"""

from okfx.cli import computations  # noqa: F401  (registers `computation` and `attest`)
from okfx.cli.commands import main

__all__ = ["main"]
