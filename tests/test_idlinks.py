"""Edges a producer names by id (``related: [k.orders]``), beyond the spec
(okfx.bundle.idlinks): drawn once every concept's ``id`` is known, on a load, a stored
state read back and a reload alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import concept
from okfx import Bundle, Toolbox
from okfx.bundle import state as state_module
from okfx.bundle.parse import declared_id, producer_ids

FILES = {
    "orders.md": concept("Table", "Rows.\n", id="k.orders"),
    "customers.md": concept(
        "Table",
        "Joined with [orders](orders.md).\n",
        id="k.customers",
        related="[k.orders, k.revenue]",
        prerequisites="k.ledger",
    ),
    "metrics/revenue.md": concept("Metric", "Sum.\n", id="k.revenue", related="[k.ordrs]"),
}


def test_relation_values_read_as_ids_when_they_are_no_paths() -> None:
    data = {
        "id": " k.a ",
        "related": ["k.b", "b.md", "../c.md", "a b", "x/y", 7, True, {"id": "k.c"}, ""],
        "see_also": "k-d",
        "source_file": "k.e",  # no relation key
    }
    assert declared_id(data) == "k.a"
    assert declared_id({"id": 42}) == "42" and declared_id({"id": "a b"}) is None
    assert declared_id({"id": True}) is None and declared_id({"id": "x" * 201}) is None
    assert producer_ids(data) == [("related", "k.b"), ("related", "7"), ("see_also", "k-d")]


def test_an_id_a_concept_declares_is_an_edge_to_it(make_bundle) -> None:
    bundle = Bundle.load(make_bundle(FILES), state_cache=False)
    links = bundle.concept("/customers.md").links
    # The body reaches orders.md already: its id draws nothing more.
    assert [(link.target, link.field, link.href, link.line, link.exists) for link in links] == [
        ("/orders.md", "body", "orders.md", 7, True),
        ("/metrics/revenue.md", "related", "k.revenue", 4, True),
    ]
    (back,) = bundle.neighbors("/metrics/revenue.md").backlinks
    assert (back.source, back.field, back.text) == ("/customers.md", "related", "k.revenue")


def test_an_id_no_concept_declares_is_reported_with_close_ids(make_bundle) -> None:
    bundle = Bundle.load(make_bundle(FILES), state_cache=False)
    found = [(w.path, w.code, w.message) for w in bundle.warnings if "_id" in w.code]
    assert [(path, code) for path, code, _ in found] == [
        ("/customers.md", "unknown_id"),
        ("/metrics/revenue.md", "unknown_id"),
    ]
    assert "prerequisites names the id 'k.ledger'" in found[0][2]
    assert found[0][2].endswith("(line 5)")
    assert "close: 'k.orders'" in found[1][2]
    assert bundle.concept("/metrics/revenue.md").links == ()


def test_without_declared_ids_such_values_are_no_edges_and_no_warnings(make_bundle) -> None:
    root = make_bundle({"a.md": concept("Note", "A.\n", related="[k8s-pod, b]")})
    bundle = Bundle.load(root, state_cache=False)
    assert bundle.concept("/a.md").links == () and bundle.warnings == []


def test_an_id_two_concepts_declare_draws_no_edge(make_bundle) -> None:
    root = make_bundle(
        {
            "a.md": concept("Note", "A.\n", id="dup"),
            "b.md": concept("Note", "B.\n", id="dup"),
            "c.md": concept("Note", "C.\n", related="[dup]"),
        }
    )
    bundle = Bundle.load(root, state_cache=False)
    assert bundle.concept("/c.md").links == ()
    assert [(w.path, w.code) for w in bundle.warnings] == [
        ("/a.md", "duplicate_id"),
        ("/b.md", "duplicate_id"),
        ("/c.md", "ambiguous_id"),
    ]
    assert "2 concepts declare (/a.md, /b.md)" in bundle.warnings[2].message
    assert "declared by 2 concepts (also /b.md)" in bundle.warnings[0].message


def test_a_stored_state_read_back_draws_the_same_edges(make_bundle, tmp_path: Path) -> None:
    root = make_bundle(FILES)
    cache = tmp_path / "state"
    first = Bundle.load(root, state_cache=cache)
    again = Bundle.load(root, state_cache=cache)
    assert [c.links for c in again] == [c.links for c in first]
    assert again.warnings == first.warnings
    assert again.neighbors("/metrics/revenue.md").backlinks == (
        first.neighbors("/metrics/revenue.md").backlinks
    )


def test_a_reload_redraws_edges_when_another_concept_changes_its_id(
    make_bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the file written is parsed again (none is read again for being too recent):
    # customers.md, which names the id, is not, and its edge still goes.
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)
    root = make_bundle(FILES)
    bundle = Bundle.load(root, state_cache=False)
    assert len(bundle.neighbors("/metrics/revenue.md").backlinks) == 1  # built, then carried
    (root / "metrics" / "revenue.md").write_text(concept("Metric", "Sum.\n", id="k.revenues"))
    reloaded = bundle.reload()
    assert reloaded.changes.changed == ["/metrics/revenue.md"]
    fresh = Bundle.load(root, state_cache=False)
    assert reloaded.neighbors("/metrics/revenue.md").backlinks == ()
    assert reloaded.backlink_map() == fresh.backlink_map()
    assert [c.links for c in reloaded] == [c.links for c in fresh]
    assert reloaded.warnings == fresh.warnings
    assert "'k.revenue'" in reloaded.warnings[0].message and "close: 'k.revenues'" in (
        reloaded.warnings[0].message
    )


def test_a_declared_id_names_its_concept_where_no_path_does(make_bundle) -> None:
    files = dict(FILES)
    files["b.md"] = concept("Note", "B.\n", id="dup")
    files["c.md"] = concept("Note", "C.\n", id="dup")
    files["k.orders.md"] = concept("Note", "A page named like an id.\n")
    bundle = Bundle.load(make_bundle(files), state_cache=False)
    assert bundle.concept("k.revenue").path == "/metrics/revenue.md"
    assert bundle.get("/k.customers").path == "/customers.md"
    assert bundle.get("k.orders").path == "/k.orders.md"  # a path always comes first
    assert bundle.get("dup") is None  # two concepts declare it
    box = Toolbox(bundle)
    read = box.read_concept("k.revenue")
    assert read["path"] == "/metrics/revenue.md"
    assert box.read_concept("k.nothing")["error"]["code"] == "not_found"


def test_an_unknown_id_in_a_list_names_its_own_line(make_bundle) -> None:
    text = "---\ntype: Note\nid: k.a\nrelated:\n  - k.a\n  - k.nope\n---\nA.\n"
    bundle = Bundle.load(make_bundle({"a.md": text}), state_cache=False)
    (warning,) = bundle.warnings
    assert warning.code == "unknown_id" and warning.message.endswith("(line 6)")


IDS = {
    "vsync.md": concept("Note", "A.\n", id="w.vsync"),
    "vsync_copy.md": concept("Note", "B.\n", id="w.vsync"),
    "tree.md": concept("Note", "C.\n", id="w.tree"),
    "anim.md": concept(
        "Note", "See [x](/gone.md).\n", related="[w.vsync, w.tre, w.tree, w.zzzzzz_unlike]"
    ),
}


def test_relation_ids_that_draw_no_edge_are_unresolved_links_of_their_concept(
    make_bundle,
) -> None:
    """Viewer QA: the Unresolved list of a concept said "none" beside two unknown ids and
    one ambiguous id, which only the problems named."""
    bundle = Bundle.load(make_bundle(IDS), state_cache=False)
    found = [(u.ref.value, u.code, u.paths) for u in bundle.unresolved_ids("anim")]
    assert found == [
        ("w.vsync", "ambiguous_id", ("/vsync.md", "/vsync_copy.md")),
        ("w.tre", "unknown_id", ("/tree.md",)),
        ("w.zzzzzz_unlike", "unknown_id", ()),
    ]
    assert bundle.unresolved_ids("tree") == [] and bundle.unresolved_ids("nothing") == []
    payload = Toolbox(bundle).get_neighbors(path="anim")
    unresolved = payload["unresolved"]
    assert [e.get("path") for e in unresolved] == ["/gone.md", None, None, None]
    assert unresolved[1] == {
        "id": "w.vsync",
        "field": "related",
        "text": "w.vsync",
        "line": 3,  # related: is the file's third line
        "exists": False,
        "reason": "ambiguous_id",
        "candidates": ["/vsync.md", "/vsync_copy.md"],
    }
    assert unresolved[2]["did_you_mean"] == "/tree.md" and "did_you_mean" not in unresolved[3]
    assert payload["total"]["unresolved"] == 4
    # paged with the links: the second page of one starts at the ambiguous id
    second = Toolbox(bundle).get_neighbors(path="anim", limit=1, offset=1)
    assert [e["id"] for e in second["unresolved"]] == ["w.vsync"]


def test_the_cli_and_the_viewer_list_unresolved_ids(make_bundle) -> None:
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    root = make_bundle(IDS)
    shown = CliRunner().invoke(cli, ["neighbors", str(root), "anim"]).output
    assert "Unresolved links (4)" in shown
    assert "id w.vsync (ambiguous_id)" in shown and "/vsync.md or /vsync_copy.md" in shown
    assert "id w.tre (unknown_id)" in shown
    starlette = pytest.importorskip("starlette.testclient")
    from okfx.web import create_app

    app = create_app(Bundle.load(root, "kb", state_cache=False))
    html = starlette.TestClient(app, base_url="http://127.0.0.1").get("/b/kb/c/anim.md").text
    assert '<h2 id="links-broken">Unresolved <span class="n">4</span></h2>' in html
    assert '<code>w.tre</code> <span class="quiet">no concept declares this id</span>' in html
    assert 'declared by <a href="/b/kb/c/vsync.md">/vsync.md</a>' in html
