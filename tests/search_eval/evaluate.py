"""Score a search function on the evaluation set (``queries.yaml``).

Metrics, per query kind and overall (answerable queries only):

- nDCG@5: graded gains ``2**grade - 1``, ideal order from the judged grades.
- MRR@10: 1 / rank of the first *primary* (grade 2) concept within the top 10, else 0.
- hit@1, hit@3: a primary concept is at rank 1 / within the top 3.

No-answer queries have no relevant concept, so they are scored on confidence: a query
"abstains" when it returns nothing or its top score is below the 10th percentile of the
top scores of the answerable queries (a threshold a caller could have picked from
labelled queries). ``abstain`` is the share of no-answer queries that abstain; by
construction about 10% of answerable queries fall below the same threshold.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

QUERIES = Path(__file__).with_name("queries.yaml")
#: A second set, written blind: by reading the bundles only, never the ranking code.
BLIND = Path(__file__).with_name("blind.yaml")
#: A third set, written blind before issue 20's tuning, over the example bundle and a real
#: bundle from another producer; each bundle is searched in an index of its own.
THIRD = Path(__file__).with_name("third.yaml")
#: Tuning sets written for issue 20's follow-up: more queries over the four samples (one
#: index, as queries.yaml), and queries over real bundles (an index per bundle).
TUNING = Path(__file__).with_name("tuning.yaml")
TUNING_CORPUS = Path(__file__).with_name("tuning_corpus.yaml")
#: Session 63's tuning set over eleven more producers' bundles (an index per bundle).
TUNING_PRODUCERS = Path(__file__).with_name("tuning_producers.yaml")
#: Sets that parameters may be tuned on (their per-query misses may be printed).
TUNING_SETS = (QUERIES, TUNING, TUNING_CORPUS, TUNING_PRODUCERS)
#: Sets that are measured, never tuned on: only aggregates are printed.
BLIND_SETS = (BLIND, THIRD)
KINDS = (
    "keyword",
    "paraphrase",
    "column-name",
    "plural",
    "identifier-variant",
    "type-folder",
    "acronym",
    "word-form",
    "question",
)

# query text, extra search options -> ranked [(bundle:/path, score)] or
# [(bundle:/path, score, confidence)], best first
SearchFn = Callable[[str, dict[str, Any]], Sequence[tuple[Any, ...]]]
#: A hit's confidence from which the bundle is taken to answer (okfx.search.scoring).
CONFIDENT = 0.5


@dataclass(frozen=True)
class EvalQuery:
    id: str
    kind: str
    query: str
    relevant: dict[str, int]
    options: dict[str, Any] = field(default_factory=dict)


def load_queries(path: Path = QUERIES) -> list[EvalQuery]:
    """The queries of a set. A set with a ``bundles`` section (``third.yaml``,
    ``tuning_corpus.yaml``) names the
    bundle of each query in its options (``bundle``), from its judged concepts or its
    ``bundle`` key."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    rows = raw["queries"] if isinstance(raw, dict) else raw
    queries = []
    for q in rows:
        relevant = dict(q.get("relevant") or {})
        options = dict(q.get("options") or {})
        if isinstance(raw, dict):
            options["bundle"] = q.get("bundle") or next(iter(relevant)).split(":", 1)[0]
        queries.append(EvalQuery(q["id"], q["kind"], q["query"], relevant, options))
    return queries


@dataclass(frozen=True)
class EvalBundle:
    name: str
    path: Path | None  # None: a corpus bundle that is not on this machine
    note: str  # where it comes from, or why it is absent


def corpus_root() -> Path:
    """Where real bundles from other producers are kept, outside git."""
    return Path(os.environ.get("OKFX_CORPUS", "/work/corpus"))


def has_bundles(path: Path) -> bool:
    """Whether a set names its bundles (one index per bundle) rather than running over
    the four samples in one index."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    return isinstance(raw, dict) and "bundles" in raw


def load_bundles(path: Path = THIRD) -> list[EvalBundle]:
    """The bundles a set with a ``bundles`` section searches: repository paths are
    relative to the repository root, corpus bundles live under :func:`corpus_root`."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    root = Path(__file__).resolve().parents[2]
    found = []
    for name, spec in raw["bundles"].items():
        if "path" in spec:
            found.append(EvalBundle(name, root / spec["path"], spec["path"]))
            continue
        where = corpus_root() / spec["corpus"]
        note = f"{spec['repo']} at {spec['commit']}"
        if where.is_dir():
            found.append(EvalBundle(name, where, note))
        else:
            found.append(EvalBundle(name, None, f"{note}: not at {where} (set OKFX_CORPUS)"))
    return found


def ndcg(ranked: Sequence[str], relevant: dict[str, int], k: int = 5) -> float:
    gains = [2 ** relevant.get(doc, 0) - 1 for doc in ranked[:k]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted((2**g - 1 for g in relevant.values()), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    for i, doc in enumerate(ranked[:k]):
        if relevant.get(doc, 0) >= 2:
            return 1.0 / (i + 1)
    return 0.0


def hit(ranked: Sequence[str], relevant: dict[str, int], k: int) -> float:
    return 1.0 if any(relevant.get(doc, 0) >= 2 for doc in ranked[:k]) else 0.0


@dataclass
class Report:
    by_kind: dict[str, dict[str, float]]  # kind (and "all") -> metric -> value
    abstain: float  # share of no-answer queries that abstain
    threshold: float  # the abstain threshold on top scores
    misses: list[str]  # ids of answerable queries whose primary concept is not top 3
    # With confidences: the share of no-answer queries whose best hit has confidence
    # under CONFIDENT (or no hit), and the share of answerable ones at or above it.
    unsure_none: float | None = None
    sure_answerable: float | None = None


def evaluate(search: SearchFn, queries: Sequence[EvalQuery]) -> Report:
    rows: dict[str, list[dict[str, float]]] = {}
    tops: list[float] = []
    none_tops: list[float | None] = []
    misses: list[str] = []
    sure: dict[bool, list[bool]] = {True: [], False: []}  # answerable -> top >= CONFIDENT
    graded = False  # whether the search gives confidences at all
    for q in queries:
        results = list(search(q.query, q.options))
        top = results[0][1] if results else None
        graded = graded or bool(results and len(results[0]) > 2)
        sure[q.kind != "no-answer"].append(bool(results) and results[0][-1] >= CONFIDENT)
        if q.kind == "no-answer":
            none_tops.append(top)
            continue
        tops.append(top if top is not None else 0.0)
        ranked = [row[0] for row in results]
        row = {
            "ndcg@5": ndcg(ranked, q.relevant),
            "mrr@10": reciprocal_rank(ranked, q.relevant),
            "hit@1": hit(ranked, q.relevant, 1),
            "hit@3": hit(ranked, q.relevant, 3),
        }
        if not row["hit@3"]:
            misses.append(q.id)
        rows.setdefault(q.kind, []).append(row)
        rows.setdefault("all", []).append(row)
    by_kind = {
        kind: {m: statistics.fmean(r[m] for r in kind_rows) for m in kind_rows[0]}
        | {"n": float(len(kind_rows))}
        for kind, kind_rows in rows.items()
    }
    threshold = statistics.quantiles(tops, n=10)[0] if len(tops) >= 2 else 0.0
    abstained = [t is None or t < threshold for t in none_tops]
    abstain = statistics.fmean(abstained) if abstained else 0.0
    unsure_none = 1 - statistics.fmean(sure[False]) if graded and sure[False] else None
    sure_answerable = statistics.fmean(sure[True]) if graded and sure[True] else None
    return Report(by_kind, abstain, threshold, misses, unsure_none, sure_answerable)


def format_report(name: str, report: Report, misses: bool = True) -> str:
    """The table of a report; ``misses=False`` leaves out which queries missed (for the
    blind sets, so that measuring them never turns into tuning on them)."""
    lines = [
        f"{name}",
        f"  {'kind':20s} {'n':>3s} {'nDCG@5':>7s} {'MRR@10':>7s} {'hit@1':>6s} {'hit@3':>6s}",
    ]
    for kind in (*KINDS, "all"):
        m = report.by_kind.get(kind)
        if m is None:
            continue
        lines.append(
            f"  {kind:20s} {int(m['n']):3d} {m['ndcg@5']:7.3f} {m['mrr@10']:7.3f} "
            f"{m['hit@1']:6.3f} {m['hit@3']:6.3f}"
        )
    lines.append(
        f"  no-answer: abstain {report.abstain:.3f} (top score < {report.threshold:.3f}, "
        "the 10th percentile of answerable top scores)"
    )
    if report.unsure_none is not None and report.sure_answerable is not None:
        lines.append(
            f"  confidence: {report.unsure_none:.3f} of no-answer queries under {CONFIDENT}, "
            f"{report.sure_answerable:.3f} of answerable ones at or above it"
        )
    if misses and report.misses:
        lines.append(f"  primary not in top 3: {', '.join(report.misses)}")
    return "\n".join(lines)
