"""The ``okfx`` read commands: JSON is the tool payload, text is readable, exit codes hold."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from conftest import PROJECT_ROOT, MakeBundle, concept
from okfx import Bundle, Toolbox
from okfx.cli import progress
from okfx.cli.commands import cli
from okfx.cli.terminal import columns

EXAMPLE = str(PROJECT_ROOT / "examples" / "knowledge")
DOCK = "/metrics/dock-availability.md"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def box() -> Toolbox:
    return Toolbox(Bundle.load(EXAMPLE))


@pytest.mark.parametrize(
    ("args", "tool", "kwargs"),
    [
        (["bundles", EXAMPLE], "list_bundles", {}),
        (
            ["index", EXAMPLE, "--dir", "/metrics", "--limit", "3", "--offset", "1"],
            "list_concepts",
            {"directory": "/metrics", "limit": 3, "offset": 1},
        ),
        (["read", EXAMPLE, "metrics/dock-availability"], "read_concept", {"path": DOCK}),
        (
            ["read", EXAMPLE, DOCK, "--section", "Definition", "--max-chars", "50"],
            "read_concept",
            {"path": DOCK, "section": "Definition", "max_chars": 50},
        ),
        (
            ["search", EXAMPLE, "dock availability", "--limit", "3", "--tag", "stations"],
            "search_concepts",
            {"query": "dock availability", "limit": 3, "tags": ["stations"]},
        ),
        (
            ["grep", EXAMPLE, "DOCKS_AVAILABLE", "-i", "--limit", "5"],
            "grep_concepts",
            {"pattern": "DOCKS_AVAILABLE", "ignore_case": True, "limit": 5},
        ),
        (["neighbors", EXAMPLE, DOCK], "get_neighbors", {"path": DOCK}),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_json_output_is_the_payload_of_the_matching_tool(
    box: Toolbox, args: list[str], tool: str, kwargs: dict[str, Any]
) -> None:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    expected = getattr(box, tool)(**kwargs)
    assert "error" not in expected, expected
    assert json.loads(result.stdout) == expected
    assert result.stderr == ""  # no progress line when not on a terminal


def test_read_shows_the_header_badges_and_a_truncation_marker() -> None:
    result = run("read", EXAMPLE, "metrics/dock-availability", "--max-chars", "120")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Dock availability  [human-reviewed]"
    assert "knowledge:/metrics/dock-availability.md  (Metric)" in lines
    assert any(line.startswith("last verified: ") for line in lines)
    # 120 characters at most, ending on the page's last line end or blank
    assert re.fullmatch(r"\[cut: \d+ more characters; continue with --offset (\d+)\]", lines[-1])
    assert 60 <= int(lines[-1].rsplit(" ", 1)[1].rstrip("]")) <= 120
    assert "\x1b[" not in result.stdout  # colours are dropped when not on a terminal


def test_lifecycle_and_staleness_badges_show_everywhere(make_bundle: MakeBundle) -> None:
    root = str(
        make_bundle(
            {
                "old.md": concept(
                    title="Old fares", status="deprecated", stale_after="2001-01-01T00:00:00Z"
                ),
                "new.md": concept(title="New fares", body="Replaces [old](/old.md).\n"),
            }
        )
    )
    read = run("read", root, "old")
    assert read.exit_code == 0, read.output
    assert read.stdout.splitlines()[0] == "Old fares  [unverified] [DEPRECATED] [STALE]"
    assert "DEPRECATED: kept for links" in read.stdout
    around = run("neighbors", root, "new")
    assert "[unverified] [DEPRECATED] [STALE]" in around.stdout
    found = run("search", root, "fares", "--include-deprecated")
    assert "Old fares  [unverified] [DEPRECATED] [STALE]" in found.stdout
    hidden = run("search", root, "fares")
    assert "Old fares" not in hidden.stdout
    # the tool's notice, in command-line words
    assert hidden.stdout.splitlines()[-1].endswith("add --include-deprecated to see them.")


@pytest.mark.parametrize(
    "args", [["search", "zebracorn"], ["grep", "zebracorn"], ["grep", "--regex", "ZEBRA.ORN", "-i"]]
)
def test_text_output_keeps_the_match_at_the_end_of_a_long_line(
    make_bundle: MakeBundle, args: list[str]
) -> None:
    """The excerpt of a long line is centred on the match; shortening it for the terminal
    keeps the match in view, also when it is the line's last word."""
    filler = " ".join(f"filler{i}" for i in range(60))
    root = str(make_bundle({"a.md": concept("Note", f"{filler} zebracorn ends it.\n")}))
    result = run(args[0], root, *args[1:])
    assert result.exit_code == 0, result.output
    shown = result.stdout.splitlines()[-1]
    assert "zebracorn ends it." in shown, shown
    assert len(shown) <= 170


def test_index_columns_stay_aligned_with_cjk_types_and_titles(make_bundle: MakeBundle) -> None:
    """A CJK character takes two terminal columns: cells are padded by columns drawn,
    so every row's TITLE starts at the header's column."""
    root = make_bundle(
        {
            "a.md": concept("概念", title="简介"),
            "b.md": concept("Concept", title="MCP"),
        }
    )
    result = run("index", str(root))
    assert result.exit_code == 0, result.output
    header, *rows = result.stdout.splitlines()[:3]
    at = header.index("TITLE")
    for row, title in zip(rows, ["简介", "MCP"], strict=True):
        assert columns(row[: row.index(title)]) == at, row


def test_index_lists_rows_and_says_how_to_get_the_next_page() -> None:
    result = run("index", EXAMPLE, "--limit", "2")
    assert result.exit_code == 0, result.output
    header, first, second, footer = result.stdout.splitlines()[:4]
    assert header.split() == ["PATH", "TYPE", "TITLE"]
    assert first.startswith("/") and second.startswith("/")
    assert footer.startswith("1-2 of ") and footer.endswith("next page: --offset 2")


def test_a_missing_concept_exits_1_with_the_error_on_stderr() -> None:
    result = run("read", EXAMPLE, "metrics/dock-availabilty")
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error[not_found]: no concept at /metrics/dock-availabilty")
    as_json = run("neighbors", EXAMPLE, "nope", "--json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "args",
    [
        ["read", EXAMPLE, "../outside.md"],  # unsafe_path
        ["grep", EXAMPLE, "(unclosed", "--regex"],  # invalid_regex
        ["search", EXAMPLE, "x" * 5000],  # too_large
        ["search", EXAMPLE, "dock", "--limit", "0"],  # click range check
        ["index", EXAMPLE, "--trust-tier", "gold"],  # click choice
        ["read", EXAMPLE],  # missing PATH (the one argument is taken as PATH)
    ],
)
def test_bad_arguments_exit_2(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output


def test_several_bundles_are_listed_and_read_with_bundle(tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(EXAMPLE, other)
    listed = run("bundles", EXAMPLE, str(other), "--json")
    assert listed.exit_code == 0, listed.output
    assert [b["name"] for b in json.loads(listed.stdout)["bundles"]] == ["knowledge", "other"]
    assert run("read", EXAMPLE, str(other), DOCK).exit_code == 2
    chosen = run("read", EXAMPLE, str(other), DOCK, "--bundle", "other", "--json")
    assert chosen.exit_code == 0, chosen.output
    assert json.loads(chosen.stdout)["bundle"] == "other"
    hits = run("search", EXAMPLE, str(other), "dock availability", "--json")
    assert {hit["bundle"] for hit in json.loads(hits.stdout)["hits"]} == {"knowledge", "other"}
    same_name = run("bundles", EXAMPLE, f"knowledge={other}")
    assert same_name.exit_code == 2
    assert "two bundles are named 'knowledge'" in same_name.output
    # docs QA: the suggestions read okf://knowledge/..., a form no other output uses
    typo = run("read", EXAMPLE, str(other), "metrics/dock-availabilty")
    (said,) = [line for line in typo.output.splitlines() if "did you mean" in line]
    assert "knowledge:/metrics/dock-availability.md" in said and "okf://" not in said
    again = said.split(": ", 1)[1].split(", ")[0]
    assert run("read", EXAMPLE, str(other), again).exit_code == 0  # taken back as written


def test_serve_refuses_a_non_loopback_address_without_a_token() -> None:
    result = CliRunner().invoke(
        cli,
        ["serve", EXAMPLE, "--transport", "http", "--host", "0.0.0.0"],
        env={"OKFX_TOKEN": ""},
    )
    assert result.exit_code == 2, result.output
    assert "refusing to serve on 0.0.0.0" in result.stderr
    assert "needs a bearer token" in result.stderr and "OKFX_TOKEN" in result.stderr
    assert "--token-file FILE" in result.stderr  # docs QA: the safer ways come first


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal and signals each write."""

    def __init__(self) -> None:
        super().__init__()
        self.wrote = threading.Event()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.wrote.set()
        return super().write(text)


def test_the_loading_line_spins_on_a_terminal_and_says_how_long_it_took(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progress, "QUIET", 0.0)
    terminal = FakeTerminal()
    with progress.status("loading kb", terminal):
        assert terminal.wrote.wait(timeout=10)  # the spinner drew a frame while we waited
    text = terminal.getvalue()
    assert text.startswith("\r") and "loading kb… " in text
    assert text.endswith("loading kb: done in " + text.rsplit(" ", 1)[-1])
    with pytest.raises(RuntimeError), progress.status("loading bad", terminal):
        raise RuntimeError("load failed")
    assert "loading bad: failed after " in terminal.getvalue()


def test_the_loading_line_becomes_a_bar_fed_by_bundle_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progress, "QUIET", 0.0)
    terminal = FakeTerminal()
    seen: list[tuple[int, int]] = []
    with progress.status("loading kb", terminal) as bar:

        def record(done: int, total: int) -> None:
            seen.append((done, total))
            bar.update(done, total)

        Bundle.load(EXAMPLE, progress=record)
        terminal.wrote.clear()
        assert terminal.wrote.wait(timeout=10)
    assert seen[0] == (0, 40) and seen[-1] == (40, 40)
    assert "[" + "█" * progress.BAR + "] 40/40 files" in terminal.getvalue()


def test_the_loading_line_shows_a_folder_names_controls_and_fits_the_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CLI QA: a folder named with an OSC escape set the window title through the bar's
    label, and a bar wider than the terminal wrapped, leaving a row behind each redraw."""
    monkeypatch.setattr(progress, "QUIET", 0.0)
    monkeypatch.setenv("COLUMNS", "40")
    terminal = FakeTerminal()
    with progress.status("loading ./esc\x1b]0;PWNED\x07dir/and/a/long/path", terminal) as bar:
        bar.update(5, 40)
        terminal.wrote.clear()
        assert terminal.wrote.wait(timeout=10)
    text = terminal.getvalue()
    assert "\x1b]" not in text and "\x07" not in text and "^[]0;PWNED^G" in text
    frames = [f for f in text.split("\r") if "files" in f]
    assert frames and all(progress.columns(f) <= 39 for f in frames)
    assert frames[-1].startswith("…") and frames[-1].endswith(tuple("0123456789s"))


def test_the_loading_line_stays_off_a_pipe() -> None:
    piped = io.StringIO()
    with progress.status("loading kb", piped):
        pass
    assert piped.getvalue() == ""


def test_okfx_search_runs_as_a_real_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "okfx", "search", EXAMPLE, "dock availability", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    paths = [hit["path"] for hit in json.loads(proc.stdout)["hits"]]
    assert DOCK in paths


def test_okfx_search_shows_each_hits_confidence_and_flags_a_weak_match() -> None:
    """Helper QA: the human-readable search printed no confidence (only --json had it),
    so a person could not tell a hit holding one of the query's words from an answer."""
    sure = run("search", EXAMPLE, "dock availability", "--limit", "1")
    assert sure.exit_code == 0, sure.output
    assert "confidence 1.00)" in sure.output and "[weak match]" not in sure.output
    weak = run("search", EXAMPLE, "dock weather forecast tomorrow", "--limit", "1")
    assert weak.exit_code == 0, weak.output
    first = weak.output.splitlines()[0]
    assert first.endswith("[weak match]"), weak.output
    assert re.search(r"confidence 0\.[0-4]\d\)", weak.output)


def test_serve_freezes_the_loaded_bundles_before_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mcp", reason="okfx serve needs the mcp extra")
    import gc

    from okfx import gcpause
    from okfx.adapters import mcp as adapter

    seen: list[str] = []
    monkeypatch.setattr(gcpause, "_freeze", False)  # restored after the test
    monkeypatch.setattr(gc, "freeze", lambda: seen.append("freeze"))
    monkeypatch.setattr(adapter, "serve_stdio", lambda server: seen.append("serve"))
    result = run("serve", EXAMPLE, "--lazy-index")
    assert result.exit_code == 0, result.output
    # Each load froze what it made as it ended, then the server froze everything.
    assert gcpause._freeze is True
    assert seen.count("freeze") >= 2
    assert seen[-2:] == ["freeze", "serve"]


def test_serve_prepares_facets_and_search_index_in_the_background_unless_lazy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("mcp", reason="okfx serve needs the mcp extra")
    from okfx import KnowledgeManager, gcpause
    from okfx.adapters import mcp as adapter

    monkeypatch.setattr(gcpause, "_freeze", False)  # restored after the test
    built: list[tuple[str, bool, bool]] = []
    ready = threading.Event()

    def prepare(manager: KnowledgeManager) -> None:
        bundle = next(iter(manager.bundles.values()))
        facets = bundle._facets is not None and "type" in bundle._facets._groups
        built.append((threading.current_thread().name, bundle._search_index is None, facets))
        real_prepare(manager)
        built.append((threading.current_thread().name, bundle._search_index is not None, facets))
        ready.set()

    real_prepare = KnowledgeManager.prepare_search
    monkeypatch.setattr(KnowledgeManager, "prepare_search", prepare)
    monkeypatch.setattr(adapter, "serve_stdio", lambda server: ready.wait(10))
    assert run("serve", EXAMPLE).exit_code == 0
    assert built == [("okfx-index", True, True), ("okfx-index", True, True)]
    built.clear()
    monkeypatch.setattr(adapter, "serve_stdio", lambda server: None)
    assert run("serve", EXAMPLE, "--lazy-index").exit_code == 0
    assert built == []


def test_serve_builds_greps_word_index_as_it_prepares_unless_lazy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """okfx serve builds grep's word index with the search index (before any grep), so
    greps for a word never scan; --lazy-index leaves it to the second grep."""
    pytest.importorskip("mcp", reason="okfx serve needs the mcp extra")
    from okfx import gcpause
    from okfx.adapters import mcp as adapter
    from okfx.cli import commands
    from okfx.tools import grepping

    monkeypatch.setattr(gcpause, "_freeze", False)  # restored after the test
    indexed: list[bool] = []
    ready = threading.Event()

    def prepare_grep(bundles: Any) -> None:
        grepping.prepare_grep(bundles)
        parts = [part for bundle in bundles for part in bundle._store.corpus.parts]
        indexed.append(bool(parts) and all(part.words is not None for part in parts))
        ready.set()

    monkeypatch.setattr(commands, "prepare_grep", prepare_grep)
    monkeypatch.setattr(adapter, "serve_stdio", lambda server: ready.wait(10))
    assert run("serve", EXAMPLE).exit_code == 0
    assert indexed == [True]
    indexed.clear()
    monkeypatch.setattr(adapter, "serve_stdio", lambda server: None)
    assert run("serve", EXAMPLE, "--lazy-index").exit_code == 0
    assert indexed == []


def test_read_names_each_source_by_the_footnote_label_the_body_cites(
    make_bundle: MakeBundle,
) -> None:
    sources = (
        "\n  - {id: owner-talk, resource: conversation with the repository owner}"
        "\n  - {id: guide, title: The guide, resource: 'https://example.com/guide'}"
        "\n  - {resource: /notes.md}"
    )
    root = str(make_bundle({"plan.md": concept(sources=sources, body="Agreed.[^owner-talk]\n")}))
    lines = run("read", root, "plan").stdout.splitlines()
    shown = [line.split(None, 1)[1] for line in lines if line.startswith("source:")]
    assert shown == [
        "[^owner-talk] <conversation with the repository owner>",
        "[^guide] The guide <https://example.com/guide>",
        "</notes.md>",
    ]


def test_index_and_neighbors_show_deep_paths_whole_and_cut_long_titles(
    make_bundle: MakeBundle,
) -> None:
    """A path is what a reader pastes into ``okfx read``: two deep paths that share their
    first 60 characters stay two paths; a long title is the column that gets cut."""
    deep = "very/deep/folder/structure/for/paths/identification-aws-lambda"
    title = "A title far longer than the column it is shown in, so it is cut " * 2
    root = str(
        make_bundle(
            {
                f"{deep}-arn.md": concept(title=f"'{title}'"),
                f"{deep}-xyz.md": concept(body=f"[arn](/{deep}-arn.md)\n"),
            }
        )
    )
    index = run("index", root).stdout
    assert f"/{deep}-arn.md" in index and f"/{deep}-xyz.md" in index
    assert title.strip() not in index and "A title far longer" in index
    neighbors = run("neighbors", root, f"{deep}-xyz").stdout
    assert f"/{deep}-arn.md" in neighbors


def test_read_shows_the_resource_the_concept_describes() -> None:
    result = run("read", EXAMPLE, "tables/trips", "--max-chars", "10")
    lines = result.stdout.splitlines()
    assert lines[3] == (
        "resource:      https://console.cloud.google.com/bigquery?p=spokeway-prod&d=analytics&t=trips"
    )


def test_read_of_a_file_that_is_no_concept_says_why_and_shows_it(
    make_bundle: MakeBundle,
) -> None:
    """flutter-okf keeps a README.md without frontmatter at its root: ``okfx read B
    README`` answered only "not found"; it now says what the file is, then shows it. It
    exits 1, not found, as with --json (QA: 0 in text, 1 with --json)."""
    root = make_bundle({"a.md": concept(), "README.md": "# Pack\nHow to use it.\n"})
    result = CliRunner().invoke(cli, ["--no-state-cache", "read", str(root), "README"])
    assert result.exit_code == 1
    assert "# Pack\nHow to use it.\n/README.md: 22 bytes" in result.stdout
    assert "/README.md is a file of bundle" in result.stderr
    assert "no_frontmatter" in result.stderr and result.stderr.rstrip().endswith("shown as a file")
    json_run = run("--no-state-cache", "read", str(root), "README", "--json")
    assert json_run.exit_code == 1
    as_json = json.loads(json_run.stdout)
    assert as_json["error"]["code"] == "not_found" and as_json["error"]["file"] == "/README.md"
    missing = run("--no-state-cache", "read", str(root), "nothing-here")
    assert missing.exit_code != 0 and "no concept at /nothing-here" in missing.stderr


def test_read_shows_the_producers_own_keys_briefly(make_bundle: MakeBundle) -> None:
    """flutter-okf's prerequisites and m3e-okf's source notes were only in --json: a
    person reading in a terminal never saw them."""
    text = (
        "---\ntype: concept\nid: demo.a\nprerequisites: [demo.b, demo.c]\n"
        "sources:\n  - resource: https://x.test/a\n    note: why it holds\n"
        f"long: {'word ' * 40}\n---\nBody.\n"
    )
    many = "\n".join(f"k{i}: v{i}" for i in range(10))
    root = make_bundle({"a.md": text, "b.md": f"---\ntype: concept\n{many}\n---\nB.\n"})
    lines = run("--no-state-cache", "read", str(root), "a").stdout.splitlines()
    assert "id: demo.a" in lines and "prerequisites: demo.b, demo.c" in lines
    assert "sources[0].note: why it holds" in lines
    long = next(line for line in lines if line.startswith("long: "))
    assert len(long) == 100 and long.endswith("…")
    lines = run("--no-state-cache", "read", str(root), "b").stdout.splitlines()
    assert "k7: v7" in lines and "k8: v8" not in lines
    assert "… and 2 more of the producer's keys (--json shows them)" in lines


def test_neighbors_list_the_links_that_leave_the_bundle(make_bundle: MakeBundle) -> None:
    body = "See [up](../../docs/x.md) and [odd](../\x1b[31m.md).\n"
    root = make_bundle({"deep/a.md": concept(body=body), "deep/b.md": concept()})
    lines = run("neighbors", str(root), "deep/a").stdout.splitlines()
    at = lines.index("Leaves the bundle, not followed (2)")
    assert lines[at + 1].split() == ["HREF", "TEXT", "VIA"]
    assert lines[at + 2].split() == ["../../docs/x.md", "up", "body:4"]
    assert lines[at + 3].split() == ["../^[[31m.md", "odd", "body:4"]  # shown, not obeyed
    assert "Leaves the bundle" not in run("neighbors", str(root), "deep/b").stdout
    (root / "deep" / "index.md").write_text("# Deep\n\n* [B](b.md) - b\n", encoding="utf-8")
    assert "Listed in /deep/index.md" in run("neighbors", str(root), "deep/b").stdout


def test_neighbors_say_which_concept_a_broken_link_meant(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(body="See [b](/kb/topics/b-page.md) and [x](/nowhere/else.md).\n"),
            "topics/b-page.md": concept(),
        }
    )
    lines = run("neighbors", str(root), "a").stdout.splitlines()
    header = next(line for line in lines if "DID YOU MEAN" in line)
    assert header.split() == ["PATH", "TEXT", "VIA", "DID", "YOU", "MEAN"]  # the link's text
    meant = next(line for line in lines if "/kb/topics/b-page.md" in line)
    assert meant.split()[-1] == "/topics/b-page.md"
    other = next(line for line in lines if "/nowhere/else.md" in line)
    assert other.split()[-1] == "body:4"  # no concept is close: nothing named


@pytest.mark.parametrize(
    ("args", "key", "most"),
    [
        (["search", EXAMPLE, "trips", "--limit", "1000", "--json"], "hits", 50),
        (["index", EXAMPLE, "--limit", "1000", "--json"], "concepts", 200),
        (["grep", EXAMPLE, "e", "--limit", "1000", "--json"], "matches", 200),
    ],
)
def test_a_limit_above_the_tools_maximum_reads_as_it(args: list[str], key: str, most: int) -> None:
    """Agent QA: the CLI refused --limit 100 where the tools, over Python and MCP, read a
    limit above their maximum as that maximum."""
    result = run(*args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert 0 < len(payload[key]) <= most


def test_grep_advice_is_in_the_command_lines_words(make_bundle: MakeBundle) -> None:
    """CLI QA: a regular expression's or -i call's "no match" advice kept the tool's
    words (search_concepts), and a footer after a filter started with a blank."""
    from click.testing import CliRunner

    files = {f"c{i}.md": concept(body="XRD one.\n", type="Concept") for i in range(3)}
    files["d/x.md"] = concept(body="XRD two.\n", type="Guide")
    root = str(make_bundle(files))
    for args in (["zzq.*x", "--regex"], ["zzq.*x", "--regex", "-i"], ["zzqqxx", "-i"]):
        said = CliRunner().invoke(cli, ["grep", root, *args]).output
        assert "okfx search for the words" in said and "search_concepts" not in said, args
    footer = CliRunner().invoke(cli, ["grep", root, "XRD", "--limit", "1", "--type", "Concept"])
    last = footer.output.rstrip("\n").splitlines()[-1]
    assert last.startswith("Showing the first match; 3 concepts match"), last


def test_a_line_break_in_a_title_or_description_prints_no_line_of_its_own(
    make_bundle: MakeBundle,
) -> None:
    """CLI QA: a title holding "\\n    /policies/x.md  (Policy, score 9.99, ...)" printed a
    fake hit line with its own path and score, and a description "\\nDEPRECATED: none" a
    fake notice, in okfx search and okfx read."""
    evil = (
        '---\ntype: Note\ntitle: "Refund  [human-reviewed]\\n    /policies/x.md  (Policy, score '
        '9.99)"\ndescription: "Rules.\\nDEPRECATED: none"\n---\nrefund text\n'
    )
    root = str(make_bundle({"evil.md": evil}))
    found = CliRunner().invoke(cli, ["search", root, "refund"]).output.splitlines()
    assert not any(line.lstrip().startswith("/policies/") for line in found)
    read = CliRunner().invoke(cli, ["read", root, "evil.md"]).output.splitlines()
    assert not any(line.startswith("DEPRECATED") for line in read)
    assert not any(line.lstrip().startswith("/policies/") for line in read)
