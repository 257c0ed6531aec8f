from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import MakeBundle, concept
from okfx import (
    Bundle,
    Concept,
    IndexFile,
    Limits,
    LogFile,
    NotFound,
    Toolbox,
    UnsafePath,
    validate,
)


def codes(bundle: Bundle, path: str | None = None) -> list[str]:
    return [w.code for w in bundle.warnings if path is None or w.path == path]


def test_concepts_load_in_path_order_with_default_name(make_bundle: MakeBundle) -> None:
    root = make_bundle({"b.md": concept(), "a/z.md": concept(), "a.md": concept()})
    bundle = Bundle.load(root)
    assert [c.path for c in bundle] == ["/a.md", "/a/z.md", "/b.md"]
    assert len(bundle) == 3
    assert bundle.name == root.name
    assert bundle.root == root
    assert bundle.warnings == []


def test_name_can_be_given(make_bundle: MakeBundle) -> None:
    assert Bundle.load(make_bundle({"a.md": concept()}), name="kb").name == "kb"


def test_missing_folder_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Bundle.load(tmp_path / "nope")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("# no frontmatter\n", "no_frontmatter"),
        ("---\ntype: A\n", "unterminated_frontmatter"),
        ("---\ntype: [A\n---\n", "malformed_yaml"),
        ("---\n- a\n---\n", "frontmatter_not_mapping"),
        ("---\ntitle: T\n---\n", "missing_type"),
        ("---\ntype: ''\n---\n", "missing_type"),
        ("---\ntype: '   '\n---\n", "missing_type"),
        ("---\ntype: [A, B]\n---\n", "invalid_type"),
        ("---\ntype: 42\n---\n", "invalid_type"),
        ("---", "unterminated_frontmatter"),
    ],
)
def test_unusable_files_are_skipped_with_a_stable_code(
    make_bundle: MakeBundle, text: str, code: str
) -> None:
    bundle = Bundle.load(make_bundle({"bad.md": text, "good.md": concept()}))
    assert [c.path for c in bundle] == ["/good.md"]
    assert codes(bundle, "/bad.md") == [code]


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("---\nkind: Module\ntitle: A\n---\n", "it has kind: 'Module': rename that key to 'type'"),
        ("---\nType: Metric\n---\n", "it has Type: 'Metric': rename that key to 'type'"),
        ("---\nkind: ''\ntitle: A\n---\n", None),
        ("---\nkind: [a]\n---\n", None),
    ],
)
def test_a_missing_type_names_the_key_the_producer_wrote_for_it(
    make_bundle: MakeBundle, text: str, hint: str | None
) -> None:
    bundle = Bundle.load(make_bundle({"bad.md": text}))
    [warning] = [w for w in bundle.warnings if w.path == "/bad.md"]
    assert warning.code == "missing_type"
    assert warning.message.startswith("frontmatter has no non-empty 'type' (spec §4.1)")
    assert (hint in warning.message) if hint else ("rename" not in warning.message)


def test_bad_optional_fields_never_cost_the_concept(make_bundle: MakeBundle) -> None:
    text = (
        "---\ntype: Metric\ntags: finance\nstale_after: next year\n"
        "generated: {by: human:ada, at: 2026-02-30T00:00:00Z}\n"
        "verified:\n  - {}\n  - {by: 'human:'}\n  - {by: 'human: ada'}\n"
        "  - {by: process:nightly, at: 2026-06-01T00:00:00Z}\n"
        "status: retired\ncustom: kept\n---\nbody\n"
    )
    bundle = Bundle.load(make_bundle({"m.md": text}))
    c = bundle.concept("m")
    assert c.tags == ("finance",)  # one string is one tag, with a warning
    assert c.stale_after is None
    assert c.generated is not None and c.generated.by == "human:ada" and c.generated.at is None
    # 'human: ada' is read by its prefix (spec §7), with a warning; 'human:' names no one
    assert [v.by for v in c.verified] == ["human: ada", "process:nightly"]
    assert c.trust_tier == "human-reviewed"
    assert c.status == "stable"
    assert c.frontmatter["tags"] == "finance"
    assert c.frontmatter["custom"] == "kept"
    assert c.frontmatter["stale_after"] == "next year"
    found = codes(bundle, "/m.md")
    assert found.count("invalid_field") == 7  # verified[2] is kept, without its "at"
    assert "unknown_status" in found


def test_fields_are_normalised(make_bundle: MakeBundle) -> None:
    text = (
        "---\ntype: ' Metric '\ntitle: Active users\ndescription: Users active in a window.\n"
        "resource: https://x.example/t\ntags: [a, b, a, 7]\nstatus: Draft\n"
        "stale_after: 2026-12-31T02:00:00+02:00\n"
        "verified: {by: human:ada, at: 2026-06-25T09:00:00Z}\n"
        "sources:\n  - id: s1\n    resource: https://doc.example\n    author: team:docs\n"
        "    usage_count: 5000\n    last_modified: 2026-05-30T00:00:00Z\n"
        "usage_window: {from: 2026-06-01T00:00:00Z, to: 2026-06-30T00:00:00Z}\n"
        "---\nA claim.[^s1] Another.[^nope]\n\n[^s1]: Doc\n"
    )
    bundle = Bundle.load(make_bundle({"metrics/active-users.md": text}))
    c = bundle.concept("/metrics/active-users")
    assert (c.path, c.id, c.type) == ("/metrics/active-users.md", "metrics/active-users", "Metric")
    assert c.title == "Active users" and c.description == "Users active in a window."
    assert c.tags == ("a", "b", "7")
    assert c.status == "draft"
    assert c.stale_after == datetime(2026, 12, 31, tzinfo=UTC)
    assert c.trust_tier == "human-reviewed"  # a bare mapping is a one-element list
    assert c.last_verified == datetime(2026, 6, 25, 9, tzinfo=UTC)
    source = c.sources[0]
    assert (source.id, source.author, source.usage_count) == ("s1", "team:docs", 5000)
    assert c.usage_window is not None and c.usage_window.end == datetime(2026, 6, 30, tzinfo=UTC)
    assert c.citations == ("s1", "nope")
    assert c.source_for("s1") is source and c.source_for("nope") is None
    assert codes(bundle) == ["status_case", "unknown_footnote"]  # Draft is read, and noted
    assert c.is_stale(datetime(2026, 12, 31, tzinfo=UTC))
    assert not c.is_stale(datetime(2026, 12, 30, 23, 59, tzinfo=UTC))


def test_title_is_derived_from_the_file_name_when_absent(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({"n_day_active-users.md": concept()}))
    assert bundle.concept("n_day_active-users").title == "n day active users"


def test_generated_at_falls_back_to_legacy_timestamp(make_bundle: MakeBundle) -> None:
    text = concept(timestamp="'2026-05-28T22:53:05+00:00'")
    c = Bundle.load(make_bundle({"a.md": text})).concept("a")
    assert c.generated is not None and c.generated.legacy
    assert c.generated.at == datetime(2026, 5, 28, 22, 53, 5, tzinfo=UTC)


def test_status_absent_reads_as_stable_and_is_not_a_warning(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({"a.md": concept()}))
    assert bundle.concept("a").status == "stable" and bundle.warnings == []


def test_reserved_files_are_not_concepts_at_any_level(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "index.md": '---\nokf_version: "0.2"\n---\n# Groups\n\n'
            "* [Tables](tables/) - All tables\n",
            "log.md": "# History\n\n## 2026-05-22\n* **Update**: Added [t](/tables/t.md).\n"
            "  continued line\n* **Creation**: x\n\n## May 2026\n* old\n",
            "tables/index.md": "# Tables\n\n* [T](t.md) - The table\n* [Gone](gone.md)\n",
            "tables/log.md": "---\ntype: Log\n---\n## 2026-01-01\n- started\n",
            "tables/t.md": concept("BigQuery Table"),
        }
    )
    bundle = Bundle.load(root)
    assert [c.path for c in bundle] == ["/tables/t.md"]
    assert bundle.okf_version == "0.2"
    index = bundle.get("/tables")
    assert isinstance(index, IndexFile)
    entries = index.sections[0].entries
    assert [(e.title, e.target, e.description) for e in entries] == [
        ("T", "/tables/t.md", "The table"),
        ("Gone", "/tables/gone.md", ""),
    ]
    assert bundle.index is not None
    assert bundle.index.sections[0].entries[0].target == "/tables/index.md"
    log = bundle.get("log.md")
    assert isinstance(log, LogFile)
    assert log.title == "History"
    assert [(str(e.date), e.text) for e in log.entries] == [
        ("2026-05-22", "**Update**: Added [t](/tables/t.md). continued line"),
        ("2026-05-22", "**Creation**: x"),
        ("None", "old"),
    ]
    assert sorted(codes(bundle)) == ["broken_link", "invalid_log_date", "log_frontmatter"]
    assert isinstance(bundle.get("tables/log.md"), LogFile)


def test_index_sections_follow_setext_headings_and_skip_fenced_examples(
    make_bundle: MakeBundle,
) -> None:
    index = (
        "Tables\n======\n\n* [T](t.md) - The table\n\n"
        "```markdown\n* [Example](example.md) - how an entry looks\n```\n\n"
        "Older\n-----\n\n* [U](u.md) - Another\n"
    )
    root = make_bundle({"index.md": index, "t.md": concept(), "u.md": concept()})
    bundle = Bundle.load(root)
    assert bundle.index is not None
    sections = [(s.title, [e.target for e in s.entries]) for s in bundle.index.sections]
    assert sections == [("Tables", ["/t.md"]), ("Older", ["/u.md"])]
    assert not [p for p in bundle.warnings if p.path == "/index.md"]


def test_non_root_index_frontmatter_is_reported_and_ignored(make_bundle: MakeBundle) -> None:
    # (with okf_version it would make its folder a nested bundle: tests/realworld)
    bundle = Bundle.load(make_bundle({"a/index.md": "---\ntitle: A\n---\n# A\n"}))
    assert codes(bundle, "/a/index.md") == ["reserved_frontmatter"]
    assert bundle.okf_version is None
    assert bundle.get("/a/index.md").frontmatter == {"title": "A"}  # read, never used


def test_get_accepts_every_path_form(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(
        make_bundle({"metrics/active-users.md": concept(), "metrics/index.md": "# M\n"})
    )
    expected = bundle.get("/metrics/active-users.md")
    assert isinstance(expected, Concept)
    for form in ("metrics/active-users.md", "metrics/active-users", "/metrics/active-users"):
        assert bundle.get(form) is expected
    assert isinstance(bundle.get("/metrics"), IndexFile)
    assert isinstance(bundle.get("metrics/"), IndexFile)
    assert bundle.get("/nothing") is None
    assert isinstance(bundle.document("metrics/"), IndexFile)
    with pytest.raises(NotFound):
        bundle.document("/nothing")
    assert "/metrics/active-users.md" in bundle and "/nothing" not in bundle
    with pytest.raises(UnsafePath):
        bundle.get("../etc/passwd")


def test_concept_not_found_suggests_close_paths(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({"metrics/active-users.md": concept(title="Active users")}))
    with pytest.raises(NotFound) as info:
        bundle.concept("metrics/active-user")
    assert info.value.code == "not_found"
    assert info.value.suggestions == ["/metrics/active-users.md"]


def test_link_graph_outbound_backlinks_and_unresolved(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(body="[b](./b.md) [gone](/gone.md) [ext](https://x.io) `[c](c.md)`\n"),
            "b.md": concept(body="[a](/a.md)\n"),
            "c.md": concept(body="```\n[a](a.md)\n```\n"),
        }
    )
    bundle = Bundle.load(root)
    around = bundle.neighbors("a")
    assert [link.target for link in around.outbound] == ["/b.md"]
    assert [link.target for link in around.unresolved] == ["/gone.md"]
    assert [link.source for link in around.backlinks] == ["/b.md"]
    assert bundle.concept("a").external_links == ("https://x.io",)
    assert bundle.neighbors("c").backlinks == ()
    assert [w.message for w in bundle.warnings] == ["body link to /gone.md does not exist (line 4)"]
    with pytest.raises(NotFound):
        bundle.neighbors("zzz")


def test_path_valued_frontmatter_fields_are_labelled_edges(make_bundle: MakeBundle) -> None:
    text = (
        "---\ntype: Attested Computation\nruntime: bigquery\nresource: /tables/t.md\n"
        "computation: sql/q.sql\nexecutor: {resource: skills/run.md, receipt: [job_id]}\n"
        "attester: {resource: attesters/check.py}\n"
        "sources:\n  - resource: all queries in project X\n  - resource: ../tables/t.md\n"
        "  - resource: https://wiki.example/p\n---\n"
    )
    root = make_bundle(
        {
            "comp/c.md": text,
            "tables/t.md": concept(),
            "skills/run.md": concept("Skill"),
            "comp/sql/q.sql": "select 1",
        }
    )
    bundle = Bundle.load(root)
    links = {(link.field, link.target, link.exists) for link in bundle.concept("comp/c").links}
    assert links == {
        ("resource", "/tables/t.md", True),
        ("computation", "/comp/sql/q.sql", True),
        ("executor.resource", "/skills/run.md", True),
        ("attester.resource", "/attesters/check.py", False),
        ("sources[1].resource", "/tables/t.md", True),
    }
    assert {link.field for link in bundle.neighbors("/tables/t.md").backlinks} == {
        "resource",
        "sources[1].resource",
    }


@pytest.mark.parametrize(
    ("written", "target"),
    [
        ("tables/t.md", "/tables/t.md"),  # names a file: a path, as computation's are
        ("tables/t", "/tables/t.md"),  # leads to one
        ("./t.md", "/sub/t.md"),
        ("bigquery-public-data.crypto_bitcoin.inputs", None),  # no path
        ("all queries in project X", None),  # a scope
        ("dashboards/exec-revenue", None),  # leads to no file
    ],
)
def test_a_bare_relative_resource_is_a_path_as_6_2_writes_one(
    make_bundle: MakeBundle, written: str, target: str | None
) -> None:
    """Spec QA: ``resource: tables/t.md`` drew no edge, where computation and a source's
    resource are read bare (§6.2 allows a relative path)."""
    files: dict[str, str | bytes] = {
        "sub/a.md": f"---\ntype: X\nresource: {written}\n---\n",
        "tables/t.md": concept(),
        "sub/t.md": concept(),
    }
    bundle = Bundle.load(make_bundle(files))
    links = [(k.field, k.target) for k in bundle.concept("sub/a").links]
    assert links == ([("resource", target)] if target else [])


def test_a_bare_source_resource_is_a_path_only_when_it_names_a_file(
    make_bundle: MakeBundle,
) -> None:
    """The spec's Appendix A writes a dashboard as ``resource: dashboards/exec-revenue``:
    a scope, which validate --strict reported as a broken link (validate QA)."""
    text = (
        "---\ntype: Metric\nsources:\n  - resource: dashboards/exec-revenue\n"
        "  - resource: tables/t\n  - resource: reports/q3.csv\n  - resource: refs/a.md\n"
        "  - resource: tables/sub\n---\n"
    )
    root = make_bundle(
        {
            "m.md": text,
            "tables/t": "a file with no extension",
            "tables/sub/index.md": "# Sub\n",
            "refs/a.md": concept(),
        }
    )
    bundle = Bundle.load(root)
    links = {(k.field, k.target, k.exists) for k in bundle.concept("m").links}
    assert links == {
        ("sources[1].resource", "/tables/t", True),  # leads to a file: a path
        ("sources[2].resource", "/reports/q3.csv", False),  # names a file: a broken path
        ("sources[3].resource", "/refs/a.md", True),
        ("sources[4].resource", "/tables/sub/index.md", True),  # a folder with an index
    }
    assert [w.code for w in bundle.warnings] == ["broken_link"]  # q3.csv, not the dashboard


def test_computation_contract_inline_and_file(make_bundle: MakeBundle) -> None:
    inline = (
        "---\ntype: Attested Computation\nruntime: bigquery\n"
        "parameters:\n  - { name: year, type: integer, required: true }\n  - { type: x }\n"
        "executor: {resource: s.md, receipt: [job_id, executed_sql]}\n---\n"
        "# Computation\n\n    SELECT 1\n    WHERE y = @year\n\nProse.\n\n# Other\n"
    )
    fenced = "---\ntype: Attested Computation\n---\n# Computation\n```sql\nSELECT 2\n```\n"
    by_file = "---\ntype: Metric\nruntime: dbt\ncomputation: q.sql\n---\n"
    bundle = Bundle.load(make_bundle({"a.md": inline, "b.md": fenced, "c.md": by_file}))
    a = bundle.concept("a").computation
    assert a is not None
    assert a.runtime == "bigquery" and a.inline == "SELECT 1\nWHERE y = @year\n"
    assert [(p.name, p.type, p.required) for p in a.parameters] == [("year", "integer", True)]
    assert a.receipt == ("job_id", "executed_sql") and a.executor_resource == "s.md"
    b = bundle.concept("b").computation
    assert b is not None and b.inline == "SELECT 2\n" and b.inline_language == "sql"
    assert b.runtime is None
    c = bundle.concept("c").computation
    assert c is not None and c.computation_path == "q.sql" and c.inline is None
    assert "invalid_field" in codes(bundle, "/b.md")
    assert "invalid_field" in codes(bundle, "/a.md")


def test_a_computation_heading_inside_a_code_block_is_a_comment(make_bundle: MakeBundle) -> None:
    text = (
        "---\ntype: Attested Computation\nruntime: duckdb\n---\n"
        "# Setup\n\n```bash\n# computation\necho not the query\n```\n\n"
        "<!--\n# Computation\n    SELECT 0\n-->\n\n"
        "# Computation\n\n```sql\nSELECT 3\n```\n"
    )
    computation = Bundle.load(make_bundle({"a.md": text})).concept("a").computation
    assert computation is not None
    assert computation.inline == "SELECT 3\n" and computation.inline_language == "sql"


def test_hidden_files_and_folders_are_ignored(make_bundle: MakeBundle) -> None:
    root = make_bundle({".git/x.md": "junk", ".hidden.md": "junk", "a.md": concept()})
    bundle = Bundle.load(root)
    assert [c.path for c in bundle] == ["/a.md"] and bundle.warnings == []


def test_encodings_and_line_endings(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "bom.md": "\ufeff---\ntype: A\n---\n",
            "crlf.md": b"---\r\ntype: A\r\n---\r\nline1\r\nline2\r\n",
            "latin1.md": "---\ntype: caf\xe9\n---\n".encode("latin-1"),
            "utf16.md": "---\ntype: A\n---\n".encode("utf-16"),
        }
    )
    bundle = Bundle.load(root)
    assert [c.path for c in bundle] == ["/bom.md", "/crlf.md"]
    assert bundle.concept("crlf").body == "line1\nline2\n"
    assert codes(bundle) == ["invalid_encoding", "invalid_encoding"]


def test_files_over_the_size_cap_are_skipped(make_bundle: MakeBundle) -> None:
    root = make_bundle({"big.md": concept(body="x" * 5000), "small.md": concept()})
    bundle = Bundle.load(root, limits=Limits(max_file_bytes=1000))
    assert [c.path for c in bundle] == ["/small.md"]
    assert codes(bundle) == ["file_too_large"]
    (warning,) = bundle.warnings
    assert warning.message.startswith("file is 4.9 KiB, over the 1000 bytes a file may be")
    assert warning.message.endswith("skipped, unchecked: split the file")


def test_fifos_are_never_opened(make_bundle: MakeBundle) -> None:
    root = make_bundle({"a.md": concept()})
    os.mkfifo(root / "pipe.md")
    bundle = Bundle.load(root)  # would block forever if the FIFO were opened
    assert len(bundle) == 1
    assert codes(bundle, "/pipe.md") == ["not_regular_file"]


def test_symlinks_inside_are_followed_and_outside_are_refused(
    make_bundle: MakeBundle, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(concept(title="SECRET"), encoding="utf-8")
    root = make_bundle({"real/a.md": concept(title="inside")})
    os.symlink(outside / "secret.md", root / "leak.md")
    os.symlink(outside, root / "leakdir")
    os.symlink(root / "real" / "a.md", root / "alias.md")
    os.symlink(root / "real", root / "aliasdir")
    os.symlink(root, root / "real" / "loop")
    bundle = Bundle.load(root)
    assert [c.path for c in bundle] == ["/alias.md", "/aliasdir/a.md", "/real/a.md"]
    assert all(c.title != "SECRET" for c in bundle)
    assert codes(bundle, "/leak.md") == ["unsafe_path"]
    assert codes(bundle, "/leakdir") == ["unsafe_path"]
    assert "symlink_loop" in codes(bundle)


def test_a_link_to_a_symlink_out_of_the_bundle_says_okfx_does_not_read_it(
    make_bundle: MakeBundle, tmp_path: Path
) -> None:
    # Viewer QA: such a link, and a read of its path, said the file does not exist.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "c.md").write_text(concept(), encoding="utf-8")
    body = "[s](leak.md) [d](leakdir/c.md) [m](gone.md)\n"
    root = make_bundle({"a.md": concept(body=body)})
    os.symlink(outside / "c.md", root / "leak.md")
    os.symlink(outside, root / "leakdir")
    bundle = Bundle.load(root)
    broken = sorted(p.message for p in bundle.warnings if p.code == "broken_link")
    assert broken[0].startswith("body link 'gone.md' leads to /gone.md, which does not exist")
    assert broken[1].startswith(
        "body link 'leak.md' leads to /leak.md, which okfx does not read "
        "(/leak.md: symlink points outside the bundle)"
    )
    assert "leads to /leakdir/c.md, which okfx does not read (/leakdir: symlink" in broken[2]
    box = Toolbox(bundle)
    unresolved = {e["path"]: e for e in box.get_neighbors(path="a")["unresolved"]}
    assert unresolved["/leakdir/c.md"]["not_read"] == "/leakdir: symlink points outside the bundle"
    assert "missing_folder" not in unresolved["/leakdir/c.md"]
    assert "not_read" not in unresolved["/gone.md"]
    message = box.read_concept(path="leakdir/c")["error"]["message"]
    assert "okfx does not read it (/leakdir: symlink points outside the bundle)" in message
    assert "okfx does not read" not in box.read_concept(path="gone")["error"]["message"]


def test_a_root_that_is_a_symlink_loads_with_inside_links(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "d").mkdir(parents=True)
    (real / "d" / "a.md").write_text(concept(body="[b](../b.md)"), encoding="utf-8")
    (real / "b.md").write_text(concept(), encoding="utf-8")
    os.symlink(real, tmp_path / "link")
    bundle = Bundle.load(tmp_path / "link")
    assert bundle.name == "link"
    assert [link.target for link in bundle.neighbors("d/a").outbound] == ["/b.md"]
    assert bundle.warnings == []


def test_deep_trees_are_walked_iteratively_up_to_the_bound(tmp_path: Path) -> None:
    root = tmp_path / "deep"
    path = root
    for _ in range(40):
        path = path / "d"
    path.mkdir(parents=True)
    (path / "x.md").write_text(concept(), encoding="utf-8")
    assert len(Bundle.load(root)) == 1
    shallow = Bundle.load(root, limits=Limits(max_dir_depth=10))
    assert len(shallow) == 0 and codes(shallow) == ["too_deep"]


def test_too_many_links_are_capped(make_bundle: MakeBundle) -> None:
    body = "".join(f"[l](/t{i}.md) " for i in range(50))
    bundle = Bundle.load(
        make_bundle({"a.md": concept(body=body)}), limits=Limits(max_links_per_concept=10)
    )
    assert len(bundle.concept("a").links) == 10
    assert "too_many_links" in codes(bundle)


def test_loading_twice_gives_the_same_result(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {f"d{i % 3}/c{i}.md": concept(body=f"[x](/d0/c{i + 1}.md)") for i in range(30)}
    )
    one, two = Bundle.load(root), Bundle.load(root)
    assert [(c.path, c.links) for c in one] == [(c.path, c.links) for c in two]
    assert one.warnings == two.warnings


def test_concepts_copy_and_pickle_as_immutable_values(make_bundle: MakeBundle) -> None:
    import copy
    import pickle

    c = Bundle.load(make_bundle({"a.md": concept(title="A", body="[b](b.md)")})).concept("a")
    assert copy.copy(c) is c and copy.deepcopy(c) is c
    restored = pickle.loads(pickle.dumps(c))
    assert (restored.path, restored.title, restored.links) == (c.path, c.title, c.links)
    with pytest.raises(AttributeError):
        c.title = "changed"  # type: ignore[misc]


# Files whose warnings come from every stage of a load: reading, frontmatter, fields,
# links, reserved files; several per file, in a fixed order within each file.
NOISY = {
    "a.md": concept(body="[gone](/gone.md) [up](../../x.md) [^f1]\n", status="odd"),
    "b.md": "---\ntype: A\ntype: B\ntags: 7\n---\n[a](a.md) [b](/nope.md)\n",
    "c.md": b"\xff\xfe not utf-8",
    "d.md": "no frontmatter here\n",
    "e/index.md": "---\ntitle: E\n---\n* [A](../a.md) - a\n* [Gone](gone.md) - g\n",
    "e/f.md": concept(verified="[{by: nobody}]", body="[x](/x.md)\n"),
    "e/log.md": "# Log\n\n## not a date\n\n* entry [z](/z.md)\n",
    "g.md": concept(body="x" * 3000),
    "h.md": concept(tags="[a, b]", body="[h](h.md) [^zz]\n"),
    "i.md": "---\ntype: [A\n---\n",
}


def _everything(bundle: Bundle) -> object:
    return (
        [[(name, getattr(c, name)) for name in Concept.__slots__] for c in bundle],
        bundle.indexes,
        bundle.logs,
        bundle.warnings,
        dict(bundle.backlink_map()),
    )


@pytest.mark.parametrize("batch", [2, 3, 256])
@pytest.mark.parametrize("max_total_bytes", [None, 250])
def test_batched_loading_equals_reading_one_file_after_the_other(
    make_bundle: MakeBundle,
    monkeypatch: pytest.MonkeyPatch,
    batch: int,
    max_total_bytes: int | None,
) -> None:
    import okfx.bundle.bundle

    root = make_bundle(NOISY)
    limits = Limits(max_file_bytes=2500)
    if max_total_bytes is not None:  # stops in the middle of a batch
        limits = Limits(max_file_bytes=2500, max_total_bytes=max_total_bytes)
    monkeypatch.setattr(okfx.bundle.bundle, "_BATCH", 1)
    one_by_one = Bundle.load(root, limits=limits)
    monkeypatch.setattr(okfx.bundle.bundle, "_BATCH", batch)
    batched = Bundle.load(root, limits=limits)
    assert len(one_by_one.warnings) > 10
    assert _everything(batched) == _everything(one_by_one)
    assert repr(batched.warnings) == repr(one_by_one.warnings)


def test_warnings_keep_file_order_and_their_order_within_a_file(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle(NOISY), limits=Limits(max_file_bytes=2500))
    paths = [w.path for w in bundle.warnings]
    assert paths == sorted(paths)
    assert codes(bundle, "/a.md") == ["unknown_status", "broken_link", "unsafe_link"] + [
        "unknown_footnote"
    ]
    assert codes(bundle, "/b.md") == ["duplicate_key", "invalid_field", "broken_link"]


def test_progress_is_told_every_256_files_and_at_the_end(make_bundle: MakeBundle) -> None:
    root = make_bundle({f"c{i:03}.md": concept() for i in range(600)})
    calls: list[tuple[int, int]] = []
    Bundle.load(root, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 600), (256, 600), (512, 600), (600, 600)]


def test_links_and_index_entries_share_the_bundle_path_strings(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(body="[b](/b.md) [b again](./b.md) [gone](/gone.md)"),
            "b.md": concept(),
            "index.md": "* [B](b.md) - b\n",
        }
    )
    bundle = Bundle.load(root)
    paths = {path: path for path in bundle.files}
    first, second, gone = bundle.concept("a").links
    assert first.target is second.target is paths["/b.md"] is bundle.concept("b").path
    assert first.href is first.target  # an absolute link: one string for both
    assert gone.target == "/gone.md" and not gone.exists
    entry = bundle.index.sections[0].entries[0] if bundle.index else None
    assert entry is not None and entry.target is paths["/b.md"]


def test_a_broken_link_says_what_was_written_and_what_it_likely_meant(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {
            "index.md": "# I\n\n* [Audits](audits/) - the audits\n* [Kept](kept/) - kept\n",
            "audits.md": concept(),
            "guide.md": concept(body="[setup](setup.md) and [gone](x/gone.md)\n"),
            "setup/index.md": "# Setup\n",
            "kept/k.md": concept(),
        }
    )
    messages = sorted(w.message for w in Bundle.load(root).warnings if w.code == "broken_link")
    # A folder link names the folder (EU5-OKF's link to a game folder read as a missing
    # .../scripted_effects/index.md); one to a folder there without index.md is no break.
    assert messages == [
        "body link 'audits/' leads to the folder /audits/, which does not exist; "
        "did you mean /audits.md? (line 3)",
        "body link 'setup.md' leads to /setup.md, which does not exist; "
        "did you mean /setup/index.md? (line 4)",
        "body link 'x/gone.md' leads to /x/gone.md, which does not exist (line 4)",
    ]


def test_an_index_may_list_twice_as_many_links_as_its_bundle_has_files(
    make_bundle: MakeBundle,
) -> None:
    files = {f"c{i}.md": concept() for i in range(12)}
    listing = "# All\n\n" + "".join(f"* [c{i}](c{i}.md) - concept {i}\n" for i in range(12))
    listing += "\n# Again\n\n" + "".join(f"* [c{i}](c{i}.md)\n" for i in range(12))
    limits = Limits(max_links_per_concept=5)
    bundle = Bundle.load(make_bundle({"index.md": listing, **files}), limits=limits)
    assert "too_many_links" not in codes(bundle)
    assert len(bundle.get("/index.md").links) == 24 and not bundle.unresolved_links()
    # A concept keeps the cap, and so does an index longer than its bundle's file count.
    hostile = "# All\n\n" + "".join(f"* [x](x{i}.md)\n" for i in range(40))
    bundle = Bundle.load(make_bundle({"index.md": hostile, "a.md": concept()}), limits=limits)
    assert codes(bundle, "/index.md").count("too_many_links") == 1
    assert len(bundle.get("/index.md").links) == 5


def test_code_blocks_and_comments_in_reserved_files_hold_no_headings_or_entries(
    make_bundle: MakeBundle,
) -> None:
    """A shell comment in a log entry's code block is no date heading (it made the
    bundle non-conformant), nor is a commented-out heading; an index lists no entry
    from a code block."""
    log = (
        "# Log\n\n## 2026-06-22\n* **Update**: the deploy script is now:\n\n"
        "  ```bash\n  # rebuild\n  make all\n  ```\n\n<!--\n## draft notes\n-->\n\n"
        "## 2026-06-20\n* **Creation**: started.\n"
    )
    index = "# Concepts\n\n* [A](a.md) - x\n\n```text\n# Example\n* [B](b.md) - y\n```\n"
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log, "index.md": index}))
    assert not bundle.warnings
    assert validate(bundle).conformant
    entries = bundle.get("/log.md").entries
    assert [e.heading for e in entries] == ["2026-06-22", "2026-06-20"]
    assert "make all" in entries[0].text
    sections = bundle.get("/index.md").sections
    assert [(s.title, [e.href for e in s.entries]) for s in sections] == [("Concepts", ["a.md"])]


def test_a_log_not_newest_first_is_reported_once(make_bundle: MakeBundle) -> None:
    days = ("2026-01-02", "2026-01-01", "2026-03-01", "2026-04-01")
    log = "# Log\n" + "".join(f"\n## {day}\n* entry\n" for day in days)
    bundle = Bundle.load(make_bundle({"a.md": concept(), "log.md": log}))
    assert [(w.code, w.message) for w in bundle.warnings] == [
        (
            "log_order",
            "log entries are not newest first (spec §9): 2026-03-01 comes after 2026-01-01 "
            "(line 9)",  # the heading of 2026-03-01
        )
    ]
    newest_first = "# Log\n\n## 2026-02-01\n* b\n* b2\n\n## 2026-01-01\n* a\n"
    assert not Bundle.load(make_bundle({"a.md": concept(), "log.md": newest_first})).warnings


@pytest.mark.parametrize(
    ("written", "read", "code"),
    [
        ("0.10", "0.10", "okf_version_number"),  # YAML's 0.1: kept as written, reported
        ("0.2", "0.2", None),  # the same either way: nothing to say
        ('"0.2"', "0.2", None),
        ("[0.2]  # a list", None, "invalid_field"),
        ("true", None, "invalid_field"),
    ],
)
def test_okf_version_reads_as_written(
    make_bundle: MakeBundle, written: str, read: str | None, code: str | None
) -> None:
    index = f"---\nokf_version: {written}\n---\n# All\n\n* [A](a.md) - a\n"
    bundle = Bundle.load(make_bundle({"index.md": index, "a.md": concept()}))
    assert bundle.okf_version == read
    assert [w.code for w in bundle.warnings] == ([code] if code else [])
    if code:
        assert bundle.warnings[0].message.endswith("(line 2)")


def test_a_concept_page_saved_as_log_md_is_one_error_not_one_per_heading(
    make_bundle: MakeBundle,
) -> None:
    """A page written as ``log.md`` (a type, headings that are no dates) is reported once,
    with the fix; a real log that carries frontmatter (acme_retail's) is a log still."""
    page = (
        "---\ntype: Reference\ntitle: Log\n---\n# Log\n\n## Disk files\n\n- topics\n\n"
        "## Remote syslog\n\n- server\n"
    )
    real = "---\ntype: Log\n---\n# History\n\n## 2026-07-01\n\n- **Creation**: x\n"
    bundle = Bundle.load(make_bundle({"diag/log.md": page, "log.md": real, "a.md": concept()}))
    assert codes(bundle, "/diag/log.md") == ["reserved_concept"]
    [problem] = [w for w in bundle.warnings if w.path == "/diag/log.md"]
    assert "type: 'Reference'" in problem.message and "log-page.md" in problem.message
    assert codes(bundle, "/log.md") == ["log_frontmatter"]
    # spec QA: a typed page with no heading at all had escaped with log_frontmatter alone
    plain = "---\ntype: Page\n---\nJust text\n"
    bundle = Bundle.load(make_bundle({"notes/log.md": plain, "a.md": concept()}))
    assert codes(bundle, "/notes/log.md") == ["reserved_concept"]


def test_index_entries_keep_link_text_with_brackets_that_pair_up(
    make_bundle: MakeBundle,
) -> None:
    index = (
        "# Scripting\n\n* [Plain](plain.md) - plain\n"
        "* [System name :global SYSname [/system identity get name];](b.md) - brackets\n"
        "* [Escaped \\[ bracket](c.md) - escaped\n"
    )
    files = {"s/index.md": index, "s/plain.md": concept(), "s/b.md": concept(), "s/c.md": concept()}
    bundle = Bundle.load(make_bundle(files))
    entries = [(e.title, e.target) for e in bundle.indexes["/s"].sections[0].entries]
    assert entries == [
        ("Plain", "/s/plain.md"),
        ("System name :global SYSname [/system identity get name];", "/s/b.md"),
        ("Escaped \\[ bracket", "/s/c.md"),
    ]


def test_a_heading_below_a_date_heading_is_a_dated_entry_not_a_bad_date(
    make_bundle: MakeBundle,
) -> None:
    """Aembit's changelog: ``### Feature`` titles under ``## YYYY-MM-DD``."""
    log = (
        "# Changelog\n\n## 2026-07-08\n\n### Feature A now available\n\nAdded A.\n\n"
        "* Also A2.\n\n## 2026-06-30\n\n### Feature B\n\n* Added B.\n\n## Not a date\n\n"
        "### Under a bad heading\n"
    )
    bundle = Bundle.load(make_bundle({"log.md": log, "a.md": concept()}))
    entries = bundle.get("log.md").entries  # type: ignore[union-attr]
    assert [(str(e.date), e.text) for e in entries] == [
        ("2026-07-08", "Feature A now available"),
        ("2026-07-08", "Added A."),
        ("2026-07-08", "Also A2."),
        ("2026-06-30", "Feature B"),
        ("2026-06-30", "Added B."),
    ]
    bad = [w.message for w in bundle.warnings if w.code == "log_section"]
    assert len(bad) == 2 and "'Not a date'" in bad[0] and "'Under a bad heading'" in bad[1]


def test_a_concept_id_beside_a_folder_of_that_name_names_the_concept(
    make_bundle: MakeBundle,
) -> None:
    """fibo-okf writes ``Loans.md`` beside ``Loans/index.md``: ``Loans`` is the concept's
    ID (spec §2); ``Loans/`` (and a folder with no concept beside it) is the folder."""
    files = {
        "m/Loans.md": concept(title="Loans module"),
        "m/Loans/index.md": "# Loans\n\n* [Loan](Loan.md) - a loan\n",
        "m/Loans/Loan.md": concept(),
        "m/Other/index.md": "# Other\n",
        "m/Other/x.md": concept(),
    }
    bundle = Bundle.load(make_bundle(files))
    for asked in ("m/Loans", "/m/Loans", "m/Loans.md"):
        found = bundle.get(asked)
        assert isinstance(found, Concept) and found.path == "/m/Loans.md", asked
    assert bundle.concept("m/Loans").title == "Loans module"
    for asked in ("m/Loans/", "m/Loans/index.md"):
        assert isinstance(bundle.get(asked), IndexFile), asked
    assert isinstance(bundle.get("m/Other"), IndexFile)


def test_a_source_link_is_named_by_its_place_as_written(make_bundle: MakeBundle) -> None:
    """The warning about a skipped entry and the link of the next one name two entries:
    ``sources[0]`` (the number) and ``sources[1]`` (the path), as the file has them."""
    sources = "\n  - 42\n  - {resource: /missing.md, title: Gone}\n  - refs/a.md"
    bundle = Bundle.load(make_bundle({"a.md": concept(sources=sources), "refs/a.md": concept()}))
    a = bundle.concept("a")
    assert [(link.field, link.target, link.line) for link in a.links] == [
        ("sources[1].resource", "/missing.md", 5),
        ("sources[2].resource", "/refs/a.md", 6),  # a bare path: its entry's line
    ]
    messages = sorted(w.message for w in bundle.warnings)
    assert messages[0].startswith("sources[0] is a number")
    assert messages[1].startswith("sources[1].resource link to /missing.md does not exist")


def test_a_bundle_in_a_hidden_folder_is_named_after_the_folder_holding_it(
    tmp_path: Path,
) -> None:
    """okf-gem and nhis-okf-compiler keep their bundles in ``.okf`` beside their code: every
    payload named the bundle ``.okf``. An explicit name still wins."""
    root = tmp_path / "okf-pro" / ".okf"
    root.mkdir(parents=True)
    (root / "a.md").write_text(concept(), encoding="utf-8")
    assert Bundle.load(root, state_cache=False).name == "okf-pro"
    assert Bundle.load(root, name="gem", state_cache=False).name == "gem"
    plain = tmp_path / "kb"
    plain.mkdir()
    (plain / "a.md").write_text(concept(), encoding="utf-8")
    assert Bundle.load(plain, state_cache=False).name == "kb"


def test_tags_written_as_a_quoted_list_are_read_and_told_to_lose_the_quotes(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: 189 concepts wrote ``tags: "[a, b]"`` and were told to write a YAML
    list like [a, b], which is what they saw."""
    root = make_bundle({"a.md": concept(tags="\"[ai, 'react', ]\""), "b.md": concept(tags="solo")})
    bundle = Bundle.load(root)
    said = {w.path: w.message for w in bundle.warnings if w.code == "invalid_field"}
    assert said["/a.md"].startswith("tags is a quoted string that looks like a list; okfx reads")
    assert "remove the quotes" in said["/a.md"]
    # a plain string is one tag, said too (new-producers QA: tags: a, b, c)
    assert said["/b.md"].startswith("tags is one string, not a list; okfx reads it as the tag")
    assert bundle.concept("b").tags == ("solo",)
    # read as the list it spells (agent QA: a tag filter missed 185 of a vault's pages)
    assert bundle.concept("a").tags == ("ai", "react")
    assert [r["path"] for r in Toolbox(bundle).list_concepts(tags=["react"])["concepts"]] == [
        "/a.md"
    ]


def test_an_agent_name_as_generated_by_is_shown_both_actor_forms(make_bundle: MakeBundle) -> None:
    """Validate QA: ``generated.by: claude`` was told ``e.g. human:claude``, which labels a
    model's output a person's; a source's author stays a person."""
    root = make_bundle(
        {
            "a.md": concept(generated="{by: claude, at: '2026-01-01T00:00:00Z'}"),
            "b.md": concept(sources="[{resource: 'https://x.org', author: Tiago Forte}]"),
        }
    )
    said = {w.path: w.message for w in Bundle.load(root).warnings if w.code == "invalid_field"}
    assert "claude/<version> for an agent or tool, human:claude for a person" in said["/a.md"]
    assert "e.g. human:tiago-forte)" in said["/b.md"]


def test_two_sources_of_one_id_are_reported(make_bundle: MakeBundle) -> None:
    """Validate QA (ScalarDB): four sources of one concept declared ``id: scalardb-saga``,
    so a footnote citing it named any of four; nothing said so."""
    sources = "\n  - {id: s1, resource: 'https://a.org'}\n  - {id: s1, resource: 'https://b.org'}"
    root = make_bundle({"a.md": concept(body="Said.[^s1]\n", sources=sources)})
    (said,) = [w for w in Bundle.load(root).warnings if w.code == "invalid_field"]
    assert "sources[1].id 's1' is also an earlier source's" in said.message
    assert said.message.endswith("(line 5)")  # the second entry


def test_a_change_log_kept_in_a_table_under_a_type_is_told_to_be_rewritten(
    make_bundle: MakeBundle,
) -> None:
    """Validate QA: okf-vault's log.md (type: Log, its changes in a table of dated rows)
    was told it was "a page, not an update log" and to rename it, which would lose the
    bundle's log."""
    table = (
        "---\ntype: Log\ntitle: Changes\n---\n# Changes\n\n| date | change |\n|---|---|\n"
        "| 2026-07-02 | added a |\n| 2026-07-01 | created |\n"
    )
    bundle = Bundle.load(make_bundle({"log.md": table, "a.md": concept()}))
    [problem] = [w for w in bundle.warnings if w.path == "/log.md"]
    assert problem.code == "reserved_concept"
    assert "lists its changes in 2 dated lines (a table or a list)" in problem.message
    assert "writes a log as '## YYYY-MM-DD' headings" in problem.message


def test_an_empty_path_is_said_as_such_and_a_tilde_is_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Framework QA: Bundle.load(os.environ.get("KB", "")) said "bundle folder not found"
    naming the working folder, which exists; "~/kb" from a setting was read literally."""
    with pytest.raises(FileNotFoundError, match="the bundle path is empty"):
        Bundle.load("")
    home = tmp_path / "home"
    (home / "kb").mkdir(parents=True)
    (home / "kb" / "a.md").write_text("---\ntype: Note\n---\nA.\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    assert [c.path for c in Bundle.load("~/kb", state_cache=False)] == ["/a.md"]
