"""A read in parts says when the text changed between the parts (edit QA: an author's
save between two ``read_concept`` parts gave a text that never existed, and no notice)."""

from __future__ import annotations

from pathlib import Path

from conftest import MakeBundle, concept
from okfx import Bundle, KnowledgeManager, Toolbox

PARAGRAPHS = "".join(f"Paragraph {i} of the guide, with some words in it.\n\n" for i in range(60))
BODY = f"# Guide\n\n## Setup\n\nInstall it, then run it.\n\n## Usage\n\n{PARAGRAPHS}"


def _box(root: Path) -> tuple[Toolbox, KnowledgeManager]:
    manager = KnowledgeManager([Bundle.load(root)])
    return Toolbox(manager), manager


def test_a_part_read_after_an_edit_says_the_body_changed(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {"guide.md": concept(title="Guide", body=BODY), "q.sql": "select 1;\n" * 9000}
    )
    box, manager = _box(root)
    first = box.read_concept(path="guide", max_chars=500)
    stamp, at = first["version"], first["next_offset"]
    assert f"version={stamp!r}" in first["truncation"]
    # unchanged: the same version, no notice
    same = box.read_concept(path="guide", offset=at, version=stamp)
    assert same["version"] == stamp and "notice" not in same
    # the author inserts paragraphs near the top; the server reloads
    text = (root / "guide.md").read_text()
    (root / "guide.md").write_text(text.replace("## Setup", "New lines.\n\n" * 30 + "## Setup"))
    manager.reload()
    moved = box.read_concept(path="guide", offset=at, version=stamp)
    assert moved["version"] != stamp
    assert moved["notice"].startswith(f"CHANGED: the body changed since the part that gave "
                                      f"version {stamp!r} was read")  # fmt: skip
    assert "read it again from offset 0" in moved["notice"]
    # a bad version argument is an invalid argument, not a crash
    assert box.read_concept(path="guide", version=7)["error"]["code"] == "invalid_argument"


def test_a_section_read_in_parts_is_left_alone_by_an_edit_elsewhere(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle({"guide.md": concept(title="Guide", body=BODY)})
    box, manager = _box(root)
    first = box.read_concept(path="guide", section="Usage", max_chars=400)
    stamp = first["version"]
    text = (root / "guide.md").read_text()
    (root / "guide.md").write_text(text.replace("Install it", "Download and install it"))
    manager.reload()
    rest = box.read_concept(
        path="guide", section="Usage", offset=first["next_offset"], version=stamp
    )
    assert rest["version"] == stamp and "notice" not in rest
    whole = box.read_concept(path="guide", offset=10, version=stamp)  # the body's is another
    assert whole["notice"].startswith("CHANGED: the body changed")


def test_a_file_read_in_parts_says_when_it_changed(make_bundle: MakeBundle) -> None:
    root = make_bundle({"a.md": concept(), "q.sql": "select 1;\n" * 9000})
    box, _ = _box(root)
    first = box.read_resource(path="q.sql")
    stamp = first["version"]
    assert first["truncated"] and f"version={stamp!r}" in first["truncation"]
    assert "notice" not in box.read_resource(
        path="q.sql", offset=first["next_offset"], version=stamp
    )
    (root / "q.sql").write_text("-- a header\n" + "select 1;\n" * 9000)
    later = box.read_resource(path="q.sql", offset=first["next_offset"], version=stamp)
    assert later["version"] != stamp
    assert later["notice"].startswith("CHANGED: the file changed since the part")
    # from the start there is nothing to read again (agent QA N7)
    again = box.read_resource(path="q.sql", version=stamp)
    assert again["notice"].endswith("this read, from offset 0, is of the new text: what you "
                                    "read before may differ from it.")  # fmt: skip
    assert "read it again from offset 0" not in again["notice"]


def test_a_listing_page_after_concepts_came_says_the_offsets_shifted(
    make_bundle: MakeBundle,
) -> None:
    """Edit QA F4: list_concepts offsets shift across a reload, a page repeated a row,
    and nothing said so."""
    root = make_bundle({f"c{i:02}.md": concept(title=f"C{i}") for i in range(12)})
    box, manager = _box(root)
    first = box.list_concepts(limit=5)
    stamp = first["version"]
    same = box.list_concepts(limit=5, offset=5, version=stamp)
    assert same["version"] == stamp and same["notice"] == ""
    (root / "a00.md").write_text(concept(title="First now"), encoding="utf-8")
    manager.reload()
    later = box.list_concepts(limit=5, offset=5, version=stamp)
    assert later["version"] != stamp
    assert later["notice"].startswith(f"CHANGED: the listing changed since the part that gave "
                                      f"version {stamp!r}")  # fmt: skip
    assert "list again from offset 0" in later["notice"]
    # a body edit leaves the listing's version alone
    again = box.list_concepts(limit=5)["version"]
    (root / "c03.md").write_text(concept(title="C3", body="Other words.\n"), encoding="utf-8")
    manager.reload()
    assert box.list_concepts(limit=5)["version"] == again
