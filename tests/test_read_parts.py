"""Reading the part of a page a link names, and pages that end on whole words
(okf-studio QA: anchors were dropped, pages were cut mid-word)."""

from __future__ import annotations

from conftest import MakeBundle, concept
from okfx import Bundle, Toolbox

BODY = "Intro.\n\n## Setup steps\n\nInstall it.\n\n## Usage\n\nRun it.\n"


def test_a_path_with_a_fragment_reads_that_section(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {"a.md": concept("Note", BODY), "b.md": concept("Note", "See [setup](a.md#setup-steps).\n")}
    )
    box = Toolbox(Bundle.load(root))
    read = box.read_concept("a.md#setup-steps")
    assert read["section"] == "setup-steps" and read["body"].startswith("## Setup steps")
    assert "Usage" not in read["body"]
    assert box.read_concept("a.md#nothing")["error"]["code"] == "not_found"  # no such section
    (edge,) = box.get_neighbors("b.md")["outbound"]
    assert (edge["path"], edge["section"]) == ("/a.md", "setup-steps")
    (back,) = box.get_neighbors("a.md")["backlinks"]
    assert back["section"] == "setup-steps"


def test_a_cut_page_ends_at_a_line_or_word_end(make_bundle: MakeBundle) -> None:
    words = " ".join(f"word{i:04d}" for i in range(400))  # one long line of 3,600 chars
    root = make_bundle({"a.md": concept("Note", words + "\n")})
    box = Toolbox(Bundle.load(root))
    first = box.read_concept("a.md", max_chars=1000)
    assert first["truncated"] and first["body"].endswith(" ")
    second = box.read_concept("a.md", offset=first["next_offset"], max_chars=1000)
    assert second["body"].startswith("word")
    assert (first["body"] + second["body"]).split()[:200] == words.split()[:200]
    cjk = make_bundle({"c.md": concept("Note", "缓存" * 800 + "\n")})
    page = Toolbox(Bundle.load(cjk)).read_concept("c.md", max_chars=1001)
    assert len(page["body"]) == 1001  # no blank to end on: cut where it must be


def test_a_section_asked_by_some_of_its_words_is_read_when_one_heading_holds_them(
    make_bundle: MakeBundle,
) -> None:
    """Agent QA: section="Merge" for a page whose only such heading is "Merge precedence"
    was not found. Words held by two headings stay not found, naming both."""
    body = "## Merge precedence\n\nLast wins.\n\n## Failure behavior\n\nStops.\n\n"
    body += "## Retry policy\n\nThrice.\n\n## Retry budget\n\nTen.\n"
    box = Toolbox(Bundle.load(make_bundle({"a.md": concept("Note", body)})))
    read = box.read_concept("a.md", section="merge")
    assert read["body"].startswith("## Merge precedence") and "Stops" not in read["body"]
    assert read["notice"] == (
        "No heading is 'merge'; this is the section headed 'Merge precedence'."
    )
    assert box.read_concept("a.md", section="Merge prec")["error"]["code"] == "not_found"
    both = box.read_concept("a.md", section="retry")["error"]
    assert both["code"] == "not_found" and both["did_you_mean"][:2] == [
        "Retry policy",
        "Retry budget",
    ]
    assert both["message"] == (
        "no section 'retry': 2 headings hold it ('Retry policy'; 'Retry budget'); ask for one"
    )
    nothing = box.read_concept("a.md", section="zebra")["error"]
    assert nothing["message"].endswith(
        "the page's 4 headings are in did_you_mean, the closest first"
    )
    assert len(nothing["did_you_mean"]) == 4  # each heading once (CLI QA: listed twice)


def test_a_section_asked_by_a_cjk_word_of_its_heading_is_read(make_bundle: MakeBundle) -> None:
    """CLI QA: 状态机 did not find "1.2 状态机：`SidebarProvider`" (no spaces between
    CJK words), though an English word of a heading finds it."""
    body = "## 1.1 尺寸常量\n\n宽度。\n\n## 1.2 状态机：`SidebarProvider`\n\n打开或折叠。\n"
    box = Toolbox(Bundle.load(make_bundle({"a.md": concept("Note", body)})))
    read = box.read_concept("a.md", section="状态机")
    assert read["body"].startswith("## 1.2 状态机") and "宽度" not in read["body"], read


def test_a_path_copied_from_a_links_href_is_read_decoded(make_bundle: MakeBundle) -> None:
    """Agent QA: get_neighbors named a link to ``my%20file.md`` as ``/my file.md``, but
    read_concept of the href the body shows was not found. A file whose name holds the
    ``%20`` itself is read as written; a decoded ``..`` is refused like any."""
    root = make_bundle(
        {
            "a.md": concept("Note", "[spaced](my%20file.md) [odd](odd%2520name.md)\n"),
            "my file.md": concept("Note", "Spaced out.\n"),
            "odd%20name.md": concept("Note", "Named with a percent.\n"),
        }
    )
    box = Toolbox(Bundle.load(root))
    read = box.read_concept("/my%20file.md")
    assert read["path"] == "/my file.md" and "Spaced out." in read["body"]
    assert box.get_neighbors("my%20file.md")["backlinks"][0]["path"] == "/a.md"
    assert "Named with a percent." in box.read_concept("odd%20name.md")["body"]
    assert box.read_concept("%2e%2e/%2e%2e/etc/passwd")["error"]["code"] == "not_found"


def test_a_cut_whose_rest_is_only_footnotes_says_so(make_bundle: MakeBundle) -> None:
    """Agent QA: in a bundle whose footnotes repeat its sources, the read a cut asked for
    brought only footnote definitions (9 of 13 cut pages); the cut now says the rest is
    footnotes, whose sources the header already gives."""
    prose = "Words of the page. " * 30 + "[^a] [^b]\n\n"
    notes = "".join(f"[^{x}]: [Source {x}](https://example.org/{x})\n" for x in "ab")
    root = make_bundle({"p.md": concept("Note", prose + notes), "q.md": concept("Note", prose)})
    box = Toolbox(Bundle.load(root))
    cut = box.read_concept("p.md", max_chars=len(prose) + 5)
    assert cut["truncated"] and cut["truncation"].startswith(
        "[cut: the rest is 2 footnote definition(s), "
    )
    rest = box.read_concept("p.md", offset=cut["next_offset"])["body"]
    assert "Source b" in rest and "Words" not in rest
    plain = box.read_concept("p.md", max_chars=100)["truncation"]
    assert plain.startswith("[cut: ") and "footnote" not in plain
