"""Escapes: nothing outside the bundle root is ever listed, linked, read or returned.

Covers symlinked files and folders pointing outside, symlink loops, a root that is itself a
symlink, traversal in every path-like argument of every tool, escaping links and escaping
path-valued frontmatter fields, and files swapped for symlinks or FIFOs after loading.
(``tests/test_paths.py`` and ``tests/test_tools.py`` hold the property tests of the path
guard itself; this file drives whole bundles.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hostile import (
    MARKER,
    PATH_ARGUMENTS,
    STABLE_CODES,
    assert_bundle_clean,
    assert_clean,
    call,
    codes,
    concept,
    error_code,
    plant_outside,
    within,
    write,
)

from okfx import Bundle, Toolbox

PASSWD_LINE = "root:x:0:0"


def hostile_tree(base: Path) -> Path:
    """A bundle beside ``outside/`` with every kind of escaping symlink and link."""
    outside = plant_outside(base)
    root = write(
        base / "bundle",
        {
            "d/a.md": concept(
                title="inside",
                body=(
                    "[up](../../outside/secret.md) [abs](/../outside/secret.md)\n"
                    "[enc](%2e%2e/%2e%2e/outside/secret.md) [bs](..\\..\\outside\\secret.md)\n"
                    "[nul](a%00b.md) [ok](../b.md) [sym](../leak.md)\n"
                    "[lookalike](．．／．．／outside／secret.md) [ref][r]\n\n"
                    "[r]: ../../../outside/secret.md\n"
                ),
            ),
            "b.md": concept(title="b inside"),
            "res/q.sql": "select 1;\n",
        },
    )
    os.symlink(outside / "secret.md", root / "leak.md")
    os.symlink(outside / "secret.txt", root / "leak.txt")
    os.symlink(outside, root / "leakdir")
    os.symlink("../outside/secret.md", root / "rel.md")  # relative escape
    os.symlink("hop2.md", root / "hop1.md")  # inside -> inside -> outside
    os.symlink(outside / "secret.md", root / "hop2.md")
    os.symlink("/etc", root / "etc")
    os.symlink("/etc/passwd", root / "passwd.txt")
    os.symlink("selfloop.md", root / "selfloop.md")
    os.symlink("..", root / "d" / "loop")  # folder loop back to the root
    os.symlink("d", root / "aliasdir")  # allowed: stays inside
    os.symlink("b.md", root / "alias.md")  # allowed: stays inside
    return root


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return Bundle.load(hostile_tree(tmp_path_factory.mktemp("escapes")))


@pytest.fixture(scope="module")
def box(hostile: Bundle) -> Toolbox:
    return Toolbox(hostile)


@pytest.mark.parametrize(
    "path", ["/leak.md", "/leak.txt", "/leakdir", "/rel.md", "/hop2.md", "/etc", "/passwd.txt"]
)
def test_a_symlink_out_of_the_root_is_skipped_and_reported(hostile: Bundle, path: str) -> None:
    assert codes(hostile, path) == ["unsafe_path"]
    assert path not in hostile.files and path not in hostile.directories


def test_a_chain_of_inside_symlinks_that_ends_outside_is_refused(hostile: Bundle) -> None:
    assert codes(hostile, "/hop1.md") == ["unsafe_path"]
    assert hostile.get("hop1") is None


def test_a_self_referencing_symlink_is_reported_not_followed(hostile: Bundle) -> None:
    assert codes(hostile, "/selfloop.md") in (["unreadable"], ["symlink_loop"], ["unsafe_path"])
    assert "/selfloop.md" not in hostile.files


def test_a_folder_loop_ends_and_is_reported(hostile: Bundle) -> None:
    assert codes(hostile, "/d/loop") == ["symlink_loop"]
    assert not any(p.startswith("/d/loop/") for p in hostile.files)


def test_symlinks_that_stay_inside_still_work(hostile: Bundle) -> None:
    assert hostile.concept("alias").title == "b inside"
    assert hostile.concept("aliasdir/a").title == "inside"


def test_nothing_from_outside_is_loaded(hostile: Bundle) -> None:
    assert_bundle_clean(hostile)
    assert {c.path for c in hostile} == {"/alias.md", "/aliasdir/a.md", "/b.md", "/d/a.md"}


def test_every_escaping_body_link_is_refused_or_dangling(hostile: Bundle) -> None:
    links = hostile.concept("d/a").links
    assert all(not link.target.startswith("/..") and ".." not in link.target for link in links)
    assert [link.target for link in links if link.exists] == ["/b.md"]
    # /leak.md was skipped by the walk, so a link to it dangles instead of reaching outside.
    assert "/leak.md" in [link.target for link in links if not link.exists]
    unsafe = [
        w.message for w in hostile.warnings if w.path == "/d/a.md" and w.code == "unsafe_link"
    ]
    assert len(unsafe) == 6  # up, abs, enc, bs, nul, ref


def test_a_root_that_is_a_symlink_loads_and_still_refuses_escapes(tmp_path: Path) -> None:
    root = hostile_tree(tmp_path)
    os.symlink(root, tmp_path / "root-link")
    through_link = Bundle.load(tmp_path / "root-link")
    assert through_link.name == "root-link"
    assert [link.target for link in through_link.neighbors("d/a").outbound] == ["/b.md"]
    assert codes(through_link, "/leak.md") == ["unsafe_path"]
    assert_bundle_clean(through_link)
    box = Toolbox(through_link)
    assert error_code(box.read_resource(path="leak.txt")) == "not_found"
    assert "select 1" in call(box, "read_resource", path="res/q.sql")["text"]


HOSTILE_PATHS = [
    "..",
    "../outside/secret.md",
    "/../outside/secret.md",
    "d/../../outside/secret.md",
    "%2e%2e%2foutside%2fsecret.md",
    "..%2f..%2foutside/secret.md",
    "..\\outside\\secret.md",
    "\\..\\outside\\secret.md",
    "C:\\outside\\secret.md",
    "C:/outside/secret.md",
    "d/a\x00.md",
    "\x00",
    "a/" * 50_000,  # 100k characters
    "．．／outside／secret.md",  # fullwidth lookalikes
    "\u2024\u2024/outside/secret.md",  # one-dot leaders
    "leak.md",
    "leak.txt",
    "leakdir",
    "leakdir/secret.md",
    "hop1.md",
    "passwd.txt",
    "etc/passwd",
    "/etc/passwd",
    "../../../../etc/passwd",
    "file:///etc/passwd",
    "//outside/secret.md",
    "~/../outside/secret.md",
    "/proc/self/environ",
    "d/loop/leak.md",
]


@pytest.mark.parametrize("path", HOSTILE_PATHS, ids=lambda p: repr(p[:40]))
@pytest.mark.parametrize(
    ("tool", "arguments"),
    PATH_ARGUMENTS,
    ids=[f"{t}-{i}" for i, (t, _) in enumerate(PATH_ARGUMENTS)],
)
def test_traversal_in_any_path_argument_reads_nothing_outside(
    box: Toolbox, tool: str, arguments: Any, path: str
) -> None:
    result = call(box, tool, **arguments(path))
    text = assert_clean(result)
    assert PASSWD_LINE not in text
    code = error_code(result)
    assert code is None or code in STABLE_CODES, result


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../outside/secret.md", "unsafe_path"),
        ("/../outside/secret.md", "unsafe_path"),
        ("..\\outside\\secret.md", "unsafe_path"),
        ("C:\\outside\\secret.md", "unsafe_path"),
        ("C:/outside/secret.md", "unsafe_path"),
        ("d/a\x00.md", "unsafe_path"),
        ("a/" * 50_000, "too_large"),
        ("leak.txt", "not_found"),
        ("passwd.txt", "not_found"),
        ("%2e%2e%2foutside%2fsecret.md", "not_found"),
    ],
    ids=lambda v: repr(v[:30]),
)
def test_read_resource_refuses_escapes_with_a_stable_code(
    box: Toolbox, path: str, code: str
) -> None:
    assert error_code(box.read_resource(path=path)) == code


def frontmatter_escapes(base: Path) -> Bundle:
    plant_outside(base)
    computation = concept(
        "Attested Computation",
        runtime="python",
        resource="../../../../etc/passwd",
        computation="../../outside/secret.md",
        executor="{resource: ../../../outside/secret.txt}",
        attester='{resource: "/../../outside/secret.txt"}',
        sources="[{resource: /../x}, {resource: ../../outside/secret.md}]",
    )
    root = write(base / "bundle", {"fm.md": computation, "ok.md": concept()})
    return Bundle.load(root)


def test_escaping_frontmatter_paths_are_never_edges_and_never_read(tmp_path: Path) -> None:
    bundle = frontmatter_escapes(tmp_path)
    fm = bundle.concept("fm")
    assert fm.links == ()
    outside = ("unsafe_link", "source_outside_bundle")  # a source is kept, as a value
    messages = " ".join(w.message for w in bundle.warnings if w.code in outside)
    for field in (
        "resource",
        "sources[0].resource",
        "sources[1].resource",
        "computation",
        "executor.resource",
        "attester.resource",
    ):
        assert f"{field} '" in messages and "outside the bundle" in messages, field
    assert_bundle_clean(bundle)
    box = Toolbox(bundle)
    header = call(box, "read_concept", path="fm")
    # The value is shown as written (it is data), but nothing behind it is read.
    assert header["resource"] == "../../../../etc/passwd"
    assert PASSWD_LINE not in assert_clean(header)
    around = call(box, "get_neighbors", path="fm")
    assert around["outbound"] == [] and around["unresolved"] == []
    for value in ("../../../../etc/passwd", "/../x", "../../outside/secret.md"):
        assert error_code(box.read_resource(path=value)) == "unsafe_path"


# -- files swapped after loading (time of check vs time of use) -------------------------------
@pytest.fixture
def swappable(tmp_path: Path) -> tuple[Path, Toolbox]:
    plant_outside(tmp_path)
    root = write(tmp_path / "bundle", {"a.md": concept(), "res/q.sql": "select 1;\n"})
    return root, Toolbox(Bundle.load(root))


def test_a_resource_replaced_by_an_outside_symlink_is_refused(
    swappable: tuple[Path, Toolbox],
) -> None:
    root, box = swappable
    (root / "res" / "q.sql").unlink()
    os.symlink(root.parent / "outside" / "secret.txt", root / "res" / "q.sql")
    result = call(box, "read_resource", path="res/q.sql")
    # no file of the bundle now (session 63's edit QA: it was "unreadable" before the
    # reload and not_found after); the outside file is never read
    assert error_code(result) == "not_found"
    assert "no longer a file, since the bundle was loaded" in result["error"]["message"]
    assert MARKER not in str(result)


def test_a_resource_folder_replaced_by_an_outside_symlink_is_refused(
    swappable: tuple[Path, Toolbox],
) -> None:
    root, box = swappable
    (root / "res" / "q.sql").unlink()
    (root / "res").rmdir()
    os.symlink(root.parent / "outside", root / "res")
    (root.parent / "outside" / "q.sql").write_text(MARKER, encoding="utf-8")
    result = call(box, "read_resource", path="res/q.sql")
    assert error_code(result) == "unreadable"  # the open, one folder at a time, fails


def test_a_resource_replaced_by_a_fifo_is_not_opened(swappable: tuple[Path, Toolbox]) -> None:
    root, box = swappable
    fifo = root / "res" / "q.sql"
    fifo.unlink()
    os.mkfifo(fifo)
    result = within(20, lambda: box.read_resource(path="res/q.sql"), unblock=[fifo])
    assert error_code(result) == "not_found"  # no file of the bundle now, never opened
