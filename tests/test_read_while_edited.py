"""A read between an author's save and the reload it starts (``okfx serve --watch``) gives
one version of the file, header and body alike (Bundle.as_now): watch-mode QA had seen the
loaded title over the new body, and a deleted file read as a concept with an empty body."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import MakeBundle, concept
from okfx import Bundle, KnowledgeManager, Toolbox
from okfx.tools.notices import CHANGED_SINCE_LOAD


def _later(path: Path, text: str) -> None:
    """Write ``text`` with an mtime of its own, as a save seconds after the load has."""
    path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_a_concept_saved_since_the_load_reads_as_saved_with_a_notice(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle({"a.md": concept("Note", "Old body.\n", title="Old")})
    box = Toolbox(Bundle.load(root))
    before = box.read_concept("a.md")
    assert (before["title"], before["body"]) == ("Old", "Old body.\n")
    assert CHANGED_SINCE_LOAD not in before["notices"]
    _later(root / "a.md", concept("Note", "New body.\n", title="New"))
    after = box.read_concept("a.md")
    assert (after["title"], after["body"]) == ("New", "New body.\n")
    assert CHANGED_SINCE_LOAD in after["notices"]


def test_a_concept_deleted_or_emptied_since_the_load_is_not_found(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle({"a.md": concept("Note", "A.\n"), "b.md": concept("Note", "B.\n")})
    box = Toolbox(Bundle.load(root))
    (root / "a.md").unlink()
    _later(root / "b.md", "")
    for path in ("a.md", "b.md"):
        error = box.read_concept(path)["error"]
        assert error["code"] == "not_found"
        assert "no longer a concept, since the bundle was loaded" in error["message"]


def test_an_mcp_resource_reads_the_file_as_now_too(make_bundle: MakeBundle) -> None:
    """Live edit QA: between a delete and its reload, resources/read returned an empty
    document where read_concept said not_found; and a saved file read as loaded."""
    from okfx import KnowledgeManager
    from okfx.adapters._mcp_resources import Resources, concept_uri

    root = make_bundle({"a.md": concept("Note", "A.\n"), "b.md": concept("Note", "B.\n")})
    resources = Resources(KnowledgeManager([Bundle.load(root)]))
    (root / "a.md").unlink()
    assert resources.read(concept_uri(root.name, "/a.md")) is None
    _later(root / "b.md", concept("Note", "B saved.\n", title="Saved"))
    text = resources.read(concept_uri(root.name, "/b.md"))
    assert text is not None and "B saved." in text and "title: Saved" in text


def test_a_file_whole_again_since_the_load_reads_as_a_concept(make_bundle: MakeBundle) -> None:
    """Live edit QA: a save half-written (the frontmatter cut) loaded as no concept; once
    whole, read_concept still said "not a concept (unterminated_frontmatter)" until the
    reload. It reads the file as it is now, with the notice that it changed."""
    root = make_bundle({"a.md": "---\ntype: Note\ntitle: Cut\n", "b.md": concept("Note", "B\n")})
    box = Toolbox(Bundle.load(root))
    assert "unterminated_frontmatter" in box.read_concept("a.md")["error"]["message"]
    _later(root / "a.md", concept("Note", "Whole now.\n", title="Whole"))
    read = box.read_concept("a.md")
    assert (read["title"], read["body"]) == ("Whole", "Whole now.\n")
    assert CHANGED_SINCE_LOAD in read["notices"]
    (root / "README.md").write_text("# no frontmatter\n")
    assert box.read_concept("README.md")["error"]["code"] == "not_found"  # not in the load


def test_an_mcp_resource_uri_climbing_out_is_no_resource(make_bundle: MakeBundle) -> None:
    """Security QA: ``okf://b/../x`` raised out of resources/read (a JSON-RPC error with
    code 0 and a traceback in the log), where an unknown resource is None."""
    from okfx import KnowledgeManager
    from okfx.adapters._mcp_resources import Resources

    root = make_bundle({"a.md": concept("Note", "A.\n")})
    resources = Resources(KnowledgeManager([Bundle.load(root)]))
    for uri in (f"okf://{root.name}/../secret.md", f"okf://{root.name}/%2e%2e/x.md"):
        assert resources.read(uri) is None


def test_a_search_index_built_after_an_edit_reads_each_concept_as_loaded(
    make_bundle: MakeBundle,
) -> None:
    """Author QA: a bundle loaded, one file edited, then the first search (as with
    ``okfx serve --lazy-index``) found the concept by its new body word, showed it with its
    old title and an old snippet, and grep said no concept holds the word: the index had
    read the file as it is now, the rest as loaded. One snapshot is one version."""
    root = make_bundle(
        {
            "a.md": concept("Note", "Old body about zebras.\n", title="Old"),
            "b.md": concept("Note", "Other.\n", title="Other"),
        }
    )
    for state_cache in (False, True):
        bundle = Bundle.load(root, state_cache=state_cache)
        _later(root / "a.md", concept("Note", "New body about okapis.\n", title="New"))
        box = Toolbox(bundle)
        (hit,) = box.search_concepts("zebras")["hits"]
        assert (hit["title"], "zebras" in hit["snippet"]) == ("Old", True)
        assert box.search_concepts("okapis")["hits"] == []
        assert box.grep_concepts("okapis")["concepts"] == 0
        assert CHANGED_SINCE_LOAD in box.read_concept("a.md")["notices"]  # reads it as now
        # reloaded, the index and the rest read the new version
        fresh = Toolbox(bundle.reload())
        (hit,) = fresh.search_concepts("okapis")["hits"]
        assert hit["title"] == "New" and fresh.search_concepts("zebras")["hits"] == []
        _later(root / "a.md", concept("Note", "Old body about zebras.\n", title="Old"))


def test_a_read_of_an_edited_file_says_when_search_catches_up(make_bundle: MakeBundle) -> None:
    """What the CHANGED notice and a gone concept's error say depends on how the server
    reloads its bundles (``KnowledgeManager.reloads``); a library's caller gets the plain
    "after the next reload"."""
    root = make_bundle({"a.md": concept("Note", "Old.\n"), "b.md": concept("Note", "B.\n")})
    manager = KnowledgeManager([Bundle.load(root)])
    box = Toolbox(manager)
    _later(root / "a.md", concept("Note", "New.\n"))
    (root / "b.md").unlink()
    said = {}
    for reloads in (None, "watch", "operator", "never"):
        manager.reloads = reloads
        [changed] = [n for n in box.read_concept("a.md")["notices"] if n.startswith("CHANGED")]
        said[reloads] = changed, box.read_concept("b.md")["error"]["message"]
    assert said[None][0] == CHANGED_SINCE_LOAD
    assert "makes on its own within seconds" in said["watch"][0]
    assert "when its operator asks" in said["operator"][0]
    assert "once this server is restarted" in said["never"][0]
    assert "until this server is restarted" in said["never"][1]
    assert all("being saved right now" in gone for _, gone in said.values())


def test_a_concept_file_replaced_by_a_symlink_a_folder_or_a_fifo_is_not_found(
    make_bundle: MakeBundle, tmp_path: Path
) -> None:
    """Edit QA: a concept file replaced by a symlink (to a file outside), a folder or a
    FIFO read as the concept with its loaded title and an empty body, no notice; the MCP
    resource as an empty frontmatter. It is no file of the bundle now: not_found, as a
    deleted one is, and the file outside is never read."""
    from okfx.adapters._mcp_resources import Resources, concept_uri

    secret = tmp_path / "secret.md"
    secret.write_text(concept("Note", "SECRET-TEXT\n", title="Secret"))
    files = {f"{n}.md": concept("Note", f"{n}.\n", title=n) for n in ("s", "d", "f")}
    root = make_bundle(files)
    manager = KnowledgeManager([Bundle.load(root)])
    box, resources = Toolbox(manager), Resources(manager)
    for name in files:
        (root / name).unlink()
    (root / "s.md").symlink_to(secret)
    (root / "d.md").mkdir()
    os.mkfifo(root / "f.md")
    for name in files:
        answer = box.read_concept(name)
        assert answer["error"]["code"] == "not_found", (name, answer)
        assert "SECRET-TEXT" not in str(answer)
        assert resources.read(concept_uri(root.name, f"/{name}")) is None


def test_a_resource_gone_or_replaced_since_the_load_is_not_found(
    make_bundle: MakeBundle, tmp_path: Path
) -> None:
    """Edit QA: read_resource of a file deleted (or symlinked out) since the load answered
    `unreadable` ("No such file or directory") before the reload and `not_found` after."""
    outside = tmp_path / "outside.sql"
    outside.write_text("SELECT 'SECRET';\n")
    root = make_bundle({"a.md": concept(), "q.sql": "SELECT 1;\n", "r.sql": "SELECT 2;\n"})
    box = Toolbox(Bundle.load(root))
    (root / "q.sql").unlink()
    (root / "r.sql").unlink()
    (root / "r.sql").symlink_to(outside)
    for name in ("q.sql", "r.sql"):
        error = box.read_resource(name)["error"]
        assert error["code"] == "not_found", error
        assert "is gone, or no longer a file, since the bundle was loaded" in error["message"]
        assert "SECRET" not in error["message"]


def test_a_delete_before_its_reload_logs_what_the_reads_give(
    make_bundle: MakeBundle, caplog
) -> None:
    """Edit QA: a delete or rename under --watch logged "reads of it serve what the load
    kept", while the tools answer not_found. The one line says what each read gives."""
    import logging

    root = make_bundle({"a.md": concept("Note", "Alpha.\n"), "b.md": concept("Note", "B.\n")})
    bundle = Bundle.load(root, state_cache=False)
    (root / "a.md").unlink()
    with caplog.at_level(logging.WARNING, logger="okfx"):
        assert Toolbox(bundle).read_concept("a.md")["error"]["code"] == "not_found"
        bundle.grep("Alpha")
        bundle.get("/a.md").body  # noqa: B018 - the library read the log line came from
    assert "serve what the load kept" not in caplog.text
    assert len(caplog.records) == 1
    assert "is gone, or no longer a file" in caplog.text and "not_found" in caplog.text


def test_a_path_gone_since_the_load_is_not_offered_as_did_you_mean(
    make_bundle: MakeBundle,
) -> None:
    """Edit QA: after a folder was renamed, and before the reload, a read of the new path
    was offered the old one, which read as gone."""
    root = make_bundle({"plants/aloe.md": concept("Note", "A.\n"), "other/cactus.md": concept()})
    box = Toolbox(Bundle.load(root))
    assert "/plants/aloe.md" in box.read_concept("flora/aloe.md")["error"]["did_you_mean"]
    (root / "plants").rename(root / "flora")
    error = box.read_concept("flora/aloe.md")["error"]
    assert "/plants/aloe.md" not in error.get("did_you_mean", [])
