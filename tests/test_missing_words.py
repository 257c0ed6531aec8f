"""search_concepts names the query's words that no concept holds (``missing_words``), so
that a misspelling or a word the bundle does not use is seen as such."""

from __future__ import annotations

from conftest import MakeBundle, concept
from okfx import Bundle, KnowledgeManager, Toolbox

FILES: dict[str, str | bytes] = {
    "bikes.md": concept("Table", body="Each bike in the fleet, with its dock."),
    "mau.md": "---\ntype: Metric\ntitle: Monthly Active Users\n---\nRiders seen in a month.\n",
}


def search(box: Toolbox, query: str, **kwargs: object) -> dict[str, object]:
    result = box.search_concepts(query, **kwargs)  # type: ignore[arg-type]
    assert "error" not in result, result
    return result


def test_the_words_no_concept_holds_are_named(make_bundle: MakeBundle) -> None:
    box = Toolbox(Bundle.load(make_bundle(FILES)))
    found = search(box, "bike custommer churn")
    assert found["missing_words"] == ["custommer", "churn"]
    assert str(found["notice"]).startswith("No concept contains the word(s) 'custommer', 'churn'")
    assert [h["path"] for h in found["hits"]] == ["/bikes.md"]  # type: ignore[index]


def test_forms_stopwords_and_acronyms_are_not_missing(make_bundle: MakeBundle) -> None:
    box = Toolbox(Bundle.load(make_bundle(FILES)))
    queries = (
        "bikes in the fleet",
        "the bike",
        "MAU",
        "which docks",
        "how many bikes per dock",  # quantifiers and prepositions of questions
        "each bike since the fleet",
        "bikes among docks",
        # pronouns and filler (session 62's paraphrase QA: "their" got a spelling notice)
        "bikes in their docks",
        "someone doing something with several bikes",
    )
    for query in queries:
        found = search(box, query)
        assert found["missing_words"] == [], query
        assert found["notice"] == "", query


def test_a_questions_light_verbs_are_not_missing_nor_lower_its_confidence(
    make_bundle: MakeBundle,
) -> None:
    """graphql-okf: "what can I use to fetch a country" named 'use' as a possible
    misspelling, and its one right hit read confidence 0.33."""
    box = Toolbox(Bundle.load(make_bundle(FILES)))
    found = search(box, "what can I use to get a bike fleet")
    assert found["missing_words"] == [] and found["notice"] == ""
    assert found["hits"][0]["confidence"] == 1.0  # type: ignore[index]
    found = search(box, "can I use a bike to commute")
    assert found["missing_words"] == ["commute"]
    # bike of bike and commute, a word no concept holds weighing double
    assert found["hits"][0]["confidence"] == 0.33  # type: ignore[index]


def test_a_search_without_hits_lists_them_too(make_bundle: MakeBundle) -> None:
    found = search(Toolbox(Bundle.load(make_bundle(FILES))), "xyzzy qwerty")
    assert found["hits"] == [] and found["missing_words"] == ["xyzzy", "qwerty"]
    assert str(found["notice"]).startswith("No concept matches 'xyzzy qwerty'.")


def test_across_bundles_or_in_one(make_bundle: MakeBundle) -> None:
    other = {"churn.md": concept("Metric", body="Churn: riders who stopped riding.")}
    manager = KnowledgeManager()
    manager.add(Bundle.load(make_bundle(FILES), "fleet"))
    manager.add(Bundle.load(make_bundle(other), "metrics"))
    box = Toolbox(manager)
    assert search(box, "bike churn")["missing_words"] == []  # the metrics bundle has it
    assert search(box, "bike churn", bundle="fleet")["missing_words"] == ["churn"]


def test_a_live_index_knows_the_words_of_its_base_and_its_delta(make_bundle: MakeBundle) -> None:
    from okfx.search.index import SearchIndex
    from okfx.search.live import LiveIndex, updated

    concepts = list(Bundle.load(make_bundle(FILES)))
    extra = list(Bundle.load(make_bundle({"churn.md": concept("Metric", body="Churn.")})))
    base = SearchIndex.build(("b", c) for c in concepts)
    live = updated(base, [], [("b", extra[0])], merge_fraction=1.0, small=0)
    assert isinstance(live, LiveIndex)
    assert base.missing_words("bike churn custommer") == ("churn", "custommer")
    assert live.missing_words("bike churn custommer") == ("custommer",)


def test_a_reloaded_bundle_knows_its_new_words(make_bundle: MakeBundle) -> None:
    root = make_bundle(FILES)
    manager = KnowledgeManager()
    manager.add(Bundle.load(root, "fleet"))
    box = Toolbox(manager)
    assert search(box, "bike churn")["missing_words"] == ["churn"]
    (root / "churn.md").write_text(concept("Metric", body="Churn of riders."), encoding="utf-8")
    manager.reload()
    assert search(box, "bike churn")["missing_words"] == []
    assert search(box, "bike custommer")["missing_words"] == ["custommer"]


def test_a_missing_word_close_to_a_name_names_the_concept(make_bundle: MakeBundle) -> None:
    files = {**FILES, "customers.md": concept("Table", title="Customers", body="Who rides.")}
    box = Toolbox(Bundle.load(make_bundle(files)))
    found = search(box, "bike custommer")
    assert found["missing_words"] == ["custommer"]
    assert [(c["path"], c["title"]) for c in found["did_you_mean"]] == [  # type: ignore[union-attr]
        ("/customers.md", "Customers")
    ]
    assert str(found["notice"]).endswith(
        "Concepts with a close name (did_you_mean): 'Customers' (/customers.md)."
    )
    # A short missing word is close to too much to say so.
    assert search(box, "bike cus")["did_you_mean"] == []


def test_words_found_as_an_acronym_or_a_joined_form_are_not_missing(
    make_bundle: MakeBundle,
) -> None:
    files = {
        "pii.md": concept("Policy", body="Mask PII before export. Each codelist has an owner."),
        "bikes.md": concept("Table", body="Each bike, its dock, its frame."),
        "bdc.md": concept("Note", body="The BDC report."),  # a three-letter term
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    # Every word of the run is missing and its initials are a term: found as "pii".
    assert search(box, "personally identifiable information")["missing_words"] == []
    assert search(box, "code list owner")["missing_words"] == []  # found as "codelist"
    # "bike dock custommer" spells bdc, a term too; but "bike" and "dock" are words of the
    # bundle, so the initials prove nothing, and the misspelling is named.
    assert search(box, "bike dock custommer")["missing_words"] == ["custommer"]


def test_a_real_word_is_not_taken_for_a_misspelt_name(make_bundle: MakeBundle) -> None:
    files = {**FILES, "reserves.md": concept("Table", title="Reserves", body="Pool reserves.")}
    box = Toolbox(Bundle.load(make_bundle(files)))
    found = search(box, "bike server")  # 0.71 alike to Reserves: under the 0.8 asked
    assert found["missing_words"] == ["server"] and found["did_you_mean"] == []
    found = search(box, "bike reservse")  # a misspelling, 0.88 alike
    assert [c["title"] for c in found["did_you_mean"]] == ["Reserves"]  # type: ignore[union-attr]


def test_an_identifier_is_one_word_missing_only_when_no_part_is_held(
    make_bundle: MakeBundle,
) -> None:
    box = Toolbox(Bundle.load(make_bundle(FILES)))
    assert search(box, "bike_fleet dock")["missing_words"] == []  # its parts are held
    assert search(box, "bike churn_ltv")["missing_words"] == ["churn_ltv"]


def test_a_verb_in_s_whose_other_forms_the_bundle_holds_is_not_missing(
    make_bundle: MakeBundle,
) -> None:
    files: dict[str, str | bytes] = {"gen.md": concept(body="Files generated by setup.\n")}
    box = Toolbox(Bundle.load(make_bundle(files)))
    assert search(box, "what setup generates")["missing_words"] == []
    assert search(box, "what setup generatez")["missing_words"] == ["generatez"]


def test_missing_words_misspelling_a_name_of_several_words_name_it(
    make_bundle: MakeBundle,
) -> None:
    files: dict[str, str | bytes] = {
        "features/command-palette.md": concept(title="Command Palette", body="Press Ctrl+K."),
        "keys.md": concept(title="Keys", body="Every shortcut of the app."),
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    found = search(box, "comand palete shortcut")  # hits: the shortcut page
    assert found["missing_words"] == ["comand", "palete"]
    assert [d["path"] for d in found["did_you_mean"]] == ["/features/command-palette.md"]  # type: ignore[union-attr]


def test_a_missing_word_of_a_longer_name_is_respelt_with_the_bundles_words(
    make_bundle: MakeBundle,
) -> None:
    """flutter-okf QA: "instrinsic hieght" named Intrinsic Sizing, but "instrinsic hieght
    widget" (one right word more) gave stateless_widget and no way forward: no title is
    0.8 alike to "instrinsic hieght". A word of a title is: the query is respelt with it
    and its best hits are named."""
    files: dict[str, str | bytes] = {
        "intrinsic_sizing.md": concept(title="Intrinsic Sizing", body="Ask a child widget."),
        "stateless_widget.md": concept(title="Stateless widget", body="A widget, a widget."),
        "env.md": concept(title="EnvironmentConfig", body="Shared values."),
        "apply.md": concept(title="Apply changes", body="Apply them."),
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    found = search(box, "instrinsic hieght widget")
    assert found["hits"][0]["path"] == "/stateless_widget.md"  # type: ignore[index]
    assert found["missing_words"] == ["instrinsic", "hieght"]
    assert found["respelled_query"] == "intrinsic hieght widget"  # "height": in no name
    assert [d["path"] for d in found["did_you_mean"]][0] == "/intrinsic_sizing.md"  # type: ignore[union-attr]
    assert str(found["notice"]).endswith(
        "Spelt with the bundle's words ('instrinsic' as 'intrinsic'), the query: its best "
        "hits are in did_you_mean."
    )
    # a camelCase title's words count; the case of the query is kept around them
    assert search(box, "Enviroment values")["respelled_query"] == "environment values"
    # a word one letter away from a short one is as often another word: not respelt
    assert "respelled_query" not in search(box, "apple widget")
    # nor is another form of a word ("secretly": tuning_corpus's one respelling of 323)
    assert "respelled_query" not in search(box, "widgetry sizings")
    # a name close to the missing word is named as before, without respelling
    found = search(box, "enviromentconfig values")
    assert "respelled_query" not in found
    assert [d["path"] for d in found["did_you_mean"]] == ["/env.md"]  # type: ignore[union-attr]


def test_a_name_word_index_finds_the_closest_word() -> None:
    from okfx.search.suggest import WordIndex, name_words

    assert name_words("EnvironmentConfig v2: HTTPServer café 树莓派") == [
        "environmentconfig", "environment", "config", "httpserver", "http", "server",
        "café", "树莓派",
    ]  # fmt: skip
    words = WordIndex(["intrinsic", "interest", "environment", "button", "buttons"])
    assert words.closest("instrinsic", 0.85) == "intrinsic"
    assert words.closest("enviroment", 0.85) == "environment"
    assert words.closest("buton", 0.85) == "button"  # of two, the closer
    assert words.closest("zebra", 0.85) is None
    assert len(words) == 5
    # of two as alike, the one with the word's first letter (agent QA: "Catolog" was
    # respelt "autolog", first in order); two letters swapped count as one left out
    words = WordIndex(["autolog", "catalog", "squash", "squads"])
    assert words.closest("catolog", 0.85) == "catalog"
    assert words.closest("sqaush", 0.85) == "squash"
    assert words.closest("sqausd", 0.85) is None  # two swaps


def test_a_query_of_common_words_only_says_so_and_is_confident_of_nothing(
    make_bundle: MakeBundle,
) -> None:
    """MCP QA: "the and of" gave 10 hits at confidence 1.0, and "What does this do?" named
    'what' and 'does' missing words to check the spelling of."""
    box = Toolbox(Bundle.load(make_bundle(FILES)))
    found = search(box, "the and of")
    assert found["hits"] and all(h["confidence"] == 0.0 for h in found["hits"])  # type: ignore[union-attr]
    assert str(found["notice"]).startswith("'the and of' holds only common words")
    vague = search(box, "What does this do?")
    assert vague["missing_words"] == [] and "Check the spelling" not in str(vague["notice"])
    assert search(box, "bike dock")["hits"][0]["confidence"] == 1.0  # type: ignore[index]
    assert "common words" not in str(search(box, "the bike")["notice"])


def test_a_hit_of_the_respelt_query_reads_its_confidence_there(make_bundle: MakeBundle) -> None:
    files: dict[str, str | bytes] = {
        "scalar.md": concept(
            "Note", body="It breaks the trust rules.", title="'A scalar verified field'"
        ),
        "other.md": concept("Note", body="The trust rules, and the field guards."),
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    found = search(box, "verfied field trust rules")
    assert found["respelled_query"] == "verified field trust rules"
    by_path = {h["path"]: h["confidence"] for h in found["hits"]}  # type: ignore[union-attr]
    # 3 of 4 words as typed; all 4 as respelt, which scalar.md holds
    assert by_path["/scalar.md"] == 1.0 and by_path["/other.md"] == 0.75
    assert all("confidence" not in c for c in found["did_you_mean"])  # type: ignore[union-attr]


def test_a_word_one_first_letter_from_a_name_word_is_not_respelt(make_bundle: MakeBundle) -> None:
    """Agent QA: "leader election" was respelt "leader selection", and the notice asked
    to check the spelling of a real word; a first letter added or dropped makes another
    word as often as a typo. A long query's respelling names the words it changed, where
    the notice quoted the whole query cut mid-word."""
    files: dict[str, str | bytes] = {
        "select.md": concept(title="Provider selection", body="Leader of the providers."),
        "health.md": concept(title="Health checks", body="Replicas and the leader."),
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    found = search(box, "leader election across replicas")
    assert "respelled_query" not in found and found["missing_words"] == ["election", "across"]
    long = "how do I run it with a leader and provder selection across several replicas today"
    said = search(box, long)
    assert said["respelled_query"].startswith("how do I run it with a leader and provider")
    assert "Spelt with the bundle's words ('provder' as 'provider')" in str(said["notice"])


def test_a_word_that_only_adds_a_prefix_to_a_name_word_is_not_respelt(
    make_bundle: MakeBundle,
) -> None:
    """Agent QA (m3e): "what user research backs the expressive redesign" was respelt
    "... expressive design", and the notice asked to check the spelling of "redesign",
    an ordinary word; a typo of a name word is still respelt."""
    files: dict[str, str | bytes] = {
        "principles.md": concept(title="Design principles", body="Research behind them."),
        "other.md": concept(title="Colour tokens", body="Palettes."),
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    found = search(box, "research behind the redesign")
    assert "respelled_query" not in found and found["missing_words"] == ["redesign"]
    assert "as 'design'" not in str(found["notice"])
    typo = search(box, "research behind the desgin")
    assert typo["respelled_query"] == "research behind the design"


def test_a_missing_word_joined_to_a_held_one_is_named(make_bundle: MakeBundle) -> None:
    """Agent QA: "funtion-kro" and "ISO alpha-2 code" named no missing word, "kro" and "2"
    being held; a word of five letters or more in such a chunk is named on its own."""
    files: dict[str, str | bytes] = {
        "kro.md": concept(title="Function kro", body="Compose with kro and 2 steps."),
        "code.md": concept(title="Country code", body="A code."),
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    found = search(box, "funtion-kro")
    assert found["missing_words"] == ["funtion"]
    assert found["respelled_query"] == "function-kro"
    assert search(box, "alpha-2 code")["missing_words"] == ["alpha"]
    assert (
        "missing_words" not in search(box, "function-kro")
        or not search(box, "function-kro")["missing_words"]
    )


def test_a_limit_past_the_most_a_search_returns_is_said(make_bundle: MakeBundle) -> None:
    """``limit=10**9`` returned 50 hits and no word of the cap (agent QA), where a listing
    says so with ``next_offset``."""
    files = {f"b{i:02}.md": concept("Table", body=f"Bike {i} of the fleet.") for i in range(60)}
    box = Toolbox(Bundle.load(make_bundle(files)))
    capped = search(box, "bike", limit=10**9)
    assert len(capped["hits"]) == 50  # type: ignore[arg-type]
    assert "limit is at most 50" in str(capped["notice"])
    assert "limit is at most" not in str(search(box, "bike", limit=50)["notice"])


def test_a_lone_surrogate_in_the_query_is_not_echoed(make_bundle: MakeBundle) -> None:
    """A JSON client may send a lone surrogate; echoed as sent, the result could not be
    encoded as UTF-8 by its caller (agent QA)."""
    box = Toolbox(Bundle.load(make_bundle(FILES)))
    found = search(box, "\ud800 bike")
    assert found["query"] == "\ufffd bike"
    assert [h["path"] for h in found["hits"]] == ["/bikes.md"]  # type: ignore[index]
    str(found).encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate


def test_a_word_only_another_bundle_holds_is_said_of_the_first_hits_bundle(
    make_bundle: MakeBundle,
) -> None:
    """Agent QA: "smoking rate among adults" named "smoking" missing on a survey bundle
    alone, and said nothing once a wiki whose "smoke tests" hold "smoking" was loaded
    beside it; the answer's bundle still has no page on smoking."""
    survey = make_bundle({"rate.md": concept("Variable", "Share of adults with a rate.\n")})
    wiki = make_bundle({"ci.md": concept("Note", "Smoking the build: smoke tests run.\n")})
    alone = Toolbox(Bundle.load(survey)).search_concepts("smoking rate among adults")
    assert alone["missing_words"] == ["smoking"]
    manager = KnowledgeManager()
    manager.add(Bundle.load(survey), name="survey")
    manager.add(Bundle.load(wiki), name="wiki")
    both = Toolbox(manager).search_concepts("smoking rate among adults")
    assert both["missing_words"] == []  # some loaded concept holds it
    assert both["hits"][0]["bundle"] == "survey"
    assert (
        "No concept of bundle 'survey', the first hit's, contains the word(s) 'smoking': only "
        "other loaded bundles do, so its hits do not hold them."
    ) in both["notice"]
    assert "the first hit's" not in Toolbox(manager).search_concepts("smoke tests")["notice"]


def test_the_command_line_lists_the_respelt_querys_hits_it_names(
    make_bundle: MakeBundle,
) -> None:
    """CLI QA: `okfx search` said the respelt query's best hits "are in did_you_mean",
    which its text never shows, and named filters and the limit as tool arguments."""
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    files: dict[str, str | bytes] = {
        "intrinsic_sizing.md": concept(title="Intrinsic Sizing", body="Ask a child widget."),
        "stateless_widget.md": concept(title="Stateless widget", body="A widget, a widget."),
    }
    root = str(make_bundle(files))
    runner = CliRunner()
    one = runner.invoke(cli, ["search", root, "instrinsic hieght widget", "--limit", "1"])
    assert one.exit_code == 0, one.output
    assert "its best hits are listed below." in one.stdout and "did_you_mean" not in one.stdout
    assert "  /intrinsic_sizing.md  Intrinsic Sizing" in one.stdout.splitlines()
    both = runner.invoke(cli, ["search", root, "instrinsic hieght widget"])
    assert "its best hits are the hits above." in both.stdout  # nothing listed twice
    assert both.stdout.count("/intrinsic_sizing.md") == 1
    hidden = runner.invoke(cli, ["search", root, "widget", "--dir", "nope", "--type", "X"])
    assert "(--dir)" in hidden.stdout and "directory filter" not in hidden.stdout
