import json
from datetime import timedelta
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest_search import NOW, FakeConcept, entries
from okfx.codeblocks import without_html_tags
from okfx.errors import InvalidArgument
from okfx.search import topk
from okfx.search.analyzer import VARIANT_WEIGHT, analyze_query
from okfx.search.index import HIT_KEYS, MAX_LIMIT, SearchIndex
from okfx.search.snippets import best_line, without_title_heading
from okfx.search.topk import top_k


def twin(path, **changes):
    """The same text at another path: any score difference comes from ``changes``."""
    fields = {"title": "Revenue", "description": "Recognized revenue.", "body": "revenue rules"}
    return FakeConcept(path, **(fields | changes))


def search(index, query, **kwargs):
    return index.search(query, now=NOW, **kwargs)


def test_title_match_outranks_a_body_only_match():
    index = SearchIndex.build(
        entries(
            FakeConcept("/a.md", title="Orders", body="rows of data"),
            FakeConcept("/b.md", title="Customers", body="joins with orders"),
        )
    )
    assert [h.path for h in search(index, "orders")] == ["/a.md", "/b.md"]


def test_all_spellings_of_an_identifier_find_the_concept():
    index = SearchIndex.build(
        entries(
            FakeConcept("/metrics/n_day_active_users.md", title="N-Day Active Users Metric"),
            FakeConcept("/metrics/revenue.md", title="Revenue", body="active customers"),
        )
    )
    for query in ("n day active users", "N-Day active users", "n_day_active_users", "nDayActive"):
        assert search(index, query)[0].path == "/metrics/n_day_active_users.md", query


def test_file_name_is_searchable():
    index = SearchIndex.build(
        entries(FakeConcept("/computations/revenue-ytd.md", title="Revenue for a fiscal year"))
    )
    assert search(index, "revenue_ytd")[0].matched == ("revenue", "ytd", "revenueytd")


def test_plural_form_counts_at_the_variant_weight():
    index = SearchIndex.build(entries(FakeConcept("/a.md", title="Users"), FakeConcept("/b.md")))
    typed = search(index, "users")[0].score
    variant = search(index, "user")[0].score
    assert variant == pytest.approx(VARIANT_WEIGHT * typed, abs=1e-4)


def test_words_are_or_ed_not_and_ed():
    index = SearchIndex.build(
        entries(FakeConcept("/a.md", title="apples"), FakeConcept("/b.md", title="pears"))
    )
    assert {h.path for h in search(index, "apples pears kiwis")} == {"/a.md", "/b.md"}


def test_draft_scores_eight_tenths_of_an_identical_stable_concept():
    index = SearchIndex.build(entries(twin("/a.md"), twin("/b.md", status="draft")))
    stable, draft = search(index, "revenue")
    assert (stable.path, draft.path) == ("/a.md", "/b.md")
    assert draft.score == pytest.approx(0.8 * stable.score, abs=1e-4)


def test_deprecated_concepts_are_hidden_and_counted_by_default():
    index = SearchIndex.build(entries(twin("/a.md"), twin("/old.md", status="deprecated")))
    results = search(index, "revenue")
    assert [h.path for h in results] == ["/a.md"]
    assert results.hidden == {"deprecated": 1}
    assert results.notice == (
        "1 deprecated match hidden; pass include_deprecated=true to see them."
    )


def test_included_deprecated_concepts_rank_at_half_score_and_show_their_status():
    index = SearchIndex.build(entries(twin("/a.md"), twin("/old.md", status="deprecated")))
    stable, old = search(index, "revenue", include_deprecated=True)
    assert old.status == "deprecated"
    assert old.score == pytest.approx(0.5 * stable.score, abs=1e-4)


def test_stale_concepts_are_returned_and_marked_unless_excluded():
    index = SearchIndex.build(
        entries(twin("/a.md"), twin("/b.md", stale_after=NOW - timedelta(days=1)))
    )
    results = search(index, "revenue")
    assert [(h.path, h.stale) for h in results] == [("/a.md", False), ("/b.md", True)]
    assert results[0].score == results[1].score  # staleness never changes the score
    hiding = search(index, "revenue", include_stale=False)
    assert [h.path for h in hiding] == ["/a.md"]
    assert hiding.hidden == {"stale": 1}


def test_trust_tier_is_shown_but_never_scored():
    index = SearchIndex.build(entries(twin("/a.md"), twin("/b.md", trust_tier="human-reviewed")))
    a, b = search(index, "revenue")
    assert a.score == b.score
    assert (a.trust_tier, b.trust_tier) == ("unverified", "human-reviewed")


def test_ties_break_by_bundle_then_path():
    index = SearchIndex.build(
        [("zeta", twin("/a.md")), ("alpha", twin("/c.md")), ("alpha", twin("/b.md"))]
    )
    assert [(h.bundle, h.path) for h in search(index, "revenue")] == [
        ("alpha", "/b.md"),
        ("alpha", "/c.md"),
        ("zeta", "/a.md"),
    ]


def test_type_and_tag_filters_ignore_case_and_need_every_tag():
    index = SearchIndex.build(
        entries(
            twin("/a.md", type="Metric", tags=("Finance", "KPI")),
            twin("/b.md", type="Policy", tags=("finance",)),
        )
    )
    assert [h.path for h in search(index, "revenue", type="metric")] == ["/a.md"]
    assert [h.path for h in search(index, "revenue", tags=["finance", "kpi"])] == ["/a.md"]
    assert search(index, "revenue", tags=["finance", "kpi"]).hidden == {"tags": 1}
    assert [h.path for h in search(index, "revenue", tags="FINANCE")] == ["/a.md", "/b.md"]


def test_directory_filter_keeps_one_subtree():
    index = SearchIndex.build(
        entries(twin("/metrics/a.md"), twin("/metrics/old/b.md"), twin("/policies/c.md"))
    )
    paths = [h.path for h in search(index, "revenue", directory="metrics")]
    assert paths == ["/metrics/a.md", "/metrics/old/b.md"]


def test_one_index_spans_bundles_with_shared_statistics():
    index = SearchIndex.build(
        [("acme", twin("/a.md")), ("ga4", twin("/a.md")), ("ga4", FakeConcept("/x.md"))]
    )
    assert index.bundles == ("acme", "ga4")
    both = search(index, "revenue")
    assert [h.bundle for h in both] == ["acme", "ga4"]
    only = search(index, "revenue", bundle="ga4")
    assert [h.bundle for h in only] == ["ga4"]
    assert only[0].score == both[1].score  # idf comes from all three concepts


def test_reserved_index_and_log_files_are_never_indexed():
    index = SearchIndex.build(
        entries(twin("/index.md"), twin("/tables/log.md"), twin("/tables/orders.md"))
    )
    assert len(index) == 1
    assert [h.path for h in search(index, "revenue")] == ["/tables/orders.md"]


def test_limit_is_clamped_to_one_through_fifty():
    index = SearchIndex.build(entries(*(twin(f"/c{i:02d}.md") for i in range(60))))
    assert len(search(index, "revenue", limit=0)) == 1
    assert len(search(index, "revenue", limit=500)) == MAX_LIMIT


@pytest.mark.parametrize("limit", ["5", 2.5, None, True])
def test_non_integer_limit_is_an_invalid_argument(limit):
    index = SearchIndex.build(entries(twin("/a.md")))
    with pytest.raises(InvalidArgument, match="limit"):
        search(index, "revenue", limit=limit)


def test_non_string_query_is_an_invalid_argument():
    index = SearchIndex.build(entries(twin("/a.md")))
    with pytest.raises(InvalidArgument, match="query"):
        index.search(None)  # type: ignore[arg-type]


def test_query_without_words_returns_nothing_and_says_so():
    index = SearchIndex.build(entries(twin("/a.md")))
    results = search(index, "  ?!  ")
    assert len(results) == 0
    assert results.notice == "The query has no searchable words."


def test_hit_reports_matched_terms_and_best_body_line():
    body = "# Schema\n\nOne row per order.\n\nThe net amount excludes tax and shipping.\n"
    index = SearchIndex.build(entries(FakeConcept("/orders.md", title="Orders", body=body)))
    (hit,) = search(index, "net amount tax")
    assert hit.matched == ("net", "amount", "tax")
    assert hit.snippet == "The net amount excludes tax and shipping."


def test_snippet_of_a_huge_line_is_cut_around_the_match():
    body = "x " * 5000 + "needle " + "y " * 5000
    index = SearchIndex.build(entries(FakeConcept("/a.md", body=body)))
    snippet = search(index, "needle")[0].snippet
    assert len(snippet) <= 200
    assert "needle" in snippet


_SNIPPET_TEXT = st.text(alphabet=st.sampled_from("abAB \nßẞİı#|-[]():/<>hps"), max_size=300)


@settings(max_examples=300, deadline=None)
@given(body=_SNIPPET_TEXT, needle=_SNIPPET_TEXT.map(str.casefold), width=st.integers(5, 60))
def test_one_needle_shows_the_line_its_scored_lines_would(body, needle, width):
    # best_line takes a shortcut for one needle (the line of its first occurrence); the
    # same needle given twice goes through the line scoring, which must agree.
    twice = [(needle, 1.5), (needle, 1.5)]
    assert best_line(body, [(needle, 1.5)], width) == best_line(body, twice, width)


@pytest.mark.parametrize(
    ("body", "needles", "shown"),
    [
        (  # okf-sql-knowledge: the formula holds abbreviations, the links the words
            "# Definition\n\nRUR = (hubutilpct / 100)\n\n# Used by\n\n"
            "* [RUC](/metrics/resource-utilization-classification.md)\n",
            [("resource", 1.0), ("utilization", 1.0), ("ratio", 1.0)],
            "RUR = (hubutilpct / 100)",
        ),
        (  # fibo-okf: the canonical URL line first, the definition under it
            "Canonical resource: <https://x.org/ontology/InterestRateSwap>\n\n"
            "## Definition\n\nswap in which at least one leg is an interest rate\n",
            [("swap", 1.0)],
            "swap in which at least one leg is an interest rate",
        ),
        (
            "See https://example.org/swap-terms for the terms.\nA swap of two legs.\n",
            [("swap", 1.0), ("legs", 0.5)],
            "A swap of two legs.",
        ),
        (  # a link's text is text: it counts
            "* [Swap leg](/swap-leg.md)\nNothing here.\n",
            [("swap", 1.0)],
            "* [Swap leg](/swap-leg.md)",
        ),
    ],
)
def test_words_in_a_link_address_do_not_make_a_line_the_snippet(body, needles, shown):
    assert best_line(body, needles) == shown


def test_a_footnote_label_is_a_key_not_words_of_the_concept():
    """okf-crossplane-v2 writes 815 slug labels (``[^xr-enforcement-before-apply]``): a
    label joins a body to its ``sources`` entry (spec §5.1); its words find nothing."""
    body = (
        "Enforcement happens before apply.[^xr-enforcement-zebra]\n\n"
        "[^xr-enforcement-zebra]: the zebra-free controller docs\n"
    )
    index = SearchIndex.build(entries(FakeConcept("/a.md", body=body)))
    assert [hit.path for hit in search(index, "zebra")] == ["/a.md"]  # the definition's text
    only_label = "Enforcement happens.[^xr-enforcement-zebra]\n"
    index = SearchIndex.build(entries(FakeConcept("/b.md", body=only_label)))
    assert list(search(index, "zebra")) == []
    assert [hit.path for hit in search(index, "enforcement")] == ["/b.md"]
    lines = "Setup.[^zebra-setup]\nThe zebra crossing.\n"
    assert best_line(lines, [("zebra", 1.0)]) == "The zebra crossing."


def test_an_html_comment_is_not_words_of_the_concept_nor_its_snippet():
    """graphql-okf frames every generated body with ``<!-- ... -->`` markers ("Do not edit
    inside this block"): a reader of the page never sees them, so their words find
    nothing and no snippet shows them; a comment inside a code block is code."""
    body = (
        "<!-- generator:start -->\n<!-- Regenerated on each run. Do not edit. -->\n"
        "# Overview\n\nA country of the world.\n\n```html\n<!-- zebra in code -->\n```\n"
        "<!-- a draft\nspanning lines about quaggas -->\nThe end.\n"
    )
    index = SearchIndex.build(entries(FakeConcept("/country.md", title="Country", body=body)))
    assert list(search(index, "regenerated")) == []
    assert list(search(index, "quaggas")) == []
    assert [hit.path for hit in search(index, "zebra")] == ["/country.md"]
    (hit,) = search(index, "country edit")
    assert hit.matched == ("country",) and hit.snippet == "A country of the world."
    (hit,) = search(index, "world")
    assert hit.snippet == "A country of the world."


def test_a_snippet_shows_the_line_where_the_word_is_whole():
    """graphql-okf's Country has a ``languages`` field above its ``lang`` argument: "lang"
    was matched as the word lang, and the snippet showed the languages line."""
    body = "- **`languages`** — list\n- **`code`** — ISO code\nArgument **`lang`** picks one.\n"
    assert best_line(body, [("lang", 1.0)]) == "Argument **`lang`** picks one."
    assert best_line(body, [("lang", 1.0), ("code", 0.5)]) == "Argument **`lang`** picks one."
    # camelCase and letter/digit steps are word steps, as the analyzer splits them
    assert best_line("profile\n\nuserProfileId here\n", [("id", 1.0)]) == "userProfileId here"
    assert best_line("idle\n\nBIP30 rule\n", [("30", 1.0)]) == "BIP30 rule"
    # only inside a word: that line still beats the first prose line
    assert best_line("intro\n\nthe languages\n", [("lang", 1.0)]) == "the languages"


def test_a_snippet_counts_a_word_once_however_many_of_its_forms_a_line_holds():
    """MacroEconometricModels-OKF: "lag selection" showed the `select_lag_order` table row
    (lag, select, selecting) over the summary that says "lag selection": the forms of one
    word each added their own, rarer, weight."""
    body = (
        "# Summary\n\nVector autoregressions with information-criteria lag selection.\n\n"
        "## Functions\n\n| [select_lag_order](https://x.test/var.jl) | selecting the lag |\n"
    )
    concepts = [FakeConcept("/var.md", title="VAR", body=body)] + [
        FakeConcept(f"/other{i}.md", body="Model selection by criteria.") for i in range(4)
    ]
    index = SearchIndex.build(entries(*concepts))
    (hit,) = [h for h in search(index, "lag selection") if h.path == "/var.md"]
    assert hit.snippet == "Vector autoregressions with information-criteria lag selection."


def test_a_code_fences_label_is_not_words_of_the_concept():
    """The Search Central docs open every code block with ``` devsite-click-to-copy: a
    page whose only "click" was three fence labels beat the one that says "clicks fall",
    with the fence line as its snippet. The code inside stays searchable."""
    fenced = "Markup:\n\n``` devsite-click-to-copy\n<ol itemscope>\n```\n" * 3
    index = SearchIndex.build(
        entries(
            FakeConcept("/breadcrumb.md", title="Breadcrumb", body=fenced),
            FakeConcept("/report.md", title="Performance report", body="When clicks fall."),
        )
    )
    assert [hit.path for hit in search(index, "copy devsite")] == []
    assert [hit.path for hit in search(index, "clicks")] == ["/report.md"]
    assert [hit.path for hit in search(index, "itemscope")] == ["/breadcrumb.md"]


def test_html_tags_are_not_words_of_the_concept_but_their_content_and_code_are():
    """ScalarDB and Databricks pages lay text out in ``<table>``, ``<td>`` and ``<br/>``:
    "table" (a kind word) and "class" matched pages for their markup. The text between
    the tags stays, and so does a tag in a code block, which is code; a placeholder such
    as ``<VERSION>`` is no HTML element and stays a word."""
    body = (
        '<table>\n<tr><td class="wide">Retention <b>days</b></td></tr>\n</table>\n<br/>\n'
        'Set <VERSION> first.\n\n```html\n<span id="zebra">x</span>\n```\n'
    )
    index = SearchIndex.build(entries(FakeConcept("/page.md", title="Page", body=body)))
    for markup in ("table", "td", "class", "wide", "br"):
        assert list(search(index, markup)) == [], markup
    for word in ("retention days", "version", "zebra", "span"):
        assert [hit.path for hit in search(index, word)] == ["/page.md"], word
    assert without_html_tags("a <td\nclass=x> b") == "a <td\nclass=x> b"  # no tag spans lines
    assert without_html_tags("<p>a</p>\n<p>b</p>").count("\n") == 1


def test_style_and_script_elements_are_no_words_of_the_concept():
    """Hybrid QA: Chinese daily pages opening with a <style> block were indexed with the
    CSS words, and the model read them as English pages."""
    body = (
        '<div class="hero">Daily <b>report</b></div>\n<style>\n.hero{border-radius:8px}\n'
        "</style>\n<SCRIPT type=x>gradient()</Script>\nno <styles> here\n"
        "```html\n<style>zebra</style>\n```\n<style>unclosed lattice\n"
    )
    index = SearchIndex.build(entries(FakeConcept("/page.md", title="Page", body=body)))
    for markup in ("border", "radius", "hero", "gradient"):
        assert list(search(index, markup)) == [], markup
    for word in ("daily report", "styles", "zebra", "lattice"):
        assert [hit.path for hit in search(index, word)] == ["/page.md"], word
    assert without_html_tags(body).count("\n") == body.count("\n")


@given(st.text(alphabet="<>/styleSCRIPT x\n`", max_size=80))
def test_leaving_out_tags_keeps_every_line_break(text):
    assert without_html_tags(text).count("\n") == text.count("\n")


def test_a_snippet_is_not_the_heading_that_repeats_the_title():
    """Helper QA: 39 of 216 hits over three bundles had their page's first heading,
    ``# Snake Plant``, as their snippet: the title again, which told an agent nothing."""
    body = "\n# Snake Plant\n\nTolerant of neglect.\n\n* Water: let it dry down.\n"
    index = SearchIndex.build(entries(FakeConcept("/snake.md", title="Snake plant", body=body)))
    (hit,) = search(index, "snake plant")
    assert hit.snippet == "Tolerant of neglect."
    (hit,) = search(index, "water snake plant")
    assert hit.snippet == "* Water: let it dry down."
    assert without_title_heading(body, "snake plant").startswith("\n\n\nTolerant")
    # a heading that is not the title, or a title heading below prose, stays
    for kept in ("# Snake plants indoors\nText.\n", "Intro.\n# Snake Plant\n"):
        assert without_title_heading(kept, "Snake plant") == kept


def test_a_snippet_finds_a_dotted_abbreviation_whole_and_cuts_between_words():
    """Helper QA over a health-survey bundle: "US adults" showed a line where "us" is
    inside "public-use", not the one that says "U.S. adults" (read as ``us``); and long
    lines were cut inside words ("…ants limited access")."""
    body = "- Checked against the public-use file.\n**Prevalence among U.S. adults: 9.8%**\n"
    assert best_line(body, [("us", 2.0)]) == "**Prevalence among U.S. adults: 9.8%**"
    assert best_line(body, [("us", 2.0), ("adults", 1.0)]).startswith("**Prevalence")
    assert best_line("the bus\n\nus here\n", [("us", 1.0)]) == "us here"  # whole first
    # the last dot is optional, and a dotted run that goes on is another word (U.S.A.)
    assert best_line("public-use\n\nthe U.S adults\n", [("us", 1.0)]) == "the U.S adults"
    assert best_line("public-use\n\nthe U.S.A.\n", [("us", 1.0)]) == "public-use"
    assert best_line("public-use\n\nthe u.sa\n", [("us", 1.0)]) == "public-use"
    words = " ".join(f"word{i}" for i in range(60))
    cut = best_line(words, [("word30", 1.0)], width=60)
    inner = cut.strip("\u2026").split(" ")
    assert cut.startswith("\u2026") and cut.endswith("\u2026") and "word30" in inner
    assert all(part in words.split(" ") for part in inner)  # no word cut in two


def test_results_serialise_to_plain_json():
    index = SearchIndex.build(entries(twin("/a.md"), twin("/b.md", status="deprecated")))
    data = search(index, "revenue").to_dict()
    assert json.loads(json.dumps(data)) == data
    assert list(data["hits"][0]) == list(HIT_KEYS)
    assert data["hidden"] == {"deprecated": 1}


def test_empty_index_searches_to_nothing():
    assert len(search(SearchIndex.build([]), "anything")) == 0


CORPUS = SearchIndex.build(
    entries(
        *(
            FakeConcept(
                f"/c{i:02d}.md",
                title=["Orders", "Users", "Revenue", "Events"][i % 4],
                body=" ".join(["orders", "users", "revenue", "n_day", "BIP-30"][: 1 + i % 5]),
                status=["stable", "draft", "deprecated"][i % 3],
            )
            for i in range(40)
        )
    )
)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.integers(-5, 80))
def test_any_query_string_gives_sorted_bounded_results(query, limit):
    results = search(CORPUS, query, limit=limit)
    assert len(results) <= max(1, min(limit, MAX_LIMIT))
    # by score, but the hits that hold no query word as text after the others
    empty = [not h.matched and h.confidence == 0 for h in results]
    shown = all(empty)
    keys = [
        (e and not shown, -h.score, h.bundle, h.path) for h, e in zip(results, empty, strict=True)
    ]
    assert keys == sorted(keys)
    assert all(h.score > 0 and h.status != "deprecated" for h in results)


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet="orders users revenue_nday BIP-30 ", max_size=60))
def test_search_is_deterministic(query):
    first = search(CORPUS, query, include_deprecated=True).to_dict()
    assert search(CORPUS, query, include_deprecated=True).to_dict() == first


def test_long_lists_take_the_dense_walk_and_agree_with_reading_everything():
    # 1,500 concepts put "alpha" and "bravo" over the dense threshold (1,024 postings).
    words = ["alpha", "bravo", "charlie", "delta", "echo"]
    concepts = [
        FakeConcept(
            f"/c{i:04d}.md",
            title=words[i % 5] if i % 7 == 0 else "",
            body=" ".join(words[j % 5] for j in range(i % 11 + 1)) + f" w{i % 97}",
            status="deprecated" if i % 13 == 0 else "stable",
        )
        for i in range(1500)
    ]
    index = SearchIndex.build(entries(*concepts))
    assert index.dense.eligible(index.postings.terms["alpha"])

    def accept(doc):
        return "deprecated" if index.entries[doc][1].status == "deprecated" else None

    for query in ("alpha bravo", "charlie w5", "echo delta alpha"):
        terms = analyze_query(query)
        groups = [index._forms(term) for term in terms]
        factors = index.factors(query, terms, groups)  # lifecycle and coverage, as search uses
        exact = top_k(index.postings, groups, 10, accept, factors, read_all=10**9)
        shown = sorted(exact.hits, key=lambda item: (-round(item[0], 4), item[1]))
        # Queries of a few words are answered by the coarse walk alone.
        with patch.object(topk, "_fine_walk", side_effect=AssertionError("fine walk")):
            got = search(index, query, limit=10)
        assert [h.path for h in got] == [index.entries[doc][1].path for _, doc in shown]
        assert got.hidden == exact.hidden


def test_a_hit_carries_each_value_of_its_concept_in_its_own_field():
    concept = FakeConcept(
        "/dir/orders.md",
        title="Orders table",
        description="One row per order",
        body="Intro line.\nThe orders ledger, by day.\n",
        tags=("sales",),
        type="Table",
        status="draft",
        trust_tier="human-reviewed",
        stale_after=NOW - timedelta(days=1),
    )
    index = SearchIndex.build(entries(concept, FakeConcept("/other.md", body="x"), bundle="shop"))
    hit = search(index, "orders ledger", include_deprecated=True)[0]
    assert hit.to_dict() == {
        "bundle": "shop",
        "path": "/dir/orders.md",
        "id": "dir/orders",
        "type": "Table",
        "title": "Orders table",
        "description": "One row per order",
        "status": "draft",
        "trust_tier": "human-reviewed",
        "stale": True,
        "score": hit.score,
        "matched": ["orders", "ledger"],
        "snippet": "The orders ledger, by day.",
        "found": "lexical",
        "confidence": 1.0,
    }
    assert hit.score > 0


def test_a_snippet_reads_a_hard_wrapped_sentence_whole():
    """Helper QA over a gem's bundle wrapped at 80 columns: every snippet was one
    physical line, a fragment cut mid-sentence ("instructions tell them to merge into. An
    upgrade that rewrote them would destroy")."""
    body = (
        "# Ownership\n\n"
        "An upgrade never touches the files the\n"
        "instructions tell them to merge into. An upgrade that rewrote them would destroy\n"
        "the local edits an owner made.\n"
        "A new sentence on its own line.\n\n"
        "- a list item that goes\n"
        "  on over an indented line\n"
        "Not the item's: a paragraph of its own.\n"
        "| a table | row |\n"
    )
    assert best_line(body, [("rewrote", 1.0)]) == (
        "An upgrade never touches the files the instructions tell them to merge into. "
        "An upgrade that rewrote them would destroy the local edits an owner made."
    )
    assert best_line(body, [("sentence", 1.0)]) == "A new sentence on its own line."
    assert best_line(body, [("indented", 1.0)]) == (
        "- a list item that goes on over an indented line"
    )
    assert best_line(body, [("paragraph", 1.0)]) == "Not the item's: a paragraph of its own."
    assert best_line(body, [("table", 1.0)]) == "| a table | row |"
    # a hit with no word in the body (found by meaning) reads its first line whole too
    assert best_line(body, []) == best_line(body, [("rewrote", 1.0)])
    # cut around the match as before when the sentence is long
    long = "\n".join(["word " * 12] * 3) + "match here and more words follow\n"
    cut = best_line(long, [("match", 1.0)], width=60)
    assert "match" in cut and len(cut) <= 60 and cut.startswith("\u2026")


@given(st.text(alphabet="ab .:-*#|\n\t", max_size=300), st.sampled_from(["a", "b", "ab"]))
def test_a_snippet_is_one_bounded_line_whatever_the_body(body, needle):
    shown = best_line(body, [(needle, 1.0)], width=80)
    assert len(shown) <= 80
    assert "\n" not in shown


def test_a_hit_lists_no_one_letter_part_of_a_word_it_matched_whole():
    """m3e QA: "m3e" listed matched ["m", "3", "e", "m3e"]; the letters tell an agent
    nothing once the word they are parts of is matched. A one-letter word of its own
    ("r programming") stays, and confidence still counts every term."""
    index = SearchIndex.build(
        entries(
            FakeConcept("/m3e.md", title="M3E button", body="The m3e-button element."),
            FakeConcept("/r.md", title="R programming", body="Programming in R."),
        )
    )
    (hit,) = index.search("m3e", limit=1)
    assert hit.matched == ("m3e",) and hit.confidence == 1.0
    (hit,) = index.search("r programming", limit=1)
    assert hit.path == "/r.md" and hit.matched == ("r", "programming")
    assert index.matched("m3e", 0) == ("m", "3", "e", "m3e")  # what scoring reads


def test_a_hit_lists_no_one_character_part_even_when_it_matched_nothing_else():
    """Paraphrase QA: a page holding a "t" listed it for "doesn't", and one holding a "3"
    for "S3 bucket": a match that tells an agent nothing."""
    index = SearchIndex.build(
        entries(
            FakeConcept("/snack.md", title="Snackbar", body="A message at the bottom. Take t."),
            FakeConcept("/plan.md", title="Plan 3", body="Step 3 of the plan."),
        )
    )
    hits = {hit.path: hit.matched for hit in index.search("message that doesn't interrupt")}
    assert hits["/snack.md"] == ("message",)
    hits = {hit.path: hit.matched for hit in index.search("S3 plan")}
    assert hits["/plan.md"] == ("plan",)


def test_a_snippet_shows_no_footnote_label_and_prefers_prose_to_a_citation():
    """crossplane QA: snippets read "...still exists.^management-policies-..." (a label
    cut at the snippet's end), "...removed.[^deletion-gating]", or a footnote definition
    line whose citation title held the query's words."""
    body = (
        "The resource stays while a Usage still exists.[^usage-gate] Then it is removed."
        "[^deletion-gating]\n\n"
        "[^usage-gate]: Usage gate and namespace selector\n"
        "[^deletion-gating]: Deletion gating\n"
    )
    assert best_line(body, [("usage", 1.0)]) == (
        "The resource stays while a Usage still exists. Then it is removed."
    )
    assert best_line(body, [("usage", 1.0), ("removed", 1.0)]) == (
        "The resource stays while a Usage still exists. Then it is removed."
    )
    # a citation's title holds the words the prose does not: shown, without its label
    assert best_line(body, [("namespace", 1.0)]) == "Usage gate and namespace selector"
    assert best_line(body, [("namespace", 1.0), ("selector", 1.0)]) == (
        "Usage gate and namespace selector"
    )
    cut = best_line("x " * 60 + "a match.[^" + "l" * 100 + "]", [("match", 1.0)], width=60)
    assert "[^" not in cut and "lll" not in cut and "match" in cut


def test_a_hit_that_holds_no_query_word_as_text_comes_after_those_that_do():
    """Agent QA (a Korean wiki): pages citing https://news.example/one-team-spirit came
    first for "... a new one", matching only "one" and "news" in the address, with nothing
    matched and confidence 0.00, above a page holding four of the query's words."""
    cited = "[x](https://news.example.com/one-new) "
    answer = "Check the API registry before adding an action. " * 6
    index = SearchIndex.build(
        entries(
            FakeConcept("/d/hbm.md", title="HBM", body=cited),
            FakeConcept("/d/dram.md", title="DRAM", body=cited * 2),
            FakeConcept("/h/a.md", title="Action authoring", body=answer),
            *[
                FakeConcept(f"/o/{i}.md", title=f"O {i}", body="check api adding")
                for i in range(20)
            ],
        )
    )
    query = "check whether an API is already registered before adding a new one"
    hits = index.search(query, limit=3, now=NOW)
    assert [h.path for h in hits] == ["/h/a.md", "/d/dram.md", "/d/hbm.md"]  # dram scored more
    assert [h.matched for h in hits[1:]] == [(), ()] and all(h.confidence == 0 for h in hits[1:])
