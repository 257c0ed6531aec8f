from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import MakeBundle, concept
from okfx import Bundle
from okfx.bundle.links import (
    Resolver,
    _inside,
    _Mask,
    _masked_spans,
    lines_outside_code,
    scan_markdown,
)
from okfx.codeblocks import (
    _FENCE_LINE,
    _INDENTED_AFTER_BLANK,
    _fence_lines,
    _may_hold_indented_code,
)
from okfx.errors import UnsafePath


def hrefs(body: str) -> list[str]:
    return [href for href, _, _ in scan_markdown(body)[0]]


def test_inline_links_with_and_without_titles() -> None:
    body = 'See [a](/a.md), [b](./b.md "Title") and [c](<c d.md>).'
    assert hrefs(body) == ["/a.md", "./b.md", "<c d.md>"]


def test_link_text_may_wrap_lines_and_hold_code() -> None:
    body = "The [gross\nmargin](../m.md) and [`metrics/x.md`](./x.md)."
    links = scan_markdown(body)[0]
    assert [h for h, _, _ in links] == ["../m.md", "./x.md"]
    assert links[1][1] == "`metrics/x.md`"


def test_images_are_not_links() -> None:
    assert hrefs("![diagram](./img.png) and [real](r.md)") == ["r.md"]


def test_an_escaped_bracket_opens_no_link() -> None:
    """CommonMark: ``\\[x](/y.md)`` is text (spec QA: it was a broken link); an escaped
    backslash before the bracket leaves the link, and an escaped ``!`` no image."""
    assert hrefs(r"Literal \[not a link](/nope.md) here.") == []
    assert hrefs(r"a \\[yes](/y.md) and \\\[no](/n.md)") == ["/y.md"]
    assert hrefs(r"\![a link](/i.md), ![an image](/j.png)") == ["/i.md"]
    assert hrefs("\\[ref] and [ref]\n\n[ref]: /r.md") == ["/r.md"]
    assert scan_markdown(r"\[^fn] and [^real]")[1] == ["real"]


@given(st.text(alphabet="[]()\\!ab/.md ", max_size=40))
def test_a_link_is_found_only_at_an_unescaped_bracket(body: str) -> None:
    for _, _, at in scan_markdown(body)[0]:
        before = len(body[:at]) - len(body[:at].rstrip("\\"))
        assert body[at] == "[" and before % 2 == 0


def test_links_in_fenced_code_are_ignored() -> None:
    body = "```md\n[no](a.md)\n```\n~~~~\n[no](b.md)\n~~~~\n[yes](c.md)\n"
    assert hrefs(body) == ["c.md"]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert hrefs("[yes](a.md)\n```\n[no](b.md)\n") == ["a.md"]


def test_links_in_indented_code_are_ignored_but_list_continuations_count() -> None:
    body = "Para.\n\n    [no](a.md)\n\n- item\n\n    [yes](b.md)\n"
    assert hrefs(body) == ["b.md"]


def test_links_in_code_spans_and_html_comments_are_ignored() -> None:
    body = "`[no](a.md)` ``[no](b.md) ` x`` <!-- [no](c.md)\n--> [yes](d.md)"
    assert hrefs(body) == ["d.md"]


def test_a_link_after_a_code_span_inside_a_comment_is_ignored() -> None:
    """A template's comment with `code` in it (aws-samples/sample-okf-llm-wiki writes such
    notes): the code span inside the comment must not hide the comment around it."""
    body = "[yes](a.md)\n<!-- nested fields:\n- `items.id` (varchar): see [no](b.md).\n-->\n"
    assert hrefs(body) == ["a.md"]


def test_lines_outside_code_skip_fences_and_comments_but_not_code_spans() -> None:
    heading = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$", re.MULTILINE)
    body = (
        "# One `x`\n\nA lone ` backtick.\n\n```bash\n# shell comment\n```\n\n"
        "<!-- a note\n## hidden\n-->\n\n## Two\n\nuse `y`\n"
    )
    assert [m.group(2) for m in lines_outside_code(body, heading)] == ["One `x`", "Two"]


def test_an_unterminated_comment_hides_the_rest() -> None:
    assert hrefs("[yes](a.md) <!-- [no](b.md)") == ["a.md"]


def test_reference_style_links_full_collapsed_and_shortcut() -> None:
    body = (
        "[one][r1], [Two][] and [three].\n\n"
        "[r1]: /one.md\n[two]: <two.md> 'T'\n[Three]: ./three.md (t)\n"
        "[unused]: /unused.md\n"
    )
    assert hrefs(body) == ["/one.md", "two.md", "./three.md"]


def test_bracketed_text_without_definition_is_not_a_link() -> None:
    assert hrefs("an [aside] here") == []


def test_footnote_labels_are_collected_once_in_order() -> None:
    body = "Claim.[^b] Other.[^a] Again.[^b]\n\n[^b]: B\n[^a]: A\n`[^code]`"
    assert scan_markdown(body)[1] == ["b", "a"]


def test_footnote_definitions_are_not_reference_definitions() -> None:
    assert hrefs("See [^x].\n\n[^x]: /not-a-link.md\n") == []


@pytest.mark.parametrize(
    "body",
    [
        "[" * 50_000,
        "[a](" * 20_000,
        "`" * 30_000 + "x",
        "<!--" * 20_000,
        "[x]" * 20_000 + "\n[x]: /a.md\n",
        "```\n" * 20_000,
        ("a " * 100 + "`" * 3 + " ") * 500,
    ],
)
def test_pathological_markdown_stays_fast(body: str) -> None:
    start = time.process_time()
    scan_markdown(body)
    assert time.process_time() - start < 2.0


@given(st.text(alphabet="[]()`!<>-*~ \n#:^/a.", max_size=400))
@settings(max_examples=300, deadline=None)
def test_scanner_never_raises_and_offsets_are_in_range(body: str) -> None:
    links, footnotes = scan_markdown(body)
    for href, _, offset in links:
        assert 0 <= offset < len(body)
        assert isinstance(href, str)
    assert len(footnotes) == len(set(footnotes))


FILES = {"/a.md", "/dir/b.md", "/dir/index.md", "/dir/sub/c.md", "/tables/index.md", "/x.py"}
DIRS = {"/", "/dir", "/dir/sub", "/tables"}


@pytest.fixture
def resolver() -> Resolver:
    return Resolver(set(FILES), set(DIRS))


@pytest.mark.parametrize(
    ("href", "base", "target"),
    [
        ("/a.md", "/dir", "/a.md"),
        ("./b.md", "/dir", "/dir/b.md"),
        ("b.md", "/dir", "/dir/b.md"),
        ("../a.md", "/dir/sub", "/dir/a.md"),
        ("../b.md", "/dir/sub", "/dir/b.md"),
        ("sub/", "/dir", "/dir/sub"),  # a folder without index.md
        ("/tables", "/dir", "/tables/index.md"),
        ("../tables/", "/dir", "/tables/index.md"),
        ("b.md#section", "/dir", "/dir/b.md"),
        ("b.md?plain=1", "/dir", "/dir/b.md"),
        ("sub/c", "/dir", "/dir/sub/c.md"),
        ("%2Fa.md", "/", "/a.md"),
        ("dir/b%2Emd", "/", "/dir/b.md"),
        ("missing.md", "/dir", "/dir/missing.md"),
        # A bare file name is a file beside the page: the root's file of that name is
        # another page (aembit: `overview.md` in every folder and at the root).
        ("a.md", "/dir", "/dir/a.md"),
        ("a", "/dir", "/dir/a"),
        # A path with folders that misses file-relative is read from the root.
        ("dir/b.md", "/dir/sub", "/dir/b.md"),
        ("tables/index.md", "/dir", "/tables/index.md"),
        ("tables/", "/dir", "/dir/tables/index.md"),  # a bare folder name: beside the page
    ],
)
def test_resolve_body_hrefs(resolver: Resolver, href: str, base: str, target: str) -> None:
    assert resolver.resolve(href, base) == target


@pytest.mark.parametrize(
    "href",
    ["https://x.com/a.md", "mailto:a@b.c", "//cdn/x.md", "ftp://x", "#top", "", "javascript:x"],
)
def test_externals_and_anchors_are_not_edges(resolver: Resolver, href: str) -> None:
    assert resolver.resolve(href, "/dir") is None


@pytest.mark.parametrize("href", ["../../etc/passwd", "/../x.md", "%2e%2e/%2e%2e/x", "a\\b"])
def test_escaping_hrefs_are_unsafe(resolver: Resolver, href: str) -> None:
    with pytest.raises(UnsafePath):
        resolver.resolve(href, "/dir")


def test_frontmatter_bare_paths_read_from_the_root_first(resolver: Resolver) -> None:
    assert resolver.resolve("x.py", "/dir/sub", frontmatter=True) == "/x.py"
    assert resolver.resolve("dir/b.md", "/dir", frontmatter=True) == "/dir/b.md"
    assert resolver.resolve("./c.md", "/dir/sub", frontmatter=True) == "/dir/sub/c.md"
    # Neither reading exists: report the root reading, as producers write them.
    assert resolver.resolve("attesters/q.py", "/dir", frontmatter=True) == "/attesters/q.py"


_href_part = st.sampled_from(["..", ".", "a", "dir", "sub", "b.md", "%2e%2e", "", "x#y", "?q"])


@given(st.lists(_href_part, max_size=6).map("/".join), st.sampled_from(sorted(DIRS)))
def test_resolution_is_canonical_or_unsafe(href: str, base: str) -> None:
    resolver = Resolver(set(FILES), set(DIRS))
    try:
        target = resolver.resolve(href, base)
    except UnsafePath:
        return
    if target is not None:
        assert target.startswith("/")
        assert "/../" not in target + "/" and not target.endswith("/..")
        assert "//" not in target


# -- fast paths against the plain definitions they replace ---------------------------------

_fence_text = st.lists(
    st.sampled_from(["```", "~~~", "`", "~", " ", "    ", "\n", "a", "```a`", "\t"]), max_size=40
).map("".join)


@given(_fence_text)
@settings(max_examples=500, deadline=None)
def test_fence_lines_are_those_the_line_regex_finds(body: str) -> None:
    expected = [
        (m.start(), m.end() - 1, m.group(1), m.group(2)) for m in _FENCE_LINE.finditer("\n" + body)
    ]
    assert _fence_lines(body) == expected


def _single_tick_spans(body: str) -> list[tuple[int, int]]:
    """Code spans of a text with single backticks only: each one closes the previous."""
    ticks = [i for i, ch in enumerate(body) if ch == "`"]
    return [(ticks[i], ticks[i + 1] + 1) for i in range(0, len(ticks) - 1, 2)]


@given(st.text(alphabet="`a \n", max_size=60).filter(lambda body: "``" not in body))
@settings(max_examples=300, deadline=None)
def test_single_backticks_pair_up_as_code_spans(body: str) -> None:
    assert _masked_spans(body, 0, len(body)) == _single_tick_spans(body)


@given(st.text(alphabet="`a[ \n<!-", max_size=80), st.integers(0, 80), st.integers(0, 80))
@settings(max_examples=500, deadline=None)
def test_the_mask_agrees_with_the_code_spans_and_comments(body: str, start: int, end: int) -> None:
    start, end = sorted((min(start, len(body)), min(end, len(body))))
    spans = _masked_spans(body, start, end)
    starts = [a for a, _ in spans]
    mask = _Mask(body, start, end)
    for offset in [*range(start, end), *range(start, end)]:  # two passes, as the scanner's
        if body[offset] == "[":  # the scanner only asks about link starts
            assert mask.covers(offset) == _inside(spans, starts, offset), offset


@given(st.text(alphabet=" \t\na", max_size=40), st.integers(0, 40), st.integers(0, 40))
@settings(max_examples=500, deadline=None)
def test_indented_code_precheck_agrees_with_the_regex(body: str, start: int, end: int) -> None:
    start, end = min(start, len(body)), min(end, len(body))
    expected = _INDENTED_AFTER_BLANK.search(body, max(start - 1, 0), end) is not None
    assert _may_hold_indented_code(body, start, end) == expected


def test_long_runs_of_fence_markers_on_one_line_scan_in_linear_time() -> None:
    body = "a``` " * 40_000 + "\n" + "`" * 200_000 + "x"
    start = time.process_time()
    scan_markdown("[a](b.md)\n" + body)
    assert time.process_time() - start < 2.0


def test_a_destination_is_read_with_its_escapes_and_character_references() -> None:
    """CommonMark reads ``\\_`` as ``_`` and ``&#106;`` as ``j`` in a destination, as the
    viewer's renderer does: the loader read ``&#106;avascript:x`` as a link to the file
    ``&`` (viewer QA: "leads to /&, which does not exist")."""
    body = (
        "[a](a\\_b.md) [b](a&amp;b.md) [c](&#106;avascript:alert(1)) [d](&#x2F;d.md) "
        "[e](&nosuch;.md) [f][ref]\n\n[ref]: <x&#95;y.md>\n"
    )
    assert hrefs(body) == [
        "a_b.md", "a&b.md", "javascript:alert(1)", "/d.md", "&nosuch;.md", "x_y.md",
    ]  # fmt: skip


def test_an_escaped_link_resolves_where_the_viewer_sends_it(make_bundle) -> None:
    root = make_bundle(
        {
            "a_b.md": concept(),
            "page.md": concept(body="[one](a\\_b.md) and [js](&#106;avascript:alert('x'))\n"),
        }
    )
    bundle = Bundle.load(root)
    around = bundle.neighbors("/page.md")
    assert [link.target for link in around.outbound] == ["/a_b.md"]
    assert around.unresolved == ()
    assert not [w for w in bundle.warnings if w.path == "/page.md"]


def test_a_relative_body_link_followed_from_the_root_is_reported(
    make_bundle: MakeBundle,
) -> None:
    """Spec QA: ``tables/customers.md`` in ``/sub/a.md`` names nothing beside the page;
    okfx follows it from the root, but GitHub and the spec's standard markdown paths do
    not, and the author was told nothing."""
    files: dict[str, str | bytes] = {
        "sub/a.md": concept(body="[c](tables/customers.md) and [d](../tables/customers.md)\n"),
        "sub/b.md": concept(body="[near](c/x.md)\n"),
        "sub/c/x.md": concept(),
        "tables/customers.md": concept(),
    }
    bundle = Bundle.load(make_bundle(files))
    a = bundle.concept("sub/a")
    assert [link.target for link in a.links] == ["/tables/customers.md"] * 2
    said = [(w.path, w.code, w.message) for w in bundle.warnings]
    assert said == [
        (
            "/sub/a.md",
            "link_from_root",
            "body link 'tables/customers.md' names nothing beside the page; okfx follows it "
            "from the bundle root to /tables/customers.md, which other readers will not: "
            "write /tables/customers.md (line 4)",
        )
    ]


def test_a_frontmatter_path_naming_two_files_says_which_it_read(
    make_bundle: MakeBundle,
) -> None:
    """Spec QA: ``computation: references/q.sql`` in ``/computations/`` read the root's
    file silently while ``/computations/references/q.sql`` existed too; which SQL is the
    sanctioned one was okfx's choice, unsaid."""
    files: dict[str, str | bytes] = {
        "sub/a.md": "---\ntype: T\nsources: [{resource: notes/n.md}]\n---\nA.\n",
        "sub/notes/n.md": concept(),
        "notes/n.md": concept(),
        "sub/b.md": "---\ntype: T\nsources: [{resource: notes/only.md}]\n---\nB.\n",
        "notes/only.md": concept(),
    }
    bundle = Bundle.load(make_bundle(files))
    assert bundle.concept("sub/a").links[0].target == "/notes/n.md"  # the root's, as before
    said = [(w.path, w.code) for w in bundle.warnings]
    assert said == [("/sub/a.md", "ambiguous_path")]
    (warning,) = bundle.warnings
    assert "/sub/notes/n.md beside the page" in warning.message
    assert "write /notes/n.md or ./notes/n.md" in warning.message
