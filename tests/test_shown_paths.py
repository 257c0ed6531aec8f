"""A path written as okfx shows it, ``bundle:/path.md``, reads in every tool (new-producers
QA: the CLI and the viewer print that form and ``okfx read`` takes it back, and over MCP
``read_concept`` answered that no loaded bundle held it)."""

from __future__ import annotations

from conftest import MakeBundle, concept
from okfx import Bundle, KnowledgeManager, Toolbox


def test_bundle_colon_path_reads_in_the_bundle_it_names(make_bundle: MakeBundle) -> None:
    slo = make_bundle({"runbooks/checkout.md": concept(title="Checkout runbook"), "q.sql": "x"})
    dbt = make_bundle({"runbooks/checkout.md": concept(title="Other"), "a.md": concept()})
    box = Toolbox(KnowledgeManager([Bundle.load(slo, name="slo"), Bundle.load(dbt, name="dbt")]))
    read = box.read_concept(path="slo:/runbooks/checkout.md")
    assert (read["bundle"], read["path"], read["title"]) == (
        "slo",
        "/runbooks/checkout.md",
        "Checkout runbook",
    )
    assert box.get_neighbors(path="dbt:/runbooks/checkout.md")["bundle"] == "dbt"
    assert box.read_resource(path="slo:/q.sql")["text"] == "x"
    assert box.read_concept(path="slo:/runbooks/checkout.md", bundle="slo")["bundle"] == "slo"
    refused = box.read_concept(path="slo:/runbooks/checkout.md", bundle="dbt")
    assert refused["error"]["code"] == "invalid_argument"
    # a name that is no loaded bundle is a path as any other
    assert box.read_concept(path="ops:/x.md")["error"]["code"] == "not_found"


def test_a_hidden_target_is_said_to_be_skipped_not_missing(make_bundle: MakeBundle) -> None:
    """New-producers QA: AS215932's org page links its .github repository's page,
    .github.md, which okfx skips as hidden; the link "does not exist" and read answered a
    bare not_found, and the author looked for a typo."""
    root = make_bundle(
        {
            "r/.github.md": concept(title="GitHub"),
            "org.md": concept(body="[gh](r/.github.md) and [notes](.notes/a.md)\n"),
        }
    )
    bundle = Bundle.load(root)
    said = sorted(w.message for w in bundle.warnings if w.code == "broken_link")
    hidden = "is a hidden name (it starts with '.'), and okfx skips hidden files and folders"
    assert len(said) == 2 and all("which okfx does not read: " in m and hidden in m for m in said)
    box = Toolbox(bundle)
    for read in (box.read_concept(path="r/.github.md"), box.read_resource(path="r/.github.md")):
        assert read["error"]["code"] == "not_found"
        assert "'.github.md' " + hidden in read["error"]["message"]
