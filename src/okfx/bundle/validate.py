"""The spec §11 conformance report of a loaded bundle.

Rules 1 and 2 (parseable frontmatter with a non-empty ``type`` in every non-reserved
``.md`` file) are errors. Everything else okfx noticed is a warning: broken links,
unknown ``status`` values, bad optional fields, frontmatter in reserved files, skipped
files. A bundle is conformant when it has no errors (§11: consumers must not reject a
bundle for broken links, unknown types or missing optional fields).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from okfx.bundle.bundle import Bundle
from okfx.model import Problem

__all__ = ["ERROR_CODES", "ConformanceReport", "validate"]

#: Warning codes that break spec §11 rules 1-2 (the file is not a usable concept).
ERROR_CODES = frozenset(
    {
        "no_frontmatter",
        "unterminated_frontmatter",
        "malformed_yaml",
        "frontmatter_not_mapping",
        "missing_type",
        "invalid_type",
        "invalid_encoding",
    }
)


@dataclass(frozen=True)
class ConformanceReport:
    bundle: str
    root: str
    okf_version: str | None
    concepts: int
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]

    @property
    def conformant(self) -> bool:
        return not self.errors

    def passes(self, strict: bool = False) -> bool:
        """Whether the check passes: conformant, and with ``strict`` no warning either
        (``okfx validate --strict``)."""
        return self.conformant and not (strict and self.warnings)

    def summary(self) -> str:
        """The verdict in one line: bundle, conformance, counts, declared version."""
        verdict = "conformant" if self.conformant else "NOT conformant"
        version = f", declares okf_version {self.okf_version}" if self.okf_version else ""
        return (
            f"{self.bundle}: {verdict} with OKF v0.2 ({self.concepts} concepts, "
            f"{len(self.errors)} errors, {len(self.warnings)} warnings{version})"
        )

    def counts(self) -> dict[str, int]:
        """Number of problems per code, sorted by code."""
        counter = Counter(p.code for p in (*self.errors, *self.warnings))
        return dict(sorted(counter.items()))

    def to_dict(self) -> dict[str, Any]:
        """A stable, JSON-able form (the ``okfx validate --json`` output)."""
        return {
            "bundle": self.bundle,
            "root": self.root,
            "okf_version": self.okf_version,
            "conformant": self.conformant,
            "concepts": self.concepts,
            "summary": {
                "errors": len(self.errors),
                "warnings": len(self.warnings),
                "by_code": self.counts(),
            },
            "errors": [p._asdict() for p in self.errors],
            "warnings": [p._asdict() for p in self.warnings],
        }


def validate(bundle: Bundle) -> ConformanceReport:
    """Classify the bundle's load warnings into §11 errors and warnings."""
    ordered = sorted(bundle.warnings, key=lambda p: (p.path, p.code, p.message))
    return ConformanceReport(
        bundle=bundle.name,
        root=str(bundle.root),
        okf_version=bundle.okf_version,
        concepts=len(bundle),
        errors=tuple(p for p in ordered if p.code in ERROR_CODES),
        warnings=tuple(p for p in ordered if p.code not in ERROR_CODES),
    )
