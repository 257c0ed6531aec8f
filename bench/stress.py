#!/usr/bin/env python3
"""Stress benchmark: time and peak RSS of Bundle.load on a 100k-concept bundle and on the
largest hostile bundles the adversarial suite builds small.

Usage::

    python bench/stress.py                  # every case
    python bench/stress.py --cases body-50mb links-10k
    python bench/stress.py --skip-100k      # everything but the 100k-concept bundle
    python bench/stress.py --bugs           # also inputs from bugs the adversarial suite found
    python bench/stress.py --timeout 120    # kill a case after 120 s (default 600)

Each case loads in a fresh subprocess, which reports its own wall time and peak RSS
(``ru_maxrss`` of the child), so cases cannot inflate each other. Inputs are generated
once under ``bench/out/stress/`` (the 100k bundle comes from ``bench/load.py``'s
``ensure_bundle``, i.e. ``../shared/bench/gen_bundle.py``) and reused; a hidden
``.complete`` file marks a finished input, and the walk ignores hidden names.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
OUT = HERE / "out" / "stress"
MIB = 1024 * 1024

CONCEPT = "---\ntype: Metric\ntitle: {title}\n---\n"
PROSE = "Orders per day, see [orders](/tables/orders.md) and `code` spans here.\n"

RUNNER = """
import collections, json, resource, sys, time
from okfx import Bundle
from okfx.limits import Limits
root, limits = sys.argv[1], json.loads(sys.argv[2])
start = time.perf_counter()
bundle = Bundle.load(root, limits=Limits(**limits), state_cache=False)  # a cold load
seconds = time.perf_counter() - start
codes = collections.Counter(w.code for w in bundle.warnings)
print(json.dumps({
    "seconds": seconds,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "concepts": len(bundle),
    "warnings": dict(codes.most_common(3)),
}))
"""


@dataclass
class Case:
    name: str
    what: str
    build: Callable[[Path], None]
    limits: dict[str, Any] = field(default_factory=dict)
    bug: bool = False
    root: Callable[[], Path] | None = None  # for inputs made elsewhere


def concept(title: str = "c", body: str = "") -> str:
    return CONCEPT.format(title=title) + body


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def build_big_body(root: Path) -> None:
    write_files(root, {"ok.md": concept(), "tables/orders.md": concept("orders")})
    line = PROSE.encode()
    with open(root / "huge.md", "wb") as handle:
        handle.write(concept("huge").encode())
        handle.write(line * (50 * MIB // len(line) + 1))


def build_links(root: Path) -> None:
    files = {f"t/{i}.md": concept(str(i)) for i in range(100)}
    files["a.md"] = concept(body="".join(f"[l{i}](/t/{i % 100}.md) " for i in range(10_000)))
    write_files(root, files)


def build_deep(root: Path, depth: int = 1000) -> None:
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        out = os.open("x.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, concept("deep").encode())
        os.close(out)
    finally:
        os.close(fd)


def build_flat(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(100_000):
        (root / f"c{i:06}.md").write_text(concept(str(i)), encoding="utf-8")


def build_dirs(root: Path, count: int = 300_000) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        os.mkdir(root / f"d{i:06}")


def zipped_links() -> Path:
    """An 8.8 MiB zip of 780 concepts x 5,000 links (made once, beside the folders)."""
    import zipfile

    path = OUT / "links-zip-9mb.zip"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            for i in range(780):
                body = "".join(f"[a](/t{j}.md) " for j in range(5000))
                zf.writestr(f"kb/c{i:04}.md", concept(str(i), body))
    return path


def many(text: str, count: int) -> Callable[[Path], None]:
    def build(root: Path) -> None:
        write_files(root, {f"c{i:03}.md": text for i in range(count)})

    return build


def alias_bomb() -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "---\ntype: A\n" + "\n".join(lines) + "\n---\n"


def generated(concepts: int) -> Callable[[], Path]:
    def root() -> Path:
        sys.path.insert(0, str(HERE))
        from load import ensure_bundle  # bench/ is not a package

        return ensure_bundle(concepts)

    return root


CASES = [
    Case("baseline", "an empty bundle: interpreter + okfx import", lambda root: root.mkdir()),
    Case("okf-10k", "10,000 generated concepts, for scale", lambda r: None, root=generated(10_000)),
    Case(
        "okf-100k",
        "100,000 generated concepts (gen_bundle.py)",
        lambda r: None,
        root=generated(100_000),
    ),
    Case("body-50mb", "a 50 MB concept: skipped by max_file_bytes", build_big_body),
    Case(
        "body-50mb-read",
        "the same 50 MB concept read (max_file_bytes=64 MiB)",
        build_big_body,
        {"max_file_bytes": 64 * MIB},
    ),
    Case("links-10k", "one concept with 10,000 links (cap 5,000)", build_links),
    Case("deep-1000", "a 1,000-level folder chain (stops at 256)", build_deep),
    Case(
        "deep-1000-walked",
        "the same chain walked to the end (max_dir_depth=2000)",
        build_deep,
        {"max_dir_depth": 2000},
    ),
    Case("flat-100k", "100,000 tiny files in one folder", build_flat),
    Case("alias-bomb-x100", "100 files, each a 9^9 billion-laughs bomb", many(alias_bomb(), 100)),
    Case(
        "deep-nesting-x100",
        "100 files, each '{a: ' x 25,000 (100 KB of flow nesting)",
        many("---\ntype: A\nx: " + "{a: " * 25_000 + "\n---\n", 100),
    ),
    Case(
        "links-10m",
        "2,000 concepts x 5,000 distinct broken links (10M; max_links keeps 2M)",
        lambda root: write_files(
            root,
            {
                f"c{i:04}.md": concept(body="".join(f"[a](/t{i}-{j}.md) " for j in range(5000)))
                for i in range(2000)
            },
        ),
    ),
    Case(
        "bodies-505mib",
        "505 concepts of 1 MiB of prose (under max_body_chars, 512 Mi characters: all kept)",
        lambda root: write_files(
            root, {f"c{i:03}.md": concept(body=PROSE * (MIB // len(PROSE))) for i in range(505)}
        ),
    ),
    Case("dirs-300k", "300,000 empty folders (max_dirs walks 100,000)", build_dirs),
    Case(
        "computation-tildes-4k",
        "an Attested Computation whose fence line is 4,000 '~' and a backtick (104 s before)",
        lambda root: write_files(
            root,
            {"c.md": "---\ntype: A\nruntime: x\n---\n# Computation\n\n" + "~" * 4000 + "`\n"},
        ),
    ),
    # Hostile shapes of under 10 MB (issue 16: the worst load time and memory they reach).
    Case(
        "links-under-10mb",
        "110 concepts x 5,000 distinct broken links (9.6 MB)",
        lambda root: write_files(
            root,
            {
                f"c{i:03}.md": concept(body="".join(f"[a](/t{i}-{j}.md) " for j in range(5000)))
                for i in range(110)
            },
        ),
    ),
    Case(
        "yaml-objects-under-10mb",
        "40 concepts, each a 250 KB frontmatter list of one-key mappings (10 MB)",
        many(
            "---\ntype: A\nx:\n" + "  - {k: v}\n" * (250_000 // 12) + "---\n",
            40,
        ),
    ),
    Case(
        "tiny-concepts-under-10mb",
        "400,000 concepts of 16 bytes each in 400 folders (6.4 MB)",
        lambda root: write_files(
            root, {f"d{i % 400:03}/c{i:06}.md": "---\ntype: A\n---\n" for i in range(400_000)}
        ),
    ),
    Case(
        "links-zip-9mb",
        "an 8.8 MiB zip of 780 concepts x 5,000 links (3.9M; max_links keeps 2M)",
        lambda r: None,
        root=zipped_links,
    ),
    Case(
        "footnotes-under-10mb",
        "150 concepts x 5,000 distinct unknown footnotes (8 MB)",
        lambda root: write_files(
            root,
            {
                f"c{i:03}.md": concept(body="".join(f"[^n{i}x{j}] " for j in range(5000)))
                for i in range(150)
            },
        ),
    ),
    Case(
        "deep-brackets-x20",
        "20 files, each '[' x 100,000 (open bug: slow pure-Python fallback)",
        many("---\ntype: A\nx: " + "[" * 100_000 + "\n---\n", 20),
        bug=True,
    ),
    Case(
        "index-heading-32k",
        "index.md heading with 32k inner blanks (was quadratic before 74c894f)",
        lambda r: write_files(r, {"index.md": "# a" + " " * 32_000 + "x\n", "a.md": concept()}),
        bug=True,
    ),
    Case(
        "link-blanks-32k",
        "a body '[a](' + 32k blanks (was quadratic before 74c894f)",
        lambda r: write_files(r, {"a.md": concept(body="[a](" + " " * 32_000 + "x")}),
        bug=True,
    ),
    Case(
        "escaped-brackets-1mb",
        "a 1 MB body of '\\[' (~300x ordinary cost per byte before eab7135)",
        lambda r: write_files(r, {"a.md": concept(body="\\[" * 500_000)}),
        bug=True,
    ),
]


def prepare(case: Case) -> Path:
    if case.root is not None:
        return case.root()
    root = OUT / case.name
    if (root / ".complete").exists():
        return root
    if root.exists():
        subprocess.run(["rm", "-rf", str(root)], check=True)  # deep trees defeat rmtree
    OUT.mkdir(parents=True, exist_ok=True)
    case.build(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".complete").write_text("", encoding="utf-8")
    return root


def run(case: Case, root: Path, timeout: float) -> dict[str, Any]:
    # Archives are extracted into a cache beside the inputs, not the user's own.
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT / "src"),
        "OKFX_CACHE_DIR": str(OUT / "sources-cache"),
    }
    try:
        proc = subprocess.run(
            [sys.executable, "-c", RUNNER, str(root), json.dumps(case.limits)],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"killed after {timeout:.0f} s"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": f"exit {proc.returncode}: {last[:120]}"}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", choices=[c.name for c in CASES])
    parser.add_argument("--skip-100k", action="store_true")
    parser.add_argument("--bugs", action="store_true", help="include inputs from found bugs")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    chosen = [
        c
        for c in CASES
        if (args.cases is None or c.name in args.cases)
        and (args.cases is not None or args.bugs or not c.bug)
        and not (args.skip_100k and c.name == "okf-100k")
    ]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, timeout {args.timeout:.0f} s")
    print(f"{'case':<22} {'load':>9} {'peak RSS':>9} {'concepts':>9}  warnings / what")
    for case in chosen:
        root = prepare(case)
        result = run(case, root, args.timeout)
        if "error" in result:
            print(f"{case.name:<22} {result['error']:>29}  {case.what}")
        else:
            warnings = ", ".join(f"{k} {v}" for k, v in result["warnings"].items()) or "-"
            print(
                f"{case.name:<22} {result['seconds']:>8.2f}s {result['peak_rss_mb']:>7.0f}MB "
                f"{result['concepts']:>9}  {warnings}; {case.what}"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
