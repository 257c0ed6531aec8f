"""Property tests: no generated input makes okfx raise, read outside the root, or pass a bound.

Strategies build paths (traversal pieces, encodings, lookalikes), YAML-ish frontmatter
between ``---`` fences, markdown bodies full of link syntax, and arbitrary JSON-like tool
arguments. Every bundle sits next to an ``outside/`` folder reachable through symlinks
planted inside it; :data:`hostile.MARKER` must never appear in what okfx returns.
``tests/test_paths.py``, ``tests/test_links.py`` and ``tests/test_tools.py`` hold the
narrower properties of the path guard, the scanner and three path tools.
"""

from __future__ import annotations

import inspect
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hostile import (
    MARKER,
    PATH_ARGUMENTS,
    STABLE_CODES,
    as_json,
    assert_bundle_clean,
    call,
    concept,
    error_code,
    plant_outside,
    write,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from okfx import TOOL_NAMES, Bundle, Toolbox
from okfx.bundle.frontmatter import FrontmatterError, parse
from okfx.limits import Limits
from okfx.tools.payloads import jsonable

PIECES = [
    "..", ".", "", "leak.md", "leak.txt", "leakdir", "secret.md", "outside", "d", "a.md",
    "a", "%2e%2e", "%2f", "%00", "\\..", "C:", "\x00", "\uff0e\uff0e", "\u2024\u2024",
    "etc", "passwd", "index.md", "~", "//", "#x", "?q", " ", "\n", "\u202e",
]  # fmt: skip
PATHS = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(PIECES), max_size=10).map("/".join),
    st.lists(st.sampled_from(PIECES), max_size=6).map("\\".join),
)


@contextmanager
def hostile_bundle(files: dict[str, str | bytes]) -> Iterator[Path]:
    """A bundle folder with ``files`` plus symlinks to an ``outside/`` marker folder."""
    with tempfile.TemporaryDirectory() as base:
        outside = plant_outside(Path(base))
        root = write(Path(base) / "bundle", files)
        os.symlink(outside / "secret.md", root / "leak.md")
        os.symlink(outside / "secret.txt", root / "leak.txt")
        os.symlink(outside, root / "leakdir")
        yield root


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toolbox]:
    files: dict[str, str | bytes] = {
        "d/a.md": concept(title="inside", body="[x](../leak.md) inside\n# Head\n"),
        "b.md": concept(body="[a](d/a.md)"),
        "r.sql": "select 1;",
    }
    with hostile_bundle(files) as root:
        yield Toolbox(Bundle.load(root))


def check(result: dict[str, Any]) -> None:
    code = error_code(result)
    assert code is None or code in STABLE_CODES, result


@settings(max_examples=150, deadline=None)
@given(path=PATHS, which=st.integers(0, len(PATH_ARGUMENTS) - 1))
def test_no_path_in_any_tool_argument_raises_or_leaks(box: Toolbox, path: str, which: int) -> None:
    tool, arguments = PATH_ARGUMENTS[which]
    check(call(box, tool, **arguments(path)))  # call() checks JSON and the marker


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(PIECES),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


def tool_arguments() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    def for_tool(tool: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
        names = list(inspect.signature(getattr(Toolbox, tool)).parameters)[1:] + ["extra"]
        kwargs = st.dictionaries(st.sampled_from(names), JSONISH, max_size=len(names))
        return st.tuples(st.just(tool), kwargs)

    return st.one_of([for_tool(tool) for tool in TOOL_NAMES])


@settings(max_examples=200, deadline=None)
@given(case=tool_arguments())
def test_no_argument_values_make_a_tool_raise(
    box: Toolbox, case: tuple[str, dict[str, Any]]
) -> None:
    tool, kwargs = case
    check(call(box, tool, **kwargs))


YAMLISH = st.lists(
    st.one_of(
        st.text(alphabet="-:[]{}&*!|>'\"#?,% \n\tab01.@`~<=", max_size=12),
        st.sampled_from(
            [
                "type: A\n", "type: ", "title: ", "tags: ", "sources:\n  - resource: ",
                "resource: ", "computation: ", "runtime: x\n", "stale_after: ",
                "verified:\n  - by: human:a\n    at: ", "2026-02-30T00:00:00Z", "&a ", "*a",
                "<<: *a\n", "!!python/object/apply:os.system ['touch x']", "!!binary ",
                "!!set ", ".nan", ".inf", "0x1f", "1:20", "~", "null", "? ", "- ", "\n  ",
                # every core tag, on values of every kind (security QA: "!!bool maybe",
                # "!!seq {a: 1}" and an empty "!!int" raised past the parser)
                "!!bool ", "!!int ", "!!float ", "!!str ", "!!seq ", "!!map ", "!!null ",
                "!!timestamp ", "!!omap ", "!!pairs ", "!!merge ", "maybe", "{a: 1}", "[1]",
                "../../outside/secret.md", "/../x", "leak.md", "\ufeff", "\x00", "\r\n",
            ]
        ),
    ),
    max_size=20,
).map("".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(text=YAMLISH)
def test_frontmatter_parse_raises_only_frontmatter_error(text: str) -> None:
    try:
        parsed = parse("---\n" + text + "\n---\nbody\n", Limits())
    except FrontmatterError as exc:
        assert exc.code in {
            "malformed_yaml",
            "frontmatter_not_mapping",
            "unterminated_frontmatter",
            "no_frontmatter",
        }
        return
    assert isinstance(parsed.data, dict)
    as_json(jsonable(parsed.data))


@settings(max_examples=120, deadline=None)
@given(text=YAMLISH, body=st.text(max_size=80))
def test_no_frontmatter_makes_load_raise_and_every_skip_is_reported(text: str, body: str) -> None:
    files: dict[str, str | bytes] = {"x.md": "---\n" + text + "\n---\n" + body, "ok.md": concept()}
    with hostile_bundle(files) as root:
        bundle = Bundle.load(root)
        assert_bundle_clean(bundle)
        loaded = {c.path for c in bundle}
        assert "/ok.md" in loaded
        assert "/x.md" in loaded or any(w.path == "/x.md" for w in bundle.warnings)
        box = Toolbox(bundle)
        for c in bundle:
            check(call(box, "read_concept", path=c.path))
            check(call(box, "get_neighbors", path=c.path))
        check(call(box, "list_bundles"))


BODY = st.lists(
    st.one_of(
        st.text(alphabet="[]()<>!`~#^:*-\\ \n\t\"'a/.%", max_size=10),
        st.sampled_from(
            [
                "[a](", "](", "[r]: ", "[r]", "[^1]", "![i](", "<!--", "-->", "```\n", "~~~\n",
                "\n    ", "    ", "../", "../../outside/secret.md", "/../x.md", "leak.md",
                "leakdir/secret.md", "%2e%2e/", "%00", "\\", "b.md", "d/", "<https://x>",
                "file:///etc/passwd", "//evil/x", "#frag", "?q=1", " \"t\")", "\n\n", "\r",
            ]
        ),
    ),
    max_size=40,
).map("".join)  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(body=BODY)
def test_no_body_makes_load_raise_leak_or_pass_the_link_bound(body: str) -> None:
    limits = Limits(max_links_per_concept=4)
    files: dict[str, str | bytes] = {"d/a.md": concept(body=body), "b.md": concept()}
    with hostile_bundle(files) as root:
        bundle = Bundle.load(root, limits=limits)
        assert_bundle_clean(bundle)
        for c in bundle:
            assert len(c.links) <= limits.max_links_per_concept
            for link in c.links:
                target = link.target
                assert target.startswith("/") and "//" not in target
                assert "/../" not in target + "/" and "/./" not in target + "/"
                assert "\x00" not in target and "\\" not in target
                # a link to a folder without an index.md resolves to the folder itself
                assert link.exists == (target in bundle.files or target in bundle.directories)
        box = Toolbox(bundle)
        for path in ("d/a", "b"):
            check(call(box, "read_concept", path=path))
            around = call(box, "get_neighbors", path=path)
            check(around)
            assert MARKER not in as_json(around)
