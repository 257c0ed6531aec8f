"""Questions in Chinese or Japanese. A hit's confidence (okfx.search.scoring._held): a run of
CJK text counts as the share of its content bigrams the concept holds, not as one word
that any of its bigrams holds (Chinese MCP QA: every question read 1.0)."""

from __future__ import annotations

import pytest

from conftest import MakeBundle, concept
from okfx import Bundle, Toolbox
from okfx.search.cjk import content_bigrams
from okfx.search.scoring import _held

FILES: dict[str, str | bytes] = {
    "cache.md": concept(
        "Note", "缓存雪崩是大量缓存同时失效；缓存击穿是热点数据失效。两者的区别在于范围。\n"
    ),
    "tools.md": concept("Note", "个人项目的所得记录工具，也能做面包店的账本。\n"),
}


def test_content_bigrams_leave_out_those_holding_a_function_character() -> None:
    terms = ["缓存", "存雪", "雪崩", "崩和", "和缓", "缓存", "有什", "什么", "么区", "区别"]
    assert content_bigrams(terms) == ["缓存", "存雪", "雪崩", "区别"]
    assert content_bigrams(["什么", "怎么"]) == ["什么", "怎么"]  # all of them: kept
    assert content_bigrams(["s", "4", "u", "s4u"]) == []


def test_a_cjk_run_is_held_in_share_of_its_bigrams() -> None:
    run = ["个人", "人所", "所得", "得税", "税年", "年度"]
    assert _held(run, {"个人", "所得"}) == pytest.approx(2 / 6)
    assert _held(["i", "os", "ios", "审核", "核被"], {"ios", "审核"}) == pytest.approx(2 / 2)
    assert _held(["s", "4", "u", "s4u"], {"s", "u"}) == 0.0  # Latin parts: as before
    assert _held(["s", "4", "u", "s4u"], {"s4u"}) == 1.0


def test_a_chinese_question_the_bundle_does_not_answer_reads_under_a_half(
    make_bundle: MakeBundle,
) -> None:
    bundle = Bundle.load(make_bundle(FILES))
    (top, *_) = bundle.search("个人所得税年度汇算怎么申请退税")
    assert top.path == "/tools.md" and top.confidence < 0.5
    (answer, *_) = bundle.search("缓存雪崩和缓存击穿有什么区别")
    assert answer.path == "/cache.md" and answer.confidence >= 0.5


def test_a_chinese_question_names_the_words_no_concept_holds(make_bundle: MakeBundle) -> None:
    """Agent QA (a Chinese vault): "红烧肉怎么做" got no missing words and no notice,
    怎么 being held, where an English question names the word no concept holds."""
    box = Toolbox(Bundle.load(make_bundle(FILES)))
    assert box.search_concepts("红烧肉怎么做")["missing_words"] == ["红烧肉"]
    found = box.search_concepts("缓存和红烧肉的区别")
    assert found["hits"] and found["missing_words"] == ["红烧肉"]
    assert "No concept contains the word(s) '红烧肉'" in found["notice"]
    # the bigram across two held words (存有) is no missing word
    assert box.search_concepts("缓存有区别")["missing_words"] == []
    assert box.search_concepts("缓存雪崩的区别")["missing_words"] == []


def test_matched_lists_no_bigram_that_glues_two_words(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle(FILES))
    (answer, *_) = bundle.search("缓存雪崩和缓存击穿有什么区别")
    assert "什么" not in answer.matched and "区别" in answer.matched
    (only, *_) = bundle.search("的区")  # nothing else matched: still listed
    assert only.matched == ("的区",)


def test_a_title_given_as_a_path_is_suggested_when_the_title_holds_it(
    make_bundle: MakeBundle,
) -> None:
    files = {"redis/avalanche.md": concept("Note", "x\n", title="'缓存雪崩 / 穿透 / 击穿'")}
    bundle = Bundle.load(make_bundle(files))
    assert bundle.suggest("缓存雪崩") == ["/redis/avalanche.md"]
    assert bundle.suggest("雪") == []  # one character says too little
