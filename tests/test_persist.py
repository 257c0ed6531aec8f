"""The opt-in state cache (okfx.bundle.persist): warm loads equal cold ones, any change or
doubt means a normal load, and only a private directory is ever read."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest

from conftest import MakeBundle
from okfx import Bundle, Limits
from okfx.bundle import persist as persist_module
from okfx.search.index import SearchIndex

FILES = {
    "index.md": (
        "---\nokf_version: '0.2'\n---\n# Shop\n\n## Tables\n"
        "- [Orders](tables/orders.md) - all orders\n"
    ),
    "log.md": "# Log\n\n## 2026-01-02\nAdded orders.\n",
    "tables/orders.md": (
        "---\ntype: table\ntitle: Orders\ntags: [sales]\n"
        "verified: {by: human:ana, at: 2026-01-01}\n"
        "---\nOne row per order; see [revenue](/metrics/revenue.md) and [gone](/nope.md).\n"
    ),
    "metrics/revenue.md": (
        "---\ntype: metric\ntitle: Revenue\nstatus: draft\n---\n"
        "Sum of [orders](../tables/orders.md).\n"
    ),
    "bad.md": "no frontmatter here\n",
}


def aged(root: Path, seconds: float = 60.0) -> Path:
    """Set every file's mtime in the past, as for a bundle that is not being edited."""
    past = time.time() - seconds
    for path in root.rglob("*"):
        os.utime(path, (past, past), follow_symlinks=False)
    return root


def snapshot(bundle: Bundle) -> tuple:
    return (
        [(c.path, c.title, c.body, c.trust_tier, c.status, c.links) for c in bundle],
        list(bundle.warnings),
        bundle.okf_version,
        bundle.neighbors("/tables/orders.md"),
        bundle.index,
        sorted(bundle.files),
        [(h.path, h.score) for h in bundle.search("orders revenue")],
    )


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture(autouse=True)
def no_racy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # aged() moves mtimes back, but the ctime it leaves is "now": tests do not wait.
    monkeypatch.setattr(persist_module, "RACY_SECONDS", 0.0)


def forbid_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed or indexed although the state was cached")

    monkeypatch.setattr("okfx.bundle.parse.DocumentParser.concept", refuse)
    monkeypatch.setattr(
        "okfx.bundle.parse.DocumentParser.concepts", refuse
    )  # Bundle.load's batches
    monkeypatch.setattr(SearchIndex, "build", refuse)


def test_a_warm_load_equals_the_cold_one_without_parsing(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = aged(make_bundle(FILES))
    cold = Bundle.load(root, state_cache=cache_dir)
    expected = snapshot(cold)  # builds the search index, which is stored too
    assert sorted(p.name.split(".", 1)[1] for p in cache_dir.iterdir()) == [
        "bundle.pickle",
        "search.pickle",
    ]
    forbid_parsing(monkeypatch)
    warm = Bundle.load(root, state_cache=cache_dir)
    assert snapshot(warm) == expected
    assert warm.search("orders").hits[0].path == "/tables/orders.md"


def test_no_state_cache_by_default(
    make_bundle: MakeBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = aged(make_bundle(FILES))
    Bundle.load(root).search("orders")
    assert not (tmp_path / "xdg").exists()


@pytest.mark.parametrize(
    "change",
    ["edit", "add", "remove", "rename", "new_dir"],
)
def test_any_change_to_the_files_means_a_fresh_load(
    make_bundle: MakeBundle, cache_dir: Path, change: str
) -> None:
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=cache_dir).search("orders")
    target = root / "metrics" / "revenue.md"
    if change == "edit":
        target.write_text(target.read_text().replace("Revenue", "Income"))
    elif change == "add":
        (root / "metrics" / "margin.md").write_text("---\ntype: metric\n---\nMargin.\n")
    elif change == "remove":
        target.unlink()
    elif change == "rename":
        target.rename(root / "metrics" / "income.md")
    else:
        (root / "empty").mkdir()
    aged(root)
    fresh = Bundle.load(root)
    warm = Bundle.load(root, state_cache=cache_dir)
    assert snapshot(warm) == snapshot(fresh)
    assert sorted(warm.directories) == sorted(fresh.directories)


def test_same_size_same_second_edits_are_still_seen(
    make_bundle: MakeBundle, cache_dir: Path
) -> None:
    # An edit that keeps the size and (after utime) even the mtime still changes the
    # ctime, which is part of the fingerprint.
    root = aged(make_bundle(FILES))
    target = root / "metrics" / "revenue.md"
    before = os.stat(target)
    Bundle.load(root, state_cache=cache_dir)
    target.write_text(target.read_text().replace("Revenue", "Rxvenue"))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    time.sleep(0.01)
    warm = Bundle.load(root, state_cache=cache_dir)
    assert warm.get("/metrics/revenue.md").title == "Rxvenue"


def test_files_edited_just_now_are_not_stored(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_bundle(FILES)  # every mtime is "now": the next edit might not change it
    monkeypatch.setattr(persist_module, "RACY_SECONDS", 3600.0)
    Bundle.load(root, state_cache=cache_dir).search("orders")
    assert not list(cache_dir.glob("*.pickle"))
    monkeypatch.setattr(persist_module, "RACY_SECONDS", 0.0)
    Bundle.load(root, state_cache=cache_dir)
    assert len(list(cache_dir.glob("*.bundle.pickle"))) == 1


def test_other_limits_or_versions_do_not_share_a_state(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=cache_dir)
    strict = Bundle.load(root, state_cache=cache_dir, limits=Limits(max_links_per_concept=1))
    assert len(strict.get("/tables/orders.md").links) == 1
    assert len(list(cache_dir.glob("*.bundle.pickle"))) == 2
    monkeypatch.setattr(persist_module, "FORMAT", persist_module.FORMAT + 1)
    forbid_parsing(monkeypatch)
    with pytest.raises(AssertionError, match="parsed"):
        Bundle.load(root, state_cache=cache_dir)


@pytest.mark.parametrize("damage", [b"", b"okfx-state 1 abc\n", b"garbage" * 100, "truncate"])
def test_a_damaged_state_file_is_ignored_and_replaced(
    make_bundle: MakeBundle, cache_dir: Path, damage: bytes | str
) -> None:
    root = aged(make_bundle(FILES))
    expected = snapshot(Bundle.load(root, state_cache=cache_dir))
    for path in cache_dir.glob("*.pickle"):
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if damage == "truncate" else damage)
    assert snapshot(Bundle.load(root, state_cache=cache_dir)) == expected
    # ... and written again, so the next load is warm
    assert all(p.stat().st_size > 1000 for p in cache_dir.glob("*.pickle"))


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_state_anyone_else_could_write_is_never_read(
    make_bundle: MakeBundle,
    cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=cache_dir).search("orders")
    assert (cache_dir.stat().st_mode & 0o777) == 0o700
    forbid_parsing(monkeypatch)
    os.chmod(cache_dir, 0o777)
    with caplog.at_level(logging.WARNING, logger="okfx"), pytest.raises(AssertionError):
        Bundle.load(root, state_cache=cache_dir)
    assert "writable by no one else" in caplog.text
    os.chmod(cache_dir, 0o700)
    for path in cache_dir.glob("*.bundle.pickle"):
        os.chmod(path, 0o666)
    with pytest.raises(AssertionError, match="parsed"):
        Bundle.load(root, state_cache=cache_dir)


def test_a_symlinked_state_file_is_refused(
    make_bundle: MakeBundle, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=cache_dir)
    (state,) = cache_dir.glob("*.bundle.pickle")
    elsewhere = tmp_path / "elsewhere.pickle"
    state.rename(elsewhere)
    state.symlink_to(elsewhere)
    forbid_parsing(monkeypatch)
    with pytest.raises(AssertionError, match="parsed"):
        Bundle.load(root, state_cache=cache_dir)


def test_an_unusable_cache_directory_never_fails_a_load(
    make_bundle: MakeBundle, tmp_path: Path
) -> None:
    root = aged(make_bundle(FILES))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    bundle = Bundle.load(root, state_cache=blocker / "state")
    assert len(bundle) == 2
    assert bundle.search("orders").hits


def test_walk_warnings_survive_a_warm_load(make_bundle: MakeBundle, cache_dir: Path) -> None:
    root = make_bundle(FILES)
    (root / "escape.md").symlink_to("/etc/hostname")
    aged(root)
    cold = Bundle.load(root, state_cache=cache_dir)
    warm = Bundle.load(root, state_cache=cache_dir)
    assert any(w.code == "unsafe_path" for w in warm.warnings)
    assert warm.warnings == cold.warnings


def test_state_cache_true_uses_the_xdg_cache_home(
    make_bundle: MakeBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=True)
    assert list((tmp_path / "xdg" / "okfx" / "state").glob("*.bundle.pickle"))


def test_the_cli_uses_the_state_cache_option_and_variable(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    root = aged(make_bundle(FILES))
    args = ["search", str(root), "orders", "--json"]
    first = CliRunner().invoke(cli, ["--state-cache", str(cache_dir), *args])
    assert first.exit_code == 0, first.output
    assert list(cache_dir.glob("*.search.pickle"))
    forbid_parsing(monkeypatch)
    monkeypatch.setenv("OKFX_STATE_CACHE", str(cache_dir))
    second = CliRunner().invoke(cli, args)
    assert second.exit_code == 0, second.output
    assert second.output == first.output


def _slot_values(obj: object) -> dict[str, object]:
    return {name: getattr(obj, name) for name in type(obj).__slots__}  # type: ignore[attr-defined]


def test_model_objects_pickle_to_equal_objects_of_the_same_types(samples: Path) -> None:
    """The compact pickling of Concept, Link and the frozen dataclasses (okfx.model)
    gives back every field, with the same types, for every sample concept."""
    import pickle

    bundle = Bundle.load(samples / "acme_retail")
    docs = [*bundle, *bundle._indexes.values(), *bundle._logs.values()]
    copies = pickle.loads(pickle.dumps(docs, protocol=pickle.HIGHEST_PROTOCOL))
    for doc, copy in zip(docs, copies, strict=True):
        assert type(copy) is type(doc)
        assert _slot_values(copy) == _slot_values(doc)
        assert [type(link) for link in copy.links] == [type(link) for link in doc.links]
    revenue = copies[[c.path for c in bundle].index("/computations/revenue-ytd.md")]
    assert revenue.computation == bundle.get("/computations/revenue-ytd.md").computation
    assert type(revenue.computation.parameters[0]).__name__ == "Parameter"
    assert any(c.sources for c in copies if hasattr(c, "sources"))
    with pytest.raises(AttributeError):
        revenue.title = "changed"  # still read-only


def test_a_stored_concept_of_another_shape_is_refused() -> None:
    from okfx.model import _concept_from

    with pytest.raises(ValueError, match="wrong number of fields"):
        _concept_from(("/a.md", "a"))


OTHER = {
    "guides/returns.md": (
        "---\ntype: guide\ntitle: Returns\ntags: [sales]\n---\n"
        "How refunds reduce revenue; orders come back within 30 days.\n"
    ),
    "guides/shipping.md": "---\ntype: guide\ntitle: Shipping\n---\nCarriers and orders.\n",
}


def _combined(roots: dict[str, Path], cache: Path | None) -> list[tuple[str, str, float]]:
    from okfx import KnowledgeManager

    manager = KnowledgeManager.from_paths(roots, state_cache=cache)
    return [(h.bundle, h.path, h.score) for h in manager.search("orders revenue refunds")]


def test_the_combined_index_of_several_bundles_is_stored_and_read_back(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = {"shop": aged(make_bundle(FILES)), "ops": aged(make_bundle(OTHER))}
    expected = _combined(roots, None)
    assert {bundle for bundle, _, _ in expected} == {"shop", "ops"}
    assert _combined(roots, cache_dir) == expected
    assert len(list(cache_dir.glob("*.search.pickle"))) == 1  # the combined index only
    with monkeypatch.context() as patch:
        forbid_parsing(patch)
        assert _combined(roots, cache_dir) == expected
    # Other names are another combination: built again, and stored beside the first.
    renamed = {"a-shop": roots["shop"], "ops": roots["ops"]}
    assert [(p, s) for _, p, s in _combined(renamed, cache_dir)] == [(p, s) for _, p, s in expected]
    assert len(list(cache_dir.glob("*.search.pickle"))) == 2


def test_a_changed_bundle_means_a_new_combined_index(
    make_bundle: MakeBundle, cache_dir: Path
) -> None:
    roots = {"shop": aged(make_bundle(FILES)), "ops": aged(make_bundle(OTHER))}
    before = _combined(roots, cache_dir)
    (roots["ops"] / "guides" / "shipping.md").write_text(
        "---\ntype: guide\ntitle: Shipping\n---\nCarriers, orders, revenue and refunds.\n"
    )
    aged(roots["ops"])
    after = _combined(roots, cache_dir)
    assert after == _combined(roots, None)
    assert after != before


def test_bundles_in_different_state_caches_share_no_combined_index(
    make_bundle: MakeBundle, tmp_path: Path
) -> None:
    from okfx import KnowledgeManager

    shop = Bundle.load(aged(make_bundle(FILES)), state_cache=tmp_path / "one")
    ops = Bundle.load(aged(make_bundle(OTHER)), "ops", state_cache=tmp_path / "two")
    KnowledgeManager([shop, ops]).search("orders")
    assert not list(tmp_path.glob("*/*.search.pickle"))


def test_prepare_search_reads_the_combined_index_back_before_any_search(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from okfx import KnowledgeManager

    roots = {"shop": aged(make_bundle(FILES)), "ops": aged(make_bundle(OTHER))}
    expected = _combined(roots, cache_dir)  # builds and stores it
    manager = KnowledgeManager.from_paths(roots, state_cache=cache_dir)
    with monkeypatch.context() as patch:
        forbid_parsing(patch)
        manager.prepare_search()
    # Prepared: the search itself builds nothing either.
    monkeypatch.setattr(SearchIndex, "build", None)
    hits = manager.search("orders revenue refunds")
    assert [(h.bundle, h.path, h.score) for h in hits] == expected


def test_temporary_files_left_by_a_killed_store_are_removed_when_old(
    make_bundle: MakeBundle, cache_dir: Path
) -> None:
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=cache_dir)
    (state,) = cache_dir.glob("*.bundle.pickle")
    key = state.name.split(".", 1)[0]
    old = cache_dir / f".{key}.bundle.dead1234"
    fresh = cache_dir / f".{key}.bundle.live5678"  # another process still writing
    other = cache_dir / f".{key}.search.dead9999"  # another kind: its own store cleans it
    for path in (old, fresh, other):
        path.write_bytes(b"partial")
    past = time.time() - persist_module.LEFTOVER_SECONDS - 60
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    state.unlink()  # the next load stores again
    Bundle.load(root, state_cache=cache_dir)
    assert not old.exists()
    assert fresh.exists() and other.exists()
    assert len(list(cache_dir.glob("*.bundle.pickle"))) == 1


def test_a_bundle_without_concepts_does_not_cost_the_combined_index_its_state(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = {
        "shop": aged(make_bundle(FILES)),
        "empty": aged(make_bundle({"index.md": "# Nothing yet\n"})),
        "ops": aged(make_bundle(OTHER)),
    }
    expected = _combined(roots, cache_dir)
    with monkeypatch.context() as patch:
        forbid_parsing(patch)
        assert _combined(roots, cache_dir) == expected
