"""The default model's two forms side by side: as shipped (float32 matrix products) and
its int8 form (``okfx.search.quantized``), in one process, their runs taking turns.

Prints, for each form: the query encode p50/p95 (one query at a time, as a search encodes
it, over ``--queries`` queries of ../shared/bench/gen_bundle.py's ``sample_queries``),
the encode time per 1,000 concepts (what ``okfx.search.vectors.concept_texts`` gives the
model for ``--concepts`` concepts of a generated bundle, in batches as
``VectorIndex.build`` sends them), wall and CPU; then how close the two forms' vectors are
(cosine, per text) and the ratios. Needs ``okfx[semantic]``.

Usage::

    python bench/encode.py                       # 10k bundle, 300 queries, 120 concepts
    python bench/encode.py --queries 500 --concepts 200 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search import bundle_dir, generator  # noqa: E402

from okfx import Bundle  # noqa: E402
from okfx.search.embedder import MiniLMEmbedder  # noqa: E402
from okfx.search.vectors import ENCODE_BATCH, concept_texts  # noqa: E402
from okfx.statecache import StateCache  # noqa: E402


def encode_queries(embedder: Any, queries: list[str]) -> list[float]:
    times = []
    for query in queries:
        start = time.perf_counter()
        embedder.embed([query])
        times.append((time.perf_counter() - start) * 1e3)
    return times


def encode_texts(embedder: Any, groups: list[list[str]]) -> tuple[float, float]:
    """(wall, CPU) seconds per 1,000 concepts."""
    texts = [text for group in groups for text in group]
    wall, cpu = time.perf_counter(), time.process_time()
    for at in range(0, len(texts), ENCODE_BATCH):  # as VectorIndex.build encodes
        embedder.embed(texts[at : at + ENCODE_BATCH])
    scale = 1000 / len(groups)
    return (time.perf_counter() - wall) * scale, (time.process_time() - cpu) * scale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="generated bundle size")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--concepts", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="okfx-encode-") as folder:
        cache = StateCache(Path(folder))
        bundle = Bundle.load(bundle_dir(args.size), state_cache=folder)
        groups = [concept_texts(c) for c in list(bundle)[: args.concepts]]
        t = time.perf_counter()
        forms = {"shipped": MiniLMEmbedder(quantized=False), "int8": MiniLMEmbedder(cache=cache)}
        print(f"int8 form ready in {time.perf_counter() - t:.1f} s (built, not yet cached)")
    queries = generator().sample_queries(args.queries)
    for embedder in forms.values():
        embedder.embed(queries[:8])  # warm
    query_times: dict[str, list[float]] = {name: [] for name in forms}
    text_times: dict[str, list[tuple[float, float]]] = {name: [] for name in forms}
    names = list(forms)
    for round_ in range(args.rounds):
        order = names if round_ % 2 == 0 else names[::-1]
        for name in order:
            query_times[name] += encode_queries(forms[name], queries)
        for name in order:
            text_times[name].append(encode_texts(forms[name], groups))

    texts = [text for group in groups for text in group][:200]
    near = (forms["shipped"].embed(texts) * forms["int8"].embed(texts)).sum(axis=1)
    print(
        f"{args.queries} queries x {args.rounds} rounds; {len(groups)} concepts "
        f"({sum(map(len, groups)) / len(groups):.1f} texts each) x {args.rounds} rounds\n"
    )
    print("| form | query p50 ms | query p95 ms | encode s/1k concepts (wall) | (CPU) |")
    print("|---|---|---|---|---|")
    rows = {}
    for name in names:
        qt = query_times[name]
        p50, p95 = statistics.median(qt), statistics.quantiles(qt, n=20)[18]
        wall = statistics.median(w for w, _ in text_times[name])
        cpu = statistics.median(c for _, c in text_times[name])
        rows[name] = (p50, p95, wall, cpu)
        print(f"| {forms[name].model_id} | {p50:.2f} | {p95:.2f} | {wall:.1f} | {cpu:.1f} |")
    ratios = [rows["int8"][i] / rows["shipped"][i] for i in range(4)]
    print(
        "\nint8 / shipped: query p50 {:.2f}x, p95 {:.2f}x, encode wall {:.2f}x, CPU {:.2f}x".format(
            *ratios
        )
    )
    print(f"cosine of the two forms' vectors: mean {near.mean():.4f}, min {near.min():.4f}")


if __name__ == "__main__":
    main()
