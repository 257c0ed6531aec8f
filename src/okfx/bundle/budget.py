"""The bundle-wide memory caps of a load: concepts, body characters and links kept.

Byte caps alone do not bound memory: a link takes six bytes of a file and a few hundred
of memory, a concept's objects outweigh a short file many times. :class:`LoadBudget`
counts what a load keeps against :class:`~okfx.limits.Limits` (``max_concepts``,
``max_body_chars``, ``max_links``) and, at the end, reports each cap that was reached in
one warning that names it, says how to raise it and counts what was left out.
"""

from __future__ import annotations

from okfx.bundle.walk import Dropped, FileEntry
from okfx.limits import Limits

__all__ = ["CAP_CODES", "LoadBudget"]

#: The warnings of the bundle-wide caps (the walk's ``max_dirs`` included): a load records
#: them even past ``Limits.max_warnings``, since a cap must never be reached silently.
CAP_CODES = frozenset(
    {"too_many_dirs", "too_many_concepts", "bodies_too_large", "too_many_links_in_bundle"}
)


class LoadBudget:
    """Counts the concepts, body characters and links a load keeps."""

    __slots__ = (
        "limits",
        "concepts",
        "body_chars",
        "links",
        "_skipped",
        "_by_size",
        "_linkless",
        "_last_cut",
    )

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.concepts = 0
        self.body_chars = 0
        self.links = 0
        self._skipped = Dropped()  # concepts left out by max_concepts
        self._by_size = Dropped()  # concepts left out by max_body_chars
        self._linkless = Dropped()  # concepts whose links were cut by max_links
        self._last_cut = ""

    @property
    def full(self) -> bool:
        """No further concept can be kept: reading more files is wasted work."""
        return bool(self._skipped.count or self._by_size.count)

    def admit(self, path: str, body_chars: int) -> bool:
        """Whether the concept at ``path`` with a body of ``body_chars`` is kept.

        Once a cap refuses one concept, every later one is refused as well, so what a
        load keeps is always a prefix of the bundle's files in path order.
        """
        limits = self.limits
        if self._skipped.count or self.concepts >= limits.max_concepts:
            self._skipped.add(path)
            return False
        if self._by_size.count or self.body_chars + body_chars > limits.max_body_chars:
            self._by_size.add(path)
            return False
        self.concepts += 1
        self.body_chars += body_chars
        return True

    def leave_out(self, entries: list[FileEntry]) -> list[FileEntry]:
        """The ``index.md`` and ``log.md`` files of ``entries``, once :attr:`full`; the
        concept files among them are counted as left out, unread."""
        dropped = self._skipped if self._skipped.count else self._by_size
        kept = []
        for entry in entries:
            if entry.path.rsplit("/", 1)[-1] in ("index.md", "log.md"):
                kept.append(entry)
            else:
                dropped.add(entry.path)
        return kept

    def links_left(self) -> int:
        return max(self.limits.max_links - self.links, 0)

    def keep_links(self, path: str, kept: int, cut: bool) -> None:
        """Count ``kept`` links of ``path``; ``cut`` when max_links left some out."""
        self.links += kept
        if cut and self._last_cut != path:  # a concept's body links, then its fields
            self._linkless.add(path)
            self._last_cut = path

    def report(self) -> list[tuple[str, str, str]]:
        """``(path, code, message)``: one warning per cap that left something out."""
        found = []
        for dropped, code, cap, what in (
            (self._skipped, "too_many_concepts", "max_concepts", "concept files were not loaded"),
            (
                self._by_size,
                "bodies_too_large",
                "max_body_chars",
                "concept files were not loaded (their bodies would not fit)",
            ),
            (
                self._linkless,
                "too_many_links_in_bundle",
                "max_links",
                "concepts lost some or all of their links",
            ),
        ):
            if dropped.count:
                value = getattr(self.limits, cap)
                found.append(
                    (
                        dropped.first,
                        code,
                        f"the bundle reached {cap}={value}: {dropped.count} {what}, from "
                        f"{dropped.first} on in path order. Raise the cap with "
                        f"Limits({cap}=...) when the machine has the memory for more.",
                    )
                )
        return found
