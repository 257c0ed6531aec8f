import string
import unicodedata
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from okfx.search.analyzer import (
    MAX_QUERY_TERMS,
    VARIANT_WEIGHT,
    ChunkCache,
    analyze_chunk,
    analyze_query,
    count_terms,
    folded_chunks,
    plural_variants,
    split_chunks,
    tokenize,
)


def test_snake_case_identifier_yields_parts_and_joined_form():
    assert tokenize("user_pseudo_id") == ["user", "pseudo", "id", "userpseudoid"]


def test_camel_case_meets_snake_case_through_the_joined_form():
    assert set(tokenize("userPseudoId")) == set(tokenize("user_pseudo_id"))
    assert set(tokenize("PostTypeId")) == set(tokenize("post_type_id"))


def test_acronym_followed_by_word_splits_before_the_word():
    assert tokenize("HTTPServer") == ["http", "server", "httpserver"]


def test_dotted_path_yields_segment_and_whole_joined_forms():
    terms = tokenize("event_params.value.int_value")
    assert {"event", "params", "value", "int"} <= set(terms)
    assert {"eventparams", "intvalue", "eventparamsvalueintvalue"} <= set(terms)
    assert tokenize("a.b.c") == ["a", "b", "c", "abc"]


def test_all_spellings_of_n_day_active_users_share_their_words():
    spellings = ["n day active users", "N-Day active users", "n_day_active_users"]
    words = {"n", "day", "active", "users"}
    for text in spellings:
        assert words <= set(tokenize(text)), text


def test_bip_number_matches_with_and_without_leading_zeros_or_hyphen():
    assert tokenize("BIP-0030") == ["bip", "30", "bip30"]
    assert tokenize("BIP30") == ["bip", "30", "bip30"]


def test_letters_and_digits_split_but_stay_joined():
    assert tokenize("ga4") == ["ga", "4", "ga4"]


def test_numeric_compounds_keep_parts_without_a_joined_number():
    assert tokenize("2026-07-01") == ["2026", "7", "1"]
    assert tokenize("1.5") == ["1", "5"]


def test_nfkc_and_casefold_normalise_ligatures_width_and_sharp_s():
    assert tokenize("ﬁle ＡＢＣ Straße") == ["file", "abc", "strasse"]


def test_non_ascii_punctuation_separates_without_joining():
    assert tokenize("Comments↔Posts") == ["comments", "posts"]
    assert tokenize("cost — margin") == ["cost", "margin"]


def test_possessive_s_is_dropped():
    assert tokenize("Acme's policy") == ["acme", "policy"]
    assert tokenize("It is Acme's.") == ["it", "is", "acme"]


def test_sentence_punctuation_is_not_part_of_a_word():
    assert tokenize("Users. (see: revenue!)") == ["users", "see", "revenue"]


def test_count_terms_counts_every_occurrence_and_the_length():
    counts, length = count_terms("Users users user_id", ChunkCache())
    assert counts == {"users": 2, "user": 1, "id": 1, "userid": 1}
    assert length == 5


@given(st.text(max_size=300))
def test_count_terms_agrees_with_tokenize_for_any_text(text):
    counts, length = count_terms(text, ChunkCache())
    tokens = tokenize(text)
    assert counts == Counter(tokens)
    assert length == len(tokens)


def test_folded_chunks_lowercase_plain_ascii_and_drop_sentence_dots():
    assert folded_chunks("The users. The USERS of GA4.\nDone.") == (
        "the users the users of ga4 done.".split()
    )


def test_folded_chunks_refuse_mixed_case_runs_and_non_ascii():
    for text in ("userId", "HTTPServer", "aB", "Straße", "café users"):
        assert folded_chunks(text) is None, text
    assert folded_chunks("Ga4Users O'Brien BIP-0030 n_day") is not None


# ASCII pieces that stress case, dots, joiners, digits and possessives.
_ASCII_PIECES = st.sampled_from(
    "The the THE. the. 'the' Acme's Acme's. user_id USER_ID userId HTTPServer aB Ab AB "
    "a.b.c a.b. ... . - -x x- 0030 30 ga4 Ga4Users n-day e.g. x's.y 1.5 2026-07-01 "
    "(see: revenue!) \n \t".split(" ")
    + [" ", "\n", ". ", ".\n"]
)


@given(st.lists(_ASCII_PIECES | st.text(st.characters(max_codepoint=127), max_size=8)))
def test_folded_chunks_give_the_same_terms_as_the_text(pieces):
    text = "".join(pieces)
    chunks = folded_chunks(text)
    if chunks is None:
        return
    folded = [term for chunk in chunks for term in analyze_chunk(chunk)]
    assert Counter(folded) == Counter(tokenize(text))


@given(st.text("ab09_-.'A", max_size=14))
def test_chunk_cache_fast_paths_agree_with_analyze_chunk(chunk):
    if chunk:
        cached = ChunkCache()[chunk]
        got = (cached,) if isinstance(cached, str) else cached
        assert got == analyze_chunk(chunk)


def test_identifier_fast_path_covers_snake_kebab_and_file_names():
    from okfx.search.analyzer import _identifier_terms

    assert _identifier_terms("not_a_link.md") == analyze_chunk("not_a_link.md")
    assert _identifier_terms("zait-0038") == ("zait", "38", "zait38")
    assert _identifier_terms("int64") is None  # letters and digits in one part
    assert _identifier_terms("a__b") is None


def test_plural_rules_cover_s_es_and_ies_both_ways():
    assert plural_variants("users") == ["user"]
    assert "query" in plural_variants("queries")
    assert "box" in plural_variants("boxes")
    assert plural_variants("query") == ["queries"]
    assert plural_variants("class") == ["classes"]
    assert plural_variants("user") == ["users"]
    assert plural_variants("day") == ["days"]


def test_plural_rules_leave_short_words_and_non_words_alone():
    assert plural_variants("is") == []
    assert plural_variants("ga4") == []
    assert "statu" not in plural_variants("status")


def test_query_term_weights_typed_form_above_variant():
    (term,) = analyze_query("users")
    assert dict(term.forms) == {"users": 1.0, "user": VARIANT_WEIGHT}


def test_singular_and_plural_in_one_query_merge_into_one_term():
    (term,) = analyze_query("user users")
    assert dict(term.forms) == {"user": 1.0, "users": 1.0}


def test_stopwords_are_dropped_from_queries_unless_nothing_else_is_left():
    texts = [t.text for t in analyze_query("how do I compute the gross margin?")]
    assert texts == ["compute", "gross", "margin"]
    assert [t.text for t in analyze_query("the")] == ["the"]


def test_punctuation_only_query_has_no_terms():
    assert analyze_query('"(*)" -- !!') == []


def test_very_long_query_keeps_a_bounded_number_of_terms():
    query = " ".join(f"word{i}x" for i in range(500))
    assert len(analyze_query(query)) == MAX_QUERY_TERMS


@given(st.text())
def test_any_query_string_analyses_without_error(query):
    for term in analyze_query(query):
        assert term.text
        assert all(0 < weight <= 1.0 for _, weight in term.forms)


_QUERY_WORDS = st.sampled_from(
    ["site", "assets", "to", "its", "the", "of", "a", "each", "and", "cost", "sales", "x1"]
)


@given(st.lists(_QUERY_WORDS, max_size=12))
def test_linked_names_are_forms_of_both_words_for_any_run_of_words(words):
    """Two words with a linking word among up to three function words between them share
    the name they make; no run of words makes the query analysis fail."""
    terms = analyze_query(" ".join(words))
    owners: dict[str, set[str]] = {}
    for term in terms:
        for form, _ in term.forms:
            owners.setdefault(form, set()).add(term.text)
    for form, texts in owners.items():
        if "to" in form and form.startswith("site") and form.endswith(("asset", "assets")):
            assert texts == {"site", "assets"}


@given(st.text())
def test_split_chunks_split_at_ascii_punctuation_in_any_text(text):
    # split_chunks translates UTF-8 bytes (fast for text that is not all ASCII); this
    # is the character table it stands for, lone surrogates included.
    table = str.maketrans({c: " " for c in string.punctuation if c not in "_-.'"})
    normal = text if text.isascii() else unicodedata.normalize("NFKC", text)
    normal = "".join(map(_latin_base, normal))  # Latin letters lose their diacritics
    assert split_chunks(text) == normal.translate(table).split()


def _latin_base(char: str) -> str:
    """A Latin letter with a diacritic as its base letters, when those are ASCII."""
    if not ("\u00c0" <= char <= "\u024f" or "\u1e00" <= char <= "\u1eff"):
        return char
    base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return base if base != char and base.isascii() and base.isalpha() else char


def test_split_chunks_keep_joiners_and_non_ascii_punctuation():
    assert split_chunks("a,b;c—d «e» user_id x.y don't \udcff!z") == [
        "a", "b", "c—d", "«e»", "user_id", "x.y", "don't", "\udcff", "z",
    ]  # fmt: skip
