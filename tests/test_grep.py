import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest_search import NOW, FakeConcept, entries
from okfx.errors import InvalidArgument, InvalidRegex
from okfx.search.grep import MAX_MATCHES, grep

ORDERS = FakeConcept(
    "/tables/orders.md",
    title="Customer Orders",
    description="One row per order; net_amount is revenue.",
    body="# Schema\n\n| `order_id` | STRING |\n| `net_amount` | NUMERIC |\n\nUse net_amount.",
)
REVENUE = FakeConcept("/metrics/revenue.md", title="Revenue", body="SUM(net_amount)")


def test_substring_matches_report_field_line_column_and_text():
    results = grep(entries(REVENUE, ORDERS), "net_amount", now=NOW)
    found = [(m.path, m.field, m.line, m.column, m.text) for m in results]
    assert found == [
        ("/metrics/revenue.md", "body", 1, 5, "SUM(net_amount)"),
        ("/tables/orders.md", "description", None, 20, ORDERS.description),
        ("/tables/orders.md", "body", 4, 4, "| `net_amount` | NUMERIC |"),
        ("/tables/orders.md", "body", 6, 5, "Use net_amount."),
    ]
    assert results.concepts == 2
    assert not results.truncated


def test_matches_are_sorted_by_bundle_then_path_whatever_the_input_order():
    results = grep([("b", ORDERS), ("a", ORDERS), ("a", REVENUE)], "net_amount", now=NOW)
    order = [(m.bundle, m.path) for m in results]
    assert order == sorted(order)


def test_substring_is_case_sensitive_unless_told_otherwise():
    assert len(grep(entries(ORDERS), "CUSTOMER", now=NOW)) == 0
    (match,) = grep(entries(ORDERS), "CUSTOMER", ignore_case=True, now=NOW)
    assert (match.field, match.column) == ("title", 1)


def test_ignore_case_folds_unicode():
    concept = FakeConcept("/a.md", body="first\nDie Straße ist lang")
    (match,) = grep(entries(concept), "STRASSE", ignore_case=True, now=NOW)
    assert (match.line, match.text) == (2, "Die Straße ist lang")


def test_regex_anchors_match_at_line_starts():
    results = grep(entries(ORDERS), r"^\| `\w+` \| NUMERIC", regex=True, now=NOW)
    assert [(m.line, m.column) for m in results] == [(4, 1)]


def test_groups_match_as_the_same_pattern_without_them():
    # RE2 runs without captures (never read): groups, named groups and nesting still
    # match, with the same columns and spans as the pattern written without them.
    pairs = [
        (r"(order|net)_(id|amount)", r"order_id|order_amount|net_id|net_amount"),
        (r"(?P<col>net_amount) \|", r"net_amount \|"),
        (r"((N|n)ET)_amount", r"[Nn]ET_amount"),
    ]
    for grouped, plain in pairs:
        for ignore_case in (False, True):
            got = grep(entries(ORDERS), grouped, regex=True, ignore_case=ignore_case, now=NOW)
            want = grep(entries(ORDERS), plain, regex=True, ignore_case=ignore_case, now=NOW)
            assert [m.to_dict() for m in got] == [m.to_dict() for m in want], grouped
    assert len(grep(entries(ORDERS), r"(order|net)_(id|amount)", regex=True, now=NOW)) == 4


def test_regex_columns_count_characters_not_bytes():
    concept = FakeConcept("/a.md", body="ééé → match")
    (match,) = grep(entries(concept), "mat.h", regex=True, now=NOW)
    assert match.column == 7


def test_one_match_per_line_and_bounded_per_concept():
    concept = FakeConcept("/a.md", body="\n".join(["x x x"] * 30))
    results = grep(entries(concept), "x", per_concept=3, now=NOW)
    assert [m.line for m in results] == [1, 2, 3]


def test_total_limit_truncates_and_says_so():
    concepts = [FakeConcept(f"/c{i}.md", body="needle") for i in range(5)]
    results = grep(entries(*concepts), "needle", limit=2, now=NOW)
    assert len(results) == 2
    assert results.truncated
    assert results.concepts == 5
    assert "first 2 matches; 5 concepts match" in results.notice
    assert "raise limit (at most 200), or narrow" in results.notice  # docs QA
    many = [FakeConcept(f"/c{i}.md", body="needle\n" * 5) for i in range(60)]
    full = grep(entries(*many), "needle", limit=200, now=NOW)
    assert len(full) == 200 and "raise limit" not in full.notice  # at the cap: narrow only


def test_limits_are_clamped():
    concepts = [FakeConcept(f"/c{i:03d}.md", body="needle") for i in range(MAX_MATCHES + 5)]
    assert len(grep(entries(*concepts), "needle", limit=10_000, now=NOW)) == MAX_MATCHES
    assert len(grep(entries(*concepts), "needle", limit=0, now=NOW)) == 1


def test_long_lines_are_cut_around_the_match():
    concept = FakeConcept("/a.md", body="a" * 50_000 + "NEEDLE" + "b" * 50_000)
    (match,) = grep(entries(concept), "NEEDLE", now=NOW)
    assert len(match.text) <= 200
    assert "NEEDLE" in match.text
    assert match.column == 50_001


def test_catastrophic_backtracking_pattern_runs_in_linear_time():
    # Python's re would backtrack exponentially here; RE2 answers at once.
    concept = FakeConcept("/a.md", body="a" * 100_000 + "!")
    assert len(grep(entries(concept), r"(a+)+$", regex=True, now=NOW)) == 0
    (match,) = grep(entries(concept), r"(a+)+!$", regex=True, now=NOW)
    assert match.column == 1


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [("(a", "missing"), (r"(a)\1", "escape"), ("(?<=a)b", "perl operator"), ("a{1001}", "")],
)
def test_invalid_or_unsupported_regex_is_an_invalid_regex_error(pattern, reason):
    with pytest.raises(InvalidRegex, match="RE2 syntax") as caught:
        grep(entries(ORDERS), pattern, regex=True, now=NOW)
    assert reason in str(caught.value)
    assert caught.value.code == "invalid_regex"


def test_regex_characters_are_literal_in_substring_mode():
    concept = FakeConcept("/a.md", body="price (USD) [net]")
    assert len(grep(entries(concept), "(USD) [", now=NOW)) == 1


def test_empty_pattern_is_refused():
    with pytest.raises(InvalidArgument, match="pattern"):
        grep(entries(ORDERS), "", now=NOW)


def test_filters_are_shared_with_search_and_hidden_matches_are_counted():
    old = FakeConcept("/old.md", body="net_amount", status="deprecated")
    stale = FakeConcept("/stale.md", body="net_amount", stale_after=NOW - timedelta(days=1))
    results = grep(entries(ORDERS, old, stale), "net_amount", include_stale=False, now=NOW)
    assert {m.path for m in results} == {"/tables/orders.md"}
    assert results.hidden == {"deprecated": 1, "stale": 1}
    assert "1 deprecated match hidden" in results.notice
    shown = grep(entries(ORDERS, old), "net_amount", include_deprecated=True, now=NOW)
    assert "/old.md" in {m.path for m in shown}
    typed = grep(entries(ORDERS, REVENUE), "net_amount", directory="/metrics", now=NOW)
    assert {m.path for m in typed} == {"/metrics/revenue.md"}
    assert typed.hidden == {"directory": 1}


def test_concepts_without_a_match_are_not_counted_as_hidden():
    old = FakeConcept("/old.md", body="nothing here", status="deprecated")
    assert grep(entries(ORDERS, old), "net_amount", now=NOW).hidden == {}


def test_reserved_files_are_skipped():
    index = FakeConcept("/tables/index.md", body="net_amount")
    assert {m.path for m in grep(entries(index, REVENUE), "net_amount", now=NOW)} == {
        "/metrics/revenue.md"
    }


def test_results_serialise_to_plain_json():
    data = grep(entries(ORDERS), "net_amount", now=NOW).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["matches"][0]["field"] == "description"


def test_body_matches_report_file_line_numbers_on_real_concepts(tmp_path: Path) -> None:
    from okfx import Bundle

    (tmp_path / "a.md").write_text(
        "---\ntype: Note\ntitle: T\n---\nfirst\nsecond needle\n", encoding="utf-8"
    )
    (match,) = Bundle.load(tmp_path).grep("needle")
    assert (match.field, match.line) == ("body", 6)


def test_a_line_break_in_a_title_reads_as_a_space():
    concept = FakeConcept("/a.md", title="Gross\nmargin", body="nothing here")
    for pattern, regex in (("Gross margin", False), ("margin", False), (r"s margin$", True)):
        (match,) = grep(entries(concept), pattern, regex=regex, now=NOW)
        assert (match.field, match.text) == ("title", "Gross margin"), pattern


def test_text_anchored_patterns_match_each_field_on_its_own():
    found = grep(entries(ORDERS), r"\AOne row", regex=True, now=NOW)
    assert [(m.field, m.column) for m in found] == [("description", 1)]
    found = grep(entries(ORDERS), r"(?-m)^# Schema", regex=True, now=NOW)
    assert [(m.field, m.line) for m in found] == [("body", 1)]
    found = grep(entries(ORDERS), r"\w+\.\z", regex=True, now=NOW)
    assert [(m.field, m.line, m.column) for m in found] == [
        ("description", None, ORDERS.description.index("revenue.") + 1),
        ("body", 6, len("Use ") + 1),
    ]


_LETTERS = st.text(alphabet="ab \n", min_size=0, max_size=30)


@settings(max_examples=400, deadline=None)
@given(
    texts=st.lists(st.tuples(_LETTERS, _LETTERS, _LETTERS, st.booleans()), min_size=1, max_size=6),
    needle=st.text(alphabet="ab \n", min_size=1, max_size=3),
    shape=st.sampled_from(["{}", "^{}", "{}$", r"\A{}", r"{}\z", "(?-m)^{}"]),
    regex=st.booleans(),
)
def test_the_matching_concepts_are_those_a_field_by_field_search_finds(
    texts: list[tuple[str, str, str, bool]], needle: str, shape: str, regex: bool
) -> None:
    """Whatever shortcut picks the candidates, a concept matches exactly when one of
    its fields (title and description read as one line) matches on its own: shown, or
    counted as hidden when deprecated."""
    concepts = [
        FakeConcept(
            f"/c{i}.md", title=t, description=d, body=b, status="deprecated" if old else "stable"
        )
        for i, (t, d, b, old) in enumerate(texts)
    ]
    fields = [
        (c.title.replace("\n", " "), c.description.replace("\n", " "), c.body) for c in concepts
    ]
    if regex:
        # The alphabet needs no escapes; a "\n" may span two fields once they are joined.
        literal = needle.replace("\n", r"\n")
        pattern = shape.format(literal)
        flags = 0 if "(?-m)" in pattern else re.MULTILINE
        python = re.compile(pattern.replace(r"\z", r"\Z").replace("(?-m)", ""), flags)
    else:
        pattern = needle
    matching = [
        concept
        for concept, texts in zip(concepts, fields, strict=True)
        if any((python.search(text) if regex else needle in text) for text in texts)
    ]
    shown = {c.path for c in matching if c.status != "deprecated"}
    hidden = len(matching) - len(shown)
    results = grep(entries(*concepts), pattern, regex=regex, limit=200, per_concept=50, now=NOW)
    assert {m.path for m in results} == shown
    assert results.concepts == len(shown)
    assert results.hidden == ({"deprecated": hidden} if hidden else {})


def test_a_cut_grep_over_several_bundles_says_how_many_each_holds():
    """Platform QA: a grep over a big and a small bundle showed 50 of 50 matches from the
    big one, and nothing said the small one had matches too."""
    big = [FakeConcept(f"/b{i}.md", body="needle") for i in range(6)]
    small = [FakeConcept(f"/s{i}.md", body="needle") for i in range(2)]
    pairs = [("big", c) for c in big] + [("small", c) for c in small]
    results = grep(pairs, "needle", limit=3, now=NOW)
    assert "8 concepts match (big 6, small 2; pass bundle= to grep one)." in results.notice
    alone = grep(entries(*big), "needle", limit=3, now=NOW)
    assert "6 concepts match. To see" in alone.notice  # one bundle: no breakdown
