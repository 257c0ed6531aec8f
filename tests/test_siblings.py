"""A link that leaves its bundle and lands in another loaded bundle names that document
(new-producers QA F8: dharma-okf's 13 sibling bundles link each other's pages)."""

from __future__ import annotations

from pathlib import Path

from conftest import concept, write_tree
from okfx import Bundle, KnowledgeManager, Toolbox
from okfx.tools.siblings import landing


def _pair(root: Path, body: str) -> tuple[Bundle, Bundle]:
    left = Bundle.load(write_tree(root / "okf" / "left", {"c/p.md": concept(body=body)}))
    right = write_tree(
        root / "okf" / "right",
        {"c/x.md": concept(title="X"), "c/y/index.md": "# Y\n", "c/z.md": concept()},
    )
    return left, Bundle.load(right)


def test_a_link_into_a_loaded_sibling_names_its_document(tmp_path: Path) -> None:
    left, right = _pair(tmp_path, "")
    both = {"left": left, "right": right}
    assert landing(both, left, "/c", "../../right/c/x.md#usage") == ("right", "/c/x.md")
    assert landing(both, left, "/c", "../../right/c/z") == ("right", "/c/z.md")
    assert landing(both, left, "/c", "../../right/c/y/") == ("right", "/c/y/index.md")
    assert landing(both, left, "/c", "../../right/c/gone.md") is None
    assert landing(both, left, "/c", "../../elsewhere/x.md") is None
    assert landing(both, left, "/c", "../../right/../right/c/x.md") == ("right", "/c/x.md")
    assert landing({"left": left}, left, "/c", "../../right/c/x.md") is None  # not loaded
    # a sibling whose name starts as another's does is no place inside it
    assert landing(both, left, "/c", "../../right2/c/x.md") is None


def test_get_neighbors_says_where_a_leaving_link_lands(tmp_path: Path) -> None:
    body = "[twin](../../right/c/x.md) and [gone](../../right/c/nope.md)\n"
    left, right = _pair(tmp_path, body)
    box = Toolbox(KnowledgeManager([left, right]))
    leaving = box.get_neighbors(path="c/p.md", bundle="left")["leaves_bundle"]
    assert [(e["href"], e.get("bundle"), e.get("path")) for e in leaving] == [
        ("../../right/c/x.md", "right", "/c/x.md"),
        ("../../right/c/nope.md", None, None),
    ]
    # what it names reads as it says
    read = box.read_concept(path=leaving[0]["path"], bundle=leaving[0]["bundle"])
    assert read["title"] == "X"
    # alone, the same link names nothing
    alone = Toolbox(left).get_neighbors(path="c/p.md")["leaves_bundle"]
    assert [set(e) & {"bundle", "path"} for e in alone] == [set(), set()]
