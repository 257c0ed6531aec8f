#!/usr/bin/env python3
"""Starts after a fresh copy: a bundle copied just before its first load, then searched
three times, each an ``okfx search`` in its own process with one state cache.

The first run is cold; the second should start warm (the platform QA saw it read every
file again and build the index again, slower than the cold start, since every file was
within the racy window of the first load: ``okfx.bundle.settle``). Prints each run's wall
time per version and second/first, the figure to watch; ``--base`` adds another
version's ``src`` (the versions alternate, each on its own copy and cache).

    python bench/fresh_copy.py bench/out/okf-10k --base /tmp/okfx-base/src

Nothing else may run meanwhile (two shared cores).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def runs(src: str, bundle: Path, work: Path) -> list[float]:
    """Copy ``bundle`` into ``work`` and time three searches with ``src``'s okfx."""
    copy = work / "bundle"
    shutil.copytree(bundle, copy)
    env = {**os.environ, "PYTHONPATH": src, "OKFX_CACHE_HOME": str(work / "cache")}
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "okfx", "search", str(copy), "customer churn", "--limit", "1"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--head", default=str(ROOT / "src"))
    parser.add_argument("--base", help="another version's src folder")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    versions = [("head", args.head)] + ([("base", args.base)] if args.base else [])
    for round_ in range(args.rounds):
        order = versions if round_ % 2 == 0 else versions[::-1]
        for name, src in order:
            with tempfile.TemporaryDirectory(prefix="okfx-fresh-") as work:
                first, second, third = runs(src, args.bundle, Path(work))
            print(
                f"{name}: {first:.2f} s, {second:.2f} s, {third:.2f} s; "
                f"second/first {second / first:.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
