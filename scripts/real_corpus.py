#!/usr/bin/env python3
"""Re-create the real-bundle corpus (public OKF bundles by other producers) and report
how okfx loads each one.

The corpus is data from public repositories: it lives outside git (``/work/corpus`` by
default) and is never committed. Each pinned bundle is ``(repository, commit, folder of the
bundle inside the repository)``; its files are written to ``DEST/<owner>+<repo>/<folder>``
(the repository's own layout, so links that leave the bundle stay what they were). A
repository already fetched under ``--mirrors`` (``<owner>+<repo>/repo``, a bare git
directory) is read from there; otherwise it is cloned from GitHub into
``DEST/.clones/<owner>+<repo>.git`` once.

Then, per bundle: concepts loaded, typed files (non-reserved ``.md`` files whose
frontmatter has a ``type:`` line, counted without okfx), files left out on purpose (in a
nested bundle, or excluded), files skipped (the other non-reserved ``.md`` files that did
not become a concept), broken links, load time, §11 errors and the warnings by code
(``okfx validate`` counts, every problem).

    python scripts/real_corpus.py                 # extract (when missing) and report
    python scripts/real_corpus.py --only databricks --only okf-vault
    python scripts/real_corpus.py --report-only --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okfx import Bundle, validate


@dataclass(frozen=True)
class Pinned:
    repo: str  # owner/name on GitHub
    commit: str
    folder: str  # the bundle inside the repository ("" for the repository root)
    producer: str  # how the bundle was made, in a few words
    language: str

    @property
    def slug(self) -> str:
        return self.repo.replace("/", "+")

    @property
    def label(self) -> str:
        return f"{self.repo}:{self.folder}" if self.folder else self.repo


# One bundle per producer. Found by searching public code for okf_version, OKF bundle
# READMEs and typed frontmatter (2026-08); pinned to the commit that was read.
CORPUS: tuple[Pinned, ...] = (
    Pinned(
        "claudiobottari/databricks-okf",
        "9d21aa0cacebe1929e26c0c892923b8a7addbbe4",
        "",
        "generated from Databricks docs, v0.2, flat concepts/ folder",
        "en",
    ),
    Pinned(
        "chris-page-gov/okf-explorer",
        "e7257733d9db8be9034b208870840fd4e75cf773",
        "",
        "hand+script wiki at a repository root, v0.1, frontmatter in index.md",
        "en",
    ),
    Pinned(
        "wfukatsu/OKF-ScalarDB-ScalarDL",
        "7a723b87f9c344c8ce048069cf29659f4670d839",
        "okf",
        "okf-build pipeline over product docs, v0.2",
        "en",
    ),
    Pinned(
        "i-m-arul/cricketstudio-okf",
        "095f21200c3d9282bd06c83454576111b8c7c550",
        "okf",
        "generated cricket statistics dossiers, v0.1 timestamps as dates",
        "en",
    ),
    Pinned(
        "saschb2b/okf-bundles",
        "a5537c17f3d524a830ac0345547e3484490d4aab",
        "bundles/okf",
        "agent-written bundle about OKF itself, v0.2",
        "en",
    ),
    Pinned(
        "jacksonw111/okf-vault",
        "c8b5816972cb6b92c5dca640592d294aec742715",
        "content",
        "Quartz/Obsidian vault synced to OKF, [[wikilinks]]",
        "zh",
    ),
    Pinned(
        "qianhuan-lxs/okf-interview",
        "c161dab6b9504f5a9a6e7e11816c2c10458836d1",
        "",
        "Obsidian interview notes at a repository root, [[wikilinks]], date-only timestamps",
        "zh",
    ),
    Pinned(
        "ScaleLean/ultracart-okf-catalog",
        "d263a91bf1745bf864c39d5fab0543755d67535d",
        "",
        "BigQuery warehouse catalog at a repository root, a second bundle nested in okf/",
        "en",
    ),
    Pinned(
        "CHRISCARLON/street-road-utility-works-okf",
        "7402acf524281ce25970e451ed7d2deb451975d1",
        "src/bundles/muddi",
        "generated from a data standard (MUDDI), v0.2",
        "en",
    ),
    Pinned(
        "pwright/skupper-okf",
        "099d305ddfedf7ec8d53f13898e04506da978fa9",
        "generated",
        "LLM-generated from Skupper docs and code",
        "en",
    ),
    Pinned(
        "kwcantrell/okf-bundles",
        "e120c0f627e13b3a22d7af211e6ded0fd7b27328",
        "oks/git-best-practices",
        "agent-researched best-practice bundle, v0.1",
        "en",
    ),
    Pinned(
        "ensuro/docs-okf",
        "d561c1880c2ae7acbd86eb567c6bc2e493af339f",
        "",
        "company docs converted to OKF at a repository root",
        "en",
    ),
    Pinned(
        "vinodborole/pydantic-ai-book-okf",
        "fd6e1dc772461fd9b9da8f896e07d38e975551b8",
        "pydantic-ai-book",
        "okf-kit book conversion of library docs",
        "en",
    ),
    Pinned(
        "IcantCode1010/AV-OKF",
        "971daaee7df1564162f4d89103dd3e26200c1c88",
        "knowledge",
        "small hand-written aviation maintenance bundle",
        "en",
    ),
    Pinned(
        "Kishore-08/Open-Knowledge-Framework-OKF-Proof-of-Concept",
        "423556ca56fce99c52ddac844954da513bfdf44b",
        "okf-poc/knowledge",
        "proof-of-concept bundle, ops runbooks",
        "en",
    ),
    Pinned(
        "j-legal-okf/J-LEGAL-OKF",
        "66f39688c53baecdb49cb027855436ee36c5437b",
        "okf",
        "project card of a Japanese-law toolkit, date-only dates, sources outside",
        "ja",
    ),
    Pinned(
        "zhanyeye/llm-wiki-okf",
        "1fc1adbcaff01771fa526e24dd199e4f0be3c7ec",
        "wiki",
        "empty wiki skeleton (index and log only, 0 concepts)",
        "zh",
    ),
    # Added 2026-12 from a list of newer OKF repositories: the only one of 14 with both a
    # snapshot to read and a bundle not already here (same author as saschb2b/okf-bundles,
    # but another tool and the one bundle declaring profiles and an Attested Computation).
    Pinned(
        "saschb2b/okf-studio",
        "47deb810baf0f0b456e9b324f44dfb99a795e8b0",
        "docs",
        "desktop app's product docs as its sample bundle, v0.2 profiles, computations",
        "en",
    ),
    # Added 2026-12-04: a Ruby OKF kernel whose five gems each keep a hand-curated bundle
    # beside their code in a hidden `.okf` folder; this one has the most concepts. Its
    # validator's own fixtures are compared in docs/okf.md ("Against another validator").
    Pinned(
        "serradura/okf-gem",
        "5a839fca9e0409ab8e30109f83d423e035774651",
        "gems/okf-pro/.okf",
        "Ruby gem's hand-curated bundle in a hidden .okf folder, date-only generated.at",
        "en",
    ),
    # Added 2026-12-05: an agent-researched catalog of Crossplane v2 whose concepts cite
    # their sources with long slug footnote labels (815 over 94 concepts) and carry about
    # 50 producer keys; the only one of nine new producers with a snapshot to read.
    Pinned(
        "jkroepke/okf-crossplane-v2",
        "d6e8500ed2b480c29c102f0c91e51cb3b258d8d4",
        "catalog",
        "agent-researched catalog, slug footnote labels, many producer keys",
        "en",
    ),
    # Added 2026-12-05 (session 51): three of 28 newer OKF repositories with a snapshot to
    # read and a bundle of a kind not already here.
    Pinned(
        "ayrtonvwf/graphql-okf",
        "a2ad44241474dd8960b3a1bca3251f079591cb47",
        "okf/countries-api",
        "a GraphQL schema compiled to concepts (queries, types, directives), timestamped log",
        "en",
    ),
    Pinned(
        "jackhp95/m3e-okf",
        "cae1fd2aa169f236cb8a3fd0f903508121236c72",
        "knowledge",
        "design-system guidance, sources written {url, retrieved, note}, links out of the root",
        "en",
    ),
    Pinned(
        "DiurnalProductions/flutter-okf",
        "9695ecb1f1cef7de8bccd7e8cf1d76ba09e759a4",
        "",
        "learning pack at a repository root, id-keyed prerequisites/related, okf.json manifest",
        "en",
    ),
    # Found by session 62's new-producers QA (2026-12): one or two bundles per producer.
    Pinned(
        "lloydrichards/edu_effect-okf",
        "805796721e0f310996ed87fc60cde84710267db7",
        "house-plants-okf",
        "curated domain bundle nested in a monorepo, v0.1 timestamps, a type set of its own",
        "en",
    ),
    Pinned(
        "andrewwint/nhis-okf-compiler",
        "65c74fe20d9858ed096487a6adab5cf061ba9fd9",
        ".okf",
        "compiler pipeline's bundle in a hidden .okf folder, frontmatter in its root index.md",
        "en",
    ),
    Pinned(
        "deskulpt/adk-okf-grounded-chat",
        "60d37ad85845030930ce52f9a0da240322d53f86",
        "okf_knowledge",
        "an ADK demo's knowledge, custom resource URI schemes, every value quoted",
        "en",
    ),
    Pinned(
        "weiaodi/google-Open-Knowledge-Format-OKF-",
        "dc525d6c4db780b0d789931badd28706376cb883",
        "okf/bundles/js_syntax",
        "LLM-enriched notes, no root index.md, relative links",
        "zh",
    ),
    Pinned(
        "weiaodi/google-Open-Knowledge-Format-OKF-",
        "dc525d6c4db780b0d789931badd28706376cb883",
        "okf/bundles/stackoverflow",
        "a BigQuery catalog by the same producer, tags written as one string",
        "en",
    ),
    Pinned(
        "josephleee/team-okf-hub",
        "35da8a4443dc4615a4fcc87832127b7805746c06",
        "bundles/example",
        "toy bundle close to the spec's example, frontmatter in its root index.md",
        "en",
    ),
    Pinned(
        "chokukil/boi-wiki",
        "733055a29429a83f1b572800d0f5cc596746533c",
        "data/boi",
        "a review-workflow profile: okf_version per concept, status reviewed, links: lists",
        "ko",
    ),
    Pinned(
        "Royston88/okf-knowledge-catalog-agent-demo",
        "8f4165b133ae3d13f61f7334369665f4d1b4a98d",
        "okf-bundle",
        "native v0.2 catalog by a script and an agent: verified, sources with footnotes",
        "en",
    ),
    # Session 67's new-producers QA (/work/scratch/qa67new): nine more producers.
    Pinned(
        "balrog126-maker/t2d-carepathway-okf",
        "16a5962154dca540538a5e0db3c537fbaed5d8f0",
        "bundle",
        "clinical care pathway from a standards document, v0.1, an index.md per section",
        "en",
    ),
    Pinned(
        "ctcac00/dbt-okf",
        "78c3e6bba41971e9a8aabb0ab7d0c88f07e8d322",
        ".okf",
        "an agent skill documenting a dbt project, in a hidden .okf folder",
        "en",
    ),
    Pinned(
        "Red-Panda-Dev/tokenbel-wiki",
        "b90f1a010c2f67cf3c81d4476288978efff74429",
        "okf",
        "agent-written codebase wiki of a static site, v0.1, folder links",
        "en",
    ),
    Pinned(
        "daniel-ciaglia/slo.okf",
        "3915cdb1605fe4d2e8a1e232c0b11b98fdd68f82",
        "bundle",
        "SRE convention: SLOs, alerts, runbooks, typed relation keys, scp-style resources",
        "en",
    ),
    Pinned(
        "evolv3-ai/okf-cocce",
        "a90a135bcf93589457a3c6c3f3b3ab1fad47c694",
        "okf",
        "a specification repository describing itself, links from the repository root",
        "en",
    ),
    Pinned(
        "AS215932/knowledge",
        "bb2ed6e7385f698849ebede2e29b24b16ac39fc0",
        "okf",
        "generated from an organisation's repositories plus curated pages, a .github.md page",
        "en",
    ),
    Pinned(
        "secondhomelab/secondhome-okf",
        "9e1d5cad98f70cfc81c1e9ef33fe97dcc23099b8",
        "bundle",
        "hand and agent written venue bundle (menu, events), v0.1",
        "en",
    ),
    Pinned(
        "dharma-okf-foundation/dharma-okf",
        "6015e11bdd871cfaeda6f994c9ee0e4dd4de658e",
        "okf/vedanta-epistemology",
        "one of 13 sibling bundles of Sanskrit terms, diacritics, links to siblings",
        "en+sa",
    ),
    Pinned(
        "zezhongwang18/okf-wiki-system",
        "5fcfd4b368add66970d367423fd2965ccdcf4e65",
        "bundle",
        "a wiki-builder skill's company wiki: no root index.md, sources as plain paths",
        "en",
    ),
)

_TYPE_LINE = re.compile(rb"^type:[ \t]*\S", re.M)


def _git(gitdir: Path, *args: str, data: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", "--git-dir", str(gitdir), *args], input=data, capture_output=True, check=True
    )
    return done.stdout


def _gitdir(item: Pinned, mirrors: Path, dest: Path) -> Path:
    """A git directory holding ``item.commit``: the local mirror, else a clone."""
    mirror = mirrors / item.slug / "repo"
    if (mirror / "objects").is_dir():
        return mirror
    clone = dest / ".clones" / f"{item.slug}.git"
    if not clone.is_dir():
        clone.parent.mkdir(parents=True, exist_ok=True)
        url = f"https://github.com/{item.repo}.git"
        subprocess.run(["git", "clone", "--bare", "--quiet", url, str(clone)], check=True)
    return clone


def extract(item: Pinned, mirrors: Path, dest: Path) -> tuple[int, int]:
    """Write the bundle's files at the pinned commit; ``(written, missing)`` (a snapshot
    may lack large blobs: those files are left out and counted)."""
    gitdir = _gitdir(item, mirrors, dest)
    listing = _git(gitdir, "ls-tree", "-r", "-z", item.commit, "--", item.folder or ".")
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, sha = meta.split()
        path = name.decode("utf-8", "surrogateescape")
        if kind != b"blob" or ".." in path.split("/") or path.startswith("/"):
            continue
        entries.append((mode.decode(), sha.decode(), path))
    batch = _git(
        gitdir, "cat-file", "--batch", data="".join(f"{s}\n" for _, s, _ in entries).encode()
    )
    target = dest / item.slug
    written = missing = 0
    at = 0
    for mode, _sha, path in entries:
        header_end = batch.index(b"\n", at)
        header = batch[at:header_end].split()
        at = header_end + 1
        if header[-1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        content = batch[at : at + size]
        at += size + 1
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":  # a symlink, as a clone would make it
            if out.is_symlink() or out.exists():
                out.unlink()
            os.symlink(content.decode("utf-8", "surrogateescape"), out)
        else:
            out.write_bytes(content)
        written += 1
    return written, missing


def typed_files(root: Path, left_out: tuple[str, ...] = ()) -> tuple[int, int, int]:
    """``(non-reserved .md files, those with a type: line in a leading frontmatter, those
    under the bundle paths ``left_out``)``, counted with a plain scan so the figures do not
    depend on okfx."""
    markdown = typed = outside = 0
    prefixes = tuple(p.rstrip("/") + "/" for p in left_out)
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.endswith(".md") or name in ("index.md", "log.md"):
                continue
            markdown += 1
            bundle_path = "/" + Path(folder, name).relative_to(root).as_posix()
            if bundle_path.startswith(prefixes):
                outside += 1
            path = Path(folder, name)
            if path.is_symlink():
                continue
            data = path.read_bytes().lstrip(b"\xef\xbb\xbf")
            if not data.startswith(b"---"):
                continue
            end = data.find(b"\n---", 3)
            if end > 0 and _TYPE_LINE.search(data[:end]):
                typed += 1
    return markdown, typed, outside


def report(item: Pinned, dest: Path) -> dict[str, Any]:
    root = dest / item.slug / item.folder
    started = time.perf_counter()
    bundle = Bundle.load(root)
    seconds = time.perf_counter() - started
    conformance = validate(bundle)
    # Nested bundles and excluded files are left out on purpose (newer okfx only).
    nested: tuple[str, ...] = getattr(bundle, "nested_bundles", ())
    excluded: tuple[str, ...] = getattr(bundle, "excluded", ())
    markdown, typed, in_nested = typed_files(root, nested)
    left_out = in_nested + sum(1 for p in excluded if not p.endswith(("/index.md", "/log.md")))
    return {
        "bundle": item.label,
        "path": str(root),
        "concepts": len(bundle),
        "markdown": markdown,
        "typed": typed,
        "left_out": left_out,
        "skipped": markdown - len(bundle) - left_out,
        "broken_links": len(bundle.unresolved_links()),
        "load_seconds": round(seconds, 2),
        "errors": len(conformance.errors),
        "okf_version": bundle.okf_version,
        "warnings": dict(Counter(conformance.counts()).most_common()),
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    columns = "concepts | typed | left out | skipped | broken links | load s | errors | warnings"
    print(f"| bundle | {columns} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for row in rows:
        codes = ", ".join(f"{code} {n}" for code, n in row["warnings"].items()) or "-"
        print(
            f"| {row['bundle']} | {row['concepts']} | {row['typed']} | {row['left_out']} "
            f"| {row['skipped']} | {row['broken_links']} | {row['load_seconds']} "
            f"| {row['errors']} | {codes} |"
        )


def write_readme(dest: Path, rows: list[dict[str, Any]]) -> None:
    by_label = {row["bundle"]: row for row in rows}
    lines = [
        "Real OKF bundles by other producers, re-created by scripts/real_corpus.py (okfx).",
        "Public data: read it, never commit it. One line per bundle:",
        "path | producer | concepts | language",
        "",
    ]
    for item in CORPUS:
        row = by_label.get(item.label)
        if row is None:
            continue
        lines.append(f"{row['path']} | {item.producer} | {row['concepts']} | {item.language}")
    (dest / "README.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=Path("/work/corpus"))
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--only", action="append", default=[], help="substring of a repo")
    parser.add_argument("--report-only", action="store_true", help="do not extract")
    parser.add_argument("--fresh", action="store_true", help="extract again over old files")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    dest: Path = args.dest
    chosen = [i for i in CORPUS if not args.only or any(o in i.label for o in args.only)]
    rows = []
    for item in chosen:
        target = dest / item.slug / item.folder
        if args.fresh and target.exists():
            shutil.rmtree(target)
        if not args.report_only and not target.exists():
            written, missing = extract(item, args.mirrors, dest)
            print(
                f"{item.label}: {written} files written, {missing} absent from the snapshot",
                file=sys.stderr,
            )
        rows.append(report(item, dest))
    print_table(rows)
    if not args.only:
        write_readme(dest, rows)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
