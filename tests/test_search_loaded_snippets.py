"""A hit's snippet comes from the texts its load kept (okfx.search.corpus), the texts its
index was built from, even when the concept's file changed since (a reload shows the
edit): the hits, and the tool payloads made of them, equal byte for byte those built by
reading ``concept.body`` and analysing the query again, on every kind of load."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from conftest import SAMPLE_NAMES, generated_bundle
from okfx import Bundle, KnowledgeManager, Toolbox
from okfx.bundle import state as state_module
from okfx.bundle.stored import FileStore
from okfx.search import corpus as corpus_module
from okfx.search import index as index_module
from okfx.search.hits import claims_nothing_last
from okfx.search.index import SearchIndex
from okfx.search.live import LiveIndex, updated

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 400-concept bundle from ../shared/bench/gen_bundle.py."""
    return generated_bundle(tmp_path_factory.mktemp("generated") / "okf-400", 400)


def _bundles(samples: Path, generated: Path) -> list[Path]:
    return [samples / name for name in SAMPLE_NAMES] + [generated]


def _queries(bundle: Bundle) -> list[str]:
    """Titles, description words and body words of every fifth concept, and a few
    identifiers and phrases: queries whose hits have snippets of every kind."""
    out = ["user id", "n_day_active_users", "daily revenue by store", "the"]
    for concept in sorted(bundle, key=lambda c: c.path)[::5]:
        out.append(concept.title)
        out.append(" ".join(concept.description.split()[:3]))
        words = [w for w in concept.body.split() if w.isalpha() and len(w) > 4]
        out.append(" ".join(words[7:9]))
    return [q for q in out if q.strip()]


@contextmanager
def _calls(method: str) -> Iterator[list[str]]:
    """The paths of the concepts that ``FileStore.<method>`` is called for."""
    seen: list[str] = []
    original = getattr(FileStore, method)

    def counted(store: FileStore, concept: Any) -> Any:
        seen.append(concept.path)
        return original(store, concept)

    with mock.patch.object(FileStore, method, counted):
        yield seen


def _file_reads() -> AbstractContextManager[list[str]]:
    """The concepts whose files are read again (``FileStore.read_now``)."""
    return _calls("read_now")


def _hits(bundle: Bundle, query: str) -> str:
    return json.dumps(bundle.search(query, limit=20, now=NOW).to_dict())


def _reference(bundle: Bundle, query: str) -> str:
    """The same search's hits as built before: the query analysed again for the hits,
    each snippet from ``concept.body``."""
    index = bundle.search_index()
    assert isinstance(index, SearchIndex)
    results = index.search(query, limit=20, now=NOW)
    docs = {(entry[0], entry[1].path): doc for doc, entry in enumerate(index.entries)}
    scored = [(hit.score, docs[hit.bundle, hit.path]) for hit in results]
    with mock.patch.object(index_module, "body_as_loaded", lambda concept, recent: concept.body):
        hits = claims_nothing_last(index.build_hits(query, scored, NOW))  # as rank() orders
    again = index_module.SearchResults(query, hits, results.hidden, results.notice)
    return json.dumps(again.to_dict())


def _loads(root: Path, cache: Path) -> Iterator[tuple[str, Bundle]]:
    yield "no state cache", Bundle.load(root, state_cache=False)
    yield "full parse", Bundle.load(root, state_cache=cache)
    yield "read back", Bundle.load(root, state_cache=cache)


@pytest.mark.samples
def test_hits_equal_those_built_from_the_files_and_read_no_file(
    samples: Path, generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The generated files are seconds old: within RACY_SECONDS of a load, a file is
    # parsed again by the next one, and the read-back load would keep two parts.
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)
    compared = 0
    for i, root in enumerate(_bundles(samples, generated)):
        for how, bundle in _loads(root, tmp_path / f"state{i}"):
            queries = _queries(bundle)
            bundle.search_index()  # a build reads every body, a search none
            with _file_reads() as read:
                ours = [_hits(bundle, q) for q in queries]
            assert read == [], (root.name, how)  # every snippet from the kept texts
            assert ours == [_reference(bundle, q) for q in queries], (root.name, how)
            compared += sum(len(json.loads(hits)["hits"]) for hits in ours)
            if how == "read back":  # a segment at a time: the whole file is not checked
                (part,) = bundle._store.corpus.parts
                assert part.unchecked and part._state is None
    assert compared > 2000


@pytest.mark.samples
def test_tool_payloads_equal_those_built_from_the_files(samples: Path, tmp_path: Path) -> None:
    manager = KnowledgeManager.from_paths(
        [samples / name for name in SAMPLE_NAMES], state_cache=tmp_path / "state"
    )
    box = Toolbox(manager)
    queries = [q for b in manager.bundles.values() for q in _queries(b)[:40]]
    ours = [json.dumps(box.search_concepts(query=q, limit=20)) for q in queries]
    with mock.patch.object(index_module, "body_as_loaded", lambda concept, recent: concept.body):
        theirs = [json.dumps(box.search_concepts(query=q, limit=20)) for q in queries]
    assert ours == theirs
    assert sum(payload.count('"snippet": "') for payload in ours) > 500


def _edited_copy(source: Path, tmp_path: Path) -> tuple[Path, Bundle, str, str]:
    """A copy of ``source`` read back from its state cache, a query, and the path of
    its first hit, whose file is then rewritten with a new first body line naming the
    query's words."""
    root = tmp_path / source.name
    shutil.copytree(source, root)
    past = time.time() - 60  # not just written: the load trusts the stamps
    for file in root.rglob("*"):
        os.utime(file, (past, past))
    cache = tmp_path / "state"
    Bundle.load(root, state_cache=cache)
    bundle = Bundle.load(root, state_cache=cache)
    concept = sorted(bundle, key=lambda c: c.path)[3]
    query = concept.title
    first = bundle.search(query, now=NOW)[0]  # the index read back or built here
    file = root / first.path.lstrip("/")
    head, _, body = file.read_text(encoding="utf-8").partition("\n---\n")
    file.write_text(f"{head}\n---\nEdited: {query} {query} now.\n{body}", encoding="utf-8")
    return root, bundle, query, first.path


def _stats() -> AbstractContextManager[list[str]]:
    """The concepts whose files are stat'ed (``FileStore.stamp_now``)."""
    return _calls("stamp_now")


@pytest.mark.samples
@pytest.mark.parametrize("name", ["ga4", "generated"])
def test_after_an_edit_the_snippet_is_the_loaded_text_until_a_reload(
    name: str, samples: Path, generated: Path, tmp_path: Path
) -> None:
    source = generated if name == "generated" else samples / name
    _, bundle, query, path = _edited_copy(source, tmp_path)
    with _file_reads() as read, _stats() as seen:
        ours = _hits(bundle, query)
    assert read == [] and seen == []  # no file read, no file stat'ed
    hit = next(h for h in json.loads(ours)["hits"] if h["path"] == path)
    assert not hit["snippet"].startswith("Edited: ")  # what the index was built from
    # (a long line is cut around its match, with an ellipsis at each cut end)
    assert hit["snippet"].strip("\u2026") in bundle.get(path).body or hit["snippet"] == ""
    reloaded = bundle.reload()
    first = json.loads(_hits(reloaded, query))["hits"][0]
    assert first["path"] == path and first["snippet"].startswith("Edited: ")
    assert _hits(reloaded, query) == _reference(reloaded, query)


@pytest.mark.samples
def test_a_damaged_segment_is_not_shown_and_its_texts_file_goes(
    samples: Path, tmp_path: Path
) -> None:
    root, cache = samples / "ga4", tmp_path / "state"
    Bundle.load(root, state_cache=cache)
    (texts,) = cache.glob("*.texts.okfs")
    bundle = Bundle.load(root, state_cache=cache)
    query = sorted(bundle, key=lambda c: c.path)[0].title
    expected = _reference(bundle, query)
    first = bundle.search(query, now=NOW)[0]
    # flip a byte of the first hit's segment, in the mapped file the load reads
    part = bundle._store.corpus.parts[0]
    seg = part.paths.index(first.path)
    data = bytearray(texts.read_bytes())
    at = data.index(bytes(part.view[part.bodies[seg] : part.starts[seg + 1]]))
    data[at + 1] ^= 0x01
    texts.write_bytes(bytes(data))
    damaged = Bundle.load(root, state_cache=cache)
    damaged.search_index()
    with _file_reads() as read:
        assert _hits(damaged, query) == expected
    assert first.path in read
    assert damaged._store.corpus.parts[0]._state is False
    assert not texts.exists()  # stored anew by a later load


def test_hits_of_a_reloaded_index_have_their_confidence(generated: Path) -> None:
    bundle = Bundle.load(generated, state_cache=False)
    index = bundle.search_index()
    assert isinstance(index, SearchIndex)
    concepts = sorted(bundle, key=lambda c: c.path)
    # the same concept dropped and added again: a live index (base + delta), same hits
    live = updated(index, [], [(bundle.name, concepts[10])], small=100)
    assert isinstance(live, LiveIndex)
    for query in _queries(bundle)[:30]:
        fresh = [(h.path, h.matched, h.snippet, h.confidence) for h in index.search(query)]
        assert [(h.path, h.matched, h.snippet, h.confidence) for h in live.search(query)] == (fresh)


@pytest.mark.samples
def test_a_kept_text_is_checked_against_its_crc_once(samples: Path, tmp_path: Path) -> None:
    root, cache = samples / "ga4", tmp_path / "state"
    Bundle.load(root, state_cache=cache).search_index()  # stores the index with the state
    bundle = Bundle.load(root, state_cache=cache)
    query = sorted(bundle, key=lambda c: c.path)[0].title
    bundle.search_index()  # read back: no body read, so no segment checked yet
    (part,) = bundle._store.corpus.parts
    sizes: list[int] = []
    crc32 = corpus_module.zlib.crc32

    def counted(data: Any, *rest: int) -> int:
        sizes.append(len(data))
        return crc32(data, *rest)

    with mock.patch.object(corpus_module.zlib, "crc32", counted):
        first = _hits(bundle, query)
        checked = len(sizes)
        assert _hits(bundle, query) == first
    assert checked == len(json.loads(first)["hits"]) > 1  # one per segment, each once
    assert len(sizes) == checked and part._state is None  # not the whole file


def test_a_list_of_short_values_shows_as_one_line_when_nothing_matched() -> None:
    """Hybrid QA: a codelist found by meaning alone showed "* ABS"; its values say what
    the page lists. A list of sentences keeps its first item as it was."""
    from okfx.search.snippets import best_line

    values = "* ABS\n* Asbestos Cement\n* Cast Iron\n\nUsed by pipes.\n"
    assert best_line(values, []) == "ABS · Asbestos Cement · Cast Iron"
    sentences = "- Each pipe records the material it is made of, from the list.\n- And more.\n"
    assert (
        best_line(sentences, []) == "- Each pipe records the material it is made of, from the list."
    )
