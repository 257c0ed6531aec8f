"""Shared fixtures: tiny bundles written by the tests, and the published samples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SAMPLES = PROJECT_ROOT.parent / "shared" / "okf-samples"
SAMPLE_NAMES = ("acme_retail", "crypto_bitcoin", "ga4", "stackoverflow")

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
        pytest.skip(f"the OKF sample bundles are not at {SAMPLES} (../shared is absent)")
    return SAMPLES


def concept(type_: str = "Metric", body: str = "", **fields: str) -> str:
    """A concept file's text with ``type`` and extra raw YAML lines."""
    lines = [f"type: {type_}"] + [f"{k}: {v}" for k, v in fields.items()]
    return "---\n" + "\n".join(lines) + "\n---\n" + body
