"""grep over the texts a load keeps (okfx.search.corpus, okfx.bundle.texts) finds exactly
what grep over bodies held in memory finds, on every kind of load, and follows a file
edited after the load as concept.body does."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import write_tree
from okfx import Bundle, Concept, statecache
from okfx.bundle import state as state_module
from okfx.search import corpus as corpus_module
from okfx.search.corpus import single_line
from okfx.search.grep import grep
from okfx.statecache import wait_for_stores

# Letters that fold in interesting ways: Kelvin sign, long s, sharp s (and its capital),
# a ligature, a dotted capital I, Greek sigmas, a CJK character.
_ALPHABET = "abkKsS \n.-\u212a\u017f\u00df\u1e9e\ufb01\u0130\u03a3\u03c3\u03c2\u6f22"
_TEXT = st.text(alphabet=_ALPHABET, max_size=40)
_NEEDLE = st.text(alphabet=_ALPHABET, min_size=1, max_size=4)
_SHAPES = [
    "{}", "^{}", "{}$", r"\A{}", r"{}\z", "(?-m)^{}", r"\b{}", r"{}\s", "(?s){}.",
    "[^x]{}", r"(?i){}", "^$", r"\n{}", "{}(?:.|\n)+a",
]  # fmt: skip


def _escape(needle: str) -> str:
    return "".join(f"\\x{{{ord(c):x}}}" if not c.isalnum() else c for c in needle)


@st.composite
def bundles(draw: st.DrawFn) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {"index.md": '---\nokf_version: "0.2"\n---\n'}
    for i in range(draw(st.integers(1, 9))):
        title, description, body = draw(_TEXT), draw(_TEXT), draw(_TEXT)
        status = draw(st.sampled_from(["stable", "deprecated"]))  # hidden, only counted
        text = (
            f"---\ntype: note\nstatus: {status}\ntitle: {json.dumps(title)}\n"
            f"description: {json.dumps(description)}\n---\n{body}"
        )
        ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
        data = text.replace("\n", ending).encode("utf-8")
        if draw(st.booleans()):
            data = b"\xef\xbb\xbf" + data  # a byte order mark
        files[f"d{i % 2}/c{i}.md"] = data
    return files


@st.composite
def patterns(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    needle = draw(_NEEDLE)
    options = {"ignore_case": draw(st.booleans()), "limit": draw(st.sampled_from([1, 3, 200]))}
    if draw(st.booleans()):
        return needle, options
    pattern = draw(st.sampled_from(_SHAPES)).format(_escape(needle))
    return pattern, {**options, "regex": True}


def eager(bundle: Bundle) -> list[tuple[str, Concept]]:
    """The bundle's concepts with their bodies in memory (how okfx kept them)."""
    return [(bundle.name, Concept(**{f: getattr(c, f) for f in Concept.__slots__})) for c in bundle]


def same_grep(bundle: Bundle, pattern: str, options: dict[str, Any]) -> None:
    assert all(c.corpus is not None and not c.corpus.uncovered for c in bundle)
    try:
        want = grep(eager(bundle), pattern, per_concept=50, **options).to_dict()
    except Exception as exc:  # an invalid pattern fails alike
        with pytest.raises(type(exc)):
            bundle.grep(pattern, per_concept=50, **options)
        return
    assert bundle.grep(pattern, per_concept=50, **options).to_dict() == want


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    # aged() moves mtimes back, but the ctime it leaves is "now": tests do not wait.
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)
    # background stores (after a reload) start at once
    monkeypatch.setattr(statecache, "STORE_DELAY", 0.0)


def aged(root: Path) -> Path:
    """Files a minute old: no load takes them for just written (and parses them again)."""
    past = time.time() - 60
    for folder, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(folder, name), (past, past))
    return root


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=bundles(),
    searches=st.lists(patterns(), min_size=1, max_size=4),
    dense=st.sampled_from([(32, 1024), (1, 1), (2, 3)]),
)
def test_grep_over_the_kept_texts_equals_grep_over_bodies_in_memory(
    tmp_path_factory: pytest.TempPathFactory,
    files: dict[str, str | bytes],
    searches: list[tuple[str, dict[str, Any]]],
    dense: tuple[int, int],
) -> None:
    """CRLF, CR, BOM, Kelvin sign, sharp s, multi-line patterns, anchors, matches that
    span two fields: a cold load (texts just parsed), a warm one (texts read from the
    state file) and a warm one after an edit (texts from both) all grep alike, whether
    matches are searched over the whole buffer or (where dense) segment by segment."""
    with (
        mock.patch.object(corpus_module, "_DENSE_HITS", dense[0]),
        mock.patch.object(corpus_module, "_DENSE_RUN", dense[1]),
    ):
        _check_loads(tmp_path_factory, files, searches)


def _check_loads(
    tmp_path_factory: pytest.TempPathFactory,
    files: dict[str, str | bytes],
    searches: list[tuple[str, dict[str, Any]]],
) -> None:
    work = tmp_path_factory.mktemp("b")
    root = aged(write_tree(work / "bundle", files))
    cache = work / "state"
    edited = sorted(p for p in files if p != "index.md")[0]

    def check(bundle: Bundle, parts: int) -> Bundle:
        assert len(bundle._store.corpus.parts) == parts
        for pattern, options in searches:
            same_grep(bundle, pattern, options)
        return bundle

    check(Bundle.load(root, state_cache=cache), 1)
    warm = check(Bundle.load(root, state_cache=cache), 1)
    assert warm._store.corpus.parts[0].unchecked  # read back from the texts file
    (root / edited).write_bytes(b"---\ntype: note\ntitle: new\n---\nK\xe2\x84\xaa ss\n")
    aged(root)
    changed = check(Bundle.load(root, state_cache=cache), 2)  # the texts file, and the edit
    (root / edited).write_bytes(b"---\ntype: note\ntitle: newer\n---\n\xc3\x9f\n")
    aged(root)
    check(changed.reload(), 1)  # concepts of two loads


def test_single_line_says_false_for_every_pattern_that_can_match_a_line_break() -> None:
    multi = [r"\s", r"\W", r"\D", r"[^a]", "(?s).", "(?is:a.)", r"\n", "a\nb", r"\x0a",
             r"[\x00-\x7f]", r"\pC", r"\PL", "[[:space:]]", r"\C", r"\Q\n\E", r"\012",
             "[\t-\r]", r"(?s:(?P<x>.))", r"[\s]", r"[a\n]"]  # fmt: skip
    single = [r"\bact\w+ users\b", "foo.*bar", r"^## \d+", "TODO|FIXME", r"[a-z]+\.md",
              r"\S+@\S+", "(?i)net_amount", r"(?:ab){2,}", r"(?P<name>\w+)=", r"[\]x]",
              r"(?P<s>.)"]  # fmt: skip
    assert [p for p in multi if single_line(p)] == []
    assert [p for p in single if not single_line(p)] == []


_PIECES = [".", r"\s", r"\S", r"\w", r"\W", r"\d", r"\D", "a", "b", r"\n", "\n", "(?s)",
           "(?i)", "(?m)", "[a-c]", "[^a]", "[\n]", r"[\s]", "*", "+", "?", "|", "(", ")",
           "(?:", "(?s:", r"\x0a", r"\pZ", r"\PL", "[[:space:]]", "[ -~]", r"\b", "^", "$",
           r"\.", "{1,3}"]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8))
def test_no_pattern_single_line_passes_matches_a_line_break(pieces: list[str]) -> None:
    """What the whole-buffer search relies on: a pattern single_line() passes never
    matches text holding a line break (else a search could read far past its match)."""
    import re2

    pattern = "".join(pieces)
    try:
        regex = re2.compile(pattern)
    except re2.error:
        return
    if single_line(pattern):
        text = b"ab\n \nba\n\n\x0b\r\n1.ab "
        for match in regex.finditer(text):
            assert b"\n" not in match.group(), (pattern, match.group())


def test_a_file_edited_after_the_load_shows_its_lines_as_they_are_now(tmp_path: Path) -> None:
    root = aged(
        write_tree(
            tmp_path / "b",
            {
                "a.md": "---\ntype: note\n---\nfirst\nthe needle\n",
                "b.md": "---\ntype: note\n---\nneedle in b\n",
            },
        )
    )
    bundle = Bundle.load(root, state_cache=False)
    assert [(m.path, m.line) for m in bundle.grep("needle")] == [("/a.md", 5), ("/b.md", 4)]
    # a.md gains frontmatter lines and moves its match; b.md loses its match
    (root / "a.md").write_text("---\ntype: note\ntags: [x]\n---\nthe needle, first\n")
    (root / "b.md").write_text("---\ntype: note\n---\nnothing\n")
    (root / "c.md").write_text("---\ntype: note\n---\na needle in a new file\n")
    found = bundle.grep("needle")
    assert [(m.path, m.line, m.text) for m in found] == [("/a.md", 5, "the needle, first")]
    assert found.concepts == 1
    assert bundle.concept("/a.md").body == "the needle, first\n"
    # what the load did not hold is found after a reload
    reloaded = bundle.reload()
    assert [m.path for m in reloaded.grep("needle")] == ["/a.md", "/c.md"]


def test_a_file_edited_so_that_it_matches_is_found_after_a_reload(tmp_path: Path) -> None:
    root = aged(write_tree(tmp_path / "b", {"a.md": "---\ntype: note\n---\nnothing\n"}))
    bundle = Bundle.load(root, state_cache=False)
    (root / "a.md").write_text("---\ntype: note\n---\nnow a needle\n")
    assert len(bundle.grep("needle")) == 0  # the texts as loaded have none
    assert [m.text for m in bundle.reload().grep("needle")] == ["now a needle"]


def test_texts_are_read_back_from_the_state_file_and_checked_on_first_use(
    tmp_path: Path,
) -> None:
    root = aged(write_tree(tmp_path / "b", {"a.md": "---\ntype: note\n---\nneedle\n"}))
    cache = tmp_path / "state"
    Bundle.load(root, state_cache=cache)
    (texts,) = cache.glob("*.texts.okfs")
    warm = Bundle.load(root, state_cache=cache)
    part = warm._store.corpus.parts[0]
    assert part.unchecked and part._state is None  # mapped, not read yet
    assert [m.line for m in warm.grep("needle")] == [4]
    assert part._state is True
    # a flipped byte in the texts is caught when first searched: grep reads the file,
    # and the texts file is deleted, to be stored anew
    data = bytearray(texts.read_bytes())
    data[data.index(b"needle")] ^= 0x20
    texts.write_bytes(bytes(data))
    damaged = Bundle.load(root, state_cache=cache)
    assert [m.text for m in damaged.grep("needle")] == ["needle"]
    assert not texts.exists()


def test_a_lost_texts_file_is_stored_again_in_the_background(tmp_path: Path) -> None:
    files = {f"c{i}.md": f"---\ntype: note\n---\nbody {i} needle\n" for i in range(30)}
    root = aged(write_tree(tmp_path / "b", files))
    cache = tmp_path / "state"
    Bundle.load(root, state_cache=cache)
    (texts,) = cache.glob("*.texts.okfs")
    texts.unlink()
    warm = Bundle.load(root, state_cache=cache)
    assert warm._store.corpus.uncovered == frozenset(c.path for c in warm)
    assert len(warm.grep("needle", limit=200)) == 30  # read from the files meanwhile
    assert wait_for_stores(30)
    again = Bundle.load(root, state_cache=cache)
    assert not again._store.corpus.uncovered
    assert [m.path for m in again.grep("needle", limit=200)] == sorted(
        f"/c{i}.md" for i in range(30)
    )


def test_big_texts_spill_to_a_mapped_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(statecache, "SPOOL_BYTES", 64)
    files = {f"c{i}.md": f"---\ntype: note\n---\n{'x' * 50} {i}\n" for i in range(20)}
    bundle = Bundle.load(write_tree(tmp_path / "b", files), state_cache=False)
    part = bundle._store.corpus.parts[0]
    assert not isinstance(part.buffer, bytes)  # an mmap of the temporary file
    assert [m.path for m in bundle.grep("x 7")] == ["/c7.md"]


def _kept(tmp_path: Path, files: dict[str, str]) -> Bundle:
    bundle = Bundle.load(write_tree(tmp_path / "b", files), state_cache=False)
    assert all(c.corpus is not None for c in bundle)
    return bundle


def test_a_match_at_the_very_end_of_a_body_belongs_to_that_concept(tmp_path: Path) -> None:
    """An empty match right before the next concept's texts ends the one before."""
    bundle = _kept(
        tmp_path,
        {
            "a.md": "---\ntype: note\ntitle: A\ndescription: one\n---\nx\n",
            "b.md": "---\ntype: note\ntitle: B\ndescription: two\n---\ny",
        },
    )
    for pattern in ("^$", r"^\s*$"):
        found = bundle.grep(pattern, regex=True)
        assert [(m.path, m.line, m.text) for m in found] == [("/a.md", 7, "")], pattern
        assert found.to_dict() == grep(eager(bundle), pattern, regex=True).to_dict()


def test_a_match_across_two_fields_is_no_match_shown_or_counted(tmp_path: Path) -> None:
    """The texts are searched joined; a match that spans the title and the description
    (or description and body) matches neither, and hidden counts know it too."""
    page = "---\ntype: note\ntitle: Revenue\ndescription: total\nstatus: {}\n---\nsum\n"
    bundle = _kept(tmp_path, {"a.md": page.format("stable"), "b.md": page.format("deprecated")})
    for pattern, regex in (
        (r"Revenue\s", True), (r"total\nsum", True), (r"(?s)e.t", True), ("Revenue\ntotal", False),
        ("total\nsum", False),
    ):  # fmt: skip
        for ignore_case in (False, True):
            found = bundle.grep(pattern, regex=regex, ignore_case=ignore_case)
            assert (len(found), found.concepts, found.hidden) == (0, 0, {}), pattern
    assert bundle.grep(r"Revenue$", regex=True).hidden == {"deprecated": 1}


def test_searches_segment_by_segment_stop_at_the_call_deadline(tmp_path: Path) -> None:
    import re2

    from okfx.deadline import budget
    from okfx.errors import TimedOut

    files = {f"c{i}.md": f"---\ntype: note\n---\nbody {i}\n" for i in range(600)}
    bundle = _kept(tmp_path, files)
    part = bundle._store.corpus.parts[0]
    regex = re2.compile(r"(?s)absent.")
    with budget(0.0):
        for scan in (lambda: part.search(regex, False), lambda: part.search_fields(regex)):
            with pytest.raises(TimedOut):
                list(scan())
    assert list(part.search(regex, False)) == list(part.search_fields(regex)) == []


def test_the_grep_tool_keeps_its_grouping_per_bundle_version(tmp_path: Path) -> None:
    """grep_concepts groups a bundle's concepts once (okfx.tools.grepping) and greps
    that again: the same matches as a grep over the concepts themselves, a new grouping
    after a reload swapped the bundle's concepts and after the bundle was renamed."""
    from okfx import KnowledgeManager, Toolbox
    from okfx.tools import grepping

    root = aged(
        write_tree(
            tmp_path / "b",
            {
                "index.md": '---\nokf_version: "0.2"\n---\nsee the needle\n',
                "a.md": "---\ntype: note\n---\nfirst needle\n",
                "d/b.md": "---\ntype: note\ntitle: needle title\n---\nnothing\n",
                "d/log.md": "# log\n\nneedle\n",
            },
        )
    )
    manager = KnowledgeManager([Bundle.load(root, state_cache=tmp_path / "state")])
    box = Toolbox(manager)

    def tool() -> list[tuple[str, str, str]]:
        found = box.grep_concepts(pattern="needle", limit=200)["matches"]
        return [(m["bundle"], m["path"], m["text"]) for m in found]

    bundle = manager.bundle()
    want = [(m.bundle, m.path, m.text) for m in bundle.grep("needle", limit=200)]
    assert want == [("b", "/a.md", "first needle"), ("b", "/d/b.md", "needle title")]
    assert tool() == want
    kept = grepping._SETS[bundle][2]
    assert tool() == want and grepping._SETS[bundle][2] is kept  # grouped once
    (root / "c.md").write_text("---\ntype: note\n---\na needle in a new file\n")
    aged(root)
    assert manager.reload()
    assert tool() == [*want[:1], ("b", "/c.md", "a needle in a new file"), want[1]]
    renamed = KnowledgeManager()
    renamed.add(manager.bundle(), name="other")
    assert [m["bundle"] for m in Toolbox(renamed).grep_concepts(pattern="needle")["matches"]] == [
        "other"
    ] * 3


_BODIES = st.text(alphabet=st.sampled_from("ab\nß é"), max_size=40)


@settings(max_examples=100, deadline=None)
@given(
    parts=st.lists(
        st.dictionaries(st.sampled_from(["/a.md", "/b.md", "/c.md", "/d.md"]), _BODIES),
        min_size=1,
        max_size=3,
    ),
    broken=st.sets(st.integers(0, 2)),
)
def test_a_corpus_reads_a_kept_body_as_its_located_segment_does(
    parts: list[dict[str, str]], broken: set[int]
) -> None:
    # Corpus.kept_body is locate + kept_body in one step (a search's snippets ask it of
    # every hit): the same body from the last part holding the path, None for a path no
    # part holds or a segment whose bytes do not match their CRC-32.
    from okfx.bundle.texts import TextsBuilder
    from okfx.search.corpus import Corpus, Part, kept_body

    made = []
    for i, bodies in enumerate(parts):
        builder = TextsBuilder(None)
        for path, body in bodies.items():
            concept = SimpleNamespace(path=path, title="T", description="")
            builder.add(concept, 1 << 40, body)  # type: ignore[arg-type]
        part = builder.part()
        if i in broken and len(part):  # the first segment's stored CRC-32 is wrong
            crcs = list(builder.crcs)
            crcs[0] ^= 1
            region = (part.buffer, part.base, part.size)
            part = Part(
                region, part.starts, part.bodies, (part.mtimes, part.sizes), part.lines,
                part.ascii, list(part.paths), (part.fbuffer, part.fbase, part.fsize),
                part.fstarts, part.fids, [(region, 0)], crcs,
            )  # fmt: skip
        made.append(part)
    corpus = Corpus(made)
    for path in ["/a.md", "/b.md", "/c.md", "/d.md", "/absent.md"]:
        assert corpus.kept_body(path) == kept_body(corpus.locate(path))
        holders = [i for i, bodies in enumerate(parts) if path in bodies]
        if not holders:
            assert corpus.kept_body(path) is None
        elif holders[-1] not in broken:
            assert corpus.kept_body(path) == parts[holders[-1]][path]


def test_a_corpus_keeps_the_bodies_read_again_within_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A search's snippets read the bodies of its hits. A body read a second time stays
    # decoded (a concept found again is not decoded again), with the others read last,
    # oldest out first, within the budget; one read once is not held, nor one longer
    # than an eighth of the budget; the paths read once are forgotten past a count.
    import sys

    from okfx.bundle.texts import TextsBuilder
    from okfx.search.corpus import Corpus, Part

    bodies = {f"/c{i}.md": f"body {i} " * 40 for i in range(12)}
    bodies["/long.md"] = "long " * 2000
    builder = TextsBuilder(None)
    for path, body in bodies.items():
        concept = SimpleNamespace(path=path, title="T", description="")
        builder.add(concept, 1 << 40, body)  # type: ignore[arg-type]
    corpus = Corpus([builder.part()])
    budget = 8 * sys.getsizeof(bodies["/c0.md"])  # eight of c0-c9, not one long body
    monkeypatch.setattr(corpus_module, "RECENT_BODY_BYTES", budget)
    decoded: list[int] = []
    real = Part.body

    def counted(self: Part, seg: int) -> str:
        decoded.append(seg)
        return real(self, seg)

    def read(*paths: str) -> int:
        before = len(decoded)
        for path in paths:
            assert corpus.kept_body(path) == bodies[path]
        return len(decoded) - before

    monkeypatch.setattr(Part, "body", counted)
    assert read("/c0.md", "/c1.md") == 2
    assert not corpus._recent  # read once: not held
    assert read("/c0.md", "/c1.md") == 2  # read again: held from now on
    assert read("/c0.md", "/c1.md", "/c0.md") == 0
    assert list(corpus._recent) == ["/c0.md", "/c1.md"]
    fill = [f"/c{i}.md" for i in range(2, 8)]
    assert read(*fill, *fill) == 12
    assert list(corpus._recent) == ["/c0.md", "/c1.md", *fill]
    assert corpus._recent_size == budget
    assert read("/c8.md", "/c8.md") == 2  # over budget: c0 goes
    assert list(corpus._recent) == ["/c1.md", *fill, "/c8.md"]
    assert corpus._recent_size == budget
    assert read("/long.md", "/long.md", "/long.md") == 3
    assert "/long.md" not in corpus._recent
    monkeypatch.setattr(corpus_module, "_SEEN_PATHS", 3)
    corpus._seen.clear()
    assert read("/c9.md", "/c10.md", "/c11.md", "/c0.md", "/c9.md") == 5
    assert corpus._seen == {"/c9.md"}  # forgotten past three, then seen anew
    assert "/c9.md" not in corpus._recent
    assert corpus.kept_body("/absent.md") is None


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_text_is_found_in_either_unicode_spelling_of_the_pattern(form: str, tmp_path: Path) -> None:
    """CLI QA: a page written on macOS (decomposed Hangul, e + U+0301) matched no grep
    typed in the composed form, while search found it first."""
    import unicodedata

    def spelled(text: str) -> str:
        return unicodedata.normalize(form, text)

    bundle = _kept(
        tmp_path,
        {
            "a.md": spelled("---\ntype: note\ntitle: 권한 관리\n---\n권한 관리 가이드 본문\n"),
            "b.md": spelled("---\ntype: note\ntitle: Café\n---\nthe CAFÉ menu\n"),
        },
    )
    for typed in ("NFC", "NFD"):
        found = bundle.grep(unicodedata.normalize(typed, "권한"))
        assert [(m.path, m.field, m.line, m.column) for m in found] == [
            ("/a.md", "title", None, 1),
            ("/a.md", "body", 5, 1),
        ], (form, typed)
        cafe = bundle.grep(unicodedata.normalize(typed, "café"), ignore_case=True)
        assert [(m.path, m.field) for m in cafe] == [("/b.md", "title"), ("/b.md", "body")]
        assert (
            found.to_dict() == grep(eager(bundle), unicodedata.normalize(typed, "권한")).to_dict()
        )
