"""What a query's acronyms stand for, read from the bundle (okfx.search.acronyms), and
the hybrid search that gives the definitions to the embedding model."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest_search import NOW, FakeConcept, entries
from okfx.search import acronyms
from okfx.search.acronyms import Definitions, definitions_in, query_acronyms
from okfx.search.index import SearchIndex
from okfx.search.live import LiveIndex, updated


@pytest.mark.parametrize(
    ("text", "acronym", "meanings"),
    [
        ("Encrypt it with a customer-managed key (CMK) first.", "CMK", {"customer managed key"}),
        ("the Bureau of Labor Statistics (BLS) says", "BLS", {"bureau of labor statistics"}),
        ("Large language models (LLMs) answer.", "LLM", {"large language models"}),
        ("The NRR (net run rate) decides ties.", "NRR", {"net run rate"}),
        ("see **Unity Catalog** (UC) and `Unity Catalog (UC)`", "UC", {"unity catalog"}),
        # the shortest run of words that spells it, not the sentence before it
        ("We rely on the Azure Kubernetes Service (AKS) here", "AKS", {"azure kubernetes service"}),
        # no definition: initials differ, a sentence ends between, no brackets, a longer word
        ("a managed key (CMK)", "CMK", set()),
        ("Customer managed. Key (CMK)", "CMK", set()),
        ("CMK is used everywhere", "CMK", set()),
        ("x(CMKV) and ABCMK (net run rate)", "CMK", set()),
        ("XNRR (net run rate)", "NRR", set()),
        # a definition cut at the window's start is not read from half a word
        ("xx" + "customer" + " " * 140 + "managed key (CMK)", "CMK", set()),
        ("xx " + "customer" + " " * 140 + "managed key (CMK)", "CMK", {"customer managed key"}),
    ],
)
def test_definitions_in_text(text, acronym, meanings):
    assert definitions_in(text, acronym) == meanings


def test_query_acronyms():
    assert query_acronyms("CMK encryption for LLMs, and CMK keys?") == ["CMK", "LLM"]
    assert query_acronyms("(AKS) deploy") == ["AKS"]
    assert query_acronyms("Cmk or cmk or A or ABCDEFGHI") == []  # not capitals, too short/long
    assert query_acronyms("HOW DO I ROTATE A CMK") == []  # a query in capitals throughout
    assert query_acronyms("CMKs") == ["CMK"]  # but a query of one word is one acronym


def _index(*concepts):
    return SearchIndex.build(entries(*concepts))


KEY = FakeConcept("/keys.md", title="Keys", body="Use a customer-managed key (CMK) to encrypt.")
ALSO = FakeConcept("/more.md", title="More", body="Rotate the customer managed key (CMK) yearly.")
OTHER = FakeConcept("/other.md", title="Other", body="A cold media key (CMK) is another thing.")


def test_the_definition_most_concepts_give_wins():
    definitions = Definitions([(_index(KEY, ALSO, OTHER), frozenset())])
    assert definitions.meaning("CMK") == "customer managed key"
    assert definitions.expand("rotate a CMK yearly") == "rotate a CMK (customer managed key) yearly"
    assert definitions.expand("rotate CMKs, now") == "rotate CMKs, (customer managed key) now"


def test_a_tie_goes_to_the_first_definition_in_sorted_order():
    definitions = Definitions([(_index(KEY, OTHER), frozenset())])
    assert definitions.meaning("CMK") == "cold media key"


def test_no_definition_leaves_the_query_as_typed():
    index = _index(KEY, FakeConcept("/x.md", title="X", body="HMS holds the tables."))
    definitions = Definitions([(index, frozenset())])
    assert definitions.expand("turn off HMS") == "turn off HMS"  # held, never defined
    assert definitions.expand("what is XYZ") == "what is XYZ"  # not held at all
    assert definitions.expand("no acronym here") == "no acronym here"
    # the query already spells the definition out
    query = "CMK customer managed key rotation"
    assert definitions.expand(query) == query


def test_an_acronym_too_many_concepts_hold_is_not_looked_up(monkeypatch):
    many = [FakeConcept(f"/k{i}.md", title=f"K{i}", body=KEY.body) for i in range(5)]
    index = _index(*many)
    monkeypatch.setattr(acronyms, "MAX_HOLDERS", 5)
    assert Definitions([(index, frozenset())]).meaning("CMK") == "customer managed key"
    monkeypatch.setattr(acronyms, "MAX_HOLDERS", 4)
    assert Definitions([(index, frozenset())]).meaning("CMK") is None


def test_a_live_index_reads_its_current_concepts_as_a_fresh_index_does():
    base = _index(KEY, ALSO, OTHER)
    changed = FakeConcept("/more.md", title="More", body="A cold media key (CMK) again.")
    live = updated(base, [("b", "/more.md")], entries(changed), small=0, merge_fraction=1.0)
    assert isinstance(live, LiveIndex)
    parts = [(live.base, live.dropped), (live.delta, frozenset())]
    fresh = Definitions([(_index(KEY, changed, OTHER), frozenset())])
    assert fresh.meaning("CMK") == "cold media key"
    assert Definitions(parts).meaning("CMK") == fresh.meaning("CMK")


WORDS = st.text(alphabet="abcdeCMK -()().,", max_size=200)


@given(text=WORDS, acronym=st.sampled_from(["CMK", "CM", "KE"]))
def test_every_definition_found_spells_the_acronym(text, acronym):
    for meaning in definitions_in(text, acronym):
        words = meaning.split()
        assert 1 <= len(words) <= len(acronym) + 4
        initials = {
            "".join(w[0] for w in words),
            "".join(w[0] for w in words if w not in acronyms.INITIALISM_STOPWORDS),
        }
        assert acronym.casefold() in initials


@given(query=st.text(max_size=60))
def test_expanding_only_adds_bracketed_definitions(query):
    definitions = Definitions([(_index(KEY, ALSO), frozenset())])
    out = definitions.expand(query)
    if out != query:
        assert out.replace(" (customer managed key)", "") == " ".join(query.split())


def test_the_model_reads_the_definition_and_the_hits_the_query_as_typed(tmp_path, monkeypatch):
    """The embedding gets "CMK (customer managed key) ..." and finds the page that spells
    the key out without the acronym; matched terms and lexical scores are the typed
    query's. (The blend weighs the query by its share of matched words alone, without the
    floor for a query whose acronyms the best lexical hit holds.)"""
    pytest.importorskip("numpy", reason="hybrid search needs okfx[semantic] (numpy)")
    from okfx.search import hybrid
    from okfx.search.hybrid import HybridRanker, SemanticState
    from okfx.search.vectors import VectorStore
    from test_search_hybrid import ToyEmbedder

    spelled = FakeConcept("/spelled.md", title="Managed keys", body="Customer managed key setup.")
    index = _index(KEY, spelled, FakeConcept("/plain.md", title="Plain", body="Setup steps."))
    monkeypatch.setattr(hybrid, "ALPHA_ACRONYM", 0.0)
    embedder = ToyEmbedder()
    state = SemanticState(index, embedder, VectorStore(tmp_path))
    state.build()
    index.ranker = HybridRanker(state)
    lexical = {hit.path: hit.matched for hit in index.rank("CMK setup", now=NOW)}
    results = index.search("CMK setup", now=NOW)
    assert "CMK (customer managed key) setup" in embedder.texts
    assert (
        results.notice
        == "The embedding read CMK as 'customer managed key', as the bundle defines it."
    )
    assert results[0].path == "/spelled.md" and results[0].found == "both"
    for hit in results:
        assert hit.matched == lexical.get(hit.path, hit.matched)
        assert "customer" not in hit.matched


def test_the_lookups_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(acronyms, "_CACHE", 4)
    definitions = Definitions([(_index(KEY), frozenset())])
    for name in ["AA", "BB", "CC", "DD", "EE", "CMK"]:
        definitions.meaning(name)
    assert len(definitions._known) <= 4
    assert definitions.meaning("CMK") == "customer managed key"


def test_the_reading_is_said_in_one_sentence():
    assert acronyms.read_as({}) == ""
    assert acronyms.read_as({"CMK": "customer managed key", "UC": "unity catalog"}) == (
        "The embedding read CMK as 'customer managed key', UC as 'unity catalog', "
        "as the bundle defines them."
    )
