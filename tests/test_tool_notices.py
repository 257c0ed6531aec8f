"""What a tool says when a call finds nothing, reads past the end, or continues a read."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conftest import MakeBundle, concept
from okfx import Bundle, KnowledgeManager, Toolbox
from okfx.cli import render

NOW = datetime(2026, 7, 1, tzinfo=UTC)


@pytest.fixture
def box(make_bundle: MakeBundle) -> Toolbox:
    root = make_bundle(
        {
            "live.md": concept(
                title="Dock availability",
                description="How often a rider finds a free dock at a station.",
                tags="[stations, docks]",
                sources="[{resource: 'https://example.com/gbfs', title: 'GBFS feed'}]",
                body="# Definition\n" + "docks " * 400,
            ),
            "old.md": concept(title="Old zebra metric", status="deprecated", body="zebra\n"),
            "older.md": concept(title="Older zebra", status="deprecated", body="zebra\n"),
            "stale.md": concept(
                title="Stale quagga", stale_after="2020-01-01T00:00:00Z", body="quagga\n"
            ),
            "attesters/check.py": "print('hi')\n",
            "attesters/sql/eq.sql": "select 1;\n",
            "attesters/notes.md": concept(title="notes"),
        }
    )
    return Toolbox(Bundle.load(root), now=lambda: NOW)


def test_a_search_with_no_hits_says_what_to_try(box: Toolbox) -> None:
    result = box.search_concepts(query="unicorn rainbow")
    assert result["hits"] == []
    notice = result["notice"]
    assert "No concept matches 'unicorn rainbow'" in notice
    for hint in ("fewer or other words", "grep_concepts", "list_concepts", "type or tag"):
        assert hint in notice


def test_a_query_is_echoed_as_typed(box: Toolbox) -> None:
    """A regex or a path echoed back the way ``repr`` writes it (``'\\\\bdp\\\\b'``) would
    be a different regex when copied from the message."""
    result = box.search_concepts(query="C:\\unicorn don't\nrainbow")
    assert result["notice"].startswith('No concept matches "C:\\unicorn don\'t\u240arainbow".')
    found = box.grep_concepts(pattern="\\bunicorn\\b", regex=True)
    assert found["matches"] == []
    assert render.grep(found).startswith("No matches for '\\bunicorn\\b'.")


def test_no_hits_names_the_deprecated_and_stale_matches_it_hid(box: Toolbox) -> None:
    deprecated = box.search_concepts(query="zebra")
    assert deprecated["hits"] == []
    assert "2 deprecated matches hidden; pass include_deprecated=true" in deprecated["notice"]
    assert "fewer or other words" in deprecated["notice"]
    stale = box.search_concepts(query="quagga", include_stale=False)
    assert "1 stale match hidden; pass include_stale=true" in stale["notice"]


def test_hits_keep_a_notice_only_for_what_was_hidden(box: Toolbox) -> None:
    assert box.search_concepts(query="dock availability")["notice"] == ""


def test_an_offset_past_the_end_says_so(box: Toolbox) -> None:
    result = box.read_concept(path="live", offset=10**6)
    assert result["body"] == ""
    assert result["notice"] == (
        f"offset {10**6} is past the end of the body ({result['body_chars']} characters): "
        "nothing is left to read; call with offset=0 to read from the start."
    )
    rows = box.list_concepts(offset=500)
    assert rows["concepts"] == []
    assert rows["notice"].startswith("offset 500 is past the last of the 3 concepts that match")
    assert "2 deprecated matches hidden" in rows["notice"]


def test_a_continuation_read_sends_a_short_header_once_the_first_read_sent_the_whole(
    box: Toolbox,
) -> None:
    first = box.read_concept(path="live", max_chars=1000)
    assert first["truncated"] and "extensions" in first and "sources" in first
    more = box.read_concept(path="live", offset=first["next_offset"], max_chars=1000)
    whole = box.read_concept(path="live", max_chars=10_000)["body"]
    at = first["next_offset"]  # the first page ends on a whole word, at 1,000 or before
    assert at <= 1000 and (more["offset"], whole[at:].startswith(more["body"])) == (at, True)
    for key in ("extensions", "sources", "computation", "citations", "headings"):
        assert key not in more, key
    for key in ("bundle", "path", "title", "type", "trust_tier", "status", "stale", "notices"):
        assert key in more, key
    assert more["header"].startswith("short: the whole header came with offset=0")

    def header(read: dict[str, object]) -> int:  # neither the body nor the call for the rest
        return len(str({k: v for k, v in read.items() if k not in ("body", "truncation")}))

    assert header(more) < header(first) * 0.7


def test_read_resource_on_a_folder_lists_its_files(box: Toolbox) -> None:
    result = box.read_resource(path="attesters")
    error = result["error"]
    assert error["code"] == "not_found"
    assert "/attesters is a folder" in error["message"]
    assert error["did_you_mean"] == ["/attesters/check.py", "/attesters/sql/eq.sql"]
    assert "read_concept" in error["message"]  # notes.md is a concept: read it there
    assert box.read_resource(path="/attesters/")["error"]["did_you_mean"][0] == (
        "/attesters/check.py"
    )


def test_a_search_that_finds_nothing_names_concepts_with_a_close_name(
    make_bundle: MakeBundle,
) -> None:
    """A typo in a name ("custommer", as another OKF tool's tests search) found nothing and
    said only "try other words"; the name index that answers a wrong path knows better."""
    files: dict[str, str | bytes] = {
        "tables/customers.md": concept(title="Customers"),
        "tables/orders.md": concept(title="Orders"),
    }
    other: dict[str, str | bytes] = {"customer-churn.md": concept(title="Customer churn")}
    one = Bundle.load(make_bundle(files), "shop")
    box = Toolbox(KnowledgeManager([one, Bundle.load(make_bundle(other), "ops")]))
    found = box.search_concepts(query="custommer")
    assert found["hits"] == []
    close = found["did_you_mean"]
    assert {(c["bundle"], c["path"]) for c in close} >= {
        ("shop", "/tables/customers.md"),
        ("ops", "/customer-churn.md"),
    }
    assert "'Customers' (/tables/customers.md)" in found["notice"]
    # one bundle named: its concepts only
    only = box.search_concepts(query="custommer", bundle="shop")["did_you_mean"]
    assert [c["path"] for c in only] == ["/tables/customers.md"]
    # a misspelt name among other misspelt words: looked up word by word (helper QA:
    # "custmer email adress" named nothing where "custmer adress" named Customers)
    words = box.search_concepts(query="custmer email adress", bundle="shop")
    assert words["hits"] == [] and words["did_you_mean"][0]["path"] == "/tables/customers.md"
    # nothing close: none named; a filter that narrowed the search: none looked for
    assert box.search_concepts(query="xyzzy qwerty")["did_you_mean"] == []
    assert "did_you_mean" not in box.search_concepts(query="custommer", type="Metric")
    tier = box.search_concepts(query="custommer", trust_tier="human-reviewed")
    assert "did_you_mean" not in tier  # as for the other filters (results QA)


def test_neighbors_of_a_folder_without_an_index_names_its_concepts(
    make_bundle: MakeBundle,
) -> None:
    """Helper QA: ``get_neighbors(path="tables/")`` on a folder with no index.md answered
    not_found with five unrelated concepts, while its path parameter, shared with
    read_concept, promised a listing. It now says the folder has no links of its own and
    names the concepts in it; a folder with an index.md gives that index's links."""
    files: dict[str, str | bytes] = {
        "tables/orders.md": concept(body="See [customers](customers.md).\n"),
        "tables/customers.md": concept(),
        "docs/index.md": "# Docs\n\n* [Orders](../tables/orders.md)\n",
        "other.md": concept(),
    }
    box = Toolbox(Bundle.load(make_bundle(files), "shop"))
    error = box.get_neighbors(path="tables/")["error"]
    assert error["code"] == "not_found"
    assert "no links of its own" in error["message"] and "read_concept" in error["message"]
    assert error["did_you_mean"] == ["/tables/customers.md", "/tables/orders.md"]
    listed = box.get_neighbors(path="docs/")
    assert [edge["path"] for edge in listed["outbound"]] == ["/tables/orders.md"]
    assert box.get_neighbors(path="nowhere/")["error"]["code"] == "not_found"


def test_a_grep_that_finds_nothing_says_what_would_match(make_bundle: MakeBundle) -> None:
    """MCP QA: grep "hpsov" found nothing with an empty notice in a bundle that writes
    HPSOV, and "kubectl rollout \\w+" (a regular expression) nothing either: a model took
    grep's silence for the text's absence."""
    files = {"fuel.md": concept(body="The HPSOV opens. Run kubectl rollout undo.\n")}
    box = Toolbox(Bundle.load(make_bundle(files)))
    assert box.grep_concepts(pattern="hpsov")["notice"] == (
        "No match as written; 1 concept(s) match ignoring case (pass ignore_case=true)."
    )
    said = box.grep_concepts(pattern="kubectl rollout \\w+")["notice"]
    assert (
        said == "No match as written; 1 concept(s) match as a regular expression (pass regex=true)."
    )
    nothing = box.grep_concepts(pattern="axle nut torque")
    assert nothing["matches"] == [] and nothing["notice"] == (
        # CLI QA: ignoring case was tried too, so no other case is offered
        "No concept holds the exact text, in any letter case. grep matches text as written: "
        "try a shorter piece, or search_concepts for the words."
    )
    # CLI QA: matches a filter hid are no letter-case miss; the notice names the filter
    hidden = box.grep_concepts(pattern="HPSOV", tags=["nope"])["notice"]
    assert "letter case" not in hidden and "try a shorter piece" not in hidden
    assert "1 match without the requested tags hidden" in hidden
    # Agent QA: the advice offered what the call had passed already.
    told = box.grep_concepts(pattern="axle nut", ignore_case=True)["notice"]
    assert told == (
        "No concept holds the exact text. grep matches text as written: try a shorter piece, "
        "or search_concepts for the words."
    )
    told = box.grep_concepts(pattern="axle (nut|bolt)", regex=True, ignore_case=True)["notice"]
    assert told == (
        "No concept holds the regular expression. Try a looser expression, or search_concepts "
        "for the words."
    )
    assert box.grep_concepts(pattern="HPSOV")["notice"] == ""  # a match: nothing to say
    # agent QA: ignore_case was offered for a Korean word, which has no letter case
    for caseless in ("급여", "1234"):
        assert box.grep_concepts(pattern=caseless)["notice"] == (
            "No concept holds the exact text. grep matches text as written: try a shorter "
            "piece, or search_concepts for the words."
        )


def test_a_filter_value_no_concept_has_is_named_with_the_values_there_are(
    make_bundle: MakeBundle,
) -> None:
    """Agent QA: a guessed type or folder emptied the result, and the notice said "try
    fewer or other words", pointing at the query; nothing listed the types or folders."""
    files = {
        "tables/orders.md": concept("Table", "Orders of a day.\n", tags="[sales]"),
        "tables/refunds.md": concept("Table", "Refunds.\n", tags="[sales]"),
        "metrics/revenue.md": concept("Metric", "Orders sum.\n", tags="[finance]"),
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    listed = box.list_concepts(type="Tabel")
    assert listed["concepts"] == [] and listed["notice"].startswith(
        "No concept has type 'Tabel' (types: 'Table', 'Metric')."
    )
    found = box.search_concepts("orders", directory="/tabels")
    assert found["hits"] == [] and found["notice"].startswith(
        "No concept is in '/tabels/' (folders: '/tables/', '/metrics/')."
    )
    # CLI QA: a slip below the top level got the top folders only
    deep = {f"functions/function-{n}/a.md": concept("Fn", "Orders.\n") for n in ("kro", "go")}
    deep_box = Toolbox(Bundle.load(make_bundle(deep)))
    assert deep_box.list_concepts(directory="/functions/function-kr")["notice"].startswith(
        "No concept is in '/functions/function-kr/' (folders: '/functions/function-kro/', "
        "'/functions/function-go/', '/functions/')."
    )
    grepped = box.grep_concepts("Orders", tags=["sale", "finance"])
    assert grepped["notice"].startswith("No concept is tagged 'sale' (tags: 'sales', 'finance').")
    # A value some concept has says nothing of the kind, even when the result is empty.
    assert "No concept has type" not in box.search_concepts("zebra", type="metric")["notice"]
    # agent QA: type 'Table' listed 'BigQuery Table' after types unlike it
    typed = {f"r{i}.md": concept("Reference", "R.\n") for i in range(5)}
    typed.update({"t.md": concept("BigQuery Table", "T.\n"), "d.md": concept("Dataset")})
    box = Toolbox(Bundle.load(make_bundle(typed)))
    assert box.list_concepts(type="table")["notice"].startswith(
        "No concept has type 'table' (types: 'BigQuery Table', 'Reference', 'Dataset')."
    )


def test_a_search_its_filters_emptied_says_the_filter_is_the_cause(
    make_bundle: MakeBundle,
) -> None:
    """Viewer QA: words that matched 10 concepts a tag filter hid were answered "no
    concept matches; try fewer or other words", the filter named only at the end."""
    files = {f"c{i}.md": concept(body="upjet providers\n", tags="[generated]") for i in range(3)}
    box = Toolbox(Bundle.load(make_bundle(files)))
    said = box.search_concepts("upjet", tags=["generated", "gitops"])["notice"]
    assert said.startswith("No concept is tagged 'gitops'")
    assert "Concepts match 'upjet', but not within the filters: 3 matches without the " in said
    assert "Try fewer or other words" not in said
    plain = box.search_concepts("zebra")["notice"]
    assert plain.startswith("No concept matches 'zebra'.") and "Try fewer" in plain


def test_an_empty_folder_listing_names_a_nested_bundle_and_only_folders_with_concepts(
    make_bundle: MakeBundle,
) -> None:
    """Agent QA on a catalog with a second bundle in okf/: the notice listed '/okf/',
    which holds no concept, among the folders to try, and said nothing of the bundle
    there; only okfx validate named it."""
    root = make_bundle(
        {
            "tables/a.md": concept("Table"),
            "okf/README.md": "# About\n",
            "okf/inner/index.md": "---\nokf_version: '0.2'\n---\n# Inner\n",
            "okf/inner/b.md": concept("Table"),
        }
    )
    notice = Toolbox(Bundle.load(root)).list_concepts(directory="/okf/")["notice"]
    assert "(folders: '/tables/')" in notice
    assert "'/okf/inner/' holds a bundle of its own" in notice
    # Read there, as an agent walking the folders does (agent QA, ultracart): the folder
    # says why its subfolder is empty, and a path in it why it is not found.
    box = Toolbox(Bundle.load(root))
    listing = box.read_concept(path="/okf/")
    assert listing["folders"] == [{"path": "/okf/inner", "concepts": 0}]
    assert "'/okf/inner/' holds a bundle of its own" in listing["notice"]
    for result in (
        box.read_concept(path="/okf/inner/b.md"),
        box.read_resource(path="/okf/inner/index.md"),
    ):
        error = result["error"]
        assert error["code"] == "not_found" and "did_you_mean" not in error
        assert "/okf/inner/ is a bundle of its own" in error["message"]
        assert str(root) not in error["message"]  # no host path to the agent
        assert result["content_is_untrusted_data"] is True  # it names the bundle's folder
    assert "bundle of its own" not in box.read_concept(path="/okf/nothing.md")["error"]["message"]
    # a link into it names the bundle it is in, not a missing folder (security QA)
    linked = make_bundle(
        {
            "tables/a.md": concept("Table", body="[b](/okf/inner/b.md)"),
            "okf/inner/index.md": "---\nokf_version: '0.2'\n---\n# Inner\n",
            "okf/inner/b.md": concept("Table"),
        }
    )
    (edge,) = Toolbox(Bundle.load(linked)).get_neighbors(path="tables/a.md")["unresolved"]
    assert edge["nested_bundle"] == "/okf/inner" and "missing_folder" not in edge


def test_a_search_with_no_words_to_search_says_so_first(box: Toolbox) -> None:
    """Docs QA: an empty query got "try fewer or other words" before the real reason."""
    assert box.search_concepts("   ")["notice"] == (
        "The query is empty: ask with the words of the subject."
    )
    said = box.search_concepts("?!")["notice"]
    assert said.startswith("'?!' has no searchable words") and "Try fewer" not in said


def test_hits_and_rows_of_a_status_the_spec_does_not_define_say_so(
    make_bundle: MakeBundle,
) -> None:
    """Agent QA: a producer's `status: generated` on every stub page showed as "stable"
    in every hit and row; only read_concept said otherwise."""
    files = {
        "a.md": concept(title="Alpha stub", status="generated"),
        "b.md": concept(title="Alpha page"),
        "c.md": concept(title="Alpha old", status="Deprecated"),  # a known one, in capitals
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    said = "1 hit has a status spec §5.4 does not define ('generated'), shown as the status"
    assert said in box.search_concepts("alpha")["notice"]
    rows = box.list_concepts()
    assert "1 row has a status spec §5.4 does not define ('generated')" in rows["notice"]
    assert "does not define" not in box.search_concepts("page")["notice"]


def test_a_first_hit_found_by_meaning_alone_and_not_near_is_called_a_guess() -> None:
    """Paraphrase QA: "how do I install this on Windows" put first a page found by meaning
    alone at confidence 0.0, above three holding "windows", and the notice was empty."""
    from okfx.tools.views import first_guess

    def hit(found: str, confidence: float, matched: list[str]) -> dict[str, object]:
        return {"found": found, "confidence": confidence, "matched": matched}

    held = hit("both", 0.5, ["windows"])
    said = first_guess([hit("semantic", 0.0, []), held, held])
    assert said == (
        "The first hit holds no word of the query and is not near it by meaning (confidence "
        "0.00): a guess; hits after it hold some of the query's words."
    )
    assert first_guess([hit("semantic", 0.72, []), held]) == ""  # near by meaning
    assert first_guess([hit("semantic", 0.08, ["api"]), held]) == ""  # it holds a word
    assert first_guess([hit("semantic", 0.1, []), hit("semantic", 0.1, [])]) == ""
    assert first_guess([held, hit("semantic", 0.0, [])]) == ""
    assert first_guess([]) == ""
    # Words QA: ten guesses for "SSSI boundaries in Wales", whose every word some concept
    # holds, ranking below them all: said, with where to look.
    guesses = [hit("semantic", 0.0, []), hit("semantic", 0.0, [])]
    said = first_guess(guesses, words_held=True)
    assert said.startswith("No hit holds a word of the query: each was found by meaning")
    assert "Concepts that hold the query's words rank below these" in said
    assert first_guess(guesses, words_held=False) == ""  # the missing-words notice says it
    assert first_guess([hit("semantic", 0.6, []), hit("semantic", 0.0, [])], True) == ""


def test_a_listing_limit_past_the_page_size_says_so(make_bundle: MakeBundle) -> None:
    """Agent QA: limit=100000 gave 200 rows and nothing said the limit was cut."""
    files = {f"n{i:03}.md": concept("Note", "N.\n") for i in range(205)}
    box = Toolbox(Bundle.load(make_bundle(files)))
    big = box.list_concepts(limit=100_000)
    assert len(big["concepts"]) == 200 and big["next_offset"] == 200
    assert big["notice"] == (
        "limit is at most 200: this page holds 200 rows; continue from next_offset."
    )
    assert box.list_concepts(limit=200)["notice"] == ""
