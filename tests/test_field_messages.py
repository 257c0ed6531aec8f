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
        assert "[{by: human:jane, at: 2026-06-25T09:00:00Z}] with the reviewer's id" in message
    ((_, other),) = _messages(make_bundle, status="orange")
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


def test_an_empty_value_is_said_to_be_empty(make_bundle: MakeBundle) -> None:
    # new-producers QA: resource: '' was told it "must be a path or URI string"
    ((_, message),) = _messages(make_bundle, resource="''")
    assert message == (
        "resource is empty, not a path or URI; ignored: write one, or leave the key out (line 3)"
    )
    ((_, message),) = _messages(make_bundle, resource="[a]")
    assert message.startswith("resource is a list, not a path or URI; ignored")
    # spec-audit QA F15: "tags entry '' is not a string", and "runtime is a string; ... names
    # one engine as a string"
    said = [message for _, message in _messages(make_bundle, tags="['', ' ', 3, [x]]")]
    assert said == [
        "tags entry '' is empty; ignored (line 3)",
        "tags entry ' ' is empty; ignored (line 3)",
        "tags entry ['x'] is not a string; ignored (line 3)",
    ]
    files = {"c.md": concept("Attested Computation", "# Computation\n\n```sql\nSELECT 1\n```\n")}
    files["c.md"] = files["c.md"].replace("type:", "runtime: ''\ntype:")
    (warning,) = Bundle.load(make_bundle(files)).warnings
    assert warning.message.startswith("runtime is empty; an Attested Computation names one")


def test_a_link_written_with_backslashes_is_said_to_be_one_with_its_fix(
    make_bundle: MakeBundle,
) -> None:
    # spec-audit QA F15: \tables\x.md was said to leave the bundle, which it does not.
    # CommonMark reads \. as '.', so the climbing link writes each backslash twice.
    body = "[t](\\tables\\x.md) and [up](..\\\\..\\\\x.md)\n"
    source = "[{resource: 'refs\\y.md'}]"
    files = {"sub/a.md": concept("Term", body, sources=source), "tables/x.md": concept()}
    said = [(w.code, w.message) for w in Bundle.load(make_bundle(files)).warnings]
    assert said == [
        (
            "unsafe_link",
            "body link '\\tables\\x.md' is written with backslashes, which no bundle path "
            "holds (a Windows path?); it is not followed: write '/tables/x.md' (line 5)",
        ),
        (
            "unsafe_link",
            "body link '..\\\\..\\\\x.md' leaves the bundle; not followed: link a page outside it "
            "by full URL, or bring the page into the bundle (line 5)",
        ),
        (
            "unsafe_link",
            "sources[0].resource 'refs\\y.md' is written with backslashes, which no bundle "
            "path holds (a Windows path?); the source is kept, its path is not followed: "
            "write 'refs/y.md' (line 3)",
        ),
    ]


def test_an_actor_fix_keeps_the_prefix_written(make_bundle: MakeBundle) -> None:
    # spec-audit QA F15: human:ada lovelace was told "e.g. human:human-ada-lovelace"
    # (the first three are read by their prefix, spec §7, and say how to write them)
    for written, fix in (
        ("'human:ada lovelace'", "write human:ada-lovelace"),
        ("'human: ada'", "write human:ada"),
        ("'Process: nightly run'", "write process:nightly-run"),
        ("'human:'", "e.g. human:<id>)"),
        ("'Ada Lovelace'", "e.g. human:ada-lovelace)"),
    ):
        said = _messages(make_bundle, verified=f"{{by: {written}, at: 2026-01-01T00:00:00Z}}")
        assert [message for _, message in said if fix in message], said


def test_sources_written_as_one_mapping_are_read_and_said(make_bundle: MakeBundle) -> None:
    # spec-audit QA F20: read as one source with no word, where other consumers see none.
    files = {"a.md": concept("Term", "Body.\n", sources="{resource: 'https://x.example'}")}
    bundle = Bundle.load(make_bundle(files))
    assert [s.resource for s in bundle.concept("a").sources] == ["https://x.example"]
    ((code, message),) = [(w.code, w.message) for w in bundle.warnings]
    assert code == "invalid_field"
    assert message.startswith("sources is one mapping, not a list: okfx reads it as one source")
    listed = {"a.md": concept("Term", sources="[{resource: 'https://x.example'}]")}
    assert Bundle.load(make_bundle(listed)).warnings == []


def test_a_negative_usage_count_is_said_and_left_out(make_bundle: MakeBundle) -> None:
    source = "[{resource: 'https://x.example', usage_count: -3}, {resource: /b.md, usage_count: 0}]"
    files = {"a.md": concept("Term", sources=source), "b.md": concept()}
    bundle = Bundle.load(make_bundle(files))
    assert [s.usage_count for s in bundle.concept("a").sources] == [None, 0]
    ((code, message),) = [(w.code, w.message) for w in bundle.warnings]
    assert (code, message) == (
        "invalid_field",
        "sources[0].usage_count is -3: a count of uses is 0 or more (spec §5.1); ignored (line 3)",
    )


def test_a_status_whose_meaning_is_plain_says_what_reading_it_as_stable_does(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: 'archived' and 'todo' were read as stable with only "write one of the
    three": a retired or unfinished concept is served as current."""
    said = {
        "archived": "read as stable, so consumers serve it as current: if it is retired, "
        "write deprecated (kept for links and history)",
        "Superseded": "if it is retired, write deprecated",
        "todo": "read as stable, ready for consumption: if it is not finished, write draft",
        "needs-review": "if it is not finished, write draft",
        "active": "read as stable, as meant: write stable, or leave the key out",
    }
    for word, part in said.items():
        ((code, message),) = _messages(make_bundle, status=word)
        assert code == "unknown_status" and part in message, word


def test_an_empty_timestamp_and_a_verified_string_say_what_to_write(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: timestamp: '' read "'' is not a valid ISO 8601 date" (490 pages of
    okf-explorer), and verified: "yes" gave neither the form nor the consequence."""
    ((_, empty),) = _messages(make_bundle, timestamp="''")
    assert empty.startswith("timestamp is empty: write an ISO 8601 datetime")
    ((_, verified),) = _messages(make_bundle, verified="'yes'")
    assert "not a string; ignored, so the concept counts as unverified (spec §5.3)" in verified
    assert "write verified: [{by: human:jane, at: 2026-06-25T09:00:00Z}]" in verified


def test_a_placeholder_reviewer_reviews_nothing(make_bundle: MakeBundle) -> None:
    """CI QA: the advice for status: reviewed, pasted as written (verified: [{by:
    human:<id>, ...}]), made the concept human-reviewed by 'human:<id>'. A placeholder
    id, <...> or {{...}}, is no one: the entry is ignored, and said so."""
    for by in ("human:<id>", "'human:{{ reviewer }}'", "process:<job>"):
        root = make_bundle(
            {"a.md": f"---\ntype: Term\nverified: [{{by: {by}, at: 2026-06-25}}]\n---\nA.\n"}
        )
        bundle = Bundle.load(root)
        assert bundle.concept("a").trust_tier == "unverified", by
        ((_, message),) = _messages(make_bundle, verified=f"[{{by: {by}, at: 2026-06-25}}]")
        assert "is a placeholder, not a reviewer: write who reviewed it" in message, by
    root = make_bundle(
        {"a.md": "---\ntype: Term\nverified: {by: human:jane, at: 2026-06-25}\n---\n"}
    )
    assert Bundle.load(root).concept("a").trust_tier == "human-reviewed"


def test_an_attested_computation_without_a_runtime_says_what_to_write(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: "runtime is required ... (spec §10.2)" said neither why it matters
    nor what to write."""
    body = "# Computation\n\n```sql\nSELECT 1\n```\n"
    bundle = Bundle.load(make_bundle({"a.md": concept("Attested Computation", body)}))
    ((code, message),) = [(w.code, w.message) for w in bundle.warnings]
    assert code == "invalid_field"
    assert "the computation cannot be bound; add one (runtime: duckdb" in message


def test_a_duration_or_a_number_for_an_instant_says_what_to_write(make_bundle: MakeBundle) -> None:
    """CI QA: "'P90D' is not a valid ISO 8601 date" (it is, as a duration; §5.5 wants an
    instant, not a TTL), and "stale_after is a int" said neither what nor how."""
    ((_, duration),) = _messages(make_bundle, stale_after="P90D")
    assert duration.startswith("stale_after 'P90D' is a duration, not an instant: write one")
    ((_, number),) = _messages(make_bundle, stale_after="1767225600")
    assert number.startswith("stale_after is a number (a Unix time?), not an ISO 8601 datetime")
    ((_, words),) = _messages(make_bundle, stale_after="next week")
    assert "such as 2026-09-30T00:00:00Z" in words


def test_parameters_written_as_one_mapping_are_read_and_said(make_bundle: MakeBundle) -> None:
    """CI QA: parameters: {name: year, ...} bound as a list here, and another consumer
    reads no parameter; sources written so was already said."""
    text = (
        "---\ntype: Attested Computation\nruntime: duckdb\n"
        "parameters: {name: year, type: integer, required: true}\n---\n\n"
        "# Computation\n\n```sql\nSELECT $year\n```\n"
    )
    bundle = Bundle.load(make_bundle({"c.md": text}))
    computation = bundle.concept("c").computation
    assert computation is not None and [p.name for p in computation.parameters] == ["year"]
    (said,) = [w.message for w in bundle.warnings if w.code == "invalid_field"]
    assert said.startswith("parameters is one mapping, not a list: okfx reads it as one")
