"""validate's notes on producer habits no single problem names (new-producers QA): a
log.md with no dated entry, okf_version written in concepts instead of the root
index.md, a folder none of whose .md files has frontmatter."""

from __future__ import annotations

from conftest import MakeBundle, concept
from okfx import Bundle
from okfx.bundle.validate import validate

AUDIT_LOG = "# Audit log\n\n| step | result |\n|---|---|\n| compile | ok |\n"


def _notes(root: object) -> tuple[str, ...]:
    return validate(Bundle.load(root, state_cache=False)).notes  # type: ignore[arg-type]


def test_a_log_with_no_date_heading_is_noted(make_bundle: MakeBundle) -> None:
    # nhis-okf-compiler's log.md is an audit table: no change of it has a date
    root = make_bundle({"a.md": concept(), "log.md": AUDIT_LOG, "sub/log.md": AUDIT_LOG})
    assert _notes(root) == (
        "2 log.md files (/log.md, /sub/log.md) have no YYYY-MM-DD date heading, so okfx reads "
        "no dated change from them: spec §9 lists a log's changes under '## YYYY-MM-DD' "
        "headings, newest first; head each day's changes with its date",
    )
    (note,) = _notes(make_bundle({"a.md": concept(), "log.md": AUDIT_LOG}))
    assert note.startswith("/log.md has no YYYY-MM-DD date heading")
    quiet = {"a.md": concept(), "log.md": "# Log\n", "s/log.md": "## 2026-01-02\n- made\n"}
    assert _notes(make_bundle(quiet)) == ()  # a new log, and a dated one
    # entries before any heading: log_ungrouped names the heading to add already
    ungrouped = {"a.md": concept(), "log.md": "# Log\n\n2026-07-07\n\n- created\n"}
    assert _notes(make_bundle(ungrouped)) == ()


def test_okf_version_written_in_concepts_is_noted_once(make_bundle: MakeBundle) -> None:
    # boi-wiki writes okf_version: "0.1" in all 182 concepts, none in its root index.md
    files = {f"c{i}.md": concept(okf_version='"0.1"') for i in range(3)}
    assert _notes(make_bundle(files)) == (
        "3 concepts write okf_version in their frontmatter, where spec §12 does not read it: "
        "only the bundle-root index.md declares the version, so this bundle declares none; "
        'write okf_version: "0.1" in a new /index.md',
    )
    (note,) = _notes(make_bundle({**files, "index.md": "# Things\n"}))
    assert note.endswith('write okf_version: "0.1" in the frontmatter of /index.md')
    declared = {**files, "index.md": '---\nokf_version: "0.2"\n---\n# Things\n'}
    assert _notes(make_bundle(declared)) == ()


def test_a_folder_with_no_frontmatter_at_all_is_said_to_be_no_bundle(
    make_bundle: MakeBundle,
) -> None:
    # a project's memory folder: 27 of its 30 files under /domains/, none with frontmatter;
    # leaving /domains/ out, as the note said, left 3 files and no concept still
    pages = {f"domains/p{i}.md": f"# Page {i}\n" for i in range(12)}
    root = make_bundle({**pages, "readme.md": "# Readme\n"})
    assert _notes(root) == (
        "none of the 13 .md files here opens with a frontmatter block ('---', then 'type: "
        "...'): this folder does not look like an OKF bundle, whose concepts each do (spec "
        "§4): check the path, or give each file meant as a concept its frontmatter",
    )
    # one file with frontmatter: a bundle gone wrong, where excluding the folder may help
    typed = make_bundle({**pages, "a.md": "---\ntitle: x\n---\n"})
    assert [note.split(":")[0] for note in _notes(typed)] == [
        "12 of the 13 files that are no concept are under /domains/"
    ]
    # a repository root whose bundle is nested: that bundle's notes say where it is
    nested = make_bundle({**pages, "kb/index.md": '---\nokf_version: "0.2"\n---\n# K\n'})
    assert not any("does not look like" in note for note in _notes(nested))
