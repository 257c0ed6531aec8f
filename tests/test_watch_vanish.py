"""A bundle folder that goes away while okfx serves it (a checkout switched, a sync that
replaces the folder): the others go on reloading, it keeps what it last read, and a watch
picks it up again when it comes back."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from conftest import write_tree
from okfx import Bundle, KnowledgeManager, Toolbox
from okfx.tools.watch import Reload, Watcher

WAIT = 20.0


def _note(title: str) -> str:
    return f"---\ntype: Note\ntitle: {title}\n---\n# {title}\n"


def _two(tmp_path: Path) -> tuple[KnowledgeManager, Path, Path]:
    a = write_tree(tmp_path / "a", {"x.md": _note("Ex")})
    b = write_tree(tmp_path / "b", {"y.md": _note("Why")})
    return KnowledgeManager.from_paths([a, b]), a, b


def test_a_gone_folder_does_not_stop_the_other_bundles_reloading(tmp_path: Path) -> None:
    manager, a, b = _two(tmp_path)
    shutil.rmtree(a)
    (b / "z.md").write_text(_note("Zed"))
    changes = manager.reload()
    assert changes["b"].added == ["/z.md"]
    assert manager.bundle("b").get("/z.md") is not None
    # "a" keeps what it read, and says why it was not reloaded.
    assert [c.path for c in manager.bundle("a").concepts] == ["/x.md"]
    assert "bundle folder not found" in manager.reload_failures["a"]
    rows = {r["name"]: r for r in Toolbox(manager).list_bundles()["bundles"]}
    assert "reload_failed" in rows["a"] and "reload_failed" not in rows["b"]
    assert str(tmp_path) not in rows["a"]["reload_failed"]  # no host path for an agent
    # The folder comes back with other files: the next reload reads them.
    write_tree(a, {"w.md": _note("Double-u")})
    assert manager.reload()["a"].removed == ["/x.md"]
    assert [c.path for c in manager.bundle("a").concepts] == ["/w.md"]
    assert manager.reload_failures == {}
    assert "reload_failed" not in Toolbox(manager).list_bundles()["bundles"][0]


def test_bundle_reload_of_a_gone_folder_names_it(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "a", {"x.md": _note("Ex")})
    bundle = Bundle.load(root)
    shutil.rmtree(root)
    with pytest.raises(FileNotFoundError, match="bundle folder not found"):
        bundle.reload()
    assert bundle.get("/x.md") is not None


def test_the_watch_log_says_once_that_a_bundle_could_not_be_read(tmp_path: Path) -> None:
    manager, a, _ = _two(tmp_path)
    _until(lambda: not manager.reload() and not _unsettled(manager))
    lines: list[str] = []
    watcher = Watcher(manager, polling=True, log=lines.append)
    shutil.rmtree(a)
    report = watcher.reload_now()
    assert "a" in report.failed and lines == [report.line()]
    assert "a: not reloaded: bundle folder not found" in lines[0]
    assert not watcher.reload_now()  # the same failure again: no new line
    assert len(lines) == 1
    write_tree(a, {"x.md": _note("Ex again")})
    back = watcher.reload_now()
    assert not back.failed and "a: 1 changed" in back.line()


@pytest.mark.parametrize("polling", [False, True], ids=["watchfiles", "polling"])
def test_a_watch_follows_a_folder_that_went_and_came_back(tmp_path: Path, polling: bool) -> None:
    if not polling:
        pytest.importorskip("watchfiles", reason="the watch extra is not installed")
    manager, a, _ = _two(tmp_path)
    _until(lambda: not manager.reload() and not _unsettled(manager))
    reports: list[Reload] = []
    watcher = Watcher(manager, on_reload=reports.append, polling=polling, debounce=0.05)
    watcher.start()
    # Every file is past the racy window, so no reload follows a recent write: only the
    # watch's events (or the poll) can bring the new files in.
    try:
        time.sleep(0.5)  # the watch is set up
        shutil.rmtree(a)
        _until(lambda: "a" in manager.reload_failures)
        time.sleep(0.5)
        a.mkdir()
        (a / "new.md").write_text(_note("New"))
        _until(lambda: manager.bundle("a").get("/new.md") is not None)
        # Edits in the folder that came back are watched too, not only its return.
        (a / "later.md").write_text(_note("Later"))
        _until(lambda: manager.bundle("a").get("/later.md") is not None)
    finally:
        watcher.stop()
    assert manager.reload_failures == {}
    assert any("a" in r.failed for r in reports)


def _until(condition: object) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the watcher did not get there in time"
        time.sleep(0.05)


def _unsettled(manager: KnowledgeManager) -> bool:
    return any(bundle.unsettled for bundle in manager.bundles.values())
