"""Incremental reload (okfx.bundle.reload, Bundle.reload, KnowledgeManager.reload).

The property: after any sequence of edits, adds, removes, renames and folder changes,
``reload()`` gives what a fresh load gives (concepts with every field, links, backlinks,
reserved files, warnings in order, okf_version, files, folders and search results),
while parsing only the files that changed and the documents whose links they touch.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okfx import Bundle, KnowledgeManager
from okfx.bundle import state as state_module
from okfx.model import Concept
from okfx.search import live
from okfx.search.index import SearchIndex

FOLDERS = ["", "a", "a/b", "c"]
NAMES = ["x", "y", "z", "index", "log", "caf\u00e9"]
QUERIES = ["orders", "revenue daily", "x y", "alpha", "zeta orders"]
HREFS = [
    "x.md",
    "/a/y.md",
    "../c/z.md",
    "a/b",
    ".",
    "./",
    "../",
    "y",
    "/c/z.md#part",
    "b/x.md",
    "/nope.md",
    "data.csv",
    "%7A.md",
    "cafe\u0301.md",  # NFD: finds a file named in NFC
]
WIKILINKS = ["[[x]]", "[[y|why]]", "[[a/b/x]]", "[[z#part]]", "[[nope]]", "[[X]]", "[[Café]]"]
WORDS = ["orders", "revenue", "daily", "alpha", "zeta", "beta", "x", "y"]
IDS = ["k.one", "k.two", "k-three"]


def _path(folder: str, name: str) -> str:
    return f"{folder}/{name}.md" if folder else f"{name}.md"


@st.composite
def contents(draw: st.DrawFn, name: str) -> str:
    links = draw(st.lists(st.sampled_from(HREFS), max_size=4))
    words = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)))
    wikis = draw(st.lists(st.sampled_from(WIKILINKS), max_size=2))
    body = words + "\n" + "\n".join(f"See [{h}]({h})." for h in links) + " ".join(wikis) + "\n"
    if name == "index":
        entries = "".join(f"- [{h}]({h}) - {words}\n" for h in links)
        head = "---\nokf_version: '0.2'\n---\n" if draw(st.booleans()) else ""
        return f"{head}# Index\n\n## Part\n{entries}"
    if name == "log":
        return f"# Log\n\n## 2026-01-0{draw(st.integers(1, 9))}\n{body}\n## someday\nx\n"
    kind = draw(st.sampled_from(["concept", "concept", "concept", "broken", "no-type"]))
    if kind == "broken":
        return "no frontmatter at all\n" + body
    if kind == "no-type":
        return "---\ntitle: untyped\n---\n" + body
    status = draw(st.sampled_from(["stable", "draft", "deprecated", "weird"]))
    resource = draw(st.sampled_from(["", "resource: /a/x.md\n", "resource: ../data.csv\n"]))
    # Edges named by id (okfx.bundle.idlinks) depend on every other concept's id.
    declared = draw(st.sampled_from(["", *(f"id: {i}\n" for i in IDS)]))
    named = draw(st.lists(st.sampled_from(IDS), max_size=3))
    related = f"related: [{', '.join(named)}]\n" if named else ""
    return (
        f"---\ntype: {draw(st.sampled_from(['metric', 'table']))}\ntitle: {words}\n"
        f"status: {status}\n{resource}{declared}{related}"
        f"tags: [{draw(st.sampled_from(WORDS))}]\n---\n{body}"
    )


@st.composite
def operations(draw: st.DrawFn) -> tuple[str, ...]:
    kind = draw(st.sampled_from(["write", "write", "write", "remove", "rename", "mkdir", "rmdir"]))
    folder = draw(st.sampled_from(FOLDERS))
    name = draw(st.sampled_from(NAMES))
    if kind == "write":
        if draw(st.integers(0, 9)) == 0:
            return ("raw", f"{folder}/data.csv" if folder else "data.csv", "1,2\n")
        return ("write", _path(folder, name), draw(contents(name)))
    if kind == "rename":
        other = _path(draw(st.sampled_from(FOLDERS)), draw(st.sampled_from(NAMES)))
        return ("rename", _path(folder, name), other)
    if kind == "mkdir":
        return ("mkdir", (folder + "/" if folder else "") + draw(st.sampled_from(["d", "e"])))
    if kind == "rmdir":
        return ("rmdir", folder or "c")
    return ("remove", _path(folder, name))


class Tree:
    """A bundle folder whose every write gets a new mtime (so edits in one clock tick are
    still told apart, as they are on a real disk a moment later)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tick = 1_600_000_000_000_000_000

    def touch(self, path: Path) -> None:
        self.tick += 1_000_000_000
        os.utime(path, ns=(self.tick, self.tick))

    def apply(self, op: tuple[str, ...]) -> None:
        kind, target = op[0], self.root / op[1]
        if kind in ("write", "raw"):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(op[2], encoding="utf-8")
            self.touch(target)
        elif kind == "remove":
            if target.is_file():
                target.unlink()
        elif kind == "rename":
            dest = self.root / op[2]
            if target.is_file():
                dest.parent.mkdir(parents=True, exist_ok=True)
                target.rename(dest)
        elif kind == "mkdir":
            target.mkdir(parents=True, exist_ok=True)
        elif kind == "rmdir" and target.is_dir():
            shutil.rmtree(target)


def snapshot(bundle: Bundle, search: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "concepts": [[(f, getattr(c, f)) for f in Concept.__slots__] for c in bundle],
        "indexes": list(bundle.indexes.items()),
        "logs": list(bundle.logs.items()),
        "warnings": list(bundle.warnings),
        "backlinks": dict(bundle.backlink_map()),  # the lists in order; keys as a set
        "okf_version": bundle.okf_version,
        "files": sorted(bundle.files),
        "dirs": sorted(bundle.directories),
    }
    if search:
        out["search"] = [results(bundle.search_index(), q) for q in QUERIES]
    return out


def results(index: Any, query: str) -> Any:
    found = index.search(query, limit=5, include_deprecated=True, trust_tier=None)
    hidden = index.search(query, limit=3, type="metric")
    return [
        [(h.path, h.score, h.matched, h.snippet, h.status) for h in found],
        [(h.path, h.score) for h in hidden],
        dict(hidden.hidden),
    ]


@pytest.fixture(autouse=True)
def exact_stats(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tree.touch gives every write its own mtime: nothing needs the racy rule here.
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)


def _seed(tree: Tree) -> None:
    for op in [
        ("write", "index.md", "---\nokf_version: '0.2'\n---\n# I\n\n- [x](x.md) - orders\n"),
        ("write", "x.md", "---\ntype: metric\ntitle: orders\n---\nSee [y](/a/y.md).\n"),
        ("write", "a/y.md", "---\ntype: table\ntitle: daily revenue\n---\n[z](../c/z.md)\n"),
        ("write", "c/z.md", "---\ntype: table\ntitle: zeta\n---\nalpha [up](../x.md) [b](a/b)\n"),
        ("raw", "data.csv", "1\n"),
    ]:
        tree.apply(op)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.lists(operations(), min_size=1, max_size=3), min_size=1, max_size=5),
    st.booleans(),
)
def test_reload_equals_a_fresh_load_after_any_edits(
    tmp_path_factory: pytest.TempPathFactory, steps: list[list[tuple[str, ...]]], wikis: bool
) -> None:
    tree = Tree(tmp_path_factory.mktemp("b"))
    _seed(tree)
    bundle = Bundle.load(tree.root, state_cache=False, wikilinks=wikis)
    for i, step in enumerate(steps):
        # Sometimes the old bundle has its backlinks and index built (they are then
        # carried over), sometimes not (built afresh when asked).
        if i % 2:
            bundle.backlink_map()
            bundle.search_index()
        for op in step:
            tree.apply(op)
        reloaded = bundle.reload()
        fresh = Bundle.load(tree.root, state_cache=False, wikilinks=wikis)
        assert snapshot(reloaded) == snapshot(fresh)
        assert reloaded.problem_counts() == fresh.problem_counts()
        bundle = reloaded


@pytest.mark.parametrize(
    ("body", "files", "edit", "wikis"),
    [
        # [[foo]] matched two files (no link): once one goes, it resolves to the other.
        ("[[foo]]", {"a/foo.md": "", "b/foo.md": ""}, ("remove", "b/foo.md"), True),
        # [[Foo]] finds foo.md whatever its case, when it comes and when it goes.
        ("[[Foo]]", {}, ("write", "topics/foo.md", "---\ntype: t\n---\n"), True),
        ("[[Foo]]", {"topics/foo.md": ""}, ("remove", "topics/foo.md"), True),
        # A link spelled in NFD finds a file named in NFC.
        ("[the cafe](cafe\u0301.md)", {}, ("write", "caf\u00e9.md", "---\ntype: t\n---\n"), False),
    ],
)
def test_a_link_whose_target_comes_or_goes_by_another_spelling_is_resolved_again(
    tmp_path: Path, body: str, files: dict[str, str], edit: tuple[str, ...], wikis: bool
) -> None:
    tree = Tree(tmp_path)
    for path, text in {"note.md": "---\ntype: t\n---\n" + body, **files}.items():
        tree.apply(("write", path, text or "---\ntype: t\n---\n"))
    bundle = Bundle.load(tree.root, state_cache=False, wikilinks=wikis)
    before = [(link.target, link.exists) for link in bundle.concept("/note.md").links]
    tree.apply(edit)
    reloaded = bundle.reload()
    fresh = Bundle.load(tree.root, state_cache=False, wikilinks=wikis)
    after = [(link.target, link.exists) for link in fresh.concept("/note.md").links]
    assert after != before  # the edit changes where the note's links go
    assert snapshot(reloaded, search=False) == snapshot(fresh, search=False)


def test_reload_parses_only_what_changed_and_keeps_the_old_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from okfx.bundle.parse import DocumentParser

    tree = Tree(tmp_path / "b")
    _seed(tree)
    old = Bundle.load(tree.root, state_cache=False)
    before = snapshot(old)
    assert old.reload() is old  # nothing changed
    parsed: list[str] = []
    real = DocumentParser.concepts

    def spy(self: DocumentParser, documents: list[tuple[str, str]]) -> list[Any]:
        parsed.extend(path for path, _ in documents)
        return real(self, documents)

    monkeypatch.setattr(DocumentParser, "concepts", spy)
    tree.apply(("write", "a/y.md", "---\ntype: table\ntitle: weekly revenue\n---\nnone\n"))
    new = old.reload()
    assert parsed == ["/a/y.md"]
    assert new.changes is not None and new.changes.changed == ["/a/y.md"]
    assert new.concept("/a/y.md").title == "weekly revenue"
    # The old bundle is unchanged, but for the texts read from files (okfx.bundle.stored).
    assert _slim(snapshot(old, search=False)) == _slim(before)
    # A file added where a link pointed: the linking concept is parsed again too.
    parsed.clear()
    tree.apply(("write", "c/q.md", "---\ntype: metric\n---\n[x](/x.md)\n"))
    tree.apply(("write", "x.md", "---\ntype: metric\ntitle: orders\n---\n[q](/c/q.md)\n"))
    newer = new.reload()
    assert sorted(parsed) == ["/c/q.md", "/x.md"]
    assert newer.neighbors("/c/q.md").backlinks[0].source == "/x.md"


def _slim(snap: dict[str, Any]) -> dict[str, Any]:
    lazy = ("body", "frontmatter")
    concepts = [[(f, v) for f, v in c if f not in lazy] for c in snap["concepts"]]
    return {**{k: v for k, v in snap.items() if k != "search"}, "concepts": concepts}


def test_a_load_cut_short_by_a_limit_is_reloaded_whole(tmp_path: Path) -> None:
    from okfx import Limits

    tree = Tree(tmp_path / "b")
    _seed(tree)
    limits = Limits(max_files=4)
    bundle = Bundle.load(tree.root, state_cache=False, limits=limits)
    assert any(w.code == "too_many_files" for w in bundle.warnings)
    tree.apply(("write", "v.md", "---\ntype: t\n---\nplain\n"))
    reloaded = bundle.reload()
    assert reloaded.changes is None  # loaded whole: the walk left files out
    assert snapshot(reloaded) == snapshot(Bundle.load(tree.root, state_cache=False, limits=limits))


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(operations(), min_size=1, max_size=3), min_size=1, max_size=4))
def test_a_load_past_max_warnings_reloads_only_what_changed(
    tmp_path_factory: pytest.TempPathFactory, steps: list[list[tuple[str, ...]]]
) -> None:
    """Past max_warnings each file's unlisted problems are counted by file, so a reload
    stays incremental, and still equals a fresh load, listed messages included."""
    from okfx import Limits

    limits = Limits(max_warnings=2)
    tree = Tree(tmp_path_factory.mktemp("b"))
    _seed(tree)
    tree.apply(("write", "w.md", "---\ntype: t\n---\n[a](/n1.md) [b](/n2.md) [c](/n3.md)\n"))
    bundle = Bundle.load(tree.root, state_cache=False, limits=limits)
    assert bundle.warnings[-1].code == "too_many_warnings"
    for step in steps:
        for op in step:
            tree.apply(op)
        reloaded = bundle.reload()
        fresh = Bundle.load(tree.root, state_cache=False, limits=limits)
        scope = (reloaded.nested_bundles, reloaded.excluded)
        if reloaded is not bundle and scope == (bundle.nested_bundles, bundle.excluded):
            assert reloaded.changes is not None  # not loaded again whole
        assert snapshot(reloaded) == snapshot(fresh)
        assert reloaded.problem_counts() == fresh.problem_counts()
        bundle = reloaded


def test_a_file_whose_problems_were_only_counted_is_listed_when_room_opens(
    tmp_path: Path,
) -> None:
    from okfx import Limits

    limits = Limits(max_warnings=2)
    tree = Tree(tmp_path / "b")
    _seed(tree)
    tree.apply(("write", "a/a.md", "---\ntype: t\n---\n[a](/n1.md) [b](/n2.md)\n"))
    tree.apply(("write", "w.md", "---\ntype: t\n---\n[c](/n3.md) [d](/n4.md)\n"))
    bundle = Bundle.load(tree.root, state_cache=False, limits=limits)
    assert "/w.md" not in {w.path for w in bundle.warnings}  # two listed before it
    tree.apply(("write", "a/a.md", "---\ntype: t\n---\nno links now\n"))
    reloaded = bundle.reload()
    assert reloaded.changes is not None and reloaded.changes.changed == ["/a/a.md"]
    listed = [w.message for w in reloaded.warnings if w.path == "/w.md"]
    assert listed and listed[0].startswith("body link to /n3.md")
    assert snapshot(reloaded) == snapshot(Bundle.load(tree.root, state_cache=False, limits=limits))


def _delta_policy(monkeypatch: pytest.MonkeyPatch, merge_fraction: float) -> None:
    """Keep small indexes as base + delta (they are rebuilt at once by default)."""
    real = live.updated

    def policy(index: Any, drop: Any, add: Any, **_: Any) -> Any:
        return real(index, drop, add, merge_fraction=merge_fraction, small=0)

    monkeypatch.setattr(live, "updated", policy)


def _bundle(tmp_path: Path, n: int) -> Tree:
    tree = Tree(tmp_path / "big")
    for i in range(n):
        words = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(i % 5 + 1))
        status = "deprecated" if i % 11 == 0 else "stable"
        tree.apply(
            (
                "write",
                f"{FOLDERS[i % 4]}/n{i}.md".lstrip("/"),
                f"---\ntype: {'metric' if i % 3 else 'table'}\ntitle: {words}\n"
                f"status: {status}\n---\n{words} body {i}\n",
            )
        )
    return tree


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.integers(0, 59), st.sampled_from(["edit", "remove", "add"])),
        min_size=1,
        max_size=6,
    )
)
def test_before_a_merge_search_ranks_as_a_fresh_build_with_the_base_statistics(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    edits: list[tuple[int, str]],
) -> None:
    """The stated tolerance (okfx.search.live): exactly a fresh build scored with the
    base's statistics: same hits, same scores to the bit, same hidden counts."""
    _delta_policy(monkeypatch, merge_fraction=1.0)
    tree = _bundle(tmp_path_factory.mktemp("t"), 60)
    bundle = Bundle.load(tree.root, state_cache=False)
    base = bundle.search_index()
    assert isinstance(base, SearchIndex)
    for i, what in edits:
        path = f"{FOLDERS[i % 4]}/n{i}.md".lstrip("/")
        if what == "remove":
            tree.apply(("remove", path))
        else:
            words = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(3))
            name = path if what == "edit" else path.replace(".md", "-new.md")
            tree.apply(("write", name, f"---\ntype: metric\ntitle: {words}\n---\nzeta {words}\n"))
        bundle = bundle.reload()
        index = bundle.search_index()
        assert isinstance(index, live.LiveIndex)
        reference = SearchIndex.build(
            ((bundle.name, c) for c in bundle), stats=base.postings.stats()
        )
        for query in QUERIES:
            assert results(index, query) == results(reference, query), query


def test_after_a_merge_search_ranks_exactly_as_a_fresh_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _delta_policy(monkeypatch, merge_fraction=0.05)
    tree = _bundle(tmp_path, 60)
    bundle = Bundle.load(tree.root, state_cache=False)
    bundle.search_index()
    tree.apply(("write", "n0.md", "---\ntype: metric\ntitle: zeta\n---\nzeta\n"))
    bundle = bundle.reload()
    assert isinstance(bundle.search_index(), live.LiveIndex)  # 2 of 60: under 5%
    for i in (1, 2, 3, 5):
        path = f"{FOLDERS[i % 4]}/n{i}.md".lstrip("/")
        tree.apply(("write", path, "---\ntype: table\ntitle: alpha orders\n---\nzeta\n"))
    bundle = bundle.reload()
    merged = bundle.search_index()
    assert isinstance(merged, SearchIndex)  # past 5%: merged
    fresh = Bundle.load(tree.root, state_cache=False)
    for query in QUERIES:
        assert results(merged, query) == results(fresh.search_index(), query)


def test_manager_reload_swaps_bundles_at_once_and_updates_the_combined_index(
    tmp_path: Path,
) -> None:
    one, two = Tree(tmp_path / "one"), Tree(tmp_path / "two")
    _seed(one)
    _seed(two)
    manager = KnowledgeManager.from_paths({"one": one.root, "two": two.root}, state_cache=False)
    manager.search("orders")  # the combined index exists
    held = manager.bundle("one")
    assert manager.reload() == {}
    two.apply(("write", "c/new.md", "---\ntype: metric\ntitle: brand new orders\n---\nx\n"))
    one.apply(("remove", "x.md"))
    changes = manager.reload()
    assert sorted(changes) == ["one", "two"]
    assert changes["two"].added == ["/c/new.md"] and changes["one"].removed == ["/x.md"]
    assert manager.bundle("one") is not held and "/x.md" in held  # the old one is intact
    fresh = KnowledgeManager.from_paths({"one": one.root, "two": two.root}, state_cache=False)
    for query in QUERIES:
        got = manager.search(query, include_deprecated=True)
        want = fresh.search(query, include_deprecated=True)
        assert [(h.bundle, h.path, h.score) for h in got] == [
            (h.bundle, h.path, h.score) for h in want
        ]


def test_readers_during_reloads_see_one_bundle_or_the_other(tmp_path: Path) -> None:
    tree = Tree(tmp_path / "b")
    _seed(tree)
    manager = KnowledgeManager.from_paths({"b": tree.root}, state_cache=False)
    stop = threading.Event()
    seen: list[tuple[int, bool]] = []

    def read() -> None:
        while not stop.is_set():
            bundle = manager.bundle("b")
            count = len(bundle)
            # One bundle object throughout: its count and its files agree.
            seen.append((count, ("/c/extra.md" in bundle) == (count == 4)))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(20):
            if i % 2:
                tree.apply(("remove", "c/extra.md"))
            else:
                tree.apply(("write", "c/extra.md", "---\ntype: metric\n---\nx\n"))
            manager.reload()
    finally:
        stop.set()
        reader.join()
    assert seen and all(ok for _, ok in seen)
    assert {count for count, _ in seen} <= {3, 4}


@pytest.mark.parametrize(
    "change",
    [
        ("write", "c/index.md", "---\nokf_version: '0.2'\n---\n# C, a bundle of its own\n"),
        ("write", "index.md", "---\nokf_version: '0.2'\nexclude: [c/*.md]\n---\n# I\n"),
    ],
    ids=["nested bundle", "exclusion"],
)
def test_what_belongs_to_the_bundle_changing_reloads_it_whole(
    tmp_path: Path, change: tuple[str, ...]
) -> None:
    tree = Tree(tmp_path / "b")
    _seed(tree)
    old = Bundle.load(tree.root, state_cache=False)
    old.search_index()
    tree.apply(change)
    new = old.reload()
    fresh = Bundle.load(tree.root, state_cache=False)
    assert (new.nested_bundles, new.excluded) == (fresh.nested_bundles, fresh.excluded)
    assert (new.nested_bundles, new.excluded) != (old.nested_bundles, old.excluded)
    assert "/c/z.md" not in new
    assert snapshot(new) == snapshot(fresh)


def test_a_bundle_read_whole_again_says_how_its_concepts_changed(tmp_path: Path) -> None:
    """Live edit QA: an .okfignore that left 3 concepts out reloaded as "0 changed, 0
    added, 0 removed", which said nothing of the 3."""
    root = tmp_path / "kb"
    (root / "drafts").mkdir(parents=True)
    for name in ("a", "drafts/b", "drafts/c"):
        (root / f"{name}.md").write_text(f"---\ntype: Note\ntitle: {name}\n---\n")
    manager = KnowledgeManager.from_paths([root])
    (root / ".okfignore").write_text("drafts/\n")
    (changes,) = manager.reload().values()
    assert changes.summary() == "read whole again: 1 concept, 3 before"
    assert len(manager.bundle("kb")) == 1
