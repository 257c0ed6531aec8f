"""Caps on what an archive may expand to, and the counter that enforces them while extracting."""

from __future__ import annotations

from dataclasses import dataclass

from okfx.sources.errors import ArchiveLimitError

__all__ = ["RATIO_FLOOR", "Budget", "SourceLimits"]

# Below this many output bytes the ratio is not checked: a small archive of repetitive
# markdown compresses very well without being a bomb, and cannot do harm.
RATIO_FLOOR = 1 << 20


@dataclass(frozen=True)
class SourceLimits:
    """Caps for unpacking an archive.

    Attributes:
        max_total_bytes: most bytes the archive may expand to, counted while writing.
        max_files: most entries (files and folders) the archive may hold.
        max_ratio: most output bytes per byte of archive file, once past 1 MiB of output.
    """

    max_total_bytes: int = 1 << 30
    max_files: int = 200_000
    max_ratio: float = 100.0

    def __post_init__(self) -> None:
        for name in ("max_total_bytes", "max_files", "max_ratio"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"SourceLimits.{name} must be a positive number, got {value!r}")


class Budget:
    """Counts entries and bytes of one extraction and raises as soon as a cap is passed."""

    def __init__(self, limits: SourceLimits, archive_size: int, label: str) -> None:
        self.limits = limits
        self.archive_size = archive_size
        self.label = label
        self.files = 0
        self.bytes = 0

    def add_entry(self) -> None:
        self.files += 1
        self.check_files(self.files)

    def add_bytes(self, count: int) -> None:
        self.bytes += count
        self.check_bytes(self.bytes)
        self.check_ratio(self.bytes)

    def check_files(self, files: int) -> None:
        if files > self.limits.max_files:
            raise ArchiveLimitError(
                "max_files", self.limits.max_files, f"{self.label} holds more entries than that"
            )

    def check_bytes(self, total: int, what: str = "expands to") -> None:
        if total > self.limits.max_total_bytes:
            raise ArchiveLimitError(
                "max_total_bytes",
                self.limits.max_total_bytes,
                f"{self.label} {what} more than {self.limits.max_total_bytes} bytes",
            )

    def check_ratio(self, produced: int) -> None:
        allowed = self.limits.max_ratio * max(self.archive_size, 1)
        if produced > RATIO_FLOOR and produced > allowed:
            raise ArchiveLimitError(
                "max_ratio",
                self.limits.max_ratio,
                f"{self.label} expands to over {produced} bytes from {self.archive_size} "
                "compressed bytes (a likely zip bomb)",
            )
