"""Bundle markdown becomes inert HTML: raw HTML is text, only safe URLs become links."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

pytest.importorskip("markdown_it", reason="the viewer needs the web extra")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import okfx.web  # noqa: E402
from okfx.bundle.anchors import github_slug  # noqa: E402
from okfx.web.markdown import MAX_RENDER_CHARS, Target, render, slug, url_kind  # noqa: E402


def nowhere(href: str, image: bool) -> Target | None:
    return None


def everywhere(href: str, image: bool) -> Target:
    return Target("/b/x/c/" + href.lstrip("/"), image=image)


# How a browser reads an attribute value: entities decoded, then ASCII whitespace and
# control characters ignored before the scheme.
def _scheme(value: str) -> str | None:
    seen = re.sub(r"[\x00-\x20\x7f]", "", unescape(value)).lower()
    match = re.match(r"([a-z][a-z0-9+.\-]*):", seen)
    return match.group(1) if match else None


SCHEMES = ["javascript", "JaVaScRiPt", "data", "vbscript", "file", "http", "https", "mailto"]
_noise = st.sampled_from(["", "\t", "\n", " ", "\x00", "&#9;", "&#x0A;", "%20"])
_urls = st.builds(
    lambda lead, scheme, cut, mid, tail: f"{lead}{scheme[:cut]}{mid}{scheme[cut:]}:{tail}",
    _noise,
    st.sampled_from(SCHEMES),
    st.integers(0, 10),
    _noise,
    st.sampled_from(["alert(1)", "//evil.example/x", "text/html,<script>x</script>", ""]),
)


@settings(max_examples=300, deadline=None)
@given(url=_urls, image=st.booleans(), rewrite=st.sampled_from([nowhere, everywhere]))
def test_no_link_or_image_ever_carries_an_unsafe_scheme(url, image, rewrite) -> None:
    text = f"{'!' if image else ''}[x]({url}) <{url}> [r][1]\n\n[1]: {url}\n"
    html = render(text, rewrite).html
    for value in re.findall(r'(?:href|src)="([^"]*)"', html):
        assert _scheme(value) in (None, "http", "https", "mailto"), (url, value)


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("javascript:alert(1)", "unsafe"),
        (" java\tscript:x", "unsafe"),
        ("DATA:text/html,x", "unsafe"),
        ("vbscript:x", "unsafe"),
        ("file:///etc/passwd", "unsafe"),
        ("https://example.org", "external"),
        ("//evil.example/x", "external"),
        ("/\\evil.example", "external"),
        ("mailto:a@b.c", "external"),
        ("#section", "fragment"),
        ("../tables/orders.md", "relative"),
        ("%6Aavascript:x", "relative"),
    ],
)
def test_urls_are_sorted_as_a_browser_reads_them(url: str, kind: str) -> None:
    assert url_kind(url) == kind


def test_raw_html_is_text() -> None:
    html = render('<script>x()</script>\n\n<img src=x onerror="y()">\n', nowhere).html
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=" in html


def test_html_comments_are_not_shown_but_a_comment_in_code_is() -> None:
    """graphql-okf's generator markers showed as paragraphs of text on every page."""
    text = (
        "<!-- generator:start -->\n<!-- Do not edit inside this block. -->\n# Country\n\n"
        "A country <!-- inline note --> of the world.\n\n"
        "```html\n<!-- kept in code -->\n```\n<!-- unclosed"
    )
    html = unescape(render(text, nowhere).html)
    assert "generator" not in html and "Do not edit" not in html and "inline note" not in html
    assert "unclosed" not in html and "A country  of the world." in html
    assert "<!-- kept in code -->" in html and "<h2" in html


def test_relative_links_go_through_rewrite_and_dead_ones_lose_their_href() -> None:
    def some(href: str, image: bool) -> Target | None:
        return Target("/b/k/c/a.md") if href.startswith("a.md") else None

    html = render("[a](a.md) [b](b.md) [up](../../x.md) [frag](<#Some Heading>)", some).html
    assert '<a href="/b/k/c/a.md">a</a>' in html
    assert '<span class="broken-link" title="unresolved link">b</span>' in html
    assert '<span class="broken-link" title="unresolved link">up</span>' in html
    assert '<a href="#h-some-heading">frag</a>' in html


def test_external_links_are_marked_and_external_images_never_load() -> None:
    html = render("[site](https://example.org) ![pic](https://example.org/p.png)", nowhere).html
    assert 'rel="noopener noreferrer nofollow" class="external">site</a>' in html
    assert "<img" not in html and "[image: pic]" in html


def test_only_raster_bundle_images_are_shown_inline() -> None:
    def files(href: str, image: bool) -> Target:
        return Target("/b/k/raw/" + href, image=href.endswith(".png"))

    html = render("![p](p.png) ![s](s.svg)", files).html
    assert '<img src="/b/k/raw/p.png" alt="p"' in html
    assert '<a href="/b/k/raw/s.svg">[image: s]</a>' in html


def test_headings_get_unique_ids_an_outline_and_go_one_level_down() -> None:
    out = render("# Intro\n## Intro\n### Déjà vu!\n###### Six\n## intro\n", nowhere)
    # A repeated heading takes -1, -2... as on GitHub, where authors' links come from.
    assert [(h.level, h.anchor) for h in out.outline] == [
        (1, "h-intro"),
        (2, "h-intro-1"),
        (3, "h-déjà-vu"),
        (6, "h-six"),
        (2, "h-intro-2"),
    ]
    assert '<h2 id="h-intro">' in out.html and '<h6 id="h-six">' in out.html
    assert slug("") == "h-section"


def test_tables_code_and_footnotes_render() -> None:
    html = render(
        "| a | b |\n|---|---|\n| 1 | 2 |\n\nx[^n]\n\n[^n]: note\n\n```sql\nSELECT 1\n```\n", nowhere
    ).html
    assert "<table>" in html and "<td>1</td>" in html
    assert 'class="footnote-ref"' in html and "note" in html
    assert '<code class="language-sql">SELECT 1' in html


def test_a_long_body_is_cut_and_the_cut_reported() -> None:
    text = ("word " * 20 + "\n") * (MAX_RENDER_CHARS // 50)
    out = render(text, nowhere)
    assert out.cut > 0 and out.cut + MAX_RENDER_CHARS >= len(text) > MAX_RENDER_CHARS


def test_table_alignment_is_a_class_never_an_inline_style() -> None:
    html = render("| a | b | c |\n|:--|--:|:-:|\n| 1 | 2 | 3 |\n", nowhere).html
    assert "style=" not in html  # the viewer's CSP (style-src 'self') refuses inline styles
    assert '<th class="align-right">b</th>' in html and '<td class="align-center">3</td>' in html
    css = (Path(okfx.web.__file__).parent / "static" / "style.css").read_text()
    assert "td.align-right { text-align: right; }" in css


def test_a_wikilink_is_a_link_only_where_it_is_one() -> None:
    def wiki(target: str, anchor: str | None) -> Target | None:
        return (
            None if target == "gone" else Target(f"/c/{target}" + (f"#{anchor}" if anchor else ""))
        )

    html = render(
        "[[a]] [[b|B]] [[gone]] ![[pic.png]] `[[code]]` [see [[a]]](x.md)\n\n"
        "```\n[[fenced]]\n```\n",
        lambda href, image: Target("/x"),
        wikilink=wiki,
    ).html
    assert '<a href="/c/a">a</a> <a href="/c/b">B</a>' in html
    assert '<span class="broken-link" title="unresolved link">gone</span>' in html
    assert "![[pic.png]]" in html and "<code>[[code]]</code>" in html and "[[fenced]]" in html
    assert '<a href="/x">see [[a]]</a>' in html  # a link's text holds no second link
    assert "[[a]]" in render("[[a]]", nowhere).html  # without a resolver, text


def test_an_empty_fragment_stays_the_top_of_the_page() -> None:
    html = render("[top](#) and [part](#Part-Two)\n\n## Part two\n", nowhere).html
    assert '<a href="#">top</a>' in html and '<a href="#h-part-two">part</a>' in html


def test_heading_ids_are_githubs_the_ones_validate_checks_fragments_against() -> None:
    out = render(
        "## Setup & Run\n\n[a](#setup--run) [b](#User-Content-Setup--Run) [c](#setup-run)\n",
        nowhere,
    )
    assert [h.anchor for h in out.outline] == ["h-" + github_slug("Setup & Run")]
    assert out.outline[0].anchor == "h-setup--run"
    assert out.html.count('href="#h-setup--run"') == 2
    assert 'href="#h-setup-run"' in out.html  # as on GitHub, leads nowhere


def test_a_descriptions_inline_marks_read_as_text_and_code() -> None:
    """graphql-okf: "The `Float` scalar type ... as specified by [IEEE 754](https://...)"
    showed its backticks and link in every listing."""
    shown = str(
        okfx.web.markdown.inline("The `Float` <b>x</b> by [IEEE 754](https://e.x/a) **now**")
    )
    assert shown == ("The <code>Float</code> &lt;b&gt;x&lt;/b&gt; by IEEE 754 <strong>now</strong>")
    assert str(okfx.web.markdown.inline("a `<script>` b")) == "a <code>&lt;script&gt;</code> b"
    assert str(okfx.web.markdown.inline("lone ` tick")) == "lone ` tick"


def test_bare_inert_tags_in_prose_read_as_what_they_are_and_nothing_else_does() -> None:
    """Viewer QA: real pages written for GitHub joined a list with "<br>" and wrapped a
    table cell in "<p>", shown as literal tags. Bare br, b, i, em, strong, code, sub,
    sup and kbd become those elements; a tag with any attribute, any other tag, and
    anything in code stay text."""
    html = render(
        "A<br> B<BR/> C <b>bold</b> <sub>2</sub> <p>cell</p>\n\n"
        "`<br>` <b onclick=x>no</b> <script>alert(1)</script> <img src=x>\n",
        lambda url, image: None,
    ).html
    assert "A<br> B<br> C <b>bold</b> <sub>2</sub> cell<br>" in html
    assert "<code>&lt;br&gt;</code>" in html
    assert (
        "&lt;b onclick=x&gt;" in html and "&lt;script&gt;" in html and "&lt;img src=x&gt;" in html
    )
    assert "<script" not in html and "<img" not in html and "onclick=x>" not in html


def test_an_escaped_tag_stays_text_and_bare_ones_stay_inside_their_paragraph() -> None:
    """Viewer QA: "write &lt;code&gt; to start code" (how an author shows the text
    <code>) became a real, unclosed element, and the rest of the page, the viewer's own
    sidebar and footer included, turned monospace; an unclosed <b> made it bold, and a
    stray </strong> closed the author's bold early."""
    html = render(
        "write &lt;code&gt; to start code and &lt;kbd&gt; for keys.\n\n"
        "x <b> unclosed <i>and *this* too\n\nnext</b> paragraph\n\n"
        "**bold &lt;/strong&gt; still** after </strong> <b>a</i>b</b>\n\n"
        "| a | b |\n|---|---|\n| <b>open | y |\n",
        lambda url, image: None,
    ).html
    assert "write &lt;code&gt; to start code and &lt;kbd&gt; for keys." in html
    assert "<p>x <b> unclosed <i>and <em>this</em> too</i></b></p>" in html
    assert "<p>next paragraph</p>" in html  # a closer with no opener there is dropped
    assert "<strong>bold &lt;/strong&gt; still</strong> after  <b>ab</b>" in html
    assert "<td><b>open</b></td>" in html
    assert html.count("<b>") == html.count("</b>") and html.count("<i>") == html.count("</i>")


def test_a_footnote_cited_again_keeps_its_number() -> None:
    """Viewer QA: a footnote cited a second time read "[1:1]"."""
    html = render("A[^a] and again[^a].\n\n[^a]: Note.\n", lambda url, image: None).html
    assert html.count(">[1]</a>") == 2 and "[1:1]" not in html
    assert 'id="fnref1"' in html and 'id="fnref1:1"' in html  # each citation its own anchor
