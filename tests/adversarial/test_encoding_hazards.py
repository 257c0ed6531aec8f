"""Encoding hazards: bytes that are not UTF-8, BOMs, line endings, broken fences, odd names.

Bad files are skipped with a stable warning code (spec §4: concepts are UTF-8); text that
decodes is read as written. ``tests/test_bundle.py::test_encodings_and_line_endings`` has the
basic cases; these add the hostile ones and check the tools on what does load.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hostile import assert_clean, call, codes, concept, write

from okfx import Bundle, Toolbox

GOOD = b"---\ntype: A\ntitle: T\n---\nbody [b](b.md)\n"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"---\ntype: A\n---\n\xc3\x28 invalid sequence\n", "invalid_encoding"),
        (b"---\ntype: A\n---\n\xc0\xaf overlong slash\n", "invalid_encoding"),
        (b"---\ntype: A\n---\n\xed\xa0\x80 encoded surrogate\n", "invalid_encoding"),
        (b"---\ntype: A\n---\n\xf4\x90\x80\x80 beyond U+10FFFF\n", "invalid_encoding"),
        (b"---\ntype: A\n---\ntruncated \xe2\x82", "invalid_encoding"),
        (GOOD.decode().encode("utf-16-le"), "no_frontmatter"),  # UTF-16 without a BOM
        (b"\xff\xfe" + GOOD.decode().encode("utf-16-le"), "invalid_encoding"),
        (b"\xfe\xff" + GOOD.decode().encode("utf-16-be"), "invalid_encoding"),
        (b"\xff\xfe\x00\x00" + GOOD.decode().encode("utf-32-le"), "invalid_encoding"),
        (b"---", "unterminated_frontmatter"),
        (b"---\n", "unterminated_frontmatter"),
        (b"---\r\n", "unterminated_frontmatter"),
        (b"---\ntype: A\nbody without a closing fence\n", "unterminated_frontmatter"),
        (b"---\ntype: A\n--\n", "unterminated_frontmatter"),
        (b"", "no_frontmatter"),
        (b"# just markdown\n", "no_frontmatter"),
        (b"\n---\ntype: A\n---\n", "no_frontmatter"),
        (b" ---\ntype: A\n---\n", "no_frontmatter"),
        (b"---\ntype: 'a\x00b'\n---\n", "malformed_yaml"),
        (b"---\ntype: A\nx: \x1b[31m\n---\n", "malformed_yaml"),
    ],
    ids=lambda v: repr(v[:24]) if isinstance(v, bytes) else v,
)
def test_undecodable_or_unfenced_files_are_skipped_with_a_code(
    tmp_path: Path, data: bytes, code: str
) -> None:
    bundle = Bundle.load(write(tmp_path / "b", {"bad.md": data, "b.md": GOOD}))
    assert [c.path for c in bundle] == ["/b.md"]
    assert codes(bundle, "/bad.md") == [code]


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + GOOD,  # UTF-8 BOM before ---
        GOOD.replace(b"\n", b"\r\n"),  # CRLF
        GOOD.replace(b"\n", b"\r"),  # old Mac CR
        GOOD.replace(b"---\ntype", b"---  \ntype").replace(b"T\n---", b"T\n---\t"),
    ],
    ids=["utf8-bom", "crlf", "cr", "fence-trailing-blanks"],
)
def test_boms_and_line_endings_load_the_same_concept(tmp_path: Path, data: bytes) -> None:
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": data, "b.md": GOOD}))
    concept_ = bundle.concept("a")
    assert (concept_.type, concept_.title, concept_.body) == ("A", "T", "body [b](b.md)\n")
    assert [link.target for link in concept_.links] == ["/b.md"]
    assert codes(bundle) == []


def test_control_characters_in_a_body_are_returned_shown_not_obeyed(tmp_path: Path) -> None:
    """Agent QA: tool results carried ESC and bidi overrides raw, where MCP resources and
    the CLI show them; a host showing a title could read ``Invoice \u202efdp.exe`` as
    ``Invoice exe.pdf``. Tab, line feed and a zero-width space are text and stay."""
    body = "nul \x00 bell \x07 escape \x1b[2J bidi \u202e txt.exe zero-width \u200b end\tx\n"
    files = {
        "a.md": concept(body=body),
        "b.md": '---\ntype: Note\ntitle: "Invoice \u202efdp.exe"\n'
        'tags: ["a\u2066b"]\n---\nInvoice.\n',
    }
    files["notes.txt"] = "row\x1b[2J\r\nnext\r\n"
    box = Toolbox(Bundle.load(write(tmp_path / "b", files)))
    attached = call(box, "read_resource", path="notes.txt")
    assert attached["text"] == "row\u241b[2J\r\nnext\r\n"  # CRLF lines stay lines
    result = call(box, "read_concept", path="a")
    assert result["body"] == (
        "nul \u2400 bell \u2407 escape \u241b[2J bidi \\u202e txt.exe zero-width \u200b end\tx\n"
    )
    json.dumps(result, ensure_ascii=False).encode("utf-8")
    read = call(box, "read_concept", path="b")
    assert (read["title"], read["tags"]) == ("Invoice \\u202efdp.exe", ["a\\u2066b"])
    for found in (
        call(box, "list_concepts")["concepts"],
        call(box, "search_concepts", query="invoice")["hits"],
        call(box, "grep_concepts", pattern="Invoice")["matches"],
    ):
        text = json.dumps(found, ensure_ascii=False)
        assert "\u202e" not in text and "\\u202efdp" in text, text


def test_reserved_files_with_bad_bytes_or_fences_do_not_stop_the_load(tmp_path: Path) -> None:
    bundle = Bundle.load(
        write(
            tmp_path / "b",
            {
                "index.md": b"# Index\n\xff\xfe\n",
                "d/index.md": b"---\nokf_version: 1\nunterminated\n# D\n",
                "log.md": b"---\n[unclosed\n---\n# Log\n## 2026-01-01\n* x\n",
                "a.md": GOOD,
            },
        )
    )
    assert len(bundle) == 1
    assert codes(bundle, "/index.md") == ["invalid_encoding"]
    assert codes(bundle, "/d/index.md") == ["unterminated_frontmatter"]
    assert codes(bundle, "/log.md") == ["log_frontmatter"]
    assert_clean(Toolbox(bundle).read_concept(path="d/"))


@pytest.mark.parametrize("name", ["a\nb.md", "a\rb.md", "a\x1bb.md", "a\\b.md", "a\x7fb.md"])
def test_file_names_with_control_characters_or_backslashes_are_skipped(
    tmp_path: Path, name: str
) -> None:
    root = write(tmp_path / "b", {"ok.md": GOOD})
    (root / name).write_bytes(GOOD)
    bundle = Bundle.load(root)
    assert [c.path for c in bundle] == ["/ok.md"]
    assert codes(bundle, "/" + name) == ["unsafe_path"]


@pytest.mark.parametrize("raw", [b"\xff\xfe.md", b"dir\xff/a.md"])
def test_file_names_that_are_not_utf8_are_skipped_and_reported(tmp_path: Path, raw: bytes) -> None:
    root = write(tmp_path / "b", {"ok.md": GOOD})
    target = os.path.join(os.fsencode(root), raw)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as handle:
        handle.write(GOOD)
    bundle = Bundle.load(root)
    box = Toolbox(bundle)
    box.manager.prompt().encode("utf-8")
    for c in bundle:
        json.dumps(call(box, "read_concept", path=c.path), ensure_ascii=False).encode("utf-8")
    assert [c.path for c in bundle] == ["/ok.md"]
    assert [w.code for w in bundle.warnings if w.path != "/ok.md"] == ["unsafe_path"]


def test_an_errors_suggestions_show_control_characters_too(tmp_path: Path) -> None:
    """An error's did_you_mean quotes bundle text (a heading here): shown, not obeyed,
    as a result's text is."""
    body = "## Setup \u202eevil\n\nText.\n"
    box = Toolbox(Bundle.load(write(tmp_path / "b", {"c.md": concept(body=body)})))
    error = call(box, "read_concept", path="c", section="nothing like it")["error"]
    assert error["code"] == "not_found"
    assert error["did_you_mean"] == ["Setup \\u202eevil"], error
