"""The concepts the ``grep_concepts`` tool searches, grouped once per bundle version.

Grouping a bundle's concepts by where their texts are kept
(:class:`~okfx.search.candidates.GrepSet`) is one Python step per concept; a server
greps the same bundle again and again, so the set is kept with the bundle it was built
from (weakly: it goes with the bundle) and built again when the bundle's concepts or its
name changed, as after a reload (which swaps in a new concepts mapping). The second
grep of a set starts the word index of its texts in the background
(:func:`~okfx.search.wordindex.index_in_background`): later greps for a word read it
instead of scanning every text. A process that greps once (``okfx grep``) never pays
for it; a server builds it as it starts (:func:`prepare_grep`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

from okfx.bundle.bundle import Bundle
from okfx.search.candidates import GrepSet
from okfx.search.corpus import Part
from okfx.search.wordindex import build_word_indexes, index_in_background

__all__ = ["grep_set", "prepare_grep", "text_parts"]

# bundle -> (its concepts mapping, its name, the set built from them)
_SETS: weakref.WeakKeyDictionary[Bundle, tuple[Any, str, GrepSet]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def grep_set(bundles: Sequence[Bundle]) -> GrepSet:
    """The concepts of ``bundles`` as one :class:`GrepSet`, from the kept sets."""
    return GrepSet.join([_one(bundle) for bundle in bundles])


def prepare_grep(bundles: Sequence[Bundle]) -> None:
    """Group the concepts of each of ``bundles`` for grep and build the word index of
    their texts, now (a server, before it answers or forks its workers)."""
    build_word_indexes(text_parts(bundles))


def text_parts(bundles: Sequence[Bundle]) -> list[Part]:
    """The parts (:class:`~okfx.search.corpus.Part`) that hold the texts grep searches in
    ``bundles``, from the kept sets (built now for a bundle that has none)."""
    return [part for bundle in bundles for part in _parts(_one(bundle, index=False))]


def _parts(built: GrepSet) -> list[Part]:
    return [part for corpus, _ in built.groups for part in corpus.parts]


def _one(bundle: Bundle, index: bool = True) -> GrepSet:
    concepts = bundle._concepts
    with _LOCK:
        kept = _SETS.get(bundle)
    if kept is not None and kept[0] is concepts and kept[1] == bundle.name:
        if index:
            index_in_background(_parts(kept[2]))
        return kept[2]
    built = GrepSet((bundle.name, c) for c in concepts.values())
    with _LOCK:
        _SETS[bundle] = (concepts, bundle.name, built)
    return built
