"""``--refresh-interval``: a git bundle is fetched again when its remote commit moved, and
only then (real git, local repositories, ``file://`` URLs)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from okfx import KnowledgeManager
from okfx.sources import GitSource
from okfx.sources.refresh import cached_commit, remote_commit
from okfx.tools.watch import Reload, Watcher
from test_sources_git import Remote, git, isolated_git, remote  # noqa: F401


def test_a_git_bundle_is_fetched_again_when_its_commit_moves(
    remote: Remote,  # noqa: F811
    tmp_path: Path,
) -> None:
    source = GitSource(remote.url, subdir="okf/sales")
    cache = tmp_path / "sources"
    manager = KnowledgeManager.from_paths({"sales": source}, cache_dir=cache)
    first = manager.bundle("sales")
    assert "/metrics/revenue.md" in first
    head = git("rev-parse", "HEAD", cwd=remote.work).strip()
    assert remote_commit(source) == cached_commit(source, cache) == head
    reports: list[Reload] = []
    lines: list[str] = []
    watcher = Watcher(manager, on_reload=reports.append, watch=False, log=lines.append)
    assert watcher.roots() == []  # a checkout is not watched: it is refreshed
    assert not watcher.refresh_now() and reports == []  # nothing moved: no clone, no line
    assert manager.bundle("sales") is first

    moved = remote.commit({"okf/sales/metrics/margin.md": "---\ntype: Metric\n---\nMargin.\n"})
    report = watcher.refresh_now()
    assert report.refreshed == ["sales"] and reports == [report]
    assert lines == [report.line()] and "sales: fetched a new commit" in lines[0]
    fresh = manager.bundle("sales")
    assert fresh is not first and "/metrics/margin.md" in fresh
    assert cached_commit(source, cache) == moved
    assert not watcher.refresh_now()  # and not again for the same commit


def test_an_unreachable_remote_is_logged_and_the_bundle_kept(
    remote: Remote,  # noqa: F811
    tmp_path: Path,
) -> None:
    import shutil

    source = GitSource(remote.url)
    manager = KnowledgeManager.from_paths({"repo": source}, cache_dir=tmp_path / "sources")
    before = manager.bundle("repo")
    shutil.rmtree(remote.bare)
    watcher = Watcher(manager, watch=False)
    assert not watcher.refresh_now()
    assert manager.bundle("repo") is before
    # Sources QA: the agent was shown git's five raw lines with the server's path.
    from okfx import Toolbox

    (row,) = Toolbox(manager).list_bundles()["bundles"]
    said = row["reload_failed"]
    assert "repository file://…/remote.git not found" in said, said
    assert "\n" not in said and "fatal" not in said and str(remote.bare) not in said


def test_two_folders_of_one_clone_are_both_reloaded_and_a_pin_is_left(
    remote: Remote,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Sources QA: two folders of one repository and ref share a clone; the first one's
    refresh moved the cache's commit, so the second was judged current and kept serving
    its old concepts (over files already replaced). A pinned commit is never asked."""

    head = git("rev-parse", "HEAD", cwd=remote.work).strip()
    remote.commit({"okf/ops/runbook.md": "---\ntype: Runbook\n---\nRestart.\n"})
    sources = {
        "ops": GitSource(remote.url, ref="main", subdir="okf/ops"),
        "sales": GitSource(remote.url, ref="main", subdir="okf/sales"),
        "pinned": GitSource(remote.url, ref=head, subdir="okf/sales"),
    }
    manager = KnowledgeManager.from_paths(sources, cache_dir=tmp_path / "sources")
    watcher = Watcher(manager, watch=False)
    remote.commit(
        {
            "okf/ops/scale.md": "---\ntype: Runbook\n---\nScale.\n",
            "okf/sales/metrics/margin.md": "---\ntype: Metric\n---\nMargin.\n",
        }
    )
    report = watcher.refresh_now()
    assert sorted(report.refreshed) == ["ops", "sales"]
    assert "/scale.md" in manager.bundle("ops")
    assert "/metrics/margin.md" in manager.bundle("sales")
    assert "/metrics/margin.md" not in manager.bundle("pinned")
    assert not watcher.refresh_now()


def test_a_refresh_whose_commit_lacks_the_folder_keeps_the_tree_served(
    remote: Remote,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Sources QA: the new clone replaced the cached tree before its folder was looked
    for, so the served bundle's files were gone and every read failed; the cache then
    held the new commit, so the failure was said once and never tried again."""
    import shutil

    from okfx import Toolbox

    remote.commit({"okf/ops/runbook.md": "---\ntype: Runbook\n---\nRestart the pods.\n"})
    source = GitSource(remote.url, ref="main", subdir="okf/ops")
    manager = KnowledgeManager.from_paths({"ops": source}, cache_dir=tmp_path / "sources")
    watcher = Watcher(manager, watch=False)
    shutil.rmtree(remote.work / "okf" / "ops")
    remote.commit({"README.md": "moved ops away\n"})
    logged: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = logged.append  # type: ignore[method-assign]
    logging.getLogger("okfx").addHandler(handler)
    try:
        for _ in range(3):  # tried again at the next interval, as the commit still differs
            assert not watcher.refresh_now()
    finally:
        logging.getLogger("okfx").removeHandler(handler)
    # said once, as a local folder's failure is (edit QA: every interval, 1,440 a day)
    failures = [r for r in logged if "refreshing ops failed" in r.getMessage()]
    assert len(failures) == 1
    box = Toolbox(manager)
    read = box.read_concept("/runbook.md")
    assert "Restart the pods." in read["body"], read
    # and the agent is told, as for a folder that has gone (author QA: stderr only)
    assert any(
        n.startswith("AS LAST READ: fetching the bundle's git source") for n in read["notices"]
    )
    (row,) = box.list_bundles()["bundles"]
    assert row["reload_failed"].startswith("fetching its git source again failed")
    assert "okf/ops" in row["reload_failed"]  # why: the folder the new commit lacks
    assert str(remote.bare) not in row["reload_failed"]  # no host path (security QA)
    # a refresh that works clears it
    remote.commit({"okf/ops/runbook.md": "---\ntype: Runbook\n---\nBack again.\n"})
    back = watcher.refresh_now()
    assert back.refreshed == ["ops"] and back.reached == ["ops"]
    assert "ops: its git source answers again" in back.line()
    assert "reload_failed" not in box.list_bundles()["bundles"][0]
    again = box.read_concept("/runbook.md")
    assert "Back again." in again["body"] and not any("AS LAST" in n for n in again["notices"])


def test_validate_checks_a_branchs_newest_commit_not_the_cached_clone(
    remote: Remote,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Author QA: a CI job validating ``repo#main:kb`` passed on the cached clone after a
    commit broke the bundle, unless --refresh was given. okfx validate asks the remote
    for the branch's commit and fetches it again when it moved; when the remote cannot
    be asked it checks the cached clone and says so on stderr."""
    import shutil

    from click.testing import CliRunner

    from okfx.cli.commands import cli

    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path / "cache"))
    url = f"{remote.url}#main:okf/sales"
    runner = CliRunner()
    first = runner.invoke(cli, ["validate", url])
    assert first.exit_code == 0, first.output
    broken = remote.commit({"okf/sales/metrics/bad.md": "---\ntitle: no type\n---\nx\n"})
    again = runner.invoke(cli, ["validate", url])
    assert again.exit_code == 1, again.output  # the new commit, not the cached one
    assert broken[:12] in again.output
    shutil.rmtree(remote.bare)  # the remote is gone: the cached clone, said so
    cached = runner.invoke(cli, ["validate", url])
    assert cached.exit_code == 1 and broken[:12] in cached.output
    assert f"checking the cached clone at {broken[:12]}" in cached.stderr


def test_a_file_url_clone_is_named_without_the_servers_folders(
    remote: Remote,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Security QA: list_bundles said a file:// clone's whole host path, where a folder's
    is not said at all."""
    from okfx import Toolbox

    manager = KnowledgeManager.from_paths(
        {"sales": GitSource(remote.url, subdir="okf/sales")}, cache_dir=tmp_path / "sources"
    )
    (row,) = Toolbox(manager).list_bundles()["bundles"]
    assert row["source"]["url"] == "file://…/remote.git"
    assert str(tmp_path) not in str(row)


def test_a_refresh_failure_is_noted_and_read_while_an_index_is_being_built() -> None:
    """The manager's lock is held through a combined index's build (a minute at 100k):
    noting a refresh's failure, and list_bundles reading it, must not wait for it."""
    import threading

    manager = KnowledgeManager()
    done = threading.Event()

    def note_and_read() -> None:
        manager.note_refresh("ops", "subdirectory 'kb' not found")
        if manager.refresh_failures == {"ops": "subdirectory 'kb' not found"}:
            manager.note_refresh("ops", None)
            done.set()

    with manager._lock:  # as _build_combined holds it
        worker = threading.Thread(target=note_and_read, daemon=True)
        worker.start()
        worker.join(5)
        assert done.is_set()
    assert manager.refresh_failures == {}
