#!/usr/bin/env python3
"""Two versions of okfx side by side: load, search-index build and ``read_concept``
times, interleaved.

Each measurement runs in a fresh process with ``PYTHONPATH`` set to one version's
``src``; the two versions take turns (which goes first alternates), so a drift of the
machine's speed falls on both alike. Prints the medians and head/base, and checks that
both versions load the same number of concepts.

    git worktree add --detach /tmp/okfx-base <commit>
    python bench/ab_checkouts.py --base /tmp/okfx-base/src bench/out/okf-10k

``--head`` defaults to this checkout's ``src``. Nothing else may run meanwhile (two
shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LOAD = """
import json, sys, time
from okfx import Bundle
t = time.perf_counter()
b = Bundle.load(sys.argv[1], state_cache=False)
print(json.dumps({"value": time.perf_counter() - t, "concepts": len(b)}))
"""

# The search index built from a load without the state cache (the tokenizing and the
# postings; what a first search costs a server that has no stored index).
INDEX = """
import json, sys, time
from okfx import Bundle
b = Bundle.load(sys.argv[1], state_cache=False)
t = time.perf_counter()
b.search_index()
print(json.dumps({"value": time.perf_counter() - t, "concepts": len(b)}))
"""

# Every 20th concept read from its start (the header and the headings), after a warm-up;
# the best of five passes, per call.
READ = """
import json, sys, time
from okfx import Bundle, Toolbox
b = Bundle.load(sys.argv[1])
box = Toolbox(b)
paths = [c.path for c in b][::20]
for p in paths[:50]:
    box.read_concept(path=p)
best = []
for _ in range(5):
    t = time.perf_counter()
    for p in paths:
        box.read_concept(path=p)
    best.append((time.perf_counter() - t) / len(paths))
print(json.dumps({"value": min(best), "concepts": len(b)}))
"""


def run(code: str, src: str, bundle: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run(
        [sys.executable, "-c", code, bundle], capture_output=True, text=True, env=env, check=True
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def compare(name: str, code: str, sides: dict[str, str], bundle: str, rounds: int) -> None:
    values: dict[str, list[float]] = {side: [] for side in sides}
    counts: dict[str, float] = {}
    for i in range(rounds):
        order = list(sides) if i % 2 == 0 else list(sides)[::-1]
        for side in order:
            result = run(code, sides[side], bundle)
            values[side].append(result["value"])
            counts[side] = result["concepts"]
    if len(set(counts.values())) != 1:
        sys.exit(f"the two versions load different bundles: {counts}")
    base, head = (statistics.median(values[side]) for side in ("base", "head"))
    scale, unit = (1e6, "us") if base < 0.01 else (1.0, "s")
    print(
        f"{name:<13} base {base * scale:9.3f} {unit}  head {head * scale:9.3f} {unit}  "
        f"head/base {head / base:.3f}  ({rounds} runs each, medians)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", help="a bundle folder (e.g. bench/out/okf-10k)")
    parser.add_argument("--base", required=True, help="the src folder of the other version")
    parser.add_argument("--head", default=str(ROOT / "src"))
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sides = {"base": args.base, "head": args.head}
    print(f"{args.bundle}: base {args.base}, head {args.head}")
    compare("load", LOAD, sides, args.bundle, args.rounds)
    compare("index build", INDEX, sides, args.bundle, args.rounds)
    compare("read_concept", READ, sides, args.bundle, args.rounds)


if __name__ == "__main__":
    main()
