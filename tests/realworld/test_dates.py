"""Date-only and offset-less times (issue 17, item 2): read in UTC, a date as the start of
its day, so a stale_after date makes the concept stale no later than its author meant."""

from __future__ import annotations

from datetime import UTC, date, datetime

from hypothesis import given
from hypothesis import strategies as st

from conftest import MakeBundle
from okfx import Bundle, Toolbox
from okfx.trust import parse_instant

PAST = "2026-01-15"
DOC = f"""---
type: Note
stale_after: {PAST}
timestamp: 2026-01-02
verified: {{by: human:ada, at: 2026-01-03}}
sources:
  - id: s
    resource: https://example.com/s
    last_modified: '2025-12-31'
usage_window: {{from: 2025-12-01, to: 2025-12-31}}
---
Body.
"""


def test_every_date_only_field_is_the_start_of_its_day_in_utc(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({"a.md": DOC}))
    c = bundle.concept("a")
    assert c.stale_after == datetime(2026, 1, 15, tzinfo=UTC)
    assert c.generated is not None and c.generated.at == datetime(2026, 1, 2, tzinfo=UTC)
    assert c.verified[0].at == datetime(2026, 1, 3, tzinfo=UTC)
    assert c.sources[0].last_modified == datetime(2025, 12, 31, tzinfo=UTC)
    assert c.usage_window is not None
    assert c.usage_window.start == datetime(2025, 12, 1, tzinfo=UTC)
    assert c.usage_window.end == datetime(2025, 12, 31, tzinfo=UTC)
    notes = [p.message for p in bundle.warnings if p.code == "assumed_utc"]
    assert len(notes) == 6
    fields = ("stale_after", "timestamp", "verified[0].at", "sources[0].last_modified")
    for field in (*fields, "usage_window.from", "usage_window.to"):
        assert any(m.startswith(field + " ") for m in notes), field
    assert not [p for p in bundle.warnings if p.code == "invalid_field"]


def test_a_past_stale_after_date_makes_the_concept_stale(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({"a.md": DOC, "b.md": "---\ntype: Note\n---\n"}))
    c = bundle.concept("a")
    assert not c.is_stale(datetime(2026, 1, 14, 23, 59, 59, tzinfo=UTC))
    assert c.is_stale(datetime(2026, 1, 15, tzinfo=UTC))
    later = datetime(2026, 6, 1, tzinfo=UTC)
    box = Toolbox(bundle, now=lambda: later)
    read = box.read_concept(path="a")
    assert read["stale"] is True and read["stale_after"] == "2026-01-15T00:00:00Z"
    assert any(n.startswith("STALE") for n in read["notices"])
    rows = box.list_concepts(include_stale=False)["concepts"]
    assert [r["path"] for r in rows] == ["/b.md"]


def test_a_read_flags_each_date_written_as_a_day(make_bundle: MakeBundle) -> None:
    # MCP QA: generated said date_only for a day, stale_after and last_modified did not.
    timed = DOC.replace(f"stale_after: {PAST}", "stale_after: 2026-01-15T08:00:00Z")
    timed = timed.replace("at: 2026-01-03}", "at: '2026-01-03T10:00:00Z'}")
    timed = timed.replace("'2025-12-31'", "2025-12-31T09:00:00Z")
    box = Toolbox(Bundle.load(make_bundle({"a.md": DOC, "b.md": timed})))
    day, time = box.read_concept(path="a"), box.read_concept(path="b")
    assert day["stale_after_date_only"] is True
    assert day["verified"] == [{"by": "human:ada", "at": "2026-01-03T00:00:00Z", "date_only": True}]
    assert day["sources"][0]["last_modified_date_only"] is True
    assert "stale_after_date_only" not in time
    assert "date_only" not in time["verified"][0]
    assert "last_modified_date_only" not in time["sources"][0]


def test_a_time_without_offset_is_read_in_utc_with_a_warning(make_bundle: MakeBundle) -> None:
    text = "---\ntype: Note\nstale_after: '2026-03-01T12:30:00'\n---\n"
    bundle = Bundle.load(make_bundle({"a.md": text}))
    assert bundle.concept("a").stale_after == datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
    (note,) = [p.message for p in bundle.warnings if p.code == "assumed_utc"]
    assert note.startswith("stale_after ") and "UTC" in note


def test_what_is_no_date_at_all_is_still_refused(make_bundle: MakeBundle) -> None:
    text = "---\ntype: Note\nstale_after: soon\ntimestamp: 2026-02-30\n---\n"
    bundle = Bundle.load(make_bundle({"a.md": text}))
    c = bundle.concept("a")
    assert c.stale_after is None and c.generated is None
    assert [p.code for p in bundle.warnings] == ["invalid_field", "invalid_field"]


@given(st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 30)))
def test_a_date_reads_as_midnight_utc_of_that_day(day: date) -> None:
    when, note = parse_instant(day.isoformat(), lenient=True)
    assert when == datetime(day.year, day.month, day.day, tzinfo=UTC)
    assert note is not None and day.isoformat() in note
    assert parse_instant(day, lenient=True)[0] == when
    strict, reason = parse_instant(day.isoformat())
    assert strict is None and reason
