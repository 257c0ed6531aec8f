"""A folder swapped for a symlink while okfx reads never leads it outside the root.

Checking a path (``realpath``) and then opening it leaves a window: a process that can
write inside the bundle swaps a checked folder for a symlink to an outside one between
the two (issue 16: 76k of 320k ``read_resource`` calls returned outside files). okfx
opens every file one component at a time from the root with ``O_NOFOLLOW``, so a swapped
folder makes the open fail: ``unreadable``, never an outside byte and never
``internal_error``. Each test runs the race for a bounded time.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile import MARKER, assert_bundle_clean, concept, error_code, is_internal, write

from okfx import Bundle, Toolbox

RACE_SECONDS = 2.5
COMPUTATION = (
    "---\ntype: Attested Computation\nruntime: duckdb\ncomputation: /d/q.sql\n"
    "parameters:\n  - { name: n, type: integer, required: true }\n---\n# Computation\n"
)


@pytest.fixture
def racy(tmp_path: Path) -> tuple[Path, Path]:
    """A bundle with a folder ``d`` and an outside folder with the same names in it."""
    root = write(
        tmp_path / "b",
        {
            "a.md": concept(body="[x](/d/x.sql)"),
            "comp.md": COMPUTATION,
            "d/c.md": concept(title="inside", body="inside"),
            "d/x.sql": "select 'inside';\n",
            "d/q.sql": "SELECT $n AS inside\n",
        },
    )
    write(
        tmp_path / "outside",
        {
            "c.md": concept(title=MARKER, body=MARKER),
            "x.sql": f"select '{MARKER}';\n",
            "q.sql": f"SELECT $n AS {MARKER.replace('-', '_')}\n",
        },
    )
    return root, tmp_path / "outside"


# Another process, as an attacker would be: a thread would only swap at the GIL's
# switch points, which a short load can fall between.
SWAPPER = """
import os, sys
real, link, spare, outside = sys.argv[1:5]
os.symlink(outside, link)
print("ready", flush=True)
while True:
    os.rename(real, spare)
    os.rename(link, real)  # d is now the symlink
    os.rename(real, link)
    os.rename(spare, real)  # d is the folder again
"""


def race(root: Path, outside: Path, call: Callable[[], Any], seconds: float) -> list[Any]:
    """``call()`` in a loop for ``seconds`` while another process flips ``root/d``
    between the real folder and a symlink to ``outside`` (each an atomic rename)."""
    names = [str(root / "d"), str(root / ".d-link"), str(root / ".d-real"), str(outside)]
    results: list[Any] = []
    with subprocess.Popen(
        [sys.executable, "-c", SWAPPER, *names], stdout=subprocess.PIPE, text=True
    ) as swapper:
        try:
            assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                results.append(call())
        finally:
            swapper.kill()
    if not (root / "d").is_dir() or (root / "d").is_symlink():  # killed mid-swap
        for name in ("d", ".d-link"):
            if (root / name).is_symlink():
                (root / name).unlink()
        if (root / ".d-real").exists():
            (root / ".d-real").rename(root / "d")
    return results


def _outside(result: Any) -> bool:
    return MARKER in repr(result) or MARKER.replace("-", "_") in repr(result)


@pytest.mark.parametrize(
    ("tool", "kwargs"),
    [
        ("read_resource", {"path": "d/x.sql"}),
        ("read_concept", {"path": "d/c.md"}),
        ("prepare_computation", {"path": "comp", "parameters": {"n": 1}}),
    ],
)
def test_tools_never_return_outside_bytes_while_a_folder_is_swapped(
    racy: tuple[Path, Path], tool: str, kwargs: dict[str, Any]
) -> None:
    root, outside = racy
    box = Toolbox(Bundle.load(root))
    assert not _outside(getattr(box, tool)(**kwargs))
    results = race(root, outside, lambda: getattr(box, tool)(**kwargs), RACE_SECONDS)
    assert len(results) > 50, "the race did not run"
    leaked = sum(_outside(r) for r in results)
    internal = sum(is_internal(r) for r in results)
    assert (leaked, internal) == (0, 0), f"{leaked} leaks, {internal} internal errors"
    codes = {error_code(r) for r in results}
    # Between two renames the folder is briefly absent: a concept or a resource read then
    # finds its file gone since the load (Bundle.as_now, read_resource), which is not_found.
    gone = {"not_found"} if tool in ("read_concept", "read_resource") else set()
    assert codes <= {None, "unreadable"} | gone, codes


def test_a_load_never_reads_through_a_swapped_folder(racy: tuple[Path, Path]) -> None:
    root, outside = racy
    bundles = race(root, outside, lambda: Bundle.load(root), RACE_SECONDS)
    assert len(bundles) > 20, "the race did not run"
    for bundle in bundles:
        assert_bundle_clean(bundle)
        for problem in bundle.warnings:
            assert problem.code in {"unreadable", "unsafe_path", "broken_link"}, problem
