"""Search quality on the evaluation sets: okfx BM25F against plain BM25, same run.

Loads the four sample bundles from ``../shared/okf-samples`` into one index and runs
every query of ``tests/search_eval/queries.yaml`` (written while building the analyzer)
and of ``tests/search_eval/blind.yaml`` (written blind, without the ranking code: the
closer guess at an unseen query set). Prints nDCG@5, MRR@10, hit@1 and hit@3 per query
kind, plus the no-answer abstain rate (see ``tests/search_eval/evaluate.py`` for the
definitions). The baseline is plain BM25 over one combined field with ``\\w+`` tokens:
no field weights, no identifier splitting, no plural forms.

Usage::

    .venv/bin/python bench/search_quality.py [--queries PATH ...] [--show QUERY_ID ...]
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "okf-samples"
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from okfx import Bundle  # noqa: E402
from okfx.search.index import SearchIndex  # noqa: E402
from search_eval.baseline import PlainBM25  # noqa: E402
from search_eval.evaluate import BLIND, QUERIES, evaluate, format_report, load_queries  # noqa: E402

NAMES = ("acme_retail", "crypto_bitcoin", "ga4", "stackoverflow")
NOW = datetime(2026, 7, 15, tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, nargs="+", default=[QUERIES, BLIND])
    parser.add_argument("--show", nargs="*", default=[], help="print the ranking of these ids")
    args = parser.parse_args()
    if not SAMPLES.is_dir():
        sys.exit(f"sample bundles not found at {SAMPLES}")
    bundles = [Bundle.load(SAMPLES / name) for name in NAMES]
    entries = [(b.name, c) for b in bundles for c in b]
    index = SearchIndex.build(entries)
    baseline = PlainBM25(entries)

    def ours(query: str, options: dict) -> list[tuple[str, float]]:
        hits = index.search(query, limit=10, now=NOW, **options)
        return [(f"{h.bundle}:{h.path}", h.score) for h in hits]

    def plain(query: str, options: dict) -> list[tuple[str, float]]:
        return list(baseline.search(query, 10, **options))

    for path in args.queries:
        queries = load_queries(path)
        print(f"== {path.name}: {len(queries)} queries, {len(entries)} concepts\n")
        ranking = "okfx BM25F (title 3, tags 2.5, description 2, body 0.5)"
        print(format_report(ranking, evaluate(ours, queries)))
        print()
        print(format_report("plain BM25 (one field, \\w+ tokens)", evaluate(plain, queries)))
        print()
        for query in queries:
            if query.id in args.show:
                print(f"{query.id}: {query.query!r}")
                for rank, (doc, score) in enumerate(ours(query.query, query.options), 1):
                    grade = query.relevant.get(doc, 0)
                    print(f"  {rank:2d}. {score:8.4f} {'*' * grade:2s} {doc}")
                print()


if __name__ == "__main__":
    main()
