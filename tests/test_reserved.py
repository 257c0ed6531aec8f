"""How ``log.md`` date groups are read (spec §9), for the shapes producers write."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import MakeBundle, concept
from okfx import Bundle, validate
from okfx.bundle.logdates import likely_dates
from okfx.bundle.problems import problem_line
from okfx.bundle.reserved import heading_rest


def _entries(bundle: Bundle) -> list[tuple[date | None, str]]:
    return [(e.date, e.text) for e in bundle.logs["/"].entries]


def test_a_level_one_date_heading_heads_a_date_group(make_bundle: MakeBundle) -> None:
    """A log whose first heading is `# 2026-07-10` (a published generator writes that)
    kept no entry: the heading was read as the log's title. §9 fixes the form of a date
    heading, not its level."""
    log = "# 2026-07-10\n\n* **Generation**: indexed the works.\n* **Access**: kept feeds.\n"
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert bundle.logs["/"].title == ""
    assert _entries(bundle) == [
        (date(2026, 7, 10), "**Generation**: indexed the works."),
        (date(2026, 7, 10), "**Access**: kept feeds."),
    ]
    assert not bundle.warnings
    assert validate(bundle).conformant


def test_a_level_one_title_still_is_the_title(make_bundle: MakeBundle) -> None:
    log = "# Bundle history\n\n# 2026-07-10\n* b\n\n# 2026-07-01\n* a\n"
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert bundle.logs["/"].title == "Bundle history"
    assert _entries(bundle) == [(date(2026, 7, 10), "b"), (date(2026, 7, 1), "a")]


def test_an_impossible_level_one_date_is_an_invalid_date_heading(
    make_bundle: MakeBundle,
) -> None:
    log = "# 2026-02-31\n* entry\n"
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert [w.code for w in bundle.warnings] == ["invalid_log_date"]
    assert _entries(bundle) == [(None, "entry")]
    assert not validate(bundle).conformant


@pytest.mark.parametrize("level", ["##", "###", "####"])
def test_a_date_heading_of_any_level_below_the_title_groups_entries(
    make_bundle: MakeBundle, level: str
) -> None:
    log = f"# Log\n\n{level} 2026-06-21\n* Wrong heading level, by another validator.\n"
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert _entries(bundle) == [(date(2026, 6, 21), "Wrong heading level, by another validator.")]
    assert validate(bundle).conformant


def test_markdown_that_is_one_flat_list_reads_as_one_entry(make_bundle: MakeBundle) -> None:
    """CommonMark: a bullet indented two spaces under a heading is a top-level item, and
    an unindented line right after an item continues its paragraph. Both logs are flat
    lists of entries, so they pass (another validator reads them line by line)."""
    indented = "## 2026-06-21\n  - Indented entry.\n"
    lazy = "# Log\n\n## 2026-06-21\n* listed entry\nplain paragraph\n"
    for log, text in ((indented, "Indented entry."), (lazy, "listed entry plain paragraph")):
        bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
        assert _entries(bundle) == [(date(2026, 6, 21), text)]
        assert not bundle.warnings
        assert validate(bundle).conformant


def test_entries_before_any_date_heading_are_read_and_reported(make_bundle: MakeBundle) -> None:
    """A log of dated bullets with no date heading (a real producer writes that) read as
    no entry at all; they are entries, dated from their text, and off §9's groups."""
    log = (
        "# Change Log\n\n- 2026-07-15 - export - b.md\n\n- 2026-07-02 - reject - a.md\n"
        "  (a second line)\n- undated note\n- 2026-07-021 is no date\n\n"
        "## 2026-06-01\n* **Creation**: started\n"
    )
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert bundle.logs["/"].title == "Change Log"
    assert _entries(bundle) == [
        (date(2026, 7, 15), "2026-07-15 - export - b.md"),
        (date(2026, 7, 2), "2026-07-02 - reject - a.md (a second line)"),
        (None, "undated note"),
        (None, "2026-07-021 is no date"),
        (date(2026, 6, 1), "**Creation**: started"),
    ]
    report = validate(bundle)
    assert not report.conformant  # §11 rule 3: the structure of §9
    [problem] = report.errors
    assert problem.code == "log_ungrouped" and problem.message.startswith("4 log entries")
    assert problem_line(problem) == 3  # the first bullet
    # two days: one heading above them all would misdate half (validate QA)
    assert "they start with 2 dates (2026-07-02, 2026-07-15): put each day's" in problem.message
    assert not [p for p in report.warnings if p.code == "log_order"]  # newest first
    one_day = "# Log\n\n2026-07-07 - bundle created\n\n- added a.md\n"
    [alone] = validate(Bundle.load(make_bundle({"a.md": concept(), "log.md": one_day}))).errors
    assert alone.code == "log_ungrouped"
    assert "line 3 starts with 2026-07-07: make it the heading '## 2026-07-07'" in alone.message
    assert problem_line(alone) == 3  # the line to edit, not the first entry (validate QA)
    dated = "# Log\n\n- 2026-07-07 added a.md\n"
    [one] = validate(Bundle.load(make_bundle({"a.md": concept(), "log.md": dated}))).errors
    assert "they start with 2026-07-07: add '## 2026-07-07' above them" in one.message
    undated = "# Log\n\n- added a.md\n"
    [none] = validate(Bundle.load(make_bundle({"a.md": concept(), "log.md": undated}))).errors
    assert none.message.endswith("headings; add one above them (line 3)")


def test_a_log_grouped_under_date_headings_has_no_ungrouped_entries(
    make_bundle: MakeBundle,
) -> None:
    log = "# Log\n\nIntro prose is fine.\n\n## 2026-07-02\n- one\n"
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert _entries(bundle) == [(date(2026, 7, 2), "one")]
    assert validate(bundle).conformant


def test_a_table_in_a_log_entry_keeps_its_rows(make_bundle: MakeBundle) -> None:
    """Viewer QA: a table under a date heading showed as one run of "| a | b | | --- |"
    text, its rows joined as a paragraph's lines are."""
    log = "## 2026-03-01\n\n| change | who |\n| --- | --- |\n| added alpha | kim |\n"
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert _entries(bundle) == [
        (date(2026, 3, 1), "| change | who |\n| --- | --- |\n| added alpha | kim |")
    ]


def test_a_nested_bullet_belongs_to_the_entry_above(make_bundle: MakeBundle) -> None:
    """A published log writes sub-points as nested bullets; each was an entry of its
    own at two spaces, and joined into the text at four."""
    log = (
        "## 2026-08-06\n\n* **Update**: converted links.\n  * `spec/a.md` records it\n"
        "    over two lines.\n    - and four spaces in\n* **Update**: fixed actors.\n"
    )
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    day = date(2026, 8, 6)
    assert _entries(bundle) == [
        (
            day,
            "**Update**: converted links.\n- `spec/a.md` records it over two lines.\n"
            "- and four spaces in",
        ),
        (day, "**Update**: fixed actors."),
    ]


def test_a_fenced_block_in_an_entry_stays_code(make_bundle: MakeBundle) -> None:
    """A log entry that shows the command it ran had its fenced block joined into the
    prose ("ran the check: ```sh okfx validate . ...") and rendered as neither."""
    log = (
        "## 2026-09-01\n\n- ran the check:\n  ```sh\n  okfx validate .\n\n  # all green\n  ```\n"
        "  and it passed\n- pinned the query:\n```sql\nSELECT 1\n```\n- last\n"
    )
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    day = date(2026, 9, 1)
    assert _entries(bundle) == [
        (day, "ran the check:\n```sh\nokfx validate .\n\n# all green\n```\nand it passed"),
        (day, "pinned the query:\n```sql\nSELECT 1\n```"),
        (day, "last"),
    ]
    assert not bundle.warnings


def test_a_paragraph_after_a_blank_line_is_an_entry_of_its_own(make_bundle: MakeBundle) -> None:
    """CommonMark ends a list item at a blank line followed by text that is not indented;
    the paragraph was joined to the item above."""
    log = (
        "## 2026-07-07\n\n- bundle created\n  over two lines\n\n"
        "Initial authoring of the bundle.\nIt covers five areas.\n\n"
        "- later item\n\n  indented, still the later item\n"
    )
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    day = date(2026, 7, 7)
    assert _entries(bundle) == [
        (day, "bundle created over two lines"),
        (day, "Initial authoring of the bundle. It covers five areas."),
        (day, "later item indented, still the later item"),
    ]


def test_a_heading_that_starts_with_a_date_dates_its_entries_and_says_how_to_fix_it(
    make_bundle: MakeBundle,
) -> None:
    """m3e-okf heads a day with its change's title (``2026-07-11 — Phase 5b: ...``) and
    graphql-okf with a time; both break §9's form, but the day is plain to read, so the
    entries keep it (and the order check sees it) while the error stays."""
    log = (
        "# Curation log\n\n## 2026-07-24T13:14:12.015Z\n* b\n\n"
        "## 2026-07-11 — Phase 5b: bundle established\n* a\n\n"
        "## Provenance discipline\n\nEvery claim cites its page.\n\n"
        "## 2026-07-111 is no date\n* c\n"
    )
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert _entries(bundle) == [
        (date(2026, 7, 24), "b"),
        (date(2026, 7, 11), "a"),
        (None, "Every claim cites its page."),
        (None, "c"),
    ]
    messages = [w.message for w in bundle.warnings if w.code == "invalid_log_date"]
    assert len(messages) == 3 and not validate(bundle).conformant
    assert "dated 2026-07-24, the day it starts with" in messages[0]
    assert "'2026-07-24' alone (no time)" in messages[0]
    assert "'2026-07-11' alone (move the rest into an entry)" in messages[1]
    assert "dated" not in messages[2] and "'2026-07-111 is no date'" in messages[2]
    assert "move text that is no change above the first date heading" in messages[2]
    [section] = [w.message for w in bundle.warnings if w.code == "log_section"]
    assert "'Provenance discipline' holds no date, so its entries get none" in section
    assert [w.code for w in bundle.warnings].count("log_order") == 0


def test_a_heading_with_no_date_in_any_form_is_a_section_warning_not_an_error(
    make_bundle: MakeBundle,
) -> None:
    """validate QA: a log's prose passed, and the same prose under ``## Notes`` failed the
    bundle as a date heading in the wrong form, beside a note that the log had no date
    heading. A heading holding no digit is a section (a warning, said once); one that
    writes a date another way (``June 21, 2026``) is still §9's error, with the day."""
    prose = "# Log\n\nThis log records the bundle's changes.\n"
    sectioned = "# Log\n\n## Notes\n\nThis log records the bundle's changes.\n"
    worded = "# Log\n\n## June 21, 2026\n* Invalid date format.\n"
    for text, code, conformant in (
        (prose, None, True),
        (sectioned, "log_section", True),
        (worded, "invalid_log_date", False),
    ):
        bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": text}))
        report = validate(bundle)
        codes = [w.code for w in bundle.warnings]
        assert codes == ([code] if code else []), text
        assert report.conformant is conformant, text
        notes = " ".join(report.notes)
        # the note that the log has no date heading only where nothing else said so
        assert ("no YYYY-MM-DD date heading" in notes) is (code is None), text
    [message] = [w.message for w in bundle.warnings]
    assert "write the heading as '2026-06-21'" in message


def test_the_rest_of_a_dated_heading_is_what_follows_the_day() -> None:
    assert heading_rest("2026-07-11 — Phase 5b: established") == "Phase 5b: established"
    assert heading_rest("2026-07-11: fixes") == "fixes"
    assert heading_rest("2026-07-24T13:14:12.015Z") == ""
    assert heading_rest("2026-07-24 09:30") == ""
    assert heading_rest("2026-07-24") == ""


def test_an_html_comment_in_an_index_entry_or_a_log_entry_is_no_text_of_it(
    make_bundle: MakeBundle,
) -> None:
    """graphql-okf closes its generated index with ``<!-- graphql-okf:generated:end -->``
    on the last entry's line: the entry's description is what a reader sees."""
    index = "# Types\n\n* [A](a.md) — the a type <!-- generated:end -->\n<!-- Human below -->\n"
    log = "# Log\n\n## 2026-07-01\n* added a <!-- gen --> type\n"
    bundle = Bundle.load(make_bundle({"a.md": concept(), "index.md": index, "log.md": log}))
    (section,) = bundle.indexes["/"].sections
    assert [e.description for e in section.entries] == ["the a type"]
    assert _entries(bundle) == [(date(2026, 7, 1), "added a  type")]


def test_an_ordered_list_of_links_in_an_index_is_a_list_of_entries(
    make_bundle: MakeBundle,
) -> None:
    """flutter-okf's root index opens with a numbered "Recommended first concepts" list:
    entries as much as its bullets (CommonMark lists, ``1.`` or ``1)``)."""
    index = (
        "# Pack\n\n## Start here\n\n1. [A](a.md)\n2) [B](b.md) - the b\n\n"
        "## All\n\n* [A](a.md) - the a\n\n3 [not an item](a.md)\n"
    )
    files = {"a.md": concept(), "b.md": concept(), "index.md": index}
    bundle = Bundle.load(make_bundle(files))
    sections = bundle.indexes["/"].sections
    assert [
        (s.title, [(e.title, e.target, e.description) for e in s.entries]) for s in sections
    ] == [
        ("Pack", []),
        ("Start here", [("A", "/a.md", ""), ("B", "/b.md", "the b")]),
        ("All", [("A", "/a.md", "the a")]),
    ]
    assert validate(bundle).conformant


def test_a_bullet_of_several_links_in_an_index_is_one_entry_per_link(
    make_bundle: MakeBundle,
) -> None:
    """EU5-OKF's root index lists its topic folders as ``* [Events](events/) · [Maps](maps/)``:
    the bullet gave no entry at all. Each link of a bullet that holds only links and
    separators is an entry (no description); a bullet with words between its links is
    none, as before."""
    index = (
        "# Kb\n\n## Topics\n\n* [A](a.md) \u00b7 [B](b.md) | [Sub](sub/), [C](c.md)\n"
        "* [A](a.md) and [B](b.md)\n* [C](c.md) - the c\n"
    )
    files = {"a.md": concept(), "b.md": concept(), "c.md": concept(), "index.md": index}
    files["sub/d.md"] = concept()
    bundle = Bundle.load(make_bundle(files))
    (_, topics) = bundle.indexes["/"].sections
    assert [(e.title, e.target, e.description) for e in topics.entries] == [
        ("A", "/a.md", ""),
        ("B", "/b.md", ""),
        ("Sub", "/sub", ""),
        ("C", "/c.md", ""),
        ("C", "/c.md", "the c"),
    ]


def test_an_index_that_lists_its_links_in_a_table_is_told_the_entry_form(
    make_bundle: MakeBundle,
) -> None:
    """m3e-okf's folder indexes are tables (``| [App bar](/components/app-bar) | ... |``):
    no entry was read and nothing said so. The links stay links; one warning says which
    form §8 reads. A table beside entries is no listing of its own: no warning."""
    table = (
        "# Components\n\n## Concepts\n\n| Concept | What |\n| --- | --- |\n"
        "| [A](a.md) | the a |\n| [B](b.md) | the b |\n"
    )
    files = {"a.md": concept(), "b.md": concept(), "c/index.md": table.replace("](", "](../")}
    bundle = Bundle.load(make_bundle({**files, "index.md": table}))
    found = [(w.path, w.message) for w in bundle.warnings if w.code == "index_table"]
    assert [path for path, _ in found] == ["/c/index.md", "/index.md"]
    assert found[1][1].startswith("this index.md lists its links in a table (2 rows)")
    assert found[1][1].endswith("(line 7)") and validate(bundle).conformant
    assert {link.target for link in bundle.indexes["/"].links} == {"/a.md", "/b.md"}
    both = table + "\n## More\n\n* [A](a.md) - the a\n"
    assert not [w for w in Bundle.load(make_bundle({**files, "index.md": both})).warnings
                if w.code == "index_table" and w.path == "/index.md"]  # fmt: skip


def test_a_bold_label_and_its_list_are_one_entry(make_bundle: MakeBundle) -> None:
    """graphql-okf writes each day as ``**Added**`` then a list of 25 links: the label was
    an entry of its own and every item lost it. §9's leading bold word, written as a
    paragraph, heads its items; a plain paragraph still ends them."""
    log = (
        "# Log\n\n## 2026-07-24\n\n**Added**\n\n- [a](a.md)\n- [b](b.md)\n\n__Removed:__\n"
        "- [c](c.md)\n\nA note.\n\n- alone\n"
    )
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert _entries(bundle) == [
        (date(2026, 7, 24), "**Added**\n- [a](a.md)\n- [b](b.md)"),
        (date(2026, 7, 24), "__Removed:__\n- [c](c.md)"),
        (date(2026, 7, 24), "A note."),
        (date(2026, 7, 24), "alone"),
    ]


def test_an_entry_with_a_marker_before_its_description_is_an_entry(
    make_bundle: MakeBundle,
) -> None:
    """mmdc-okf lists ``* [Manage the waitlist](/a.md) (draft) - Move ...``: two of its
    eight How-To entries were dropped without a word."""
    index = "# How-To\n\n* [A](a.md) (draft) - the a\n* [B](b.md) (deprecated)\n* [C](c.md) - c\n"
    files = {"a.md": concept(), "b.md": concept(), "c.md": concept(), "index.md": index}
    (section,) = Bundle.load(make_bundle(files)).indexes["/"].sections
    assert [(e.title, e.description) for e in section.entries] == [
        ("A", "the a"),
        ("B", ""),
        ("C", "c"),
    ]


@pytest.mark.parametrize(
    ("heading", "written"),
    [
        ("20-08-2026", "'2026-08-20'"),
        ("2026/08/21", "'2026-08-21'"),
        ("2026.8.1 - export", "'2026-08-01'"),
        ("Aug 22, 2026", "'2026-08-22'"),
        ("22nd September 2026", "'2026-09-22'"),
        ("20260821", "'2026-08-21'"),
        ("07-08-2026", "'2026-08-07' or '2026-07-08'"),
    ],
)
def test_a_heading_in_another_date_form_is_told_which_heading_to_write(
    make_bundle: MakeBundle, heading: str, written: str
) -> None:
    """Validate QA: `20-08-2026` was reported as no date, without the heading to write.
    The entries keep no date (the spec's form is the only one read); the message names
    the day, both when day and month could be either."""
    log = f"# Log\n\n## {heading}\n* entry\n"
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert _entries(bundle) == [(None, "entry")]
    [message] = [w.message for w in bundle.warnings if w.code == "invalid_log_date"]
    assert f"its entries get no date: write the heading as {written}" in message
    assert ("day and the month" in message) == (" or " in written)


@given(st.text(max_size=40))
def test_likely_dates_are_real_days_in_the_spec_form(heading: str) -> None:
    for day in likely_dates(heading):
        assert date.fromisoformat(day).isoformat() == day != heading.strip()


@pytest.mark.parametrize("heading", ["Release notes", "13-13-2026", "2026-08-21", "Mayday 3 2026"])
def test_no_day_is_suggested_where_none_is_written(heading: str) -> None:
    assert likely_dates(heading) == []


def test_a_reserved_files_frontmatter_problem_says_the_fix_and_its_line(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: the JSON and a GitHub annotation carry the message alone, and it had
    neither the fix ("delete the block") nor a line."""
    from okfx.bundle.problems import problem_line

    root = make_bundle(
        {
            "a.md": concept(),
            "sub/index.md": "---\ntitle: Sub\n---\n# Sub\n",
            "log.md": "---\ntitle: Log\n---\n# Log\n\n## 2026-01-01\n\n* x\n",
        }
    )
    codes = ("reserved_frontmatter", "log_frontmatter")
    found = {w.path: w for w in Bundle.load(root).warnings if w.code in codes}
    assert set(found) == {"/sub/index.md", "/log.md"}
    assert (
        "delete the block (a folder's description belongs on its entry"
        in found["/sub/index.md"].message
    )
    assert "delete the block" in found["/log.md"].message
    assert {problem_line(w) for w in found.values()} == {1}


def test_setext_date_headings_group_a_logs_entries(make_bundle: MakeBundle) -> None:
    """CI QA: ``2026-05-22`` over a line of dashes is a level-2 heading to CommonMark and
    GitHub, and failed the bundle as an entry before any date heading; a paragraph and a
    list item over dashes are no heading (a list item's ``---`` is a thematic break)."""
    log = (
        "Update log\n==========\n\n2026-05-22\n----------\n* **Update**: added a.md\n\n"
        "2026-05-01\n==========\n\n* older\n* an item\n---\n\nA paragraph\ngoing on\n---\n"
    )
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert bundle.logs["/"].title == "Update log"
    assert _entries(bundle)[:3] == [
        (date(2026, 5, 22), "**Update**: added a.md"),
        (date(2026, 5, 1), "older"),
        (date(2026, 5, 1), "an item"),
    ]
    assert validate(bundle).conformant
    assert not [w for w in bundle.warnings if w.code.startswith(("log_", "invalid_log"))]


def test_a_log_heading_of_no_calendar_day_or_in_bold_says_what_to_write(tmp_path) -> None:
    """CI QA F14: "## 2026-02-30" and "## **2026-05-22**" got the generic "head them with
    the day they were made", which says nothing of what is wrong with them."""
    from okfx import Bundle

    log = "# Log\n\n## 2026-13-01\n\n* c\n\n## 2026-02-30\n\n* a\n\n## **2026-01-22**\n\n* b\n"
    (tmp_path / "log.md").write_text(log, encoding="utf-8")
    (tmp_path / "a.md").write_text("---\ntype: Note\n---\nx\n", encoding="utf-8")
    said = [w.message for w in Bundle.load(tmp_path).warnings if w.code == "invalid_log_date"]
    assert "there is no month 13, so its entries get no date" in said[0]
    assert "February 2026 has no day 30, so its entries get no date" in said[1]
    assert said[2].endswith("write the heading without its marks, as '2026-01-22' (line 11)")
