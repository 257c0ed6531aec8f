"""Questions in Chinese or Japanese. A hit's confidence (okfx.search.scoring._held): a run of
CJK text counts as the share of its content bigrams the concept holds, not as one word
that any of its bigrams holds (Chinese MCP QA: every question read 1.0)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import MakeBundle, concept
from okfx import Bundle, Toolbox
from okfx.search.cjk import content_bigrams, letter_bigrams
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


STOCKS: dict[str, str | bytes] = {
    "a-shares.md": "---\ntype: Tool\ntitle: a-stock-data\n---\n获取 A 股行情与财务数据的工具。\n",
    "us-stocks.md": "---\ntype: Tool\ntitle: finnhub\n---\n美股行情数据的工具，一个股票接口。\n",
    "bili.md": "---\ntype: Tool\ntitle: bili-music\n---\n把 B 站音乐下载到本地。\n",
    "english.md": "---\ntype: Note\ntitle: A note\n---\nA word and a letter b in English.\n",
}


def test_a_letter_written_against_cjk_text_is_part_of_its_word(make_bundle: MakeBundle) -> None:
    """Agent QA (a Chinese vault): the "A" of "A股" (A shares) was dropped as the stopword
    "a", and Chinese stock questions found the US-stocks page first at confidence 1.0."""
    box = Toolbox(Bundle.load(make_bundle(STOCKS)))
    for query in ("A股", "a股", "有没有获取A股数据的工具", "A 股"):
        hits = box.search_concepts(query=query, limit=3)["hits"]
        assert hits[0]["path"] == "/a-shares.md", query
        assert "a股" in hits[0]["matched"], query
        others = {hit["path"]: hit["confidence"] for hit in hits[1:]}
        assert others.get("/us-stocks.md", 0.0) < hits[0]["confidence"], query
    # the page writes "B 站" with a space, as writers who space Latin from CJK do
    (bili, *_) = box.search_concepts(query="B站", limit=3)["hits"]
    assert bili["path"] == "/bili.md" and bili["confidence"] == 1.0


@pytest.mark.parametrize(
    ("text", "bigrams"),
    [
        ("A股全栈数据", ["a股"]),
        ("获取A股", ["a股"]),  # a letter between two: the word it starts
        ("学习C语言", ["c语"]),
        ("维生素C", ["素c"]),
        ("维生素 C", ["素c"]),
        ("把 B 站音乐", ["b站"]),
        ("AB股", []),  # two letters are a word of their own
        ("abc中文", []),
        ("a b c", []),
    ],
)
def test_letter_bigrams(text: str, bigrams: list[str]) -> None:
    assert letter_bigrams(text) == bigrams


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)))
def test_ascii_text_has_no_letter_bigrams(text: str) -> None:
    assert letter_bigrams(text) == []


def test_korean_counts_its_words_not_its_syllables() -> None:
    """Agent QA (a Korean wiki): a head with an English title and a short Korean line was
    read as Korean, each Hangul syllable counted as a word, so 89 pages with English
    titles were never the embedding's candidates. Chinese still counts characters."""
    from okfx.search.cjk import mostly_cjk

    assert not mostly_cjk("Duplicate Detection Guide for API entries 중복탐지가이드 확인")
    assert mostly_cjk(
        "Duplicate Detection Guide 중복 탐지 가이드는 새 항목을 등록하기 전에 확인합니다"
    )
    assert mostly_cjk("缓存雪崩 Redis cache")  # four characters, about four words
    assert not mostly_cjk("A Redis cache guide, 缓存")


def test_a_pages_question_words_alone_do_not_rank_it_above_pages_with_the_subject(
    make_bundle: MakeBundle,
) -> None:
    """CLI QA (okf-vault): for "侧边栏怎么做" (how to build a sidebar) a page matching only
    怎么 and 么做, in a heading "怎么写一个 skill", came second at confidence 0.00, above a
    page holding 侧边栏. The bigrams holding a question word weigh as light verbs."""
    files = {
        "sidebar.md": concept("Playbook", "应用外壳侧边栏的实现。\n", title="应用外壳侧边栏"),
        "theme.md": concept("Playbook", "主题 token 里有侧边栏的颜色。\n", title="双轴主题系统"),
        "skills.md": concept(
            "Term", "## 怎么写一个 skill\n\n怎么做都可以，怎么做都行。\n", title="Agent Skills"
        ),
    }
    hits = Bundle.load(make_bundle(files)).search("侧边栏怎么做")
    assert [h.path for h in hits][:2] == ["/sidebar.md", "/theme.md"]
    from okfx.search.analyzer import LIGHT_VERB_WEIGHT, analyze_query

    weights = {t.text: dict(t.forms)[t.text] for t in analyze_query("侧边栏怎么做")}
    assert weights["侧边"] == 1.0 and weights["怎么"] == LIGHT_VERB_WEIGHT
    # all glue: a question of question words alone keeps them whole
    assert {t.text: dict(t.forms)[t.text] for t in analyze_query("怎么做")}["怎么"] == 1.0


def test_korean_and_japanese_missing_words_are_words_not_grammar(make_bundle: MakeBundle) -> None:
    """Agent QA: 토픽으 (토픽으로 cut in the wrong place), 어디서 ("where"), きます and
    含まれます (endings) were named as words to check the spelling of."""
    files = {
        "ko.md": concept(
            title="이벤트 처리",
            body="실패한 이벤트는 재시도 큐로 보냅니다. 변경 이력은 로그에서 확인합니다.",
        ),
        "ja.md": concept(
            title="変更の確認", body="判例や条例の確認は対象に入ります。履歴はここで確認できます。"
        ),
    }
    box = Toolbox(Bundle.load(make_bundle(files)))
    assert box.search_concepts("실패한 이벤트는 토픽으로 가나요")["missing_words"] == ["토픽"]
    assert box.search_concepts("변경 이력은 어디서 확인하나요")["missing_words"] == []
    assert box.search_concepts("確認できますか")["missing_words"] == []
    assert box.search_concepts("条例は対象に含まれますか")["missing_words"] == []
    assert box.search_concepts("条例とは何ですか")["missing_words"] == []
    # a word no page holds is still named, as Chinese ones are
    assert box.search_concepts("카프카 이벤트")["missing_words"] == ["카프카"]
