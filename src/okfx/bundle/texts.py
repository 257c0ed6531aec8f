"""Each load's concept texts for grep (:mod:`okfx.search.corpus`), kept beside its state.

A load that parses files collects the texts of the concepts it parses
(:class:`TextsBuilder`), appended in order to a :class:`~okfx.statecache.Spool` that
stays in memory while small and moves to an unnamed temporary file past
:data:`~okfx.statecache.SPOOL_BYTES` (so the texts are never on the Python heap whole,
and the file is mapped read-only: page cache). A full parse
stores them in the state cache as a *texts* state file beside the bundle's state: the
segments raw (:mod:`okfx.statefile` array sections, checked on first use rather than on
open), each segment's concept path and file stamp, and each segment's own CRC-32 (a
search's snippets read a few segments before the whole file is ever checked:
:meth:`~okfx.search.corpus.Part.intact`).

A load that reads the bundle's state back maps the texts file, and a segment serves the
concept with its path whose file had the same stamp when it was parsed; segments of
files parsed again come from that load's own parse. Concepts no segment serves (the texts
file is missing, or older than many of the concepts) are read from their files by grep
until a new texts file, written in the background once more than
:data:`STALE_FRACTION` of the concepts are not in the stored one, serves them at the
next start. A texts file whose bytes do not match their checksum is deleted when found
(and grep reads the files meanwhile).
"""

from __future__ import annotations

import logging
import zlib
from array import array
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from okfx.bundle.state import Parsed
from okfx.bundle.stored import FileStore, StoredConcept
from okfx.model import Concept
from okfx.search.corpus import Corpus, Part, head, one_line
from okfx.statecache import Spool, StateCache
from okfx.statefile import StateFile, StateFormatError, StateWriter

__all__ = [
    "STALE_FRACTION",
    "TEXTS_KIND",
    "TextsBuilder",
    "attach",
    "corpus_for",
    "read_part",
    "read_texts",
    "rebuilt",
]

logger = logging.getLogger("okfx")

TEXTS_KIND = "texts"
#: What this module stores; bumped when that changes (2: each segment's CRC-32).
TEXTS_FORMAT = 2
#: A new texts file is stored once more than this part of the concepts are not in it.
STALE_FRACTION = 0.05
_SIZE_MASK = (1 << 40) - 1  # a stamp is mtime << 40 | size (okfx.bundle.stored.stamp_of)
# The raw sections, checked when grep first reads them.
LAZY = ("data", "folded")


class TextsBuilder:
    """Collects the texts of concepts as a load parses them; ``full`` when the load
    parsed every file (then its texts are stored whole)."""

    def __init__(self, folder: str | None, full: bool = False) -> None:
        self.full = full
        self.data, self.folded = Spool(folder), Spool(folder)
        self.starts, self.bodies = array("q", [0]), array("q")
        self.mtimes, self.sizes, self.lines = array("q"), array("q"), array("i")
        self.crcs = array("I")
        self.ascii = bytearray()
        self.paths: list[str | None] = []
        self.fstarts, self.fids = array("q", [0]), array("i")

    def __len__(self) -> int:
        return len(self.paths)

    def add(self, concept: Concept, stamp: int, body: str | None = None, line: int = 0) -> None:
        """The texts of ``concept``, parsed from a file of ``stamp``: its body (or
        ``body``, starting on file line ``line``, read since)."""
        if body is None:
            body, line = concept.body, concept.body_line
        first = head(concept.title, concept.description)
        data = body.encode("utf-8", "surrogatepass")
        folded = None
        if not (first.isascii() and data.isascii()):
            text = f"\n{one_line(concept.title)}\n{one_line(concept.description)}\n{body}"
            folded = text.casefold().encode("utf-8", "surrogatepass")
        self.add_segment(concept.path, stamp, line, (first, data), folded)

    def add_segment(
        self,
        path: str,
        stamp: int,
        line: int,
        pieces: tuple[bytes | memoryview, bytes | memoryview],
        folded: bytes | None,
    ) -> None:
        """A segment given as its head and body bytes, and its casefold when not ASCII."""
        first, body = bytes(pieces[0]), bytes(pieces[1])
        at = self.starts[-1]
        self.data.append(first)
        self.data.append(body)
        self.bodies.append(at + len(first))
        self.starts.append(at + len(first) + len(body))
        self.mtimes.append(stamp >> 40)
        self.sizes.append(stamp & _SIZE_MASK)
        self.lines.append(line)
        self.crcs.append(zlib.crc32(body, zlib.crc32(first)))
        self.paths.append(path)
        self.ascii.append(folded is None)
        if folded is not None:
            self.folded.append(folded)
            self.fstarts.append(self.fstarts[-1] + len(folded))
            self.fids.append(len(self.paths) - 1)

    def part(self) -> Part:
        """The texts collected, for this process's searches."""
        return Part(
            self.data.region(),
            self.starts, self.bodies, (self.mtimes, self.sizes), self.lines, bytes(self.ascii),
            list(self.paths), self.folded.region(), self.fstarts, self.fids,
        )  # fmt: skip

    def writer(self, racy: Iterable[str] = ()) -> StateWriter:
        """The texts file; files modified too recently to trust their stat (``racy``)
        get no stamp, so no later load uses their texts."""
        skip = frozenset(racy)
        mtimes = array(
            "q", (-1 if p in skip else s for p, s in zip(self.paths, self.mtimes, strict=True))
        )
        writer = StateWriter(TEXTS_KIND, {"format": TEXTS_FORMAT})
        writer.add_chunks("data", self.data.read, self.data.size, self.data.crc)
        writer.add_chunks("folded", self.folded.read, self.folded.size, self.folded.crc)
        for name, values in (
            ("starts", self.starts), ("bodies", self.bodies), ("mtimes", mtimes),
            ("sizes", self.sizes),
            ("lines", self.lines), ("ascii", array("B", self.ascii)),
            ("fstarts", self.fstarts), ("fids", self.fids), ("crcs", self.crcs),
        ):  # fmt: skip
            writer.add_array(name, values)
        writer.add_json("paths", self.paths)
        return writer


def read_texts(
    cache: StateCache, key: str, concepts: Mapping[str, Concept], store: FileStore
) -> Part | None:
    """The stored texts of the bundle ``key`` names (see :func:`read_part`), or None
    without a usable texts file. One that fails its checksum when first searched is
    deleted (a later load stores a new one)."""
    with cache.open(key, TEXTS_KIND, lazy=LAZY) as file:
        if file is None:
            return None
        try:
            part = read_part(file, concepts, store)
        except StateFormatError as exc:
            logger.info("okfx texts state of %s rebuilt: %s", key, exc)
            return None
    part.on_broken = lambda: cache.discard(key, TEXTS_KIND)
    return part


def attach(
    store: FileStore,
    parsed: Parsed,
    builder: TextsBuilder | None,
    stored: Part | None,
    stale: int,
    folder: str | None,
) -> tuple[Callable[[], StateWriter] | None, int]:
    """Give the concepts ``store`` made their texts: those the load parsed
    (``builder``), the others from the stored texts file (``stored``). Returns what to
    store in the state cache, if anything (after a full parse; or the texts of the whole
    bundle once more than :data:`STALE_FRACTION` of its concepts are not in the stored
    file), and how many are not in it (``stale`` before this load, plus this load's)."""
    parts = [stored] if stored is not None else []
    if builder is not None and len(builder):
        parts.append(builder.part())
    corpus, missing = corpus_for(store, parsed.concepts.values(), parts)
    store.corpus = corpus
    racy = parsed.manifest.racy
    if builder is not None and builder.full:
        if racy.issuperset(parsed.manifest.paths):
            return None, 0  # every file was just written: the bundle's state is not stored
        return (lambda: builder.writer(racy)), 0
    stale += missing + (len(builder) if builder is not None else 0)
    if stale <= STALE_FRACTION * len(parsed.concepts):
        return None, stale
    concepts: list[Any] = list(parsed.concepts.values())
    return (lambda: rebuilt(concepts, folder).writer(racy)), 0


def read_part(file: StateFile, concepts: Mapping[str, Concept], store: object) -> Part:
    """The texts ``file`` holds, each segment serving the concept of ``concepts`` with
    its path that ``store`` made from a file of the same stamp (the others serve none).
    Raises :class:`~okfx.statefile.StateFormatError` when the file does not fit."""
    if file.kind != TEXTS_KIND or file.meta.get("format") != TEXTS_FORMAT:
        raise StateFormatError("not a texts state of this format")
    paths = file.json("paths")
    if not isinstance(paths, list) or not all(type(p) is str for p in paths):
        raise StateFormatError("the texts' paths are malformed")
    n = len(paths)
    arrays = {
        name: file.view(name, code)
        for name, code in (
            ("starts", "q"), ("bodies", "q"), ("mtimes", "q"), ("sizes", "q"), ("lines", "i"),
            ("ascii", "B"), ("fstarts", "q"), ("fids", "i"), ("crcs", "I"),
        )
    }  # fmt: skip
    starts, bodies, fids = arrays["starts"], arrays["bodies"], arrays["fids"]
    data, folded = file.region("data"), file.region("folded")
    if any(
        len(arrays[name]) != n for name in ("bodies", "mtimes", "sizes", "lines", "ascii", "crcs")
    ):
        raise StateFormatError("the texts' columns differ in length")
    _check_bounds(starts, n, data[2])
    _check_bounds(arrays["fstarts"], len(fids), folded[2])
    if not all(s < b <= e for s, b, e in zip(starts[:-1], bodies, starts[1:], strict=True)):
        raise StateFormatError("a body lies outside its segment")
    if any(not 0 <= i < n for i in fids):
        raise StateFormatError("a folded segment names no segment")
    stamps = (arrays["mtimes"], arrays["sizes"])
    served: list[str | None] = []
    for path, mtime, size in zip(paths, *stamps, strict=True):
        concept = concepts.get(path)
        stamp = mtime << 40 | size
        fits = (
            isinstance(concept, StoredConcept)
            and stamp >= 0
            and concept.stamp == stamp
            and concept._store is store
        )
        served.append(concept.path if fits and concept is not None else None)
    unchecked = [(r[:3], r[3]) for r in (data, folded) if r[3] is not None]
    return Part(
        data[:3], starts, bodies, stamps, arrays["lines"], arrays["ascii"], served,
        folded[:3], arrays["fstarts"], fids, unchecked, arrays["crcs"],
    )  # fmt: skip


def _check_bounds(starts: memoryview, n: int, size: int) -> None:
    if len(starts) != n + 1 or starts[0] != 0 or starts[n] != size:
        raise StateFormatError("the texts' segments do not cover their section")
    if not all(a < b for a, b in zip(starts[:-1], starts[1:], strict=True)):
        raise StateFormatError("the texts' segments are out of order")


def corpus_for(
    store: FileStore, concepts: Iterable[Concept], parts: list[Part]
) -> tuple[Corpus, int]:
    """The corpus of the concepts ``store`` made, from ``parts`` (later ones win a
    path), and how many of those concepts no part serves."""
    later: set[str] = set()
    for part in reversed(parts):
        paths = part.paths
        for i, path in enumerate(paths):
            if path is not None and path in later:
                paths[i] = None  # a later part holds the concept as parsed since
        later.update(p for p in paths if p is not None)
    mine = [c.path for c in concepts if getattr(c, "_store", None) is store]
    missing = frozenset(p for p in mine if p not in later) if len(later) < len(mine) else None
    return Corpus(parts, missing or frozenset()), len(missing or ())


def rebuilt(concepts: Iterable[StoredConcept], folder: str | None) -> TextsBuilder:
    """A builder holding the texts of ``concepts`` (a whole bundle): copied from the
    parts that serve them, else read from their file when it still has the concept's
    stamp (a concept whose file changed since is left out: the next load parses it)."""
    builder = TextsBuilder(folder, full=True)
    for concept in concepts:
        store = concept._store
        found = store.corpus.locate(concept.path) if store.corpus is not None else None
        if found is None or not found[0].check():
            yaml_text, body, stamp = store.read_now(concept)
            if stamp == concept.stamp and yaml_text:
                builder.add(concept, stamp, body, yaml_text.count("\n") + 3)
            continue
        part, seg = found
        start, body_at, end = part.starts[seg], part.bodies[seg], part.starts[seg + 1]
        folded = None
        if not part.ascii[seg]:
            j = _folded_index(part, seg)
            folded = bytes(memoryview(part.fbuffer)[
                part.fbase + part.fstarts[j] : part.fbase + part.fstarts[j + 1]
            ])  # fmt: skip
        builder.add_segment(
            concept.path,
            part.stamp(seg),
            part.lines[seg],
            (part.view[start:body_at], part.view[body_at:end]),
            folded,
        )
    return builder


def _folded_index(part: Part, seg: int) -> int:
    from bisect import bisect_left

    j = bisect_left(part.fids, seg)
    if j >= len(part.fids) or part.fids[j] != seg:
        raise StateFormatError("a non-ASCII segment has no casefolded copy")
    return j
