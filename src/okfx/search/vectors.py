"""Concept vectors for semantic search, computed once and kept on disk.

:class:`VectorStore` is a folder of files, one per embedding model, that map a concept's
content digest (sha256 of the text the model reads, :func:`concept_text`) to its vector.
A restart, or a change to 1% of the files, encodes only the concepts whose text changed.
The format is data only, never pickle::

    b"OKFXVEC" + format byte | u32 header length | header (JSON: model, dimension,
    count, sha256 of the payload) | count x 32-byte digests | count x dimension float32

A file is written to a temporary name in the same folder and renamed over the old one
(atomic), in a folder made by :func:`okfx.cachedir.private_dir` (0700, refused when
another user could write or redirect it); a file whose checksum, model or dimension does
not match is ignored and rebuilt.

:class:`VectorIndex` holds one unit vector per entry of a
:class:`~okfx.search.index.SearchIndex`, in its doc-id order.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from okfx.cachedir import private_dir, user_cache_root
from okfx.errors import SemanticUnavailable
from okfx.search.embedder import Embedder, normalized, require
from okfx.search.filters import ConceptLike

__all__ = [
    "DEFAULT_MAX_CONCEPTS",
    "FORMAT",
    "VectorIndex",
    "VectorStore",
    "concept_text",
    "default_store",
]

FORMAT = 1
_MAGIC = b"OKFXVEC"
#: Semantic search refuses bundles with more concepts than this unless told otherwise
#: (``max_concepts``, ``okfx ... --semantic-max``): encoding 100k concepts takes hours.
DEFAULT_MAX_CONCEPTS = 20_000
#: Body characters a concept contributes to its text (the model reads 256 word pieces).
BODY_CHARS = 600
_DIGEST = 32
# Concepts are encoded in batches of this many, so progress can be reported.
_STEP = 64

Progress = Callable[[int, int], None]  # (done, total)


def concept_text(concept: ConceptLike) -> str:
    """What the model reads of a concept: title, type, tags, description, body start."""
    tags = ", ".join(concept.tags)
    body = " ".join(concept.body[:BODY_CHARS].split())
    return f"{concept.title}. {concept.type}. {tags}. {concept.description}\n{body}"


def _digest(model_id: str, text: str) -> bytes:
    return hashlib.sha256(f"{model_id}\0{text}".encode()).digest()


def default_store() -> VectorStore:
    """The store under the user's cache folder (``OKFX_CACHE_HOME`` and the like)."""
    return VectorStore(user_cache_root() / "vectors")


class VectorStore:
    """Vectors by (model, content digest), one file per model in ``folder``."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()

    def _file(self, model_id: str) -> Path:
        name = hashlib.sha256(model_id.encode()).hexdigest()[:32]
        return self.folder / f"{name}.vec"

    def load(self, model_id: str, dimension: int) -> dict[bytes, Any]:
        """``digest -> vector`` of everything stored for this model; {} when the file is
        missing, damaged or for another dimension."""
        np = require("numpy")
        try:
            raw = self._file(model_id).read_bytes()
        except OSError:
            return {}
        try:
            if raw[: len(_MAGIC) + 1] != _MAGIC + bytes([FORMAT]):
                return {}
            at = len(_MAGIC) + 1
            (size,) = struct.unpack_from("<I", raw, at)
            header = json.loads(raw[at + 4 : at + 4 + size])
            payload = memoryview(raw)[at + 4 + size :]
            count, dim = int(header["count"]), int(header["dimension"])
            if header["model"] != model_id or dim != dimension:
                return {}
            if hashlib.sha256(payload).hexdigest() != header["sha256"]:
                return {}
            if len(payload) != count * (_DIGEST + 4 * dim):
                return {}
            keys = bytes(payload[: count * _DIGEST])
            matrix = np.frombuffer(payload[count * _DIGEST :], dtype="<f4").reshape(count, dim)
        except (ValueError, KeyError, TypeError, struct.error):
            return {}
        return {keys[i * _DIGEST : (i + 1) * _DIGEST]: matrix[i] for i in range(count)}

    def save(self, model_id: str, dimension: int, vectors: dict[bytes, Any]) -> None:
        """Write ``vectors`` for this model, atomically (temporary file, then rename)."""
        np = require("numpy")
        keys = list(vectors)
        matrix = np.asarray([vectors[k] for k in keys], dtype="<f4").reshape(-1, dimension)
        payload = b"".join(keys) + matrix.tobytes()
        header = json.dumps(
            {
                "model": model_id,
                "dimension": dimension,
                "count": len(keys),
                "sha256": hashlib.sha256(payload).hexdigest(),
            }
        ).encode()
        with self._lock:
            folder = private_dir(self.folder)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".vec")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(_MAGIC + bytes([FORMAT]) + struct.pack("<I", len(header)))
                    out.write(header)
                    out.write(payload)
                os.replace(tmp, self._file(model_id))
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise


class VectorIndex:
    """One unit vector per entry, in the entries' order (a float32 matrix)."""

    def __init__(self, model_id: str, matrix: Any, encoded: int) -> None:
        self.model_id = model_id
        self.matrix = matrix
        #: How many concepts this build had to encode (the rest came from the store).
        self.encoded = encoded

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes)

    @classmethod
    def build(
        cls,
        concepts: Sequence[ConceptLike],
        embedder: Embedder,
        store: VectorStore | None = None,
        *,
        progress: Progress | None = None,
        max_concepts: int | None = DEFAULT_MAX_CONCEPTS,
    ) -> VectorIndex:
        """Vectors for ``concepts``: from ``store`` when their text is unchanged, encoded
        otherwise (and then stored). Raises :class:`SemanticUnavailable` over
        ``max_concepts`` (None: no cap)."""
        np = require("numpy")
        if max_concepts is not None and len(concepts) > max_concepts:
            raise SemanticUnavailable(
                f"semantic search is capped at {max_concepts:,} concepts and this has "
                f"{len(concepts):,}; encoding them could take hours on a CPU. Raise the cap "
                "(max_concepts=, or --semantic-max N) to encode them anyway, once: the "
                "vectors are cached."
            )
        model, dim = embedder.model_id, embedder.dimension
        texts = [concept_text(c) for c in concepts]
        keys = [_digest(model, t) for t in texts]
        known = store.load(model, dim) if store is not None and dim else {}
        missing = list(dict.fromkeys(k for k in keys if k not in known))  # each text once
        first = {k: i for i, k in reversed(list(enumerate(keys)))}
        done = 0
        if progress is not None:
            progress(0, len(missing))
        for start in range(0, len(missing), _STEP):
            batch = missing[start : start + _STEP]
            rows = embedder.embed([texts[first[k]] for k in batch])
            dim = embedder.dimension
            for key, row in zip(batch, normalized(rows, dim), strict=True):
                known[key] = row
            done += len(batch)
            if progress is not None:
                progress(done, len(missing))
        matrix = np.zeros((len(keys), dim), dtype=np.float32)
        for i, key in enumerate(keys):
            matrix[i] = known[key]
        if store is not None and missing:
            store.save(model, dim, known)
        return cls(model, matrix, len(missing))
