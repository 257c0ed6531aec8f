"""Every tool called in many situations, for tests/test_results.py: the example bundle
alone and beside a second one, and small bundles written here for what the example does
not hold (a folder without index.md, a file that is no concept, links that break or leave
the bundle, results too large for the size cap, an empty bundle, a fetched bundle).

A plain module (not a conftest.py), as ``attest_bundle.py`` is.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import PROJECT_ROOT, concept, write_tree
from okfx import Bundle, KnowledgeManager, Toolbox
from okfx.attest import Bound, ComputationSettings
from okfx.attest.duckdb_executor import DuckDBExecutor  # the okfx[duckdb] extra

EXAMPLES = PROJECT_ROOT / "examples"
NOW = datetime(2026, 12, 1, tzinfo=UTC)
WEEK = {"start_date": "2026-10-05", "end_date": "2026-10-11"}
EXTRACT = "computations/trips-per-bike-day-extract"


@dataclass(frozen=True)
class Answer:
    """One call's result: which tool, in what situation, and whether it should fail."""

    tool: str
    situation: str
    payload: dict[str, Any]
    fails: bool = False


# -- bundles -----------------------------------------------------------------------------------
_LINKS = (
    "See [the steps](ops/run.md#steps), [a page not written](nowhere/gone.md), "
    "[a typo](othr.md), [a folder](loose/) and [outside](../../outside.md).\n"
)
FULL = """\
---
type: Metric
title: Full
description: Every field a header shows.
tags: [{tags}]
status: draft
resource: /files/big.sql
stale_after: 2026-06-01
generated: {{ by: human:ana, at: 2026-01-01 }}
verified:
  - {{ by: human:ana, at: 2026-02-01T00:00:00Z }}
sources:
  - id: s1
    resource: https://example.org/s1
    title: Source one
    author: human:ana
    usage_count: 3
    last_modified: 2026-01-02
    usage_window: {{ from: 2026-01-01T00:00:00Z, to: 2026-01-31T00:00:00Z }}
usage_window: {{ from: 2026-01-01T00:00:00Z, to: 2026-01-31T00:00:00Z }}
owner: team-a
---
# Usage

{links}
A claim.[^s1]

# Usage

Said twice.

[^s1]: The source.
"""
COUNT = """\
---
type: Attested Computation
title: {title}
runtime: duckdb
parameters:
  - {{ name: since, type: date, required: false, default: 2026-10-01, example: 2026-10-05,
       min: 2026-01-01, max: 2026-12-31 }}
  - {{ name: bike_type, type: string, required: false, enum: [ebike, classic] }}
executor:
  resource: /ops/run.md
  receipt: [run_id, executed_sql, result, job_id]
attester:
  resource: /files/check.py
---
# Computation

```sql
SELECT COUNT(*) AS n FROM {table}
WHERE trip_date >= $since AND ($bike_type IS NULL OR bike_type = $bike_type)
```
"""

RICH: dict[str, str | bytes] = {
    "index.md": "# Rich\n\n## Concepts\n\n* [Full](full.md) - every field\n",
    "full.md": FULL.format(tags=", ".join(f"t{i}" for i in range(60)), links=_LINKS),
    "other.md": concept(
        title="Other", body="Back to [full](full.md#usage), and [inner](nested/x.md).\n"
    ),
    "nested/index.md": "---\nokf_version: '0.2'\n---\n# Inner\n",
    "nested/x.md": concept(title="Inner X"),
    "ops/index.md": "# Ops\n\n## Pages\n\n* [Run](run.md) - how to run\n",
    "ops/log.md": "# Ops log\n\n## 2026-01-01\n\n* [Full](../full.md) written\n",
    "ops/run.md": concept(title="Run", body="# Steps\n\nRun it.\n"),
    "loose/a.md": concept(title="Loose A", status="deprecated"),
    "loose/deep/b.md": concept(title="Loose B"),
    "README.md": "A readme, no frontmatter.\n",
    "files/big.sql": "SELECT 1;\n" * 8_000,
    "files/check.py": "print('never run')\n",
    "files/blob.bin": b"\x00\x01\x02binary",
    "count.md": COUNT.format(title="Trip count", table="trips"),
    "broken.md": COUNT.format(title="Broken count", table="no_such_table"),
}


def _long(word: str, n: int) -> str:
    return (word * (n // len(word) + 1))[:n]


def big_files() -> dict[str, str | bytes]:
    """51 concepts in a folder without index.md, each near every cap: a list, a search,
    a grep and the folder's listing all pass the result's size cap."""
    folder = _long("f", 120) + "/" + _long("g", 120)
    words = " ".join(f"needle{i:02}word" for i in range(40))
    files: dict[str, str | bytes] = {}
    for i in range(51):
        body = "".join(f"lorem {words} {_long('x', 400)}\n" for _ in range(5))
        files[f"{folder}/{_long('c', 180)}{i:02}.md"] = concept(
            title=_long("title ", 400),
            description=_long("description ", 1_500),
            tags="[" + ", ".join(f"{_long('t', 110)}{t}" for t in range(60)) + "]",
            body=body,
        )
    return files


def _git(*args: str, cwd: Path | None = None) -> str:
    command = ["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"]
    done = subprocess.run([*command, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


@contextmanager
def _isolated(root: Path) -> Iterator[None]:
    """Caches and git settings of this run's own (the fixture that builds these bundles
    outlives the per-test ``private_cache_home``)."""
    empty = root / "empty.gitconfig"
    empty.write_text("", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OKFX_CACHE_HOME", str(root / "cache-home"))
        patch.delenv("OKFX_STATE_CACHE", raising=False)
        patch.delenv("OKFX_CACHE_DIR", raising=False)
        patch.setenv("GIT_CONFIG_GLOBAL", str(empty))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        for role in ("AUTHOR", "COMMITTER"):
            patch.setenv(f"GIT_{role}_NAME", "Test")
            patch.setenv(f"GIT_{role}_EMAIL", "test@example.org")
        yield


def fetched(root: Path) -> list[Bundle]:
    """A bundle cloned from a git URL that names a ref, and one unpacked from a zip."""
    work, bare = write_tree(root / "work", {"kb/a.md": concept(title="A")}), root / "kb.git"
    _git("init", "-q", str(work))
    _git("add", "-A", cwd=work)
    _git("commit", "-q", "-m", "bundle", cwd=work)
    _git("clone", "-q", "--bare", str(work), str(bare))
    cache = root / "sources"
    cloned = Bundle.load(f"{bare.as_uri()}#main:kb", "from-git", cache_dir=cache)
    archive = shutil.make_archive(str(root / "kb"), "zip", work, "kb")
    return [cloned, Bundle.load(archive, "from-zip", cache_dir=cache)]


# -- calls -------------------------------------------------------------------------------------
def ask(box: Toolbox, tool: str, situation: str, *, fails: bool = False, **kw: Any) -> Answer:
    return Answer(tool, situation, getattr(box, tool)(**kw), fails)


def _example(box: Toolbox) -> list[Answer]:
    return [
        ask(box, "list_bundles", "one bundle"),
        ask(box, "list_concepts", "a first page", limit=5),
        ask(box, "list_concepts", "a page of another version", offset=2, version="00000000"),
        ask(box, "list_concepts", "the next page", limit=5, offset=5),
        ask(box, "list_concepts", "an offset past the end", offset=500),
        ask(box, "list_concepts", "a filter that hides", directory="/metrics"),
        ask(box, "list_concepts", "deprecated ones too", include_deprecated=True),
        ask(box, "search_concepts", "a plain query", query="dock availability"),
        ask(box, "search_concepts", "a misspelt name", query="tirps"),
        ask(box, "search_concepts", "a missing word respelt", query="dock availabilty rate"),
        ask(box, "search_concepts", "a missing word named", query="trpis per bike"),
        ask(box, "search_concepts", "no hits", query="zzqx"),
        ask(box, "search_concepts", "a deprecated match hidden", query="fleet utilization"),
        ask(box, "search_concepts", "a type filter", query="zzqx", type="Metric"),
        ask(box, "search_concepts", "only common words", query="the and of"),
        ask(box, "grep_concepts", "a plain grep", pattern="trips"),
        ask(box, "grep_concepts", "a grep cut at its limit", pattern="trip", limit=1),
        ask(box, "grep_concepts", "no match, another case", pattern="TRIPS PER BIKE"),
        ask(box, "grep_concepts", "a regex", pattern=r"bike_\w+", regex=True),
        ask(box, "grep_concepts", "a filter that hides", pattern="trips", type="Metric"),
        ask(box, "read_concept", "a concept", path="tables/trips"),
        ask(box, "read_concept", "a deprecated concept", path="metrics/fleet-utilization"),
        ask(box, "read_concept", "a cut read", path="tables/trips", max_chars=300),
        ask(box, "read_concept", "the rest of it", path="tables/trips", offset=300),
        ask(box, "read_concept", "past the end", path="tables/trips", offset=100_000),
        ask(
            box,
            "read_concept",
            "a part of another version",
            path="tables/trips",
            offset=300,
            version="000000000000",
        ),  # fmt: skip
        ask(box, "read_concept", "a section", path="tables/trips", section="Schema"),
        ask(box, "read_concept", "a legacy timestamp", path="references/glossary"),
        ask(box, "read_concept", "a computation", path=EXTRACT),
        ask(box, "read_concept", "the root index", path="index.md"),
        ask(box, "read_concept", "a folder path", path="tables/"),
        ask(box, "read_concept", "the log", path="log.md"),
        ask(box, "read_concept", "an okf:// address", path="okf://knowledge/index"),
        ask(box, "get_neighbors", "a hub, one link a list", path="tables/trips", limit=1),
        ask(box, "get_neighbors", "its next page", path="tables/trips", limit=1, offset=1),
        ask(box, "get_neighbors", "past every list", path="tables/trips", offset=1_000),
        ask(box, "get_neighbors", "an index page", path="index.md"),
        ask(
            box,
            "read_resource",
            "an attached file",
            path=f"{EXTRACT.rsplit('/', 1)[0]}/sql/trips_per_bike_day.sql",
        ),
        ask(box, "read_resource", "a script", path="attesters/sql_equality.py"),
        ask(
            box,
            "read_resource",
            "a part of another version",
            path="attesters/sql_equality.py",
            offset=10,
            version="000000000000",
        ),  # fmt: skip
        ask(
            box,
            "read_resource",
            "an offset at the end",
            path="attesters/sql_equality.py",
            offset=10**6,
        ),
        ask(box, "prepare_computation", "bound with values", path=EXTRACT, parameters=WEEK),
        ask(
            box,
            "prepare_computation",
            "an optional value given",
            path=EXTRACT,
            parameters={**WEEK, "bike_type": "ebike"},
        ),
    ]


def _failures(box: Toolbox) -> list[Answer]:
    def fail(tool: str, situation: str, **kw: Any) -> Answer:
        return ask(box, tool, situation, fails=True, **kw)

    return [
        fail("read_concept", "no such concept", path="tables/tripz"),
        fail("read_concept", "no such section", path="tables/trips", section="Nope"),
        fail("read_concept", "a path that leaves the bundle", path="../secret.md"),
        fail("read_concept", "a wrong type", path="tables/trips", offset="x"),
        fail("list_concepts", "no such bundle", bundle="nope"),
        fail("search_concepts", "a query too large", query="x" * 3_000),
        fail("grep_concepts", "a regex RE2 refuses", pattern="(a)\\1", regex=True),
        ask(box, "read_resource", "a concept's file as written", path="tables/trips.md"),
        fail("read_resource", "a folder", path="attesters/"),
        fail("prepare_computation", "not a computation", path="tables/trips"),
        fail("prepare_computation", "a wrong value", path=EXTRACT, parameters={"start_date": 1}),
        fail("run_computation", "no executor", path=EXTRACT, parameters=WEEK),
        fail("check_attestation", "a receipt not an object", path=EXTRACT, receipt="x"),
    ]


class OtherSql(DuckDBExecutor):
    """A DuckDB executor whose receipts say other SQL ran than the bound text."""

    def run(self, bound: Bound) -> dict[str, Any]:
        return {**super().run(bound), "executed_sql": "SELECT 1"}


def _computations(bundle: Bundle, rich: Bundle) -> list[Answer]:
    data = EXAMPLES / "data"
    tables = {"trips": data / "trips.csv", "bike_days": data / "bike_days.csv"}
    duckdb = DuckDBExecutor(tables)
    settings = ComputationSettings([duckdb])
    box = Toolbox(bundle, now=lambda: NOW, computations=settings)
    ran = ask(box, "run_computation", "a run", path=EXTRACT, parameters=WEEK)
    receipt = ran.payload["receipt"]
    tampered = json.loads((PROJECT_ROOT / "docs/snippets/receipt-tampered.json").read_text())
    richer = Toolbox(rich, now=lambda: NOW, computations=settings)
    other = Toolbox(bundle, now=lambda: NOW, computations=ComputationSettings([OtherSql(tables)]))
    return [
        ran,
        ask(box, "prepare_computation", "one it can run", path=EXTRACT, parameters=WEEK),
        ask(
            box,
            "check_attestation",
            "a run's receipt",
            path=EXTRACT,
            parameters=WEEK,
            receipt=receipt,
            value=receipt["result"][0],
        ),
        ask(
            box,
            "check_attestation",
            "another value",
            path=EXTRACT,
            parameters=WEEK,
            receipt=receipt,
            value=1,
        ),
        ask(
            box,
            "check_attestation",
            "a tampered receipt",
            path=EXTRACT,
            parameters=WEEK,
            receipt=tampered,
        ),
        ask(
            box,
            "check_attestation",
            "a receipt lacking fields",
            path=EXTRACT,
            parameters=WEEK,
            receipt={"result": [1]},
        ),
        ask(richer, "prepare_computation", "defaults", path="count"),
        ask(richer, "read_concept", "a contract's declared constraints", path="count"),
        ask(richer, "run_computation", "a receipt lacking a declared field", path="count"),
        ask(richer, "run_computation", "a run that fails", path="broken"),
        ask(other, "run_computation", "other SQL ran", path=EXTRACT, parameters=WEEK),
    ]


def _rich(box: Toolbox) -> list[Answer]:
    return [
        ask(box, "read_concept", "every header field", path="full"),
        ask(box, "read_concept", "a heading written twice", path="full", section="Usage"),
        ask(box, "read_concept", "a folder without index.md", path="loose/"),
        ask(box, "read_concept", "an index beside a log", path="ops/index.md"),
        ask(box, "read_concept", "a file that is no concept", path="README.md", fails=True),
        ask(box, "get_neighbors", "broken, folder and outside links", path="full"),
        ask(box, "get_neighbors", "a link to a section", path="other"),
        ask(box, "get_neighbors", "a log page", path="ops/log.md"),
        ask(box, "get_neighbors", "a folder without index.md", path="loose", fails=True),
        ask(box, "read_resource", "a file past one page", path="files/big.sql"),
        ask(box, "read_resource", "its next page", path="files/big.sql", offset=65_536),
        ask(box, "read_resource", "a binary file", path="files/blob.bin", fails=True),
        ask(box, "list_concepts", "a stale, draft row with its tags cut", limit=200),
    ]


def _big(box: Toolbox) -> list[Answer]:
    folder = _long("f", 120) + "/" + _long("g", 120)
    query = " ".join(f"needle{i:02}word" for i in range(40))
    return [
        ask(box, "list_concepts", "rows past the size cap", limit=200),
        ask(box, "search_concepts", "hits past the size cap", query=query, limit=50),
        ask(box, "grep_concepts", "matches past the size cap", pattern="lorem", limit=200),
        ask(box, "read_concept", "a folder past the size cap", path=folder),
    ]


def _several(box: Toolbox) -> list[Answer]:
    return [
        ask(box, "list_bundles", "two bundles"),
        ask(box, "list_concepts", "every bundle's rows"),
        ask(box, "search_concepts", "across bundles", query="trips"),
        ask(box, "grep_concepts", "across bundles", pattern="Full"),
        ask(box, "read_concept", "the one bundle holding it", path="full"),
        ask(
            box, "read_concept", "a cut read naming its bundle", path="tables/trips", max_chars=100
        ),
        ask(box, "read_concept", "a path in both", path="index.md", fails=True),
        ask(box, "read_concept", "a path in none", path="tripz", fails=True),
        ask(box, "get_neighbors", "the one bundle holding it", path="other"),
    ]


#: One page in 12 releases, and pages naming producer ids (one unknown, one ambiguous).
RELEASES: dict[str, str | bytes] = {
    **{f"db/3.{n}/setup.md": concept(title=f"Setup 3.{n}", body="Install the server.\n")
       for n in range(12)},
    "ids/a.md": concept(id="k.a", related="[k.b, k.dup, k.aa]"),
    "ids/dup1.md": concept(id="k.dup"),
    "ids/dup2.md": concept(id="k.dup"),
}  # fmt: skip


def _releases(box: Toolbox) -> list[Answer]:
    return [
        ask(box, "search_concepts", "a page in twelve releases", query="install server setup"),
        ask(box, "get_neighbors", "relation ids that draw no edge", path="ids/a"),
    ]


def _empty_and_many(root: Path) -> list[Answer]:
    empty = Bundle.load(write_tree(root / "empty", {"notes.txt": "nothing here\n"}))
    alone = Toolbox(empty, now=lambda: NOW)
    gone = write_tree(root / "gone", {"a.md": concept(title="A")})
    manager = KnowledgeManager([empty, Bundle.load(gone), *fetched(root / "fetched")])
    shutil.rmtree(gone)
    manager.reload()
    manager.note_unavailable("/srv/broken.zip", "not an archive")
    index = "# Index\n\n## All\n\n" + "".join(f"* [A](a.md) - {'word ' * 20}\n" for _ in range(10))
    # a broken link: each row says so, and 1,000 rows pass the size cap
    linked = concept(title="A", body="[x](missing.md)\n")
    many = write_tree(root / "many", {"index.md": index, "a.md": linked})
    crowd = KnowledgeManager([Bundle.load(many, f"b{i:03}") for i in range(1000)])
    leaky = write_tree(root / "leaky", {"a.md": concept(title="A", body="[s](leak.md)\n")})
    os.symlink(root / "empty" / "notes.txt", leaky / "leak.md")
    twin = concept(title="P", body="[the twin](../right/x.md)\n")
    left = Bundle.load(write_tree(root / "siblings" / "left", {"p.md": twin}))
    right = Bundle.load(write_tree(root / "siblings" / "right", {"x.md": concept(title="X")}))
    pair = Toolbox(KnowledgeManager([left, right]), now=lambda: NOW)
    return [
        ask(pair, "get_neighbors", "a link into a sibling loaded beside it", path="left:/p.md"),
        ask(Toolbox(Bundle.load(leaky)), "get_neighbors", "a symlink out of it", path="a"),
        ask(alone, "search_concepts", "an empty bundle", query="anything"),
        ask(alone, "list_concepts", "an empty bundle"),
        ask(Toolbox(manager), "list_bundles", "empty, gone, fetched, unavailable"),
        ask(Toolbox(crowd), "list_bundles", "bundles past the size cap"),
    ]


def answers(root: Path) -> list[Answer]:
    """Every call, on bundles written under ``root``."""
    with _isolated(root):
        example = Bundle.load(EXAMPLES / "knowledge")
        rich = Bundle.load(write_tree(root / "rich", RICH))
        big = Bundle.load(write_tree(root / "big", big_files()))
        box = Toolbox(example, now=lambda: NOW)
        both = Toolbox(KnowledgeManager([example, rich]), now=lambda: NOW)
        return [
            *_example(box),
            *_failures(box),
            *_computations(example, rich),
            *_rich(Toolbox(rich, now=lambda: NOW)),
            *_big(Toolbox(big, now=lambda: NOW)),
            *_several(both),
            *_empty_and_many(root),
            *_releases(Toolbox(Bundle.load(write_tree(root / "releases", RELEASES)))),
        ]
