"""The spec rules of ``okfx.bundle.conventions`` and the rule-3 and YAML checks that go with
them: each names its line, none changes what is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MakeBundle, concept
from okfx import Bundle, validate
from okfx.bundle.keylines import key_line
from okfx.bundle.problems import ERROR_CODES, problem_line
from okfx.model import Problem


def _found(bundle: Bundle, code: str) -> list[Problem]:
    return [p for p in bundle.warnings if p.code == code]


def _line_of(root: Path, problem: Problem) -> str:
    """The text of the file line a problem names."""
    line = problem_line(problem)
    assert line is not None, problem
    return (root / problem.path.lstrip("/")).read_text().splitlines()[line - 1]


AC = "type: Attested Computation\nruntime: bigquery\n"
SQL = "\n# Computation\n\n    SELECT 1\n"  # indented, as the spec's own examples are


def test_a_capitalised_status_is_read_and_reported_on_its_line(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(title="A", status="Deprecated"),
            "b.md": concept(status="stable"),
            "c.md": concept(title="C", status="retired"),
        }
    )
    bundle = Bundle.load(root)
    assert bundle.concept("a").status == "deprecated"  # loading stays tolerant
    [case] = _found(bundle, "status_case")
    assert case.path == "/a.md" and _line_of(root, case) == "status: Deprecated"
    assert "'deprecated'" in case.message and "lower case" in case.message
    [unknown] = _found(bundle, "unknown_status")
    assert _line_of(root, unknown) == "status: retired"
    assert validate(bundle).conformant  # §5.4 is guidance for producers: warnings


def test_a_usage_window_needs_both_ends_in_order(make_bundle: MakeBundle) -> None:
    source = (
        "sources:\n  - resource: https://d.example\n    usage_window: {to: 2026-06-30T00:00:00Z}\n"
    )
    root = make_bundle(
        {
            "open.md": "---\ntype: T\nusage_window: {from: 2026-06-01T00:00:00Z}\n---\n",
            "entry.md": "---\ntype: T\n" + source + "---\n",
            "back.md": "---\ntype: T\nusage_window:\n  from: 2026-07-01T00:00:00Z\n"
            "  to: 2026-06-01T00:00:00Z\n---\n",
            "ok.md": "---\ntype: T\nusage_window: {from: 2026-06-01T00:00:00Z, "
            "to: 2026-06-30T00:00:00Z}\n---\n",
        }
    )
    bundle = Bundle.load(root)
    incomplete = {p.path: p for p in _found(bundle, "usage_window_incomplete")}
    assert sorted(incomplete) == ["/entry.md", "/open.md"]
    assert "'to'" in incomplete["/open.md"].message
    assert _line_of(root, incomplete["/open.md"]).startswith("usage_window:")
    assert "sources[0].usage_window has no 'from'" in incomplete["/entry.md"].message
    assert bundle.concept("open").usage_window is not None  # the start is still read
    [backwards] = _found(bundle, "usage_window_reversed")
    assert backwards.path == "/back.md" and "swap" in backwards.message
    assert _line_of(root, backwards) == "usage_window:"
    assert not [p for p in bundle.warnings if p.path == "/ok.md"]


def test_a_receipt_must_be_a_list_of_field_names(make_bundle: MakeBundle) -> None:
    executor = "executor:\n  resource: https://run.example\n  receipt: {}\n"
    root = make_bundle(
        {
            "text.md": "---\n" + AC + executor.format("job_id, executed_sql") + "---\n" + SQL,
            "list.md": "---\n" + AC + executor.format("[job_id, executed_sql]") + "---\n" + SQL,
        }
    )
    bundle = Bundle.load(root)
    [found] = _found(bundle, "receipt_not_list")
    assert found.path == "/text.md" and "a string" in found.message
    assert _line_of(root, found) == "  receipt: job_id, executed_sql"
    text, listed = bundle.concept("text").computation, bundle.concept("list").computation
    assert text is not None and text.receipt == ()
    assert listed is not None and listed.receipt == ("job_id", "executed_sql")


def test_an_attested_computation_needs_exactly_one_computation(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "none.md": "---\n" + AC + "---\n# Computation\n\nTo be written.\n",
            "no_heading.md": "---\n" + AC + "---\nProse only.\n",
            "inline.md": "---\n" + AC + "---\n" + SQL,
            "fenced.md": "---\n" + AC + "---\n# Computation\n\n```sql\nSELECT 1\n```\n",
            "file.md": "---\n" + AC + "computation: q.sql\n---\n# Computation\n\nSee the file.\n",
            "both.md": "---\n" + AC + "computation: q.sql\n---\n" + SQL,
            "two.md": "---\n" + AC + "---\n# Computation\n\n```sql\nSELECT 1\n```\n\n"
            "Or, by week:\n\n```sql\n-- weekly\nSELECT 2\n```\n\n"
            "# Notes\n\n```sql\nSELECT 3\n```\n",
            "after.md": "---\n" + AC + "---\n# Computation\n\n```sql\nSELECT 1\n```\n\n"
            "# Example\n\n```sql\nSELECT 2\n```\n",
            "q.sql": "SELECT 1\n",
            "metric.md": concept(runtime="bigquery"),  # not an Attested Computation
        }
    )
    bundle = Bundle.load(root)
    missing = {p.path: p for p in _found(bundle, "missing_computation")}
    assert sorted(missing) == ["/no_heading.md", "/none.md"]
    assert _line_of(root, missing["/none.md"]) == "# Computation"
    assert problem_line(missing["/no_heading.md"]) is None  # no heading to point at
    [twice] = _found(bundle, "computation_twice")
    assert twice.path == "/both.md" and "'q.sql'" in twice.message
    assert _line_of(root, twice) == "# Computation"
    # two blocks in the section: the second is named at its line; one in a later
    # section is not under the heading
    [blocks] = _found(bundle, "computation_blocks")
    assert blocks.path == "/two.md" and "binds the first" in blocks.message
    lines = (root / "two.md").read_text().splitlines()
    assert problem_line(blocks) == lines.index("-- weekly")  # the second fence's line
    two = bundle.concept("two").computation
    assert two is not None and two.inline == "SELECT 1\n"
    assert validate(bundle).conformant


def test_an_index_groups_its_entries_under_headings(make_bundle: MakeBundle) -> None:
    good = {"a.md": concept(), "index.md": "# Concepts\n\n* [A](a.md) - one\n"}
    root = make_bundle(good)
    assert validate(Bundle.load(root)).conformant
    # A root index.md that only declares the version lists nothing: not misgrouped.
    root = make_bundle({"a.md": concept(), "index.md": "---\nokf_version: '0.2'\n---\n"})
    assert validate(Bundle.load(root)).conformant
    root = make_bundle(
        {
            "a.md": concept(),
            "sub/b.md": concept(),
            "index.md": "---\nokf_version: '0.2'\n---\nIntro.\n\n* [A](a.md) - one\n\n# More\n",
            "sub/index.md": "Just a folder.\n",
        }
    )
    report = validate(Bundle.load(root))
    assert not report.conformant  # §11 rule 3: §8's structure
    found = {p.path: p for p in report.errors}
    assert sorted(found) == ["/index.md", "/sub/index.md"]
    assert {p.code for p in found.values()} == {"index_no_section"}
    assert _line_of(root, found["/index.md"]) == "* [A](a.md) - one"
    assert "no section" in found["/sub/index.md"].message
    assert "index_no_section" in ERROR_CODES


def test_setext_headings_and_fenced_examples_keep_an_index_sectioned(
    make_bundle: MakeBundle,
) -> None:
    fenced = "```markdown\n* [A](a.md) - how an entry looks\n```\n"
    root = make_bundle(
        {
            "a.md": concept(),
            "b/x.md": concept(),
            "c/y.md": concept(),
            "index.md": "Concepts\n========\n\n* [A](a.md) - one\n",
            "b/index.md": fenced + "\nMore\n----\n\n* [X](x.md) - ex\n",
            # A thematic break after an entry is no heading: the entry stays outside.
            "c/index.md": "* [Y](y.md) - why\n---\n\n# Later\n",
        }
    )
    report = validate(Bundle.load(root))
    assert [p.path for p in report.errors] == ["/c/index.md"]
    assert report.errors[0].code == "index_no_section"


def test_a_duplicate_key_fails_rule_one_and_names_the_repeat(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "top.md": "---\ntype: T\ntitle: first\ntags: [a]\ntitle: second\n---\n",
            "nested.md": "---\ntype: T\nexecutor: {resource: x.md, resource: y.md}\n---\n",
        }
    )
    bundle = Bundle.load(root)
    assert bundle.concept("top").title == "second"  # read as before: the last one wins
    found = {p.path: p for p in _found(bundle, "duplicate_key")}
    assert _line_of(root, found["/top.md"]) == "title: second"
    assert problem_line(found["/nested.md"]) == 3  # a nested key: its line, and its mapping
    assert "appears twice in executor" in found["/nested.md"].message
    report = validate(bundle)
    assert not report.conformant
    assert sorted(p.path for p in report.errors) == ["/nested.md", "/top.md"]


@pytest.mark.parametrize(
    ("frontmatter", "key", "nth", "expected"),
    [
        ("type: T\nstatus: draft\n", "status", 1, 3),
        ("type: T\n'status': draft\n", "status", 1, 3),
        ("type: T\nstatuses: x\n", "status", 1, None),
        ("title: a\ntype: T\ntitle: b\n", "title", 2, 4),
        ("executor: {resource: r, receipt: x}\n", "executor.receipt", 1, 2),
        ("executor:\n  resource: r\n  receipt: x\nreceipt: y\n", "executor.receipt", 1, 4),
        ("executor:\n  resource: r\nother:\n  receipt: x\n", "executor.receipt", 1, None),
    ],
)
def test_key_line_finds_a_frontmatter_key(
    frontmatter: str, key: str, nth: int, expected: int | None
) -> None:
    text = "---\n" + frontmatter + "---\nbody\n"
    body_line = text.split("\nbody")[0].count("\n") + 2
    assert key_line(text, body_line, key, nth) == expected
