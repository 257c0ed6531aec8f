"""Text analysis for search: one analyzer shared by documents and queries.

Text is NFKC-normalised and casefolded. Whitespace and ASCII punctuation split the text
into chunks; a chunk that is an identifier (``user_pseudo_id``, ``userPseudoId``,
``a.b.c``, ``n-day``, ``BIP-0030``, ``ga4``) yields its parts *and* its joined form
(``user``, ``pseudo``, ``id``, ``userpseudoid``), so every spelling of an identifier
meets every other one. Queries add English singular/plural variants (s, es, ies) that
count at :data:`VARIANT_WEIGHT`; there is no general stemmer.

Speed: documents are split with ``str.translate`` + ``str.split`` (C loops) and each
distinct chunk is analysed once per build through a cache (:class:`ChunkCache`), because
a corpus has far fewer distinct chunks than tokens (performance.md §2).
"""

from __future__ import annotations

import itertools
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from okfx.search.cjk import cjk_pieces, cjk_terms, glue_bigram, has_cjk, letter_bigrams
from okfx.search.wordforms import (
    abbreviations,
    joined_pair_parts,
    joined_pairs,
    spelling_variants,
    synonyms,
    word_forms,
)

__all__ = [
    "FORM_WEIGHT",
    "FRAME_VERBS",
    "LAST_WORD_IDIOMS",
    "LIGHT_VERB_WEIGHT",
    "MAX_QUERY_TERMS",
    "PAIR_IDIOMS",
    "PARTICLE_IDIOMS",
    "QUESTION_VERBS",
    "STOPWORDS",
    "VARIANT_WEIGHT",
    "ChunkCache",
    "QueryTerm",
    "analyze_chunk",
    "analyze_query",
    "count_terms",
    "folded_chunks",
    "is_contraction",
    "joined_term",
    "light_words",
    "only_stopwords",
    "plural_variants",
    "split_chunks",
    "tokenize",
]

#: Score multiplier for a singular/plural form the user did not type.
VARIANT_WEIGHT = 0.95
#: Score multiplier for another inflection (:func:`okfx.search.wordforms.word_forms`).
FORM_WEIGHT = 0.7
#: Score multiplier for two adjacent query words written as one (``_join_compounds``).
COMPOUND_WEIGHT = 0.95
#: A query keeps at most this many distinct terms, so a pasted page stays a fast query.
MAX_QUERY_TERMS = 64

# Function words dropped from *queries* only (documents keep every token). Natural
# questions ("how do I ...") otherwise score rare filler words in small bundles.
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it me my of on or "
    "show that the there this to was what when where which who why with you".split()
    # Filler of natural questions, added for issue 20 ("which table has ...").
    + "about any been but could had has have if into its our should than them then "
    "these they those we were will would your".split()
    # Adverbs of frequency (issue 20's fourth round): "how often each tag was used" asks
    # for a count, and "often" is a word many bodies hold.
    + "generally normally often sometimes typically usually".split()
    + ["so"]
    # Quantifiers and prepositions of questions (session 52's helper QA): "how many
    # adults take insulin" named "many" a missing word, with a spelling notice, and
    # "smoking rate among adults" read "among" as a word the answer held.
    + "among each many per since".split()
    # Reflexive pronouns (session 58's agent QA: "mark it ready myself" named "myself" a
    # missing word, with a spelling notice).
    + "itself myself ourselves themselves yourself yourselves".split()
    # Question filler of session 60's agent QA: "how much are the fees" put first a page
    # saying "how much cheaper", and "didn't" left "did".
    + ["did", "much"]
    # Pronouns and filler of session 62's paraphrase QA: "list items mix up their checkbox
    # state" named "their" a missing word, with a spelling notice, and it weighed double
    # against the answer's confidence.
    + "their theirs something someone somebody anything anyone anybody everything "
    "everyone everybody several doing".split()
)

# ``_`` ``-`` ``.`` and apostrophes stay inside a chunk: they join identifier parts.
_JOINERS = "_-.'"
_SPLIT_BYTES = bytes(
    32 if chr(i) in string.punctuation and chr(i) not in _JOINERS else i for i in range(256)
)
# Inside a chunk: anything that is neither a word character nor a joiner separates pieces
# that are *not* joined (non-ASCII punctuation such as "↔" or "—" lands here).
_PIECE_SEP = re.compile(r"[^\w.\-'\u2019]+")
_WORD_SEP = re.compile(r"[_\-'\u2019]+")
_RUNS = re.compile(r"[^\W\d_]+|\d+")
_VOWELS = frozenset("aeiou")
# ASCII letters to their case ("a" lower, "A" upper), everything else to a space.
_CASE_SHAPES = bytes(97 if 97 <= i <= 122 else 65 if 65 <= i <= 90 else 32 for i in range(256))


def _latin_bases() -> dict[str, str]:
    """Each Latin letter with a diacritic (Latin-1, Extended-A and -B, Extended
    Additional) to its base letters, when those are ASCII: ``Ś`` -> ``S``, ``ṅ`` -> ``n``."""
    table: dict[str, str] = {}
    for start, end in ((0xC0, 0x250), (0x1E00, 0x1F00)):
        for code in range(start, end):
            char = chr(code)
            parts = unicodedata.normalize("NFKD", char)
            base = "".join(c for c in parts if not unicodedata.combining(c))
            if base != char and base.isascii() and base.isalpha():
                table[char] = base
    return table


_LATIN_BASES = _latin_bases()
_LATIN_MARKED = re.compile("[" + "".join(sorted(_LATIN_BASES)) + "]")


def _latin_base(match: re.Match[str]) -> str:
    return _LATIN_BASES[match.group()]


_ONE_FOR_ONE = str.maketrans({k: v for k, v in _LATIN_BASES.items() if len(v) == 1})


def latin_marks_in_place(text: str) -> str:
    """``text`` with each Latin letter whose base is one letter as that letter (``ā`` ->
    ``a``), every offset kept: for marking a page's words where a query's match them."""
    return text.translate(_ONE_FOR_ONE) if not text.isascii() else text


def without_latin_marks(text: str) -> str:
    """``text`` with the Latin letters' diacritics taken off, as the analyzer reads it
    (``bādha`` -> ``badha``); line breaks stay where they are."""
    return _LATIN_MARKED.sub(_latin_base, text) if _LATIN_MARKED.search(text) else text


def _normalize(text: str) -> str:
    # NFKC is the identity on ASCII, and the isascii() check is far cheaper than NFKC.
    # Latin letters lose their diacritics, as a keyboard types them: "Sankara" finds
    # "Śaṅkara" and "pramana" "pramāṇa" (viewer QA F4: 30 pages of a Sanskrit bundle
    # were out of reach of a search box). Other scripts keep theirs (kana's dakuten).
    if text.isascii():
        return text
    return without_latin_marks(unicodedata.normalize("NFKC", text))


def _spaced(text: str) -> str:
    """``text`` with ASCII punctuation other than the joiners as spaces. Done on its
    UTF-8 bytes: a byte of a multi-byte character is never ASCII, and ``str.translate``
    looks up every character of a text that is not all ASCII in Python (MCP QA: 2.9 s
    against 0.3 s over the 35 MB of a 5,120-concept bundle, a quarter of its index
    build). ``surrogatepass`` carries a lone surrogate through unchanged."""
    data = text.encode("utf-8", "surrogatepass").translate(_SPLIT_BYTES)
    return data.decode("utf-8", "surrogatepass")


def split_chunks(text: str) -> list[str]:
    """Whitespace/punctuation-separated chunks of ``text``, NFKC-normalised, case kept."""
    return _spaced(_normalize(text)).split()


def folded_chunks(text: str) -> list[str] | None:
    """The chunks of ``text`` lowercased, or None when lowercasing could change a term.

    For ASCII text whose letter runs are each lower, upper or title case, every chunk
    analyses to the same terms as its lowercase form (ASCII ``lower`` is ``casefold``,
    and only mixed-case runs split by case, :func:`_camel_parts`). Lowercasing first
    lets "The" and "the" count as one chunk in C. A run that is not lower, upper or
    title case holds a lower letter followed by an upper one, or two upper letters
    followed by a lower one, which the two byte searches find. Sentence-final dots go
    too: trailing dots never change a chunk's terms (:func:`analyze_chunk`).
    """
    if not text.isascii():
        return None
    shapes = text.encode("ascii").translate(_CASE_SHAPES)
    if b"aA" in shapes or b"AAa" in shapes:
        return None
    lowered = text.lower().replace(". ", " ").replace(".\n", "\n")
    return _spaced(lowered).split()


def _plural_s(run: str, i: int) -> bool:
    """Whether ``run[i]`` is the plural "s" of the capitals before it: the last letter of
    the run or followed by a capital ("IDs", "URLsFor"), so "IDs" stays one word, not I
    and Ds."""
    return run[i] == "s" and (i == len(run) - 1 or run[i + 1].isupper())


def _camel_parts(run: str) -> list[str]:
    """Split a letter run at case changes: ``userID`` -> user, ID; ``HTTPServer``."""
    if run.islower() or run.isupper() or run.istitle():
        return [run]
    parts: list[str] = []
    start = 0
    last = len(run) - 1
    for i in range(1, len(run)):
        prev, cur = run[i - 1], run[i]
        if cur.isupper() and (
            prev.islower()
            or (prev.isupper() and i < last and run[i + 1].islower() and not _plural_s(run, i + 1))
        ):
            parts.append(run[start:i])
            start = i
    parts.append(run[start:])
    return parts


def _word_parts(word: str) -> list[str]:
    parts: list[str] = []
    for run in _RUNS.findall(word):
        if run.isdigit():
            # "BIP-0030" and "BIP30" must meet: numbers lose their leading zeros.
            parts.append(run.lstrip("0") or "0")
        else:
            parts.extend(p.casefold() for p in _camel_parts(run))
    return parts


_CONTRACTED = ("n't", "'re", "'ll", "'ve", "'d", "'m")


def is_contraction(chunk: str) -> bool:
    """Whether a query's chunk is a contraction ("can't", "doesn't", "we'll"): its parts
    (can, t, cant) are no words the answer must hold, so a hit's confidence and the
    missing words leave it out (agent QA: a lone "t" counted as a word held, and "can't"
    alone read 1.0). Ranking still reads its parts: read as their first word ("can"),
    the tuning sets lost one query (0.888 -> 0.536) and gained none."""
    folded = chunk.replace("\u2019", "'").casefold().rstrip(".")
    return any(folded.endswith(end) and len(folded) > len(end) for end in _CONTRACTED)


def _strip_possessive(piece: str) -> str:
    if len(piece) > 2 and piece[-1] in "sS" and piece[-2] in "'\u2019":
        return piece[:-2]
    return piece


def analyze_chunk(chunk: str, *, query: bool = False) -> tuple[str, ...]:
    """Index terms of one chunk: its parts, then the joined form of each compound.

    A dotted chunk (``event_params.value``) also yields the joined form of each dotted
    segment (``eventparams``). Purely numeric compounds (``1.5``, ``2026-07-01``) keep
    their parts only, so a version or date never collides with a bigger number. CJK
    runs become bigrams (:func:`_cjk_chunk`; ``query`` asks for a query's terms).
    """
    if has_cjk(chunk):
        return _cjk_chunk(chunk, query)
    out: list[str] = []
    for piece in _PIECE_SEP.split(chunk):
        # Trailing dots end a sentence ("John's."), they never hold a segment.
        piece = _strip_possessive(piece.rstrip("."))
        all_parts: list[str] = []
        segments = 0
        for segment in piece.split("."):
            seg_parts: list[str] = []
            for word in _WORD_SEP.split(segment):
                seg_parts.extend(_word_parts(word))
            if not seg_parts:
                continue
            segments += 1
            out.extend(seg_parts)
            if len(seg_parts) > 1 and not all(p.isdigit() for p in seg_parts):
                out.append("".join(seg_parts))
            all_parts.extend(seg_parts)
        if segments > 1 and not all(p.isdigit() for p in all_parts):
            out.append("".join(all_parts))
    return tuple(out)


def _cjk_chunk(chunk: str, query: bool) -> tuple[str, ...]:
    """A chunk holding CJK text: each CJK run as bigrams (:mod:`okfx.search.cjk`), the
    text around it analysed as any other chunk."""
    out: list[str] = []
    for is_cjk, piece in cjk_pieces(chunk):
        out.extend(cjk_terms(piece, query=query) if is_cjk else analyze_chunk(piece))
    return tuple(out)


class ChunkCache(dict[str, "str | tuple[str, ...]"]):
    """``chunk -> its terms``, analysed on first use (``dict.__missing__``).

    A chunk with exactly one term maps to that string, any other to a tuple; the tuples
    are also kept in :attr:`compounds`, so :func:`count_terms` can find the few compound
    chunks of a document with one set intersection instead of a Python loop.
    """

    def __init__(self) -> None:
        super().__init__()
        self.compounds: set[tuple[str, ...]] = set()

    def __missing__(self, chunk: str) -> str | tuple[str, ...]:
        value: str | tuple[str, ...] | None = None if has_cjk(chunk) else _simple_term(chunk)
        if value is None:
            terms = _identifier_terms(chunk) or analyze_chunk(chunk)
            if len(terms) == 1:
                value = terms[0]
            else:
                value = terms
                self.compounds.add(terms)
        self[chunk] = value
        return value

    def clear(self) -> None:
        super().clear()
        self.compounds.clear()


def _identifier_terms(chunk: str) -> tuple[str, ...] | None:
    """:func:`analyze_chunk` of a lowercase ASCII identifier or file name whose parts
    are all letters or all digits (``user_id``, ``zait-38``, ``not_a_link.md``), by
    plain string splits; None for anything else (the common identifier fast path)."""
    if not chunk.isascii() or chunk[-1] == "." or "'" in chunk:
        return None
    out: list[str] = []
    joined: list[str] = []
    segments = chunk.split(".")
    for segment in segments:
        parts = segment.replace("-", "_").split("_")
        seg_parts: list[str] = []
        for part in parts:
            if part.isdigit():
                seg_parts.append(part.lstrip("0") or "0")
            elif part.isalpha() and part.islower():
                seg_parts.append(part)
            else:  # empty, mixed letters and digits, or upper case
                return None
        out.extend(seg_parts)
        if len(seg_parts) > 1 and not all(p.isdigit() for p in seg_parts):
            out.append("".join(seg_parts))
        joined.extend(seg_parts)
    if len(segments) > 1 and not all(p.isdigit() for p in joined):
        out.append("".join(joined))
    return tuple(out)


def _simple_term(chunk: str) -> str | None:
    """The single term of a plain word ("Users", "users.") or number ("0030"), else
    None (the fast path)."""
    if chunk[-1] == "." and len(chunk) > 1:
        chunk = chunk[:-1]
    if chunk.isalpha() and (chunk.islower() or chunk.istitle() or chunk.isupper()):
        return chunk.casefold()
    if chunk.isascii() and chunk.isdigit():
        return chunk.lstrip("0") or "0"  # as _word_parts reads a number
    return None


def count_terms(text: str, cache: ChunkCache) -> tuple[dict[str, int], int]:
    """Term frequencies of ``text`` and its length in terms.

    Chunks are mapped through the cache and counted in C (``map`` + ``Counter``); only
    the compound chunks (identifiers) are then expanded in Python.
    """
    chunks = split_chunks(text)
    counts: dict[Any, int] = Counter(map(cache.__getitem__, chunks))
    length = len(chunks)
    for compound in cache.compounds.intersection(counts):
        n = counts.pop(compound)
        length += n * (len(compound) - 1)
        for term in compound:
            counts[term] = counts.get(term, 0) + n
    if not text.isascii():
        for bigram in letter_bigrams(text):  # "A股", "B 站": across chunks
            counts[bigram] = counts.get(bigram, 0) + 1
            length += 1
    return counts, length


def joined_term(terms: Sequence[str]) -> str | None:
    """The joined form among an identifier's terms (``gitsvn`` of git, svn, gitsvn, as
    :func:`analyze_chunk` reads ``git-svn``): the longest, when it is as long as the
    others together; None when there is none."""
    if len(terms) < 3:
        return None
    longest = max(terms, key=len)
    rest = sum(len(t) for t in terms) - len(longest)
    return longest if len(longest) == rest else None


def tokenize(text: str) -> list[str]:
    """Every index term of ``text`` in order, identifier parts before joined forms, then
    the bigrams of a lone Latin letter and the CJK text it is written against (``a股``),
    as :func:`count_terms` counts them."""
    terms = [term for chunk in split_chunks(text) for term in analyze_chunk(chunk)]
    return terms if text.isascii() else terms + letter_bigrams(text)


def plural_variants(word: str) -> list[str]:
    """English singular/plural forms of ``word`` by the s / es / ies rules.

    A word in -is is read both ways: a singular ("analysis" -> analyses) and the -s
    plural of a word in -i ("wikis" -> wiki, "kpis" -> kpi).

    A word of two letters gets its plural ("id" -> ids) and one of three in s its singular
    ("ids" -> id). Forms that do not exist in an index are harmless: the index ignores
    them. One letter, and anything that is not purely alphabetic, gets none.
    """
    if len(word) < 2 or not word.isalpha():
        return []
    if len(word) == 2:  # "id" -> ids, "vm" -> vms
        return [word + "s"] if word[-1] != "s" else []
    out: list[str] = []
    plural_looking = word.endswith("s") and not word.endswith(("ss", "us", "is"))
    if plural_looking:  # "ids" -> id
        out.append(word[:-1])
        if word.endswith("es") and len(word) > 4:
            out.append(word[:-2])
        if word.endswith("ies") and len(word) > 4:
            out.append(word[:-3] + "y")
    else:
        if word.endswith("y") and word[-2] not in _VOWELS:
            out.append(word[:-1] + "ies")
        elif word.endswith(("s", "x", "z", "ch", "sh")):
            out.append(word + "es")
            if word.endswith("is") and len(word) > 3:
                out.append(word[:-1])  # "wikis", "apis": the plural of a word in -i
        else:
            out.append(word + "s")
    return out


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One query term: the form the user typed and the forms that count for it.

    A document scores the best of its forms, each times its weight (1.0 typed,
    :data:`VARIANT_WEIGHT` for a singular/plural variant), so having both "user" and
    "users" is not counted twice.
    """

    text: str
    forms: tuple[tuple[str, float], ...]
    light: bool = False  # a question's light verb here (:func:`light_words`)


#: The light verbs of questions ("what can I use to fetch a country", "how do I get the
#: model to ..."): a bundle that never says them is not missing a word the asker meant,
#: so they are not named as missing words, nor count in a hit's confidence, and in
#: ranking they weigh :data:`LIGHT_VERB_WEIGHT` of a word: EU5-OKF's "how do I make a
#: formable nation" put first a page whose only match was the ``make`` of ``MakeScope``.
QUESTION_VERBS = frozenset(
    "get gets getting got use uses using used take takes taking took give gives giving gave "
    "make makes making made need needs want wants put puts go goes going tell tells "
    "find finds let lets".split()
)
#: Question idioms whose verb says nothing the answer must hold (a QA agent's "what does
#: CMK stand for" put first a page about a stand-alone mode): the verb before the
#: particle is read as a light verb there, and only there.
PARTICLE_IDIOMS = frozenset(
    {
        ("stand", "for"),
        ("stands", "for"),
        ("figure", "out"),
        ("come", "from"),
        ("comes", "from"),
        ("came", "from"),
    }
)
#: Verbs that end a question after a form of "do" ("what does vote type 2 mean", "how
#: does the retry queue work"), where they are light; elsewhere they keep their word
#: ("mean session length", "work items").
LAST_WORD_IDIOMS = frozenset({"mean", "means", "work", "works"})
#: Question idioms neither of whose words the answer must hold ("what does its schema look
#: like", "look up a country by its code": agent QA, where "like" put first a page saying
#: "would you like", and "look" and "up" were named missing words): both read as light.
PAIR_IDIOMS = frozenset({("look", "like"), ("looks", "like"), ("look", "up"), ("looks", "up")})
_DO = frozenset({"do", "does", "did"})
#: What a question's light verb weighs in ranking, against a word (tuning sets: lexical
#: 0.788 and hybrid 0.860 either way; questions 0.809 -> 0.813 lexical, 0.867 -> 0.870
#: hybrid; paraphrases 0.569 -> 0.567 lexical).
LIGHT_VERB_WEIGHT = 0.25


def only_stopwords(query: str) -> bool:
    """Whether ``query`` has words and every one is a stopword ("the and of", "what does
    this do"): searched for want of anything else, they match a page whatever it is about."""
    words = [chunk.casefold() for chunk in split_chunks(query)]
    return bool(words) and all(word in STOPWORDS for word in words)


def light_words(query: str) -> frozenset[str]:
    """The words of ``query`` read as a question's light verbs: the
    :data:`QUESTION_VERBS`, a verb of a :data:`PARTICLE_IDIOMS` pair followed by its
    particle, both words of a :data:`PAIR_IDIOMS` pair, and a :data:`LAST_WORD_IDIOMS`
    verb ending a question asked with "do"."""
    words = [chunk.casefold() for chunk in split_chunks(query)]
    light = {word for word in words if word in QUESTION_VERBS}
    for pair in zip(words, words[1:], strict=False):
        if pair in PARTICLE_IDIOMS:
            light.add(pair[0])
        elif pair in PAIR_IDIOMS:
            light.update(pair)
    if len(words) > 2 and words[-1] in LAST_WORD_IDIOMS and not _DO.isdisjoint(words[:-1]):
        light.add(words[-1])
    for asks, _, verb in zip(words, words[1:], words[2:], strict=False):
        if asks in _WHICH and verb in FRAME_VERBS:
            light.add(verb)  # "which table holds payroll": holds is no word of the answer
    for at in range(len(words) - 4):
        asks, _, modal, person, verb = words[at : at + 5]
        if asks in _WHICH and modal in _MODALS and person in _PERSONS and verb in CHOICE_VERBS:
            light.add(verb)  # "which version should I pick": pick is no word of the answer
    return frozenset(light)


_MODALS = frozenset("should do can would must could shall will".split())
_PERSONS = frozenset("i we you".split())
#: Verbs of choosing after "which X should I" (session 60's agent QA: "which version
#: should I pick" put first a page saying "pick up a saga").
CHOICE_VERBS = frozenset("pick choose select prefer".split())


_WHICH = frozenset({"which", "what"})
#: Verbs that say where a thing is kept after "which X" ("which table holds ..."):
#: light there, and only there (agent QA: a column named "holds" matched).
FRAME_VERBS = frozenset(
    "holds hold contains contain stores store keeps keep has have lists list records "
    "tracks track shows show".split()
)


def analyze_query(query: str, *, stopwords: frozenset[str] = STOPWORDS) -> list[QueryTerm]:
    """Query terms of any string, in order of first appearance; never raises.

    Terms sharing a form ("user users") merge into one. Stopwords are dropped unless
    the query has nothing else. At most :data:`MAX_QUERY_TERMS` terms are kept.
    """
    if not isinstance(query, str):
        return []
    typed: list[str] = []
    seen: set[str] = set()
    for chunk in split_chunks(query):
        for term in analyze_chunk(chunk, query=True):
            if term not in seen:
                seen.add(term)
                typed.append(term)
    for term in letter_bigrams(query):
        if term not in seen:
            seen.add(term)
            typed.append(term)
    kept = [t for t in typed if t not in stopwords] or typed
    light = light_words(query)
    # A CJK bigram holding a question word or particle ("怎么", "么做" of "侧边栏怎么做")
    # weighs as a light verb beside the query's content bigrams (CLI QA: a page matching
    # only those two came second, above pages holding the subject).
    glue = {t for t in kept if glue_bigram(t)}
    glued = glue if len(glue) < sum(1 for t in kept if len(t) == 2 and has_cjk(t)) else set()
    terms: list[QueryTerm] = []
    owner: dict[str, int] = {}  # form -> index of the term that holds it
    for text in kept:
        forms = {text: 1.0}
        for variant in plural_variants(text):
            forms.setdefault(variant, VARIANT_WEIGHT)
        spelled = [other for variant in list(forms) for other in spelling_variants(variant)]
        for other in spelled:
            forms.setdefault(other, VARIANT_WEIGHT)
        for base in (text, *spelled):  # "recognised" -> recognized -> recognizing
            for variant in word_forms(base):
                forms.setdefault(variant, FORM_WEIGHT)
        for short in abbreviations(text):
            forms.setdefault(short, FORM_WEIGHT)
        for other in synonyms(text):  # "kind" -> type, types
            for variant in (other, *plural_variants(other)):
                forms.setdefault(variant, FORM_WEIGHT)
        # A form that is a stopword is no form to look up: "theme" and "themes" are no
        # "them", "sometime" no "sometimes" (agent QA: "theme" found pages saying "them").
        if not stopwords.isdisjoint(forms):
            forms = {
                form: weight
                for form, weight in forms.items()
                if form == text or form not in stopwords
            }
        if text in light or (glued and text in glued):
            forms = {form: weight * LIGHT_VERB_WEIGHT for form, weight in forms.items()}
        merged = next((owner[f] for f in forms if f in owner), None)
        if merged is None:
            if len(terms) >= MAX_QUERY_TERMS:
                continue
            owner.update(dict.fromkeys(forms, len(terms)))
            terms.append(QueryTerm(text, tuple(forms.items()), text in light))
            continue
        old = terms[merged]
        combined = dict(old.forms)
        for form, weight in forms.items():
            combined[form] = max(weight, combined.get(form, 0.0))
        owner.update(dict.fromkeys(forms, merged))
        terms[merged] = QueryTerm(old.text, tuple(combined.items()), old.light)
    _join_compounds(terms, typed, owner)
    return terms


def _join_compounds(terms: list[QueryTerm], typed: list[str], owner: dict[str, int]) -> None:
    """Two adjacent query words also match the one word they make
    (:func:`~okfx.search.wordforms.joined_pairs`: "utility type" -> utilitytype, "code list"
    -> codelist): a form of both terms, so a text that writes them as one word matches
    each of them (in coverage and in its name too)."""
    held = {term.text: i for i, term in enumerate(terms)}
    for left, right in zip(typed, typed[1:], strict=False):
        a, b = held.get(left), held.get(right)
        words = joined_pairs([left, right])
        if a is None or b is None or a == b or not words or words[0] in owner:
            continue
        word = words[0]
        for i in (a, b):
            terms[i] = QueryTerm(
                terms[i].text, (*terms[i].forms, (word, COMPOUND_WEIGHT)), terms[i].light
            )
    _join_three(terms, typed, owner, held)
    _join_linked(terms, typed, owner, held)


def _join_three(
    terms: list[QueryTerm], typed: list[str], owner: dict[str, int], held: dict[str, int]
) -> None:
    """Three adjacent query words also match the one word they make, the last in its
    plural forms too ("unidentified buried object" -> unidentifiedburiedobject), as
    generated models name their tables (words QA: muddi names some 270 pages so, and
    three words never met one)."""
    for first, second, third in zip(typed, typed[1:], typed[2:], strict=False):
        at = [held.get(w) for w in (first, second, third)]
        if None in at or len(set(at)) < 3 or len(joined_pair_parts([first, second, third])) < 2:
            continue
        stem = first + second
        for word in (stem + third, *(stem + form for form in plural_variants(third))):
            if word in owner:
                continue
            owner[word] = at[0]  # type: ignore[assignment]
            for i in at:
                assert i is not None
                terms[i] = QueryTerm(
                    terms[i].text, (*terms[i].forms, (word, COMPOUND_WEIGHT)), terms[i].light
                )


#: Words that link the two parts of a generated name (``sitetoasset``, ``costofsale``).
LINKING_WORDS = frozenset({"to", "of", "and", "for", "in", "on", "by", "with"})


def _join_linked(
    terms: list[QueryTerm], typed: list[str], owner: dict[str, int], held: dict[str, int]
) -> None:
    """Two query words with a linking word among the function words between them also
    match the name they make with it ("a site to its assets" -> sitetoasset, sitetoassets),
    as a generated table or class names a relationship (muddi's ``relationship_sitetoasset``):
    a form of both words, as :func:`_join_compounds` joins two adjacent ones."""
    for k, left in enumerate(typed):
        a = held.get(left)
        if a is None or len(left) < 3 or not left.isalpha():
            continue
        between = list(itertools.takewhile(lambda w: w not in held, typed[k + 1 : k + 4]))
        link = next((w for w in between if w in LINKING_WORDS), None)
        rest = typed[k + 1 + len(between) :]
        if link is None or not rest:
            continue
        right = rest[0]
        b = held.get(right)  # None past the window of three function words
        if b is None or b == a or len(right) < 3 or not right.isalpha():
            continue
        for word in (left + link + right, *(left + link + form for form in plural_variants(right))):
            if word in owner:
                continue
            owner[word] = a
            for i in (a, b):
                terms[i] = QueryTerm(
                    terms[i].text, (*terms[i].forms, (word, COMPOUND_WEIGHT)), terms[i].light
                )
