#!/usr/bin/env python3
"""Listing benchmark: ``list_concepts`` (okfx.search.facets) against a full filter scan.

Usage::

    python bench/listing.py                          # 10k and 100k concepts
    python bench/listing.py --sizes 10000 --state-cache /tmp/okfx-state

Bundles come from ../shared/bench/gen_bundle.py, cached under bench/out/ (as
bench/load.py makes them); ``--state-cache`` reads an unchanged bundle back instead of
parsing it. Each size runs in its own process. For each filter it prints:

- ``scan``: the baseline, measured in the same run: ask ``ConceptFilter.reason`` of
  every concept, count what each filter hid and cut the page (what ``list_concepts``
  did before the facets), median of ``--repeat``;
- ``first`` and ``again``: the ``list_concepts`` tool call (arguments checked, rows
  built), the first time for that filter and the median of ``--repeat`` calls after.

It runs twice per size: on fresh facets, as a library user who calls the tool first
gets them, and after ``Facets.prepare()``, as ``okfx serve`` does in the background.
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
import json, statistics, sys, time
from okfx import Bundle, Toolbox
from okfx.search.filters import ConceptFilter
from okfx.gcpause import freeze_after_loads

root, cache, repeat, prepare = sys.argv[1], sys.argv[2] or False, int(sys.argv[3]), sys.argv[4]
freeze_after_loads()  # as okfx serve runs
t = time.perf_counter()
bundle = Bundle.load(root, state_cache=cache)
load_s = time.perf_counter() - t
box = Toolbox(bundle)
prepare_s = None
if prepare == "yes":
    t = time.perf_counter()
    bundle.facets().prepare()
    prepare_s = time.perf_counter() - t
concepts = bundle.concepts
middle = concepts[len(concepts) // 2]
tags = sorted(middle.tags)
cases = [
    ("default (first page)", {}),
    ("last page", {"offset": len(concepts) - 50}),
    ("type", {"type": middle.type}),
    ("directory", {"directory": middle.directory}),
    ("one tag", {"tags": tags[:1]}),
    ("two tags", {"tags": tags[:2]}),
    ("trust tier + deprecated", {"trust_tier": middle.trust_tier, "include_deprecated": True}),
    ("not stale", {"include_stale": False}),
    ("type + tag + not stale", {"type": middle.type, "tags": tags[:1], "include_stale": False}),
]


def scan(args):
    spec = ConceptFilter.create(
        directory=args.get("directory"), type=args.get("type"), tags=args.get("tags"),
        trust_tier=args.get("trust_tier"),
        include_deprecated=args.get("include_deprecated", False),
        include_stale=args.get("include_stale", True), now=box.now(),
    )
    kept, hidden = [], {}
    for concept in bundle:
        reason = spec.reason(bundle.name, concept)
        if reason is None:
            kept.append(concept)
        else:
            hidden[reason] = hidden.get(reason, 0) + 1
    offset = min(args.get("offset", 0), len(kept))
    return len(kept), kept[offset : offset + 50], hidden


rows = []
for label, args in cases:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        want = scan(args)
        runs.append(time.perf_counter() - t)
    calls = []
    for _ in range(repeat + 1):
        t = time.perf_counter()
        got = box.list_concepts(**args)
        calls.append(time.perf_counter() - t)
    assert got["total"] == want[0] and got["hidden"] == want[2], label
    assert [r["path"] for r in got["concepts"]] == [c.path for c in want[1]], label
    rows.append([label, got["total"], statistics.median(runs), calls[0],
                 statistics.median(calls[1:])])
print(json.dumps({"concepts": len(bundle), "load_s": load_s, "prepare_s": prepare_s,
                  "rows": rows}))
"""


def run(root: Path, cache: str, repeat: int, prepare: bool) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(root), cache, str(repeat), "yes" if prepare else "no"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(PROJECT / "src")},
        check=True,
    )
    result: dict = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--state-cache", default="", help="a state cache folder (default: none)")
    args = parser.parse_args()
    for size in args.sizes:
        root = ensure_bundle(size)
        for prepare in (False, True):
            r = run(root, args.state_cache, args.repeat, prepare)
            how = "after Facets.prepare()" if prepare else "fresh facets (no prepare)"
            print(f"\n== {r['concepts']:,} concepts, {how}; load {r['load_s']:.1f} s", end="")
            print(f", prepare {r['prepare_s']:.2f} s" if prepare else "")
            print(f"{'filter':26} {'total':>7} {'scan ms':>9} {'first ms':>9} {'again ms':>9}")
            for label, total, scan, first, again in r["rows"]:
                print(
                    f"{label:26} {total:>7} {scan * 1e3:>9.1f} {first * 1e3:>9.1f} "
                    f"{again * 1e3:>9.2f}"
                )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
