"""Plain BM25 as a baseline: one combined field, ``\\w+`` lowercase tokens, no
identifier splitting, no plural forms, no field weights. k1 = 1.2, b = 0.75.

Written independently of :mod:`okfx.search.bm25f` so the comparison measures the design
(fields, analyzer), not a shared implementation.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class PlainBM25:
    def __init__(self, entries: Iterable[tuple[str, Any]], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.ids: list[str] = []
        self.deprecated: list[bool] = []
        self.postings: dict[str, list[tuple[int, int]]] = {}
        self.lengths: list[int] = []
        for doc, (bundle, concept) in enumerate(entries):
            text = " ".join(
                [concept.title, " ".join(concept.tags), concept.description, concept.body]
            )
            tokens = words(text)
            self.ids.append(f"{bundle}:{concept.path}")
            self.deprecated.append(concept.status == "deprecated")
            self.lengths.append(len(tokens))
            for term, tf in Counter(tokens).items():
                self.postings.setdefault(term, []).append((doc, tf))
        self.avg = sum(self.lengths) / max(len(self.lengths), 1)

    def search(
        self, query: str, limit: int = 10, include_deprecated: bool = False
    ) -> Sequence[tuple[str, float]]:
        n = len(self.ids)
        scores: dict[int, float] = {}
        for term in set(words(query)):
            postings = self.postings.get(term, [])
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for doc, tf in postings:
                norm = 1 - self.b + self.b * self.lengths[doc] / self.avg
                gain = idf * tf * (self.k1 + 1) / (tf + self.k1 * norm)
                scores[doc] = scores.get(doc, 0.0) + gain
        ranked = sorted(
            ((s, d) for d, s in scores.items() if include_deprecated or not self.deprecated[d]),
            key=lambda item: (-item[0], self.ids[item[1]]),
        )
        return [(self.ids[d], s) for s, d in ranked[:limit]]
