#!/usr/bin/env python3
"""Re-create a bundle written by another producer's generator, and report how okfx reads it.

okf-generator (``woss/fork-okf-generator`` at a pinned commit; on PyPI as okf-generator)
writes an OKF bundle from a codebase. It ships no bundle, so one is made: the generator
is installed into its own virtual environment (``DEST/.okfgen-venv``; its tree-sitter
parsers come from the package index) and run over the Python and Rust sources of another
OKF project (``franklinbaldo/okf-parser`` at a pinned commit). Both repositories are read
from ``--mirrors`` when fetched there, else cloned, as ``scripts/real_corpus.py`` does.
Everything is written outside git (``DEST/generated/okf-generator+okf-parser``).

    python scripts/generated_corpus.py            # make it (once), then report
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import venv
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_corpus import Pinned, extract  # noqa: E402  (a sibling script, not a package)

from okfx import Bundle, Toolbox, validate  # noqa: E402

GENERATOR = Pinned(
    "woss/fork-okf-generator", "5fb73be73814ec75b5c5f48ccbbecf348ff277d3", "", "", "en"
)
SOURCE = Pinned(
    "franklinbaldo/okf-parser", "4f88c8b337daf5d5390a49b3ef448daefcdc70fb", "", "", "en"
)
#: Questions asked in other words than the generated pages', each with the function meant.
QUESTIONS = {
    "split the frontmatter from the body": "split_frontmatter_source",
    "which function detects reserved documents like index.md": "is_reserved_document",
    "load frontmatter yaml": "load_frontmatter",
    "where are markdown links extracted": "iter_markdown_links",
    "error raised when a document cannot be parsed": "DocumentParseError",
}


def make(mirrors: Path, dest: Path) -> Path:
    """The generated bundle's folder, made when missing."""
    out = dest / "generated" / "okf-generator+okf-parser"
    if (out / "index.md").is_file():
        return out
    for item in (GENERATOR, SOURCE):
        if not (dest / item.slug).is_dir():
            extract(item, mirrors, dest)
    env = dest / ".okfgen-venv"
    python = env / "bin" / "python"
    if not python.exists():
        venv.create(env, with_pip=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", str(dest / GENERATOR.slug)], check=True
        )
    # Only the sources: the generator scans every file it knows a parser for.
    src = dest / "generated" / ".okf-parser-src"
    if not src.is_dir():
        for part in ("src", "okf-engine/src", "rust-core/src"):
            shutil.copytree(dest / SOURCE.slug / part, src / part)
    subprocess.run([str(env / "bin" / "okf"), "generate", str(src), str(out)], check=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--dest", type=Path, default=Path("/work/corpus"))
    args = parser.parse_args()
    root = make(args.mirrors, args.dest)
    bundle = Bundle.load(root)
    report = validate(bundle)
    verdict = "conformant" if report.conformant else "NOT conformant"
    print(f"{root}: {len(bundle)} concepts, {verdict}, problems by code {dict(report.by_code)}")
    box = Toolbox(bundle)
    first = 0
    for question, meant in QUESTIONS.items():
        hits = box.search_concepts(question, limit=3)["hits"]
        top = hits[0]["title"].lstrip("_") if hits else None
        first += top == meant
        print(f"  {question!r}: first {top!r} (meant {meant!r})")
    print(f"questions in other words answered first: {first} of {len(QUESTIONS)}")


if __name__ == "__main__":
    main()
