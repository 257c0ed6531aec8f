"""Concepts whose body and frontmatter stay in their file (okfx.bundle.stored)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SAMPLE_NAMES, write_tree
from okfx import Bundle, Concept
from okfx.bundle.stored import StoredConcept
from okfx.search.grep import grep

FILES: dict[str, str | bytes] = {
    "plain.md": "---\ntype: note\ntitle: Plain\n---\nThe orders table.\nSecond line.\n",
    "crlf.md": b"---\r\ntype: note\r\ntitle: Windows\r\n---\r\nLine one\r\nline TWO orders\r\n",
    "bom.md": "\ufeff---\ntype: note\n---\nStarts with a BOM; Kelvin \u212a and stra\u00dfe.\n",
    "old-mac.md": b"---\rtype: note\r---\rcarriage\rreturns only\r",
    "deep/x.md": "---\ntype: note\ndescription: orders in the description\n---\nnothing\n",
}


def eager(bundle: Bundle) -> list[tuple[str, Concept]]:
    return [(bundle.name, Concept(**{f: getattr(c, f) for f in Concept.__slots__})) for c in bundle]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "b", FILES)


def test_bodies_and_frontmatter_read_from_files_equal_a_parse_that_kept_them(
    samples: Path,
) -> None:
    from okfx.bundle.frontmatter import parse
    from okfx.bundle.walk import decode_text
    from okfx.limits import Limits

    for name in SAMPLE_NAMES:
        bundle = Bundle.load(samples / name, state_cache=False)
        for concept in bundle:
            assert isinstance(concept, StoredConcept)
            text = decode_text((bundle.root / concept.path.lstrip("/")).read_bytes())
            parsed = parse(text, Limits())
            assert concept.body == parsed.body
            assert concept.frontmatter == parsed.data


def test_an_unchanged_file_s_body_comes_from_the_kept_texts_not_the_file(root: Path) -> None:
    # The load's texts are memory-mapped and shared by every worker process: a body read
    # from them is the file's (line endings, BOM and all), and no per-process cache keeps
    # a copy of it (the frontmatter's text is kept, for its mapping).
    from okfx.bundle import stored
    from okfx.bundle.frontmatter import parse
    from okfx.bundle.walk import decode_text
    from okfx.limits import Limits

    def cached() -> dict[str, str | None]:
        mine = str(root.resolve())
        return {host: body for (host, _), (_, body) in stored._TEXTS.items.items() if mine in host}

    bundle = Bundle.load(root, state_cache=False)
    for concept in bundle:
        assert concept.corpus is not None and concept.corpus.locate(concept.path) is not None
        parsed = parse(decode_text((root / concept.path.lstrip("/")).read_bytes()), Limits())
        assert (concept.body, concept.frontmatter) == (parsed.body, parsed.data)
    assert len(cached()) == len(FILES) and set(cached().values()) == {None}
    (root / "plain.md").write_text("---\ntype: note\ntitle: Plain\n---\nNew text.\n")
    assert bundle.concept("/plain.md").body == "New text.\n"  # read from the file now
    assert "New text.\n" in cached().values()


def test_a_file_changed_after_the_load_is_read_as_it_is_now(root: Path) -> None:
    bundle = Bundle.load(root, state_cache=False)
    assert bundle.concept("/plain.md").body.startswith("The orders table.")
    (root / "plain.md").write_text("---\ntype: note\ntitle: Plain\n---\nRewritten.\n")
    assert bundle.concept("/plain.md").body == "Rewritten.\n"
    assert bundle.concept("/plain.md").title == "Plain"  # metadata until a reload


def test_a_file_gone_after_the_load_reads_empty_with_one_warning(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bundle = Bundle.load(root, state_cache=False)
    concept = bundle.concept("/plain.md")
    (root / "plain.md").unlink()
    with caplog.at_level(logging.WARNING, logger="okfx"):
        assert concept.body == "" and concept.frontmatter == {}
        assert concept.body == ""
    assert len(caplog.records) == 1 and "/plain.md" in caplog.text
    assert "/plain.md" not in bundle.reload()


def test_a_bundle_folder_gone_is_logged_once_not_per_concept_read(
    root: Path, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Viewer QA: with the bundle's folder moved away, every page viewed logged a line
    naming read_concept and Concept.body."""
    bundle = Bundle.load(root, state_cache=False)
    root.rename(tmp_path / "moved-away")
    with caplog.at_level(logging.WARNING, logger="okfx"):
        for path in ("/plain.md", "/crlf.md", "/deep/x.md"):  # as the viewer's pages read
            bundle.as_now(bundle.concept(path))
            bundle.concept(path).frontmatter  # noqa: B018 - read from the file
    assert len(caplog.records) == 1, caplog.text
    assert f"the bundle folder {root} cannot be read" in caplog.text


def test_a_stored_concept_copies_and_pickles_as_a_plain_concept(root: Path) -> None:
    import copy
    import pickle

    concept = Bundle.load(root, state_cache=False).concept("/crlf.md")
    assert copy.copy(concept) is concept
    plain = pickle.loads(pickle.dumps(concept))
    assert type(plain) is Concept
    assert [getattr(plain, f) for f in Concept.__slots__] == [
        getattr(concept, f) for f in Concept.__slots__
    ]
    with pytest.raises(AttributeError):
        concept.title = "changed"  # type: ignore[misc]


NEEDLES = ["orders", "ORDERS", "line", "two", "\u212a", "k", "strasse", "STRASSE", "carriage",
           "\ufeff", "BOM;", "r\nline", "Line one", "description", "returns only"]  # fmt: skip


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sampled_from(NEEDLES) | st.text(min_size=1, max_size=4), st.booleans(), st.booleans())
def test_grep_over_stored_concepts_equals_grep_over_bodies_in_memory(
    root: Path, needle: str, ignore_case: bool, regex: bool
) -> None:
    bundle = Bundle.load(root, state_cache=False)
    if regex:
        import re

        needle = re.escape(needle)
    try:
        want = grep(eager(bundle), needle, ignore_case=ignore_case, regex=regex).to_dict()
    except Exception as exc:  # an invalid pattern fails alike
        with pytest.raises(type(exc)):
            grep(((bundle.name, c) for c in bundle), needle, ignore_case=ignore_case, regex=regex)
        return
    got = grep(((bundle.name, c) for c in bundle), needle, ignore_case=ignore_case, regex=regex)
    assert got.to_dict() == want


def test_the_texts_cache_stays_within_its_budget_counting_each_entry_s_keeping() -> None:
    # Every worker of okfx serve fills its own cache: its budget bounds what a process
    # keeps, each entry charged its key and bookkeeping as well as its characters.
    from okfx.bundle.stored import ENTRY_CHARS, _Texts

    texts = _Texts(budget=10 * (ENTRY_CHARS + 100))
    for i in range(50):
        texts.put((f"/b/{i}.md", i), ("y" * 100, None))
    assert len(texts.items) == 10 and texts.used == 10 * (ENTRY_CHARS + 100)
    assert list(texts.items)[0] == ("/b/40.md", 40)  # the least recently used went first
    texts.get(("/b/40.md", 40))
    texts.put(("/b/50.md", 50), ("y" * 100, None))
    assert ("/b/40.md", 40) in texts.items and ("/b/41.md", 41) not in texts.items
