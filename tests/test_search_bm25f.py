"""BM25F arithmetic, the compact postings, and exactness of the pruned top-k."""

import math
import random
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest_search import FakeConcept, entries
from okfx.search import topk
from okfx.search.analyzer import analyze_query
from okfx.search.bm25f import FIELD_WEIGHTS, K1, build_postings, idf
from okfx.search.dense import COARSE_LEVELS, DenseVectors
from okfx.search.index import POSTING_ARRAYS, SearchIndex
from okfx.search.topk import Cap, top_k

THREE_DOCS = [
    {"title": "red apple", "body": "apple pie recipe"},
    {"title": "green pear", "body": "apple apple tart"},
    {"title": "fruit", "body": "pear"},
]


def test_bm25f_matches_a_hand_computed_three_document_example():
    # Default weights: title 3, body 0.5; no description or tags anywhere, so those
    # fields have no average length and add nothing. k1 = 1.2, b = 0.75.
    postings = build_postings(THREE_DOCS)
    apple, pear = postings.terms["apple"], postings.terms["pear"]

    # N = 3; "apple" is in d0 and d1, "pear" in d1 and d2: df = 2 for both.
    # idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6) = 0.4700036
    assert idf(3, 2) == pytest.approx(math.log(1.6))
    # Average lengths: title (2 + 2 + 1) / 3 = 5/3, body (3 + 3 + 1) / 3 = 7/3.
    # Length norms 1 - b + b * len / avg:
    #   title len 2: 0.25 + 0.75 * 2 / (5/3) = 1.15
    #   body len 3:  0.25 + 0.75 * 3 / (7/3) = 1.2142857
    #   body len 1:  0.25 + 0.75 * 1 / (7/3) = 0.5714286
    # apple in d0: x = 3 * 1 / 1.15 + 0.5 * 1 / 1.2142857 = 2.6086957 + 0.4117647 = 3.0204604
    #   score = 0.4700036 * 2.2 * 3.0204604 / (1.2 + 3.0204604) = 0.7400094
    assert postings.impact(apple, 0) == pytest.approx(0.7400094, abs=1e-6)
    # apple in d1 (body only, tf 2): x = 0.5 * 2 / 1.2142857 = 0.8235294
    #   score = 0.4700036 * 2.2 * 0.8235294 / 2.0235294 = 0.4208172
    assert postings.impact(apple, 1) == pytest.approx(0.4208172, abs=1e-6)
    # pear in d1 (title only): x = 3 / 1.15 = 2.6086957 -> 0.4700036 * 2.2 * 2.6086957 / 3.8086957
    assert postings.impact(pear, 1) == pytest.approx(0.7082246, abs=1e-6)
    # pear in d2 (body only, len 1): x = 0.5 / 0.5714286 = 0.875 -> ... * 0.875 / 2.075
    assert postings.impact(pear, 2) == pytest.approx(0.4360275, abs=1e-6)
    assert postings.impact(apple, 2) == 0.0
    # A query sums its terms: "apple pear" ranks d1 (0.4208 + 0.7082 = 1.1290) first.
    ranked = top_k(postings, [[(apple, 1.0)], [(pear, 1.0)]], 3, lambda d: None, [1.0] * 3)
    assert [doc for _, doc in ranked.hits] == [1, 0, 2]
    assert ranked.hits[0][0] == pytest.approx(1.1290418, abs=1e-6)


def reference_bm25(docs, query, k1=1.2, b=0.75):
    """Textbook BM25 (Robertson & Zaragoza 2009, with the (k1 + 1) numerator and
    Lucene's idf), written without any okfx code."""
    tokenized = [d.split() for d in docs]
    n = len(docs)
    avg = sum(len(t) for t in tokenized) / n
    scores = []
    for tokens in tokenized:
        tf = Counter(tokens)
        score = 0.0
        for term in set(query.split()):
            df = sum(1 for t in tokenized if term in t)
            if not tf[term]:
                continue
            term_idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            norm = 1 - b + b * len(tokens) / avg
            score += term_idf * tf[term] * (k1 + 1) / (tf[term] + k1 * norm)
        scores.append(score)
    return scores


# Words without plural relations or stopwords, so okfx analyses them as plain tokens.
VOCAB = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()


def random_corpus(rng, n_docs, longest=40):
    weights = [1 / (rank + 1) for rank in range(len(VOCAB))]
    return [" ".join(rng.choices(VOCAB, weights, k=rng.randint(1, longest))) for _ in range(n_docs)]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_one_field_bm25f_equals_reference_bm25(seed):
    rng = random.Random(seed)
    docs = random_corpus(rng, rng.randint(1, 40))
    query = " ".join(rng.sample(VOCAB, rng.randint(1, 4)))
    concepts = [FakeConcept(f"/d{i:03d}.md", body=text) for i, text in enumerate(docs)]
    # Coverage (docs/search.md) is okfx's own factor on top of BM25: off here.
    index = SearchIndex.build(entries(*concepts), weights={"body": 1.0}, coverage_floor=1.0)
    expected = reference_bm25(docs, query)
    results = index.search(query, limit=50)
    got = {hit.path: hit.score for hit in results}
    for i, score in enumerate(expected):
        if score > 0:
            assert got[f"/d{i:03d}.md"] == pytest.approx(score, abs=2e-4)
    assert len(results) == min(50, sum(1 for s in expected if s > 0))


def test_term_frequencies_above_255_are_counted_exactly():
    docs = ["alpha " * 300 + "bravo", "alpha bravo bravo", "charlie " * 700]
    concepts = [FakeConcept(f"/d{i}.md", body=text) for i, text in enumerate(docs)]
    index = SearchIndex.build(entries(*concepts), weights={"body": 1.0})
    for query in ("alpha", "charlie", "alpha bravo"):
        expected = reference_bm25(docs, query)
        ranked = top_k(
            index.postings,
            [index._forms(t) for t in analyze_query(query)],
            3,
            lambda d: None,
            index.multipliers,
        )
        got = {index.entries[doc][1].path: score for score, doc in ranked.hits}
        for i, score in enumerate(expected):
            if score > 0:
                # Float32 impacts: 2e-6 relative, tighter than one tf of 300 (2e-5).
                assert got[f"/d{i}.md"] == pytest.approx(score, rel=2e-6), query


def brute_force(postings, groups, k, accept, multiplier, floor=0.0):
    scored = []
    for doc in range(postings.n_docs):
        total = sum(
            max((w * postings.impact(t, doc) for t, w in group), default=0.0) for group in groups
        )
        score = multiplier[doc] * total
        if score > 0:
            scored.append((score, doc))
    scored.sort(key=lambda item: (-item[0], item[1]))
    admitted = [item for item in scored if accept(item[1]) is None]
    top = admitted[:k]
    theta = max(top[-1][0] if len(top) == k else 0.0, floor)
    top = [item for item in top if item[0] >= floor]
    hidden = Counter(accept(d) for s, d in scored if accept(d) is not None and s >= theta)
    return top, dict(hidden)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 1_000_000))
def test_top_k_equals_exhaustive_scoring(seed):
    rng = random.Random(seed)
    n_docs = rng.choice([5, 60, 400])
    # Short documents hold one query term but not the others: the case pruning must
    # not lose (a doc scoring on the "cheap" terms alone).
    longest = rng.choice([3, 8, 40])
    docs = [
        {"title": " ".join(rng.sample(VOCAB, rng.randint(0, 2))), "body": text}
        for text in random_corpus(rng, n_docs, longest)
    ]
    postings = build_postings(docs)
    multiplier = [rng.choice([1.0, 1.0, 1.0, 0.9, 0.8, 0.5, 0.45]) for _ in range(n_docs)]
    # A ceiling is any upper bound of the multiplier up to 1 (equal to it included): the
    # walks visit docs by it and must still return the exact answer. A cap bounds every
    # multiplier (and ceiling) by its scale but its exceptions' (every doc above the
    # scale, and a few below it): the walks stop by it, and visit the exceptions apart.
    scale = rng.choice([1.0, 0.9, 0.8, 0.5])
    exceptions = {d for d, m in enumerate(multiplier) if m > scale or rng.random() < 0.1}
    ceilings = [
        min(1.0 if d in exceptions else scale, m * rng.choice([1.0, 1.0, 1.1, 2.0]))
        for d, m in enumerate(multiplier)
    ]
    ceiling = rng.choice([None, ceilings.__getitem__])
    cap = rng.choice([None, Cap(scale, exceptions)])
    hiding = {d: rng.choice([None, None, None, "deprecated", "stale"]) for d in range(n_docs)}
    groups = []
    for word in rng.sample(VOCAB, rng.randint(1, 4)):
        forms = [(postings.terms[word], 1.0)] if word in postings.terms else []
        other = rng.choice(VOCAB)
        if rng.random() < 0.3 and other in postings.terms and other != word:
            # Variant weights can exceed 1 (rescaled to the typed form's idf).
            forms.append((postings.terms[other], rng.choice([0.95, 1.3, 2.2])))
        groups.append(forms)
    k = rng.choice([1, 3, 10])
    # read_all=0 forces the dense walk on small corpora too (with min_df=1 every term
    # has a vector; with 30 only the longer lists do, the rest are summed exactly).
    read_all = rng.choice([0, 0, 0, 10**9])
    dense = rng.choice([None, DenseVectors(postings, min_df=rng.choice([1, 30]))])
    # A small crowding limit sends sparse levels down the banded path too.
    # A small candidate budget makes the coarse walk hand over to the fine one, and
    # that one to reading everything.
    # A floor (the k-th score of a ranking this one is merged with) leaves out what
    # scores below it: none, one of the scores (ties at the floor stay), or any value.
    unfloored, _ = brute_force(postings, groups, k, hiding.__getitem__, multiplier)
    floor = rng.choice([0.0, 0.0, rng.uniform(0.0, 5.0), *(s for s, _ in unfloored[-2:])])
    with (
        patch.object(topk, "_CROWDED", rng.choice([0, 1, 4, 512])),
        patch.object(topk, "DENSE_CANDIDATES", rng.choice([0, 3, 2048, 2048])),
    ):
        got = top_k(
            postings,
            groups,
            k,
            hiding.__getitem__,
            multiplier,
            read_all=read_all,
            dense=dense,
            ceiling=ceiling,
            floor=floor,
            cap=cap,
        )
    want, want_hidden = brute_force(postings, groups, k, hiding.__getitem__, multiplier, floor)
    assert [doc for _, doc in got.hits] == [doc for _, doc in want]
    for (score, _), (expected, _) in zip(got.hits, want, strict=True):
        assert score == pytest.approx(expected, rel=1e-12)
    assert got.hidden == want_hidden


def test_field_weights_are_the_documented_ones():
    # The four fields of the spec we follow, plus okfx's own ``kind`` (type and folders).
    assert FIELD_WEIGHTS == {
        "title": 3.0,
        "tags": 2.5,
        "description": 2.0,
        "body": 0.5,
        "kind": 2.0,
    }
    assert K1 == 1.2


def test_unknown_field_weight_names_the_known_fields():
    with pytest.raises(ValueError, match="body"):
        build_postings([{"body": "x"}], weights={"summary": 1.0})


def test_dense_walk_finds_a_lower_bound_doc_that_beats_an_overestimated_one():
    # One anchor impact of 2046 makes a dense level worth exactly 1.0. Doc 0 holds three
    # terms whose rounded-up levels sum to 86 + 86 + 84 = 256 (high byte 1) while its
    # exact total is 254.1; doc 1 holds one term at 254.5, level 255 (high byte 0). The
    # walk meets doc 0 first, and must still read doc 1 from the lower level.
    from array import array

    from okfx.search.bm25f import Postings

    impacts = [85.05, 85.05, 84.0, 254.5, 2046.0]
    postings = Postings(
        terms={"a": 0, "b": 1, "c": 2, "d": 3, "anchor": 4},
        starts=array("q", [0, 1, 2, 3, 4, 5]),
        docs=array("i", [0, 0, 0, 1, 2]),
        impacts=array("f", impacts),
        upper=array("d", array("f", impacts)),
        idfs=array("d", [1.0] * 5),
        n_docs=3,
    )
    dense = DenseVectors(postings, min_df=1)
    assert dense.step == 1.0
    groups = [[(0, 1.0)], [(1, 1.0)], [(2, 1.0)], [(3, 1.0)]]
    ranked = top_k(postings, groups, 1, lambda d: None, [1.0] * 3, read_all=0, dense=dense)
    assert [doc for _, doc in ranked.hits] == [1]
    assert ranked.hits[0][0] == 254.5


def test_dense_fields_select_by_high_byte_and_low_byte_range():
    from okfx.search.dense import Fields

    values = [0, 5, 300, 511, 256, 70000 % 65536, 260]
    vector = sum(v << (16 * doc) for doc, v in enumerate(values))
    fields = Fields(vector, len(values))
    assert [fields.value(d) for d in range(len(values))] == values
    assert fields.has_level(1) and not fields.has_level(3)
    assert fields.values([6, 2, 0]) == [260, 300, 0]
    assert fields.level(1, limit=4) == [(300, 2), (511, 3), (256, 4), (260, 6)]
    assert fields.level(1, limit=3) is None  # more than the limit
    assert fields.level(3, limit=4) == []
    assert fields.between(1, 0, 255) == [(300, 2), (511, 3), (256, 4), (260, 6)]
    assert fields.between(1, 4, 44) == [(300, 2), (260, 6)]
    assert fields.between(0, 1, 255) == [(5, 1)]


def test_positions_lists_a_byte_value_up_to_a_limit():
    from okfx.search.dense import positions

    data = bytes([0, 7, 3, 7, 7, 0])
    assert positions(data, 7, 3) == [1, 3, 4]
    assert positions(data, 7, 2) is None  # more than the limit
    assert positions(data, 9, 0) == []
    assert positions(data, 3, 0) is None


def test_dense_vectors_round_impacts_up_and_skip_short_lists():
    rng = random.Random(11)
    postings = build_postings({"body": text} for text in random_corpus(rng, 300))
    dense = DenseVectors(postings, min_df=50)
    from okfx.search.dense import Fields

    for word in VOCAB:
        tid = postings.terms[word]
        docs, impacts = postings.postings(tid)
        if len(docs) < 50:
            assert not dense.eligible(tid)
            continue
        fields = Fields(dense.vector(tid), postings.n_docs)
        coarse = dense.coarse(tid).to_bytes(postings.n_docs, "little")
        for doc, impact in zip(docs, impacts, strict=True):
            assert impact <= dense.step * fields.value(doc) < impact + 2 * dense.step
            step = dense.coarse_step
            assert impact <= step * coarse[doc] < impact + 2 * step
            assert 1 <= coarse[doc] <= COARSE_LEVELS
        assert coarse.count(0) == postings.n_docs - len(docs)  # no posting, no level


def test_dense_vectors_stay_within_their_byte_budget():
    rng = random.Random(5)
    postings = build_postings({"body": text} for text in random_corpus(rng, 400))
    dense = DenseVectors(postings, min_df=1, budget_bytes=3 * 400)
    tids = list(postings.terms.values())[:6]
    for tid in tids:
        dense.vector(tid)  # 800 bytes each
        dense.coarse(tid)  # 400 bytes each
        assert dense._bytes <= 3 * 400
    # The most recent vectors are kept, and a cached one is the same object.
    assert dense.coarse(tids[-1]) is dense.coarse(tids[-1])


def reference_bm25f(docs, weights=FIELD_WEIGHTS, k1=1.2, b=0.75):
    """``{(term, doc): impact}`` computed field by field from :func:`tokenize`, the
    way the module docstring states BM25F, with none of the builder's packing."""
    from okfx.search.analyzer import tokenize

    fields = [f for f, w in weights.items() if w > 0]
    counts = [{f: Counter(tokenize(d.get(f, ""))) for f in fields} for d in docs]
    n = len(docs)
    avg = {f: sum(sum(c[f].values()) for c in counts) / n for f in fields}
    df = Counter(t for c in counts for t in set().union(*(c[f] for f in fields)))
    out = {}
    for doc, c in enumerate(counts):
        x = Counter()
        for f in fields:
            if avg[f] <= 0:
                continue
            norm = 1 - b + b * sum(c[f].values()) / avg[f]
            for term, tf in c[f].items():
                x[term] += weights[f] * tf / norm
        for term in set().union(*(c[f] for f in fields)):
            term_idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            out[term, doc] = term_idf * (k1 + 1) * x[term] / (k1 + x[term])
    return out


FIELD_WORDS = VOCAB + ["user_id", "userId", "BIP-0030", "n-day", "Straße", "a.b.c", "x", "!"]
# Plain ASCII bodies take the builder's lowercase path; these words make one term out of
# several chunks ("Alpha", "alpha.", "'alpha'", "0030" and "30", "user_id" and "user").
FOLDED_WORDS = VOCAB + [
    "Alpha", "ALPHA", "alpha.", "'alpha'", "alpha's.", "user_id", "user", "id", "0030",
    "30", "BIP-0030", "a.b.c", "-", "...", ".", "x",
]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 1_000_000))
def test_postings_equal_a_reference_bm25f_for_any_fields(seed):
    rng = random.Random(seed)
    docs = []
    for _ in range(rng.randint(1, 30)):
        doc = {}
        pool = FOLDED_WORDS if rng.random() < 0.6 else FIELD_WORDS
        for field in FIELD_WEIGHTS:
            if rng.random() < 0.7:
                words = rng.choices(pool, k=rng.randint(0, 12))
                if rng.random() < 0.05:
                    words += ["alpha"] * rng.randint(250, 600)  # tf over the packed cap
                if rng.random() < 0.05:  # over the cap only once its chunks are merged
                    words += ["alpha", "Alpha", "'alpha'"] * rng.randint(90, 200)
                doc[field] = " ".join(words)
        docs.append(doc)
    # Any eager_df: pending terms compute their impacts when read.
    postings = build_postings(docs, eager_df=rng.choice([0, 2, 5, 10**9]))
    want = reference_bm25f(docs)
    got = {}
    for term, tid in postings.terms.items():
        for doc, impact in zip(*postings.postings(tid), strict=True):
            got[term, doc] = impact
    assert got.keys() == want.keys()
    for key, impact in want.items():
        assert got[key] == pytest.approx(impact, rel=1e-6, abs=1e-7), key
        assert got[key] <= postings.upper[postings.terms[key[0]]]


def test_pending_terms_compute_once_and_agree_across_threads():
    rng = random.Random(7)
    docs = [{"body": " ".join(rng.choices(FOLDED_WORDS, k=40))} for _ in range(200)]
    eager = build_postings(docs)
    lazy = build_postings(docs, eager_df=10**9)
    assert lazy.terms == eager.terms
    assert lazy.docs != eager.docs  # pending slices still hold packed postings
    tids = list(lazy.terms.values())
    barrier = threading.Barrier(4)

    def read_all():
        barrier.wait()
        return [(list(d), list(i)) for d, i in map(lazy.postings, tids)]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: read_all(), range(4)))
    want = [(list(d), list(i)) for d, i in map(eager.postings, tids)]
    assert all(result == want for result in results)
    assert lazy.docs == eager.docs and lazy.impacts == eager.impacts
    assert lazy.upper == eager.upper and lazy.idfs == eager.idfs


def test_prepare_all_completes_the_arrays_a_state_cache_saves():
    docs = [{"body": f"alpha bravo w{i % 13}", "title": f"t{i % 3}"} for i in range(100)]
    eager = build_postings(docs)
    lazy = build_postings(docs, eager_df=50)
    some = [lazy.terms["w1"], lazy.terms["t2"]]
    lazy.prepare(some)
    assert lazy.docs != eager.docs
    lazy.prepare_all()
    assert (lazy.docs, lazy.impacts, lazy.upper) == (eager.docs, eager.impacts, eager.upper)


def test_a_stored_state_keeps_pending_terms_pending_and_they_finish_after_restore(tmp_path):
    import io
    from array import array

    from okfx.search.bm25f import Postings
    from okfx.statefile import StateFile, StateWriter

    rng = random.Random(3)
    docs = [
        {
            "title": " ".join(rng.choices(FOLDED_WORDS, k=3)),
            "description": rng.choice(FOLDED_WORDS),
            "body": " ".join(rng.choices(FOLDED_WORDS, k=30))
            + (" alpha" * 300 if i % 17 == 0 else ""),  # tf over the packed cap
        }
        for i in range(120)
    ]
    eager = build_postings(docs)
    lazy = build_postings(docs, eager_df=10**9)
    lazy.prepare([lazy.terms["alpha"], lazy.terms["bravo"]])  # some finished, most still pending
    state = lazy.pending_state()
    assert 0 < state["pending"].count(1) < len(lazy.terms)  # storing finished nothing
    arrays = {name: getattr(lazy, name) for name in POSTING_ARRAYS}
    writer = StateWriter("search")
    for name, value in {**arrays, **state}.items():
        if isinstance(value, array):
            writer.add_array(name, value)
        else:
            writer.add_json(name, value)
    writer.add_json("terms", list(lazy.terms))
    out = io.BytesIO()
    writer.write(out)
    file = StateFile(out.getvalue())
    saved = {n: file.json(n) if file.typecode(n) == "json" else file.array(n) for n in file.names}
    saved["terms"] = dict(zip(saved["terms"], range(len(saved["terms"])), strict=True))
    restored = Postings.restore(saved["terms"], saved, len(docs), saved)
    assert restored is not None
    tids = list(restored.terms.values())
    # Reads finish pending terms exactly as an eager build computes them.
    assert [restored.postings(t) for t in tids] == [eager.postings(t) for t in tids]
    assert (restored.docs, restored.impacts, restored.upper) == (
        eager.docs,
        eager.impacts,
        eager.upper,
    )
    # Nothing pending: the state says so, and restores as plain postings.
    done = restored.pending_state()
    assert len(done["pending"]) == 0
    assert Postings.restore(saved["terms"], saved, len(docs), done) is not None


def test_a_pending_state_that_does_not_fit_is_refused():
    from okfx.search.bm25f import Postings

    docs = [{"body": f"alpha w{i % 5}", "title": "t"} for i in range(20)]
    lazy = build_postings(docs, eager_df=10**9)
    arrays = {name: getattr(lazy, name) for name in POSTING_ARRAYS}
    good = lazy.pending_state()
    assert Postings.restore(lazy.terms, arrays, 20, good) is not None
    for bad in (
        {**good, "pending": good["pending"][:-1]},
        {**good, "factors": good["factors"][:-1]},
        {**good, "extra_heads": good["extra_heads"][:-1]},
        {**good, "extras": good["extras"][:-1]},
        {**good, "k1": "1.2"},
    ):
        assert Postings.restore(lazy.terms, arrays, 20, bad) is None
    assert Postings.restore(lazy.terms, arrays, 21, good) is None  # factors per doc
    short = {**arrays, "title_docs": arrays["title_docs"][:-1]}  # titles that do not fit
    assert Postings.restore(lazy.terms, short, 20, good) is None


def test_a_build_leaves_no_cyclic_garbage() -> None:
    """A long-lived process freezes what a load made (okfx.gcpause.freeze_after_loads):
    a cycle left by the build would keep its chunk cache and arrays for ever."""
    import gc

    from okfx.search.analyzer import ChunkCache

    docs = [{"body": f"user_id order {i} x86 e-mail", "title": f"t{i}"} for i in range(50)]
    gc.collect()
    build_postings(docs)
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        left = [
            type(o).__name__
            for o in gc.garbage
            if type(o).__module__ == "okfx.search.bm25f" or isinstance(o, ChunkCache)
        ]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []
