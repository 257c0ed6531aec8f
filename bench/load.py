#!/usr/bin/env python3
"""Load benchmark: Bundle.load against the I/O and C-YAML floors, measured in one run.

Usage::

    python bench/load.py                  # 10k and 100k concepts
    python bench/load.py --sizes 10000    # just 10k
    python bench/load.py --repeat 5

Bundles come from ../shared/bench/gen_bundle.py (seeded, byte-identical) and are cached
under bench/out/. Each measurement runs in a fresh subprocess so peak RSS is its own;
wall times are the median of ``--repeat`` runs (warm page cache). Targets (issue 2):
10k concepts in <= 1.5 s and <= 2x (I/O floor + C-YAML floor); 100k without pathological
growth.

Two more figures say how fast this machine is, apart from okfx: "links floor" is the
least an eager-links load does without parsing any YAML (walk, read, one link regex,
join paths; no code-block awareness, no objects), and "yaml us/doc" is the C-YAML
floor per frontmatter, which ../shared/notes/performance.md measured at 72 us (10k)
on the machine the targets were set on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
GEN = PROJECT.parent / "shared" / "bench" / "gen_bundle.py"
OUT = HERE / "out"

# The .md files under ROOT, walked as the floors walk them (a prelude of those stages).
WALK = """
import os
def walk(root):
    stack = [root]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.name.endswith('.md'):
                    yield e.path
"""

# Each stage is a tiny program run in its own process; it prints one JSON line.
STAGES = {
    "io_floor": WALK
    + """
import os, time
t = time.perf_counter()
n = 0
for p in walk(ROOT):
    fd = os.open(p, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        n += len(os.read(fd, size + 1))
    finally:
        os.close(fd)
RESULT = {"seconds": time.perf_counter() - t, "bytes": n}
""",
    "yaml_floor": """
import os, time, yaml
texts = []
stack = [ROOT]
while stack:
    d = stack.pop()
    with os.scandir(d) as it:
        for e in it:
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
            elif e.name.endswith('.md') and e.name not in ('index.md', 'log.md'):
                with open(e.path, 'rb') as f:
                    texts.append(f.read().decode('utf-8'))
t = time.perf_counter()
n = 0
for text in texts:
    if text.startswith('---\\n'):
        end = text.find('\\n---', 4)
        data = yaml.load(text[4:end], Loader=yaml.CSafeLoader)
        n += isinstance(data, dict)
RESULT = {"seconds": time.perf_counter() - t, "docs": n}
""",
    # The least an eager-links load does besides YAML: walk, read, split the frontmatter
    # off, find inline links with one regex (no code-block or code-span awareness, no
    # reference links) and join relative ones to the folder. No YAML, no objects.
    "links_floor": WALK
    + """
import os, posixpath, re, time
LINK = re.compile(r"\\]\\(([^)\\s]+)")
t = time.perf_counter()
n, edges = 0, {}
for p in walk(ROOT):
    fd = os.open(p, os.O_RDONLY)
    try:
        text = os.read(fd, os.fstat(fd).st_size + 1).decode('utf-8')
    finally:
        os.close(fd)
    body = text[text.find('\\n---', 4) + 4:]
    rel = p[len(ROOT):]
    base = posixpath.dirname(rel)
    edges[rel] = [
        posixpath.normpath(h if h[0] == '/' else posixpath.join(base, h))
        for h in LINK.findall(body) if '://' not in h
    ]
    n += 1
RESULT = {"seconds": time.perf_counter() - t, "files": n}
""",
    "bundle_load": """
import time
from okfx import Bundle
t = time.perf_counter()
b = Bundle.load(ROOT, state_cache=False)
RESULT = {"seconds": time.perf_counter() - t, "concepts": len(b), "warnings": len(b.warnings)}
""",
}

RUNNER = """
import json, resource, sys
ROOT = sys.argv[1]
exec(compile(sys.argv[2], "<stage>", "exec"))
RESULT["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(RESULT))
"""


def ensure_bundle(concepts: int) -> Path:
    """Generate (once) a seeded bundle of ``concepts`` concepts under bench/out/."""
    target = OUT / f"okf-{concepts // 1000}k"
    if (target / "index.md").exists():
        return target
    if not GEN.exists():
        sys.exit(f"generator not found at {GEN} (../shared is absent)")
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = OUT / f".tmp-{concepts}-{os.getpid()}"
    subprocess.run(
        [sys.executable, str(GEN), "--concepts", str(concepts), "--out", str(tmp), "--force"],
        check=True,
    )
    try:
        tmp.rename(target)
    except OSError:  # someone else published it first
        pass
    return target


def run_stage(stage: str, root: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(root), STAGES[stage]],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def measure(root: Path, repeat: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for stage in STAGES:
        runs = [run_stage(stage, root) for _ in range(repeat)]
        best = dict(runs[0])
        best["seconds"] = statistics.median(r["seconds"] for r in runs)
        best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
        out[stage] = best
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, repeat={args.repeat}")
    header = f"{'concepts':>9} {'io floor':>9} {'yaml floor':>10} {'floor':>7} {'load':>7} "
    header += f"{'x floor':>7} {'us/concept':>10} {'load RSS':>9} {'links floor':>11} "
    header += f"{'yaml us/doc':>11}"
    print(header)
    for size in args.sizes:
        root = ensure_bundle(size)
        m = measure(root, args.repeat)
        floor = m["io_floor"]["seconds"] + m["yaml_floor"]["seconds"]
        load = m["bundle_load"]["seconds"]
        concepts = int(m["bundle_load"]["concepts"])
        print(
            f"{concepts:>9} {m['io_floor']['seconds']:>8.2f}s {m['yaml_floor']['seconds']:>9.2f}s "
            f"{floor:>6.2f}s {load:>6.2f}s {load / floor:>6.2f}x {load / concepts * 1e6:>10.0f} "
            f"{m['bundle_load']['peak_rss_mb']:>7.0f}MB {m['links_floor']['seconds']:>10.2f}s "
            f"{m['yaml_floor']['seconds'] / m['yaml_floor']['docs'] * 1e6:>11.0f}"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
