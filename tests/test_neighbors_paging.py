"""``get_neighbors`` pages a hub's links: ``limit`` edges of each list from ``offset``,
with ``total`` and ``next_offset``, as ``list_concepts`` pages rows (platform QA: the
index page of a 5,120-concept bundle gave 130k characters and no way to the rest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import concept
from okfx import Bundle, Toolbox
from okfx.cli.commands import cli
from okfx.tools import caps


def hub_bundle(root: Path, out: int, back: int, broken: int) -> Path:
    """A hub linking ``out`` concepts and ``broken`` missing pages, linked from ``back``."""
    links = [f"[o{i}](/o/{i:03}.md)" for i in range(out)]
    links += [f"[gone{i}](/gone/{i:03}.md)" for i in range(broken)]
    files = {"hub.md": concept(title="Hub", body="\n".join(links) + "\n")}
    for i in range(out):
        files[f"o/{i:03}.md"] = concept(title=f"Out {i}")
    for i in range(back):
        files[f"b/{i:03}.md"] = concept(title=f"Back {i}", body="[hub](/hub.md) [again](/hub.md)")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Toolbox:
    return Toolbox(Bundle.load(hub_bundle(tmp_path_factory.mktemp("hub"), 23, 17, 5)))


def all_pages(box: Toolbox, limit: int) -> tuple[dict[str, list[str]], list[dict]]:
    lists: dict[str, list[str]] = {"outbound": [], "backlinks": [], "unresolved": []}
    pages = []
    offset: int | None = 0
    while offset is not None:
        page = box.get_neighbors(path="hub", limit=limit, offset=offset)
        assert "error" not in page, page
        pages.append(page)
        for key, seen in lists.items():
            seen += [edge["path"] for edge in page[key]]
        offset = page["next_offset"]
    return lists, pages


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(limit=st.integers(1, 30))
def test_pages_give_every_edge_once_in_order(hub: Toolbox, limit: int) -> None:
    whole = hub.get_neighbors(path="hub", limit=caps.EDGES)
    lists, pages = all_pages(hub, limit)
    for key, seen in lists.items():
        assert seen == [edge["path"] for edge in whole[key]]  # none skipped, none twice
    assert whole["total"] == {"outbound": 23, "backlinks": 17, "unresolved": 5, "listed_in": 0}
    assert len(pages) == -(-23 // limit)  # the longest list decides how many pages
    assert all(page["total"] == whole["total"] for page in pages)


def test_a_page_says_what_it_shows_and_how_to_go_on(hub: Toolbox) -> None:
    page = hub.get_neighbors(path="hub", limit=10, offset=10)
    assert [e["path"] for e in page["outbound"]][:2] == ["/o/010.md", "/o/011.md"]
    assert len(page["backlinks"]) == 7 and page["unresolved"] == []
    assert page["offset"] == 10 and page["next_offset"] == 20
    assert "outbound: 11-20 of 23 shown" in page["cut"]
    assert "get_neighbors(path='/hub.md', offset=20)" in page["cut"]
    last = hub.get_neighbors(path="hub", limit=10, offset=20)
    assert last["next_offset"] is None and "cut" not in last


def test_a_backlink_written_twice_is_one_edge(hub: Toolbox) -> None:
    page = hub.get_neighbors(path="hub")
    assert page["total"]["backlinks"] == 17 == len(page["backlinks"])


def test_an_offset_past_every_list_says_so(hub: Toolbox) -> None:
    page = hub.get_neighbors(path="hub", offset=40)
    assert page["outbound"] == page["backlinks"] == [] and page["next_offset"] is None
    assert "past the end of every list: the longest has 23" in page["cut"]


@pytest.mark.parametrize(
    ("limit", "offset"), [(0, 0), (-1, 0), (5, -3), ("ten", 0), (True, 0), (5, 1.5)]
)
def test_a_bad_page_is_invalid_argument(hub: Toolbox, limit: object, offset: object) -> None:
    result = hub.get_neighbors(path="hub", limit=limit, offset=offset)  # type: ignore[arg-type]
    assert result["error"]["code"] == "invalid_argument"


def test_a_limit_over_the_cap_is_the_cap(hub: Toolbox) -> None:
    assert len(hub.get_neighbors(path="hub", limit=10_000)["outbound"]) == 23


def test_the_cli_pages_with_limit_and_offset(tmp_path: Path) -> None:
    root = hub_bundle(tmp_path / "b", 23, 3, 0)
    result = CliRunner().invoke(
        cli, ["neighbors", str(root), "hub", "--limit", "5", "--offset", "5"]
    )
    assert result.exit_code == 0, result.output
    assert "Links to (6-10 of 23)" in result.output
    assert "/o/005.md" in result.output and "/o/010.md" not in result.output
    assert "Linked from (none here of 3)" in result.output
    assert "More links: --offset 10" in result.output
