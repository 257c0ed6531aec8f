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
    assert "a: read again, its folder is back" in back.line()
    # moved away and back unchanged (edit QA: no line said so, "not reloaded" stayed last)
    _until(lambda: not manager.reload() and not _unsettled(manager))
    a.rename(tmp_path / "away")
    assert "a" in watcher.reload_now().failed
    (tmp_path / "away").rename(a)
    again = watcher.reload_now()
    assert again.recovered == ["a"] and not again.changes
    assert lines[-1] == again.line() and "a: read again, its folder is back" in lines[-1]


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


@pytest.mark.parametrize("how", ["renamed over", "symlink switched"])
def test_a_watch_follows_a_root_replaced_in_place(tmp_path: Path, how: str) -> None:
    """A root replaced at once (a copy renamed over it, as a sync does; ``ln -sfn v2
    current``) left the watch on the old folder: no edit was seen again (live edit QA)."""
    pytest.importorskip("watchfiles", reason="the watch extra is not installed")
    if how == "symlink switched":
        v1 = write_tree(tmp_path / "v1", {"x.md": _note("Ex")})
        write_tree(tmp_path / "v2", {"x.md": _note("Ex"), "two.md": _note("Two")})
        root = tmp_path / "current"
        root.symlink_to(v1.name)
    else:
        root = write_tree(tmp_path / "kb", {"x.md": _note("Ex")})
    manager = KnowledgeManager.from_paths([root])
    (name,) = manager.bundles
    _until(lambda: not manager.reload() and not _unsettled(manager))
    watcher = Watcher(manager, debounce=0.05).start()
    try:
        time.sleep(0.5)  # the watch is set up
        if how == "symlink switched":
            (tmp_path / "next").symlink_to("v2")
            (tmp_path / "next").rename(root)  # atomic, as ln -sfn does
            _until(lambda: manager.bundle(name).get("/two.md") is not None)
        else:
            fresh = write_tree(tmp_path / "kb.new", {"x.md": _note("Ex"), "y.md": _note("Why")})
            root.rename(tmp_path / "kb.old")
            fresh.rename(root)
            shutil.rmtree(tmp_path / "kb.old")
            _until(lambda: manager.bundle(name).get("/y.md") is not None)
        # an edit after the swap is seen: the watch is on the folder there now
        (root / "later.md").write_text(_note("Later"))
        _until(lambda: manager.bundle(name).get("/later.md") is not None)
    finally:
        watcher.stop()


def _until(condition: object) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the watcher did not get there in time"
        time.sleep(0.05)


def _unsettled(manager: KnowledgeManager) -> bool:
    return any(bundle.unsettled for bundle in manager.bundles.values())


def test_the_watch_sees_the_names_the_loader_reads(tmp_path: Path) -> None:
    """watchfiles' default filter dropped edits under ``node_modules/`` and
    ``__pycache__/`` and to ``x~`` files, which the loader reads: they waited for the next
    edit (live edit QA). Hidden names, which the loader skips, still cause no reload."""
    pytest.importorskip("watchfiles", reason="the watch extra is not installed")
    root = write_tree(tmp_path / "kb", {"x.md": _note("Ex"), "node_modules/n.md": _note("N")})
    manager = KnowledgeManager.from_paths([root])
    (name,) = manager.bundles
    _until(lambda: not manager.reload() and not _unsettled(manager))
    reports: list[Reload] = []
    watcher = Watcher(manager, on_reload=reports.append, debounce=0.05).start()
    try:
        time.sleep(0.5)  # the watch is set up
        (root / ".git").mkdir()
        (root / ".git" / "HEAD").write_text("ref: x\n")
        time.sleep(1.0)
        assert reports == []  # a hidden name: nothing the loader reads
        (root / "node_modules" / "n.md").write_text(_note("N again"))
        _until(lambda: manager.bundle(name).get("/node_modules/n.md").title == "N again")
        (root / "__pycache__").mkdir()
        (root / "__pycache__" / "p.md").write_text(_note("P"))
        _until(lambda: manager.bundle(name).get("/__pycache__/p.md") is not None)
        # the .okfignore it reads, hidden as it is, is watched too
        (root / ".okfignore").write_text("__pycache__/\n")
        _until(lambda: manager.bundle(name).get("/__pycache__/p.md") is None)
    finally:
        watcher.stop()


def test_a_gone_folder_is_served_as_last_read(tmp_path: Path) -> None:
    """While its folder is gone, a bundle's search and grep served what it last read but
    read_concept answered every path "gone since load" (live edit QA): it reads the
    concept as last read too, and says so."""
    root = write_tree(
        tmp_path / "kb",
        {
            "x.md": _note("Ex") + "Body words.\n",
            "index.md": "# KB\n\n## All\n\n* [Ex](x.md) - the one\n",
            "log.md": "# Log\n\n## 2026-01-02\n\n* Added x.\n",
        },
    )
    Bundle.load(root, state_cache=tmp_path / "state")  # the state cache holds its texts
    manager = KnowledgeManager([Bundle.load(root, state_cache=tmp_path / "state")])
    box = Toolbox(manager)
    root.rename(tmp_path / "away")
    manager.reload()
    assert "kb" in manager.reload_failures
    read = box.read_concept(path="/x.md")
    assert "Body words." in read["body"], read
    assert any(n.startswith("AS LAST READ") for n in read["notices"])
    # an index or log page as last read says so too (edit QA: concepts alone did)
    for page in ("/index.md", "/log.md"):
        shown = box.read_concept(path=page)
        assert shown["notice"].startswith("AS LAST READ"), shown
    far = box.read_concept(path="/log.md", offset=10_000)["notice"]
    assert far.startswith("AS LAST READ") and "past the end" in far
    (hit,) = box.search_concepts(query="body words")["hits"]
    assert hit["snippet"] == "Body words."


def test_a_reload_never_follows_a_root_replaced_by_a_symlink_out(tmp_path: Path) -> None:
    """Security QA: a git pull that committed the bundle folder as a symlink to
    ``../../secret`` made the next reload serve the secret folder. A folder loaded as a
    folder is not followed once it is a symlink; a symlinked root is followed to a sibling
    (a release switched), not out of the folder holding the link."""
    secret = write_tree(tmp_path / "secret", {"s.md": _note("Secret")})
    root = write_tree(tmp_path / "repo" / "kb", {"x.md": _note("Ex")})
    manager = KnowledgeManager.from_paths([root])
    box = Toolbox(manager)
    shutil.rmtree(root)
    root.symlink_to(secret)
    manager.reload()
    assert "does not follow it" in manager.reload_failures["kb"]
    assert box.read_concept(path="s.md")["error"]["code"] == "not_found"
    assert box.read_concept(path="x.md")["title"] == "Ex"  # as last read
    # a symlinked root: to a sibling, followed; out of the link's folder, not
    releases = tmp_path / "rel"
    write_tree(releases / "v1", {"x.md": _note("One")})
    write_tree(releases / "v2", {"x.md": _note("Two")})
    current = releases / "current"
    current.symlink_to("v1")
    served = KnowledgeManager.from_paths({"cur": current})
    for target, title in (("v2", "Two"), (str(secret), "Two")):
        (releases / "next").symlink_to(target)
        (releases / "next").rename(current)
        served.reload()
        assert served.bundle("cur").get("/x.md").title == title
    assert "does not follow it" in served.reload_failures["cur"]


def test_an_edit_between_the_load_and_the_watch_is_reloaded(tmp_path: Path) -> None:
    """Edit QA: `okfx serve --watch` loads, then starts the watch; a file saved or deleted
    in between gave no event, and the server served the old text until some later change."""
    pytest.importorskip("watchfiles", reason="the watch extra is not installed")
    manager, a, _ = _two(tmp_path)
    _until(lambda: not manager.reload() and not _unsettled(manager))
    (a / "x.md").write_text(_note("Ex edited"))
    (a / "w.md").write_text(_note("Double-u"))
    watcher = Watcher(manager, polling=False, debounce=0.05, log=lambda _line: None).start()
    try:
        _until(lambda: manager.bundle("a").get("/w.md") is not None)
    finally:
        watcher.stop()
    assert manager.bundle("a").get("/x.md").title == "Ex edited"


def test_a_folder_that_cannot_be_listed_is_served_as_last_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edit QA: a root made unreadable (chmod 000) reloaded as an empty bundle, 0 concepts
    and "is the path right?", where a gone folder keeps what it last read. (The tests run
    as root, whom chmod does not stop: the listing is refused here instead.)"""
    import os

    manager, a, _ = _two(tmp_path)
    real = os.scandir

    def refused(path: object = ".") -> object:
        if not isinstance(path, int) and os.path.realpath(os.fspath(path)) == os.path.realpath(a):  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", os.fspath(path))  # type: ignore[arg-type]
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", refused)
    assert "a" not in manager.reload()
    assert "bundle folder cannot be read" in manager.reload_failures["a"]
    assert "Permission denied" in manager.reload_failures["a"]
    assert [c.path for c in manager.bundle("a").concepts] == ["/x.md"]
    rows = {r["name"]: r for r in Toolbox(manager).list_bundles()["bundles"]}
    assert "reload_failed" in rows["a"] and "reload_failed" not in rows["b"]
