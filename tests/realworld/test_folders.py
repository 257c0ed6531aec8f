"""Links to folders and reading a folder without an index.md (issue 17, item 3)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx import Bundle, Toolbox
from okfx.cli.commands import cli

FILES: dict[str, str | bytes] = {
    "a.md": concept(
        body="See [the group](sub/), [again](/sub), [dot](./sub/), [indexed](/with/) "
        "and [missing](/nothere/)."
    ),
    "sub/b.md": concept(title="Bee", body="[up](../)"),
    "sub/deeper/c.md": concept(),
    "with/index.md": "# With\n",
    "with/d.md": concept(),
}


def test_a_link_to_a_folder_without_index_resolves_to_the_folder(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle(FILES))
    links = {link.href: (link.target, link.exists) for link in bundle.concept("a").links}
    assert links["sub/"] == ("/sub", True)
    assert links["/sub"] == ("/sub", True)
    assert links["./sub/"] == ("/sub", True)
    assert links["/with/"] == ("/with/index.md", True)
    assert links["/nothere/"] == ("/nothere/index.md", False)
    assert {link.href: link.target for link in bundle.concept("sub/b").links} == {"../": "/"}
    broken = [p.message for p in bundle.warnings if p.code == "broken_link"]
    assert len(broken) == 1 and "/nothere/" in broken[0]
    neighbors = Toolbox(bundle).get_neighbors(path="a")
    folder = next(e for e in neighbors["outbound"] if e["path"] == "/sub")
    assert folder["type"] == "folder"


def test_reading_a_folder_without_index_lists_what_it_holds(make_bundle: MakeBundle) -> None:
    files = dict(FILES)
    files.update({f"sub/n{i:02}.md": concept() for i in range(60)})
    box = Toolbox(Bundle.load(make_bundle(files)))
    for form in ("sub/", "/sub", "sub"):
        listing = box.read_concept(path=form)
        assert listing["kind"] == "folder", form
        assert listing["path"] == "/sub"
        assert listing["folders"] == [{"path": "/sub/deeper", "concepts": 1}]
        rows = listing["concepts"]
        assert len(rows) == 50 and rows[0]["path"] == "/sub/b.md" and rows[0]["title"] == "Bee"
        assert listing["total"] == 61 and listing["truncated"] is True
        assert "list_concepts" in listing["notice"] and "'/sub'" in listing["notice"]
        # agent QA: the call it names lacked bundle=, so it listed every bundle's folder
        assert f"bundle={box.manager.names[0]!r}, offset=50" in listing["notice"]
        assert listing["content_is_untrusted_data"] is True
    rest = box.list_concepts(directory="/sub", bundle=box.manager.names[0], offset=50)
    direct = {f"/sub/n{i:02}.md" for i in range(60)} | {"/sub/b.md"}
    seen = {r["path"] for r in listing["concepts"]} | {r["path"] for r in rest["concepts"]}
    assert direct <= seen  # following the call, nothing of the folder is missed
    root = box.read_concept(path="/")
    assert root["kind"] == "folder" and [r["path"] for r in root["concepts"]] == ["/a.md"]
    # the root is no subfolder of itself (agent QA: it listed "/" first)
    assert [f["path"] for f in root["folders"]] == ["/sub", "/with"]
    assert box.read_concept(path="with/")["kind"] == "index"
    assert box.read_concept(path="nothere/")["error"]["code"] == "not_found"
    # a folder's index.md that is not there, the first read an agent is told to make,
    # is the folder's listing (agent QA: a bare not_found on a bundle with no root index)
    for missing, folder in (("index.md", "/"), ("/sub/index.md", "/sub")):
        listed = box.read_concept(path=missing)
        assert (listed["kind"], listed["path"]) == ("folder", folder), missing
        assert listed["note"] == "This folder has no index.md; here is what it holds."
    assert box.read_concept(path="nothere/index.md")["error"]["code"] == "not_found"


def test_okfx_read_on_a_folder_prints_its_listing(make_bundle: MakeBundle) -> None:
    root = make_bundle(FILES)
    result = CliRunner().invoke(cli, ["read", str(root), "sub/"])
    assert result.exit_code == 0, result.output
    assert "/sub/b.md" in result.output and "Bee" in result.output
    assert "/sub/deeper/" in result.output
    data = json.loads(CliRunner().invoke(cli, ["read", str(root), "sub/", "--json"]).output)
    assert data["kind"] == "folder"


def test_a_folders_listing_names_the_files_in_it_that_are_no_concept(
    make_bundle: MakeBundle,
) -> None:
    """Agent QA: a folder holding ``query.sql`` and ``blob.bin`` was listed as empty, so
    attached files were found only through a link or a failed read_resource."""
    root = make_bundle(
        {
            "a.md": concept(),
            "sub/c.md": concept(),
            "sub/query.sql": "select 1\n",
            "sub/deeper/x.sql": "select 2\n",
        }
    )
    box = Toolbox(Bundle.load(root))
    listing = box.read_concept("sub/")
    assert listing["kind"] == "folder" and listing["files"] == ["/sub/query.sql"]
    assert [c["path"] for c in listing["concepts"]] == ["/sub/c.md"]
    assert box.read_resource(listing["files"][0])["text"] == "select 1\n"
    assert box.read_concept("sub/deeper")["files"] == ["/sub/deeper/x.sql"]


def test_okfx_read_of_a_folder_names_its_files(make_bundle: MakeBundle) -> None:
    root = make_bundle({"sub/c.md": concept(), "sub/query.sql": "select 1\n"})
    result = CliRunner().invoke(cli, ["read", str(root), "sub/"])
    assert result.exit_code == 0, result.output
    assert "/sub/query.sql  (a file: okfx read shows it)" in result.output
