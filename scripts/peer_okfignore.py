#!/usr/bin/env python3
"""Compare okfx's ``.okfignore`` reading with the conformance cases of the toolkit that
defined the file (``franklinbaldo/okf-parser``, ``conformance/exclusion.json``).

Each case gives patterns and paths, each path with the decision that toolkit's two
runtimes must reach. The file is another project's data: it is read from the fetched
repository at the pinned commit (``fetch github:franklinbaldo/okf-parser`` first), never
copied here. Prints every case where okfx decides otherwise, then the count.

    python scripts/peer_okfignore.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from okfx.bundle.ignorefile import IgnoreRules, parse

REPO = "franklinbaldo/okf-parser"
COMMIT = "4f88c8b337daf5d5390a49b3ef448daefcdc70fb"
CASES = "conformance/exclusion.json"


def cases(mirrors: Path) -> list[dict[str, object]]:
    gitdir = mirrors / REPO.replace("/", "+") / "repo"
    if not gitdir.is_dir():
        sys.exit(f"no copy of {REPO} under {mirrors}: fetch github:{REPO} first")
    text = subprocess.run(
        ["git", "--git-dir", str(gitdir), "show", f"{COMMIT}:{CASES}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    loaded: list[dict[str, object]] = json.loads(text)
    return loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    agree = total = 0
    for case in cases(args.mirrors):
        rules = IgnoreRules(parse("\n".join(case["patterns"])))  # type: ignore[arg-type]
        for item in case["paths"]:  # type: ignore[attr-defined]
            total += 1
            path = "/" + item["path"]
            if item.get("is_dir"):
                got = rules._folder([p for p in path.split("/") if p])
            else:
                got = rules.excluded(path)
            if got == item["excluded"]:
                agree += 1
            else:
                print(
                    f"  differs: {case['name']}: {item['path']}: theirs "
                    f"{'excluded' if item['excluded'] else 'kept'}, okfx "
                    f"{'excluded' if got else 'kept'} (patterns {case['patterns']})"
                )
    print(f"decisions agree: {agree} of {total}")


if __name__ == "__main__":
    main()
