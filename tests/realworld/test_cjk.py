"""CJK text is searchable by word (issue 17, item 4): Han, kana and hangul runs are
indexed as character bigrams plus single characters, documents and queries alike.

The titles are real ones from public OKF bundles (jacksonw111/okf-vault,
qianhuan-lxs/okf-interview, j-legal-okf/J-LEGAL-OKF); the Korean ones are ordinary
Korean technical phrases.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import MakeBundle
from okfx import Bundle
from okfx.search.analyzer import analyze_query, tokenize

TITLES = {
    "nas.md": "NasberryPi（树莓派轻量 NAS CLI）",
    "search.md": "DeepSeek MCP WebSearch（基于 DeepSeek API 的 MCP 搜索）",
    "genai.md": "Open GENAI（日本数字厅 GENAI 的本地化开源版）",
    "tcp.md": "TCP 三次握手 / 四次挥手 / TIME_WAIT",
    "vue.md": "Vue 拦截器 (响应式原理)",
    "law.md": "日本の国法令の知識ツール",
    "tower.md": "東京タワーの歴史とアクセス",
    "quality.md": "데이터 품질 점검 절차",
    "index-ko.md": "검색 색인 구축",
}


@pytest.fixture
def bundle(make_bundle: MakeBundle) -> Bundle:
    files: dict[str, str | bytes] = {
        name: f'---\ntype: Note\ntitle: "{title}"\n---\nBody.\n' for name, title in TITLES.items()
    }
    return Bundle.load(make_bundle(files))


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("树莓派", "/nas.md"),  # a word inside a Chinese title
        ("握手", "/tcp.md"),
        ("拦截器", "/vue.md"),
        ("本地化", "/genai.md"),
        ("搜索", "/search.md"),
        ("派", "/nas.md"),  # one character
        ("国法令", "/law.md"),  # Japanese kanji inside kana
        ("タワー", "/tower.md"),  # katakana
        ("歴史", "/tower.md"),
        ("품질", "/quality.md"),  # hangul
        ("색인", "/index-ko.md"),
        ("deepseek 搜索", "/search.md"),  # mixed scripts
    ],
)
def test_a_word_inside_a_cjk_title_finds_it(bundle: Bundle, query: str, first: str) -> None:
    hits = bundle.search(query).hits
    assert hits, query
    assert hits[0].path == first


def test_a_cjk_word_not_in_any_title_finds_nothing(bundle: Bundle) -> None:
    assert not bundle.search("数据库").hits


def test_documents_and_queries_meet_on_the_same_bigrams() -> None:
    assert tokenize("树莓派") == ["树莓", "莓派", "树", "莓", "派"]
    assert [t.text for t in analyze_query("树莓派")] == ["树莓", "莓派"]
    assert [t.text for t in analyze_query("派")] == ["派"]
    assert tokenize("web搜索api") == ["web", "搜索", "搜", "索", "api"]
    assert tokenize("plain ascii_words") == ["plain", "ascii", "words", "asciiwords"]


_cjk = st.text(
    alphabet=st.sampled_from("树莓派东京タワー의데이터品質ひらがな"), min_size=2, max_size=12
)


@given(_cjk, st.integers(0, 10), st.integers(2, 4))
def test_every_substring_of_a_cjk_run_is_found_by_its_own_terms(
    text: str, start: int, size: int
) -> None:
    word = text[start : start + size]
    if len(word) < 1:
        return
    indexed = set(tokenize(text))
    assert all(term.text in indexed for term in analyze_query(word))
