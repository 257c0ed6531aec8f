#!/usr/bin/env python3
"""Run okfx's validator over the Ruby OKF kernel's CLI fixtures (``serradura/okf-gem``) and
compare with what that gem's own tests expect of its ``okf validate``.

Unlike ``scripts/peer_fixtures.py`` (whose fixtures carry an ``expected.json``), this gem
states its expectations in Ruby tests, so they are written down here by hand, each with the
test that asserts it (``gems/okf/test/integration/cli/by_dir/cli_validate_test.rb`` at the
pinned commit). The fixtures are another producer's data: written outside git
(``/work/corpus/peer-fixtures`` by default), never committed.

    python scripts/peer_gem_fixtures.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_corpus import Pinned, extract  # noqa: E402  (a sibling script, not a package)

from okfx import Bundle, validate  # noqa: E402

PEER = Pinned(
    "serradura/okf-gem",
    "5a839fca9e0409ab8e30109f83d423e035774651",
    "gems/okf/test/integration/cli/fixtures",
    "Ruby OKF kernel's CLI fixtures",
    "en",
)

#: Their ``okf validate`` verdict (exit 0 = conformant) per fixture folder, and the line
#: of cli_validate_test.rb asserting it. The other folders have no validate verdict there.
THEIR_VERDICTS: dict[str, tuple[bool, int]] = {
    "minimal": (True, 10),
    "conformant": (True, 16),
    "empty": (True, 24),
    "malformed": (False, 30),
    "structural": (False, 41),
    "edge-cases": (True, 62),
    "unhealthy": (True, 70),
    "v0_2": (True, 107),
    "v0_2-malformed": (True, 123),
}

#: The files of ``v0_2-malformed`` their tests expect a warning on (lines 131-195).
THEIR_WARNED = frozenset(
    {
        "computation-incomplete.md",
        "generated-bad-at.md",
        "generated-missing-by.md",
        "generated-not-a-mapping.md",
        "index.md",
        "parameters-not-a-list.md",
        "sources-bad-entries.md",
        "sources-not-a-list.md",
        "stale-after-bad.md",
        "stale-after-datetime.md",
        "status-unknown.md",
        "usage-window-bad.md",
        "usage-window-not-a-mapping.md",
        "verified-bad-entries.md",
        "verified-not-a-list.md",
    }
)


def _verdict(conformant: bool) -> str:
    return "pass" if conformant else "FAIL"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=Path("/work/corpus/peer-fixtures"))
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args(argv)
    root = args.dest / PEER.slug / PEER.folder
    if not root.exists():
        written, missing = extract(PEER, args.mirrors, args.dest)
        print(f"{PEER.label}: {written} files written, {missing} absent", file=sys.stderr)
    print("| fixture | their verdict (test line) | okfx verdict | okfx codes |")
    print("|---|---|---|---|")
    agree = 0
    for name, (theirs, line) in THEIR_VERDICTS.items():
        report = validate(Bundle.load(root / name))
        agree += report.conformant == theirs
        mark = "" if report.conformant == theirs else " ≠"
        codes = ", ".join(f"{c} {n}" for c, n in report.counts().items()) or "-"
        print(f"| {name} | {_verdict(theirs)} ({line}) | {_verdict(report.conformant)}{mark} "
              f"| {codes} |")  # fmt: skip
    print(f"\nverdicts agree: {agree} of {len(THEIR_VERDICTS)}")
    report = validate(Bundle.load(root / "v0_2-malformed"))
    ours = {p.path.lstrip("/") for p in (*report.errors, *report.warnings)}
    if any("okf_version" in note for note in report.notes):
        ours.add("index.md")  # okfx says it in a note, not a problem
    print(f"v0_2-malformed files warned: theirs {len(THEIR_WARNED)}, okfx {len(ours)}, "
          f"both {len(THEIR_WARNED & ours)}")  # fmt: skip
    for label, files in (("only theirs", THEIR_WARNED - ours), ("only okfx", ours - THEIR_WARNED)):
        if files:
            print(f"  {label}: {', '.join(sorted(files))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
