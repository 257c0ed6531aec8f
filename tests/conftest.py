"""Shared fixtures: tiny bundles written by the tests, and the published samples."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
#: The published OKF sample bundles: beside the checkout, or where OKFX_SAMPLES points.
SAMPLES = Path(os.environ.get("OKFX_SAMPLES") or PROJECT_ROOT.parent / "shared" / "okf-samples")
#: Why a test on the samples is skipped without them.
NO_SAMPLES = (
    "needs the published OKF sample bundles: put them in ../shared/okf-samples beside the "
    "checkout, or set OKFX_SAMPLES to their folder"
)
#: The first JSON-RPC message of an MCP session, for tests that speak the protocol by hand.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "okfx-test", "version": "0"},
    },
}
#: What a test skipped for a missing package (an adapter's framework, an extra's) needs.
NO_PACKAGE = 'need {}, which is not installed: pip install -e ".[dev,all]" installs it'

SAMPLE_NAMES = ("acme_retail", "crypto_bitcoin", "ga4", "stackoverflow")
#: The synthetic bundle generator the benchmarks use, beside the checkout.
GENERATOR = PROJECT_ROOT.parent / "shared" / "bench" / "gen_bundle.py"

MakeBundle = Callable[[dict[str, str | bytes]], Path]


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``{relative path: text or bytes}`` under ``root`` and return ``root``."""
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root


def generated_bundle(out: Path, concepts: int) -> Path:
    """A bundle of ``concepts`` concepts made at ``out`` by ../shared/bench/gen_bundle.py
    (deterministic); skips the test when the generator is absent."""
    if not GENERATOR.is_file():
        pytest.skip(f"the bundle generator is not at {GENERATOR} (../shared is absent)")
    subprocess.run(
        [sys.executable, str(GENERATOR), "--concepts", str(concepts), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return out


@pytest.fixture(autouse=True)
def private_cache_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets caches of its own (the state cache is on by default): nothing is
    read from or written to the user's cache folder, and no test sees another's state."""
    home = tmp_path_factory.mktemp("cache-home")
    monkeypatch.setenv("OKFX_CACHE_HOME", str(home))
    monkeypatch.delenv("OKFX_STATE_CACHE", raising=False)
    monkeypatch.delenv("OKFX_CACHE_DIR", raising=False)  # fetched sources go under it too
    return home


@pytest.fixture
def make_bundle(tmp_path: Path) -> MakeBundle:
    """Build a bundle folder from a mapping of files; each call gets a fresh folder."""
    counter = iter(range(1_000_000))

    def build(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / f"bundle{next(counter)}"
        root.mkdir()
        return write_tree(root, files)

    return build


@pytest.fixture(scope="session")
def samples() -> Path:
    """The published OKF sample bundles in ../shared (skipped when absent)."""
    if not SAMPLES.is_dir():
        pytest.skip(NO_SAMPLES)
    return SAMPLES


def concept(type_: str = "Metric", body: str = "", **fields: str) -> str:
    """A concept file's text with ``type`` and extra raw YAML lines."""
    lines = [f"type: {type_}"] + [f"{k}: {v}" for k, v in fields.items()]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


def _skip_reason(report: Any) -> str:
    """What a skipped test needs, in a few words that group the skips of one kind."""
    reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)
    reason = reason.removeprefix("Skipped: ")
    if reason.startswith("could not import "):  # pytest.importorskip of a package
        return NO_PACKAGE.format(reason.split()[3].rstrip(":"))
    return reason


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per kind of skip (what those tests need), not one line per test."""
    skipped = terminalreporter.stats.get("skipped", [])
    for reason, count in sorted(Counter(map(_skip_reason, skipped)).items()):
        terminalreporter.write_line(f"{count} skipped: {reason}", yellow=True)


def resident_kb(path: Path, pid: int | str = "self") -> int:
    """Resident kB of process ``pid``'s mappings of the file at ``path`` (its smaps)."""
    total, inside = 0, False
    with open(f"/proc/{pid}/smaps", encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if fields and "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:
                inside = len(fields) > 5 and fields[5] == str(path)
            elif inside and fields[0] == "Rss:":
                total += int(fields[1])
    return total


needs_smaps = pytest.mark.skipif(
    not Path("/proc/self/smaps").exists(), reason="reads a mapping's resident pages in /proc"
)
