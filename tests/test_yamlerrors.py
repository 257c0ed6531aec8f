"""A broken frontmatter is reported on the line to fix, in the author's terms (validate
QA: a missing ':' was annotated on the next line, an unclosed quote lines later, a tab
as "found character that cannot start any token")."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okfx.bundle.frontmatter import FrontmatterError, load_yaml
from okfx.bundle.yamlerrors import unclosed_quote_line
from okfx.limits import Limits

LINE = re.compile(r" \(line (\d+)\)$")

# (frontmatter after '---', the file line to fix, words the message must hold)
CASES = [
    ("type: Note\ntags:\n\t- a\n", 4, "tab"),
    ("type: Note\nsources:\n  - id: a\n\t  title: b\n", 5, "tab"),
    ("type: Note\ntitle: x\ndescription The thing\nresource: y\n", 4, "no ':' after its key"),
    ('type: Note\ntitle: "Composition\ndescription: a\ntags: [a]\n', 3, "never closed"),
    ("type: Note\ntitle: 'it is\ndescription: a\n", 3, "never closed"),
    ('type: Note\ntitle: "Compo\ndescription: "a b"\nstatus: x\n', 3, "not closed on it"),
    ('type: Note\ntitle: "Composition" extra\n', 3, "text follows the closing quote"),
    ("type: Note\ntags: [a, b\nstatus: x\n", 3, "'[' on this line is never closed"),
    ("type: Note\nx: {a: 1\n", 3, "'{' on this line is never closed"),
    ("type: Note\n[resource: <url>]\nstatus: ok\n", 3, "starts with '['"),
    # validate QA: a nested value, or one before ' #', holding ': ' got PyYAML's words
    (
        "type: Note\nsources:\n  - title: Guide: part 1\n",
        4,
        'write the line as - title: "Guide: part 1" (indented as it is now)',
    ),
    ("type: Note\ntitle: Foo: bar # note\n", 3, "' #' starts a comment"),
    # CLI QA: a control character gave the parser's position and line break, no line
    ('type: Note\ntitle: "bad \x1b char"\n', 3, "the control character U+001B is not allowed"),
    ("type: Note\ntitle: {{title}}\n", 3, "template placeholder"),
    ('type: Note\ntitle: "{{title}}"\ntags:\n\t- a\n', 5, "tab"),  # a quoted one is fine
    ("type: Note\ntitle: @me\n", 3, "cannot start with '@'"),
    ("type: Note\ntitle: `x`\n", 3, "cannot start with '`'"),
    ("type: Note\ntitle: *x\n", 3, "undefined alias"),
    # A complex key is valid YAML, but no key okfx reads (spec-audit QA: "unhashable type:
    # 'list'"); so through PyYAML's constructor, after a merge key
    ("type: Note\n? [a, b]\n: c\n", 3, "is a list or mapping (a YAML complex key)"),
    ("type: Note\nx:\n  ? {a: 1}\n  : c\n", 4, "which okfx does not read"),
    ("type: Note\nm: {<<: {z: 1}, [a]: 2}\n", 3, "write it as one quoted string"),
]


def failure(yaml_text: str) -> str:
    with pytest.raises(FrontmatterError) as caught:
        load_yaml(yaml_text, Limits())
    assert caught.value.code == "malformed_yaml"
    return caught.value.message


@pytest.mark.parametrize(("text", "line", "words"), CASES)
def test_each_common_mistake_is_named_on_its_own_line(text: str, line: int, words: str) -> None:
    message = failure(text)
    found = LINE.search(message)
    assert found is not None and int(found.group(1)) == line, message
    assert words in message, message
    assert "frontmatter line" not in message  # one numbering: the file's


def test_unclosed_quotes_are_found_by_line() -> None:
    lines = ['title: "a', "b: 'it''s'", 'c: "d\\"e"', "- 'open", "plain: x"]
    assert unclosed_quote_line(lines) == 3
    assert unclosed_quote_line(lines[:3]) == 0
    assert unclosed_quote_line(lines[1:3]) is None


_PIECES = st.sampled_from(
    ["type: Note", "title: x", '"', "'", "\t", "  ", "- ", ": ", "[", "]", "{", "}", "{{a}}",
     "@", "`", "*x", "&x", "#", "key", "a: b: c", "|", ">", "!!str", "?", ",", "\\"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=5).map("".join), min_size=1, max_size=8))
def test_any_yaml_error_names_a_line_of_the_frontmatter_or_none(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    try:
        load_yaml(text, Limits())
    except FrontmatterError as exc:
        found = LINE.search(exc.message)
        if found is not None:  # file line 2 is the frontmatter's first
            assert 2 <= int(found.group(1)) <= len(lines) + 2, exc.message
        assert exc.message.startswith(("YAML error", "frontmatter")), exc.message
