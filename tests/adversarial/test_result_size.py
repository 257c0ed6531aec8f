"""A tool result stays small however large the bundle's frontmatter is.

With 250 KB descriptions, ``list_concepts`` returned 52.7 MB, ``search_concepts`` 12.3 MB
and one ``read_concept`` 0.53 MB, the description twice (issue 16). Every bundle-derived
field is cut at its cap with a visible marker, lists at a count, each result at
:data:`okfx.tools.caps.RESULT_CHARS`, saying what it left out, and no field is repeated.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hostile import call, concept, write

from okfx import Bundle, Toolbox
from okfx.tools import caps
from okfx.tools.caps import RESULT_CHARS, json_chars

BIG = 250_000
WORD = "dolor "


def big(n: int = BIG, word: str = WORD) -> str:
    return (word * (n // len(word) + 1))[:n]


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Toolbox:
    root = tmp_path_factory.mktemp("big")
    files: dict[str, str | bytes] = {}
    for i in range(40):  # 10 MB of descriptions, all matching "lorem"
        files[f"d/c{i:02}.md"] = concept(
            description=big(), body=f"lorem [hub](/hub.md)\n# {big(20_000, 'x')}\n"
        )
    files["t/title.md"] = concept(
        title=big(150_000), tags="[" + ", ".join(f"t{i}" + "t" * 500 for i in range(150)) + "]"
    )
    files["t/ext.md"] = concept(owner=big(200_000), body="lorem " + big(300_000))
    files["t/sources.md"] = concept(
        sources="\n"
        + "".join(f"  - {{resource: /x{i}.md, title: {'s' * 900}}}\n" for i in range(200))
    )
    files["hub.md"] = concept(title="hub")
    for i in range(1_500):  # backlinks, each from a concept with a long title
        files[f"e/l{i:04}.md"] = concept(title="l" * 290, body="[hub](/hub.md)")
    return Toolbox(Bundle.load(write(root, files)))


def within_budget(result: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in result, result
    size = json_chars(result)
    assert size <= RESULT_CHARS, f"{size} characters"
    return result


def test_list_concepts_pages_stay_within_the_budget_and_say_where_to_go_on(box: Toolbox) -> None:
    seen = 0
    offset: int | None = 0
    while offset is not None and seen < 60:
        page = within_budget(call(box, "list_concepts", directory="/d", limit=200, offset=offset))
        for row in page["concepts"]:
            assert len(row["description"]) < caps.DESCRIPTION_CHARS + 50
            assert row["description"].endswith("more characters]")
        seen += len(page["concepts"])
        offset = page["next_offset"]
    assert seen == 40  # every row is reachable by paging


def test_a_title_and_tags_are_capped_in_rows(box: Toolbox) -> None:
    [row] = call(box, "list_concepts", directory="/t", type="Metric", limit=200)["concepts"][2:]
    assert row["path"] == "/t/title.md"
    assert len(row["title"]) < caps.TITLE_CHARS + 50 and "…[cut: " in row["title"]
    assert len(row["tags"]) <= caps.ITEMS and any("tags" in note for note in row["cut"])
    assert all(len(tag) < caps.LABEL_CHARS + 50 for tag in row["tags"])


def test_search_results_stay_within_the_budget(box: Toolbox) -> None:
    result = within_budget(call(box, "search_concepts", query="dolor", limit=50))
    assert result["hits"] and all(len(h["description"]) < 1_100 for h in result["hits"])


def test_grep_results_stay_within_the_budget(box: Toolbox) -> None:
    within_budget(call(box, "grep_concepts", pattern="dolor", limit=200))


def test_read_concept_never_repeats_a_field_and_caps_extensions(box: Toolbox) -> None:
    result = within_budget(call(box, "read_concept", path="d/c00"))
    assert "description" not in result["extensions"] and "type" not in result["extensions"]
    assert (
        json.dumps(result, ensure_ascii=False).count(result["description"]) == 1
    )  # not under "frontmatter"
    ext = within_budget(call(box, "read_concept", path="t/ext", max_chars=100_000))
    assert ext["extensions"]["owner"].endswith("more characters]")
    assert ext["truncated"] is True and ext["next_offset"] == len(ext["body"])
    rest = within_budget(
        call(box, "read_concept", path="t/ext", offset=ext["next_offset"], max_chars=100_000)
    )
    assert rest["offset"] == ext["next_offset"]


def test_headings_and_sources_are_capped_in_the_header(box: Toolbox) -> None:
    result = within_budget(call(box, "read_concept", path="d/c01"))
    assert all(len(h) < caps.TITLE_CHARS + 50 for h in result["headings"])
    sources = within_budget(call(box, "read_concept", path="t/sources"))
    assert len(sources["sources"]) == caps.ITEMS
    assert any("sources" in note for note in sources["cut"])
    assert all(len(s["title"]) < caps.VALUE_CHARS + 50 for s in sources["sources"])


def test_neighbors_of_a_hub_stay_within_the_budget(box: Toolbox) -> None:
    result = within_budget(call(box, "get_neighbors", path="hub"))
    assert len(result["backlinks"]) == caps.NEIGHBORS_PAGE
    assert result["total"]["backlinks"] == 1540 and "1540" in result["cut"]
    assert result["next_offset"] == caps.NEIGHBORS_PAGE


def test_a_hubs_pages_cut_by_the_budget_go_on_where_they_stopped(box: Toolbox) -> None:
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = within_budget(
            call(box, "get_neighbors", path="hub", limit=caps.EDGES, offset=offset)
        )
        assert page["offset"] == offset
        seen += [edge["path"] for edge in page["backlinks"]]
        offset = page["next_offset"]
        assert offset is None or offset == page["offset"] + len(page["backlinks"])
    assert len(seen) == len(set(seen)) == 1540  # the size cap kept < 500: none skipped


def test_list_bundles_stays_within_the_budget(box: Toolbox) -> None:
    within_budget(call(box, "list_bundles"))


def test_a_heading_repeated_a_hundred_thousand_times_gives_a_short_notice(
    tmp_path: Any,
) -> None:
    """Security QA: read_concept(section='h') of a page of a million '# h' headings named
    every other id in its notice, 11.9 million characters, past the result cap."""
    root = write(tmp_path / "b", {"h.md": concept(body="# h\n\ntext\n" * 100_000)})
    result = Toolbox(Bundle.load(root)).read_concept(path="h", section="h")
    notice = result["notice"]
    assert notice.startswith("100000 sections are headed 'h'; this is the first: ask for")
    assert "'h-10' and 99989 more (numbered on)" in notice and len(notice) < 400
    assert len(json.dumps(result)) <= 131_072
