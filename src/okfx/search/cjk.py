"""Chinese, Japanese and Korean text for search: runs of CJK characters as bigrams.

CJK scripts are written without spaces between words, so splitting on whitespace and
punctuation turns a Chinese title into one token that no word inside it can match. Mature
engines (Lucene's CJKBigramFilter, Elasticsearch's ``cjk_bigram``) index every run of Han,
Hiragana, Katakana and Hangul characters as its overlapping character bigrams, plus each
character alone so that a one-character query still finds it. A query run of two or more
characters asks for its bigrams; a one-character query run asks for the character.

The analyzer (:mod:`okfx.search.analyzer`) hands each piece of text that holds a CJK
character to :func:`cjk_pieces`, which separates the CJK runs from the rest.
"""

from __future__ import annotations

import re

__all__ = [
    "FUNCTION_CHARS",
    "KOREAN_ENDINGS",
    "QUESTION_WORDS",
    "cjk_pieces",
    "letter_bigrams",
    "cjk_terms",
    "content_bigrams",
    "glue_bigram",
    "has_cjk",
    "language_of",
    "mostly_cjk",
]

# Han (CJK unified ideographs, extension A, compatibility, extensions B and later),
# Hiragana, Katakana (with the phonetic extensions and the prolonged sound mark), Hangul
# syllables and jamo. Text reaches here NFKC-normalised, so half-width forms are gone.
_CJK_CLASS = (
    "\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
)
_CJK = re.compile(f"[{_CJK_CLASS}]")
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK character (ASCII text never does)."""
    return not text.isascii() and _CJK.search(text) is not None


_LATIN_WORD = re.compile(r"[^\W\d_]+", re.ASCII)


_HANGUL_WORD = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]+")


def mostly_cjk(text: str) -> bool:
    """Whether ``text`` is written in Chinese, Japanese or Korean, with some Latin names
    in it: it holds at least as many CJK words as Latin ones, a Han or kana character
    counting as about a word and a run of Hangul as one (Korean spaces its words: agent
    QA counted each syllable, and 89 pages of a Korean wiki with English titles were
    read as Korean). An ASCII text costs one check: a vector build asks it of every
    concept's head."""
    if text.isascii():
        return False
    hangul = _HANGUL_WORD.findall(text)
    cjk = len(_CJK.findall(text)) - sum(map(len, hangul)) + len(hangul)
    return cjk > 0 and cjk >= len(_LATIN_WORD.findall(text))


_KANA = re.compile("[\u3040-\u30ff]")
_HANGUL = re.compile("[\uac00-\ud7af]")


def language_of(text: str) -> str | None:
    """``zh``, ``ja`` or ``ko`` for text written mostly in CJK (:func:`mostly_cjk`; kana
    says Japanese, hangul Korean), else None: the ``lang`` a page's text is read with."""
    if not mostly_cjk(text) and not (_HANGUL.search(text) and not _LATIN_WORD.search(text)):
        return None
    if _KANA.search(text):
        return "ja"
    return "ko" if _HANGUL.search(text) else "zh"


def cjk_pieces(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into ``(is_cjk, piece)`` parts, in order, none empty."""
    pieces: list[tuple[bool, str]] = []
    at = 0
    for run in _CJK_RUN.finditer(text):
        if run.start() > at:
            pieces.append((False, text[at : run.start()]))
        pieces.append((True, run.group()))
        at = run.end()
    if at < len(text):
        pieces.append((False, text[at:]))
    return pieces


#: One Latin letter before a CJK character ("A股" A shares, "B站", "C语言"), or after one
#: and before none ("维生素C"), with at most one space between (writers who space Latin
#: from CJK write "B 站"): a letter between two belongs to the word it starts.
_LETTER_BEFORE_CJK = re.compile(f"(?<![A-Za-z])([A-Za-z]) ?(?=([{_CJK_CLASS}]))")
_LETTER_AFTER_CJK = re.compile(f"([{_CJK_CLASS}]) ?([A-Za-z])(?![A-Za-z]| ?[{_CJK_CLASS}])")


def letter_bigrams(text: str) -> list[str]:
    """The bigrams of each lone Latin letter and the CJK character it is written against
    (``a股`` of "获取A股数据" and of "A 股"), lower-cased: such a letter is part of a
    word, and alone it is a word of every English page, or a stopword (agent QA: the "A"
    of "A股" was dropped as "a", and questions on Chinese stocks found a US-stocks page
    first). Empty for text without CJK."""
    if not has_cjk(text):
        return []
    before = [(m[1] + m[2]).lower() for m in _LETTER_BEFORE_CJK.finditer(text)]
    return [*before, *((m[1] + m[2]).lower() for m in _LETTER_AFTER_CJK.finditer(text))]


def cjk_terms(run: str, *, query: bool = False) -> list[str]:
    """The terms of one CJK run: its overlapping bigrams, then (for a document) each
    character; a query run of one character is that character."""
    if len(run) == 1:
        return [run]
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    return bigrams if query else bigrams + list(run)


#: Characters that mostly glue words together rather than name a thing: Chinese
#: particles, question words and prepositions (的, 和, 什么, 怎么, 如何, 为, 把, 被, ...),
#: and Japanese particles (の, は, を, ...). A query's bigram holding one mostly spans two
#: words ("缓存雪崩和缓存击穿有什么区别": 崩和, 和缓, 有什, 什么, 么区) and says nothing of a
#: page (:func:`content_bigrams`).
FUNCTION_CHARS = frozenset(
    "的了和与及或是在吗呢吧啊么啥怎什如何为哪有把被从到对给让将就都也还又のはをにがでともへやかな"
)


#: Korean question words and question endings, which a missing-word report does not name
#: (agent QA: 어디서, "where", was told to be checked for its spelling).
QUESTION_WORDS = frozenset(
    "어디 어디서 어디에 어디로 언제 무엇 무엇이 무엇을 뭐 뭔가 무슨 어떻게 어떤 왜 누가 "
    "누구 얼마 얼마나 어느 몇 하나요 나요 있나요 되나요 인가요 한가요 할까요 합니까 입니까 "
    "습니까".split()
)


#: Korean particles and question endings a word is written with (토픽으로, 이력은, 가나요),
#: longest first: a missing-word report names the word without them.
KOREAN_ENDINGS = tuple(
    sorted(
        "으로 에서 에게 까지 부터 하나요 인가요 있나요 되나요 합니까 입니까 습니까 나요 가요 "
        "까요 니까 는 은 이 가 을 를 에 의 도 로 와 과 만 요".split(),
        key=len,
        reverse=True,
    )
)


def glue_bigram(term: str) -> bool:
    """Is ``term`` a CJK bigram holding one of the :data:`FUNCTION_CHARS`?"""
    return len(term) == 2 and has_cjk(term) and not FUNCTION_CHARS.isdisjoint(term)


def content_bigrams(terms: list[str]) -> list[str]:
    """The CJK bigrams of ``terms`` (once each, in order) that are no
    :func:`glue_bigram`; all of them when every one is."""
    bigrams = [t for t in dict.fromkeys(terms) if len(t) == 2 and has_cjk(t)]
    content = [t for t in bigrams if not glue_bigram(t)]
    return content or bigrams
