"""What the hybrid's blend could gain on the tuning sets: a fixed BM25F share for every
query, the best share for each query (the ceiling of any rule that picks ``alpha``), and
rules of the share of the query's terms the best BM25F hit holds.

For each answerable query of the tuning sets (never the blind ones) the hybrid ranks with
``alpha`` fixed at 0, 0.05, ..., 1 (``HybridRanker.fixed_alpha``) and with today's rule.
Printed, pooled nDCG@5 per kind:

- ``rule``: today's ``alpha`` (``HybridRanker._alpha``);
- ``fixed``: the one ``alpha`` for all queries that scores best, and its score;
- ``oracle``: each query at its own best ``alpha``: what a perfect rule would reach.

Then, over the queries outside the identifier rules (``alpha <= ALPHA_MAX``), the
``alpha = a_min + (a_max - a_min) * share**p`` rules for a grid of ``a_min``, ``a_max``
and ``p``, each query scored at the grid ``alpha`` nearest its rule's (``share`` is read
back from today's ``alpha``), per part: the sample sets and the real bundles'.

Usage::

    OKFX_CORPUS=/work/corpus .venv/bin/python bench/blend_ceiling.py
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import search_quality as sq  # noqa: E402  (puts src and tests on the path)

from okfx.search import hybrid  # noqa: E402
from okfx.search.embedder import default_embedder  # noqa: E402
from okfx.search.index import SearchIndex  # noqa: E402
from okfx.search.vectors import default_store  # noqa: E402
from search_eval.evaluate import (  # noqa: E402
    KINDS,
    TUNING_CORPUS,
    TUNING_PRODUCERS,
    TUNING_SETS,
    load_queries,
    ndcg,
)

GRID = tuple(round(0.05 * step, 2) for step in range(21))


@dataclass
class Row:
    set: str
    kind: str
    rule_alpha: float
    rule: float
    at: dict[float, float]  # alpha -> nDCG@5

    @property
    def best(self) -> float:
        return max(self.at.values())

    def nearest(self, alpha: float) -> float:
        return self.at[min(GRID, key=lambda a: abs(a - alpha))]


def measure(paths: Sequence[Path]) -> list[Row]:
    embedder = default_embedder()
    seen: list[float] = []
    real_alpha = hybrid.HybridRanker._alpha

    def watched(self: Any, *args: Any) -> float:
        value = real_alpha(self, *args)
        seen.append(value)
        return value

    hybrid.HybridRanker._alpha = watched  # type: ignore[method-assign]
    rows: list[Row] = []
    for path in paths:
        rankers: dict[str | None, hybrid.HybridRanker] = {}
        for key, entries in sq.groups(path).items():
            state = hybrid.SemanticState(
                SearchIndex.build(entries), embedder, default_store(), max_concepts=None
            )
            state.build()
            rankers[key] = hybrid.HybridRanker(state)
        for query in load_queries(path):
            if not query.relevant or (
                None not in rankers and query.options.get("bundle") not in rankers
            ):
                continue
            ranker = rankers[None if None in rankers else query.options.get("bundle")]

            def score(alpha: float | None, ranker: Any = ranker, query: Any = query) -> float:
                ranker.fixed_alpha = alpha
                hits = ranker.search(query.query, limit=10, now=sq.NOW, **query.options)
                return ndcg([f"{h.bundle}:{h.path}" for h in hits], query.relevant)

            seen.clear()
            rule = score(None)
            rows.append(Row(path.name, query.kind, seen[-1], rule, {a: score(a) for a in GRID}))
    hybrid.HybridRanker._alpha = real_alpha  # type: ignore[method-assign]
    return rows


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def ceiling(rows: Sequence[Row]) -> str:
    fixed = max(GRID, key=lambda a: mean([r.at[a] for r in rows]))
    return (
        f"n={len(rows):3d}  rule {mean([r.rule for r in rows]):.3f}  "
        f"fixed {mean([r.at[fixed] for r in rows]):.3f} (alpha {fixed:.2f})  "
        f"oracle {mean([r.best for r in rows]):.3f}"
    )


def shapes(rows: Sequence[Row]) -> list[tuple[float, float, float, float, float, float]]:
    """(all, samples, real bundles, a_min, a_max, p) per rule, best first."""
    plain = [r for r in rows if r.rule_alpha <= hybrid.ALPHA_MAX + 1e-9]
    span = hybrid.ALPHA_MAX - hybrid.ALPHA_MIN
    share = {id(r): math.sqrt(max(r.rule_alpha - hybrid.ALPHA_MIN, 0.0) / span) for r in plain}
    corpus = {TUNING_CORPUS.name, TUNING_PRODUCERS.name}
    real = [r for r in plain if r.set in corpus]
    samples = [r for r in plain if r.set not in corpus]
    out = []
    for a_min in (0.0, 0.1, 0.2, 0.3, 0.4):
        for a_max in (0.6, 0.7, 0.8, 0.9):
            for p in (0.5, 1.0, 2.0, 3.0):

                def rule(r: Row, a_min: float = a_min, a_max: float = a_max, p: float = p) -> float:
                    return r.nearest(a_min + (a_max - a_min) * share[id(r)] ** p)

                def scores(part: Sequence[Row], rule: Callable[[Row], float] = rule) -> float:
                    return mean([rule(r) for r in part])

                out.append((scores(plain), scores(samples), scores(real), a_min, a_max, p))
    out.sort(key=lambda item: -item[0])
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=8, help="share rules to print")
    args = parser.parse_args(argv)
    rows = measure(TUNING_SETS)
    print(
        "== pooled over the tuning sets, nDCG@5: today's rule, the best fixed alpha, the oracle\n"
    )
    for kind in KINDS:
        mine = [r for r in rows if r.kind == kind]
        if mine:
            print(f"  {kind:20s} {ceiling(mine)}")
    print(f"  {'all':20s} {ceiling(rows)}\n")
    print("  fixed alpha:", " ".join(f"{a:.2f}:{mean([r.at[a] for r in rows]):.3f}" for a in GRID))
    plain = [r for r in rows if r.rule_alpha <= hybrid.ALPHA_MAX + 1e-9]
    print(f"\n== share rules over the {len(plain)} queries outside the identifier rules")
    print("   (all / samples / real bundles; a_min a_max p), best first\n")
    ranked = shapes(rows)
    today_rule = (hybrid.ALPHA_MIN, hybrid.ALPHA_MAX, hybrid.ALPHA_POWER)
    today = next(s for s in ranked if s[3:] == today_rule)
    for all_, samples, real, a_min, a_max, p in [*ranked[: args.top], today]:
        mark = "  <- today's" if (a_min, a_max, p) == today[3:] else ""
        print(f"  {all_:.4f} / {samples:.4f} / {real:.4f}   {a_min:.1f} {a_max:.1f} {p:.1f}{mark}")


if __name__ == "__main__":
    main()
