"""Hybrid search's fast path ranks exactly as the plain computation it replaces.

The fast path (okfx.search.hybrid) ranks the lexical side once without building its hits,
takes the hidden counts from what that one pass examined, picks the embedding's
candidates with a partition instead of sorting every concept, takes each concept's best
chunk row with two gathers (``np.maximum.reduceat`` when a concept has more than two
rows) and keeps query vectors. The reference below
does each step the plain way: two lexical searches with their hits, a Python loop over
every concept's rows, a full sort.
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest_search import NOW, FakeConcept, entries

np = pytest.importorskip("numpy", reason="hybrid search needs okfx[semantic] (numpy)")

from okfx.search import hybrid  # noqa: E402
from okfx.search.analyzer import analyze_query  # noqa: E402
from okfx.search.bm25f import STATUS_MULTIPLIERS  # noqa: E402
from okfx.search.filters import ConceptFilter  # noqa: E402
from okfx.search.hybrid import CANDIDATES, HybridRanker, Semantic  # noqa: E402
from okfx.search.index import SearchIndex  # noqa: E402
from okfx.search.live import updated  # noqa: E402
from okfx.search.vectors import (  # noqa: E402
    CHUNK_BLEND,
    VectorIndex,
    VectorStore,
    nearest,
    products,
)
from okfx.search.versions import release_family, version_key  # noqa: E402
from test_search_hybrid import ToyEmbedder  # noqa: E402

WORDS = [f"w{i}" for i in range(40)] + ["karma", "reputation", "users", "table", "billing"]


def corpus(seed: int, n: int = 150) -> list[FakeConcept]:
    rng = random.Random(seed)

    def text(size: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(size))

    # some pages kept once per release (/guides/3.1/c4.md, /guides/3.2/c4.md): copies
    # of one page share the embedding's slot and similarity
    used: set[str] = set()

    def path(i: int) -> str:
        folder = rng.choice(["tables", "metrics", "guides"])
        copy = f"/{folder}/{rng.choice(['3.1', '3.2', '3.10'])}/c{i % 12}.md"
        if rng.random() < 0.3 and copy not in used:
            used.add(copy)
            return copy
        return f"/{folder}/c{i}.md"

    return [
        FakeConcept(
            path(i),
            title=text(rng.randint(1, 3)),
            description=text(rng.randint(0, 5)),
            body=text(rng.choice([4, 30, 160, 700])),  # up to four chunks
            tags=tuple(rng.sample(["x", "y"], rng.randint(0, 2))),
            type=rng.choice(["Table", "Metric"]),
            status=rng.choice(["stable"] * 5 + ["draft", "deprecated"]),
            stale_after=rng.choice([None, None, NOW]),
        )
        for i in range(n)
    ]


def reference(ranker: HybridRanker, query: str, limit: int, **filters):
    """The hybrid ranking, computed the plain way: ``[(path, found, score)]``, hidden."""
    spec = ConceptFilter.create(now=NOW, **filters)
    index = ranker.index
    lexical = index.rank(query, max(limit, hybrid.LEXICAL_CANDIDATES), now=NOW, **filters)
    lex = {hit.path: hit.score for hit in lexical}
    best = max(lex.values(), default=0.0)
    terms = [t.text for t in analyze_query(query)]
    alpha = hybrid.ALPHA_MIN
    if terms and len(lexical):
        # every term the best hit matched (a hit lists no one-letter part of "w1")
        held = next(
            part.index.matched(query, doc)
            for part in ranker._parts
            for doc, (_, c) in enumerate(part.index.entries)
            if c.path == lexical[0].path and doc not in part.dropped
        )
        share = sum(t in held for t in terms) / len(terms)
        alpha += (hybrid.ALPHA_MAX - hybrid.ALPHA_MIN) * share**hybrid.ALPHA_POWER
    embedder = ranker.state.embedder
    q = embedder.embed([query])[0].astype(np.float32)
    q /= np.linalg.norm(q) or 1.0
    # Every current concept's value, keyed (part, doc) as the ranker orders ties.
    value, concept_of = {}, {}
    for at, part in enumerate(ranker._parts):
        vectors = part.state.vectors
        rows = vectors.matrix @ q
        ends = [*vectors.starts.tolist()[1:], len(rows)]
        for doc, (bundle, concept) in enumerate(part.index.entries):
            if doc in part.dropped:
                continue
            own = [rows[i] for i in range(vectors.starts[doc], ends[doc])]
            blended = own[0] + np.float32(CHUNK_BLEND) * (max(own) - own[0])
            value[at, doc] = blended * np.float32(STATUS_MULTIPLIERS.get(concept.status, 1.0))
            concept_of[at, doc] = (bundle, concept)
    ordered = sorted(value, key=lambda key: (-value[key], key))[: 4 * CANDIDATES]

    def page(path: str) -> object:  # the copies of a page in release folders are one
        family = release_family(path)
        return path if family is None else family

    dense, hidden_dense, pages = {}, [], []
    for key in ordered:
        verdict = spec.reason(*concept_of[key])
        path = concept_of[key][1].path
        if verdict is not None:
            hidden_dense.append((float(value[key]), verdict))
        elif page(path) in pages or len(pages) < CANDIDATES:
            dense[path] = float(value[key])
            pages += [] if page(path) in pages else [page(path)]
    paths = {concept.path: key for key, (_, concept) in concept_of.items()}
    firsts = {}  # each page's best value sets the scale
    for path, v in dense.items():
        firsts[page(path)] = max(v, firsts.get(page(path), v))
    low, high = (min(firsts.values()), max(firsts.values())) if dense else (0.0, 1.0)
    spread = max(high - low, 1e-6)
    similar = {path: dense.get(path, float(value[paths[path]])) for path in lex.keys() | dense}
    best_copy = {}
    for path, v in similar.items():
        if release_family(path) is not None:
            best_copy[page(path)] = max(v, best_copy.get(page(path), v))
    scored = {
        path: (alpha * lex.get(path, 0.0) / best if best > 0 else 0.0)
        + (1 - alpha) * max(best_copy.get(page(path), similar[path]) - low, 0.0) / spread
        for path in similar
    }
    ranked = sorted(scored, key=lambda path: (-scored[path], paths[path]))
    # tied copies of a page: newest first, in their family's places
    for start in range(len(ranked)):
        for end in range(start + 1, len(ranked)):
            a, b = ranked[start], ranked[end]
            if scored[a] == scored[b] and release_family(a) == release_family(b) is not None:
                if version_key(a.split("/")[2]) < version_key(b.split("/")[2]):
                    ranked[start], ranked[end] = b, a
    top = ranked[:limit]
    theta = scored[top[-1]] if len(top) == limit else 0.0
    if len(top) < limit:
        hidden = dict(lexical.hidden)
    else:
        hidden = dict(index.rank(query, limit, now=NOW, **filters).hidden)
    counted = {}
    for v, verdict in hidden_dense:
        if (1 - alpha) * (v - low) / spread >= theta and v > low:
            counted[verdict] = counted.get(verdict, 0) + 1
    for verdict, n in counted.items():
        hidden[verdict] = max(hidden.get(verdict, 0), n)
    found = {
        path: "both" if path in lex and path in dense else "lexical" if path in lex else "semantic"
        for path in top
    }
    ranking = [(path, found[path], round(scored[path], 4)) for path in top]
    return sorted(ranking, key=lambda hit: (-hit[2], hit[0])), hidden


QUERIES = ["karma", "w1 w2", "users table", "reputation of users", "w3", "zzz", "billing w7 w8 w9"]
FILTERS = [{}, {"type": "Table"}, {"include_deprecated": True}, {"include_stale": False}]


def check(ranker: HybridRanker) -> int:
    """Compare every query, filter and limit; returns how many hits were compared."""
    compared = 0
    for query in QUERIES:
        for filters in FILTERS:
            for limit in (1, 5, 10, 30):
                results = ranker.search(query, limit=limit, now=NOW, **filters)
                got = [(hit.path, hit.found, hit.score) for hit in results]
                expected, hidden = reference(ranker, query, limit, **filters)
                assert got == expected, (query, filters, limit)
                assert results.hidden == hidden, (query, filters, limit)
                compared += len(got)
    return compared


@pytest.mark.parametrize("seed", [1, 2])
def test_the_fast_path_ranks_as_the_plain_computation(tmp_path, seed):
    index = SearchIndex.build(entries(*corpus(seed)))
    ranker = Semantic(ToyEmbedder(), store=VectorStore(tmp_path)).attach(index)
    assert ranker is not None and ranker.state.vectors is not None
    assert len(ranker.state.vectors.matrix) > len(index) + 50  # chunks are in play
    assert check(ranker) > 500
    # Asked again, the query vectors come from the cache: the same answers.
    assert check(ranker) > 500


def test_the_fast_path_ranks_as_the_plain_computation_over_a_live_index(tmp_path):
    concepts = corpus(3)
    semantic = Semantic(ToyEmbedder(), store=VectorStore(tmp_path))
    base = SearchIndex.build(entries(*concepts))
    semantic.attach(base)
    changed = [
        FakeConcept(c.path, title=f"{c.title} karma", body=c.body, type=c.type)
        for c in concepts[:10]
    ]
    drop = [("b", c.path) for c in concepts[10:20]]
    live = updated(base, drop, entries(*changed), small=0, merge_fraction=1.0)
    ranker = semantic.attach(live)
    assert ranker is not None and len(ranker._parts) == 2
    assert check(ranker) > 500


def test_a_query_is_encoded_once():
    embedder = ToyEmbedder()
    index = SearchIndex.build(entries(*corpus(4, n=20)))
    ranker = Semantic(embedder, store=None).attach(index)
    assert ranker is not None
    embedder.texts.clear()
    first = ranker.search("karma users", now=NOW)
    again = ranker.search("karma users", now=NOW, limit=3)
    assert embedder.texts == ["karma users"]
    assert [hit.path for hit in again] == [hit.path for hit in first][:3]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([-np.inf, -1.0, 0.0, 0.25, 0.5, 1.0]), max_size=60), st.integers(1, 70)
)
def test_nearest_is_a_stable_sort_cut_short(values, m):
    array = np.asarray(values, dtype=np.float32)
    expected = np.argsort(-array, kind="stable")[:m]
    assert nearest(array, m).tolist() == expected.tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=40), st.integers(0, 2**32 - 1))
def test_a_concepts_rows_blend_as_the_loop_over_them(counts, seed):
    # Concepts of one or two rows take two gathers, any with three a reduceat: both
    # give every concept the loop's value, bit for bit.
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((sum(counts), 8)).astype(np.float32)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    vectors = VectorIndex("toy", matrix, starts, 0)
    query = rng.standard_normal(8).astype(np.float32)
    rows = products(vectors.matrix, query)  # the rows' products as similarities has them
    expected = []
    for first, count in zip(starts.tolist(), counts, strict=True):
        own = rows[first : first + count]
        expected.append(own[0] + np.float32(CHUNK_BLEND) * (own.max() - own[0]))
    got = vectors.similarities(query)
    assert (vectors._pairs is None) == (max(counts) > 2)
    assert got.dtype == np.float32
    assert got.tobytes() == np.asarray(expected, dtype=np.float32).tobytes()
