"""grep through the word index of the kept texts (okfx.search.wordindex) answers exactly
what the scan of the texts answers: the same segments, and the same matches, order,
``concepts`` count, hidden counts and truncation from grep."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import write_tree
from okfx import Bundle, KnowledgeManager, Toolbox
from okfx.search import wordindex
from okfx.search.corpus import Part
from okfx.search.grep import grep
from okfx.search.wordindex import WordIndex, build_word_indexes, index_in_background
from test_grep_corpus import eager  # noqa: I001  (a sibling test module)

# ASCII letters and digits, the joiners and spaces that end words, a line break, and
# non-ASCII neighbours of ASCII letters: a precomposed e-acute, a combining acute accent,
# the Kelvin sign (whose casefold is ASCII), a CJK character.
_ALPHABET = "aAbB09 _-.'\n\u00e9\u0301\u212a\u6f22"
_TEXT = st.text(alphabet=_ALPHABET, max_size=30)
_WORD_NEEDLE = st.text(alphabet="aAbB09", min_size=1, max_size=3)
_OTHER_NEEDLE = st.text(alphabet=_ALPHABET, min_size=1, max_size=3)


@st.composite
def bundles(draw: st.DrawFn) -> dict[str, str]:
    files = {"index.md": '---\nokf_version: "0.2"\n---\n'}
    for i in range(draw(st.integers(1, 12))):
        title, description, body = draw(_TEXT), draw(_TEXT), draw(_TEXT)
        status = draw(st.sampled_from(["stable", "deprecated"]))  # hidden, only counted
        files[f"d{i % 3}/c{i}.md"] = (
            f"---\ntype: note\nstatus: {status}\ntitle: {json.dumps(title)}\n"
            f"description: {json.dumps(description)}\n---\n{body}"
        )
    return files


def _part(bundle: Bundle) -> Part:
    corpus = bundle._store.corpus
    assert corpus is not None and len(corpus.parts) == 1
    return corpus.parts[0]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=bundles(),
    needles=st.lists(st.one_of(_WORD_NEEDLE, _OTHER_NEEDLE), min_size=1, max_size=6),
    limit=st.sampled_from([1, 2, 200]),
    ignore_case=st.booleans(),
)
def test_the_word_index_finds_what_the_scan_finds(
    tmp_path_factory: pytest.TempPathFactory,
    files: dict[str, str],
    needles: list[str],
    limit: int,
    ignore_case: bool,
) -> None:
    root = write_tree(tmp_path_factory.mktemp("b") / "bundle", files)
    bundle = Bundle.load(root, state_cache=False)
    part = _part(bundle)
    assert part.words is None
    scanned = {n: list(part.find(n.encode())) for n in needles}
    folded = {n: sorted(part.find_folded(n.casefold())) for n in needles}
    options = {"limit": limit, "ignore_case": ignore_case}
    greps = {n: grep(eager(bundle), n, **options).to_dict() for n in needles}
    index = WordIndex(part)
    part.words = index
    for needle in needles:
        data = needle.encode()
        found = index.segments(data)
        if data.isalnum():
            assert found == scanned[needle], needle
        else:
            assert found is None, needle
        assert list(part.find(data)) == scanned[needle], needle
        assert sorted(part.find_folded(needle.casefold())) == folded[needle], needle
        assert bundle.grep(needle, **options).to_dict() == greps[needle], needle


def test_a_word_found_inside_longer_words_names_each_segment_once(tmp_path: Path) -> None:
    files = {
        "a.md": "---\ntype: note\ntitle: Chemflior\n---\nchemflior, xchemfliorx and chemflior\n",
        "b.md": "---\ntype: note\ntitle: other\n---\nchem-flior\n",
        "c.md": "---\ntype: note\ntitle: last\n---\nthe chemfliors\n",
    }
    bundle = Bundle.load(write_tree(tmp_path / "b", files), state_cache=False)
    part = _part(bundle)
    index = WordIndex(part)
    paths = part.paths
    assert [paths[s] for s in index.segments(b"chemflior") or ()] == ["/a.md", "/c.md"]
    assert [paths[s] for s in index.segments(b"flior") or ()] == ["/a.md", "/b.md", "/c.md"]
    assert index.segments(b"Chemflior") == [0]
    assert index.segments(b"CHEMflior", folded=True) == [0, 2]
    assert index.segments(b"absent") == []
    assert index.segments(b"chem-flior") is None  # not a word: the caller scans


def test_the_grep_tool_builds_the_index_at_its_second_grep_and_answers_alike(
    tmp_path: Path,
) -> None:
    files = {
        f"c{i}.md": f"---\ntype: note\ntitle: T{i}\n---\nalpha{i % 3} beta\n" for i in range(9)
    }
    bundle = Bundle.load(write_tree(tmp_path / "b", files), state_cache=False)
    box = Toolbox(KnowledgeManager([bundle]))
    part = _part(bundle)
    first: dict[str, Any] = box.grep_concepts(pattern="alpha1", limit=2)
    assert part.words is None  # one grep builds nothing (okfx grep greps once)
    assert box.grep_concepts(pattern="alpha1", limit=2) == first
    for thread in threading.enumerate():
        if thread.name == "okfx-word-index":
            thread.join(30)
    assert part.words is not None
    assert index_in_background([part]) is None  # built once
    again = box.grep_concepts(pattern="alpha1", limit=2)
    assert again == first
    assert (again["concepts"], again["truncated"], len(again["matches"])) == (3, True, 2)


def test_texts_past_the_size_limit_get_no_index_and_grep_scans_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        f"c{i}.md": f"---\ntype: note\ntitle: T{i}\n---\nalpha{i % 3} beta\n" for i in range(9)
    }
    bundle = Bundle.load(write_tree(tmp_path / "b", files), state_cache=False)
    part = _part(bundle)
    monkeypatch.setattr(wordindex, "MAX_TEXT_BYTES", part.size - 1)
    build_word_indexes([part])
    assert index_in_background([part]) is None and part.words is None
    box = Toolbox(KnowledgeManager([bundle]))
    found = box.grep_concepts(pattern="alpha1")
    assert found["concepts"] == 3  # from the scan
    monkeypatch.setattr(wordindex, "MAX_TEXT_BYTES", part.size)
    build_word_indexes([part])
    assert part.words is not None and box.grep_concepts(pattern="alpha1") == found
