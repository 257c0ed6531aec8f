"""Helpers for the search tests: a minimal concept-like object and the sample bundles.

Search takes any object with the attributes of ``okfx.model.Concept`` that it reads, so
most tests use :class:`FakeConcept` instead of files.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import NO_SAMPLES, SAMPLES  # one place says where the samples are

SAMPLE_NAMES = ("acme_retail", "crypto_bitcoin", "ga4", "stackoverflow")
#: A fixed instant for staleness, so no test reads the clock.
NOW = datetime(2026, 7, 1, tzinfo=UTC)


@dataclass(frozen=True)
class FakeConcept:
    path: str
    title: str = ""
    description: str = ""
    body: str = ""
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    type: str = "Reference"
    status: str = "stable"
    trust_tier: str = "unverified"
    stale_after: datetime | None = None

    @property
    def id(self) -> str:
        return self.path.strip("/").removesuffix(".md")

    def is_stale(self, now: datetime | None = None) -> bool:
        when = now or datetime.now(UTC)
        return self.stale_after is not None and when >= self.stale_after


def entries(*concepts: FakeConcept, bundle: str = "b") -> list[tuple[str, FakeConcept]]:
    return [(bundle, c) for c in concepts]


def require_samples() -> Path:
    """The sample bundles folder, or skip the test with the reason."""
    if not SAMPLES.is_dir():
        pytest.skip(NO_SAMPLES)
    return SAMPLES
