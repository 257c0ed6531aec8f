"""Embedders that talk to a service: an OpenAI-compatible ``/v1/embeddings`` endpoint.

Plugs into hybrid search as any :class:`okfx.search.embedder.Embedder` does::

    from okfx.adapters.embeddings import OpenAIEmbedder
    bundle.enable_semantic(OpenAIEmbedder("http://localhost:8080/v1", "nomic-embed-text"))

Only the standard library's HTTP client; numpy comes with ``okfx[semantic]``.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from okfx.search.embedder import normalized

__all__ = ["OpenAIEmbedder"]


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint: ``POST {base_url}/embeddings`` with
    ``{"model", "input"}``; ``base_url`` ends with ``/v1`` (``http://localhost:8080/v1``).
    ``dimension`` is read from the first answer when not given."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimension: int = 0,
        batch: int = 64,
        timeout: float = 60.0,
    ) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.model_id = f"openai-compatible:{model}"
        # Cached vectors are keyed by the endpoint too: two servers may give one model
        # name to different models (embeddings QA: the second reused the first's).
        parts = urlsplit(self.url)
        self.runtime = f"{parts.scheme}://{parts.hostname or ''}:{parts.port or ''}{parts.path}"
        self.dimension = dimension
        self._api_key, self._batch, self._timeout = api_key, batch, timeout

    def _post(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        request = urllib.request.Request(self.url, body, method="POST")
        request.add_header("Content-Type", "application/json")
        if self._api_key:
            request.add_header("Authorization", f"Bearer {self._api_key}")
        with urllib.request.urlopen(request, timeout=self._timeout) as response:
            answer = json.load(response)
        data = sorted(answer["data"], key=lambda row: row["index"])
        if len(data) != len(texts):
            raise ValueError(f"{self.url} returned {len(data)} vectors for {len(texts)} texts")
        return [row["embedding"] for row in data]

    def embed(self, texts: Sequence[str]) -> Any:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            rows.extend(self._post(list(texts[start : start + self._batch])))
        if not self.dimension and rows:
            self.dimension = len(rows[0])
        if rows and len(rows[0]) != self.dimension:
            raise ValueError(
                f"{self.url} returned vectors of {len(rows[0])} dimensions for model "
                f"{self.model!r}, where {self.dimension} were expected"
            )
        return normalized(rows, self.dimension)
