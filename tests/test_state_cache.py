"""The state cache (okfx.statecache): on by default, warm loads equal cold ones, a change
is parsed alone, any doubt means a normal load, and only a private folder is ever read."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import MakeBundle, concept
from okfx import Bundle, Limits
from okfx.bundle import state as state_module
from okfx.search.index import SearchIndex
from okfx.statecache import LEFTOVER_SECONDS, StateCache
from okfx.statefile import StateFile

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
    """Set the mtime of ``root`` (a file, or every file under a folder) in the past, as
    for a bundle that is not being edited."""
    past = time.time() - seconds
    for path in [root, *root.rglob("*")] if root.is_dir() else [root]:
        os.utime(path, (past, past), follow_symlinks=False)
    return root


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


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
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)


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
        "bundle.okfs",
        "lock",
        "search.okfs",
        "texts.okfs",
    ]
    forbid_parsing(monkeypatch)
    warm = Bundle.load(root, state_cache=cache_dir)
    assert snapshot(warm) == expected
    assert warm.search("orders").hits[0].path == "/tables/orders.md"


def test_the_state_cache_is_on_by_default_in_the_user_cache_folder(
    make_bundle: MakeBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OKFX_CACHE_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = aged(make_bundle(FILES))
    Bundle.load(root).search("orders")
    state = tmp_path / "xdg" / "okfx" / "state"
    assert sorted(p.name.split(".", 1)[1] for p in state.glob("*.okfs")) == [
        "bundle.okfs",
        "search.okfs",
        "texts.okfs",
    ]
    assert (state.stat().st_mode & 0o777) == 0o700
    assert not list(root.rglob("*.okfs"))  # never in the bundle


@pytest.mark.parametrize("how", ["argument", "variable", "variable-0"])
def test_the_state_cache_can_be_turned_off(
    make_bundle: MakeBundle,
    private_cache_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    root = aged(make_bundle(FILES))
    if how == "argument":
        Bundle.load(root, state_cache=False).search("orders")
    else:
        monkeypatch.setenv("OKFX_STATE_CACHE", "off" if how == "variable" else "0")
        Bundle.load(root).search("orders")
    assert not (private_cache_home / "state").exists()


def test_the_variable_can_name_another_folder(
    make_bundle: MakeBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OKFX_STATE_CACHE", str(tmp_path / "elsewhere"))
    Bundle.load(aged(make_bundle(FILES)))
    assert list((tmp_path / "elsewhere").glob("*.bundle.okfs"))


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the concepts parsed from now on."""
    from okfx.bundle.parse import DocumentParser

    parsed: list[str] = []
    real = DocumentParser.concepts

    def spy(self: DocumentParser, documents: list[tuple[str, str]]) -> list[object]:
        parsed.extend(path for path, _ in documents)
        return real(self, documents)  # type: ignore[return-value]

    monkeypatch.setattr(DocumentParser, "concepts", spy)
    return parsed


@pytest.mark.parametrize(
    "change",
    ["edit", "add", "remove", "rename", "new_dir"],
)
def test_a_change_to_the_files_is_parsed_alone_and_equals_a_fresh_load(
    make_bundle: MakeBundle, cache_dir: Path, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=cache_dir).search("orders")
    target = root / "metrics" / "revenue.md"
    if change == "edit":
        aged(write(target, target.read_text().replace("Revenue", "Income")))
    elif change == "add":
        aged(write(root / "metrics" / "margin.md", "---\ntype: metric\n---\nMargin.\n"))
    elif change == "remove":
        target.unlink()
    elif change == "rename":
        target.rename(root / "metrics" / "income.md")
    else:
        (root / "empty").mkdir()
    fresh = Bundle.load(root, state_cache=False)
    parsed = count_parses(monkeypatch)
    warm = Bundle.load(root, state_cache=cache_dir)
    assert snapshot(warm) == snapshot(fresh)
    assert sorted(warm.directories) == sorted(fresh.directories)
    # Only the changed file, and a concept linking to a path that appeared or went.
    expected = {
        "edit": ["/metrics/revenue.md"],
        "add": ["/metrics/margin.md"],
        "remove": ["/tables/orders.md"],
        "rename": ["/metrics/income.md", "/tables/orders.md"],
        "new_dir": [],
    }[change]
    assert sorted(parsed) == expected
    # ... and the state is stored updated: the next load parses nothing.
    parsed.clear()
    assert snapshot(Bundle.load(root, state_cache=cache_dir)) == snapshot(fresh)
    assert parsed == []


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


def test_files_edited_just_now_are_parsed_again_next_time(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = aged(make_bundle(FILES))
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.5)
    time.sleep(0.6)  # the other files' ctimes (set by aged) are now old enough
    write(root / "metrics" / "revenue.md", FILES["metrics/revenue.md"])  # "now"
    Bundle.load(root, state_cache=cache_dir).search("orders")
    # Its next edit might keep size and mtime: it is stored as changed.
    parsed = count_parses(monkeypatch)
    Bundle.load(root, state_cache=cache_dir)
    assert parsed == ["/metrics/revenue.md"]
    # A state where every file was just written would be of no use: not stored.
    monkeypatch.setattr(state_module, "RACY_SECONDS", 3600.0)
    other = cache_dir.parent / "other"
    Bundle.load(make_bundle(FILES), state_cache=other)
    assert not list(other.glob("*.okfs"))


def test_a_bundle_copied_just_before_a_long_first_load_is_stored_for_the_next(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Platform QA F6: every file of a bundle copied right before its first load was
    within the racy window, so no state was stored, and the next start parsed every file
    and built the index again (21 s against a 15 s cold start at 10k). A load that
    outlasts the window finds the files settled (the same stat, the bytes it read) and
    stores a state the next load uses whole."""
    from okfx.bundle import settle

    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.5)
    root = make_bundle(FILES)  # written now: every file racy at the scan
    real = time.time_ns
    monkeypatch.setattr(settle, "time", type("Later", (), {"time_ns": lambda: real() + 10**9}))
    cold = Bundle.load(root, state_cache=cache_dir)
    assert not cold.unsettled  # settled once the load was over
    expected = snapshot(cold)
    forbid_parsing(monkeypatch)
    assert snapshot(Bundle.load(root, state_cache=cache_dir)) == expected


def test_other_limits_or_versions_do_not_share_a_state(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=cache_dir)
    strict = Bundle.load(root, state_cache=cache_dir, limits=Limits(max_links_per_concept=1))
    assert len(strict.get("/tables/orders.md").links) == 1
    assert len(list(cache_dir.glob("*.bundle.okfs"))) == 2
    monkeypatch.setattr(state_module, "BUNDLE_FORMAT", state_module.BUNDLE_FORMAT + 1)
    forbid_parsing(monkeypatch)
    with pytest.raises(AssertionError, match="parsed"):
        Bundle.load(root, state_cache=cache_dir)


@pytest.mark.parametrize(
    "damage", [b"", b"OKFXSTAT\x01\x00", b"garbage" * 100, b"\x80\x05\x95pickle", "truncate"]
)
def test_a_damaged_state_file_is_ignored_and_replaced(
    make_bundle: MakeBundle, cache_dir: Path, damage: bytes | str
) -> None:
    root = aged(make_bundle(FILES))
    expected = snapshot(Bundle.load(root, state_cache=cache_dir))
    for path in cache_dir.glob("*.okfs"):
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if damage == "truncate" else damage)
    assert snapshot(Bundle.load(root, state_cache=cache_dir)) == expected
    # ... and written again, so the next load is warm
    for path in cache_dir.glob("*.okfs"):
        assert StateFile(path.read_bytes()).names, path.name  # whole and readable again


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
    assert "writable by other users" in caplog.text
    os.chmod(cache_dir, 0o700)
    for path in cache_dir.glob("*.bundle.okfs"):
        os.chmod(path, 0o666)
    with pytest.raises(AssertionError, match="parsed"):
        Bundle.load(root, state_cache=cache_dir)


def test_a_symlinked_state_file_is_refused(
    make_bundle: MakeBundle, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=cache_dir)
    (state,) = cache_dir.glob("*.bundle.okfs")
    elsewhere = tmp_path / "elsewhere.okfs"
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


def test_a_state_past_max_warnings_starts_warm_and_updates_one_file(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(max_warnings=1)  # FILES have three problems: two are only counted
    root = aged(make_bundle(FILES))
    cold = Bundle.load(root, state_cache=cache_dir, limits=limits)
    assert cold.warnings[-1].code == "too_many_warnings"
    parsed = count_parses(monkeypatch)
    warm = Bundle.load(root, state_cache=cache_dir, limits=limits)
    assert parsed == [] and snapshot(warm) == snapshot(cold)
    assert warm.problem_counts() == cold.problem_counts()
    aged(write(root / "bad.md", "---\ntype: note\n---\nfixed\n"))
    fresh = Bundle.load(root, state_cache=False, limits=limits)
    parsed.clear()
    updated = Bundle.load(root, state_cache=cache_dir, limits=limits)
    # Updated, not rebuilt: the file that changed, and the one whose problem is now listed.
    assert parsed == ["/bad.md", "/tables/orders.md"]
    assert snapshot(updated) == snapshot(fresh)
    assert updated.problem_counts() == fresh.problem_counts()


def test_state_cache_true_uses_the_xdg_cache_home(
    make_bundle: MakeBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OKFX_CACHE_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("OKFX_STATE_CACHE", "off")  # the argument wins over the variable
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=True)
    assert list((tmp_path / "xdg" / "okfx" / "state").glob("*.bundle.okfs"))


def test_the_cli_uses_the_state_cache_options_and_variable(
    make_bundle: MakeBundle,
    cache_dir: Path,
    private_cache_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    root = aged(make_bundle(FILES))
    args = ["search", str(root), "orders", "--json"]
    off = CliRunner().invoke(cli, ["--no-state-cache", *args])
    assert off.exit_code == 0, off.output
    assert not (private_cache_home / "state").exists()
    first = CliRunner().invoke(cli, ["--state-cache", str(cache_dir), *args])
    assert first.exit_code == 0, first.output
    assert list(cache_dir.glob("*.search.okfs"))
    assert first.output == off.output
    with monkeypatch.context() as patch:
        forbid_parsing(patch)
        patch.setenv("OKFX_STATE_CACHE", str(cache_dir))
        second = CliRunner().invoke(cli, args)
    assert second.exit_code == 0, second.output
    assert second.output == first.output
    default = CliRunner().invoke(cli, args)  # the default folder, filled now
    assert default.output == first.output
    assert list((private_cache_home / "state").glob("*.search.okfs"))


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
    assert len(list(cache_dir.glob("*.search.okfs"))) == 1  # the combined index only
    with monkeypatch.context() as patch:
        forbid_parsing(patch)
        assert _combined(roots, cache_dir) == expected
    # Other names are another combination: built again, and stored beside the first.
    renamed = {"a-shop": roots["shop"], "ops": roots["ops"]}
    assert [(p, s) for _, p, s in _combined(renamed, cache_dir)] == [(p, s) for _, p, s in expected]
    assert len(list(cache_dir.glob("*.search.okfs"))) == 2


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
    assert not list(tmp_path.glob("*/*.search.okfs"))


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
    (state,) = cache_dir.glob("*.bundle.okfs")
    key = state.name.split(".", 1)[0]
    old = cache_dir / f".{key}.bundle.dead1234"
    fresh = cache_dir / f".{key}.bundle.live5678"  # another process still writing
    other = cache_dir / f".{'0' * 40}.search.dead9999"  # another key's: old is old
    for path in (old, fresh, other):
        path.write_bytes(b"partial")
    past = time.time() - LEFTOVER_SECONDS - 60
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    state.unlink()  # the next load stores again
    Bundle.load(root, state_cache=cache_dir)
    assert not old.exists() and not other.exists()
    assert fresh.exists()
    assert len(list(cache_dir.glob("*.bundle.okfs"))) == 1


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


RACER = """
import json, sys
from okfx import Bundle
from okfx.bundle import bundle as module
from okfx.bundle import state
state.RACY_SECONDS = 0.0
calls = []
real = module.Bundle._parse_all
def spy(self, *args, **kwargs):
    calls.append(1)
    return real(self, *args, **kwargs)
module.Bundle._parse_all = spy
sys.stdin.readline()  # both start loading at once
loaded = Bundle.load(sys.argv[1], state_cache=sys.argv[2])
print(json.dumps({"parsed": len(calls), "concepts": len(loaded), "warnings": len(loaded.warnings)}))
"""


def test_two_processes_starting_at_once_build_one_correct_state(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import subprocess
    import sys

    files = dict(FILES)
    for i in range(400):
        files[f"many/c{i}.md"] = (
            f"---\ntype: note\ntitle: Note {i}\n---\nAbout [orders](/tables/orders.md) {i}.\n"
        )
    root = aged(make_bundle(files))
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(root), str(cache_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for racer in racers:
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.flush()
    results = [json.loads(racer.communicate(timeout=120)[0]) for racer in racers]
    assert all(racer.returncode == 0 for racer in racers)
    # The lock: one parsed and stored, the other waited and read what it stored.
    assert sorted(r["parsed"] for r in results) == [0, 1]
    assert results[0]["concepts"] == results[1]["concepts"] == 402
    assert len(list(cache_dir.glob("*.bundle.okfs"))) == 1
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".")]  # no leftovers
    fresh = Bundle.load(root, state_cache=False)
    parsed = count_parses(monkeypatch)
    assert snapshot(Bundle.load(root, state_cache=cache_dir)) == snapshot(fresh)
    assert parsed == []


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to chown")
def test_a_state_cache_behind_another_users_symlink_is_never_read_or_written(
    make_bundle: MakeBundle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 16 item 7: ownership of the file alone is not enough; every folder and
    symlink on the path counts (okfx.cachedir.private_dir)."""
    os.chmod(tmp_path, 0o700)
    root = aged(make_bundle(FILES))
    real = tmp_path / "real"
    Bundle.load(root, state_cache=real / "state")  # a good state, written by us
    link = tmp_path / "theirs"
    link.symlink_to(real)
    os.lchown(link, 65534, 65534)  # the symlink on the path belongs to another user
    forbid_parsing(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="okfx"), pytest.raises(AssertionError):
        Bundle.load(root, state_cache=link / "state")
    assert "owned by another user" in caplog.text


def test_the_search_index_after_a_change_is_the_stored_one_brought_up_to_date(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = aged(make_bundle(FILES))
    Bundle.load(root, state_cache=cache_dir).search("orders")
    target = root / "metrics" / "revenue.md"
    aged(write(target, target.read_text().replace("Sum of", "Total refunds of")))
    expected = [(h.path, h.score) for h in Bundle.load(root, state_cache=False).search("refunds")]
    calls: list[int] = []
    monkeypatch.setattr(SearchIndex, "build", _counting(SearchIndex.build, calls))
    warm = Bundle.load(root, state_cache=cache_dir)
    assert [(h.path, h.score) for h in warm.search("refunds")] == expected
    assert calls == [1]  # a small bundle is rebuilt from the stored state's concepts


def test_a_stored_index_is_brought_up_to_date_past_a_deleted_file(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Platform QA: a file deleted between two processes made the next one build the
    whole index again (10.7 s against 0.2 s at 10k): the stored index still held it."""
    from okfx.search import live

    monkeypatch.setattr(live, "SMALL", 0)  # bring even this small bundle's index up to date
    more = {f"notes/n{i}.md": concept(title=f"Note {i}", body="orders\n") for i in range(20)}
    root = aged(make_bundle({**FILES, **more}))
    Bundle.load(root, state_cache=cache_dir).search("orders")
    (root / "metrics" / "revenue.md").unlink()
    expected = {h.path for h in Bundle.load(root, state_cache=False).search("orders", limit=50)}
    warm = Bundle.load(root, state_cache=cache_dir)
    # the stored one, updated (its scores keep the stored statistics until it is merged)
    assert isinstance(warm.search_index(), live.LiveIndex)
    assert {h.path for h in warm.search("orders", limit=50)} == expected
    assert "/metrics/revenue.md" not in {h.path for h in warm.search("revenue sum")}


def _counting(func: object, calls: list[int]) -> object:
    def count(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return func(*args, **kwargs)  # type: ignore[operator]

    return count


def test_okfx_cache_path_and_clear(
    make_bundle: MakeBundle, private_cache_home: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    root = aged(make_bundle(FILES))
    Bundle.load(root).search("orders")
    state = private_cache_home / "state"
    shown = CliRunner().invoke(cli, ["cache", "path"])
    assert shown.exit_code == 0 and shown.stdout.strip() == str(state)
    assert "4 files" in shown.stderr  # bundle, texts, search, lock
    assert "kept within 5 GB (set OKFX_STATE_CACHE_MAX" in shown.stderr
    cleared = CliRunner().invoke(cli, ["cache", "clear"])
    assert cleared.exit_code == 0 and cleared.stdout.startswith("removed 4 files")
    assert not list(state.iterdir())
    other = CliRunner().invoke(cli, ["--state-cache", str(tmp_path / "x"), "cache", "path"])
    assert other.stdout.strip() == str(tmp_path / "x")
    assert "is off" not in other.stderr
    # off: the folder it would use, and a line that says it is off (docs QA)
    off = CliRunner().invoke(cli, ["--no-state-cache", "cache", "path"])
    assert off.stdout.strip() == str(state)
    assert "okfx: the state cache is off (--no-state-cache" in off.stderr


def test_a_reload_stores_its_state_in_the_background_for_the_next_start(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from okfx import statecache

    monkeypatch.setattr(statecache, "STORE_DELAY", 0.0)
    root = aged(make_bundle(FILES))
    bundle = Bundle.load(root, state_cache=cache_dir)
    bundle.search("orders")
    aged(write(root / "metrics" / "margin.md", "---\ntype: metric\ntitle: Margin\n---\nm\n"))
    reloaded = bundle.reload()
    assert statecache.wait_for_stores(timeout=60)
    parsed = count_parses(monkeypatch)
    warm = Bundle.load(root, state_cache=cache_dir)
    assert parsed == []  # the reloaded state was stored: nothing is parsed again
    assert snapshot(warm) == snapshot(reloaded) == snapshot(Bundle.load(root, state_cache=False))


def test_background_stores_pause_before_each_one_and_are_idle_right_after_the_last(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each store waits STORE_DELAY first (the reload's first search goes before it); a
    # newer state for the same file replaces one still waiting; once the last is stored
    # the stores are idle at once, not after one more pause.
    import threading

    from okfx import statecache

    pauses: list[float] = []
    gate = threading.Event()

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        gate.wait(10)

    monkeypatch.setattr(statecache, "_pause", pause)
    cache = statecache.StateCache(cache_dir)
    made: list[str] = []

    def maker(name: str) -> Callable[[], None]:
        def make() -> None:
            made.append(name)  # None: nothing to store

        return make

    statecache.store_later(cache, "k", "bundle", maker("first bundle"))
    statecache.store_later(cache, "k", "bundle", maker("second bundle"))
    statecache.store_later(cache, "k", "search", maker("search"))
    assert not statecache.wait_for_stores(timeout=0.05)  # held in the first pause
    gate.set()
    assert statecache.wait_for_stores(timeout=60)
    assert made == ["second bundle", "search"]
    assert pauses == [statecache.STORE_DELAY] * 2


def test_a_live_index_stored_by_a_reload_searches_after_a_restart_and_updates_again(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from okfx import statecache
    from okfx.search import live

    # A bundle this small is rebuilt on reload; past live.SMALL (and with few changes) a
    # reload keeps the index's base, drops the changed documents and adds a delta.
    monkeypatch.setattr(live, "SMALL", 10)
    monkeypatch.setattr(statecache, "STORE_DELAY", 0.0)
    words = ["orders", "revenue", "margin", "refunds", "stock", "churn", "sessions"]
    kinds = ["metric", "table", "playbook"]
    root = aged(
        make_bundle(
            {
                f"{kinds[i % 3]}s/c{i}.md": f"---\ntype: {kinds[i % 3]}\ntitle: C{i} "
                f"{words[i % 7]}\n---\n{words[(i * 3) % 7]} {words[(i * 5) % 7]}\n"
                for i in range(80)
            }
        )
    )
    bundle = Bundle.load(root, state_cache=cache_dir)
    bundle.search("orders")
    (root / "metrics" / "c0.md").unlink()
    reloaded = bundle.reload()
    assert isinstance(reloaded.search_index(), live.LiveIndex)
    assert statecache.wait_for_stores(timeout=60)

    def hits(b: Bundle) -> list[object]:
        return [[(h.path, h.score) for h in b.search(q)] for q in (*words, "metric orders")]

    # The next start reads the stored base, its dropped documents and the delta back: it
    # ranks as the index it stored (scored with the base's statistics, docs/state.md).
    warm = Bundle.load(root, state_cache=cache_dir)
    assert isinstance(warm.search_index(), live.LiveIndex)
    assert hits(warm) == hits(reloaded) and all(hits(warm))
    # ... and brings that index up to date after the next change, dropped documents and all.
    aged(write(root / "metrics" / "c1.md", "---\ntype: metric\ntitle: Refunds\n---\nr\n"))
    again, running = warm.reload(), reloaded.reload()
    assert isinstance(again.search_index(), live.LiveIndex)
    assert hits(again) == hits(running)
    assert [h.path for h in again.search("refunds")][0] == "/metrics/c1.md"


def test_a_process_about_to_exit_makes_its_waiting_stores_first(
    cache_dir: Path, tmp_path: Path
) -> None:
    """Platform QA: a short process (a CLI search after an edit) exited in the stores'
    pause, so the updated index was never stored and the next start rebuilt it whole."""
    import subprocess
    import sys

    marker = tmp_path / "made"
    script = (
        "from pathlib import Path\n"
        "from okfx import statecache\n"
        f"cache = statecache.StateCache(Path({str(cache_dir)!r}))\n"
        f"made = lambda: Path({str(marker)!r}).write_text('x') and None\n"
        "statecache.store_later(cache, 'k', 'search', made)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(state_module.__file__).parents[2])},
    )
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "x"


def test_a_process_waits_for_anothers_index_build_and_reads_it(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Platform QA: processes starting together shared one parse, but each built the
    search index (13 s each at 10k). One builds under the state lock; the others wait
    for it and read what it stored."""

    root = aged(make_bundle(FILES))
    builder = Bundle.load(root, state_cache=cache_dir)
    reader = Bundle.load(root, state_cache=cache_dir)  # read back: it has the state's plan
    cache = StateCache(cache_dir)
    built: list[int] = []
    real_build = SearchIndex.build
    index = real_build((builder.name, c) for c in builder)  # what the other one builds

    monkeypatch.setattr(SearchIndex, "build", _counting(real_build, built))
    _waits_for_another_process(
        cache, builder._key, reader.search_index, lambda: builder._save_index(index)
    )
    assert not built  # read what the other stored: no build of its own
    assert reader.search("orders").hits


def _waits_for_another_process(
    cache: StateCache, key: str, wait: Callable[[], object], store: Callable[[], object]
) -> None:
    """``wait()`` on a thread while "another process" holds ``key``'s lock, building: it
    waits for the lock, then returns once ``store()`` stored what was built."""
    import threading

    done: list[object] = []
    with cache.lock(key):
        waiting = threading.Thread(target=lambda: done.append(wait()))
        waiting.start()
        time.sleep(0.3)
        assert waiting.is_alive() and not done  # it waits for the lock
        store()
    waiting.join(30)
    assert done


def test_a_process_waits_for_anothers_combined_index_build_and_reads_it(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Platform QA: four servers started together on three bundles each built the index
    over all of them (only one bundle's own index was built under the lock), and every
    first search answered timeout."""

    from okfx import KnowledgeManager
    from okfx.search.saved import SEARCH_KIND, write_index
    from okfx.tools.manager import _shared_state

    roots = {"shop": aged(make_bundle(FILES)), "ops": aged(make_bundle(OTHER))}
    waiting_manager = KnowledgeManager.from_paths(roots, state_cache=cache_dir)
    bundles = sorted(waiting_manager.bundles.values(), key=lambda b: b.name)
    shared = _shared_state(bundles)
    assert shared is not None
    _, key, generation = shared
    index = SearchIndex.build((b.name, c) for b in bundles for c in b)  # the other's build
    built: list[int] = []
    monkeypatch.setattr(SearchIndex, "build", _counting(SearchIndex.build, built))
    cache = StateCache(cache_dir)
    stored = write_index(index, {"generation": generation})
    _waits_for_another_process(
        cache, key, waiting_manager.prepare_search, lambda: cache.store(key, SEARCH_KIND, stored)
    )
    assert not built  # read what the other stored: no build of its own
    assert waiting_manager.search("orders").hits


def test_okfx_index_prepare_stores_the_index_a_server_over_the_same_bundles_reads(
    make_bundle: MakeBundle, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Platform QA: no command built the search index ahead of a server, so one over large
    bundles answered timeout for minutes after each short session."""
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    shop, ops = aged(make_bundle(FILES)), aged(make_bundle(OTHER))
    sources = [f"shop={shop}", f"ops={ops}"]
    done = CliRunner().invoke(
        cli, ["--state-cache", str(cache_dir), "index", *sources, "--prepare"]
    )
    assert done.exit_code == 0, done.output
    assert "search index over" in done.stdout and "kept in the state cache" in done.stdout
    built: list[int] = []
    monkeypatch.setattr(SearchIndex, "build", _counting(SearchIndex.build, built))
    found = CliRunner().invoke(
        cli, ["--state-cache", str(cache_dir), "search", *sources, "orders", "--json"]
    )
    assert found.exit_code == 0 and json.loads(found.stdout)["hits"]
    assert not built  # read back, as a server's first search reads it
    off = CliRunner().invoke(cli, ["--no-state-cache", "index", str(shop), "--prepare"])
    assert "not kept: the state cache is off" in off.stdout
