"""Query time under two values of one scoring setting, side by side in one process.

Loads a generated bundle (``bench/search.py``'s, from the state cache), then asks each of
``bench/search.py``'s sample queries twice per pass, once under each value of the
setting (a module attribute of :mod:`okfx.search.scoring`, read per query), which goes
first alternating, so a drift of the machine's speed falls on both alike. Prints the
summed time of a pass and p50 per side, for one-word queries and the others apart (a
factor can cost them differently), and checks that both sides return hits: the
rankings differ by design, only the time is compared.

    .venv/bin/python bench/settings_ab.py                                 # NAME_WEIGHT 0.2 / 0
    .venv/bin/python bench/settings_ab.py --size 100000 --setting TITLE_WEIGHT 0.1 0
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from search import bundle_dir, generator  # noqa: E402

from okfx import Bundle  # noqa: E402
from okfx.search import scoring  # noqa: E402
from okfx.search.analyzer import analyze_query  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--passes", type=int, default=4)
    parser.add_argument(
        "--setting",
        nargs=3,
        metavar=("NAME", "A", "B"),
        default=["NAME_WEIGHT", "0.2", "0.0"],
        help="an attribute of okfx.search.scoring and its two values",
    )
    args = parser.parse_args(argv)
    name, *raw = args.setting
    if not hasattr(scoring, name):
        sys.exit(f"okfx.search.scoring has no setting {name!r}")
    values = [float(v) for v in raw]
    bundle = Bundle.load(bundle_dir(args.size))
    index = bundle.search_index()
    queries = generator().sample_queries(args.queries)
    words = {q: len(scoring.query_units(q, analyze_query(q))) for q in queries}
    for query in queries:  # warm-up: pending impacts, caches
        index.search(query, limit=10)
    times: dict[tuple[int, bool], list[float]] = {}
    empty = 0
    for round_ in range(args.passes):
        for i, query in enumerate(queries):
            for side in (0, 1) if (i + round_) % 2 == 0 else (1, 0):
                setattr(scoring, name, values[side])
                start = time.perf_counter()
                hits = index.search(query, limit=10)
                took = time.perf_counter() - start
                empty += not len(hits)
                times.setdefault((side, words[query] > 1), []).append(took)
    print(f"{args.size:,} concepts, {len(queries)} queries, {args.passes} passes, {name}")
    print("  queries     value   ms a pass    p50 ms")
    for many in (False, True):
        for side in (0, 1):
            got = times.get((side, many), [])
            if got:
                per_pass = sum(got) * 1e3 / args.passes
                print(
                    f"  {'2+ words' if many else '1 word':9s} {values[side]:7.3f} "
                    f"{per_pass:10.1f} {statistics.median(got) * 1e3:9.3f}"
                )
    if empty:
        print(f"  ({empty} searches returned no hits)")


if __name__ == "__main__":
    main()
