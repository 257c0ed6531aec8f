"""grep speed and memory: the texts each load keeps (okfx.search.corpus) against bodies in
memory (how okfx kept them before the state cache read bodies from their files) and
against reading every file (grep before the texts were kept), at 10k and 100k concepts.

Bundles come from ``/work/shared/bench/gen_bundle.py`` (cached under ``bench/out/`` by
``bench/search.py``). Each size runs in a process of its own, on a hard-linked copy of
the bundle and a fresh state cache: a cold load (parse, store the state and the texts),
then, in a second process, a restart (the state and the texts file read back), where

1. RSS (anonymous, i.e. private, and file-backed) is read after the load, after the
   first grep (which checks the texts' checksum and maps their pages) and after the
   timed greps;
2. each pattern runs ``--repeats`` times over the kept texts and over the same concepts
   with their bodies in memory, interleaved (median of each, wall time), and once with
   the texts set aside, so grep reads every file as it did before.

Patterns, one per kind: substrings that match nowhere, in ~1% of the concepts and in
nearly all; the same case-insensitive; RE2 regular expressions that cannot span a line
(one search of the whole buffer), that can (one search per concept) and one anchored at
a text's start (each field on its own). The ratio column is kept / in memory: the
target is <= 1.5. The machine is shared: re-run before trusting a difference under ~20%.

Usage::

    .venv/bin/python bench/grep.py                  # 10k and 100k
    .venv/bin/python bench/grep.py --sizes 10000 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from search import OUT, bundle_dir, generator, linked_copy  # noqa: E402


def patterns() -> list[tuple[str, str, dict[str, Any]]]:
    """(kind, pattern, options): words of the generator's vocabulary by rank."""
    words = generator().vocabulary()
    mid, common = words[3000], words[0]  # in ~1.5% of the concepts, in all
    return [
        ("substring, no match", "zqxjnotfound", {}),
        ("substring, ~1% of concepts", mid, {}),
        ("substring, most concepts", common, {}),
        ("ignore case, no match", "ZQXJNOTFOUND", {"ignore_case": True}),
        ("ignore case, ~1%", mid.upper(), {"ignore_case": True}),
        ("ignore case, most", common.title(), {"ignore_case": True}),
        ("regex one line", rf"\b{mid[:4]}\w+ \w+\b", {"regex": True}),
        ("regex one line, no match", r"\bzqx\w+ users\b", {"regex": True}),
        ("regex may span lines", rf"{common}\s+{words[1]}\b", {"regex": True}),
        (r"regex \A (fields alone)", r"\A# \w+", {"regex": True}),
    ]


def memory() -> dict[str, float]:
    """RSS in MB: private (anonymous), file-backed (page cache mapped), and the peak."""
    fields: dict[str, float] = {}
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
    return fields


def timed(run: Any) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[4]); sys.path.insert(0, sys.argv[5])
from okfx import Bundle, Concept
from okfx.search.grep import grep
from grep import memory, patterns, timed
from okfx.statecache import wait_for_stores

root, cache, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = {}
out["load_s"] = timed(lambda: Bundle.load(root, state_cache=cache))
wait_for_stores()
if len(sys.argv) > 6:  # the cold process: load and store only
    print(json.dumps(out)); sys.exit()
start = time.perf_counter()
bundle = Bundle.load(root, state_cache=cache)
out["restart_s"] = time.perf_counter() - start
out["after_load"] = memory()
kinds = patterns()
out["first_grep_s"] = timed(lambda: bundle.grep(kinds[0][1], **kinds[0][2]))
out["after_first_grep"] = memory()
eager = [(bundle.name, Concept(**{f: getattr(c, f) for f in Concept.__slots__})) for c in bundle]
rows = []
for kind, pattern, options in kinds:
    kept, held = [], []
    for _ in range(repeats):  # interleaved, so both see the same machine
        kept.append(timed(lambda: bundle.grep(pattern, **options)))
        held.append(timed(lambda: grep(eager, pattern, **options)))
    same = bundle.grep(pattern, **options).to_dict() == grep(eager, pattern, **options).to_dict()
    corpus, bundle._store.corpus = bundle._store.corpus, None
    files = timed(lambda: bundle.grep(pattern, **options))
    bundle._store.corpus = corpus
    matching = bundle.grep(pattern, **options).concepts
    rows.append([kind, pattern, statistics.median(kept), statistics.median(held), files,
                 matching, same])
out["rows"] = rows
out["after_greps"] = memory()
print(json.dumps(out))
"""


def run_size(size: int, repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="okfx-grep-", dir=OUT) as work:
        root = Path(work) / "bundle"
        linked_copy(bundle_dir(size), root)
        time.sleep(2.5)  # past okfx.bundle.state.RACY_SECONDS: the cold run stores it all
        cache = str(Path(work) / "state")
        base = [sys.executable, "-c", CHILD, str(root), cache, str(repeats)]
        paths = [str(ROOT / "src"), str(ROOT / "bench")]
        cold = subprocess.run([*base, *paths, "cold"], check=True, capture_output=True)
        warm = subprocess.run([*base, *paths], check=True, capture_output=True, text=True)
        result: dict[str, Any] = json.loads(warm.stdout.strip().splitlines()[-1])
        result["cold_load_s"] = json.loads(cold.stdout.strip().splitlines()[-1])["load_s"]
        result["texts_mb"] = sum(p.stat().st_size for p in Path(cache).glob("*.texts.okfs")) / 2**20
    return result


def report(size: int, r: dict[str, Any]) -> None:
    print(f"\n== grep over {size:,} concepts (state cache restart) ==")
    print(
        f"cold load {r['cold_load_s']:.2f} s, restart {r['restart_s']:.3f} s, texts file "
        f"{r['texts_mb']:.0f} MB, first grep {r['first_grep_s']:.3f} s (checksum, mapping)"
    )
    labels = {
        "after_load": "after the load",
        "after_first_grep": "after a grep",
        "after_greps": "+ bodies in memory",  # the comparison's copies of every body
    }
    for label, text in labels.items():
        m = r[label]
        print(
            f"  RSS {text:19s} private {m['RssAnon']:7.0f} MB, "
            f"file-backed {m['RssFile']:6.0f} MB, peak {m['VmHWM']:7.0f} MB"
        )
    print(f"  {'pattern kind':28s} {'kept':>8s} {'memory':>8s} {'ratio':>6s} {'files':>8s}  match")
    for kind, _, kept, held, files, matching, same in r["rows"]:
        flag = "" if same else "  RESULTS DIFFER"
        print(
            f"  {kind:28s} {kept * 1e3:6.1f}ms {held * 1e3:6.1f}ms {kept / held:6.2f} "
            f"{files * 1e3:6.0f}ms  {matching}{flag}"
        )
    ratios = [row[2] / row[3] for row in r["rows"]]
    print(f"  kept / memory: median {statistics.median(ratios):.2f}, max {max(ratios):.2f} "
          "(target <= 1.5)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    for size in args.sizes:
        report(size, run_size(size, args.repeats))


if __name__ == "__main__":
    main()
