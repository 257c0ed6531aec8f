"""The lexical failure classes of issue 20, one test each (docs/search.md, "What a query
means"): coverage of the query's terms, a deprecated concept asked for by name, acronyms,
word forms the plural folding misses, and a concept's type and folder."""

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest_search import NOW, FakeConcept, entries
from okfx.search import index as index_module
from okfx.search.analyzer import (
    LIGHT_VERB_WEIGHT,
    STOPWORDS,
    analyze_query,
    light_words,
    plural_variants,
)
from okfx.search.index import SearchIndex
from okfx.search.wordforms import (
    initialisms,
    joined_pairs,
    spelling_variants,
    synonyms,
    title_initialisms,
    word_forms,
)
from okfx.statefile import StateFile


def paths(index, query, **options):
    return [hit.path for hit in index.search(query, now=NOW, **options)]


def test_a_concept_matching_more_of_the_query_outranks_one_rare_word():
    # "retention" is rare and sits in a short title; the concept the query is about
    # matches every word, in its title and body. Without a reward for matching more of
    # the query, the one rare word wins.
    concepts = [
        FakeConcept("/notes/retention.md", title="Retention", body="How long rows are kept."),
        FakeConcept(
            "/metrics/inactive-users.md",
            title="Inactive users",
            body="Users without a session in 7 days, by signup cohort and retention week.",
        ),
        *(FakeConcept(f"/m/{i}.md", title=f"Users {i}", body="inactive users") for i in range(3)),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, "inactive users retention")[0] == "/metrics/inactive-users.md"
    plain = SearchIndex.build(entries(*concepts), coverage_floor=1.0)
    # (word order keeps "inactive users" from meeting the path inactive-users as one word)
    assert paths(plain, "users inactive retention")[0] == "/notes/retention.md"


def test_question_filler_words_are_not_query_terms():
    assert {"has", "about", "have", "would", "there"} <= STOPWORDS
    index = SearchIndex.build(
        entries(
            FakeConcept("/tables/inputs.md", title="Inputs", body="Transaction inputs."),
            FakeConcept("/notes/about.md", title="About has", body="About this bundle."),
        )
    )
    assert paths(index, "which table has transaction inputs about")[0] == "/tables/inputs.md"


def test_a_deprecated_concept_named_by_its_title_is_not_halved():
    concepts = [
        FakeConcept(
            "/tables/orders.md",
            title="Orders",
            description="Orders placed since 2020; replaces the legacy orders table.",
        ),
        FakeConcept(
            "/tables/orders-legacy.md",
            title="Orders (legacy)",
            body="Orders before the 2020 migration.",
            status="deprecated",
        ),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, "Orders (legacy)", include_deprecated=True)[0] == (
        "/tables/orders-legacy.md"
    )
    # Not named: the lifecycle factor applies, the active concept leads.
    assert paths(index, "orders", include_deprecated=True)[0] == "/tables/orders.md"
    # Still hidden by default.
    assert paths(index, "Orders (legacy)") == ["/tables/orders.md"]


def test_an_acronym_finds_its_spelled_out_title_and_the_reverse():
    concepts = [
        FakeConcept("/metrics/mau.md", title="Monthly active users", body="Distinct users."),
        FakeConcept("/policies/privacy.md", title="Privacy", tags=("pii",), body="Rules."),
        FakeConcept("/notes/active.md", title="Active", body="Users who were active."),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, "MAU") == ["/metrics/mau.md"]
    assert paths(index, "personally identifiable information") == ["/policies/privacy.md"]
    assert title_initialisms(["monthly", "active", "users"]) == ["mau"]
    assert "pii" in initialisms(["personally", "identifiable", "information"])
    # A run never starts or ends with a function word; one inside is read either way.
    assert initialisms(["electrical", "safeguarding", "of"]) == []
    assert initialisms(["of", "labor", "statistics"]) == []
    # a question's own words spell none: "is an MRAP" is no IAM (agent QA, crossplane)
    assert initialisms(["what", "is", "an", "mrap"]) == []
    assert initialisms(["can", "pick", "up"]) == []
    # nor a pronoun's: "leaf is that" is no "lit" (hybrid QA: a page saying "well lit")
    assert "lit" not in initialisms(["my", "leaf", "is", "that", "dangerous"])
    assert initialisms(["how", "to", "reset", "my", "password"]) == ["rmp"]
    assert initialisms(["bureau", "of", "labor", "statistics"]) == ["bls", "bol", "bols"]


def test_word_forms_the_plural_folding_misses_are_found_below_a_typed_word():
    concepts = [
        FakeConcept("/policies/invoices.md", title="Invoices", body="How customers are billed."),
        FakeConcept("/policies/billing.md", title="Billing", body="The billing cycle."),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, "billing")[0] == "/policies/billing.md"  # typed form first
    assert "/policies/invoices.md" in paths(index, "billing")
    assert "/policies/billing.md" in paths(index, "billed")
    assert {"bill", "billed", "bills"} <= set(word_forms("billing"))
    assert "attestation" in word_forms("attesting")
    assert "rebalancing" in word_forms("rebalance")
    assert word_forms("station") == [] or "state" not in word_forms("station")


def test_type_and_folder_names_are_searched():
    concepts = [
        FakeConcept("/tables/orders.md", title="Orders", type="BigQuery Table", body="Rows."),
        FakeConcept(
            "/metrics/orders-per-day.md",
            title="Orders per day",
            type="Metric",
            description="Orders per day, counted from the orders table.",
        ),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, "orders table")[0] == "/tables/orders.md"
    assert paths(index, "orders metric")[0] == "/metrics/orders-per-day.md"


def test_a_question_word_spells_no_acronym_a_page_is_found_by():
    """Agent QA, crossplane: "what is an MRAP" ranked a page citing IAM, matching none of
    the query's words, above pages that hold MRAP."""
    concepts = [
        FakeConcept("/mrap.md", title="Activation policy", body="MRAP turns on resources."),
        FakeConcept("/layout.md", title="Project layout", body="mrap.yaml and provider.yaml."),
        FakeConcept("/query.md", title="External query", body="IAM roles. IAM users. IAM."),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert [hit.path for hit in index.search("what is an MRAP", now=NOW)] == [
        "/mrap.md",
        "/layout.md",
    ]


def test_a_function_word_hyphened_to_the_word_before_it_spells_its_initial():
    """Agent QA (a Korean wiki writing SSO 15 times): "single sign-on" found nothing, and
    "on" ends no run of initials, to keep "is an MRAP" from spelling "iam"; in "sign-on"
    it is part of one compound word."""
    concepts = [
        FakeConcept("/sso.md", title="SSO and permissions", body="SSO through Keycloak."),
        FakeConcept("/other.md", title="Other", body="Nothing here."),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert [hit.path for hit in index.search("single sign-on", now=NOW)] == ["/sso.md"]
    assert index.missing_words("single sign-on") == ()
    assert initialisms(["single", "sign", "on"]) == []  # written apart: no compound
    assert initialisms(["single", "sign", "on"], frozenset({2})) == ["sso"]


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=30))
def test_word_forms_and_initialisms_never_raise_and_never_return_the_word(word):
    forms = word_forms(word)
    assert word not in forms
    assert all(form.isalpha() for form in forms)
    acronyms = initialisms(word.split())
    assert all(3 <= len(a) <= 6 for a in acronyms)


def test_each_hit_says_how_sure_it_is():
    """confidence: the share of the query's words the concept holds (an identifier is one
    word); a query the bundle cannot answer reads low."""
    concepts = [
        FakeConcept("/tables/events.md", title="Events", body="user_pseudo_id per event."),
        FakeConcept("/notes/pods.md", title="Pods", body="Kubernetes pods."),
    ]
    index = SearchIndex.build(entries(*concepts))
    (hit,) = index.search("user_pseudo_id events", now=NOW)
    assert hit.confidence == 1.0
    weak = index.search("kubernetes pod autoscaling thresholds", now=NOW)
    assert weak[0].path == "/notes/pods.md"
    # kubernetes and pod of four words, the two no concept holds weighing double (agent
    # QA: a missing subject, "Kafka", weighed what "configure" did)
    assert weak[0].confidence == 0.33
    held = index.search("kubernetes pods events", now=NOW)  # every word held somewhere
    assert {h.path: h.confidence for h in held}["/notes/pods.md"] == 0.67
    assert index.search("autoscaling thresholds", now=NOW).hits == ()


def test_a_number_written_with_dots_or_dashes_is_held_whole_or_not_at_all():
    """Docs and agent QA: "python 3.10" read 0.5 on the page titled "Python 3.10 notes"
    (the analyzer keeps only 3 and 10, which say nothing alone), "OGC 23-024" 0.5 on the
    page that cites it, and "supported databases 3.13" 0.67 on the 3.13 page."""
    concepts = [
        FakeConcept("/a.md", title="Python 3.10 notes", body="What changed in 3.10."),
        FakeConcept("/b.md", title="Python 3.1 notes", body="Release 3.100 and 3.1 python."),
        FakeConcept("/std.md", title="Standards", body="The model (OGC 23-024) says so."),
        FakeConcept("/db/3.13/supported.md", title="Supported databases", body="MySQL."),
    ]
    index = SearchIndex.build(entries(*concepts))
    found = {hit.path: hit.confidence for hit in index.search("python 3.10", now=NOW)}
    assert (found["/a.md"], found["/b.md"]) == (1.0, 0.5)  # 3.1 and 3.100 are not 3.10
    found = {hit.path: hit.confidence for hit in index.search("3.1", now=NOW)}
    assert found["/b.md"] == 1.0 and found.get("/a.md", 0.0) == 0.0
    assert index.search("OGC 23-024", now=NOW)[0].confidence == 1.0
    hit = index.search("supported databases 3.13", now=NOW)[0]
    assert hit.path == "/db/3.13/supported.md" and hit.confidence == 1.0  # its folder says it


@given(st.from_regex(r"[0-9]{1,3}([.-][0-9]{1,3}){1,2}", fullmatch=True), st.text(max_size=30))
def test_a_number_is_held_only_where_no_digit_continues_it(number: str, around: str) -> None:
    from okfx.search.scoring import holds_number

    assert holds_number(f"see {number} here", number)
    assert not holds_number(f"see {number}7 here", number)
    assert not holds_number(f"see 7{number} here", number)
    assert not holds_number(f"v{number}.5", number)
    assert holds_number(around + " " + number + ".", number)  # a sentence's dot ends it


def test_an_identifier_held_only_by_its_one_letter_parts_is_not_held():
    """ "S4U" is looked up as s, 4, u and s4u: a page holding an s and a u does not hold
    S4U (its confidence read 1.0, as high as the page that says it)."""
    concepts = [
        FakeConcept("/cron.md", title="Cron", body="Runs as S4U."),
        FakeConcept("/store.md", title="Storage", body="Files s and u."),
        FakeConcept("/pseudo.md", title="Pseudo", body="A pseudo id."),
    ]
    index = SearchIndex.build(entries(*concepts))
    found = {hit.path: hit.confidence for hit in index.search("S4U", now=NOW)}
    assert found == {"/cron.md": 1.0, "/store.md": 0.0}
    # a part of three letters or more is a word of the identifier: its share is held
    # (user and pseudo: the page holds one of two)
    found = {hit.path: hit.confidence for hit in index.search("user_pseudo_id", now=NOW)}
    assert found["/pseudo.md"] == 0.5


def test_a_hyphenated_name_is_held_as_a_whole_or_by_its_share_of_words():
    """ "git-svn" was held by any page holding git: confidence 1.0 and svn missing from
    missing_words, which hid that no page says svn (agent QA on a git bundle)."""
    concepts = [
        FakeConcept("/hooks.md", title="Git hooks", body="Run git hooks."),
        FakeConcept("/bridge.md", title="Bridges", body="The gitsvn bridge."),
    ]
    index = SearchIndex.build(entries(*concepts))
    found = {hit.path: hit.confidence for hit in index.search("git-svn", now=NOW)}
    assert found == {"/hooks.md": 0.5, "/bridge.md": 1.0}  # git alone; joined as written
    alone = SearchIndex.build(entries(concepts[0]))
    assert alone.missing_words("git-svn") == ("svn",)
    assert index.missing_words("git-svn") == ()  # a page holds it joined


def test_a_word_only_in_a_link_destination_is_no_word_a_hit_holds():
    """A link's destination, an autolink and a bare URL still rank a page (a file name is
    often all a link says), but a hit does not claim their words in ``matched`` nor count
    them in its confidence (agent QA: "scalar" only in ``../scalars/ID.md`` read 1.0)."""
    concepts = [
        FakeConcept("/types/scalars/id.md", title="ID", body="The ID scalar."),
        FakeConcept("/types/objects/subdivision.md", title="Subdivision",
                    body="- **code**: [ID!](../scalars/id.md), see <https://x.org/scalar>"),
        FakeConcept("/queries/country.md", title="Country",
                    body="Returns [Country](../types/objects/country.md) by ID."),
        # a form of the word in the text, the word itself only in a link: held
        FakeConcept("/notes/scalars.md", title="Notes",
                    body="Custom scalars and IDs; [the id](https://x.org/scalar)."),
        # the folder names the word: held (the kind field is text the index reads)
        FakeConcept("/scalar/kinds.md", title="Kinds", body="[here](https://x.org/id)"),
    ]  # fmt: skip
    index = SearchIndex.build(entries(*concepts))
    hits = {hit.path: hit for hit in index.search("ID scalar", now=NOW)}
    assert hits["/types/objects/subdivision.md"].matched == ("id",)
    assert hits["/types/objects/subdivision.md"].confidence == 0.5
    assert hits["/types/scalars/id.md"].matched == ("id", "scalar")
    assert hits["/notes/scalars.md"].confidence == 1.0
    assert hits["/scalar/kinds.md"].matched == ("scalar",)  # "id" only in its link
    # a hit holding the query's word only in links holds none of it
    (hit,) = [h for h in index.search("objects", now=NOW) if h.path == "/queries/country.md"]
    assert (hit.matched, hit.confidence) == ((), 0.0)


def test_a_query_naming_a_kind_ranks_concepts_of_that_kind_first(monkeypatch):
    """ "sessions table": the guide tagged "table" scores higher than the table itself on
    the words; the kind factor (the type's head noun and the folder names) puts the
    concept that *is* a table first, and leaves a query naming no kind alone."""
    from okfx.search import kinds, scoring

    concepts = [
        FakeConcept(
            "/tables/sessions.md",
            title="Sessions",
            type="BigQuery Table",
            body="One row per visit, with the visit's start, end, device and landing page.",
        ),
        FakeConcept(
            "/guides/visits.md",
            title="Sessions",
            type="Guide",
            tags=("table",),
            description="Where the sessions table comes from.",
            body="Notes.",
        ),
        FakeConcept("/other/note.md", title="Other", type="Note", body="Nothing."),
    ]
    index = SearchIndex.build(entries(*concepts))
    hits = index.search("sessions table", now=NOW)
    assert [hit.path for hit in hits] == ["/tables/sessions.md", "/guides/visits.md"]
    # "guide" names the guide's kind: now the table is the one scored down
    assert paths(index, "sessions guide")[0] == "/guides/visits.md"
    # without the factor, title coverage alone still puts the table first (its type names
    # it a table: the guide's name, title, type and folder, holds "sessions" only); the
    # guide's score was the factor times its score without it; without both, the guide
    # comes first
    miss = kinds.KIND_MISS
    monkeypatch.setattr(kinds, "KIND_MISS", 1.0)
    unfactored = SearchIndex.build(entries(*concepts)).search("sessions table", now=NOW)
    assert [hit.path for hit in unfactored] == ["/tables/sessions.md", "/guides/visits.md"]
    assert hits[1].score == pytest.approx(miss * unfactored[1].score, rel=1e-3)
    monkeypatch.setattr(scoring, "TITLE_WEIGHT", 0.0)
    assert paths(SearchIndex.build(entries(*concepts)), "sessions table")[0] == "/guides/visits.md"
    assert kinds.kind_words(concepts[0]) == {"table", "tables"}


def test_concept_names_no_kind_so_a_concepts_folder_is_no_head_start():
    """Viewer QA: across bundles, "how do I mark a concept as outdated" ranked first a
    page that matched "concept" only by its folder concepts/ (every other bundle's pages
    were scored x0.8 for not being in it). Every OKF document is a concept."""
    from okfx.search import kinds

    concepts = [
        FakeConcept("/concepts/tool-mco.md", title="MCO", type="Tool", body="An orchestrator."),
        FakeConcept("/concepts/other.md", title="Other", type="Tool", body="Another tool."),
        FakeConcept(
            "/guides/lifecycle.md",
            title="Lifecycle",
            type="Concept",
            body="Mark a page outdated with status: deprecated.",
        ),
    ]
    assert kinds.kind_words(concepts[0]) == {"tool"}  # the folder concepts/ names no kind
    assert kinds.kind_words(concepts[2]) == {"guides"}  # its type Concept names none
    index = SearchIndex.build(entries(*concepts))
    assert kind_factors(index, "how do I mark a concept as outdated") == [1.0, 1.0, 1.0]
    assert paths(index, "how do I mark a concept as outdated")[0] == "/guides/lifecycle.md"


def kind_factors(index: SearchIndex, query: str) -> list[float]:
    """Each concept's kind factor for ``query``, in path order (1.0 for all when it
    names no kind)."""
    terms = analyze_query(query)
    factors = index.factors(query, terms, [index._forms(term) for term in terms])
    order = sorted(range(len(index)), key=lambda doc: index.entries[doc][1].path)
    if factors.kinds is None:
        return [1.0] * len(index)
    group_of, by_group = factors.kinds
    return [by_group[group_of[doc]] for doc in order]


def test_a_query_naming_a_whole_type_prefers_that_type_to_others_sharing_its_head(
    monkeypatch,
):
    """Fifth round: "decision guide" names the type "Decision Guide", not every guide.
    The deployment guide holds the query's words more often; the decision guide, the one
    the query names, comes first, and a concept of no guide type is scored down most."""
    from okfx.search import kinds, scoring

    # The kind factor alone: the note's file name, "release", is all said by the query.
    monkeypatch.setattr(scoring, "NAME_WEIGHT", 0.0)

    concepts = [
        FakeConcept(
            "/guides/pick.md",
            title="Choosing a line",
            type="Decision Guide",
            body="The release line to read, one per release.",
        ),
        FakeConcept(
            "/deploy/upgrade.md",
            title="Upgrading a release",
            type="Deployment Guide",
            body="The release decision.",
        ),
        FakeConcept(
            "/notes/release.md",
            title="Release decision notes",
            type="Note",
            body="A decision about the release, a decision guide.",
        ),
    ]
    index = SearchIndex.build(entries(*concepts))
    hits = index.search("the decision guide for a release", now=NOW)
    assert hits[0].path == "/guides/pick.md"
    # in path order: /deploy/upgrade.md, /guides/pick.md, /notes/release.md
    assert kind_factors(index, "decision guide release") == [
        kinds.KIND_PARTIAL,
        1.0,
        kinds.KIND_MISS,
    ]
    # a query naming only the head noun treats both guides alike
    assert kind_factors(index, "release guide") == [1.0, 1.0, kinds.KIND_MISS]
    # without the whole-type rule and the type's name the deployment guide comes first
    monkeypatch.setattr(kinds, "KIND_PARTIAL", 1.0)
    monkeypatch.setattr(index_module, "_type_name", lambda type_: "")
    assert (
        paths(SearchIndex.build(entries(*concepts)), "the decision guide for a release")[0]
        == "/deploy/upgrade.md"
    )


def test_a_query_naming_a_rare_type_finds_its_one_concept_in_another_language(monkeypatch):
    """A type of two words is also indexed as one name ("decisionguide"), which the query's
    adjacent words match: a term as rare as the type. The one Decision Guide of a bundle,
    written in Japanese, comes first for "the decision guide for choosing a version",
    above English guides holding "choosing" and "version" (scalardb: it had been below
    the top five)."""
    concepts = [
        FakeConcept(
            "/guides/selection.md",
            title="製品・バージョンの選び方",
            type="Decision Guide",
            tags=("version-selection",),
            body="どのバージョンを参照すべきかを決めるための判断基準。",
        ),
        *(
            FakeConcept(
                f"/products/{n}/upgrade.md",
                title=f"Upgrading to version 3.{n}",
                type="Deployment Guide",
                body="Choosing a version: read the guide, then the decision table.",
            )
            for n in range(8)
        ),
    ]
    # one word, or more than four, is no name of its own
    assert index_module._type_name("Table") == ""
    assert index_module._type_name("Decision Guide") == "decisionguide"
    assert index_module._type_name("A Very Long Type Name Here") == ""
    query = "the decision guide for choosing a version"
    assert paths(SearchIndex.build(entries(*concepts)), query)[0] == "/guides/selection.md"
    monkeypatch.setattr(index_module, "_type_name", lambda type_: "")
    assert paths(SearchIndex.build(entries(*concepts)), query)[0] != "/guides/selection.md"


def test_two_query_words_meet_a_word_the_bundle_writes_as_one(monkeypatch):
    concepts = [
        FakeConcept("/codes/utilitytype.md", title="utilitytype", body="Gas, water, power."),
        FakeConcept("/notes/works.md", title="Street works", body="Works on a utility."),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, "utility type")[0] == "/codes/utilitytype.md"
    # and its second word in the other number (session 60's agent QA: "utility types"
    # missed the codelist)
    assert paths(index, "utility types")[0] == "/codes/utilitytype.md"
    monkeypatch.setattr(index_module, "JOINED_FORMS", False)
    assert (
        paths(SearchIndex.build(entries(*concepts)), "utility types")[0] != "/codes/utilitytype.md"
    )
    assert joined_pairs(["utility", "type"]) == ["utilitytype"]
    # short words, numbers and function words are not joined
    assert joined_pairs(["of", "type", "2024", "list", "the", "code"]) == []


def test_two_words_and_a_linking_word_meet_the_name_they_make(monkeypatch):
    # muddi names a junction table relationship_sitetoasset: "a site to its assets" holds
    # its parts with "to" among the function words between them
    from okfx.search import analyzer

    concepts = [
        FakeConcept(
            "/relationships/sitetoasset.md",
            title="Sitetoasset",
            description="The Sitetoasset junction table linking features by soft references.",
            type="Relationship",
        ),
        FakeConcept(
            "/reading/profile.md",
            title="Profile deep dive",
            body="Relationship tables link each site to its assets, and each asset to a "
            "site; the relationship table of a site lists its assets.",
            type="Reference",
        ),
    ]
    index = SearchIndex.build(entries(*concepts))
    query = "relationship table linking a site to its assets"
    forms = {t.text: {f for f, _ in t.forms} for t in analyze_query(query)}
    assert {"sitetoasset", "sitetoassets"} <= forms["site"] & forms["assets"]
    assert not any("linkingsite" in f for f in forms["linking"])  # "a" links nothing
    assert paths(index, query)[0] == "/relationships/sitetoasset.md"
    monkeypatch.setattr(analyzer, "_join_linked", lambda *args: None)
    assert paths(index, query)[0] == "/reading/profile.md"


def test_a_word_written_as_one_matches_both_query_words(monkeypatch):
    # "utility type codelist": the codelist titled "Utilitytype Value" writes two of the
    # query's words as one. As an optional extra term alone, the joined word lost to a
    # codelist whose text holds the words apart; as a form of each of the two words, it
    # matches both (coverage, and the title the query names).
    from okfx.search import analyzer

    concepts = [
        FakeConcept(
            "/codelists/utilitytypevalue.md",
            title="Utilitytype Value",
            description="Controlled vocabulary 'utilitytypevalue' (15 values).",
            body="| value |\n| gas |\n| water |",
            type="Codelist",
        ),
        FakeConcept(
            "/codelists/dataprovenancevalue.md",
            title="Dataprovenance Value",
            description="Controlled vocabulary 'dataprovenancevalue' (8 values).",
            body="How a utility record was captured: the survey type, or the utility's plan.",
            type="Codelist",
        ),
        *(
            FakeConcept(f"/codelists/other{i}.md", title=f"Other{i} Value", type="Codelist")
            for i in range(4)
        ),
    ]
    index = SearchIndex.build(entries(*concepts))
    forms = {t.text: {f for f, _ in t.forms} for t in analyze_query("utility type codelist")}
    assert "utilitytype" in forms["utility"] & forms["type"]
    assert "typecodelist" in forms["type"] & forms["codelist"]
    assert paths(index, "utility type codelist")[0] == "/codelists/utilitytypevalue.md"
    monkeypatch.setattr(analyzer, "_join_compounds", lambda *args: None)
    assert paths(index, "utility type codelist")[0] == "/codelists/dataprovenancevalue.md"


@given(
    st.lists(
        st.sampled_from(
            [
                "the",
                "of",
                "Orders",
                "(legacy)",
                "user_id",
                "x86",
                "e-mail",
                "über",
                "注文",
                "-",
                "a",
            ]
        ),
        max_size=6,
    )
)
def test_a_titles_first_term_is_found_without_analysing_the_whole_title(words):
    """Named titles are keyed by their first query term, found cheaply; it must be the one
    the full query analysis keeps first."""
    from okfx.search.analyzer import analyze_query
    from okfx.search.scoring import _first_term

    title = " ".join(words)
    terms = analyze_query(title)
    assert _first_term(title) == (terms[0].text if terms else None)


@given(
    st.sampled_from(["BigQuery Table", "", "Attested Computation", "view", "x86_64 Thing"]),
    st.lists(
        st.sampled_from(["tables", "references", "user_id", "a-b", "注文", "x.y"]), max_size=3
    ),
)
def test_kind_words_from_cached_parts_equal_the_whole_analysis(type_, folders):
    from okfx.search.kinds import kind_words

    concept = FakeConcept("/" + "/".join([*folders, "c.md"]), type=type_)
    cache: dict[str, frozenset[str]] = {}
    assert kind_words(concept, cache) == kind_words(concept)
    assert kind_words(concept, cache) == kind_words(concept)  # from the cache now


def _legacy_pair(title):
    return [
        FakeConcept(
            "/metrics/gross-margin.md",
            title="Gross Margin",
            description="Gross margin per period; replaces the legacy gross margin.",
            tags=("margin", "legacy"),
            body="Gross margin is revenue less the full cost of goods.",
        ),
        FakeConcept(
            "/metrics/gross-margin-legacy.md",
            title=title,
            body="Revenue less product cost, before the 2026 standard.",
            status="deprecated",
        ),
        *(FakeConcept(f"/notes/{i}.md", title=f"Note {i}", body="Sales.") for i in range(5)),
    ]


def test_a_deprecated_concept_named_by_its_file_name_is_not_halved():
    # The title has a word the query lacks, but the query is the concept's file name,
    # the handle agents see in links and listings.
    index = SearchIndex.build(entries(*_legacy_pair("Gross Margin (legacy, pre-2026)")))
    legacy = "/metrics/gross-margin-legacy.md"
    assert paths(index, "gross_margin_legacy", include_deprecated=True)[0] == legacy
    assert paths(index, "gross-margin-legacy", include_deprecated=True)[0] == legacy
    # Part of the name is not the name: the active concept leads.
    assert paths(index, "gross margin", include_deprecated=True)[0] == "/metrics/gross-margin.md"


@pytest.mark.parametrize("word", ["deprecated", "legacy", "old", "retired", "superseded"])
def test_a_query_asking_for_the_deprecated_one_lifts_the_lifecycle_factor(word, monkeypatch):
    from okfx.search import scoring

    # The lifecycle factor alone: the query says all of the active one's title, "Margin".
    monkeypatch.setattr(scoring, "NAME_WEIGHT", 0.0)
    concepts = [
        FakeConcept("/metrics/margin.md", title="Margin", description="Gross margin, full cost."),
        FakeConcept(
            "/metrics/margin-2025.md",
            title="Gross margin (pre-2026)",
            description="Gross margin before 2026: revenue less product cost.",
            status="deprecated",
        ),
        *(FakeConcept(f"/notes/{i}.md", title=f"Note {i}", body="Sales.") for i in range(5)),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, f"{word} gross margin", include_deprecated=True)[0] == (
        "/metrics/margin-2025.md"
    )
    # Without such a word the lifecycle factor applies.
    assert paths(index, "gross margin", include_deprecated=True)[0] == "/metrics/margin.md"


def _first_of_two_notes(body: str, plain: str):
    """``query -> the first hit's path`` over two notes: /notes/a.md with ``body``, and
    /notes/b.md with ``plain`` (the same words less the one a test is about)."""
    concepts = [
        FakeConcept("/notes/a.md", title="Notes", body=body),
        FakeConcept("/notes/b.md", title="Other", body=plain),
    ]
    index = SearchIndex.build(entries(*concepts))
    return lambda query: paths(index, query)[0]


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("organisation", "organization"),
        ("recognised", "recognized"),
        ("normalizing", "normalising"),
        ("analyse", "analyze"),
        ("behaviour", "behavior"),
        ("colors", "colours"),
        ("catalogue", "catalog"),
        ("modelling", "modeling"),
        ("labeled", "labelled"),
        ("centre", "center"),
        ("licence", "license"),
        ("programme", "program"),
    ],
)
def test_british_and_american_spellings_find_each_other(word, other):
    assert other in spelling_variants(word)
    assert word in spelling_variants(other)
    found = _first_of_two_notes(f"Rules for the {other} of accounts.", "Rules for accounts.")
    assert found(f"{word} rules") == "/notes/a.md"


def test_a_spelling_variant_counts_almost_as_typed():
    concepts = [
        FakeConcept("/orgs/a.md", title="Organisation", body="An organisation."),
        FakeConcept("/orgs/b.md", title="Organization", body="An organization."),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, "organization") == ["/orgs/b.md", "/orgs/a.md"]


@pytest.mark.parametrize(
    ("word", "form"),
    [
        ("inactivity", "inactive"),
        ("inactive", "inactivity"),
        ("availability", "available"),
        ("available", "availability"),
        ("functionality", "functional"),
        ("freshness", "fresh"),
        ("settlement", "settle"),
        ("bought", "buy"),
        ("sold", "sell"),
        ("written", "write"),
        ("ridden", "ride"),
        ("rode", "rides"),
        ("paid", "pay"),
        ("spend", "spent"),
        # verbs in consonant + y: y -> i before -ed and -es, -ify -> -ification
        ("certifying", "certification"),
        ("certified", "certifying"),
        ("certification", "certified"),
        ("classifications", "classify"),
        ("verifying", "verified"),
        ("querying", "queried"),
        ("applied", "apply"),
        # periods and their adjectives (helper QA: "users each week", "weekly active users")
        ("week", "weekly"),
        ("monthly", "month"),
        ("day", "daily"),
        ("yearly", "year"),
        # a final consonant doubled before -ed and -ing (paraphrase QA: "overlap" was
        # named missing on a page saying "overlapped")
        ("overlap", "overlapped"),
        ("overlap", "overlapping"),
        ("stop", "stopped"),
        ("control", "controlled"),
        # an adverb's adjective, from a query's word (paraphrase QA: "automatically")
        ("automatically", "automatic"),
        ("instantly", "instant"),
        ("deeply", "deep"),
        ("easily", "easy"),
        ("gently", "gentle"),
        # the nouns of an adjective in -e (new-producers QA: "deploying safely" missed
        # "Deployment Safety Lessons")
        ("safe", "safety"),
        ("safety", "safe"),
        ("safely", "safety"),
        ("secure", "security"),
        ("security", "secure"),
        ("private", "privacy"),
        ("privacy", "private"),
        ("accurate", "accuracy"),
        # three-letter verbs that double their consonant, and short adverbs (words QA:
        # "digging" was named missing on a page saying "Permit to Dig")
        ("digging", "dig"),
        ("mapping", "map"),
        ("logged", "log"),
        ("newly", "new"),
        ("cant", "cannot"),  # "can't" (words QA: it never met a page saying "cannot")
        ("cannot", "cant"),
    ],
)
def test_derived_and_irregular_word_forms(word, form):
    assert form in word_forms(word)
    found = _first_of_two_notes(f"Audience by {form} of users.", "Audience of users.")
    assert found(f"users {word} audience") == "/notes/a.md"


@pytest.mark.parametrize(
    ("word", "not_a_form"),
    [
        ("repeat", "repeatted"),  # a vowel pair: nothing doubles
        ("detail", "detailled"),
        ("actually", "actual"),  # a speaker's stance, not the subject
        ("likely", "like"),
        ("family", "famy"),
        ("apply", "app"),
        ("only", "on"),
    ],
)
def test_no_doubled_consonant_or_adjective_where_english_has_none(word, not_a_form):
    assert not_a_form not in word_forms(word)


@pytest.mark.parametrize(
    ("query", "column"),
    [
        ("order timestamp", "order_ts"),
        ("source transaction", "source_tx"),
        ("average price", "avg_price"),
        ("item quantity", "item_qty"),
        ("engagement milliseconds", "engagement_msec"),
        ("user identifier", "user_id"),
        ("ts of order", "order_timestamp"),
    ],
)
def test_a_spelled_out_word_finds_its_usual_abbreviation_and_the_reverse(query, column):
    # Both tables hold the query's other word; only the abbreviation tells them apart.
    other = [w for w in query.split() if w in column.split("_")][0]
    concepts = [
        FakeConcept("/tables/a.md", title="Alpha", body=f"`{column}`: when and what."),
        FakeConcept("/tables/b.md", title="Beta", body=f"`{other}`, `{other}_code`."),
        *(FakeConcept(f"/notes/{i}.md", title=f"Note {i}", body="Sales.") for i in range(5)),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, query)[0] == "/tables/a.md"


_KIND_TYPES = ["BigQuery Table", "", "Attested Computation", "view", "Orders Table"]
_KIND_FOLDERS = ["tables", "references", "views", "orders", "a-b"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_KIND_TYPES),
            st.lists(st.sampled_from(_KIND_FOLDERS), max_size=2),
        ),
        min_size=1,
        max_size=12,
    ),
    st.lists(
        st.sampled_from(
            ["table", "tables", "view", "orders", "computation", "revenue", "bigquery", "attested"]
        )
    ),
)
def test_the_kind_factor_of_each_doc_is_kind_miss_unless_its_group_names_a_query_kind(
    places, words
):
    from okfx.search.analyzer import analyze_query, tokenize
    from okfx.search.kinds import KIND_MISS, KIND_PARTIAL, KindGroups, kind_words, type_phrase

    concepts = [
        FakeConcept("/" + "/".join([*folders, f"c{i}.md"]), type=type_)
        for i, (type_, folders) in enumerate(places)
    ]
    found = [("b", c) for c in concepts]
    groups = KindGroups()
    terms = analyze_query(" ".join(words))
    vocabulary = groups.vocabulary(found)
    factor = groups.factor(found, terms, vocabulary)
    wanted = {form for term in terms for form, _ in term.forms} & vocabulary
    if not wanted:
        assert factor is None
        return
    assert factor is not None
    group_of, factors = factor
    forms = {form for term in terms for form, _ in term.forms}
    named = {
        phrase
        for concept in concepts
        if (phrase := type_phrase(concept.type))
        and all(set(tokenize(word)) & forms for word in phrase.split())
    }
    for doc, concept in enumerate(concepts):
        if type_phrase(concept.type) in named:
            expected = 1.0
        elif kind_words(concept) & wanted:
            expected = KIND_PARTIAL if named else 1.0
        else:
            expected = KIND_MISS
        assert factors[group_of[doc]] == expected


def test_adverbs_of_frequency_are_not_query_terms():
    # Fourth round: "how often" asks for a count; "often" itself is a word many bodies
    # hold ("is often edited"), which must not outrank the concept that has the counts.
    assert {"often", "usually", "typically", "sometimes"} <= STOPWORDS
    index = SearchIndex.build(
        entries(
            FakeConcept("/tables/tags.md", title="Tags", body="The times each tag was used."),
            FakeConcept(
                "/tables/tag-wiki.md",
                title="Tag wiki",
                body="Wiki text of a tag, often edited, often long, used often.",
            ),
        )
    )
    assert paths(index, "how often was each tag used")[0] == "/tables/tags.md"


def test_a_questions_light_verb_weighs_a_quarter_of_a_word():
    """EU5-OKF: "how do I make a formable nation" put first a GUI page whose only match was
    the ``make`` of ``MakeScope`` (split as make, scope), over the formable concepts."""
    index = SearchIndex.build(
        entries(
            FakeConcept(
                "/gui/greying.md",
                title="ScriptedGui IsValid button greying",
                body="GetPlayer.MakeScope and MakeScope again; MakeScope.",
            ),
            FakeConcept(
                "/formables/overview.md",
                title="Formable countries overview",
                body="A formable country is formed by a decision. Formable tags, formable rules.",
            ),
        )
    )
    assert paths(index, "how do I make a formable nation")[0] == "/formables/overview.md"
    (term,) = [t for t in analyze_query("make a page") if t.text == "make"]
    assert dict(term.forms)["make"] == LIGHT_VERB_WEIGHT == 0.25
    assert paths(index, "make")  # alone it still finds what says it


def test_a_questions_idiom_reads_its_verb_as_light_and_only_there():
    """A QA agent's "what does CMK stand for" put first a page about stand-alone mode:
    "stand" counted as a word the answer must hold. In "stand for", "figure out", "came
    from", and as the last word of a question asked with "do" ("what does X mean"), the
    verb weighs a quarter (tuning: 2 queries up, none down, lexical 0.7889 -> 0.7898)."""
    assert light_words("what does CMK stand for") == {"stand"}
    assert light_words("how do I figure out the owner") == {"figure"}
    assert light_words("where website visitors came from") == {"came"}
    assert light_words("what do the <<<<<<< markers in my file mean?") == {"mean"}
    assert light_words("how does the retry queue work") == {"work"}
    # Elsewhere the same words keep their weight.
    assert light_words("mean session length") == frozenset()
    assert light_words("stand up meeting notes") == frozenset()
    assert light_words("figures for q3") == frozenset()
    assert light_words("unfinished work items") == frozenset()
    assert light_words("regulars who come back on most days") == frozenset()
    index = SearchIndex.build(
        entries(
            FakeConcept(
                "/cmk.md",
                title="Customer-managed keys",
                body="CMK: keys you manage encrypt data at rest.",
            ),
            FakeConcept(
                "/rest.md",
                title="Encryption at rest",
                body="Data at rest uses CMK or platform keys.",
            ),
            FakeConcept("/rotation.md", title="Key rotation", body="Rotate a CMK yearly."),
            FakeConcept(
                "/standalone.md", title="Stand-alone mode", body="Run the stand for tests."
            ),
        )
    )
    assert paths(index, "what does CMK stand for")[0] == "/cmk.md"
    assert paths(index, "stand")[0] == "/standalone.md"  # alone it is a word
    hit = index.search("what does CMK stand for")[0]
    assert hit.confidence == 1.0  # the idiom's verb is no word the answer must hold
    assert index.missing_words("what does CMK stand for") == ()


def test_so_is_no_query_term():
    """flutter-okf: "why does my widget rebuild so often" put rebuild_behavior fourth,
    under pages whose descriptions say "... so children read ...". In "so that", "so
    often", it is the question's filler (tuning: lexical unchanged, hybrid 0.858 -> 0.860)."""
    assert "so" in STOPWORDS
    index = SearchIndex.build(
        entries(
            FakeConcept("/rebuild.md", title="Rebuild behavior", body="A widget rebuild runs."),
            FakeConcept(
                "/lift.md", title="State lifting", body="Lift state so so so children read it."
            ),
            FakeConcept("/vsync.md", title="Vsync", body="Ticks so animations stay in step."),
        )
    )
    assert paths(index, "why does my widget rebuild so often") == ["/rebuild.md"]


@pytest.mark.parametrize(
    ("word", "other"), [("kind", "type"), ("kinds", "types"), ("type", "kind"), ("types", "kinds")]
)
def test_kind_and_type_stand_for_each_other(word, other):
    assert synonyms(word) == [other]


def test_a_question_about_kinds_finds_the_types_concept():
    # "what kinds of votes are there?": the bundle calls them vote types.
    index = SearchIndex.build(
        entries(
            FakeConcept("/tables/votes.md", title="Votes", body="One row per vote on a post."),
            FakeConcept(
                "/references/vote_types.md",
                title="Vote Types Reference",
                body="Values of the vote type id column: upvote, downvote, favorite.",
            ),
        )
    )
    assert paths(index, "what kinds of votes are there?")[0] == "/references/vote_types.md"


@pytest.mark.parametrize(
    ("plural", "singular"), [("wikis", "wiki"), ("apis", "api"), ("kpis", "kpi")]
)
def test_the_plural_of_a_word_in_i_finds_the_word(plural, singular):
    # Fourth round: "-is" words were all read as singulars (analysis, basis), so "tag
    # wikis" never met "Posts Tag Wiki".
    assert singular in plural_variants(plural)
    index = SearchIndex.build(
        entries(
            FakeConcept("/tables/a.md", title=f"Posts tag {singular}", body="Rows."),
            FakeConcept("/tables/b.md", title="Tag excerpt", body=f"Tag {plural}, tags."),
            FakeConcept("/tables/c.md", title="Notes", body="Text."),
        )
    )
    assert paths(index, f"tag {plural}")[0] == "/tables/a.md"


def test_a_concept_named_by_the_query_outranks_one_that_only_mentions_it(monkeypatch):
    """Title coverage (docs/search.md): "cost allocation standard" and the concept titled
    "Cost Allocation", against a review that repeats the three words in its text; a
    restored index keeps the factor's postings."""
    from okfx.search import saved, scoring

    concepts = [
        FakeConcept(
            "/policies/cost.md",
            title="Cost Allocation",
            type="Policy",
            body="The standard way shared costs are split between teams each quarter.",
        ),
        FakeConcept(
            "/notes/review.md",
            title="Quarterly review",
            type="Note",
            description="The cost allocation standard, reviewed.",
            body="We reviewed the cost allocation standard. " * 4,
        ),
        FakeConcept("/notes/other.md", title="Other", type="Note", body="Nothing here."),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, "cost allocation standard")[:2] == ["/policies/cost.md", "/notes/review.md"]
    # a restored index ranks the same
    buffer = io.BytesIO()
    saved.write_index(index, {}).write(buffer)
    restored = saved.read_index(
        StateFile(buffer.getvalue()), [("b", {c.path: c for c in concepts})]
    )
    assert restored is not None
    query = "cost allocation standard"
    assert [(h.path, h.score) for h in restored.search(query, now=NOW)] == [
        (h.path, h.score) for h in index.search(query, now=NOW)
    ]
    monkeypatch.setattr(scoring, "TITLE_WEIGHT", 0.0)
    monkeypatch.setattr(scoring, "NAME_WEIGHT", 0.0)  # "Cost Allocation": named whole too
    assert paths(SearchIndex.build(entries(*concepts)), query)[0] == "/notes/review.md"
    # coverage turned off (textbook BM25F) turns title coverage off with it
    textbook = SearchIndex.build(entries(*concepts), coverage_floor=1.0)
    without = [(h.path, h.score) for h in textbook.search(query, now=NOW)]
    monkeypatch.setattr(scoring, "TITLE_WEIGHT", 0.1)
    assert [(h.path, h.score) for h in textbook.search(query, now=NOW)] == without


def test_the_concept_whose_whole_name_the_query_says_ranks_first(monkeypatch):
    """Naming (docs/search.md): both names hold "customer" and both types "definition",
    but the query says all of one title and a third of the other; the file name counts
    as a name too, so a title with a qualifier the query lacks still gets it whole."""
    from okfx.search import scoring

    concepts = [
        FakeConcept(
            "/ontology/buyer.md",
            title="customer",
            type="Ontology Definition",
            body="Every buyer at email grain: first and last order, lifetime total.",
        ),
        FakeConcept(
            "/tables/uc_customer_segments.md",
            title="uc_customer_segments",
            type="Table Definition",
            body="Customer segments: the customer, the segment, the customer definition.",
        ),
        FakeConcept(
            "/metrics/churn-rate.md",
            title="Churn rate (FY2026, by region)",
            body="The churn rate: customers lost over customers at the start.",
        ),
        FakeConcept(
            "/notes/weekly.md",
            title="Churn rate notes and targets",
            body="Notes on the churn rate, the churn rate again, and churn rate targets.",
        ),
    ]
    index = SearchIndex.build(entries(*concepts))
    assert paths(index, "customer definition")[0] == "/ontology/buyer.md"
    assert paths(index, "churn rate")[0] == "/metrics/churn-rate.md"
    factors = index.factors("churn rate", analyze_query("churn rate"), [
        index._forms(term) for term in analyze_query("churn rate")
    ])  # fmt: skip
    by_path = {index.entries[doc][1].path: factors.naming(doc) for doc in range(len(index))}
    assert by_path["/metrics/churn-rate.md"] == 1.0  # the file name, said whole
    assert by_path["/notes/weekly.md"] == pytest.approx(1 - scoring.NAME_WEIGHT / 2)  # 2 of 4
    assert by_path["/ontology/buyer.md"] == pytest.approx(1 - scoring.NAME_WEIGHT)
    monkeypatch.setattr(scoring, "NAME_WEIGHT", 0.0)
    assert paths(SearchIndex.build(entries(*concepts)), "customer definition")[0] == (
        "/tables/uc_customer_segments.md"
    )


_WORDS = "cost allocation standard orders table events user margin legacy draft".split()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 1_000_000))
def test_title_coverage_ceilings_bound_the_factor_and_change_no_ranking(seed):
    """The walk visits docs by ``Factors.ceiling`` (lifecycle, kind and title coverage
    counted from the name postings): each ceiling is at least the doc's factor, and a
    search ranks exactly as one that counts every name by binary search instead."""
    import random

    from okfx.search import scoring
    from okfx.search.analyzer import analyze_query as analyze

    rng = random.Random(seed)

    def words(low, high):
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(low, high)))

    concepts = [
        FakeConcept(
            f"/{rng.choice(['tables', 'metrics', 'notes'])}/c{i}.md",
            title=words(1, 3),
            type=rng.choice(["BigQuery Table", "Metric", "Note"]),
            status=rng.choice(["stable", "stable", "draft", "deprecated"]),
            body=words(0, 30),
        )
        for i in range(rng.randint(2, 60))
    ]
    index = SearchIndex.build(entries(*concepts))
    for _ in range(5):
        query = words(2, 4)
        terms = analyze(query)
        groups = [index._forms(term) for term in terms]
        factors = index.factors(query, terms, groups)
        ceiling = factors.ceiling()
        if ceiling is not None:
            for doc in range(len(concepts)):
                assert ceiling(doc) >= factors[doc], (query, doc)
        counted = [(h.path, h.score) for h in index.search(query, now=NOW)]
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(scoring, "NAME_POSTINGS", -1)  # no counts: no ceiling, bisect
            assert index.factors(query, terms, groups).ceiling() is None
            looked_up = [(h.path, h.score) for h in index.search(query, now=NOW)]
        assert counted == looked_up, query


def test_the_walk_scores_fewer_concepts_by_their_ceilings(monkeypatch):
    """A concept whose name lacks the query's words waits until the walk's bound comes
    down to 0.9 of its own: on a query whose words fill twelve hundred bodies, the
    ceilings halve the concepts scored exactly, and the ranking stays the same."""
    import random

    from okfx.search import scoring, topk

    rng = random.Random(7)
    concepts = []
    for i in range(3000):
        if i >= 1200:
            body, title = "entry row " * 10, f"Other {i}"
        elif i % 100 == 0:
            body, title = "entry row " * 10, "Invoice ledger of the quarterly accounts"
        else:
            times = rng.choice([3, 4])
            words = ["invoice", "ledger"] * times + ["entry", "row"] * (12 - times)
            rng.shuffle(words)
            body, title = " ".join(words), f"Note {i}"
        concepts.append(FakeConcept(f"/notes/n{i}.md", title=title, body=body))
    index = SearchIndex.build(entries(*concepts))
    scored: list[int] = []
    real = topk._Scorer.score

    def counting(self, doc):
        scored.append(doc)
        return real(self, doc)

    monkeypatch.setattr(topk._Scorer, "score", counting)
    with_ceilings = [(h.path, h.score) for h in index.search("invoice ledger", now=NOW)]
    walked = len(scored)
    scored.clear()
    monkeypatch.setattr(scoring, "NAME_POSTINGS", -1)  # no counts: no ceilings
    without = [(h.path, h.score) for h in index.search("invoice ledger", now=NOW)]
    assert with_ceilings == without
    assert 0 < walked < 0.6 * len(scored), (walked, len(scored))


@pytest.mark.parametrize("query", ["theme", "themes", "theming"])
def test_a_form_that_is_a_stopword_is_not_looked_up(query):
    """Agent QA: "theme" grew the form "them", a stopword, so every page saying "them"
    was a theme hit (a no-answer question read confidence 0.6 on a tree view's page)."""
    index = SearchIndex.build(
        entries(
            FakeConcept("/tree.md", title="Tree", body="Keep the branch out from under them."),
            FakeConcept("/colors.md", title="Colors", body="The color theme of the app."),
        )
    )
    assert paths(index, query) == ["/colors.md"]
    forms = {form for term in analyze_query(query) for form, _ in term.forms}
    assert not forms & STOPWORDS


def test_look_like_and_look_up_are_light_and_reflexive_pronouns_no_words():
    """Agent QA: in "what does its schema look like", "like" put first a page saying
    "would you like this wrapped"; "look" and "up" of "look up a nation" and "myself"
    were named missing words, with a spelling notice."""
    assert light_words("what does its schema look like") == {"look", "like"}
    assert light_words("look up a single nation by its code") == {"look", "up"}
    assert light_words("pages people like") == frozenset()
    assert {"myself", "themselves"} <= STOPWORDS
    index = SearchIndex.build(
        entries(
            FakeConcept("/cli.md", title="CLI", body="Would you like this wrapped as a project?"),
            FakeConcept("/xrd.md", title="XRD schema", body="An XRD declares an OpenAPI schema."),
            FakeConcept("/ready.md", title="Readiness", body="Mark a resource ready."),
        )
    )
    assert paths(index, "What is an XRD and what does its schema look like?")[0] == "/xrd.md"
    assert index.missing_words("how do I look up an XRD schema") == ()
    assert index.missing_words("how do I mark a resource ready myself") == ()


def test_which_x_holds_reads_its_verb_as_light_and_only_there():
    """Agent QA on a table catalog: "which table holds employee payroll?" read 0.5 on
    every table with a column named ``holds``; the frame's verb is no word the answer
    must hold, nor a missing word. Elsewhere it is a word like any other."""
    assert light_words("which table holds employee payroll?") == {"holds"}
    assert light_words("what column stores the user id") == {"stores"}
    assert light_words("the table holds of a ship") == frozenset()
    index = SearchIndex.build(
        entries(FakeConcept("/calls.md", title="Calls", body="| `holds` | ARRAY |\n\nA table."))
    )
    (hit,) = index.search("which table holds employee payroll?", now=NOW)
    assert hit.confidence < 0.5 and hit.matched == ("table", "holds")
    assert index.missing_words("which table holds employee payroll?") == ("employee", "payroll")


def test_which_x_should_i_pick_reads_the_choice_as_light():
    """Session 60's agent QA: "which version should I pick" put first pages saying "pick
    up a saga", at confidence 1.0."""
    assert light_words("which version should I pick") == {"pick"}
    assert light_words("what plan do we choose for the team") == {"choose"}
    assert light_words("pick a color") == frozenset()  # a word like any other elsewhere
    index = SearchIndex.build(
        entries(
            FakeConcept("/saga.md", title="Saga", body="A worker can pick up a saga."),
            FakeConcept("/versions.md", title="Version selection", body="Which version."),
        )
    )
    hits = index.search("which version should I pick", now=NOW)
    assert hits[0].path == "/versions.md"
    assert {h.path: h.confidence for h in hits}.get("/saga.md", 0.0) < 0.5


def test_how_much_and_did_are_no_words_of_the_answer():
    """Session 60's agent QA: "how much are the fees" put first a page saying "how much
    cheaper" (matched: much, fees) over the page titled "Fees & Charges"."""
    assert [t.text for t in analyze_query("how much are the fees")] == ["fees"]
    assert [t.text for t in analyze_query("why did the job fail")] == ["job", "fail"]
    index = SearchIndex.build(
        entries(
            FakeConcept("/faq.md", title="FAQ", body="How much cheaper is it? Fees vary."),
            FakeConcept("/fees.md", title="Fees & Charges", body="What we charge."),
        )
    )
    found = {h.path: h.confidence for h in index.search("how much are the fees", now=NOW)}
    assert found == {"/faq.md": 1.0, "/fees.md": 1.0}


def test_a_contraction_is_no_word_a_hit_must_hold():
    """Session 60's agent QA: "can't" gave can, t and cant, and a page holding any "t"
    (every "don't") held a word of "countries that can't invest"; "can't" alone read 1.0.
    Ranking still reads the parts (read as "can", the tuning sets lost a query)."""
    from okfx.search.analyzer import is_contraction

    assert all(map(is_contraction, ["can't", "doesn\u2019t", "we'll", "I'm", "they've"]))
    assert not any(map(is_contraction, ["cant", "O'Reilly", "n't", "users'", "it's"]))
    index = SearchIndex.build(
        entries(
            FakeConcept("/a.md", title="Jurisdictions", body="Residents of these countries."),
            FakeConcept("/b.md", title="Access", body="It doesn't show. Don't invest."),
        )
    )
    found = {
        h.path: (h.confidence, h.matched)
        for h in index.search("countries that can't invest", now=NOW)
    }
    assert found["/a.md"][0] == 0.5  # countries, of countries and invest
    assert found["/b.md"][0] == 0.5  # invest; its "t" is no word of the query's
    assert [h.confidence for h in index.search("can't", now=NOW)] == [0.0]
    assert index.missing_words("countries that won't invest") == ()


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("IDs", ["ids"]),
        ("userIDs", ["user", "ids", "userids"]),
        ("URLsFor", ["urls", "for", "urlsfor"]),
        ("HTTPServer", ["http", "server", "httpserver"]),
    ],
)
def test_capitals_with_a_plural_s_stay_one_word(text, terms):
    # Session 63: split at the case change, "IDs" was the terms i and ds.
    from okfx.search.analyzer import tokenize

    assert tokenize(text) == terms


@pytest.mark.parametrize(
    ("word", "forms"), [("id", ["ids"]), ("ids", ["id"]), ("vm", ["vms"]), ("os", []), ("a", [])]
)
def test_short_words_have_their_plural_or_singular(word, forms):
    assert plural_variants(word) == forms


@pytest.mark.parametrize(
    "query", ["post type id", "post type ids", "What does post type id 2 mean?"]
)
def test_a_short_word_finds_its_plural_written_in_capitals(query):
    # Session 63's new tuning queries: "post type id" matched "post" and "type" of the
    # reference titled "Post Type IDs", and pages with "post type id" in a table row
    # came first.
    index = SearchIndex.build(
        entries(
            FakeConcept(
                "/references/post_type_ids.md",
                title="Post Type IDs",
                body="Enumerated IDs for the types of posts. `1`: Question. `2`: Answer.",
            ),
            FakeConcept(
                "/tables/post_history.md",
                title="Post History",
                body="Columns: post_id, post_history_type_id (2 means an edit), user_id, text.",
            ),
            FakeConcept(
                "/tables/post_links.md",
                title="Post Links",
                body="Columns: post_id, related_post_id, link_type_id (1 linked, 3 duplicate).",
            ),
        )
    )
    assert paths(index, query)[0] == "/references/post_type_ids.md"


def test_the_kind_a_query_names_before_its_preposition_is_the_one_it_asks_for():
    """Session 63's tuning queries: "filter input for the countries query" names two kinds,
    inputs and queries, and the query the input is *for* came first (graphql-okf). The
    kind named before the first preposition is the head: a concept of only the other kind
    is scored x KIND_PARTIAL, one of neither x KIND_MISS."""
    from okfx.search import kinds

    concepts = [
        FakeConcept("/queries/countries.md", title="countries", type="GraphQL Query"),
        FakeConcept("/types/inputs/CountryFilterInput.md", title="CFI", type="GraphQL Input"),
        FakeConcept("/types/objects/Country.md", title="Country", type="GraphQL Object"),
    ]
    index = SearchIndex.build(entries(*concepts))
    vocabulary = index.kinds.vocabulary(index.entries)

    def factors(query: str) -> list[float]:
        found = index.kinds.factor(index.entries, analyze_query(query), vocabulary, query)
        assert found is not None
        group_of, by_group = found
        return [by_group[group_of[doc]] for doc in range(len(concepts))]

    partial, miss = kinds.KIND_PARTIAL, kinds.KIND_MISS
    assert factors("filter input for the countries query") == [partial, 1.0, miss]
    assert factors("the countries query with its filter input") == [1.0, partial, miss]
    assert factors("which query takes a filter input") == [1.0, 1.0, miss]  # no head
    assert factors("filter input and countries query") == [1.0, 1.0, miss]
    query = "filter input for the countries query"
    assert kinds.head_forms(query, analyze_query(query)) >= {"filter", "input", "inputs"}


def test_latin_letters_lose_their_diacritics_other_scripts_keep_theirs() -> None:
    """Viewer QA F4: "Sankara" found none of a Sanskrit bundle's 30 pages on Śaṅkara, whose
    name no keyboard types; Japanese kana keep their dakuten (が is not か)."""
    from okfx.search.analyzer import tokenize

    assert tokenize("Śaṅkara pramāṇa Ångström café") == tokenize("Sankara pramana Angstrom cafe")
    assert tokenize("が") != tokenize("か")
    assert tokenize("ß æ ø") == ["ss", "æ", "ø"]  # no base letters to fold to: as they are
    index = SearchIndex.build(
        entries(FakeConcept("/t.md", title="Tattvabodha (Śaṅkara)"), FakeConcept("/x.md"))
    )
    assert [hit.path for hit in index.search("Sankara", now=NOW)] == ["/t.md"]
    assert [hit.path for hit in index.search("śaṅkara", now=NOW)] == ["/t.md"]


def test_three_adjacent_words_meet_the_one_word_they_make() -> None:
    """Words QA F7: muddi names ~270 tables by joined words (Unidentifiedburiedobject);
    two adjacent words met such a name, three never did."""
    index = SearchIndex.build(
        entries(
            FakeConcept("/t/u.md", title="Unidentifiedburiedobject", body="A table."),
            FakeConcept("/r.md", title="Reading", body="An object that is buried is unidentified."),
        )
    )
    for query in ("unidentified buried object", "unidentified buried objects"):
        assert index.search(query, now=NOW)[0].path == "/t/u.md", query


def test_a_snippet_shows_the_line_holding_a_word_written_with_diacritics() -> None:
    """The page's "bādha" is the query's "badha": the snippet is that line, not the first."""
    body = "Opening line about nothing.\n\n> *Mithyātvaṃ traikālika-bādha-pratiyogitvaṃ*\n"
    index = SearchIndex.build(entries(FakeConcept("/b.md", title="Sublation", body=body)))
    (hit,) = index.search("traikalika badha", now=NOW)
    assert "traikālika-bādha" in hit.snippet
