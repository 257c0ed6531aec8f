"""A fetched bundle's folders named as the source that loads them (okfx.bundle.sourceform)."""

from __future__ import annotations

from okfx.bundle.sourceform import in_source_terms, source_form


def test_the_source_form_of_a_folder_of_a_git_bundle_or_an_archive() -> None:
    assert source_form("file:///r/kb.git", "catalog") == "file:///r/kb.git#:catalog"
    assert source_form("file:///r/kb.git#v1", "catalog") == "file:///r/kb.git#v1:catalog"
    assert source_form("file:///r/kb.git#v1:okf", "sales") == "file:///r/kb.git#v1:okf/sales"
    assert source_form("file:///r/kb.git#v1", "") == "file:///r/kb.git#v1"
    assert source_form("/a/kb.zip", "catalog") == "/a/kb.zip#catalog"
    assert source_form("/a/kb.zip#okf", "") == "/a/kb.zip#okf"
    assert source_form("/a/folder", "x") is None


def test_paths_under_the_cache_root_are_rewritten_and_others_kept() -> None:
    root = "/c/sources/git/abc/tree"
    text = (
        f"Load it on its own (okfx validate {root}/catalog; Bundle.load('{root}/catalog')), "
        f"or serve both: okfx serve outer={root} inner={root}/catalog; {root}x is another"
    )
    said = in_source_terms(text, root, "file:///r/kb.git")
    assert said == (
        "Load it on its own (okfx validate file:///r/kb.git#:catalog; "
        "Bundle.load('file:///r/kb.git#:catalog')), or serve both: okfx serve "
        f"outer=file:///r/kb.git inner=file:///r/kb.git#:catalog; {root}x is another"
    )
    assert in_source_terms(text, root, "/a/folder") == text
