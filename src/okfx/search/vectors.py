"""Concept vectors for semantic search, computed once and kept in the state cache.

:class:`VectorStore` keeps, per embedding model, one state file (:mod:`okfx.statefile`,
kind ``vectors``) in the state cache (:mod:`okfx.statecache`) that maps a text's digest
(sha256 of the model id and the text the model read, :func:`concept_texts`) to its
vector. A restart, or a change to 1% of the files, encodes only the texts that changed.
The file is what every state file is: raw arrays with a CRC-32 each, checked before use,
never pickle; written to a temporary name and renamed; in the cache's private folder
(0700, refused when another user could write or redirect it); a file whose checksum,
model or dimension does not fit is ignored and rebuilt. Unlike a bundle's state, its key
leaves out okfx's own code digest: a vector depends on the model and the text only, so an
okfx upgrade keeps them (encoding 100k concepts takes hours). Several processes may add
to one file: a save re-reads it under the cache's per-key lock and merges.

Sections: ``digests`` (count x 32 bytes) and ``vectors`` (count x dimension float32, in
native byte order, which the key names); meta: ``model``, ``dimension``, ``count``.

:class:`VectorIndex` holds the vectors of a :class:`~okfx.search.index.SearchIndex`'s
entries, in its doc-id order: one or more per concept (:func:`concept_texts`), scored by
its head's similarity moved halfway (:data:`CHUNK_BLEND`) towards its best text's.
"""

from __future__ import annotations

import hashlib
import os
import time
from array import array
from collections.abc import Callable, Collection, Sequence
from functools import cached_property
from typing import Any

from okfx.codeblocks import without_comments, without_html_tags
from okfx.errors import SemanticUnavailable
from okfx.search.cjk import mostly_cjk
from okfx.search.embedder import Embedder, normalized, require
from okfx.search.filters import ConceptLike, aliases_of
from okfx.search.parallel import alongside
from okfx.search.scoring import new_names
from okfx.statecache import StateCache, resolve
from okfx.statefile import StateFormatError, StateWriter, native_order

__all__ = [
    "DEFAULT_MAX_CONCEPTS",
    "ENCODE_BATCH",
    "SAVE_EVERY",
    "VECTORS_KIND",
    "VectorIndex",
    "VectorStore",
    "concept_texts",
    "default_store",
    "nearest",
    "products",
]

#: The state-file kind of a vector store.
VECTORS_KIND = "vectors"
#: Semantic search refuses bundles with more concepts than this unless told otherwise
#: (``max_concepts``, ``okfx ... --semantic-max``): encoding 100k concepts takes hours.
DEFAULT_MAX_CONCEPTS = 20_000
_DIGEST = 32
#: Body characters the head text of a concept holds (the model reads 256 word pieces).
HEAD_BODY_CHARS = 600
#: Body characters of each further chunk (about the model's 256 word pieces of prose), and
#: how many chunks a concept gets at most: the encode cost of a concept, and the rows a
#: query reads, grow with it (:func:`concept_texts`).
CHUNK_CHARS = 900
MAX_CHUNKS = 1
#: How far a concept's similarity moves from its head's towards its best chunk's.
CHUNK_BLEND = 0.5
#: Texts are encoded in batches of this many, so progress can be reported.
ENCODE_BATCH = 64
#: Seconds of encoding between two saves of what is encoded so far: a stopped encode
#: keeps its work but for the last minute's.
SAVE_EVERY = 60.0
#: Rows from which :func:`products` splits its pass in two (below, handing half to
#: another thread costs about what it saves).
SPLIT_ROWS = 8192

Progress = Callable[[int, int], None]  # (done, total)


def stored_id(embedder: Any) -> str:
    """What an embedder's vectors are stored under: its ``model_id``, and the runtime
    that computed them when it names one (an optional ``runtime`` attribute). The same
    model under another onnxruntime gives vectors a little apart (0.0005 to 0.004 nDCG@5
    on the tuning sets, session 63), so a cache written by an older runtime is not mixed
    with the query vectors of a newer one: its texts are encoded again, once."""
    runtime = getattr(embedder, "runtime", "")
    return (
        f"{embedder.model_id}\0{runtime}"
        if isinstance(runtime, str) and runtime
        else embedder.model_id
    )


def _digest(model_id: str, text: str) -> bytes:
    return hashlib.sha256(f"{model_id}\0{text}".encode("utf-8", "surrogatepass")).digest()


def default_store() -> VectorStore | None:
    """The store in the default state cache (``$OKFX_STATE_CACHE``, default on); None
    when the state cache is turned off (vectors are then encoded every run)."""
    cache = resolve(None)
    return None if cache is None else VectorStore(cache)


class VectorStore:
    """Vectors by (model, text digest): one state file per model in a state cache."""

    def __init__(self, cache: StateCache | str | os.PathLike[str]) -> None:
        self.cache = cache if isinstance(cache, StateCache) else StateCache(cache)

    @staticmethod
    def key(model_id: str) -> str:
        """The state-file key of a model's vectors (model and byte order, not okfx's
        code: see the module docstring)."""
        text = f"okfx-vectors\0{model_id}\0{native_order()}"
        return hashlib.sha256(text.encode()).hexdigest()[:40]

    def path(self, model_id: str) -> os.PathLike[str]:
        return self.cache.path(self.key(model_id), VECTORS_KIND)

    def dimension(self, model_id: str) -> int:
        """The dimension of the vectors stored for this model; 0 when there are none (an
        embedder that learns its dimension from its first answer reads the cache with
        it: embeddings QA, every restart sent a whole bundle to the endpoint again)."""
        with self.cache.open(self.key(model_id), VECTORS_KIND) as file:
            if file is None or file.meta.get("model") != model_id:
                return 0
            found = file.meta.get("dimension")
        return found if type(found) is int and found > 0 else 0

    def load(self, model_id: str, dimension: int) -> dict[bytes, Any]:
        """``digest -> vector`` of everything stored for this model; {} when there is no
        file, or it is damaged or for another model or dimension."""
        np = require("numpy")
        with self.cache.open(self.key(model_id), VECTORS_KIND) as file:
            if file is None:
                return {}
            meta = file.meta
            try:
                count = meta["count"]
                if meta.get("model") != model_id or meta.get("dimension") != dimension:
                    return {}
                keys = bytes(file.view("digests", "B"))
                rows = file.view("vectors", "f")
                if type(count) is not int or len(keys) != count * _DIGEST:
                    return {}
                if len(rows) != count * dimension:
                    return {}
                matrix = np.array(rows, dtype=np.float32).reshape(count, dimension)
            except (KeyError, StateFormatError):
                return {}
        return {keys[i * _DIGEST : (i + 1) * _DIGEST]: matrix[i] for i in range(count)}

    def save(self, model_id: str, dimension: int, vectors: dict[bytes, Any]) -> bool:
        """Add ``vectors`` to this model's file (merged with what another process stored
        meanwhile, under the key's lock), atomically; False when it cannot be written."""
        np = require("numpy")
        key = self.key(model_id)
        with self.cache.lock(key):
            merged = {**self.load(model_id, dimension), **vectors}
            keys = list(merged)
            matrix = np.asarray([merged[k] for k in keys], dtype=np.float32)
            writer = StateWriter(
                VECTORS_KIND, {"model": model_id, "dimension": dimension, "count": len(keys)}
            )
            writer.add_array("digests", array("B", b"".join(keys)))
            rows: array[float] = array("f")
            rows.frombytes(matrix.reshape(-1, dimension).tobytes())
            writer.add_array("vectors", rows)
            return self.cache.store(key, VECTORS_KIND, writer)


def concept_texts(concept: ConceptLike) -> list[str]:
    """What the model reads of a concept: its head (title, with the aliases that add a
    word to it, type, tags, description and the start of its body,
    :data:`HEAD_BODY_CHARS`), then up to :data:`MAX_CHUNKS` more chunks of the body
    (about :data:`CHUNK_CHARS` each, cut at words), each led by the title
    (:meth:`VectorIndex.similarities` says how a concept is scored from them).

    The budget bounds the cost: a concept is at most ``1 + MAX_CHUNKS`` texts of at most
    256 word pieces each, however long its body."""
    title = concept.title
    # what a reader of the page sees: no comment, tag, style or script (hybrid QA: CSS
    # words made Chinese pages read as English, first for any off-topic English query)
    words = without_html_tags(without_comments(concept.body)).split()
    head_words, size = [], 0
    for word in words:
        if size >= HEAD_BODY_CHARS:
            break
        head_words.append(word)
        size += len(word) + 1
    tags = ", ".join(concept.tags)
    aliases = new_names(aliases_of(concept), (title,))
    named = f"{title} ({', '.join(aliases)})" if aliases else title  # "Virtual host (vhost)"
    head = f"{named}. {concept.type}. {tags}. {concept.description}\n{' '.join(head_words)}"
    texts = [head]
    chunk: list[str] = []
    size = 0
    for word in words[len(head_words) :]:
        if len(texts) > MAX_CHUNKS:
            return texts
        chunk.append(word)
        size += len(word) + 1
        if size >= CHUNK_CHARS:
            texts.append(f"{title}. {' '.join(chunk)}")
            chunk, size = [], 0
    if chunk and len(texts) <= MAX_CHUNKS:
        texts.append(f"{title}. {' '.join(chunk)}")
    return texts


def products(matrix: Any, vector: Any, *, split_rows: int | None = None) -> Any:
    """``matrix @ vector`` (float32), by numpy's own loop (``einsum``) rather than BLAS,
    split in two halves run at once (:func:`okfx.search.parallel.alongside`) from
    ``split_rows`` rows (default :data:`SPLIT_ROWS`); each row's product is the same
    either way, bit for bit. BLAS (OpenBLAS) keeps its threads busy-waiting for a while
    after each call: they took a core from the work that follows (the next query's encode
    and lexical side) and from other processes. The two halves read 20,000 x 384 in 2.5
    ms, BLAS 2.9 ms, one ``einsum`` 3.6 ms (numbers from this machine, 2 cores)."""
    np = require("numpy")
    n = len(matrix)
    out = np.empty(n, dtype=np.float32)
    if n < (SPLIT_ROWS if split_rows is None else split_rows) or n < 2:
        np.einsum("ij,j->i", matrix, vector, out=out)
        return out
    half = n // 2
    alongside(
        lambda: np.einsum("ij,j->i", matrix[:half], vector, out=out[:half]),
        lambda: np.einsum("ij,j->i", matrix[half:], vector, out=out[half:]),
    )
    return out


def nearest(values: Any, m: int) -> Any:
    """The indexes of the ``m`` largest ``values``, largest first, equal values by
    index: ``argsort(-values, kind="stable")[:m]`` without sorting every value (one
    partition, then a sort of the ``m`` kept)."""
    np = require("numpy")
    n = len(values)
    if n <= m:
        kept = np.arange(n)
    else:
        kth = np.partition(values, n - m)[n - m]  # the m-th largest
        above = np.flatnonzero(values > kth)
        kept = np.concatenate((above, np.flatnonzero(values == kth)[: m - len(above)]))
    return kept[np.lexsort((kept, -values[kept]))]


class VectorIndex:
    """The vectors of a :class:`~okfx.search.index.SearchIndex`'s entries, in doc-id
    order: ``matrix`` holds every text's unit vector (:func:`concept_texts`), a concept's
    rows together, and ``starts[doc]`` is its first row."""

    def __init__(
        self, model_id: str, matrix: Any, starts: Any, encoded: int, foreign: Any = None
    ) -> None:
        self.model_id = model_id
        self.matrix = matrix
        self.starts = starts
        #: How many concepts this build had to encode (the rest came from the store).
        self.encoded = encoded
        #: The concepts written in a script the model cannot read (its ``scripts``): a
        #: boolean per concept, or None when there is none. Such a concept is never one
        #: of the embedding's own candidates (agent QA: with a Chinese vault beside an
        #: English bundle, "what is the population of France" got Chinese pages first
        #: "by meaning"); found lexically, its similarity still counts, as the English
        #: type and tags of a Japanese page say something (ScalarDB's decision guide).
        self.foreign = foreign

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes + self.starts.nbytes)

    def similarities(self, vector: Any, *, split: bool = True) -> Any:
        """Per concept, the cosine similarity of its head with the unit ``vector`` moved
        :data:`CHUNK_BLEND` of the way to its best text's (a float32 array in doc-id
        order): a passage deep in the body counts, without letting a long body's many
        chunks outscore a concept whose head is about the query. ``split``: the product
        may run in two halves at once (:func:`products`); False when another piece of the
        search already runs beside it."""
        np = require("numpy")
        if not len(self.starts):
            return np.zeros(0, dtype=np.float32)
        rows = products(self.matrix, vector, split_rows=None if split else len(self.matrix) + 1)
        if len(rows) == len(self.starts):
            return rows
        head = rows[self.starts]
        pairs = self._pairs
        if pairs is not None:  # at most two rows a concept: two gathers beat a reduceat
            best = head.copy()
            best[pairs[0]] = np.maximum(head[pairs[0]], rows[pairs[1]])
        else:
            best = np.maximum.reduceat(rows, self.starts)
        blended: Any = head + CHUNK_BLEND * (best - head)
        return blended

    @cached_property
    def _pairs(self) -> tuple[Any, Any] | None:
        """When no concept has more than two rows (:data:`MAX_CHUNKS` 1): the concepts
        with two, and their second rows; else None."""
        np = require("numpy")
        counts = np.diff(np.append(self.starts, len(self.matrix)))
        if len(counts) and int(counts.max()) > 2:
            return None
        twos = np.flatnonzero(counts == 2)
        return twos, self.starts[twos] + 1

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
        ``max_concepts`` (None: no cap). ``progress(done, total)`` counts texts."""
        np = require("numpy")
        model, dim = stored_id(embedder), embedder.dimension
        per_concept = [concept_texts(c) for c in concepts]
        texts = [text for group in per_concept for text in group]
        counts = [len(group) for group in per_concept]
        starts = np.zeros(len(counts), dtype=np.int64)
        if counts:
            starts[1:] = np.cumsum(counts)[:-1]
        keys = [_digest(model, t) for t in texts]

        def holding(some: Collection[bytes]) -> int:
            """How many concepts have a text among the digests ``some``."""
            owner = np.repeat(np.arange(len(counts)), counts)
            return len({int(owner[i]) for i, key in enumerate(keys) if key in some})

        if store is not None and not dim:
            dim = store.dimension(model)
        known = store.load(model, dim) if store is not None and dim else {}
        first = {k: i for i, k in reversed(list(enumerate(keys)))}
        # Each text once, longest first: batches of similar lengths pad little.
        missing = sorted(
            dict.fromkeys(k for k in keys if k not in known), key=lambda k: -len(texts[first[k]])
        )
        if max_concepts is not None and len(concepts) > max_concepts:
            # The cap bounds the encode, not the index: concepts whose vectors are all
            # cached cost nothing (embeddings QA: two bundles of 67 and 94 concepts, all
            # cached, were refused under a cap of 100 "for about a minute" of encoding).
            to_encode = holding(set(missing))
            if to_encode > max_concepts:
                cached = len(concepts) - to_encode
                raise SemanticUnavailable(
                    f"semantic search is capped at {max_concepts:,} concepts to encode and "
                    f"this index has {to_encode:,} to encode"
                    + (f" ({cached:,} more have their vectors cached)" if cached else "")
                    + f"; encoding them takes {_encode_time(to_encode)} on two CPU cores (4 "
                    "to 40 concepts a second with the default model, by the texts' length "
                    "and the machine's load). Raise the cap (max_concepts=, or "
                    "--semantic-max N) to encode them anyway, once: the vectors are cached; "
                    "or search fewer bundles at once.",
                    capped=True,
                )
        fresh: dict[bytes, Any] = {}
        unsaved: dict[bytes, Any] = {}
        done = 0
        saved_at = time.monotonic()
        if progress is not None:
            progress(0, len(missing))
        for start in range(0, len(missing), ENCODE_BATCH):
            batch = missing[start : start + ENCODE_BATCH]
            rows = embedder.embed([texts[first[k]] for k in batch])
            dim = embedder.dimension
            for key, row in zip(batch, normalized(rows, dim), strict=True):
                fresh[key] = unsaved[key] = row
            done += len(batch)
            if progress is not None:
                progress(done, len(missing))
            if store is not None and time.monotonic() - saved_at > SAVE_EVERY:
                # A long encode keeps its work as it goes (embeddings QA: one stopped
                # after 10 minutes left nothing, and the next run began again).
                store.save(model, dim, unsaved)
                unsaved, saved_at = {}, time.monotonic()
        matrix = np.zeros((len(keys), dim), dtype=np.float32)
        for i, key in enumerate(keys):
            matrix[i] = fresh[key] if key in fresh else known[key]
        if store is not None and unsaved:
            store.save(model, dim, unsaved)
        encoded = 0
        if fresh:
            encoded = holding(fresh.keys())
        foreign = None
        scripts = getattr(embedder, "scripts", None)
        if scripts is not None and "cjk" not in scripts:
            flags = np.array([mostly_cjk(group[0]) for group in per_concept], dtype=bool)
            foreign = flags if flags.any() else None
        return cls(embedder.model_id, matrix, starts, encoded, foreign)


def _encode_time(concepts: int) -> str:
    """About how long the default model takes to encode ``concepts`` on two cores: 26 s
    per 1,000 concepts on a quiet machine (docs/search.md) to 270 s on a busy one with
    long pages (3.7 a second: embeddings QA, skupper's 312 concepts)."""
    low, high = concepts * 26 / 1000, concepts * 270 / 1000
    if high < 90:
        return "about a minute or less"
    if high < 5400:
        return f"about {max(round(low / 60), 1)} to {round(high / 60)} minutes"
    if low < 3600:
        return f"about {max(round(low / 60), 1)} minutes to {high / 3600:.1f} hours"
    return f"about {low / 3600:.1f} to {high / 3600:.1f} hours"
