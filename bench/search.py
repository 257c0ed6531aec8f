"""Search speed benchmark: build time, query latency and peak memory at 10k and 100k.

Bundles come from ``/work/shared/bench/gen_bundle.py`` (cached under ``bench/out/``,
git-ignored); queries from its ``sample_queries`` (1-4 content words, Zipf-weighted, so
they lean towards long posting lists). Each size runs in its own process, so peak RSS
(``resource.getrusage``) belongs to that size. In that process:

1. ``Bundle.load`` without the state cache (the core loader) - reported separately, it
   is not search code;
2. ``SearchIndex.build`` and the first search ("first search ready");
3. one cold pass over the queries, one warm-up pass, then three timed passes:
   p50/p95 per pass, median of the passes (wall time; CPU time alongside), over the
   loaded concepts (bodies read from their files, as a bundle keeps them) and over the
   same concepts with their bodies held in memory (how okfx kept them before the state
   cache read them on demand: "eager bodies");
4. the same for a naive baseline: dict-of-lists postings of (doc, impact) with the same
   analyzer and BM25F impacts, scored term-at-a-time over every posting, no pruning.

Then, unless ``--no-restart``, the warm-restart runs (issue "Always warm"), each in a
process of its own, on a hard-linked copy of the bundle and a fresh state cache folder,
all with ``okfx.gcpause.freeze_after_loads()`` as ``okfx serve`` runs:

- **cold**: ``Bundle.load`` with the empty state cache, then the first search (load,
  build, store): the time to be ready from nothing, and its peak RSS;
- **restart**: the same on the unchanged bundle (state read back, nothing parsed), then
  the query passes of its index against an index over the same concepts with their
  bodies in memory (eager), built in the same process, interleaved query by query
  (:func:`measure_pair`, eight passes each), so the two are compared at the same machine
  speed; then 1% of the concept files are rewritten (a new file renamed over each, so the
  original bundle is untouched) and ``Bundle.reload()`` brings the bundle and its index up
  to date: its time, the stat scan's alone, and the query passes again.

It prints the ratios the issue sets: restart / cold <= 0.05, reload / cold <= 0.05 (plus
the stat scan), peak RSS at 100k <= 1.0 GB, warm p50/p95 against eager bodies.

With ``--semantic`` (needs ``okfx[semantic]``) each size also reports the hybrid search
of :mod:`okfx.search.hybrid`: the default model's encode time per 1,000 concepts (over
``--encode-sample`` concepts of the bundle), hybrid query p50/p95 including the query's
own encode (over a random unit matrix in place of the concept vectors: latency does not
depend on their values, and encoding 100k concepts would take hours), the same with the
query's vector kept from an earlier search (``hybrid_kept``: an agent asking again), and
the vectors' memory (n x 384 float32).

Usage::

    .venv/bin/python bench/search.py                 # 10k and 100k
    .venv/bin/python bench/search.py --sizes 10000 100000 --semantic
    .venv/bin/python bench/search.py --sizes 10000 --queries 300

The machine is shared: look at CPU time next to wall time, and re-run before trusting a
difference under ~20%.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GEN = ROOT.parent / "shared" / "bench" / "gen_bundle.py"
OUT = ROOT / "bench" / "out"
#: Timed passes per side in :func:`measure_pair`: at 100k a pass varies by about 10%, and
#: the median of eight moves less than that of four.
PAIR_ROUNDS = 8
sys.path.insert(0, str(ROOT / "src"))

from okfx import Bundle, Concept  # noqa: E402
from okfx.search.analyzer import ChunkCache, analyze_query, count_terms  # noqa: E402
from okfx.search.bm25f import (  # noqa: E402
    FIELD_WEIGHTS,
    K1,
    STATUS_MULTIPLIERS,
    idf,
    length_norm,
    saturate,
)
from okfx.search.index import SearchIndex  # noqa: E402


def generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_bundle", GEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bundle_dir(size: int) -> Path:
    path = OUT / f"okf-{size // 1000}k"
    if not (path / "index.md").exists():
        print(f"generating {size} concepts into {path} ...", flush=True)
        subprocess.run(
            [sys.executable, str(GEN), "--concepts", str(size), "--out", str(path), "--force"],
            check=True,
        )
    return path


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    with open("/proc/self/statm", encoding="utf-8") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class NaiveIndex:
    """The baseline, written the obvious way: the same analyzer and BM25F formula, but
    postings as a dict of Python lists of ``(doc, impact)`` tuples, and queries scored
    term-at-a-time over every posting (no pruning, no compact arrays)."""

    def __init__(self, entries: Sequence[tuple[str, Any]]) -> None:
        self.entries = entries
        fields = list(FIELD_WEIGHTS)
        cache = ChunkCache()
        raw: dict[str, list[tuple[int, list[int]]]] = {}
        lengths: dict[str, list[int]] = {f: [] for f in fields}
        for doc, (_, c) in enumerate(entries):
            texts = {
                "title": c.title,
                "tags": " ".join(c.tags),
                "description": c.description,
                "body": c.body,
            }
            per_doc: dict[str, list[int]] = {}
            for i, field in enumerate(fields):
                counts, length = count_terms(texts[field], cache)
                lengths[field].append(length)
                for term, tf in counts.items():
                    per_doc.setdefault(term, [0] * len(fields))[i] = tf
            for term, tfs in per_doc.items():
                raw.setdefault(term, []).append((doc, tfs))
        n = len(entries)
        avg = {f: sum(lengths[f]) / n for f in fields}
        self.lists: dict[str, list[tuple[int, float]]] = {}
        for term, postings in raw.items():
            term_idf = idf(n, len(postings))
            scored = []
            for doc, tfs in postings:
                x = sum(
                    FIELD_WEIGHTS[f] * tf / length_norm(lengths[f][doc], avg[f])
                    for f, tf in zip(fields, tfs, strict=True)
                    if tf
                )
                scored.append((doc, term_idf * saturate(x)))
            self.lists[term] = scored
        self.multipliers = [STATUS_MULTIPLIERS.get(c.status, 1.0) for _, c in entries]

    def search(self, query: str, limit: int = 10) -> list[tuple[float, int]]:
        scores: dict[int, float] = {}
        for term in analyze_query(query):
            best: dict[int, float] = {}
            for form, weight in term.forms:
                for doc, impact in self.lists.get(form, ()):
                    value = weight * impact
                    if value > best.get(doc, 0.0):
                        best[doc] = value
            for doc, value in best.items():
                scores[doc] = scores.get(doc, 0.0) + value
        admitted = (
            (s * self.multipliers[d], -d)
            for d, s in scores.items()
            if self.entries[d][1].status != "deprecated"
        )
        return [(s, -d) for s, d in heapq.nlargest(limit, admitted)]


def time_queries(search: Callable[[str], object], queries: list[str]) -> dict[str, float]:
    """p50/p95 (ms) of one pass, wall and CPU."""
    wall, cpu = [], []
    for query in queries:
        w0, c0 = time.perf_counter(), time.process_time()
        search(query)
        cpu.append((time.process_time() - c0) * 1e3)
        wall.append((time.perf_counter() - w0) * 1e3)
    return _quantiles(wall, cpu)


def measure(search: Callable[[str], object], queries: list[str]) -> dict[str, Any]:
    cold = time_queries(search, queries)
    time_queries(search, queries)  # warm-up
    passes = [time_queries(search, queries) for _ in range(3)]
    warm = {key: statistics.median(p[key] for p in passes) for key in passes[0]}
    return {"cold": cold, "warm": warm}


def bench_okfx(
    entries: list[tuple[str, Any]], queries: list[str], result: dict[str, Any], rss: float
) -> None:
    w0, c0 = time.perf_counter(), time.process_time()
    index = SearchIndex.build(entries)
    index.search(queries[0])
    result["build_s"] = time.perf_counter() - w0
    result["build_cpu_s"] = time.process_time() - c0
    result["index_mb"] = current_rss_mb() - rss
    result["okfx"] = measure(lambda q: index.search(q, limit=10), queries)


def eager_index(entries: list[tuple[str, Any]]) -> SearchIndex:
    """An index over the same concepts with their bodies held in memory."""
    slots = Concept.__slots__
    eager = [(name, Concept(**{f: getattr(c, f) for f in slots})) for name, c in entries]
    return SearchIndex.build(eager)


def measure_eager(entries: list[tuple[str, Any]], queries: list[str]) -> dict[str, Any]:
    """Query passes over the same concepts with their bodies held in memory."""
    index = eager_index(entries)
    return measure(lambda q: index.search(q, limit=10), queries)


def time_pair(
    searches: tuple[Callable[[str], object], Callable[[str], object]],
    queries: list[str],
    flip: int,
) -> tuple[dict[str, float], dict[str, float]]:
    """:func:`time_queries` of two searches in one pass, query by query: each query is
    asked of both, one right after the other, which goes first alternating."""
    times: tuple[list[list[float]], list[list[float]]] = ([[], []], [[], []])
    for k, query in enumerate(queries):
        for i in (0, 1) if (k + flip) % 2 == 0 else (1, 0):
            w0, c0 = time.perf_counter(), time.process_time()
            searches[i](query)
            times[i][1].append((time.process_time() - c0) * 1e3)
            times[i][0].append((time.perf_counter() - w0) * 1e3)
    return _quantiles(*times[0]), _quantiles(*times[1])


def _quantiles(wall: list[float], cpu: list[float]) -> dict[str, float]:
    q = statistics.quantiles
    return {
        "p50": statistics.median(wall),
        "p95": q(wall, n=20)[18],
        "cpu_p50": statistics.median(cpu),
        "cpu_p95": q(cpu, n=20)[18],
    }


def measure_pair(
    first: Callable[[str], object], second: Callable[[str], object], queries: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`measure` of two searches side by side in one process, interleaved query by
    query (:func:`time_pair`), so a drift of the machine's speed, which moves these
    figures by several percent within a minute, falls on both alike."""
    searches = (first, second)
    cold = time_pair(searches, queries, 0)
    time_pair(searches, queries, 1)  # warm-up
    passes: list[list[dict[str, float]]] = [[], []]
    for round_ in range(PAIR_ROUNDS):
        for i, figures in enumerate(time_pair(searches, queries, round_)):
            passes[i].append(figures)
    warm = [{key: statistics.median(p[key] for p in ps) for key in ps[0]} for ps in passes]
    return {"cold": cold[0], "warm": warm[0]}, {"cold": cold[1], "warm": warm[1]}


def bench_semantic(
    entries: list[tuple[str, Any]], queries: list[str], result: dict[str, Any], sample: int
) -> None:
    import numpy as np

    from okfx.search.embedder import default_embedder
    from okfx.search.hybrid import HybridRanker, SemanticState
    from okfx.search.vectors import VectorIndex, concept_texts

    embedder = default_embedder()
    groups = [concept_texts(c) for _, c in entries[:sample]]  # a head and body chunks each
    texts = [text for group in groups for text in group]
    embedder.embed(texts[:8])  # load and warm the model
    w0, c0 = time.perf_counter(), time.process_time()
    embedder.embed(texts)
    result["encode_s_per_1k"] = (time.perf_counter() - w0) * 1000 / len(groups)
    result["encode_cpu_s_per_1k"] = (time.process_time() - c0) * 1000 / len(groups)
    result["texts_per_concept"] = len(texts) / len(groups)
    index = SearchIndex.build(entries)
    # Random unit vectors with as many rows per concept as the sample had texts: the
    # query's cost and the memory do not depend on what the vectors say.
    per = max(1, round(len(texts) / len(groups)))
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((len(entries) * per, embedder.dimension), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    starts = np.arange(0, len(entries) * per, per, dtype=np.int64)
    state = SemanticState(index, embedder, None)
    state.vectors = VectorIndex("random", matrix, starts, 0)
    ranker = HybridRanker(state)
    result["vector_mb"] = (matrix.nbytes + starts.nbytes) / 2**20
    kept = ranker.query_vectors

    def fresh(query: str) -> object:  # the query encoded, as a query asked first is
        kept.clear()
        return ranker.search(query, limit=10)

    result["hybrid"] = measure(fresh, queries)
    result["hybrid_kept"] = measure(lambda q: ranker.search(q, limit=10), queries)


def run_one(size: int, n_queries: int, naive: bool, semantic: int = 0) -> dict[str, Any]:
    path = bundle_dir(size)
    queries = generator().sample_queries(n_queries)
    result: dict[str, Any] = {"size": size, "queries": n_queries}
    rss0 = current_rss_mb()
    w0, c0 = time.perf_counter(), time.process_time()
    bundle = Bundle.load(path, state_cache=False)
    result["load_s"] = time.perf_counter() - w0
    result["load_cpu_s"] = time.process_time() - c0
    rss_loaded = current_rss_mb()
    entries = [(bundle.name, c) for c in bundle]

    bench_okfx(entries, queries, result, rss_loaded)
    if semantic:
        bench_semantic(entries, queries, result, semantic)
    result["peak_rss_mb"] = peak_rss_mb()
    result["loaded_rss_mb"] = rss_loaded - rss0
    gc.collect()
    # The same index over concepts holding their bodies in memory (as before the state
    # cache), for the latency comparison.
    result["eager"] = measure_eager(entries, queries)
    gc.collect()

    if naive:
        before = current_rss_mb()
        w0, c0 = time.perf_counter(), time.process_time()
        base = NaiveIndex(entries)
        base.search(queries[0])
        result["naive_build_s"] = time.perf_counter() - w0
        result["naive_build_cpu_s"] = time.process_time() - c0
        result["naive_index_mb"] = current_rss_mb() - before
        result["naive"] = measure(lambda q: base.search(q, limit=10), queries)
    return result


RESTART = r"""
import gc, json, os, resource, sys, time
sys.path.insert(0, sys.argv[5])
from okfx import Bundle
from okfx.bundle.state import scan
from okfx.bundle.walk import walk
from okfx.gcpause import freeze_after_loads
from okfx.statecache import wait_for_stores
from search import eager_index, generator, measure_pair

root, cache, phase, n_queries = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
freeze_after_loads()  # as okfx serve runs
queries = generator().sample_queries(n_queries)
t = time.perf_counter()
bundle = Bundle.load(root, state_cache=cache)
load_s = time.perf_counter() - t
bundle.search(queries[0])
result = {"load_s": load_s, "ready_s": time.perf_counter() - t}
result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
if phase == "restart":
    # The restored index against one over the same concepts with their bodies in memory,
    # side by side in this process; then the eager one goes before the reload.
    index = bundle.search_index()
    eager = eager_index([(bundle.name, c) for c in bundle])
    result["okfx"], result["eager"] = measure_pair(
        lambda q: index.search(q, limit=10), lambda q: eager.search(q, limit=10), queries
    )
    # The same comparison of two equal eager indexes (A/A): how far apart two equal
    # searches read in this run, the noise the ratio above is judged against.
    again = eager_index([(bundle.name, c) for c in bundle])
    result["aa"] = measure_pair(
        lambda q: again.search(q, limit=10), lambda q: eager.search(q, limit=10), queries
    )
    del eager, again  # the restored index stays: the reloaded one is timed against it
    gc.collect()
    concepts = bundle.concepts
    changed = concepts[:: 100]
    for concept in changed:  # a new file renamed over the old: the original is untouched
        path = root + concept.path
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text + "\nEdited: a new closing line about reconciliation.\n")
        os.replace(path + ".tmp", path)
    time.sleep(2.1)  # past the racy window: the edits are plain changes
    t = time.perf_counter()
    scan(walk(root, bundle.limits, lambda *a: None), [], real_root=root)
    result["scan_s"] = time.perf_counter() - t
    t = time.perf_counter()
    reloaded = bundle.reload()
    reloaded.search(queries[0])
    result["reload_s"] = time.perf_counter() - t
    result["reloaded"] = len(changed)
    result["reload_index"] = type(reloaded.search_index()).__name__
    # The reload stores the new state in the background: time the queries once it is
    # done, as a server's are between edits, not while it takes a core.
    t = time.perf_counter()
    wait_for_stores()
    result["store_after_reload_s"] = time.perf_counter() - t
    live = reloaded.search_index()
    result["after_reload"], result["restart_again"] = measure_pair(
        lambda q: live.search(q, limit=10), lambda q: index.search(q, limit=10), queries
    )
    result["rss_after_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(result))
"""


def linked_copy(source: Path, dest: Path) -> None:
    """``dest`` as a tree of hard links to ``source``'s files (fast, no extra space)."""
    for folder, _, files in os.walk(source):
        target = dest / os.path.relpath(folder, source)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            os.link(os.path.join(folder, name), target / name)


def run_restarts(size: int, n_queries: int) -> dict[str, Any]:
    """The cold and restart (+ reload) processes on a linked copy of the bundle."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="okfx-warm-", dir=OUT) as work:
        root = Path(work) / "bundle"
        linked_copy(bundle_dir(size), root)
        # A new link changes each file's ctime: wait until no file is "just modified"
        # (okfx.bundle.state.RACY_SECONDS), or the cold run would store nothing.
        time.sleep(2.5)
        cache = str(Path(work) / "state")
        for phase in ("cold", "restart"):
            cmd = [
                sys.executable,
                "-c",
                RESTART,
                str(root),
                cache,
                phase,
                str(n_queries),
                str(Path(__file__).resolve().parent),
            ]
            done = subprocess.run(cmd, check=True, capture_output=True, text=True)
            out[phase] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def report_restarts(r: dict[str, Any], eager: dict[str, Any] | None) -> None:
    cold, warm = r["cold"], r["restart"]
    base = cold["ready_s"]
    print("warm restarts (state cache, GC frozen after loads as okfx serve runs)")
    print(f"  cold: load + build + store, first search ready {base:8.2f} s")
    print(f"        peak RSS {cold['rss_mb']:7.0f} MB (target at 100k: <= 1000 MB)")
    ratio = warm["ready_s"] / base
    print(
        f"  restart, unchanged bundle, first search ready {warm['ready_s']:8.3f} s "
        f"= {ratio:.3f} x cold (target <= 0.05); load {warm['load_s']:.3f} s, "
        f"peak RSS {warm['rss_mb']:.0f} MB"
    )
    reload_ratio = warm["reload_s"] / base
    net = max(warm["reload_s"] - warm["scan_s"], 0.0) / base
    print(
        f"  reload after {warm['reloaded']} files (1%) changed {warm['reload_s']:8.3f} s "
        f"= {reload_ratio:.3f} x cold; stat scan alone {warm['scan_s']:.3f} s, so "
        f"{net:.3f} x cold plus the scan (target <= 0.05); index now {warm['reload_index']}"
    )
    if "store_after_reload_s" in warm:
        print(
            f"  its state stored in the background, done {warm['store_after_reload_s']:.3f} s "
            f"after the reload's first search"
        )
    print("  query latency ms                 p50 wall  p95 wall   p50 CPU   p95 CPU")
    side = warm["eager"]["warm"]
    rows = [
        ("restart", warm["okfx"]["warm"]),
        ("eager bodies, same process", side),
        ("after reload, stored", warm["after_reload"]["warm"]),
    ]
    if eager is not None:
        rows.append(("eager bodies, own process", eager))
    for name, m in rows:
        print(
            f"    {name:28s} {m['p50']:8.3f}  {m['p95']:8.3f}  {m['cpu_p50']:8.3f}  "
            f"{m['cpu_p95']:8.3f}"
        )
    m = warm["okfx"]["warm"]
    print(
        f"    restart / eager bodies (interleaved query by query in one process): "
        f"p50 {m['p50'] / side['p50']:.2f} x, p95 {m['p95'] / side['p95']:.2f} x "
        f"(target: no worse, within noise)"
    )
    first, first_eager = warm["okfx"]["cold"], warm["eager"]["cold"]
    print(
        f"    the same, first pass (every hit's body read for the first time since the "
        f"restart): p50 {first['p50'] / first_eager['p50']:.2f} x, "
        f"p95 {first['p95'] / first_eager['p95']:.2f} x"
    )
    if "restart_again" in warm:  # the reloaded index (base + delta) against the restored
        a, b = warm["after_reload"]["warm"], warm["restart_again"]["warm"]
        print(
            f"    after reload / restart (interleaved the same way, until the delta is "
            f"merged): p50 {a['p50'] / b['p50']:.2f} x, p95 {a['p95'] / b['p95']:.2f} x"
        )
    if "aa" in warm:  # two equal eager indexes, the same way: the noise of that ratio
        a, b = (side_["warm"] for side_ in warm["aa"])
        print(
            f"    eager / eager again (A/A, two equal indexes the same way): "
            f"p50 {a['p50'] / b['p50']:.2f} x, p95 {a['p95'] / b['p95']:.2f} x"
        )


def report(r: dict[str, Any]) -> None:
    size = r["size"]
    print(f"\n== {size:,} concepts, {r['queries']} sample_queries, limit 10, k1 {K1} ==")
    print(f"load (core Bundle.load)    {r['load_s']:7.2f} s wall  {r['load_cpu_s']:7.2f} s CPU")
    print(
        f"okfx build + first search  {r['build_s']:7.2f} s wall  {r['build_cpu_s']:7.2f} s CPU"
        f"   index ~{r['index_mb']:.0f} MB"
    )
    print(f"load + build               {r['load_s'] + r['build_s']:7.2f} s wall")
    if "naive_build_s" in r:
        print(
            f"naive build + first search {r['naive_build_s']:7.2f} s wall  "
            f"{r['naive_build_cpu_s']:7.2f} s CPU   index ~{r['naive_index_mb']:.0f} MB"
        )
    print(
        f"peak RSS (load + okfx)     {r['peak_rss_mb']:7.0f} MB (loaded bundle "
        f"{r['loaded_rss_mb']:.0f} MB)"
    )
    if "encode_s_per_1k" in r:
        print(
            f"semantic: encode {r['encode_s_per_1k']:.1f} s wall / "
            f"{r['encode_cpu_s_per_1k']:.1f} s CPU per 1k concepts; vectors "
            f"{r['vector_mb']:.1f} MB (float32 x 384)"
        )
    print("query latency ms            p50 wall  p95 wall   p50 CPU   p95 CPU")
    for engine in ("okfx", "eager", "naive", "hybrid", "hybrid_kept"):
        if engine not in r:
            continue
        for phase in ("cold", "warm"):
            m = r[engine][phase]
            print(
                f"  {engine:11s} {phase:4s}         {m['p50']:8.3f}  {m['p95']:8.3f}  "
                f"{m['cpu_p50']:8.3f}  {m['cpu_p95']:8.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-naive", action="store_true", help="skip the naive baseline")
    parser.add_argument(
        "--semantic", action="store_true", help="also time hybrid search (okfx[semantic])"
    )
    parser.add_argument(
        "--encode-sample", type=int, default=1000, help="concepts encoded to time the model"
    )
    parser.add_argument(
        "--no-restart", action="store_true", help="skip the state-cache restart runs"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process mode
    args = parser.parse_args()
    if args.one:
        semantic = args.encode_sample if args.semantic else 0
        print(json.dumps(run_one(args.one, args.queries, not args.no_naive, semantic)))
        return

    def child(*extra: str) -> dict[str, Any]:
        cmd = [sys.executable, __file__, "--queries", str(args.queries), *extra]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    for size in args.sizes:
        bundle_dir(size)
        flags = [*(["--no-naive"] if args.no_naive else [])]
        if args.semantic:
            flags += ["--semantic", "--encode-sample", str(args.encode_sample)]
        one = child("--one", str(size), *flags)
        report(one)
        if not args.no_restart:
            report_restarts(run_restarts(size, args.queries), one["eager"]["warm"])


if __name__ == "__main__":
    main()
