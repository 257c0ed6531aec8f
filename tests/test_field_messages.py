"""What a bad optional field's warning says: what was wrong, and what to write instead
(new-producers QA and spec-audit QA: messages that named the wrong mistake)."""

from __future__ import annotations

from conftest import MakeBundle, concept
from okfx import Bundle


def _messages(make_bundle: MakeBundle, **fields: str) -> list[tuple[str, str]]:
    bundle = Bundle.load(make_bundle({"a.md": concept("Term", "Body.\n", **fields)}))
    return [(w.code, w.message) for w in bundle.warnings]


def test_a_status_that_means_a_review_says_where_a_review_is_recorded(
    make_bundle: MakeBundle,
) -> None:
    # boi-wiki writes status: reviewed on 178 concepts; §5.2 records a review in verified.
    for word in ("reviewed", "Approved", "verified"):
        ((code, message),) = _messages(make_bundle, status=word)
        assert code == "unknown_status"
        assert message.startswith(f"status {word!r} is not draft, stable or deprecated")
        assert "read as stable: write stable, and record the review as verified: " in message
        assert "[{by: human:<id>, at: <ISO 8601 time>}] (spec §5.2)" in message
    ((_, other),) = _messages(make_bundle, status="retired")
    assert other.endswith("read as stable: write one of the three (line 3)")
    bundle = Bundle.load(make_bundle({"a.md": concept("Term", status="reviewed")}))
    assert bundle.concept("a").status == "stable"  # the derived status is unchanged
    assert bundle.concept("a").trust_tier == "unverified"


def test_tags_written_as_one_string_are_read_as_the_names_it_separates(
    make_bundle: MakeBundle,
) -> None:
    # new-producers QA: 8 of a bundle's concepts wrote tags: stackoverflow, tag, wiki and
    # a --tag filter left them out.
    cases = {
        "stackoverflow, tag, wiki": ("stackoverflow", "tag", "wiki"),
        "a; b, c": ("a", "b, c"),  # ';' separates first, as in aliases
        "finance": ("finance",),
        "machine learning": ("machine learning",),  # blanks do not separate
        "'[x, y]'": ("x", "y"),  # a quoted list, as before
        "' , '": (),
        "''": (),
    }
    for written, read in cases.items():
        files = {"a.md": concept("Term", "Body.\n", tags=written)}
        bundle = Bundle.load(make_bundle(files), state_cache=False)
        assert bundle.concept("a").tags == read, written
        ((warning),) = bundle.warnings
        assert warning.code == "invalid_field"  # other consumers read no list: said
    ((_, message),) = _messages(make_bundle, tags="stackoverflow, tag, wiki")
    assert message == (
        "tags is one string, not a list; okfx reads it as 3 tags, other consumers read no "
        "tags: write it as a YAML list, tags: [stackoverflow, tag, wiki] (line 3)"
    )
    ((_, message),) = _messages(make_bundle, tags="finance")
    assert "okfx reads it as the tag 'finance'" in message
    ((_, message),) = _messages(make_bundle, tags="' '")
    assert message == "tags is an empty string; ignored (line 3)"
