"""Paths and sections as an agent writes them (agent QA, session 68): a link's href
copied from a body, a heading pasted in NFD, a fragment beside ``section``, a guessed
path with nothing close to it. Each comes back as a structured answer that says what
to do next; nothing above the root is read."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from conftest import concept, write_tree
from okfx import Bundle, KnowledgeManager, Toolbox

HEADING = "Adhyāsa — अध्यास"


def _box(tmp_path: Path) -> Toolbox:
    root = write_tree(
        tmp_path / "kb",
        {
            "runbooks/checkout.md": concept(body="See [the SLI](../slis/availability.md).\n"),
            "slis/availability.md": concept(
                title="Availability", body=f"# {HEADING}\n\nSuperimposition.\n\n# Other\n\nB.\n"
            ),
        },
    )
    return Toolbox(Bundle.load(root, state_cache=False))


def test_a_heading_in_nfd_reads_its_section(tmp_path: Path) -> None:
    box = _box(tmp_path)
    nfd = unicodedata.normalize("NFD", HEADING)
    assert nfd != HEADING
    read = box.read_concept(path="slis/availability.md", section=nfd)
    assert "error" not in read and read["body"].endswith("Superimposition.\n\n")


def test_a_fragment_beside_section_is_no_part_of_the_file_name(tmp_path: Path) -> None:
    box = _box(tmp_path)
    page = "slis/availability.md"
    assert box.read_concept(path=page + "#other", section="Other")["body"].endswith("B.\n")
    assert "error" not in box.read_concept(path=page + "#")  # a link copied short
    differ = box.read_concept(path=page + "#other", section=HEADING)["error"]
    assert differ["code"] == "invalid_argument" and "pass one of them" in differ["message"]


def test_a_href_copied_from_a_body_is_refused_naming_the_page_it_means(tmp_path: Path) -> None:
    box = _box(tmp_path)
    for call in (box.read_concept, box.get_neighbors, box.read_resource):
        error = call(path="../slis/availability.md")["error"]
        assert error["code"] == "unsafe_path"
        assert error["did_you_mean"] == ["/slis/availability.md"]
    # a climb that names nothing of the bundle names nothing
    error = box.read_concept(path="../../etc/passwd")["error"]
    assert error["code"] == "unsafe_path" and "did_you_mean" not in error


def test_a_guessed_path_with_nothing_close_says_how_to_find_a_page(tmp_path: Path) -> None:
    box = _box(tmp_path)
    error = box.read_concept(path="/kubernetes/pod-restarts-zz.md")["error"]
    assert error["code"] == "not_found" and "did_you_mean" not in error
    assert "the bundle has no folder /kubernetes/" in error["message"]
    assert error["message"].endswith("search_concepts, or browse with list_concepts")
    error = box.get_neighbors(path="/kubernetes/pod-restarts-zz.md")["error"]
    assert "search_concepts" in error["message"]
    other = Bundle.load(write_tree(tmp_path / "other", {"x.md": concept()}), state_cache=False)
    two = Toolbox(KnowledgeManager([box.manager.bundles["kb"], other]))
    error = two.read_concept(path="/kubernetes/pod-restarts-zz.md")["error"]
    assert error["message"].startswith("no loaded bundle holds")
    assert "search_concepts" in error["message"]


def test_a_directory_written_as_an_address_is_its_bundle_and_folder(tmp_path: Path) -> None:
    """Agent QA F6: directory='okf://kb/slis' listed nothing, as the folder '/okf:/kb/slis/'."""
    box = _box(tmp_path)
    for directory in ("okf://kb/slis", "kb:/slis", "okf://kb/slis/", "/slis"):
        rows = box.list_concepts(directory=directory)
        assert [row["path"] for row in rows["concepts"]] == ["/slis/availability.md"], directory
        hits = box.search_concepts(query="availability", directory=directory)["hits"]
        assert [hit["path"] for hit in hits] == ["/slis/availability.md"], directory
        found = box.grep_concepts(pattern="Superimposition", directory=directory)
        assert found["concepts"] == 1, directory
    error = box.list_concepts(directory="okf://kb/slis", bundle="other")["error"]
    assert error["code"] in ("invalid_argument", "not_found")


def test_a_file_asked_by_its_name_is_suggested_wherever_it_lies(tmp_path: Path) -> None:
    """Agent QA F4: read_resource('wiki-rag-flow.svg') suggested a concept page, never the
    bundle's /raw/assets/wiki-rag-flow.svg; 'viz' nothing, for /viz.html."""
    root = write_tree(
        tmp_path / "kb",
        {
            "raw/assets/flow.svg": "<svg/>",
            "viz.html": "<html></html>",
            "assets/asset-flow.md": concept(title="Asset flow"),
        },
    )
    box = Toolbox(Bundle.load(root, state_cache=False))
    error = box.read_resource(path="flow.svg")["error"]
    assert error["did_you_mean"][0] == "/raw/assets/flow.svg"
    assert box.read_resource(path="viz")["error"]["did_you_mean"][0] == "/viz.html"
    other = Bundle.load(write_tree(tmp_path / "other", {"x.md": concept()}), state_cache=False)
    two = Toolbox(KnowledgeManager([box.manager.bundles["kb"], other]))
    error = two.read_resource(path="assets/flow.svg")["error"]
    assert error["did_you_mean"][0] == "okf://kb/raw/assets/flow.svg"


def test_a_sentence_wrapped_across_lines_is_said_to_be_there(tmp_path: Path) -> None:
    """Agent QA F10: grep for a sentence the page hard-wraps said "No concept holds the
    exact text", which an agent checking a quote reads as "the bundle does not say it"."""
    root = write_tree(
        tmp_path / "kb",
        {"slo.md": concept(body="allows a larger amount of partial\ndegradation.\n")},
    )
    box = Toolbox(Bundle.load(root, state_cache=False))
    found = box.grep_concepts(pattern="larger amount of partial degradation")
    assert found["concepts"] == 0
    assert found["notice"].startswith("No match on one line; 1 concept(s) hold the text across")
    assert "(/slo.md)" in found["notice"]
    spaced = r"larger\s+amount\s+of\s+partial\s+degradation"
    assert f"pass regex=true with {spaced!r} to see where" in found["notice"]
    assert box.grep_concepts(pattern=spaced, regex=True)["concepts"] == 1
    nowhere = box.grep_concepts(pattern="larger amount of total degradation")
    assert nowhere["notice"].startswith("No concept holds the exact text")


def test_an_address_in_capitals_and_a_blank_section_read_as_expected(tmp_path: Path) -> None:
    """Agent QA notes: OKF:// was no address (schemes are case-insensitive), and
    section="" read the whole body while section=" " was not found."""
    box = _box(tmp_path)
    assert box.read_concept(path="OKF://kb/slis/availability.md")["title"] == "Availability"
    whole = box.read_concept(path="slis/availability.md")["body"]
    for blank in ("", "   "):
        read = box.read_concept(path="slis/availability.md", section=blank)
        assert read["body"] == whole and read.get("section") is None


def test_an_index_excerpt_cut_in_a_long_line_keeps_most_of_its_budget(tmp_path: Path) -> None:
    """Agent QA N8: a heading, then a 2,000-character paragraph line: the excerpt backed up
    to the line end and showed 90 of its 600 characters."""
    paragraph = " ".join(f"Sentence {i} says something." for i in range(120))
    root = write_tree(
        tmp_path / "kb", {"index.md": f"# Kb\n\n## Part\n\n{paragraph}\n", "a.md": concept()}
    )
    row = Toolbox(Bundle.load(root, state_cache=False)).list_bundles()["bundles"][0]
    shown = row["index"].partition("\n[index cut:")[0]
    assert len(shown) >= 300 and shown.endswith("something.")


def test_the_block_for_several_bundles_says_how_to_read_one_bundles_index(
    tmp_path: Path,
) -> None:
    """Agent QA N3: with seven bundles, the block's first step, read_concept("index.md"),
    answered invalid_argument: every bundle has one."""
    box = _box(tmp_path)
    other = Bundle.load(write_tree(tmp_path / "other", {"x.md": concept()}), state_cache=False)
    two = Toolbox(KnowledgeManager([box.manager.bundles["kb"], other]))
    assert 'read_concept("index.md", bundle=...)' in two.manager.prompt()
    assert "error" not in two.read_concept(path="index.md", bundle="other")


def test_read_resource_reads_a_smaller_page_when_asked(tmp_path: Path) -> None:
    """Agent QA N6: one call on a minified script gave 72 KB, and read_resource could not
    be asked for less."""
    root = write_tree(tmp_path / "kb", {"a.md": concept(), "big.js": "x = 1;\n" * 20_000})
    box = Toolbox(Bundle.load(root, state_cache=False))
    page = box.read_resource(path="big.js", max_bytes=1000)
    assert len(page["text"].encode()) <= 1000 and page["next_offset"] == len(page["text"])
    assert "max_bytes=1000" in page["truncation"]
    rest = box.read_resource(path="big.js", offset=page["next_offset"], max_bytes=1000)
    assert rest["offset"] == page["next_offset"]
    assert len(box.read_resource(path="big.js", max_bytes=10**9)["text"]) == 65_534 // 7 * 7
    error = box.read_resource(path="big.js", max_bytes=10)["error"]
    assert error["code"] == "invalid_argument"


def test_the_block_says_when_a_source_given_did_not_load(tmp_path: Path) -> None:
    """Agent QA N1: a failed source was in list_bundles only; the block, often all a model
    sees, did not say it, and the agent answered "not in the knowledge base"."""
    box = _box(tmp_path)
    assert "did not load" not in box.manager.prompt()
    box.manager.note_unavailable(str(tmp_path / "typo" / "bundle"), "not found")
    said = box.manager.prompt()
    assert "[1 source given did not load, so its knowledge is not here: list_bundles" in said
    assert str(tmp_path) not in said  # no host path to the model


def test_a_section_read_in_parts_does_not_offer_to_read_one_section(tmp_path: Path) -> None:
    """Agent QA N7: a cut section read ended "... or read one section"."""
    long = "\n\n".join(f"Paragraph {i} of the section." for i in range(200))
    root = write_tree(
        tmp_path / "kb", {"a.md": concept(body=f"# Part\n\n{long}\n\n# Other\n\nB.\n")}
    )
    box = Toolbox(Bundle.load(root, state_cache=False))
    part = box.read_concept(path="a.md", section="Part", max_chars=500)
    assert part["truncation"].endswith("for the rest]")
    whole = box.read_concept(path="a.md", max_chars=500)
    assert whole["truncation"].endswith("for the rest, or read one section]")
