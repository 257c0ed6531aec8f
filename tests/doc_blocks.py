"""The fenced blocks of README.md and docs/*.md, and the commands in them, for the tests
that run them (``tests/test_doc_blocks.py``, ``tests/test_install_lines.py`` and the
adapter tests, each in the venv of the extra its page asks for).

A plain module (not a conftest.py) so tests import it by name.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from conftest import PROJECT_ROOT

#: Every page whose code blocks must run.
PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
SNIPPETS = PROJECT_ROOT / "docs" / "snippets"
#: Where the docs say the repository is (a placeholder until there is a public one).
REPOSITORY_URL = "https://github.com/OWNER/okfx"

_FENCE = re.compile(r"^```(\S*)\n(.*?)^```$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    body: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(PROJECT_ROOT)}:{self.line}"


def blocks(pages: list[Path] = PAGES) -> list[Block]:
    """Every fenced block of ``pages``, in order."""
    found = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(page, line, match.group(1), match.group(2)))
    return found


def page(name: str) -> Path:
    """``docs/<name>.md`` (or ``README.md``)."""
    return PROJECT_ROOT / ("README.md" if name == "README" else f"docs/{name}.md")


def commands(block: Block) -> list[list[str]]:
    """The commands of a bash block: each line split on ``&&``, as shell words."""
    found = []
    for line in block.body.splitlines():
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if words:
                found.append(words)
    return found


def inline_install_lines(pages: list[Path] = PAGES) -> list[tuple[str, str]]:
    """``pip install ...`` written as inline code in the prose: (page, command)."""
    found = []
    for page_ in pages:
        prose = _FENCE.sub("", page_.read_text(encoding="utf-8"))
        for match in re.finditer(r"`(pip install [^`]+)`", prose):
            command = match.group(1).split("&&")[0].strip()
            found.append((str(page_.relative_to(PROJECT_ROOT)), command))
    return found
