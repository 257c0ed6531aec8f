#!/usr/bin/env python3
"""Viewer benchmark: server time per page (``okfx view``) at 10k concepts and beyond.

Usage::

    python bench/viewer.py                       # 10k and 100k concepts
    python bench/viewer.py --sizes 1000 --repeat 5   # a quick smoke run

Bundles come from ../shared/bench/gen_bundle.py, cached under bench/out/ (as
bench/load.py makes them). Each size runs in its own process, which loads the bundle,
prepares facets and the search index (as ``okfx view`` does in the background), then
asks the viewer's ASGI app for each page in-process (no socket: the time is the
server's, from the request to the last byte of the answer). For each page it prints
the median and the 95th percentile over ``--repeat`` rounds (concept pages: over
``--repeat`` different concepts) and, as the baseline measured in the same run, the
tool call underneath (``read_concept``, ``list_concepts``, ``search_concepts``,
``get_neighbors``). The target is a concept page and a browse page within 50 ms at 10k.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from load import PROJECT, ensure_bundle  # noqa: E402

RUNNER = r"""
import json, random, statistics, sys, time
from okfx import Bundle, Toolbox
from okfx.gcpause import freeze_after_loads
from okfx.web import create_app
from starlette.testclient import TestClient

root, repeat = sys.argv[1], int(sys.argv[2])
freeze_after_loads()
bundle = Bundle.load(root)
bundle.facets().prepare()
bundle.search_index()
box = Toolbox(bundle)
client = TestClient(create_app(box), base_url="http://127.0.0.1:8766")
name = bundle.name
concepts = bundle.concepts
rng = random.Random(7)
picked = [rng.choice(concepts) for _ in range(repeat)]
middle = concepts[len(concepts) // 2]
queries = ["revenue by region", "daily active users", "orders table schema", "churn", "latency"]
asked = (queries * repeat)[:repeat]

def timed(call):
    t = time.perf_counter()
    out = call()
    return (time.perf_counter() - t) * 1000, out

def page(url):
    ms, answer = timed(lambda: client.get(url))
    assert answer.status_code == 200, (url, answer.status_code)
    return ms

cases = {
    "concept": ([lambda c=c: page(f"/b/{name}/c{c.path}") for c in picked],
                [lambda c=c: box.read_concept(path=c.path) for c in picked]),
    "browse, first page": ([lambda: page(f"/b/{name}/browse")] * repeat,
                           [lambda: box.list_concepts()] * repeat),
    "browse, page 50": ([lambda: page(f"/b/{name}/browse?page=50")] * repeat,
                        [lambda: box.list_concepts(offset=49 * 50)] * repeat),
    "browse, type + folder": (
        [lambda: page(f"/b/{name}/browse?type={middle.type}&dir={middle.directory}")] * repeat,
        [lambda: box.list_concepts(type=middle.type, directory=middle.directory)] * repeat),
    "search": ([lambda q=q: page(f"/search?q={q}") for q in asked],
               [lambda q=q: box.search_concepts(query=q, limit=20) for q in asked]),
    "graph, depth 2": ([lambda c=c: page(f"/b/{name}/graph?path={c.path}&depth=2") for c in picked],
                       [lambda c=c: box.get_neighbors(path=c.path) for c in picked]),
    "overview": ([lambda: page(f"/b/{name}/")] * repeat, [lambda: box.list_bundles()] * repeat),
    "problems": ([lambda: page(f"/b/{name}/problems")] * repeat, []),
}
first = {}
for label, (pages, _) in cases.items():
    first[label] = pages[0]()  # the first call of each page (figures made on first use)
result = {"concepts": len(bundle), "pages": {}}
for label, (pages, tools) in cases.items():
    page_ms = sorted(call() for call in pages)
    tool_ms = sorted(timed(call)[0] for call in tools)
    p95 = lambda xs: xs[min(len(xs) - 1, int(len(xs) * 0.95))] if xs else None
    result["pages"][label] = {
        "first": first[label],
        "p50": statistics.median(page_ms), "p95": p95(page_ms),
        "tool_p50": statistics.median(tool_ms) if tool_ms else None,
    }
print(json.dumps(result))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    env_path = str(PROJECT / "src")
    for size in args.sizes:
        root = ensure_bundle(size)
        proc = subprocess.run(
            [sys.executable, "-c", RUNNER, str(root), str(args.repeat)],
            capture_output=True,
            text=True,
            env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
            check=False,
        )
        if proc.returncode != 0:
            sys.exit(f"size {size} failed:\n{proc.stderr[-3000:]}")
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"\n{result['concepts']} concepts (ms; tool = the tool call underneath)")
        print(f"{'page':<24}{'first':>9}{'p50':>9}{'p95':>9}{'tool p50':>10}")
        for label, row in result["pages"].items():
            tool = "-" if row["tool_p50"] is None else f"{row['tool_p50']:.2f}"
            print(f"{label:<24}{row['first']:>9.2f}{row['p50']:>9.2f}{row['p95']:>9.2f}{tool:>10}")


if __name__ == "__main__":
    main()
