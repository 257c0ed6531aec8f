#!/usr/bin/env python3
"""Run okfx's validator over another OKF validator's conformance fixtures and compare.

The fixtures are the suite of the Go toolkit ``skosovsky/okf`` (one small bundle per folder,
each with an ``expected.json``: the exit code, and diagnostics with file, severity and
message). They are another producer's data: written outside git
(``/work/corpus/peer-fixtures`` by default) and never committed. They are read from a local
bare mirror (``--mirrors``, ``<owner>+<repo>/repo``) when there is one, else cloned from
GitHub once, at the pinned commit, as ``scripts/real_corpus.py`` does.

Per fixture: their verdict (exit code 0 = conformant) against okfx's (``validate`` on
``Bundle.load``, no error), and their diagnostics against okfx's problems, matched loosely
by file and kind (a kind is a coarse family both sides can name: ``type``, ``log-date``,
``link``...). Their exit code counts errors only (a fixture run with ``strict: true`` still
exits 0 on warnings), so it is compared with okfx's ``conformant``, not ``--strict``.

    python scripts/peer_fixtures.py                  # extract (when missing) and compare
    python scripts/peer_fixtures.py --only negative/log --json out.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_corpus import Pinned, extract  # noqa: E402  (a sibling script, not a package)

from okfx import Bundle, validate  # noqa: E402

PEER = Pinned(
    "skosovsky/okf",
    "dc8f09916ecfd41e54873240748e4d358b7de9ba",
    "fixtures",
    "Go toolkit's validator conformance fixtures",
    "en",
)

#: Their diagnostic message, by how it starts, and the kind it names (first match wins).
THEIR_KINDS: tuple[tuple[str, str], ...] = (
    ("missing YAML frontmatter block", "frontmatter"),
    ("missing or empty 'type' field", "type"),
    ("unparseable concept document: invalid encoding", "encoding"),
    ("unparseable concept document: invalid frontmatter", "yaml"),
    ("index.md should not contain frontmatter", "index-frontmatter"),
    ("root index.md", "index-frontmatter"),
    ("index.md description for", "index-description"),
    ("index.md", "index"),
    ("log.md should not contain frontmatter", "log-frontmatter"),
    ("log date headings should be newest first", "log-order"),
    ("log date heading is not ISO-8601", "log-date"),
    ("log ", "log"),
    ("broken link", "link"),
    ("anchor not found", "anchor"),
    ("orphan file", "orphan"),
    ("missing index.md", "orphan"),
    ("citation", "citation"),
    ("'resource'", "field"),
    ("'timestamp'", "field"),
    ("'tags'", "field"),
    ("missing recommended", "recommended"),
    ("'# Examples'", "body-section"),
    ("BigQuery Table concepts should include", "body-section"),
)

#: okfx's problem codes, by the kind they name; a code not here is its own kind.
OKFX_KINDS: dict[str, str] = {
    "no_frontmatter": "frontmatter",
    "unterminated_frontmatter": "frontmatter",
    "missing_type": "type",
    "invalid_type": "type",
    "frontmatter_not_mapping": "type",
    "invalid_encoding": "encoding",
    "malformed_yaml": "yaml",
    "unquoted_colon": "yaml",
    "duplicate_key": "yaml",
    "reserved_frontmatter": "index-frontmatter",
    "nested_bundle": "index-frontmatter",
    "index_no_section": "index",
    "log_frontmatter": "log-frontmatter",
    "log_order": "log-order",
    "invalid_log_date": "log-date",
    "broken_link": "link",
    "broken_anchor": "anchor",
    "unsafe_link": "link",
    "unknown_footnote": "citation",
    "invalid_field": "field",
    "assumed_utc": "field",
}

_SEVERITY = {"ERROR": "E", "WARN": "W", "INFO": "I"}


def their_kind(message: str) -> str:
    for start, kind in THEIR_KINDS:
        if message.startswith(start):
            return kind
    return "other"


@dataclass(frozen=True)
class Mark:
    """One diagnostic, reduced to what both sides can say: file, kind, severity."""

    file: str  # bundle path without the leading "/" ("" for the bundle itself)
    kind: str
    severity: str  # E, W or I
    text: str  # their message, or okfx's code


def _file(path: str) -> str:
    path = path.strip("/")
    return "" if path == "." else path


def their_marks(expected: dict[str, Any]) -> list[Mark]:
    return [
        Mark(_file(d["file"]), their_kind(d["message"]), _SEVERITY[d["severity"]], d["message"])
        for d in expected["diagnostics"]
    ]


def okfx_marks(report: Any) -> list[Mark]:
    marks = [
        Mark(_file(p.path), OKFX_KINDS.get(p.code, p.code), "E", p.code) for p in report.errors
    ]
    marks += [
        Mark(_file(p.path), OKFX_KINDS.get(p.code, p.code), "W", p.code) for p in report.warnings
    ]
    return marks


def compare(fixture: Path) -> dict[str, Any]:
    expected = json.loads((fixture / "expected.json").read_text(encoding="utf-8"))
    report = validate(Bundle.load(fixture))
    theirs, ours = their_marks(expected), okfx_marks(report)
    their_keys = {(m.file, m.kind) for m in theirs}
    our_keys = {(m.file, m.kind) for m in ours}
    return {
        "their_conformant": expected["exit_code"] == 0,
        "okfx_conformant": report.conformant,
        "theirs": [m.__dict__ for m in theirs],
        "okfx": [m.__dict__ for m in ours],
        "only_theirs": sorted(their_keys - our_keys),
        "only_okfx": sorted(our_keys - their_keys),
        "other_severity": sorted(
            (
                {(m.file, m.kind) for m in theirs if m.severity == "E"}
                ^ {(m.file, m.kind) for m in ours if m.severity == "E"}
            )
            & their_keys
            & our_keys
        ),
    }


def _short(marks: list[dict[str, Any]], limit: int = 3) -> str:
    """``E log-date@log.md``, the same (file, kind) counted once, at most ``limit``."""
    seen: dict[tuple[str, str, str], int] = {}
    for m in marks:
        key = (m["severity"], m["kind"], m["file"] or ".")
        seen[key] = seen.get(key, 0) + 1
    parts = [
        f"{sev} {kind}@{file}" + (f" x{n}" if n > 1 else "")
        for (sev, kind, file), n in seen.items()
    ]
    more = f" +{len(parts) - limit}" if len(parts) > limit else ""
    return ", ".join(parts[:limit]) + more or "-"


def _codes(marks: list[dict[str, Any]]) -> str:
    seen: dict[str, int] = {}
    for m in marks:
        key = f"{m['text']}@{m['file'] or '.'}"
        seen[key] = seen.get(key, 0) + 1
    return ", ".join(k + (f" x{n}" if n > 1 else "") for k, n in seen.items()) or "-"


def _verdict(conformant: bool) -> str:
    return "pass" if conformant else "FAIL"


def print_table(rows: dict[str, dict[str, Any]]) -> None:
    print("| fixture | their verdict | okfx verdict | their diagnostics | okfx codes | diag |")
    print("|---|---|---|---|---|---|")
    for name, row in rows.items():
        same = row["their_conformant"] == row["okfx_conformant"]
        diag = "same" if not row["only_theirs"] and not row["only_okfx"] else "differ"
        print(
            f"| {name} | {_verdict(row['their_conformant'])} "
            f"| {_verdict(row['okfx_conformant'])}{'' if same else ' ≠'} "
            f"| {_short(row['theirs'])} | {_codes(row['okfx'])} | {diag} |"
        )
    agree = sum(r["their_conformant"] == r["okfx_conformant"] for r in rows.values())
    diag_same = sum(not r["only_theirs"] and not r["only_okfx"] for r in rows.values())
    print()
    print(f"verdicts agree: {agree} of {len(rows)}")
    severity = sum(
        bool(r["other_severity"]) and not r["only_theirs"] and not r["only_okfx"]
        for r in rows.values()
    )
    print(f"diagnostics match by file and kind: {diag_same} of {len(rows)}")
    print(f"  of which an error on one side, a warning or note on the other: {severity}")
    for name, row in rows.items():
        if row["their_conformant"] != row["okfx_conformant"]:
            print(
                f"  verdict differs: {name}: theirs {_verdict(row['their_conformant'])}, "
                f"okfx {_verdict(row['okfx_conformant'])}"
            )


def fixtures_under(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("expected.json"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=Path("/work/corpus/peer-fixtures"))
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--only", action="append", default=[], help="substring of a fixture")
    parser.add_argument("--fresh", action="store_true", help="extract again over old files")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    root = args.dest / PEER.slug / PEER.folder
    if args.fresh and root.exists():
        shutil.rmtree(root)
    if not root.exists():
        written, missing = extract(PEER, args.mirrors, args.dest)
        print(f"{PEER.label}: {written} files written, {missing} absent", file=sys.stderr)
    rows = {}
    for fixture in fixtures_under(root):
        name = fixture.relative_to(root).as_posix()
        if args.only and not any(o in name for o in args.only):
            continue
        rows[name] = compare(fixture)
    print_table(rows)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
