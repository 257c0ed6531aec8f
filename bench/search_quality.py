"""Search quality on the evaluation sets: okfx against plain BM25, same run.

``tests/search_eval/queries.yaml`` (written while building the analyzer),
``tests/search_eval/tuning.yaml`` (more tuning queries) and ``tests/search_eval/blind.yaml``
(written blind, without the ranking code) run against one index over the four sample bundles
in ``../shared/okf-samples``; ``tests/search_eval/tuning_corpus.yaml`` and
``tests/search_eval/tuning_producers.yaml`` (tuning queries over real bundles) and
``tests/search_eval/third.yaml`` (written blind before issue 20's tuning) run each of their
bundles (kept under ``$OKFX_CORPUS``, or in the repository) in an index of its own. Prints
nDCG@5, MRR@10, hit@1 and hit@3 per query kind, plus the no-answer abstain rate (see
``tests/search_eval/evaluate.py`` for the definitions). The baseline is plain BM25 over one
combined field with ``\\w+`` tokens: no field weights, no identifier splitting, no plural
forms.

The blind sets (``blind.yaml``, ``third.yaml``) print aggregates only; ``--tuning`` runs
the tuning sets alone, with the queries each ranking misses and the figures pooled over
the three sets (what parameters are set on).

Usage::

    .venv/bin/python bench/search_quality.py [--queries PATH ...] [--tuning] [--show ID ...]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "okf-samples"
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from okfx import Bundle  # noqa: E402
from okfx.search.index import SearchIndex  # noqa: E402
from search_eval.baseline import PlainBM25  # noqa: E402
from search_eval.evaluate import (  # noqa: E402
    BLIND_SETS,
    KINDS,
    TUNING_SETS,
    Report,
    evaluate,
    format_report,
    has_bundles,
    load_bundles,
    load_queries,
)

NAMES = ("acme_retail", "crypto_bitcoin", "ga4", "stackoverflow")
NOW = datetime(2026, 7, 15, tzinfo=UTC)

Entries = list[tuple[str, Any]]
Ranked = list[tuple[Any, ...]]  # (bundle:/path, score[, confidence])
# entries of one index -> (query, options) -> ranked (bundle:/path, score)
Ranking = Callable[[Entries], Callable[[str, dict[str, Any]], Ranked]]


def okfx_lexical(entries: Entries) -> Callable[[str, dict[str, Any]], Ranked]:
    index = SearchIndex.build(entries)

    def search(query: str, options: dict[str, Any]) -> Ranked:
        hits = index.search(query, limit=10, now=NOW, **options)
        return [(f"{h.bundle}:{h.path}", h.score, h.confidence) for h in hits]

    return search


def plain_bm25(entries: Entries) -> Callable[[str, dict[str, Any]], Ranked]:
    baseline = PlainBM25(entries)

    def search(query: str, options: dict[str, Any]) -> Ranked:
        options = {k: v for k, v in options.items() if k != "bundle"}
        return list(baseline.search(query, 10, **options))

    return search


_EMBEDDER: list[Any] = []


def _hybrid(entries: Entries, semantic_only: bool) -> Callable[[str, dict[str, Any]], Ranked]:
    from okfx.search.embedder import default_embedder
    from okfx.search.hybrid import HybridRanker, SemanticState
    from okfx.search.vectors import default_store

    if not _EMBEDDER:
        _EMBEDDER.append(default_embedder())
    index = SearchIndex.build(entries)
    state = SemanticState(index, _EMBEDDER[0], default_store(), max_concepts=None)
    state.build()
    ranker = HybridRanker(state)
    ranker.semantic_only = semantic_only

    def search(query: str, options: dict[str, Any]) -> Ranked:
        hits = ranker.search(query, limit=10, now=NOW, **options)
        return [(f"{h.bundle}:{h.path}", h.score, h.confidence) for h in hits]

    return search


def okfx_hybrid(entries: Entries) -> Callable[[str, dict[str, Any]], Ranked]:
    return _hybrid(entries, semantic_only=False)


def okfx_semantic(entries: Entries) -> Callable[[str, dict[str, Any]], Ranked]:
    return _hybrid(entries, semantic_only=True)


RANKINGS: dict[str, tuple[str, Ranking]] = {
    "lexical": ("okfx lexical default (BM25F and issue 20's factors)", okfx_lexical),
    "plain": ("plain BM25 (one field, \\w+ tokens)", plain_bm25),
    "semantic": ("okfx semantic only (all-MiniLM-L6-v2 int8, filters applied)", okfx_semantic),
    "hybrid": ("okfx hybrid (BM25F + embedding candidates, blended)", okfx_hybrid),
}


def groups(path: Path) -> dict[str | None, Entries]:
    """The indexes a set runs against: one per bundle for a set with a ``bundles``
    section, else one over the four samples (key None)."""
    if has_bundles(path):
        found: dict[str | None, Entries] = {}
        for spec in load_bundles(path):
            if spec.path is None:
                print(f"  skipped bundle {spec.name}: {spec.note}")
                continue
            bundle = Bundle.load(spec.path, name=spec.name)
            found[spec.name] = [(bundle.name, c) for c in bundle]
        return found
    bundles = [Bundle.load(SAMPLES / name) for name in NAMES]
    return {None: [(b.name, c) for b in bundles for c in b]}


def routed(
    ranking: Ranking, indexes: dict[str | None, Entries]
) -> Callable[[str, dict[str, Any]], Ranked]:
    searches = {key: ranking(entries) for key, entries in indexes.items()}

    def search(query: str, options: dict[str, Any]) -> Ranked:
        return searches[options.get("bundle") if None not in searches else None](query, options)

    return search


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, nargs="+", default=[*TUNING_SETS, *BLIND_SETS])
    parser.add_argument(
        "--tuning", action="store_true", help="the tuning sets only, with pooled figures"
    )
    parser.add_argument(
        "--rankings",
        nargs="+",
        default=["lexical", "plain"],
        choices=list(RANKINGS),
        help="semantic and hybrid need okfx[semantic]; vectors are cached in the user cache",
    )
    parser.add_argument("--show", nargs="*", default=[], help="print the ranking of these ids")
    args = parser.parse_args(argv)
    if not SAMPLES.is_dir():
        sys.exit(f"sample bundles not found at {SAMPLES}")
    if args.tuning:
        args.queries = list(TUNING_SETS)
    tuning = {path.name for path in TUNING_SETS}
    pooled: dict[str, list[Report]] = {}
    for path in args.queries:
        indexes = groups(path)
        queries = [
            q for q in load_queries(path) if None in indexes or q.options.get("bundle") in indexes
        ]
        concepts = sum(len(entries) for entries in indexes.values())
        print(f"== {path.name}: {len(queries)} queries, {concepts} concepts\n")
        for key in args.rankings:
            label, ranking = RANKINGS[key]
            search = routed(ranking, indexes)
            report = evaluate(search, queries)
            print(format_report(label, report, misses=path.name in tuning))
            print()
            if path.name in tuning:
                pooled.setdefault(label, []).append(report)
            for query in queries:
                if query.id in args.show:
                    print(f"{query.id}: {query.query!r}")
                    for rank, (doc, score, *_) in enumerate(search(query.query, query.options), 1):
                        grade = query.relevant.get(doc, 0)
                        print(f"  {rank:2d}. {score:8.4f} {'*' * grade:2s} {doc}")
                    print()
    if args.tuning:
        print("== pooled over the tuning sets (nDCG@5 / hit@1 per kind)\n")
        for label, reports in pooled.items():
            print(pooled_line(label, reports))


def pooled_line(label: str, reports: Sequence[Report]) -> str:
    """nDCG@5 and hit@1 per kind over several reports, weighted by their query counts."""
    parts = []
    for kind in (*KINDS, "all"):
        rows = [r.by_kind[kind] for r in reports if kind in r.by_kind]
        n = sum(row["n"] for row in rows)
        if n:
            ndcg = sum(row["ndcg@5"] * row["n"] for row in rows) / n
            hit1 = sum(row["hit@1"] * row["n"] for row in rows) / n
            parts.append(f"{kind} {ndcg:.3f}/{hit1:.3f} (n={int(n)})")
    return f"{label}\n  " + "\n  ".join(parts)


if __name__ == "__main__":
    main()
