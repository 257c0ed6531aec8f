"""The viewer in a real browser: Playwright driving Debian's chromium.

Walks every page on the example bundle and a published sample (titles, badges, links,
search, filters, the drawn graph, keyboard navigation), takes the screenshots
``docs/viewer.md`` shows, and opens a hostile bundle to check that nothing in it runs:
a window flag its payloads try to set stays unset, the console stays free of errors,
no request leaves the viewer, and no answer carries the secret beside the bundle.

Needs ``pip install playwright`` and ``/usr/bin/chromium`` (``apt-get install
chromium``; Playwright's own browser download is not used). Without them the tests skip
and say why, unless ``OKFX_BROWSER_TESTS=required`` (as ``.ci/run`` sets), which makes
that a failure. ``OKFX_SCREENSHOTS=DIR`` writes the screenshots to DIR (``docs`` to
refresh the documentation's), else to a temporary folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hostile_site import FLAG, SECRET, build
from viewer_server import chromium_path, running

from conftest import PROJECT_ROOT, SAMPLES
from okfx import Bundle

pytest.importorskip("starlette", reason="the viewer needs the web extra")

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
SAMPLE = SAMPLES / "stackoverflow"
REQUIRED = os.environ.get("OKFX_BROWSER_TESTS") == "required"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 30_000


def _missing(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"browser tests are required here but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install playwright)")
    path = chromium_path()
    if not path.exists():
        _missing(f"Debian's chromium is not at {path} (apt-get install chromium)")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(path), args=ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    bundles = [str(EXAMPLE)] + ([str(SAMPLE)] if SAMPLE.is_dir() else [])
    with running(["view", *bundles, "--port", "0"], "Open: ") as url:
        yield url.rstrip("/")


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    bundle = build(tmp_path_factory.mktemp("hostile"))
    with running(["view", str(bundle), "--port", "0"], "Open: ") as url:
        yield url.rstrip("/")


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("OKFX_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Watched:
    """A page whose console errors, uncaught exceptions, outside requests and answer
    bodies are recorded."""

    def __init__(self, browser: Any, base: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 820})
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.base = base
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.bodies: list[bytes] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("response", self._keep)
        self.context.route("**/*", self._only_the_viewer)

    def _only_the_viewer(self, route: Any) -> None:
        if route.request.url.startswith(self.base + "/"):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def _keep(self, response: Any) -> None:
        try:
            self.bodies.append(response.body())
        except Exception:  # a redirect or an aborted request has no body
            pass

    def go(self, path: str) -> Any:
        answer = self.page.goto(self.base + path)
        self.page.wait_for_load_state("load")
        return answer

    def flag(self) -> Any:
        return self.page.evaluate(f"() => window.{FLAG}")

    def clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.outside == [], self.outside


@contextmanager
def watching(browser: Any, base: str) -> Iterator[Watched]:
    """A :class:`Watched` page on ``base``, its context closed afterwards."""
    page = Watched(browser, base)
    try:
        yield page
    finally:
        page.context.close()


@pytest.fixture
def watched(browser: Any, site: str) -> Iterator[Watched]:
    with watching(browser, site) as page:
        yield page


def _titles(page: Any, selector: str) -> list[str]:
    return [text.strip() for text in page.locator(selector).all_inner_texts()]


def test_walk_every_page_of_the_example(watched: Watched, shots: Path) -> None:
    page = watched.page
    watched.go("/")
    assert page.title() == "Overview · okfx"
    assert page.locator(".bundle-card h2").first.inner_text() == "knowledge"
    page.screenshot(path=str(shots / "viewer-overview.png"))

    # The overview's figure counts every Metric, deprecated too, and so does its listing.
    page.get_by_role("link", name="Metric").first.click()
    page.wait_for_url("**/b/knowledge/browse?type=Metric&deprecated=1")
    assert set(_titles(page, "tbody .badge.type")) == {"Metric"}
    metrics = [c for c in Bundle.load(EXAMPLE) if c.type == "Metric"]
    assert page.locator("tbody tr.row").count() == len(metrics)
    watched.go("/b/knowledge/browse?type=Metric")
    current = [c for c in metrics if c.status != "deprecated"]  # hidden by default, as in
    assert page.locator("tbody tr.row").count() == len(current) < len(metrics)  # the tool
    assert "1 deprecated hidden" in page.locator(".notice").inner_text()
    page.select_option("select[name=tier]", "human-reviewed")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**tier=human-reviewed**")
    assert set(_titles(page, "tbody .badge.tier")) == {"human-reviewed"}
    watched.go("/b/knowledge/browse?dir=/tables")
    page.screenshot(path=str(shots / "viewer-browse.png"))

    page.get_by_role("link", name="Dock status snapshots").click()
    page.wait_for_url("**/b/knowledge/c/tables/dock_status_snapshots.md")
    assert page.locator("main h1").first.inner_text() == "Dock status snapshots"
    watched.go("/b/knowledge/c/metrics/dock-availability.md")
    assert page.locator(".doc-head .badge.tier").inner_text() == "human-reviewed"
    assert "fresh until" in page.locator(".doc-head .badge.fresh").inner_text()
    page.screenshot(path=str(shots / "viewer-concept.png"))
    page.locator(".body").get_by_role("link", name="station offline playbook").click()
    page.wait_for_url("**/b/knowledge/c/playbooks/station-offline.md")
    assert page.locator("main h1").first.inner_text() == "Incident: station stops reporting"

    watched.go("/b/knowledge/c/computations/trips-per-bike-day.md")
    assert page.locator("#contract").inner_text() == "Attested Computation contract"
    page.locator(".contract").get_by_role("link", name="./sql/trips_per_bike_day.sql").click()
    page.wait_for_url("**/file/computations/sql/trips_per_bike_day.sql")
    assert "SELECT" in page.locator("pre.file-text").inner_text().upper()

    watched.go("/b/knowledge/graph?path=/metrics/dock-availability.md&depth=2")
    page.wait_for_selector("svg#graph[data-ready='1']")
    assert page.locator("svg#graph .node").count() >= 10
    assert page.locator("svg#graph .node.root").count() == 1
    assert page.locator("svg#graph line.edge").count() >= 10
    page.screenshot(path=str(shots / "viewer-graph.png"))
    page.locator("svg#graph .node", has_text="Stations").first.click()
    page.wait_for_url("**/b/knowledge/c/tables/stations.md")

    watched.go("/search?q=dock+availability")
    hits = _titles(page, ".hit a.primary")
    assert hits[0] == "Dock availability" and len(hits) >= 3
    assert page.locator(".hit mark").count() > 0
    page.screenshot(path=str(shots / "viewer-search.png"))
    page.get_by_role("link", name="grep").first.click()
    page.wait_for_url("**/grep?pattern=dock+availability")

    watched.go("/b/knowledge/problems")
    assert page.locator(".problem-group h2 code").first.inner_text() in (
        "broken_image",  # join-paths' diagram, "not exported into the bundle yet"
        "broken_link",
        "unknown_footnote",
    )
    page.screenshot(path=str(shots / "viewer-problems.png"))
    page.get_by_role("link", name="/tables/bikes.md").click()
    page.wait_for_url("**/b/knowledge/c/tables/bikes.md")

    watched.go("/b/knowledge/log")
    assert page.locator("ol.timeline li.entry").count() >= 5
    page.screenshot(path=str(shots / "viewer-log.png"))
    page.locator(".timeline").get_by_role("link", name="active members").first.click()
    page.wait_for_url("**/b/knowledge/c/metrics/active-members.md")
    watched.clean()


def test_walk_a_published_sample(watched: Watched) -> None:
    if not SAMPLE.is_dir():
        pytest.skip(f"the sample bundles are not at {SAMPLES}")
    page = watched.page
    name = SAMPLE.name
    watched.go(f"/b/{name}/")
    assert page.locator(".bundle-card h2").inner_text() == name
    watched.go(f"/b/{name}/browse")
    first = page.locator("tbody a.primary").first
    title = first.inner_text()
    first.click()
    page.wait_for_url(f"**/b/{name}/c/**")
    assert page.locator("main h1").first.inner_text() == title
    assert page.locator(".doc-head .badge.type").count() == 1
    watched.go(f"/b/{name}/graph")
    page.wait_for_selector("svg#graph[data-ready='1']")
    assert page.locator("svg#graph .node").count() > 5
    # Labels read at one size on screen whatever the graph's extent, and after a zoom.
    label = "() => document.querySelector('svg#graph .node text').getBoundingClientRect().height"
    before = page.evaluate(label)
    page.locator("svg#graph").hover()
    view = "() => document.querySelector('svg#graph').getAttribute('viewBox')"
    shown = page.evaluate(view)
    page.mouse.wheel(0, 300)  # the wheel alone scrolls the page, not the graph (viewer QA)
    page.wait_for_timeout(100)
    assert page.evaluate(view) == shown
    page.locator("svg#graph").hover()
    page.keyboard.down("Control")
    page.mouse.wheel(0, -400)
    page.keyboard.up("Control")
    assert page.evaluate(view) != shown
    assert 11 <= before <= 22 and 11 <= page.evaluate(label) <= 22
    watched.go(f"/b/{name}/problems")
    watched.go(f"/search?q=reputation&bundle={name}")
    assert page.locator(".hit").count() >= 1
    watched.clean()


def test_keyboard_navigation(watched: Watched) -> None:
    page = watched.page
    watched.go("/b/knowledge/browse")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "quick-search"
    page.keyboard.type("dock availability")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search?q=dock+availability")
    page.keyboard.press("j")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused == "Dock availability"
    page.keyboard.press("j")
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.textContent") == "Dock availability"
    page.keyboard.press("Enter")
    page.wait_for_url("**/b/knowledge/c/metrics/dock-availability.md")
    watched.clean()


def test_j_and_k_move_through_the_problems_page(browser: Any, hostile_site: str) -> None:
    """Viewer QA: j and k did nothing on the Problems page, as they do on listings."""
    watched = Watched(browser, hostile_site)
    page = watched.page
    watched.go("/b/hostile/problems")
    page.keyboard.press("j")
    first = page.evaluate("document.activeElement.getAttribute('href')")
    assert first is not None and first.startswith("/b/hostile/")
    page.keyboard.press("j")
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.getAttribute('href')") == first
    watched.context.close()


def test_a_hostile_bundle_runs_nothing_and_reads_nothing_outside(
    browser: Any, hostile_site: str
) -> None:
    watched = Watched(browser, hostile_site)
    page = watched.page
    try:
        for path in [
            "/",
            "/b/hostile/browse",
            "/b/hostile/c/evil-concept.md",
            "/b/hostile/c/friend.md",
            "/b/hostile/c/index.md",
            "/b/hostile/log",
            "/b/hostile/problems",
            "/b/hostile/graph",
            "/b/hostile/graph?path=/evil-concept.md&depth=2",
            "/search?q=evil",
            "/grep?pattern=script",
            "/b/hostile/file/evil.html",
            "/b/hostile/file/evil.svg",
            "/b/hostile/raw/evil.html",
            "/b/hostile/raw/evil.svg",
            "/b/hostile/raw/evil-concept.md",
        ]:
            answer = watched.go(path)
            assert answer.status == 200, path
            page.wait_for_timeout(50)
            assert watched.flag() is None, path
        watched.go("/b/hostile/c/evil-concept.md")
        body = page.locator(".body")
        assert "<script>" in body.inner_text()  # shown as text
        for name in ("the html attachment", "svg link"):
            watched.go("/b/hostile/c/evil-concept.md")
            page.locator(".body").get_by_role("link", name=name).click()
            page.wait_for_url("**/b/hostile/file/evil.*")
            assert watched.flag() is None, name
        for name in ("js link", "JS", "data", "escape", "outside by symlink"):
            assert page.locator(".body").get_by_role("link", name=name).count() == 0, name
        watched.go("/b/hostile/c/big.md")
        assert "more characters are not shown here" in page.locator("main").inner_text()
        for probe in [
            "/b/hostile/raw/leak.txt",
            "/b/hostile/raw/..%2Fsecret.txt",
            "/b/hostile/raw/%2e%2e/secret.txt",
            "/b/hostile/file/..%2Fsecret.txt",
            "/b/hostile/c/..%2F..%2Fsecret.txt",
        ]:
            answer = page.request.get(hostile_site + probe)
            assert answer.status in (400, 404), probe
            assert SECRET.encode() not in answer.body(), probe
        assert all(SECRET.encode() not in body for body in watched.bodies)
        assert watched.flag() is None
        watched.clean()
    finally:
        watched.context.close()


@pytest.fixture(scope="module")
def deep_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Shapes real producers write: fibo's CamelCase paths and IRIs with nowhere to
    break, a source citing a section of a references file, duplicate headings."""
    root = tmp_path_factory.mktemp("deep") / "deep"
    long = "concepts/fibo/BE/GovernmentEntities/NorthAmericanJurisdiction/" + (
        "USGovernmentEntitiesAndJurisdictions/" * 2
    )
    iri = "https://spec.example.org/ontology/BE/" + "GovernmentEntitiesAndJurisdictions" * 4
    files = {
        f"{long}StateOfCaliforniaJurisdictionWithAVeryLongCamelCaseName.md": (
            f"---\ntype: Ontology Individual\nresource: {iri}\nsources:\n"
            "  - {id: s, resource: '/references/src.md#second-part'}\n"
            f"owl: {{see_also: [{iri}]}}\n---\n# Jurisdiction\n\nCanonical resource: <{iri}>\n"
        ),
        "pinned.md": (
            "---\ntype: Function\nsources:\n  - id: selector-and-namespace-conversion\n"
            "    resource: 'https://github.com/crossplane-contrib/function-go-templating/blob/"
            + "0123456789abcdef"
            * 2
            + "01234567/function/extraresources/selector_conversion.go#L10-L96'\n"
            "    title: 'ExtraResources selector and namespace conversion'\n---\n"
            "# Pinned\n\nText.[^selector-and-namespace-conversion]\n\n"
            "## Section\n\nA paragraph.\n\n"
            "**Bold**\n\n### Sub\n\nMore.\n\n[^selector-and-namespace-conversion]: Conversion\n"
        ),
        "cited.md": (
            "---\ntype: Table\nsources:\n  - resource: https://warehouse.example.com/acme\n"
            "    title: Acme Retail warehouse schema of the orders table\n"
            "    author: Data Platform Team\n    last_modified: 2026-05-20\n"
            "    usage_count: 1240\n---\n# Cited\n\nText.\n"
        ),
        "long-title.md": (
            f"---\ntype: Note\ntitle: Very long title {'A' * 800}\n"
            f"description: {'d' * 3000}\n---\nText.\n"
        ),
        "references/src.md": (
            "---\ntype: Reference\n---\n# Sources\n\n"
            + "Filler.\n\n" * 80
            + "## Second part\n\nThe cited part.\n"
        ),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    with running(["view", str(root), "--port", "0"], "Open: ") as url:
        yield url.rstrip("/")


def test_long_paths_stay_in_their_column_and_fragments_land(browser: Any, deep_site: str) -> None:
    watched = Watched(browser, deep_site)
    page = watched.page
    watched.go(
        "/b/deep/browse?dir=concepts/fibo/BE/GovernmentEntities/NorthAmericanJurisdiction/USGovernmentEntitiesAndJurisdictions/USGovernmentEntitiesAndJurisdictions"
    )
    # a path with no hyphen to break at wraps in its column: the table does not scroll
    # sideways, its scrollbar fifty rows down (viewer QA: ultracart's paths were cut)
    overflow = page.evaluate(
        "() => { const t = document.querySelector('table.rows'); "
        "return t.scrollWidth - t.clientWidth; }"
    )
    assert overflow <= 0, f"the listing scrolls {overflow}px sideways"
    concept = page.locator("a.primary").first
    concept.click()
    page.wait_for_load_state("load")
    page.locator("details.extra summary").click()
    wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 0, f"the page is {wide}px wider than the window"
    # The source cites a section: its link leads to that heading.
    href = page.locator("table.sources a").first.get_attribute("href")
    assert href is not None and href.endswith("/c/references/src.md#h-second-part")
    # A fragment as GitHub writes it, typed or followed from outside, lands too.
    watched.go("/b/deep/c/references/src.md#second-part")
    top = page.evaluate(
        "() => document.getElementById('h-second-part').getBoundingClientRect().top"
    )
    assert 0 <= top < 820 and page.evaluate("() => window.scrollY") > 0  # in view
    watched.clean()
    watched.context.close()


def wide_page(browser: Any, site: str, url: str, table: str) -> tuple[Watched, Any]:
    """``url`` opened 1280 px wide, its first ``table`` checked not to scroll sideways."""
    watched = Watched(browser, site)
    page = watched.page
    page.set_viewport_size({"width": 1280, "height": 900})
    watched.go(url)
    client, scroll = page.evaluate(
        f"() => {{ const t = document.querySelector('{table}');"
        " return [t.clientWidth, t.scrollWidth]; }"
    )
    assert scroll <= client, f"{table} scrolls: {scroll}px in {client}px"
    return watched, page


def test_a_title_with_no_break_leaves_every_rows_path_in_view(browser: Any, deep_site: str) -> None:
    """Viewer QA: one title of 800 letters made the listing 2,903 px wide, every row's
    badges and path out of view, the paths four characters a line."""
    watched, page = wide_page(browser, deep_site, "/b/deep/browse", "table.rows")
    paths = page.locator("table.rows tbody td:last-child")
    for at in range(paths.count()):
        box = paths.nth(at).bounding_box()
        assert box is not None and box["x"] + 40 < 1280 and box["width"] >= 150, box
    watched.clean()
    watched.context.close()


def test_a_pinned_source_address_wraps_and_headings_stand_apart(
    browser: Any, deep_site: str
) -> None:
    """crossplane viewer QA: commit-pinned GitHub addresses made the Sources table 1444
    px wide in a 905 px column, its titles out of view; and a body's ## and ### were the
    size of its text and of a bold paragraph."""
    watched, page = wide_page(browser, deep_site, "/b/deep/c/pinned.md", "table.sources")
    title = page.locator("table.sources td").nth(1)
    assert title.inner_text() == "ExtraResources selector and namespace conversion"
    assert title.is_visible() and title.bounding_box()["x"] < 1280  # type: ignore[index]
    size = "(s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize)"
    text, h3, h4 = (
        page.evaluate(size, sel) for sel in (".markdown p", ".markdown h3", ".markdown h4")
    )
    assert h3 > h4 > text  # "## Section", "### Sub", a paragraph (and a bold one)
    watched.clean()
    watched.context.close()


def test_a_source_is_a_card_of_labelled_fields_on_a_phone(browser: Any, deep_site: str) -> None:
    """Viewer QA: at 400 px acme_retail's Sources table squeezed its Title column to 44
    px, one syllable a line, and its Uses column started at 385 px, out of view."""
    watched = Watched(browser, deep_site)
    page = watched.page
    page.set_viewport_size({"width": 400, "height": 800})
    watched.go("/b/deep/c/cited.md")
    cells = page.evaluate(
        "() => [...document.querySelectorAll('table.sources tbody td')].map(td => {"
        " const r = td.getBoundingClientRect();"
        " return [td.dataset.label, td.innerText, Math.round(r.left), Math.round(r.width)]; })"
    )
    assert [label for label, *_ in cells] == [
        "Resource", "Title", "Author", "Last modified", "Uses"
    ]  # fmt: skip
    assert len({left for _, _, left, _ in cells}) == 1, cells  # stacked, one above another
    assert all(width > 300 for *_, width in cells), cells
    assert cells[1][1] == "Acme Retail warehouse schema of the orders table"
    head = page.evaluate(
        "() => getComputedStyle(document.querySelector('table.sources thead')).display"
    )
    assert head == "none"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 400
    # wide, it is a table again: one row, its columns side by side
    page.set_viewport_size({"width": 1280, "height": 800})
    tops = page.evaluate(
        "() => [...document.querySelectorAll('table.sources tbody td')]"
        ".map(td => Math.round(td.getBoundingClientRect().top))"
    )
    assert len(set(tops)) == 1, tops
    watched.clean()
    watched.context.close()


def test_many_bundles_names_wrap_on_a_phone(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Viewer QA: with six bundles served, the header's row of bundle names stayed one
    line, and every page was 635-662 px wide at 390 px."""
    root = tmp_path_factory.mktemp("many")
    names = ["boi", "js_syntax", "stackoverflow", "okf-bundle", "house-plants-okf"]
    names.append("andrewwint+nhis-okf-compiler")
    for name in names:
        (root / name).mkdir()
        (root / name / "a.md").write_text("---\ntype: Note\n---\nA note.\n", encoding="utf-8")
    with running(["view", *(str(root / n) for n in names), "--port", "0"], "Open: ") as url:
        watched = Watched(browser, url.rstrip("/"))
        watched.page.set_viewport_size({"width": 390, "height": 800})
        for path in ("/", "/b/boi/c/a.md", "/b/boi/browse"):
            watched.go(path)
            width = watched.page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= 390, f"{path} is {width}px wide"
        watched.context.close()


def test_no_page_is_wider_than_a_phone(browser: Any, site: str) -> None:
    """At 390 px the layout is one column, and tables, code and fields stay inside it
    (a table too wide scrolls in its own box)."""
    watched = Watched(browser, site)
    watched.page.set_viewport_size({"width": 390, "height": 800})
    for path in (
        "/",
        "/b/knowledge/browse",
        "/b/knowledge/c/metrics/dock-availability.md",
        "/b/knowledge/c/computations/trips-per-bike-day.md",
        "/search?q=dock+availability",
        "/grep?pattern=dock",
        "/b/knowledge/log",
        "/b/knowledge/problems",
    ):
        watched.go(path)
        width = watched.page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width}px wide"
    # a listing's row stacks its cells: title, badges and path each as wide as the row
    watched.go("/b/knowledge/browse")
    cells = watched.page.evaluate(
        "() => [...document.querySelectorAll('table.rows tbody tr:first-child td')]"
        ".map(td => [td.getBoundingClientRect().left, td.getBoundingClientRect().width])"
    )
    assert len(cells) == 3 and len({round(left) for left, _ in cells}) == 1, cells
    assert all(w > 300 for _, w in cells), cells
    # a contract's terms sit above their values: its parameters table needs no scrolling
    watched.go("/b/knowledge/c/computations/trips-per-bike-day.md")
    box = watched.page.evaluate(
        "() => { const t = document.querySelector('table.params');"
        " return [t.parentElement.clientWidth, t.scrollWidth]; }"
    )
    assert box[1] <= box[0] and box[0] > 300, box
    watched.clean()
    watched.context.close()


def test_a_wide_table_in_a_body_scrolls_in_its_own_box(browser: Any, hostile_site: str) -> None:
    """Walk QA: EU5's and cricketstudio's body tables made their pages 1,096 and 408 px
    wide at 390 px: only the viewer's own tables scrolled in a box of their own."""
    watched = Watched(browser, hostile_site)
    watched.page.set_viewport_size({"width": 390, "height": 800})
    watched.go("/b/hostile/c/wide.md")
    width = watched.page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width}px wide"
    box = watched.page.evaluate(
        "() => { const t = document.querySelector('.markdown table');"
        " return [t.clientWidth, t.scrollWidth]; }"
    )
    assert box[0] <= 390 < box[1]  # the table scrolls inside its box
    watched.context.close()


@pytest.fixture(scope="module")
def dense_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """60 concepts with long titles, each linking to the next eight: a whole-bundle graph
    whose labels cannot all fit."""
    root = tmp_path_factory.mktemp("dense") / "dense"
    root.mkdir()
    n = 60
    for i in range(n):
        links = " ".join(f"[next {k}](c{(i + k) % n}.md)" for k in range(1, 9))
        (root / f"c{i}.md").write_text(
            f"---\ntype: Note\ntitle: A fairly long concept title number {i}\n---\n{links}\n",
            encoding="utf-8",
        )
    with running(["view", str(root), "--port", "0"], "Open: ") as url:
        yield url.rstrip("/")


_LABELS = """() => Array.from(document.querySelectorAll('svg#graph .node')).map(node => {
  const text = node.querySelector('text');
  const r = text.getBoundingClientRect();
  return {quiet: node.classList.contains('quiet'),
          shown: getComputedStyle(text).visibility === 'visible',
          box: [r.left, r.top, r.right, r.bottom]};
})"""


def _overlapping(labels: list[dict[str, Any]]) -> int:
    boxes = [label["box"] for label in labels if label["shown"]]
    return sum(
        1
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5
    )


def test_graph_labels_that_would_overlap_wait_for_a_zoom_or_the_pointer(
    browser: Any, dense_site: str
) -> None:
    with watching(browser, dense_site) as watched:
        page = watched.page
        watched.go("/b/dense/graph")
        page.wait_for_selector("svg#graph[data-ready='1']")
        labels = page.evaluate(_LABELS)
        quiet = sum(label["quiet"] for label in labels)
        assert len(labels) == 60 and 0 < quiet < 60
        assert _overlapping(labels) == 0
        assert all(label["shown"] != label["quiet"] for label in labels)
        # A hidden label shows while the pointer is on its node.
        at = next(i for i, label in enumerate(labels) if label["quiet"])
        page.locator("svg#graph .node").nth(at).locator("circle").hover(force=True)
        text = f"document.querySelectorAll('svg#graph .node text')[{at}]"
        assert page.evaluate(f"() => getComputedStyle({text}).visibility") == "visible"
        # Zooming in makes room: fewer labels wait, and the shown ones still never overlap.
        box = page.locator("svg#graph").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.keyboard.down("Control")  # Ctrl with the wheel zooms
        for _ in range(6):
            page.mouse.wheel(0, -100)
        page.keyboard.up("Control")
        page.wait_for_timeout(100)
        zoomed = page.evaluate(_LABELS)
        assert sum(label["quiet"] for label in zoomed) < quiet
        assert _overlapping(zoomed) == 0
        watched.clean()


_CIRCLES = """() => Array.from(document.querySelectorAll('svg#graph .node circle')).map(c => {
  const r = c.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom];
})"""


def test_graph_labels_keep_clear_of_other_nodes_and_inside_the_box(
    browser: Any, dense_site: str
) -> None:
    """Viewer QA F1 and F5: a node's dot sat inside another's label ("Inf●rential"), and at
    a phone's width most labels ran off the right edge of the graph."""
    for width, height in ((1280, 900), (390, 844)):
        with watching(browser, dense_site) as watched:
            page = watched.page
            page.set_viewport_size({"width": width, "height": height})
            watched.go("/b/dense/graph")
            page.wait_for_selector("svg#graph[data-ready='1']")
            labels, circles = page.evaluate(_LABELS), page.evaluate(_CIRCLES)
            edge = page.evaluate(
                "() => document.querySelector('svg#graph').getBoundingClientRect().right"
            )
            shown = [(i, label["box"]) for i, label in enumerate(labels) if label["shown"]]
            assert shown, width
            for i, (left, top, right, bottom) in shown:
                assert right <= edge + 1, (width, i)
                for j, (cl, ct, cr, cb) in enumerate(circles):
                    if j != i:  # the node's own circle sits beside its label
                        assert not (
                            left < cr - 1 and cl < right - 1 and top < cb - 1 and ct < bottom - 1
                        ), (width, i, j)
            watched.clean()


def test_back_shows_the_filters_of_the_list_it_shows(watched: Watched) -> None:
    """Viewer QA: after a filter was applied and Back pressed, the list was unfiltered
    again but the form still showed the filter, and Apply re-applied it unseen."""
    page = watched.page
    watched.go("/b/knowledge/browse")
    page.select_option("select[name=type]", "Metric")
    page.click("form.facet-form button[type=submit], form.facet-form input[type=submit]")
    page.wait_for_url("**type=Metric**")
    assert page.url.endswith("/b/knowledge/browse?type=Metric")  # no empty field in it
    page.go_back()
    page.wait_for_url("**/b/knowledge/browse")
    assert page.eval_on_selector("select[name=type]", "el => el.value") == ""
    watched.go("/search?q=dock")
    page.fill("form.search-form input[name=type]", "Metric")
    page.press("form.search-form input[name=q]", "Enter")
    page.wait_for_url("**type=Metric**")
    page.go_back()
    page.wait_for_url("**/search?q=dock")
    assert page.eval_on_selector("form.search-form input[name=type]", "el => el.value") == ""
    watched.clean()


def test_signing_in_with_the_form_lands_on_the_page_asked_for(browser: Any) -> None:
    """Viewer QA: on loopback, the sign-in form posted with the right token was answered
    403 "Invalid Origin header" (with no referrer, a browser posts the form with
    "Origin: null"), and a shared link to a concept landed on the overview after signing
    in; the page also said the viewer was "served off loopback" when it was not."""
    env = {"OKFX_TOKEN": "t0ken-of-the-test"}
    with running(["view", str(EXAMPLE), "--port", "0"], "Open: ", env) as url:
        base = url.rstrip("/")
        with watching(browser, base) as watched:
            page = watched.page
            wanted = "/b/knowledge/c/tables/trips.md"
            watched.go(wanted)
            assert page.url.startswith(base + "/login?next=")
            assert "off loopback" not in page.inner_text("main")
            page.fill("input[name=token]", "wrong")
            with page.expect_navigation():
                page.click("button[type=submit]")
            assert "not the one this viewer was started with" in page.inner_text("main")
            # the one error: the page itself answered 401; its stylesheet loads unsigned
            assert len(watched.errors) == 1 and "401" in watched.errors[0]
            assert page.evaluate("() => document.styleSheets.length") >= 1
            watched.errors.clear()
            page.fill("input[name=token]", "t0ken-of-the-test")
            with page.expect_navigation():
                page.click("button[type=submit]")
            assert page.url == base + wanted
            assert page.locator("h1").first.inner_text() == "Trips"
            watched.clean()
