"""The viewer's pages over HTTP (starlette's test client): what each shows, the same
answers as the tools, and the headers and path rules that keep bundle text inert."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the viewer needs the web extra")
pytest.importorskip("httpx", reason="starlette's test client needs httpx")

from starlette.testclient import TestClient  # noqa: E402

from conftest import PROJECT_ROOT, MakeBundle, concept, write_tree  # noqa: E402
from okfx import Bundle, KnowledgeManager, Toolbox  # noqa: E402
from okfx.cli.webserve import viewer  # noqa: E402
from okfx.web import create_app  # noqa: E402
from okfx.web.finding import marked, plain  # noqa: E402
from okfx.web.graph import WHOLE_LIMIT  # noqa: E402

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
NOW = datetime(2026, 12, 1, tzinfo=UTC)
LOCAL = "http://127.0.0.1:8766"


@pytest.fixture(scope="module")
def example() -> Bundle:
    return Bundle.load(EXAMPLE)


@pytest.fixture(scope="module")
def client(example: Bundle) -> TestClient:
    return TestClient(create_app(Toolbox(example, now=lambda: NOW)), base_url=LOCAL)


def app_of(root: Path) -> TestClient:
    """A test client of the viewer over the bundle at ``root``."""
    return TestClient(create_app(Toolbox(Bundle.load(root), now=lambda: NOW)), base_url=LOCAL)


def hrefs(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="([^"]*)"', html)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def inert(html: str) -> None:
    """Fail unless the page's markup runs only the viewer's own script files: no inline
    script, no event handler attribute, no frame or plug-in, no script URL."""
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        assert tag not in ("iframe", "object", "embed", "frame", "base", "meta") or (
            tag == "meta" and "http-equiv" not in attrs
        ), tag
        if tag == "script":
            assert attrs.get("src") in ("/static/app.js", "/static/graph.js"), attrs
        assert not [name for name in attrs if name.startswith("on")], (tag, attrs)
        for name in ("href", "src", "action", "formaction", "xlink:href"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith(("/", "#", "http://", "https://", "mailto:")), value


PAGES = [
    "/",
    "/b/knowledge/",
    "/b/knowledge/browse",
    "/b/knowledge/browse?dir=/tables&type=BigQuery+Table",
    "/b/knowledge/c/metrics/dock-availability.md",
    "/b/knowledge/c/computations/trips-per-bike-day.md",
    "/b/knowledge/c/index.md",
    "/b/knowledge/file/attesters/sql_equality.py",
    "/b/knowledge/graph",
    "/b/knowledge/graph?path=/metrics/dock-availability.md&depth=2",
    "/search?q=dock+availability",
    "/grep?pattern=docks_available",
    "/b/knowledge/problems",
    "/b/knowledge/log",
]


@pytest.mark.parametrize("url", PAGES)
def test_every_page_answers_with_the_security_headers(client: TestClient, url: str) -> None:
    answer = client.get(url)
    assert answer.status_code == 200, answer.text[:500]
    csp = answer.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"
    inert(answer.text)


def test_the_viewer_is_read_only(client: TestClient) -> None:
    assert client.post("/b/knowledge/browse").status_code == 405
    assert client.put("/").status_code == 405


def test_the_overview_counts_types_statuses_tiers_stale_and_problems(
    client: TestClient, example: Bundle
) -> None:
    html = client.get("/").text
    stale = sum(c.is_stale(NOW) for c in example)
    assert f"<strong>{len(example)}</strong> concepts" in html
    assert f"<strong>{stale}</strong> stale" in html
    # The example has deprecated concepts: each figure counts them, so its listing shows them.
    assert 'href="/b/knowledge/browse?stale=only&amp;deprecated=1"' in html
    metric = 'href="/b/knowledge/browse?type=Metric&amp;deprecated=1">Metric</a>'
    assert metric + ' <span class="n">5</span>' in html
    assert 'href="/b/knowledge/problems?code=broken_link"' in html
    assert "Most recently verified" in html and "2026-11-29T09:30:00Z" in html


def test_a_concept_page_shows_badges_provenance_links_and_stays_in_the_viewer(
    client: TestClient,
) -> None:
    html = client.get("/b/knowledge/c/metrics/dock-availability.md").text
    assert "<h1>Dock availability</h1>" in html
    assert 'class="badge tier t-human-reviewed"' in html
    assert "fresh until 2027-03-31T00:00:00Z" in html
    # a body link to another concept is the viewer's page of it
    assert '<a href="/b/knowledge/c/computations/dock-availability-rate.md">' in html
    assert 'id="h-definition"' in html and 'href="#h-definition"' in html  # outline
    assert 'class="footnote-ref"' in html  # a footnote rendered
    assert 'href="/b/knowledge/raw/metrics/dock-availability.md"' in html
    assert "Backlinks" in html and "/computations/dock-availability-rate.md" in html
    assert "spokeway_agent/gemini-2.5-pro" in html  # generated.by


def test_the_attested_computation_contract_is_shown(client: TestClient) -> None:
    html = client.get("/b/knowledge/c/computations/trips-per-bike-day.md").text
    assert "Attested Computation contract" in html
    assert "<code>bigquery</code>" in html
    assert "<code>start_date</code>" in html and "<code>bike_type</code>" in html
    assert 'href="/b/knowledge/file/computations/sql/trips_per_bike_day.sql"' in html
    assert 'href="/b/knowledge/c/skills/run-on-bigquery.md"' in html  # the executor
    assert "<code>executed_sql</code>" in html  # a receipt field


def test_a_contracts_constraints_show_only_where_the_bundle_has_them(
    client: TestClient, make_bundle: MakeBundle
) -> None:
    plain = client.get("/b/knowledge/c/computations/trips-per-bike-day.md").text
    assert "<th>Default</th>" not in plain
    text = (
        "---\ntype: Attested Computation\nruntime: athena\nparameters:\n"
        "  - {name: region, type: string, default: EMEA, enum: [EMEA, NA]}\n"
        "  - {name: top, type: integer, required: true, min: 1, max: 100, example: 10}\n"
        "  - {name: since, type: date, min: 2020-01-01}\n---\n\n# Computation\n\n"
        "```sql\nSELECT 1 WHERE r = @region AND n < @top AND d > @since\n```\n"
    )
    root = make_bundle({"total.md": text})
    box = Toolbox(Bundle.load(root), now=lambda: NOW)
    html = TestClient(create_app(box), base_url=LOCAL).get(f"/b/{root.name}/c/total.md").text
    assert "<th>Default</th><th>Allowed</th><th>Example</th>" in html
    rows = re.findall(r"<tr><td><code>(\w+)</code></td>(.*?)</tr>", html)
    cells = {name: re.findall(r"<td>(.*?)</td>", rest) for name, rest in rows}
    assert cells["region"] == ["string", "no", "<code>EMEA</code>", "EMEA, NA", ""]
    assert cells["top"] == ["integer", "yes", "", "1 to 100", "<code>10</code>"]
    assert cells["since"] == ["date", "no", "", "at least 2020-01-01", ""]
    inert(html)


def test_a_sources_link_after_a_skipped_entry_leads_to_its_own_file(
    make_bundle: MakeBundle,
) -> None:
    sources = "\n  - 42\n  - {resource: /refs/b.md, title: B}\n  - {resource: /refs/c.md}"
    root = make_bundle(
        {"a.md": concept(sources=sources), "refs/b.md": concept(), "refs/c.md": concept()}
    )
    box = Toolbox(Bundle.load(root), now=lambda: NOW)
    html = TestClient(create_app(box), base_url=LOCAL).get(f"/b/{root.name}/c/a.md").text
    table = html[html.index('<table class="sources">') :]
    links = re.findall(r'<a href="([^"]+)"[^>]*>(/refs/[bc]\.md)</a>', table)
    assert [(href.rsplit("/", 1)[-1], shown) for href, shown in links] == [
        ("b.md", "/refs/b.md"),
        ("c.md", "/refs/c.md"),
    ]


def test_an_extension_left_out_for_its_size_is_named_and_a_nested_one_is_laid_out(
    make_bundle: MakeBundle,
) -> None:
    owl = "\n".join(f"  k{i}: {'v' * 150}" for i in range(40))
    root = make_bundle({"big.md": concept(owl="\n" + owl, profile="{a: 1, b: [x, y]}", sha="abc")})
    box = Toolbox(Bundle.load(root), now=lambda: NOW)
    html = TestClient(create_app(box), base_url=LOCAL).get(f"/b/{root.name}/c/big.md").text
    extra = html[html.index('<details class="extra">') :]
    assert "left out: owl;" in extra  # not silently missing
    # As an author writes YAML (viewer QA: it read as JSON, quotes and brackets).
    assert "<dt><code>sha</code></dt><dd><code>abc</code></dd>" in extra
    assert "<pre><code>a: 1\nb:\n- x\n- y</code></pre>" in extra  # a mapping, one key a line
    inert(html)


def test_a_stale_concept_shows_when_it_went_stale(client: TestClient, example: Bundle) -> None:
    stale = next(c for c in example if c.is_stale(NOW))
    html = client.get(f"/b/knowledge/c{stale.path}").text
    assert f"stale since {stale.stale_after:%Y-%m-%dT%H:%M:%S}" in html


def test_browse_uses_the_list_concepts_filter_and_counts(
    client: TestClient, example: Bundle
) -> None:
    box = Toolbox(example, now=lambda: NOW)
    for query, tool in [
        ("type=Metric", {"type": "Metric"}),
        ("tier=unverified&deprecated=1", {"trust_tier": "unverified", "include_deprecated": True}),
        ("dir=/tables&stale=exclude", {"directory": "/tables", "include_stale": False}),
    ]:
        html = client.get(f"/b/knowledge/browse?{query}").text
        want = box.list_concepts(limit=200, **tool)
        shown = re.findall(r'<a class="primary" href="/b/knowledge/c([^"]+)"', html)
        assert shown == [row["path"] for row in want["concepts"]], query
        assert f'<strong id="total">{want["total"]}</strong>' in html
    only = client.get("/b/knowledge/browse?stale=only").text
    assert re.findall(r'<a class="primary" href="/b/knowledge/c([^"]+)"', only) == [
        c.path for c in example if c.is_stale(NOW)
    ]
    deprecated = client.get("/b/knowledge/browse?status=deprecated").text
    assert len(re.findall(r'class="primary"', deprecated)) == 2
    default = client.get("/b/knowledge/browse").text
    assert (
        '2 deprecated hidden: <a href="/b/knowledge/browse?deprecated=1">show them</a>' in default
    )


def test_browse_pages_through_a_large_folder(make_bundle: MakeBundle) -> None:
    root = make_bundle({f"a/c{i:03}.md": concept(title=f"C{i:03}") for i in range(120)})
    client = TestClient(create_app(Bundle.load(root, "big")), base_url=LOCAL)
    first = client.get("/b/big/browse?dir=/a").text
    assert "page 1 of 3" in first and '<strong id="total">120</strong>' in first
    assert 'rel="next" href="/b/big/browse?dir=%2Fa&amp;page=2"' in first
    third = client.get("/b/big/browse?dir=/a&page=3").text
    assert re.findall(r">C(\d{3})<", third) == [f"{i:03}" for i in range(100, 120)]
    assert 'rel="prev"' in third and 'rel="next"' not in third
    tree = client.get("/b/big/browse").text
    assert 'href="/b/big/browse?dir=%2Fa">a/</a> <span class="n">120</span>' in tree
    past = client.get("/b/big/browse?dir=/a&page=9").text  # past the end: the last page
    assert "page 3 of 3" in past and re.findall(r">C(\d{3})<", past) == re.findall(
        r">C(\d{3})<", third
    )


def test_search_ranks_exactly_as_search_concepts(client: TestClient, example: Bundle) -> None:
    box = Toolbox(example, now=lambda: NOW)
    for query in ("dock availability", "trips per bike", "fare policy"):
        want = [h["path"] for h in box.search_concepts(query=query, limit=20)["hits"]]
        html = client.get(f"/search?q={query}").text
        shown = re.findall(r'<a class="primary" href="/b/knowledge/c([^"]+)"', html)
        assert shown == want and want, query
    assert "<mark>" in client.get("/search?q=dock").text
    filtered = client.get("/search?q=dock&type=Playbook").text
    assert set(re.findall(r"badge type\" title=\"type\">([^<]+)<", filtered)) == {"Playbook"}


def test_a_search_that_finds_nothing_links_the_concepts_named_close_to_it(
    client: TestClient, example: Bundle
) -> None:
    html = client.get("/search?q=rebalancng").text  # a typo of the metric's file name
    close = re.findall(r'<p class="close-names">Did you mean (.*?)\?</p>', html, re.S)
    assert close and 'href="/b/knowledge/c/metrics/rebalancing-efficiency.md"' in close[0]
    inert(html)
    assert 'class="close-names"' not in client.get("/search?q=xyzzy+qwerty").text
    # The notice speaks of the page's own links, not of the agent's tools, and says once
    # that nothing matched.
    notice = re.findall(r'<p class="notice">(.*?)</p>', html, re.S)
    assert len(notice) == 1 and "grep for an exact name" in notice[0]
    assert not re.search(r"grep_concepts|list_concepts|did_you_mean", html)
    assert html.count("No concept") == 1


def test_grep_marks_the_matches_and_reports_bad_patterns(client: TestClient) -> None:
    html = client.get("/grep?pattern=docks_available").text
    assert "<mark>docks_available</mark>" in html
    bad = client.get("/grep?pattern=(a&regex=1")
    assert bad.status_code == 400
    # the form again, the pattern as typed, and why in the page's words (viewer QA)
    assert 'value="(a"' in bad.text and "untick “regular expression”" in bad.text
    assert "regex=false" not in bad.text
    # a miss's advice names the page's boxes, not the tool's arguments (viewer QA)
    for asked in ("/grep?pattern=TRIPS", "/grep?pattern=zzqq", "/grep?pattern=zzqq&i=1"):
        page = client.get(asked).text
        assert "ignore_case" not in page and "search_concepts" not in page, asked
    assert "(tick “ignore case”)" in client.get("/grep?pattern=TRIPS").text


def test_a_respelt_search_links_the_respelt_query_and_names_each_close_page_once(
    client: TestClient,
) -> None:
    html = client.get("/search?q=dock+availabilty+metrc").text
    assert "did_you_mean" not in html
    respelt = re.search(r'<p class="respelt">Search for <a href="([^"]+)">([^<]+)</a>', html)
    assert respelt is not None and "availability" in respelt.group(2)
    assert client.get(respelt.group(1).replace("&amp;", "&")).status_code == 200
    close = client.get("/search?q=trpis").text
    notice = re.search(r'<p class="notice">(.*?)</p>', close, re.S)
    names = re.search(r'<p class="close-names">(.*?)</p>', close, re.S)
    assert notice is not None and names is not None
    assert "Trips" in names.group(1) and "Trips" not in notice.group(1)  # named once
    assert notice.group(1).startswith("No concept matches")


def test_problems_are_grouped_by_code_and_link_to_their_files(client: TestClient) -> None:
    html = client.get("/b/knowledge/problems").text
    assert re.search(r'<h2 id="h-code-\d"><code>broken_link</code>', html)
    assert '<a class="primary" href="/b/knowledge/c/tables/bikes.md">/tables/bikes.md</a>' in html
    assert "<code>broken_image</code>" in html  # validate's own checks show there too


def test_the_problems_page_shows_what_validate_reports(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {"a.md": "---\ntype: Note\n---\nSee [b](b.md#nowhere).\n", "b.md": concept()}
    )
    client = TestClient(create_app(Bundle.load(root, "b")), base_url=LOCAL)
    html = client.get("/b/b/problems").text
    assert "<code>broken_anchor</code>" in html and "nowhere" in html
    assert "<strong>1</strong> problem<" in client.get("/").text
    # And the computations okfx cannot bind (okfx.attest.lint), as okfx validate says.
    unbound = (
        "---\ntype: Attested Computation\nruntime: duckdb\nparameters:\n"
        "  - {name: n, type: integer}\n---\n\n# Computation\n\n```sql\nSELECT $m\n```\n"
    )
    root = make_bundle({"c.md": unbound})
    client = TestClient(create_app(Bundle.load(root, "c")), base_url=LOCAL)
    html = client.get("/b/c/problems").text
    assert "<code>unbindable_computation</code>" in html and "<code>unused_parameter</code>" in html


def test_the_log_is_a_timeline_newest_first_with_links_in_the_viewer(
    client: TestClient,
) -> None:
    html = client.get("/b/knowledge/log").text
    dates = re.findall(r'<time datetime="([0-9-]+)">', html)
    assert dates and dates == sorted(dates, reverse=True)
    assert '<a href="/b/knowledge/c/metrics/active-members.md">active members</a>' in html


def test_log_entries_without_a_date_heading_and_nested_points_read_well(
    make_bundle: MakeBundle,
) -> None:
    log = "# Log\n\n- 2026-07-02 - export - a.md\n- a note\n\n## 2026-06-01\n* made\n  * a point\n"
    root = make_bundle({"a.md": concept(), "log.md": log})
    html = TestClient(create_app(Bundle.load(root, "b")), base_url=LOCAL).get("/b/b/log").text
    assert re.findall(r'<time datetime="([0-9-]+)">', html) == ["2026-07-02", "2026-06-01"]
    assert "<h3></h3>" not in html  # the undated note has no heading to show
    assert "a note" in html and re.search(r"<li>a point</li>", html)


def test_a_days_changes_read_as_one_row_and_a_page_saved_as_log_md_says_so(
    make_bundle: MakeBundle,
) -> None:
    """Aembit's changelog: ``### Feature`` titles, paragraphs and points under one
    ``## date``; MikroTik's manual page saved as ``log.md``."""
    log = (
        "# Changelog\n\n## 2026-07-08\n\n### Feature A now available\n\nWhat's new:\n\n"
        "* one\n* two\n\n## 2026-06-30\n\n### Feature B\n\n* three\n"
    )
    page = "---\ntype: Reference\ntitle: Log\n---\n# Log\n\n## Disk files\n\n- topics\n"
    root = make_bundle({"a.md": concept(), "log.md": log, "diag/log.md": page})
    html = TestClient(create_app(Bundle.load(root, "b")), base_url=LOCAL).get("/b/b/log").text
    assert re.findall(r'<time datetime="([0-9-]+)">', html) == ["2026-07-08", "2026-06-30"]
    first = html[html.index('datetime="2026-07-08"') : html.index('datetime="2026-06-30"')]
    assert all(text in first for text in ("Feature A now available", "What", "one", "two"))
    notice = html[html.index("/diag/log.md") :]
    assert "log.md carries a concept&#39;s frontmatter (type: &#39;Reference&#39;)" in notice
    assert "Read it as a page" in notice


def test_the_graph_draws_the_neighbourhood_and_bounds_the_whole_view(
    client: TestClient, example: Bundle, make_bundle: MakeBundle
) -> None:
    html = client.get("/b/knowledge/graph?path=/metrics/dock-availability.md").text
    around = example.neighbors("/metrics/dock-availability.md")
    near = {link.target for link in around.outbound} | {link.source for link in around.backlinks}
    near |= set(example.listed_in("/metrics/dock-availability.md"))  # its index and the log
    drawn = set(re.findall(r'<a href="/b/knowledge/c([^"]+)" class="node', html))
    assert drawn == near | {"/metrics/dock-availability.md"}
    assert 'class="node root' in html and '<line class="edge"' in html
    whole = client.get("/b/knowledge/graph").text
    assert len(re.findall(r'class="node[ "]', whole)) == len(example)
    root = make_bundle({f"c{i}.md": concept() for i in range(WHOLE_LIMIT + 1)})
    big = TestClient(create_app(Bundle.load(root, "big")), base_url=LOCAL)
    refused = big.get("/b/big/graph").text
    assert 'id="too-large"' in refused and not re.search(r'class="node[ "]', refused)


def test_unknown_pages_and_concepts_are_404_with_suggestions(client: TestClient) -> None:
    answer = client.get("/b/knowledge/c/metrics/dock-availabilty")
    assert answer.status_code == 404
    assert 'href="/b/knowledge/c/metrics/dock-availability.md"' in answer.text
    assert client.get("/b/nope/browse").status_code == 404
    assert client.get("/no/such/page").status_code == 404


def test_several_bundles_each_have_their_pages(example: Bundle, make_bundle: MakeBundle) -> None:
    files = {"x.md": concept(title="Other X"), "docs/y.md": concept(title="Y")}
    other = Bundle.load(make_bundle(files), "other")
    client = TestClient(create_app(KnowledgeManager([example, other])), base_url=LOCAL)
    home = client.get("/").text
    assert 'href="/b/knowledge/"' in home and 'href="/b/other/"' in home
    assert "Other X" in client.get("/b/other/browse").text
    hits = client.get("/search?q=other").text
    assert 'href="/b/other/c/x.md"' in hits
    # a 404 of one bundle's page links its suggestions and keeps its navigation, however
    # many bundles are served (viewer QA: plain text with six); a folder's is its listing
    missing = client.get("/b/knowledge/c/tables/trip.md")
    assert missing.status_code == 404
    assert 'href="/b/knowledge/c/tables/trips.md"' in missing.text
    assert 'href="/b/knowledge/browse"' in missing.text  # the bundle's Browse link
    listing = client.get("/b/other/c/docs/", follow_redirects=False)
    assert listing.headers["location"] == "/b/other/browse?dir=%2Fdocs"
    folder = client.get("/b/knowledge/browse?dir=/table")
    assert folder.status_code == 404 and 'href="/b/knowledge/browse?dir=%2Ftables"' in folder.text


def test_attached_files_are_text_pages_and_raw_bytes_are_sandboxed(
    client: TestClient,
) -> None:
    page = client.get("/b/knowledge/file/attesters/sql_equality.py")
    assert '<pre class="file-text"><code>' in page.text and "def " in page.text
    raw = client.get("/b/knowledge/raw/attesters/sql_equality.py")
    assert raw.headers["content-type"] == "text/plain; charset=utf-8"
    assert "sandbox" in raw.headers["content-security-policy"]
    assert raw.headers["x-content-type-options"] == "nosniff"
    concept_raw = client.get("/b/knowledge/raw/metrics/dock-availability.md")
    assert concept_raw.text.startswith("---")
    assert client.get("/b/knowledge/file/metrics/dock-availability.md").status_code == 200


def test_a_long_attached_file_pages_through_next_links_to_its_whole_text(
    make_bundle: MakeBundle,
) -> None:
    from html import unescape

    from okfx.limits import Limits

    # 3-byte characters and ASCII, so part boundaries fall inside characters too.
    text = "".join(f"line {i}: données «€» <b>&amp;\n" for i in range(40))
    files: dict[str, str | bytes] = {"a.md": concept(body="[data](data.txt)"), "data.txt": text}
    bundle = Bundle.load(make_bundle(files), "big", limits=Limits(max_resource_bytes=100))
    client = TestClient(create_app(bundle), base_url=LOCAL)
    url: str | None = "/b/big/file/data.txt"
    shown, pages, size = [], 0, len(text.encode("utf-8"))
    offsets: list[str] = ["0"]
    box = Toolbox(bundle)
    while url is not None:
        html = client.get(url).text
        inert(html)
        body = re.search(r'<pre class="file-text"><code>(.*?)</code></pre>', html, re.S)
        assert body is not None
        shown.append(unescape(body.group(1)))
        assert f"of {size}</span>" in html
        found = re.search(r'<a rel="next" href="([^"]+)">', html)
        url = unescape(found.group(1)) if found else None
        if url is not None:
            offsets.append(url.rsplit("=", 1)[1])
        pages += 1
        assert pages <= size // 46 + 2, "the next links must move forward"
    assert "".join(shown) == text
    assert pages > 10
    # each part's "previous" starts a line, before it, and runs on to it at least
    data = text.encode("utf-8")
    for offset in [int(o) for o in offsets[1:]]:
        html = client.get(f"/b/big/file/data.txt?offset={offset}").text
        found = re.search(r'<a rel="prev" href="[^"]*\?offset=(\d+)">', html)
        if found is None:  # within a page of the start: the start link goes there
            assert offset <= 100 and "start</a>" in html
            continue
        back = int(found.group(1))
        shown_back = box.read_resource(path="data.txt", offset=back)
        assert back < offset and data[back - 1 : back] == b"\n"
        assert back + len(shown_back["text"].encode("utf-8")) >= offset
    # the last part links back to the start and to the part before; the first to neither
    assert '<a href="/b/big/file/data.txt">start</a>' in html and 'rel="prev"' in html
    first = client.get("/b/big/file/data.txt").text
    assert "bytes 1–" in first and "start</a>" not in first and 'rel="prev"' not in first
    # past the end, a bad or negative offset: a page, never an error
    past = client.get(f"/b/big/file/data.txt?offset={size + 50}")
    assert past.status_code == 200 and f"nothing past byte {size}" in past.text
    for odd in ("abc", "-5", ""):
        again = client.get(f"/b/big/file/data.txt?offset={odd}")
        assert again.status_code == 200 and "bytes 1–" in again.text
    # a file that fits shows no pager
    whole = TestClient(create_app(Bundle.load(make_bundle(files), "small")), base_url=LOCAL)
    assert 'class="pager"' not in whole.get("/b/small/file/data.txt").text


def test_the_token_rule_and_the_host_checks_guard_the_viewer(example: Bundle) -> None:
    manager = KnowledgeManager([example])
    open_app = TestClient(viewer(manager, "127.0.0.1", None), base_url=LOCAL)
    assert open_app.get("/").status_code == 200
    assert open_app.get("/", headers={"host": "evil.example:8766"}).status_code == 421
    assert open_app.get("/", headers={"origin": "http://evil.example"}).status_code == 403
    assert open_app.get("/", headers={"origin": "http://localhost:8766"}).status_code == 200
    six = TestClient(viewer(manager, "::1", None), base_url="http://[::1]:8766")
    assert six.get("/").status_code == 200
    assert six.get("/", headers={"host": "[::2]:8766"}).status_code == 421

    guarded = TestClient(viewer(manager, "0.0.0.0", "s3cret"), base_url="http://kb.internal:8766")
    assert guarded.get("/", headers={"accept": "application/json"}).status_code == 401
    to_login = guarded.get("/", headers={"accept": "text/html"}, follow_redirects=False)
    assert (to_login.status_code, to_login.headers["location"]) == (303, "/login")
    assert 'type="password"' in guarded.get("/login").text
    wrong = guarded.post("/login", data={"token": "nope"}, follow_redirects=False)
    # a wrong token is told so and sets no cookie: a link to /login?token=x cannot
    # replace a right cookie and sign its user out
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
    assert "not the one this viewer was started with" in wrong.text
    linked = guarded.get("/login?token=x", follow_redirects=False)
    assert linked.status_code == 401 and "set-cookie" not in linked.headers
    signed = guarded.post("/login", data={"token": "s3cret"}, follow_redirects=False)
    assert (signed.status_code, signed.headers["location"]) == (303, "/")
    assert (
        "HttpOnly" in signed.headers["set-cookie"]
        and "SameSite=Strict" in signed.headers["set-cookie"]
    )
    # a cookie the check refuses (the viewer started again with another token)
    guarded.cookies.clear()
    guarded.cookies.set("okfx_token", "old-token")
    assert guarded.get("/b/knowledge/browse").status_code == 401
    back = guarded.get("/", headers={"accept": "text/html"}, follow_redirects=False)
    assert (back.status_code, back.headers["location"]) == (303, "/login")  # and then
    assert "Max-Age=0" in back.headers["set-cookie"]  # forgotten for a browser
    guarded.cookies.clear()
    signed = guarded.post("/login", data={"token": "s3cret"}, follow_redirects=False)
    assert signed.status_code == 303
    assert guarded.get("/b/knowledge/browse").status_code == 200  # carried by the cookie
    bearer = TestClient(viewer(manager, "0.0.0.0", "s3cret"), base_url="http://kb.internal:8766")
    assert bearer.get("/", headers={"authorization": "Bearer s3cret"}).status_code == 200


def test_signing_in_goes_back_to_the_page_asked_for_and_never_to_another_site(
    example: Bundle,
) -> None:
    """Viewer QA: a shared link to a concept landed on the overview after signing in;
    where to go after is a page of the viewer's own, never another site."""
    guarded = TestClient(
        viewer(KnowledgeManager([example]), "0.0.0.0", "s3cret"), base_url="http://kb:8766"
    )
    asked = guarded.get(
        "/b/knowledge/c/tables/trips.md?x=1",
        headers={"accept": "text/html"},
        follow_redirects=False,
    )
    assert (
        asked.headers["location"] == "/login?next=%2Fb%2Fknowledge%2Fc%2Ftables%2Ftrips.md%3Fx%3D1"
    )
    form = guarded.get(asked.headers["location"]).text
    assert 'name="next" value="/b/knowledge/c/tables/trips.md?x=1"' in form
    signed = guarded.post(
        "/login", data={"token": "s3cret", "next": "/b/knowledge/c/tables/trips.md?x=1"},
        follow_redirects=False,
    )  # fmt: skip
    assert signed.headers["location"] == "/b/knowledge/c/tables/trips.md?x=1"
    for elsewhere in ("//evil.example/", "/\\evil.example", "https://evil.example/", "/a\r\nX: y"):
        sent = guarded.post(
            "/login", data={"token": "s3cret", "next": elsewhere}, follow_redirects=False
        )
        assert sent.headers["location"] == "/", elsewhere
    # the stylesheet is the viewer's own: the sign-in page is styled before signing in
    guarded.cookies.clear()
    assert guarded.get("/static/style.css").status_code == 200
    # and nothing else answers there unsigned: a bare 404 naming no bundle (security QA:
    # the whole viewer answered, its 404 page listing every bundle)
    for probe in ("/static/x", "/static/../b/knowledge/browse", "/static/%2e%2e/b/knowledge/"):
        missing = guarded.get(probe, headers={"accept": "text/html"}, follow_redirects=False)
        assert missing.status_code in (303, 404) and "knowledge" not in missing.text, probe
    assert guarded.get("/b/knowledge/browse", headers={"accept": "x/y"}).status_code == 401


def test_paths_never_leave_the_bundle(tmp_path: Path) -> None:
    from hostile_site import SECRET, build

    bundle = Bundle.load(build(tmp_path))
    client = TestClient(create_app(bundle), base_url=LOCAL)
    probes = [
        "/b/hostile/raw/../secret.txt",
        "/b/hostile/raw/%2e%2e/secret.txt",
        "/b/hostile/raw/..%2Fsecret.txt",
        "/b/hostile/raw/leak.txt",
        "/b/hostile/file/leak.txt",
        "/b/hostile/file/..%2Fsecret.txt",
        "/b/hostile/c/..%2Fsecret.txt",
        "/b/hostile/c/leak.txt",
        "/b/hostile/graph?path=../secret.txt",
        "/b/hostile/raw/%00",
        "/static/..%2F..%2F..%2Fsecret.txt",
    ]
    for url in probes:
        answer = client.get(url)
        assert answer.status_code in (400, 404), url
        assert SECRET not in answer.text, url


def test_a_hostile_bundle_renders_as_text(tmp_path: Path) -> None:
    from hostile_site import FLAG, build

    client = TestClient(create_app(Bundle.load(build(tmp_path))), base_url=LOCAL)
    for url in ("/b/hostile/c/evil-concept.md", "/b/hostile/", "/b/hostile/browse",
                "/b/hostile/log", "/search?q=evil", "/b/hostile/c/friend.md"):  # fmt: skip
        html = client.get(url).text
        inert(html)
        assert "javascript:" not in "".join(hrefs(html)), url
        assert FLAG in html or url != "/b/hostile/c/evil-concept.md"  # shown, as text
    for name, kind in (("evil.html", "text/plain"), ("evil.svg", "text/plain")):
        raw = client.get(f"/b/hostile/raw/{name}")
        assert raw.headers["content-type"].startswith(kind), name
        assert "sandbox" in raw.headers["content-security-policy"]
    big = client.get("/b/hostile/c/big.md").text
    assert "more characters are not shown here" in big


def test_a_hub_and_a_wide_folder_stay_one_bounded_page(make_bundle: MakeBundle) -> None:
    from okfx.web.answers import MAX_LISTED

    files = {"hub.md": concept(title="Hub")}
    files.update({f"f{i:03}/c.md": concept(body="[hub](/hub.md)") for i in range(MAX_LISTED + 50)})
    client = TestClient(create_app(Bundle.load(make_bundle(files), "wide")), base_url=LOCAL)
    hub = client.get("/b/wide/c/hub.md").text
    assert f'Backlinks <span class="n">{MAX_LISTED + 50}</span>' in hub
    assert "and 50 more" in hub
    assert hub.count('<a href="/b/wide/c/f') == MAX_LISTED
    tree = client.get("/b/wide/browse").text
    assert "and 50 more folders" in tree
    graph = client.get("/b/wide/graph?path=/hub.md").text
    assert "More documents are within reach" in graph


def test_problems_show_exact_counts_past_max_warnings_and_what_each_code_means(
    make_bundle: MakeBundle,
) -> None:
    from okfx.limits import Limits

    files = {f"c{i}.md": concept(body=f"[x](missing{i}.md)") for i in range(5)}
    bundle = Bundle.load(make_bundle(files), "many", limits=Limits(max_warnings=2))
    client = TestClient(create_app(bundle), base_url=LOCAL)
    html = client.get("/b/many/problems").text
    assert '<code>broken_link</code> <span class="n">5</span>' in html
    assert "were counted but not recorded" in html
    assert 'class="explanation"' in html
    # five broken links and the note that some were not recorded
    assert "<strong>6</strong> problems" in client.get("/b/many/").text


def _listed(client: TestClient, url: str) -> int:
    found = re.search(r'<strong id="total">(\d+)</strong>', client.get(url).text)
    assert found, url
    return int(found.group(1))


def test_every_figure_links_to_a_listing_of_as_many_concepts(
    client: TestClient, example: Bundle
) -> None:
    html = client.get("/").text.replace("&amp;", "&")
    figures = re.findall(r'href="(/b/knowledge/browse[^"]*)"><strong>(\d+)</strong>', html)
    figures += re.findall(
        r'href="(/b/knowledge/browse[^"]*)">[^<]+</a> <span class="n">(\d+)</span>', html
    )
    assert len(figures) > 10 and any(s.status == "deprecated" for s in example)
    for url, n in figures:
        assert _listed(client, url) == int(n), url
    # A folder's count is what its listing shows: deprecated concepts only when shown.
    for shown in ("", "?deprecated=1"):
        tree = client.get("/b/knowledge/browse" + shown).text.replace("&amp;", "&")
        folders = re.findall(
            r'href="(/b/knowledge/browse\?[^"]*dir=[^"]*)">[^<]+/</a> <span class="n">(\d+)', tree
        )
        assert folders
        for url, n in folders:
            assert _listed(client, url) == int(n), url


def test_on_off_parameters_read_0_and_false_as_off(client: TestClient, example: Bundle) -> None:
    current = sum(c.status != "deprecated" for c in example)
    for off in ("0", "false", "off", "no", ""):
        assert _listed(client, f"/b/knowledge/browse?deprecated={off}") == current
        # a literal "(" is no regular expression, so it is no error either
        assert client.get(f"/grep?pattern=(&regex={off}").status_code == 200
    for on in ("1", "true", "on", "yes", "TRUE"):
        assert _listed(client, f"/b/knowledge/browse?deprecated={on}") == len(example)
        assert client.get(f"/grep?pattern=(&regex={on}").status_code == 400


def test_links_keep_their_heading_across_pages_and_wikilinks_are_links(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {
            "from.md": concept(
                body="[a](notes/to.md#并发模型) [b](notes/to.md#two%20words) "
                "[c](notes/to.md#again-1)\n\nsee [[to]], [[notes/to#Two words|the words]], "
                "[[nowhere]] and `[[to]]`\n"
            ),
            "notes/to.md": concept(body="## 并发模型\n\n## Two words\n\n## Again\n\n## again\n"),
        }
    )
    page = "/b/w/c/from.md"
    to = "/b/w/c/notes/to.md"
    with_wikilinks = TestClient(create_app(Bundle.load(root, "w", wikilinks=True)), base_url=LOCAL)
    html = with_wikilinks.get(page).text
    ids = re.findall(r'id="(h-[^"]+)"', with_wikilinks.get(to).text)
    assert ids == ["h-并发模型", "h-two-words", "h-again", "h-again-1"]
    for anchor in ("h-并发模型", "h-two-words", "h-again-1"):
        assert f'href="{to}#{anchor}"' in html
    assert f'see <a href="{to}">to</a>, ' in html
    assert f'<a href="{to}#h-two-words">the words</a>' in html
    assert '<span class="broken-link" title="unresolved link">nowhere</span>' in html
    assert "<code>[[to]]</code>" in html  # in code, text
    # Loaded without wikilinks, [[...]] is text, as the loader reads it.
    plain_client = TestClient(create_app(Bundle.load(root, "w")), base_url=LOCAL)
    plain = plain_client.get(page).text
    assert "see [[to]], [[notes/to#Two words|the words]], [[nowhere]]" in plain
    # and the page says why (viewer QA: databricks' [[Unity Catalog]] as bare text)
    said = "This page writes [[wikilinks]], shown as text: okfx follows them only"
    assert said in plain and said not in html
    assert said not in plain_client.get(to).text  # a page without them says nothing


def test_an_ambiguous_wikilink_says_which_files_it_names(make_bundle: MakeBundle) -> None:
    """Viewer QA: ``[[country]]`` (two files) was red as "unresolved link" in the body and
    missing from the sidebar's Unresolved list, which counted only a missing page."""
    root = make_bundle(
        {
            "qa/rich.md": concept(body="See [[country]] and [[no-such-thing]].\n"),
            "queries/country.md": concept(),
            "types/country.md": concept(),
        }
    )
    client = TestClient(create_app(Bundle.load(root, "g", wikilinks=True)), base_url=LOCAL)
    html = client.get("/b/g/c/qa/rich.md").text
    assert (
        '<span class="broken-link" title="names 2 files, so it is not followed: '
        '/queries/country.md, /types/country.md">country</span>'
    ) in html
    assert '<span class="broken-link" title="unresolved link">no-such-thing</span>' in html
    (listed,) = re.findall(r'id="links-broken">Unresolved <span class="n">(\d+)', html)
    assert listed == "2"
    assert '<code>[[country]]</code> <span class="quiet">names several files</span>' in html
    assert 'one of <a href="/b/g/c/queries/country.md">/queries/country.md</a>' in html


def test_a_page_written_in_chinese_or_japanese_says_its_language(make_bundle: MakeBundle) -> None:
    """Viewer QA: a Chinese vault's pages said lang="en", so a screen reader used an
    English voice and a browser its Latin glyph choices."""
    root = make_bundle(
        {
            "zh.md": concept(body="缓存雪崩是大量缓存同时失效，使用 Redis 时要注意。\n"),
            "ja.md": concept(body="製品・エディション・バージョンの選び方について。\n"),
            "en.md": concept(body="One row per order, with a note in 中文.\n"),
        }
    )
    client = TestClient(create_app(Bundle.load(root, "l")), base_url=LOCAL)
    assert '<div class="body markdown" lang="zh">' in client.get("/b/l/c/zh.md").text
    assert '<div class="body markdown" lang="ja">' in client.get("/b/l/c/ja.md").text
    assert '<div class="body markdown">' in client.get("/b/l/c/en.md").text


def test_search_links_the_other_releases_of_a_page_it_shows_once(make_bundle: MakeBundle) -> None:
    guide = concept("Guide", "How replication works.", title="Replication guide")
    root = make_bundle({f"db/1.{n}/replication.md": guide for n in range(12)})
    client = TestClient(create_app(Bundle.load(root, "v")), base_url=LOCAL)
    html = client.get("/search?q=replication").text
    assert html.count('class="hit row') == 1
    assert re.search(r'<a class="primary" href="/b/v/c/db/1.11/replication.md">', html)
    also = re.search(r'<p class="quiet versions">(.*?)</p>', html)
    assert also, html
    shown = re.findall(r'<a href="([^"]+)">([^<]+)</a>', also.group(1))
    assert [version for _, version in shown] == [f"1.{n}" for n in range(10, 0, -1)]
    assert also.group(1).endswith(" and 1 more")  # 1.0, past the ten named
    assert all(client.get(url).status_code == 200 for url, _ in shown)


def test_search_marks_a_chinese_term_wherever_it_is(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "zh.md": concept(
                title="线程池", body="线程池可以控制并发数量，避免高并发下创建过多线程。"
            )
        }
    )
    html = (
        TestClient(create_app(Bundle.load(root, "zh")), base_url=LOCAL).get("/search?q=并发").text
    )
    snippet = re.search(r'<p class="snippet">(.*?)</p>', html)
    assert snippet and re.findall(r"<mark>([^<]*)</mark>", snippet.group(1)) == ["并发", "并发"]
    assert marked("the dock docks at docking", ["dock"]) == [
        ("the ", False), ("dock", True), (" ", False), ("docks", True), (" at ", False),
        ("docking", True),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("## **Domain** terms", "Domain terms"),
        ("* [RUC](/metrics/resource-utilization-classification.md) - used by", "RUC - used by"),
        ("| `snr_ratio` | FLOAT | Signal to noise |", "snr_ratio · FLOAT · Signal to noise"),
        ("a [b [c](d) e", "a [b c e"),  # an unmatched bracket stays
        ("#hashtag and 3 * 4", "#hashtag and 3 * 4"),  # no heading, no bullet
        # a link the snippet's cut ends inside (bun-book): its text, not its address
        (
            "…cannot access [Windows network](https://learn.micro…",
            "…cannot access Windows network…",
        ),
        # the walk over the explorer's glossary: a cut inside a link's text, at either
        # end; single-star emphasis; a blockquote's mark
        ("…unlike a [bearer to…", "…unlike a bearer to…"),
        ("…RFC 9700](oauth-2-0-security-bcp.md), PKCE…", "…RFC 9700, PKCE…"),
        (
            "decouples policy *decisions* from *enforcement*.",
            "decouples policy decisions from enforcement.",
        ),
        ("> How does Kolkata bat?", "How does Kolkata bat?"),
        ("glob *.md and 2*3*4", "glob *.md and 2*3*4"),
    ],
)
def test_a_snippet_reads_as_text_on_the_search_page(line: str, shown: str) -> None:
    """Agents get the snippet as the markdown line it is; a person sees its text."""
    assert plain(line) == shown


def test_the_location_line_names_the_bundle_the_folder_and_the_file(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {"top.md": concept(), "a/b/deep.md": concept(), "notes.txt": "n\n", "a/b/data.csv": "x\n"}
    )
    client = TestClient(create_app(Bundle.load(root, "loc")), base_url=LOCAL)

    def line(path: str) -> str:
        found = re.search(r'<nav class="crumbs-line"[^>]*>(.*?)</nav>', client.get(path).text)
        assert found, path
        return re.sub(r"<[^>]+>", "", found.group(1))

    assert line("/b/loc/c/top.md") == "loc / top.md"
    assert line("/b/loc/file/notes.txt") == "loc / notes.txt"  # was "loc / /"
    assert line("/b/loc/file/a/b/data.csv") == "loc / a / b / data.csv"
    assert line("/b/loc/c/a/b/deep.md") == "loc / a / b / deep.md"
    page = client.get("/b/loc/c/a/b/deep.md").text  # each folder its own step up
    assert 'href="/b/loc/browse?dir=%2Fa">a</a>' in page
    assert 'href="/b/loc/browse?dir=%2Fa%2Fb">b</a>' in page


def test_a_folder_lists_its_other_files_so_attachments_are_reachable(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {
            "a.md": concept(body="[diagram](assets/flow.png)"),
            "assets/flow.png": b"\x89PNG\r\n\x1a\n",
            "assets/notes.txt": "plain",
            "assets/untyped.md": "no frontmatter\n",
        }
    )
    client = TestClient(create_app(Bundle.load(root, "att")), base_url=LOCAL)
    listing = client.get("/b/att/browse?dir=/assets").text
    assert '<strong id="total">0</strong>' in listing  # no concepts here...
    shown = re.findall(r'<a href="(/b/att/file/assets/[^"]+)">([^<]+)</a>', listing)
    assert [name for _, name in shown] == ["flow.png", "notes.txt", "untyped.md"]  # ...but files
    assert all(client.get(url).status_code == 200 for url, _ in shown)
    assert "Other files" not in client.get("/b/att/browse").text  # a.md is a concept


def test_problems_of_one_code_past_the_last_page_show_the_last_page(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle({f"c{i:03}.md": concept(body=f"[x](/gone{i:03}.md)") for i in range(230)})
    client = TestClient(create_app(Bundle.load(root, "p")), base_url=LOCAL)

    def listed(page: int) -> list[str]:
        html = client.get(f"/b/p/problems?code=broken_link&page={page}").text
        return re.findall(r"/gone(\d{3})\.md", html)

    first, last = listed(1), listed(2)
    assert len(first) == 200 and len(last) == 30 and not set(first) & set(last)
    assert listed(7) == last


def test_browse_links_the_folders_own_index_and_log(make_bundle: MakeBundle) -> None:
    """Aembit keeps an index.md in every folder: the folder's page links it."""
    root = make_bundle(
        {
            "guide/index.md": "* [a](a.md) - a\n",
            "guide/log.md": "# Log\n\n## 2026-07-01\n\n- a\n",
            "guide/a.md": concept(),
            "other/b.md": concept(),
        }
    )
    client = TestClient(create_app(Bundle.load(root, "b")), base_url=LOCAL)
    html = client.get("/b/b/browse?dir=guide").text
    reserved = re.findall(r'<p class="reserved">(.*?)</p>', html, re.S)
    assert reserved and re.findall(r'href="([^"]+)">(\w+\.md)</a>', reserved[0]) == [
        ("/b/b/c/guide/index.md", "index.md"),
        ("/b/b/c/guide/log.md", "log.md"),
    ]
    assert 'class="reserved"' not in client.get("/b/b/browse?dir=other").text


def test_a_heading_that_starts_with_a_date_shows_the_day_and_its_title(
    make_bundle: MakeBundle,
) -> None:
    """m3e-okf's ``## 2026-07-11 — Phase 5b: ...``: the day groups the entries, and the
    title the author gave it is still shown; a time of day is shown as a time, not as a
    title (viewer QA: two runs of one day had read the same)."""
    log = "# Log\n\n## 2026-07-24T13:14:12Z\n* b\n\n## 2026-07-11 — Phase 5b: established\n* a\n"
    root = make_bundle({"a.md": concept(), "log.md": log})
    html = TestClient(create_app(Bundle.load(root, "b")), base_url=LOCAL).get("/b/b/log").text
    heads = re.findall(r"<h3>(.*?)</h3>", html)
    assert heads == [
        '<time datetime="2026-07-24">2026-07-24</time> <span class="quiet">13:14:12Z</span>',
        '<time datetime="2026-07-11">2026-07-11</time> Phase 5b: established',
    ]


def test_a_log_out_of_order_says_so_and_an_undated_heading_looks_undated(
    make_bundle: MakeBundle,
) -> None:
    """bun-book's log runs oldest first: shown as written, with a notice, so a reader does
    not take its first row for the latest; m3e-okf's "Provenance discipline" heading is
    no day of the timeline."""
    log = (
        "# Log\n\n## 2026-07-07\n* a\n\n## 2026-07-20\n* b\n\n## Provenance discipline\n\nNotes.\n"
    )
    root = make_bundle({"a.md": concept(), "log.md": log})
    html = TestClient(create_app(Bundle.load(root, "b")), base_url=LOCAL).get("/b/b/log").text
    assert "shown as written, so the first is not the latest change" in html
    assert re.findall(r'<time datetime="([0-9-]+)">', html) == ["2026-07-07", "2026-07-20"]
    assert re.search(
        r'<li class="entry undated"><h3>Provenance discipline <span class="quiet">\(no date\)', html
    )
    ordered = "# Log\n\n## 2026-07-20\n* b\n"
    root = make_bundle({"a.md": concept(), "log.md": ordered})
    html = TestClient(create_app(Bundle.load(root, "b")), base_url=LOCAL).get("/b/b/log").text
    assert "shown as written" not in html and "undated" not in html


def test_index_and_log_links_show_beside_the_backlinks_and_a_producers_id_shows(
    make_bundle: MakeBundle,
) -> None:
    """graphql-okf's directives are linked only from their folder's index.md and the log:
    "nothing links here" was false. flutter-okf's ``id`` keys are what its
    ``prerequisites`` name, so the page shows them. An index page takes its heading."""
    files = {
        "d/deprecated.md": concept(id="api.deprecated", prerequisites="[api.skip]"),
        "d/index.md": "# Directives\n\n* [deprecated](deprecated.md) - marks a field\n",
        "log.md": "# Log\n\n## 2026-07-24\n* added [deprecated](d/deprecated.md)\n",
    }
    client = TestClient(create_app(Bundle.load(make_bundle(files), "b")), base_url=LOCAL)
    html = client.get("/b/b/c/d/deprecated.md").text
    assert "no concept links here" in html and "nothing links here" not in html
    listed = re.search(r'<p class="quiet listed">(.*?)</p>', html, re.S)
    assert listed and re.findall(r'href="([^"]+)"', listed.group(1)) == [
        "/b/b/c/d/index.md",
        "/b/b/c/log.md",
    ]
    assert "api.deprecated" in html and "api.skip" in html
    index = client.get("/b/b/c/d/index.md").text
    assert re.search(r"<h1[^>]*>\s*Directives \(index\)", index)


def test_a_short_term_marks_whole_words_and_a_weak_hit_says_so(make_bundle: MakeBundle) -> None:
    """ "S4U" is looked up as s, 4, u and s4u: every word starting with s was marked, and
    hits holding only a letter of it looked as good as the one that says S4U."""
    assert marked("Service user stored S4U 4 s", ["s", "4", "s4u"]) == [
        ("Service user stored ", False), ("S4U", True), (" ", False), ("4", True),
        (" ", False), ("s", True),
    ]  # fmt: skip
    root = make_bundle(
        {
            "cron.md": concept(title="Cron", body="Runs as S4U on Windows.\n"),
            "storage.md": concept(title="Storage", body="Files s and u.\n"),
        }
    )
    html = TestClient(create_app(Bundle.load(root, "b")), base_url=LOCAL).get("/search?q=S4U").text
    rows = re.findall(r'<li class="hit row">(.*?)</li>', html, re.S)
    assert len(rows) == 2 and "Cron" in rows[0] and "Storage" in rows[1]
    assert "weak match" not in rows[0] and "weak match" in rows[1]


def test_a_sources_own_keys_show_in_its_row_and_empty_columns_do_not(
    make_bundle: MakeBundle,
) -> None:
    """m3e-okf's sources carry url, retrieved and note: the table showed four empty
    columns, and the note (what the page supports) only in a folded box."""
    text = (
        "---\ntype: Pattern\nsources:\n  - url: https://m3.test/dialogs\n    retrieved: "
        "2026-07-11\n    note: Dialogs are for decisions.\n  - resource: https://m3.test/x\n"
        "    usage_count: 0\n---\nBody.\n"
    )
    client = TestClient(create_app(Bundle.load(make_bundle({"p.md": text}), "b")), base_url=LOCAL)
    html = client.get("/b/b/c/p.md").text
    table = re.search(r'<table class="sources">(.*?)</table>', html, re.S)
    assert table
    assert re.findall(r"<th>([^<]*)</th>", table.group(1)) == ["Resource", "Uses", "Other"]
    assert "Dialogs are for decisions." in table.group(1)
    assert "retrieved:</span> 2026-07-11" in table.group(1)
    folded = html[html.index('class="extra"') :] if 'class="extra"' in html else ""
    assert "sources[0].note" not in folded


def test_a_concepts_aliases_show_under_its_title_as_text(make_bundle: MakeBundle) -> None:
    """The explorer's glossary and the proof-of-concept's runbooks name their concepts'
    other names in ``aliases``: shown under the title (escaped, as bundle text always is),
    but not one that only spells the title again (the explorer lists each title among its
    aliases), and nothing for a concept without them."""
    files = {
        "vhost.md": concept(
            "Term", "Body.\n", title="Virtual host", aliases="[virtual host, vhost, '<b>x</b>']"
        ),
        "plain.md": concept("Term", "Body.\n"),
    }
    client = TestClient(create_app(Bundle.load(make_bundle(files), "b")), base_url=LOCAL)
    html = client.get("/b/b/c/vhost.md").text
    assert '<p class="aka">Also called vhost, &lt;b&gt;x&lt;/b&gt;</p>' in html
    assert 'class="aka"' not in client.get("/b/b/c/plain.md").text


def test_a_concept_page_shows_its_title_once(make_bundle: MakeBundle) -> None:
    """Walk QA: every page showed its title twice, as the page's heading and as the
    body's own opening ``# Title``; a body whose first heading says something else
    keeps it."""
    files = {
        "a.md": concept("Term", "# Snake Plant\n\nTolerant.\n", title="Snake plant"),
        "b.md": concept("Term", "# Care guide\n\nWater.\n", title="Snake plant"),
    }
    client = TestClient(create_app(Bundle.load(make_bundle(files), "b")), base_url=LOCAL)
    page = client.get("/b/b/c/a.md").text
    assert len(re.findall(r"<h[1-6][^>]*>\s*Snake [Pp]lant\s*</h[1-6]>", page)) == 1
    assert "Tolerant." in page
    assert re.search(r"<h[1-6][^>]*>\s*Care guide", client.get("/b/b/c/b.md").text)


def test_grep_says_how_many_concepts_its_lines_come_from_and_a_log_names_its_path_once(
    make_bundle: MakeBundle,
) -> None:
    """Walk QA: the grep page read "200 matching lines in 796 concepts" when its 200
    lines came from fewer concepts than matched; a log without a title showed its path
    twice as its heading."""
    files: dict[str, str | bytes] = {f"c{i}.md": concept(body="powerplay\n" * 3) for i in range(80)}
    files["sub/log.md"] = "## 2026-05-01\n* Added [c1](../c1.md).\n"
    client = TestClient(create_app(Bundle.load(make_bundle(files), "b")), base_url=LOCAL)
    figures = re.search(r'<p class="figures">(.*?)</p>', client.get("/grep?pattern=powerplay").text)
    assert figures
    text = re.sub(r"<[^>]+>", "", figures.group(1))
    assert text == "200 matching lines from 67 concepts, of the 80 concepts that match"
    heading = re.search(r'<h2 id="log-1">(.*?)</h2>', client.get("/b/b/log").text, re.S)
    assert heading and re.sub(r"<[^>]+>", "", heading.group(1)).strip() == "/sub/log.md"


def test_a_bundles_home_shows_that_bundles_links_in_the_top_bar(make_bundle: MakeBundle) -> None:
    """With several bundles served, a bundle's home page showed only Overview (marked
    current) and Search: no way on to its browse, graph, problems or log."""
    manager = KnowledgeManager()
    manager.add(Bundle.load(make_bundle({"a.md": concept()}), "one"))
    manager.add(Bundle.load(make_bundle({"b.md": concept()}), "two"))
    client = TestClient(create_app(manager), base_url=LOCAL)
    top = re.search(r'<nav aria-label="Site">(.*?)</nav>', client.get("/b/two/").text, re.S)
    assert top
    links = re.findall(r'<a href="([^"]+)"\s*(aria-current="page")?>([^<]+)</a>', top.group(1))
    assert [(text, bool(current)) for _, current, text in links] == [
        ("Overview", False), ("Browse", False), ("Graph", False), ("Problems", False),
        ("Log", False), ("Search", False),
    ]  # fmt: skip
    assert all("two" in href for href, _, text in links if text in ("Browse", "Log"))
    home = re.search(r'<nav aria-label="Site">(.*?)</nav>', client.get("/").text, re.S)
    assert home and 'aria-current="page">Overview' in home.group(1)


def test_a_graph_without_edges_says_why(tmp_path: Path, make_bundle: MakeBundle) -> None:
    # Links written from the repository root (/kb/...) all break inside the bundle kb.
    root = write_tree(
        tmp_path / "repo" / "kb",
        {
            "a.md": concept(body="See [b](/kb/b.md) and [c](/kb/c.md).\n"),
            "b.md": concept(body="Back to [a](/kb/a.md).\n"),
            "c.md": concept(),
        },
    )
    app = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL)
    whole = app.get("/b/kb/graph").text
    notice = re.search(r'<p class="notice" id="unlinked">(.*?)</p>', whole)
    assert notice is not None
    assert "No link between these 3 documents resolves: 3 of their links" in notice.group(1)
    assert "written from the repository root" in notice.group(1)
    assert 'href="/b/kb/problems?code=repository_root_links"' in notice.group(1)
    one = app.get("/b/kb/graph?path=/c.md").text
    assert "No link from or to this document resolves: it holds none" in one
    # Unlinked concepts with no broken link; and a linked graph has no notice.
    plain = make_bundle({"x.md": concept(), "y.md": concept()})
    quiet = TestClient(create_app(Bundle.load(plain, "p")), base_url=LOCAL).get("/b/p/graph")
    assert "they hold no links to each other" in quiet.text
    linked = TestClient(create_app(Bundle.load(EXAMPLE)), base_url=LOCAL)
    assert 'id="unlinked"' not in linked.get("/b/knowledge/graph").text


def test_search_marks_the_word_forms_a_hit_matched(make_bundle: MakeBundle) -> None:
    # "pushed" matched "push" (a word form): the snippet marks it, whole words only.
    assert marked("Block: push protection, no pushover", ["pushed"], ["push", "pushing"]) == [
        ("Block: ", False), ("push", True), (" protection, no pushover", False),
    ]  # fmt: skip
    root = make_bundle(
        {"protect.md": concept(title="Protection", body="Block: push protection on main.\n")}
    )
    app = TestClient(create_app(Bundle.load(root, "p")), base_url=LOCAL)
    html = app.get("/search?q=what+gets+pushed").text
    snippet = re.search(r'<p class="snippet">(.*?)</p>', html)
    assert snippet and re.findall(r"<mark>([^<]*)</mark>", snippet.group(1)) == ["push"]


def test_links_that_leave_the_bundle_are_listed_without_a_link(make_bundle: MakeBundle) -> None:
    root = make_bundle({"d/a.md": concept(body="See [the guide](../../docs/guide.md).\n")})
    app = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL)
    html = app.get("/b/kb/c/d/a.md").text
    side = html[html.index('id="links-leaving"') :]
    assert re.search(r'<span class="n">(\d+)</span>', side).group(1) == "1"  # type: ignore[union-attr]
    item = re.search(r"<li>(.*?)</li>", side, re.S)
    assert item is not None and "<a " not in item.group(1)
    assert "<code>../../docs/guide.md</code>" in item.group(1) and "the guide" in item.group(1)
    plain = make_bundle({"a.md": concept(body="No links.\n")})
    assert (
        "links-leaving"
        not in TestClient(create_app(Bundle.load(plain, "p")), base_url=LOCAL)
        .get("/b/p/c/a.md")
        .text
    )


def test_a_leaving_link_into_a_sibling_shown_beside_it_links_its_page(tmp_path: Path) -> None:
    """New-producers QA F8: dharma-okf's sibling bundles link each other's pages."""
    left = write_tree(tmp_path / "left", {"a.md": concept(body="[twin](../right/x.md)\n")})
    right = write_tree(tmp_path / "right", {"x.md": concept(title="X")})
    manager = KnowledgeManager([Bundle.load(left), Bundle.load(right)])
    html = TestClient(create_app(manager), base_url=LOCAL).get("/b/left/c/a.md").text
    item = re.search(r"<li>(.*?)</li>", html[html.index('id="links-leaving"') :], re.S)
    assert item is not None and '<a href="/b/right/c/x.md">twin</a>' in item.group(1)


def test_an_unresolved_link_links_the_concept_it_most_likely_meant(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {"a.md": concept(body="See [b](/kb/topics/b-page.md).\n"), "topics/b-page.md": concept()}
    )
    html = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL).get("/b/kb/c/a.md")
    meant = re.search(r'<span class="meant">did you mean <a href="([^"]+)">([^<]+)</a>', html.text)
    assert meant is not None
    assert meant.groups() == ("/b/kb/c/topics/b-page.md", "/topics/b-page.md")


def test_the_graph_around_an_index_draws_the_folder_indexes_it_lists(client: TestClient) -> None:
    html = client.get("/b/knowledge/graph?path=/index.md").text
    drawn = dict(
        re.findall(
            r'<a href="/b/knowledge/c([^"]+)" class="node[^>]*>.*?<text[^>]*>([^<]*)</text>',
            html,
            re.S,
        )
    )
    assert drawn["/index.md"] == "index"
    assert drawn["/tables/index.md"] == "tables/" and drawn["/metrics/index.md"] == "metrics/"
    deeper = client.get("/b/knowledge/graph?path=/index.md&depth=2").text
    assert 'href="/b/knowledge/c/tables/trips.md" class="node' in deeper  # through tables/


def test_the_graph_around_a_concept_draws_the_index_that_lists_it(client: TestClient) -> None:
    """Viewer QA: tables/index.md's graph drew its edge to trips, trips' graph left the
    index out (its page says "Listed in /tables/index.md")."""
    html = client.get("/b/knowledge/graph?path=/tables/trips.md").text
    assert 'href="/b/knowledge/c/tables/index.md" class="node' in html


def test_an_unresolved_link_says_which_folder_is_missing_and_names_its_target_once(
    make_bundle: MakeBundle,
) -> None:
    """m3e viewer QA: the Unresolved box printed the target twice (as the link's text and
    as its path) and gave no reason for 47 links into a folder outside the bundle."""
    body = "[/implementations/web/nav-bar](/implementations/web/nav-bar)\n"
    root = make_bundle({"components/nav.md": concept(body=body)})
    html = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL).get(
        "/b/kb/c/components/nav.md"
    )
    side = html.text[html.text.index('id="links-broken"') :]
    item = re.search(r"<li>(.*?)</li>", side, re.S)
    assert item is not None
    assert item.group(1).count("/implementations/web/nav-bar") == 1
    assert "no folder <code>/implementations/</code> in this bundle" in item.group(1)


def test_a_link_to_a_symlink_out_of_the_bundle_says_okfx_does_not_read_it(
    tmp_path: Path,
) -> None:
    """Viewer QA: such a link read as a missing file or folder, and its page as 404 "no
    concept" / "no folder", though the author sees the file."""
    outside, root = tmp_path / "outside", tmp_path / "kb"
    outside.mkdir()
    root.mkdir()
    (outside / "c.md").write_text("---\ntype: Note\n---\n", encoding="utf-8")
    body = "[d](outdir/c.md) " * 2 + "[s](leak.md)\n"
    (root / "a.md").write_text(f"---\ntype: Note\n---\n{body}", encoding="utf-8")
    os.symlink(outside, root / "outdir")
    os.symlink(outside / "c.md", root / "leak.md")
    app = app_of(root)
    page = app.get("/b/kb/c/a.md").text
    side = page[page.index('id="links-broken"') :]
    assert "okfx does not read it: <code>/outdir: symlink points outside the bundle</code>" in side
    assert "no folder" not in side
    assert '<p class="cause">' not in app.get("/b/kb/problems").text
    for url, said in (
        ("/b/kb/c/leak.md", "okfx does not read /leak.md (/leak.md: symlink points outside"),
        ("/b/kb/browse?dir=outdir", "okfx does not read the folder /outdir/ (/outdir: symlink"),
    ):
        answer = app.get(url)
        assert answer.status_code == 404 and said in answer.text, url


def test_a_page_lists_its_own_files_problems(make_bundle: MakeBundle) -> None:
    """flutter viewer QA: a concept whose frontmatter other consumers reject (an
    unquoted ': ') looked healthy; its error showed only on the Problems page, grouped by
    code. A page now lists its file's problems, errors first and open."""
    root = make_bundle(
        {
            "a.md": "---\ntype: Note\ndescription: Layout: three passes\n---\nBody [x](gone.md).\n",
            "README.md": "# Not a concept\n",
            "b.md": concept(body="Fine.\n"),
        }
    )
    app = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL)
    html = app.get("/b/kb/c/a.md").text
    box = re.search(r'<details class="own-problems" open>(.*?)</details>', html, re.S)
    assert box is not None
    summary = re.sub(r"<[^>]+>", "", box.group(1).split("</summary>")[0]).split()
    assert summary == ["1", "error", "2", "problems", "in", "this", "file"]
    codes = re.findall(
        r'class="badge (error|warning)" href="/b/kb/problems\?code=(\w+)"', box.group(1)
    )
    assert codes == [("error", "unquoted_colon"), ("warning", "broken_link")]
    assert box.group(1).count("(line 3)") == 1  # said once, as the file's line
    readme = app.get("/b/kb/file/README.md").text
    assert 'href="/b/kb/problems?code=no_frontmatter"' in readme
    assert "own-problems" not in app.get("/b/kb/c/b.md").text


def test_a_page_lists_the_checks_problems_and_a_day_as_a_day(make_bundle: MakeBundle) -> None:
    """Viewer QA: a broken_anchor (a check okfx validate adds to the load's problems)
    showed on the Problems page and not on its own page; the overview's recent list gave
    a day written as a day as its midnight."""
    root = make_bundle(
        {
            "a.md": concept(body="See [b](b.md#nowhere).\n", generated="{at: 2026-01-02}"),
            "b.md": concept(body="# Heading\n"),
        }
    )
    app = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL)
    box = re.search(
        r'<details class="own-problems"[^>]*>(.*?)</details>', app.get("/b/kb/c/a.md").text, re.S
    )
    assert box is not None and "/b/kb/problems?code=broken_anchor" in box.group(1)
    overview = app.get("/b/kb/").text
    assert "<time>2026-01-02</time>" in overview and "2026-01-02T00:00:00Z" not in overview


def test_browse_filters_count_the_folder_and_unknown_places_are_not_found(
    make_bundle: MakeBundle,
) -> None:
    """m3e viewer QA: under /components the Type filter offered "pattern (8)", the
    bundle's count, and gave 0 concepts; /browse?dir=/nope and /problems?code=bogus
    answered 200 with an empty page."""
    root = make_bundle(
        {
            "components/a.md": concept("Component"),
            "components/b.md": concept("Component"),
            "patterns/p.md": concept("Pattern"),
            "bad.md": "---\ntype: Note\ndescription: a: b\n---\n",
        }
    )
    client = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL)
    html = client.get("/b/kb/browse?dir=/components").text
    options = re.findall(r"<option[^>]*>([^<]+)</option>", html)
    assert "Component (2)" in options and not any(o.startswith("Pattern") for o in options)
    assert "Pattern (1)" in re.findall(
        r"<option[^>]*>([^<]+)</option>", client.get("/b/kb/browse").text
    )
    missing = client.get("/b/kb/browse?dir=/component")
    assert missing.status_code == 404 and "/components/" in missing.text  # the close one
    assert client.get("/b/kb/problems?code=bogus").status_code == 404
    problems = client.get("/b/kb/problems?code=unquoted_colon").text
    assert problems.count("(line 3)") == 1  # said once, as the file's line


def test_a_search_that_fills_its_page_says_there_may_be_more(make_bundle: MakeBundle) -> None:
    """m3e viewer QA: a broad query showed exactly 20 hits, with no total and no way to
    see more, though the tool takes up to 50."""
    files: dict[str, str | bytes] = {
        f"c{i:02d}.md": concept(body=f"Color contrast note {i}.\n") for i in range(30)
    }
    client = TestClient(create_app(Bundle.load(make_bundle(files), "kb")), base_url=LOCAL)
    html = client.get("/search?q=color+contrast&type=Metric").text
    assert len(re.findall(r'<li class="hit row', html)) == 20
    more = re.search(r'The best 20 hits are shown; <a href="([^"]+)">show up to 50</a>', html)
    assert more is not None
    wider = client.get(more.group(1).replace("&amp;", "&")).text
    assert len(re.findall(r'<li class="hit row', wider)) == 30  # every one, the filter kept
    assert "more-hits" not in wider


def test_a_day_written_without_a_time_is_shown_as_that_day(make_bundle: MakeBundle) -> None:
    """flutter viewer QA: "timestamp: 2026-01-01" showed as the instant
    2026-01-01T00:00:00Z, a time the author never wrote."""
    root = make_bundle(
        {
            "a.md": concept(timestamp="2026-01-01"),
            "b.md": concept(generated="{by: 'agent:x', at: 2026-02-03T04:05:06Z}"),
        }
    )
    client = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL)
    day = client.get("/b/kb/c/a.md").text
    assert "<time>2026-01-01</time>" in day and "(a day: no time was written)" in day
    assert "T00:00:00Z" not in day.split('id="prov"')[1].split("</dl>")[0]
    instant = client.get("/b/kb/c/b.md").text
    assert "at <time>2026-02-03T04:05:06Z</time>" in instant and "a day:" not in instant
    box = Toolbox(Bundle.load(root))
    assert box.read_concept(path="a")["generated"]["date_only"] is True
    assert "date_only" not in box.read_concept(path="b")["generated"]


def test_the_problems_page_names_what_a_broken_link_meant(make_bundle: MakeBundle) -> None:
    """Viewer QA: the Problems page listed broken links without the "did you mean" their
    pages give, so an author fixing them had to open each page."""
    root = make_bundle(
        {
            "a.md": concept(body="See [the trips](tables/trps.md).\n"),
            "tables/trips.md": concept(),
        }
    )
    app = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL)
    html = app.get("/b/kb/problems?code=broken_link").text
    meant = re.search(r'<span class="meant">did you mean <a href="([^"]+)">([^<]+)</a>', html)
    assert meant is not None and meant.group(2) == "/tables/trips.md"
    assert app.get(meant.group(1)).status_code == 200


def test_graph_edges_show_their_direction_and_the_field_they_come_from(
    make_bundle: MakeBundle,
) -> None:
    """Viewer QA: edges were plain lines, a body link and a `prerequisites` id alike, and
    the current depth looked like the other depth's link."""
    root = make_bundle(
        {
            "a.md": concept("Note", "See [b](b.md).\n", id="k.a"),
            "b.md": concept("Note", "B.\n", id="k.b", prerequisites="[k.c]"),
            "c.md": concept("Note", "C.\n", id="k.c"),
        }
    )
    app = create_app(Bundle.load(root, "kb", state_cache=False))
    html = TestClient(app, base_url=LOCAL).get("/b/kb/graph?path=/b.md&depth=1").text
    titles = re.findall(
        r"<line class=\"edge([^\"]*)\"[^>]*marker-end=\"url\(#([a-z-]+)\)\"><title>([^<]+)</title>",
        html,
    )
    assert sorted(titles) == [
        ("", "arrow-root", "a → b (via body)"),
        (" relation", "arrow", "b → c (via prerequisites)"),
    ]
    assert '<marker id="arrow"' in html and '<marker id="arrow-root"' in html
    assert '<strong aria-current="true">1</strong>' in html  # the depth shown is no link
    assert re.search(r'<a href="[^"]*depth=2[^"]*">2</a>', html)
    # a [[wikilink]] in the body is a body link: solid, not dashed (viewer QA: a vault's
    # every edge was dashed, which the legend says of frontmatter fields)
    wiki = make_bundle({"w.md": concept("Note", "See [[x]].\n"), "x.md": concept("Note", "X\n")})
    app = create_app(Bundle.load(wiki, "wk", state_cache=False, wikilinks=True))
    html = TestClient(app, base_url=LOCAL).get("/b/wk/graph?path=/w.md&depth=1").text
    assert re.findall(r"<line class=\"edge([^\"]*)\"[^>]*><title>([^<]+)</title>", html) == [
        ("", "w → x (via wikilink)")
    ]


def test_a_type_written_in_two_cases_is_one_figure_and_every_tag_is_offered(
    tmp_path: Path,
) -> None:
    """Viewer QA: "reference 7" and "Reference 1" were two types, and the second's link
    listed 8 (the filter reads any case); the tag drop-down stopped at 60 of 134 tags,
    and a tag opened from the address read "(0)" beside the concept it listed."""
    files = {f"r{i}.md": "---\ntype: reference\n---\n" for i in range(7)}
    files["big.md"] = "---\ntype: Reference\n---\n"
    files.update({f"t{i:03}.md": f"---\ntype: Note\ntags: [tag{i:03}]\n---\n" for i in range(70)})
    files["pair.md"] = "---\ntype: Note\ntags: [tag069]\n---\n"
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    app = app_of(tmp_path)
    browse = app.get(f"/b/{tmp_path.name}/browse").text
    (kinds,) = re.findall(r'<select name="type">(.*?)</select>', browse, re.S)
    assert ">Reference (8)</option>" in kinds and kinds.count("eference") == 2  # value, label
    assert browse.count('<option value="tag0') == 70
    picked = app.get(f"/b/{tmp_path.name}/browse?tag=tag069").text
    assert ">tag069 (2)</option>" in picked


def test_one_concept_and_one_line_are_said_in_the_singular(client: TestClient) -> None:
    """Viewer QA: "1 concepts" and "1 matching lines from 1 concepts"."""
    one = client.get("/b/knowledge/browse?type=Dataset").text
    assert re.search(r'<strong id="total">1</strong> concept(?!s)', one)
    grep = client.get("/grep?pattern=spokeway-prod.analytics.bikes").text
    assert re.search(r"<strong>1</strong> matching line from 1 concept\b", grep), grep[-2000:]


def test_a_bundles_page_leads_to_its_root_index_first(client: TestClient) -> None:
    """Viewer QA: the author's "Start here" index was reachable only from Browse's
    sidebar; the bundle's page was all counts."""
    home = client.get("/b/knowledge/").text
    start = re.search(r'<p class="start">[^<]*<a href="([^"]+)">([^<]+)</a></p>', home)
    assert start is not None and start.group(1) == "/b/knowledge/c/index.md"
    assert home.index('class="start"') < home.index("By type")
    assert client.get(start.group(1)).status_code == 200


def test_the_problems_page_says_once_the_missing_folder_broken_links_lead_into(
    tmp_path: Path,
) -> None:
    """Viewer QA: 47 broken links into one folder the bundle lacks were 47 rows, and the
    page never said their one cause (a concept's page did)."""
    body = "".join(f"[i{i}](/implementations/web/c{i}.md) " for i in range(4)) + "[x](gone.md)\n"
    (tmp_path / "a.md").write_text(f"---\ntype: Note\n---\n{body}", encoding="utf-8")
    app = app_of(tmp_path)
    html = app.get(f"/b/{tmp_path.name}/problems").text
    assert re.findall(r'<p class="cause">(.*?)</p>', html) == [
        "<strong>4</strong> of the 5 lead into <code>/implementations/</code>, a folder the "
        "bundle does not have."
    ]


def test_a_grep_row_names_the_page_by_its_title_and_path(client: TestClient) -> None:
    """Viewer QA: each matching line was headed by a path alone."""
    html = client.get("/grep?pattern=docks_available").text
    first = re.search(
        r'<li class="match row"><a class="primary" href="([^"]+)">([^<]+)</a> '
        r'<code class="quiet">([^<]+)</code>',
        html,
    )
    assert first is not None
    assert first.group(2) == "Dock availability rate for a date range"
    assert first.group(3) == "/computations/dock-availability-rate.md"


def test_a_body_opening_with_comments_then_its_title_does_not_show_the_title_twice(
    tmp_path: Path,
) -> None:
    """Viewer QA: graphql-okf's pages open with two generator comments, then ``# Country``,
    shown under the page's own "Country" heading."""
    (tmp_path / "Country.md").write_text(
        '---\ntype: object\ntitle: "Country"\n---\n\n<!-- generated:start -->\n<!-- do not '
        "edit -->\n\n# Country\n\n## Fields\n\n- code\n",
        encoding="utf-8",
    )
    app = app_of(tmp_path)
    html = app.get(f"/b/{tmp_path.name}/c/Country.md").text
    assert html.count(">Country</h") == 1 and ">Fields</h" in html


def test_the_log_page_keeps_the_logs_opening_and_a_days_points_as_a_list(
    tmp_path: Path,
) -> None:
    """Viewer QA: the log's opening sentence was dropped, and a day's bullet points were
    shown as separate paragraphs."""
    (tmp_path / "a.md").write_text("---\ntype: Note\n---\n", encoding="utf-8")
    (tmp_path / "log.md").write_text(
        "# Curation log\n\nA running record of what entered. Newest first.\n\n"
        "## 2026-07-11\n\n- Seeded the root.\n- Authored concepts.\n\n## 2026-07-01\n\n- One.\n",
        encoding="utf-8",
    )
    app = app_of(tmp_path)
    html = app.get(f"/b/{tmp_path.name}/log").text
    assert '<div class="markdown intro"><p>A running record of what entered.' in html
    (day,) = re.findall(r'<ul class="day">(.*?)</ul>', html, re.S)
    assert day.count("<li") == 2 and "Seeded the root." in day


def test_a_concept_page_right_after_a_save_shows_one_version(tmp_path: Path) -> None:
    """Live edit QA: before the reload, the page showed the loaded title over the new
    body, and said nothing of the change; a deleted concept's page had an empty body."""
    import os

    root = write_tree(tmp_path / "kb", {"a.md": concept("Note", "Old body.\n", title="Old"),
                                        "b.md": concept("Note", "B.\n", title="Bee")})  # fmt: skip
    client = app_of(root)
    assert "Old" in client.get("/b/kb/c/a.md").text
    (root / "a.md").write_text(concept("Note", "New body.\n", title="New"))
    st = (root / "a.md").stat()
    os.utime(root / "a.md", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    page = client.get("/b/kb/c/a.md").text
    assert "<h1" in page and "New" in page and ">Old<" not in page and "New body." in page
    assert "CHANGED" in page
    (root / "b.md").unlink()
    assert client.get("/b/kb/c/b.md").status_code == 404


def test_a_folder_holding_a_bundle_deeper_says_so_on_the_overview_and_notes_on_problems(
    make_bundle: MakeBundle,
) -> None:
    """Viewer QA: a repository root above its bundle showed an empty dashboard, with its
    fix only on the Problems page, and validate's notes (okf_version written in every
    concept) appeared nowhere in the viewer."""
    root = make_bundle(
        {
            "plants/index.md": "---\nokf_version: '0.2'\n---\n# Plants\n",
            "plants/fern.md": concept(),
        }
    )
    client = TestClient(create_app(Bundle.load(root, "repo")), base_url=LOCAL)
    (said,) = re.findall(r'<p class="notice" role="note">(.*?)</p>', client.get("/").text)
    assert said == (
        "No concepts: the folder has 0 files and no .md file, and /plants/ holds a bundle "
        "of its own that okfx does not read as part of this one: load plants/ itself."
    )
    versioned = make_bundle(
        {"a.md": "---\ntype: Note\nokf_version: '0.1'\n---\nA.\n", "b.md": concept()}
    )
    client = TestClient(create_app(Bundle.load(versioned, "v")), base_url=LOCAL)
    problems = client.get("/b/v/problems").text
    assert '<h2 id="h-notes">Notes</h2>' in problems
    assert "1 concept writes okf_version in its frontmatter" in problems
    assert '<p class="notice" role="note">' not in client.get("/").text  # it has concepts


def test_a_footnote_naming_a_source_links_to_its_row(make_bundle: MakeBundle) -> None:
    """Viewer QA: "a source ref[^src1]." with ``sources: [{id: src1, ...}]`` and no
    ``[^src1]:`` definition showed the literal ``[^src1]``, while the Sources table said
    "cited as src1"."""
    page = (
        "---\ntype: Note\nsources:\n  - {id: other, resource: 'https://o.example'}\n"
        "  - {id: src1, resource: 'https://s.example', title: Source one}\n---\n"
        "A source ref[^src1]. A note[^1]. Code: `[^src1]`.\n\n[^1]: The note.\n"
    )
    client = TestClient(create_app(Bundle.load(make_bundle({"a.md": page}), "s")), base_url=LOCAL)
    html = client.get("/b/s/c/a.md").text
    assert 'A source ref<a href="#h-src-2">[src1]</a>.' in html  # the page's ids take h-
    assert '<tr id="h-src-2">' in html
    assert "<code>[^src1]</code>" in html  # code stays as written
    assert 'class="footnote-ref"' in html  # a footnote the body defines is one still


def test_a_status_no_concept_can_have_is_refused_as_a_wrong_tier_is(tmp_path: Path) -> None:
    """Viewer QA: browse?status=reviewed (a producer's word, read as stable) listed
    nothing without a word, where a wrong trust tier answered 400 with the values."""
    (tmp_path / "a.md").write_text("---\ntype: Note\nstatus: reviewed\n---\nA.\n", "utf-8")
    client = app_of(tmp_path)
    name = tmp_path.name
    refused = client.get(f"/b/{name}/browse?status=reviewed")
    assert refused.status_code == 400
    assert "unknown status &#39;reviewed&#39;; use one of" in refused.text
    assert client.get(f"/b/{name}/browse?tier=nope").status_code == 400
    assert _listed(client, f"/b/{name}/browse?status=stable") == 1  # what it reads as


def test_an_unresolved_links_text_shows_its_code_spans_as_code(make_bundle: MakeBundle) -> None:
    """Session 62's viewer QA: a broken link written [`orders_v2`](gone.md) was listed
    under Unresolved with its backticks as text."""
    body = "See [`orders_v2` & <b>](gone.md) and [up](../../outside.md).\n"
    root = make_bundle({"a.md": concept(body=body)})
    html = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL).get("/b/kb/c/a.md")
    side = html.text[html.text.index('id="links-broken"') :]
    assert '<span class="broken-link"><code>orders_v2</code> &amp; &lt;b&gt;</span>' in side
    assert "`orders_v2`" not in side


def test_a_bidirectional_override_in_bundle_text_is_shown_not_obeyed(tmp_path: Path) -> None:
    """Viewer QA: a title "invoice\u202etxt.exe" read "invoiceexe.txt" in the page."""
    (tmp_path / "bidi.md").write_text(
        '---\ntype: Note\ntitle: "invoice\u202etxt.exe"\ndescription: "safe \u202eevil"\n---\n'
        "Body \u202eabc.md and \x1b[31m.\n",
        encoding="utf-8",
    )
    client = app_of(tmp_path)
    for url in ("/b/bundle/c/bidi.md", "/b/bundle/browse", "/b/bundle/file/bidi.md"):
        page = client.get(url.replace("bundle", tmp_path.name))
        assert page.status_code == 200, url
        assert "\u202e" not in page.text and "\x1b" not in page.text, url
        assert "invoice\\u202etxt.exe" in page.text, url


def test_error_pages_speak_the_viewers_words_and_a_folder_as_a_file_opens_its_listing(
    tmp_path: Path,
) -> None:
    """Viewer QA: /file/<folder> was a 404 where /c/<folder> opens the listing, and 404s
    said read_concept and read_resource."""
    (tmp_path / "att").mkdir()
    (tmp_path / "att" / "q.sql").write_text("select 1;\n", encoding="utf-8")
    (tmp_path / "att" / "a.md").write_text("---\ntype: Note\n---\nA.\n", encoding="utf-8")
    client = app_of(tmp_path)
    name = tmp_path.name
    moved = client.get(f"/b/{name}/file/att", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"].endswith("browse?dir=%2Fatt")
    missing = client.get(f"/b/{name}/graph?path=att/q.sql")
    assert missing.status_code == 404
    assert "open it as a file" in missing.text and "read_resource" not in missing.text


def test_a_link_to_an_index_a_folder_lacks_is_marked_broken_in_the_body(tmp_path: Path) -> None:
    """Viewer QA: [dir index](sub/index.md), sub/ having no index.md, was a working link
    to the folder while the same page's Unresolved box called it broken."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("---\ntype: Note\n---\nB.\n", encoding="utf-8")
    (tmp_path / "a.md").write_text(
        "---\ntype: Note\n---\n[dir index](sub/index.md) and [the folder](sub/).\n",
        encoding="utf-8",
    )
    page = app_of(tmp_path).get(f"/b/{tmp_path.name}/c/a.md").text
    assert '<span class="broken-link"' in page and "dir index" in page
    assert "browse?dir=%2Fsub" in page  # the folder's own link still opens its listing
    assert page.count('browse?dir=%2Fsub">dir index') == 0


def test_a_days_titled_changes_keep_their_titles_text_and_points_on_the_log_page(
    tmp_path: Path,
) -> None:
    """Viewer QA: a change's ### title, its paragraph and its points were one flat list."""
    (tmp_path / "a.md").write_text("---\ntype: Note\n---\nA.\n", encoding="utf-8")
    (tmp_path / "log.md").write_text(
        "# Log\n\n## 2026-11-02\n### Renamed the orders table\nThe table moved.\n"
        "- point one\n- point two\n### Second change\n- point three\n\n"
        "## 2026-11-01\n- plain point\n",
        encoding="utf-8",
    )
    page = app_of(tmp_path).get(f"/b/{tmp_path.name}/log").text
    day = page[page.index("2026-11-02</time>") : page.index("2026-11-01</time>")]
    assert ">Renamed the orders table</h4>" in day and ">Second change</h4>" in day
    assert "<p>The table moved.</p>" in day
    assert "<li>point one</li>\n<li>point two</li>" in day
    assert "day-whole" not in page[page.index("2026-11-01</time>") :]  # points: as before


def test_a_bundle_whose_folder_is_gone_says_so_on_its_pages(tmp_path: Path) -> None:
    """Viewer QA: with the folder moved away, the pages looked as ever; the reason was a
    line on stderr only."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("---\ntype: Note\ntitle: Alpha\n---\nBody.\n", encoding="utf-8")
    manager = KnowledgeManager([Bundle.load(root, "kb")])
    app = TestClient(create_app(Toolbox(manager, now=lambda: NOW)), base_url=LOCAL)
    assert 'class="banner"' not in app.get("/b/kb/c/a.md").text
    root.rename(tmp_path / "gone")
    page = app.get("/b/kb/c/a.md")
    assert page.status_code == 200 and "Alpha" in page.text
    assert "cannot be read now (its folder kb/ is gone)" in page.text
    manager.reload()
    reloaded = app.get("/b/kb/").text
    assert 'class="banner"' in reloaded
    # the folder by name, never the server's path (edit QA)
    assert str(tmp_path) not in reloaded and "bundle folder not found: kb/" in reloaded
    (tmp_path / "gone").rename(root)
    manager.reload()
    assert 'class="banner"' not in app.get("/b/kb/").text


def test_a_leaving_link_in_a_body_is_no_broken_link(make_bundle: MakeBundle) -> None:
    """Viewer QA F9: a link that leaves the bundle was red, "unresolved link", beside a
    panel saying Unresolved 0."""
    root = make_bundle(
        {"d/a.md": concept(body="See [the log](../../CHANGELOG.md) and [gone](missing.md).\n")}
    )
    html = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL).get("/b/kb/c/d/a.md")
    body = html.text
    assert re.search(
        r'<span class="leaves-bundle" title="outside the bundle[^"]*">the log</span>', body
    )
    assert re.search(r'<span class="broken-link" title="unresolved link">gone</span>', body)


def test_a_log_heading_with_a_time_shows_it(make_bundle: MakeBundle) -> None:
    """Viewer QA F2: two runs of one day (## 2026-07-28T00:57:10Z, T00:57:31Z) read the same."""
    log = "# Log\n\n## 2026-07-28T00:57:31Z\n\n* second\n\n## 2026-07-28T00:57:10Z\n\n* first\n"
    root = make_bundle({"a.md": concept(), "log.md": log})
    html = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL).get("/b/kb/log").text
    assert re.findall(r'<span class="quiet">([^<]*)</span>', html)[:2] == ["00:57:31Z", "00:57:10Z"]


def test_an_image_file_page_says_it_shows_an_image(make_bundle: MakeBundle) -> None:
    """Viewer QA F11: a PNG's page showed the picture under "shown as text"."""
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
    root = make_bundle({"a.md": concept(), "pic.png": png, "q.sql": "SELECT 1;\n"})
    app = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL)
    assert "shown as an image;" in app.get("/b/kb/file/pic.png").text
    assert "shown as text;" in app.get("/b/kb/file/q.sql").text


def test_a_whole_graph_of_no_concept_says_why_and_links_the_root_index(tmp_path: Path) -> None:
    """Viewer QA F7: an empty box and "The 0 documents as a list", nothing else."""
    root = write_tree(
        tmp_path / "wiki", {"index.md": "# Wiki\n\n* [a](a/index.md)\n", "a/index.md": "# A\n"}
    )
    html = (
        TestClient(create_app(Bundle.load(root, "wiki")), base_url=LOCAL).get("/b/wiki/graph").text
    )
    said = re.search(r'<p class="notice" id="no-concepts">(.*?)</p>', html, re.S)
    assert said and said.group(1).startswith("No concept to draw: the folder has only index.md")
    assert 'href="/b/wiki/graph?path=%2Findex.md&amp;depth=1"' in said.group(1)


def test_tool_advice_reads_in_the_pages_words() -> None:
    """Viewer QA F8: the grep page told a person to "pass bundle= to grep one"."""
    from okfx.cli.render import CLI_WORDS
    from okfx.tools.notices import reworded
    from okfx.tools.views import NEXT_STEP
    from okfx.web.finding import page_words

    said = "188 concepts match (a 149, b 34; pass bundle= to grep one)."
    assert (
        page_words(said)
        == "188 concepts match (a 149, b 34; choose one in Bundle to grep it alone)."
    )
    for text in (NEXT_STEP, "pass regex=true with 'a\\\\s+b' to see where"):
        for words in (page_words(text), reworded(text, CLI_WORDS)):
            assert not re.search(r"search_concepts|list_concepts|regex=true", words), words


def test_a_graph_colours_the_kinds_it_draws_and_marks_pages_that_are_no_concept(
    make_bundle: MakeBundle,
) -> None:
    """Viewer QA F6: a graph of five Architecture pages drew them grey, as the folders
    beside them, for Architecture was not among the bundle's ten commonest types."""
    files = {f"t{k}/c{i}.md": concept(f"Kind{k}") for k in range(10) for i in range(3)}
    files["rare/r.md"] = concept("Rare", body="[a](../t0/c0.md)\n")
    files["rare/index.md"] = "# Rare\n\n* [r](r.md)\n"
    root = make_bundle(files)
    html = (
        TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL)
        .get("/b/kb/graph?path=rare/r.md&depth=1")
        .text
    )
    node = (
        r'<a href="/b/kb/c/([^"]+)" class="node[^>]*>\s*<title>[^<]*</title>\s*'
        r'<circle r="\d+" class="([^"]+)"'
    )
    colours = dict(re.findall(node, html))
    assert colours["rare/r.md"] not in ("c-other", "c-page")
    assert colours["rare/index.md"] == "c-page"
    assert "index, log or folder" in html


def test_a_korean_page_full_of_link_paths_reads_as_korean(make_bundle: MakeBundle) -> None:
    """Viewer QA F3: link paths and identifiers outnumbered a Korean page's words, and it
    was read with an English voice; its Korean title had no lang either."""
    body = (
        "단면검사 판단 이벤트를 발행한다. "
        "[보고](/public/sop/direct-development-reporting-and-cross-section.md) "
        "`direct_development.create_cross_section_decision_event`\n\n"
        "```\nsome code with many english words in it here\n```\n"
    )
    root = make_bundle({"a.md": concept(title="단면검사 판단 이벤트 발행", body=body)})
    html = TestClient(create_app(Bundle.load(root, "kb")), base_url=LOCAL).get("/b/kb/c/a.md").text
    assert '<div class="body markdown" lang="ko">' in html
    assert '<h1 lang="ko">단면검사 판단 이벤트 발행</h1>' in html


def test_a_snippet_shows_a_wikilink_as_the_viewer_does() -> None:
    """Viewer QA F10: snippets showed [[ml-ai/mcp/mcp-vs-skill-difference]] as written."""
    from okfx.web.finding import plain

    line = "see [[ml-ai/mcp/mcp|the MCP page]], [[skills#loading]] and [[open"
    assert plain(line) == "see the MCP page, skills and [[open"


def test_a_snippet_marks_a_word_written_with_diacritics() -> None:
    """ "badha" matched the page's "bādha": the snippet marks it as written."""
    assert marked("traikālika-bādha", ["traikalika", "badha"]) == [
        ("traikālika", True), ("-", False), ("bādha", True),
    ]  # fmt: skip
