"""Query-side word forms and initialisms, for the lexical default (issue 20).

Two gaps the plural folding of :mod:`okfx.search.analyzer` leaves, closed on the query
side only (the index is unchanged, so forms cost nothing until a query asks):

- :func:`word_forms`: other inflections of a word ("billing" -> bill, billed, bills;
  "attesting" -> attest, attestation; "rebalance" -> rebalancing). A few suffixes are
  stripped to candidate stems and regrown with common endings; forms missing from an
  index are ignored by it. This is not a stemmer: nothing is merged in the index, a form
  counts only for the query that generated it, at a weight below a typed word.
- :func:`joined_pairs`: two adjacent query words as one ("code list" -> codelist).
- :func:`initialisms`: acronyms a run of query words spells ("personally identifiable
  information" -> pii, "multi-party computation" -> mpc), and :func:`title_initialisms`,
  the acronyms of a concept title, indexed with it so "MAU" finds "Monthly active users".
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "INITIALISM_STOPWORDS",
    "initialisms",
    "joined_pairs",
    "title_initialisms",
    "word_forms",
]

# Inflection endings stripped to find stems, longest first, and the endings regrown.
_STRIP = ("ations", "ation", "ings", "ing", "ions", "ion", "ed", "es", "s", "e", "y")
_GROW = ("", "s", "es", "e", "ed", "d", "ing", "ion", "ions", "ation", "y", "er", "ers")
_DERIVED = frozenset(("ion", "ions", "ation", "y", "er", "ers"))
_MIN_STEM = 4
# "station" must not become "stat(e)": -ion comes off longer stems only.
_MIN_ION_STEM = 5
#: Words left out of the content-word initialism ("trips per bike per day" -> tbd, with
#: tpbpd from every word).
INITIALISM_STOPWORDS = frozenset("a an and as at by for from in of on or per the to with".split())
_MIN_INITIALS, _MAX_INITIALS = 3, 6


def _stems(word: str) -> set[str]:
    # An inflected word ("billing") is a stem for nothing: "billinged" helps no one.
    stems = set() if word.endswith(("ing", "ed", "ion", "ions")) else {word}
    for suffix in _STRIP:
        least = _MIN_ION_STEM if "ion" in suffix else _MIN_STEM
        if word.endswith(suffix) and len(word) - len(suffix) >= least:
            stem = word[: -len(suffix)]
            stems.add(stem)
            # billing -> bill (doubled consonant), making -> mak + e
            if len(stem) > _MIN_STEM and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
                stems.add(stem[:-1])
            if suffix in ("ation", "ations"):
                stems.add(stem + "at")  # aggregation -> aggregat(e)
    return stems


def word_forms(word: str) -> list[str]:
    """Other inflections of ``word`` worth looking up, ``word`` itself left out.

    Only lowercase alphabetic words of at least five letters get forms: short words
    ("bus", "data") have too many unrelated neighbours. Words ending in s get none
    (plurals are :func:`~okfx.search.analyzer.plural_variants`' job).
    """
    if len(word) < 5 or not word.isalpha() or not word.islower() or word.endswith("s"):
        return []
    forms = {
        stem + ending
        for stem in _stems(word)
        for ending in _GROW
        # "bill" + "ion" is another word: derivations grow on longer stems only.
        if len(stem) >= _MIN_ION_STEM or ending not in _DERIVED
    }
    forms.discard(word)
    return sorted(f for f in forms if len(f) >= _MIN_STEM)


def _acronyms(words: Sequence[str]) -> set[str]:
    """The initials of every run of 3..6 words (3..6 letters), over all words and over
    content words only."""
    found: set[str] = set()
    for seq in (list(words), [w for w in words if w not in INITIALISM_STOPWORDS]):
        letters = [w[0] for w in seq if w and w[0].isalpha()]
        if len(letters) != len(seq):
            continue
        for size in range(_MIN_INITIALS, _MAX_INITIALS + 1):
            for start in range(len(letters) - size + 1):
                found.add("".join(letters[start : start + size]))
    return found


def initialisms(words: Sequence[str]) -> list[str]:
    """Acronyms spelled by runs of ``words`` (query words in order, lowercase), for an
    optional lookup: "personally identifiable information" -> ["pii"]. A query of a
    single word has none."""
    if len(words) < 2:
        return []
    return sorted(a for a in _acronyms(words) if a not in words)


def title_initialisms(words: Sequence[str]) -> list[str]:
    """The acronyms of a whole title ("Monthly active users" -> mau), from every word
    and from its content words; none for titles of fewer than three words."""
    letters_all = [w[0] for w in words if w]
    if len(letters_all) < _MIN_INITIALS or len(letters_all) > 8:
        return []
    content = [w[0] for w in words if w and w not in INITIALISM_STOPWORDS]
    found = {"".join(letters_all)}
    if len(content) >= _MIN_INITIALS:
        found.add("".join(content))
    return sorted(a for a in found if a.isalpha())


def joined_pairs(chunks: Sequence[str]) -> list[str]:
    """Adjacent query words written as one word, for an optional lookup: a bundle that
    writes "codelist", "username" or "utilitytype" meets a query that spells them apart.
    ``chunks`` are the query's whitespace-separated chunks; only pairs of alphabetic
    chunks of three letters or more, neither a function word, are joined (the parts of
    an identifier such as ``spent_output_index`` already meet through its joined form)."""
    words = [chunk.casefold() for chunk in chunks]
    out: list[str] = []
    for left, right in zip(words, words[1:], strict=False):
        if min(len(left), len(right)) < 3 or not (left.isalpha() and right.isalpha()):
            continue
        if left in INITIALISM_STOPWORDS or right in INITIALISM_STOPWORDS:
            continue
        out.append(left + right)
    return out
