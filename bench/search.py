"""Search speed benchmark: build time, query latency and peak memory at 10k and 100k.

Bundles come from ``/work/shared/bench/gen_bundle.py`` (cached under ``bench/out/``,
git-ignored); queries from its ``sample_queries`` (1-4 content words, Zipf-weighted, so
they lean towards long posting lists). Each size runs in its own process, so peak RSS
(``resource.getrusage``) belongs to that size. In that process:

1. ``Bundle.load`` (the core loader) - reported separately, it is not search code;
2. ``SearchIndex.build`` and the first search ("first search ready");
3. one cold pass over the queries, one warm-up pass, then three timed passes:
   p50/p95 per pass, median of the passes (wall time; CPU time alongside);
4. the same for a naive baseline: dict-of-lists postings of (doc, impact) with the same
   analyzer and BM25F impacts, scored term-at-a-time over every posting, no pruning.

Then, unless ``--no-restart``, three more processes use ``Bundle.load(state_cache=...)``
(okfx.bundle.persist) with a fresh cache folder: the first fills it (cold load, build, store),
the next two are restarts on the unchanged bundle (state read back, no parsing), the
second of them with ``okfx.gcpause.freeze_after_loads()`` as ``okfx serve`` runs.

Usage::

    .venv/bin/python bench/search.py                 # 10k and 100k
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
sys.path.insert(0, str(ROOT / "src"))

from okfx import Bundle  # noqa: E402
from okfx.gcpause import freeze_after_loads  # noqa: E402
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
    q = statistics.quantiles
    return {
        "p50": statistics.median(wall),
        "p95": q(wall, n=20)[18],
        "cpu_p50": statistics.median(cpu),
        "cpu_p95": q(cpu, n=20)[18],
    }


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


def run_one(size: int, n_queries: int, naive: bool) -> dict[str, Any]:
    path = bundle_dir(size)
    queries = generator().sample_queries(n_queries)
    result: dict[str, Any] = {"size": size, "queries": n_queries}
    rss0 = current_rss_mb()
    w0, c0 = time.perf_counter(), time.process_time()
    bundle = Bundle.load(path)
    result["load_s"] = time.perf_counter() - w0
    result["load_cpu_s"] = time.process_time() - c0
    rss_loaded = current_rss_mb()
    entries = [(bundle.name, c) for c in bundle]

    bench_okfx(entries, queries, result, rss_loaded)
    result["peak_rss_mb"] = peak_rss_mb()
    result["loaded_rss_mb"] = rss_loaded - rss0
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


def run_restart(size: int, n_queries: int, cache: str, phase: str) -> dict[str, Any]:
    """A start with ``state_cache``: ``prime`` fills it (a cold load, build and store);
    ``warm`` reads the state back, as when a server restarts on an unchanged bundle;
    ``serve`` does too, with the GC frozen after each load as ``okfx serve`` has it."""
    prime = phase == "prime"
    if phase == "serve":
        freeze_after_loads()
    path = bundle_dir(size)
    queries = generator().sample_queries(n_queries)
    w0 = time.perf_counter()
    bundle = Bundle.load(path, state_cache=cache)
    load_s = time.perf_counter() - w0
    bundle.search(queries[0])
    result: dict[str, Any] = {
        "load_s": load_s,
        "ready_s": time.perf_counter() - w0,
        "peak_rss_mb": peak_rss_mb(),
    }
    if not prime:
        result["okfx"] = measure(lambda q: bundle.search(q, limit=10), queries)
    return result


def report_restart(prime: dict[str, Any], warm: dict[str, Any], serve: dict[str, Any]) -> None:
    print(f"with --state-cache: first start (load, build, store) {prime['ready_s']:7.2f} s")
    for name, run in (("restart", warm), ("restart, GC frozen after loads (serve)", serve)):
        print(
            f"  {name}: load {run['load_s']:.2f} s, first search ready "
            f"{run['ready_s']:.2f} s, peak RSS {run['peak_rss_mb']:.0f} MB"
        )
        m = run["okfx"]["warm"]
        print(f"    then warm p50 / p95               {m['p50']:8.3f}  {m['p95']:8.3f} ms")


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
    print("query latency ms            p50 wall  p95 wall   p50 CPU   p95 CPU")
    for engine in ("okfx", "naive"):
        if engine not in r:
            continue
        for phase in ("cold", "warm"):
            m = r[engine][phase]
            print(
                f"  {engine:5s} {phase:4s}               {m['p50']:8.3f}  {m['p95']:8.3f}  "
                f"{m['cpu_p50']:8.3f}  {m['cpu_p95']:8.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-naive", action="store_true", help="skip the naive baseline")
    parser.add_argument(
        "--no-restart", action="store_true", help="skip the state-cache restart runs"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process mode
    # child: DIR prime|warm|serve
    parser.add_argument("--restart", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one and args.restart:
        cache, phase = args.restart
        print(json.dumps(run_restart(args.one, args.queries, cache, phase)))
        return
    if args.one:
        print(json.dumps(run_one(args.one, args.queries, not args.no_naive)))
        return

    def child(*extra: str) -> dict[str, Any]:
        cmd = [sys.executable, __file__, "--queries", str(args.queries), *extra]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    for size in args.sizes:
        bundle_dir(size)
        report(child("--one", str(size), *(["--no-naive"] if args.no_naive else [])))
        if not args.no_restart:
            with tempfile.TemporaryDirectory(prefix="okfx-state-") as cache:
                prime, warm, serve = (
                    child("--one", str(size), "--restart", cache, phase)
                    for phase in ("prime", "warm", "serve")
                )
                report_restart(prime, warm, serve)


if __name__ == "__main__":
    main()
