"""Terminal text: display columns of wide (CJK) text and cuts that fit them."""

from __future__ import annotations

from okfx.cli.terminal import columns, cut_columns, visible


def test_columns_count_cjk_as_two_and_combining_marks_as_none() -> None:
    assert columns("Concept") == 7
    assert columns("概念") == 4
    assert columns("ｆｕｌｌ") == 8  # fullwidth Latin
    assert columns("cafe\u0301") == 4  # e + combining acute
    assert columns("a\u200db") == 2  # zero-width joiner


def test_decomposed_hangul_takes_the_columns_of_its_composed_form() -> None:
    """CLI QA: NFD Hangul (macOS file names) counted each vowel and final as a column."""
    import unicodedata

    for text in ("/가이드.md", "권한 관리 가이드", "각"):
        decomposed = unicodedata.normalize("NFD", text)
        assert decomposed != text and columns(decomposed) == columns(text)


def test_cut_columns_fits_wide_text_in_the_width_with_an_ellipsis() -> None:
    assert cut_columns("概念", 4) == "概念"
    cut = cut_columns("工具过滤器在调用时强制执行", 9)
    assert cut == "工具过滤…"
    assert columns(cut) <= 9
    assert cut_columns("abcdef", 4) == "abc…"


def test_bidirectional_controls_are_shown_by_their_code_point() -> None:
    """Security QA: U+202E in a path or title was printed raw, so it read reordered on a
    terminal ("Trojan Source")."""
    assert visible("evil\u202egnp.exe") == "evil<U+202E>gnp.exe"
    assert visible("a\u2066b\u2069c") == "a<U+2066>b<U+2069>c"
    assert visible("שלום abc") == "שלום abc"  # right-to-left text itself is no control
