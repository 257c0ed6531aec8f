"""Query-side word forms and initialisms, for the lexical default (issue 20).

Two gaps the plural folding of :mod:`okfx.search.analyzer` leaves, closed on the query
side only (the index is unchanged, so forms cost nothing until a query asks):

- :func:`word_forms`: other inflections of a word ("billing" -> bill, billed, bills;
  "attesting" -> attest, attestation; "rebalance" -> rebalancing). A few suffixes are
  stripped to candidate stems and regrown with common endings; forms missing from an
  index are ignored by it. This is not a stemmer: nothing is merged in the index, a form
  counts only for the query that generated it, at a weight below a typed word.
  Derived forms join too ("inactivity" <-> inactive, "availability" <-> available,
  "freshness" -> fresh, "settlement" -> settle), verbs in consonant + y by their own
  rule ("certifying" <-> certified, certification), and irregular verbs by a short
  table ("bought" <-> buy, "ridden" <-> ride).
- :func:`abbreviations`: the usual short forms of a word in column names and the reverse
  ("timestamp" <-> ts, "transaction" <-> tx, "quantity" <-> qty).
- :func:`synonyms`: the few words questions use for a bundle's own ("kinds" <-> types).
- :func:`spelling_variants`: the British and American spellings of a word
  ("organisation" <-> organization, "catalogue" <-> catalog, "modelling" <-> modeling).
- :func:`joined_pairs`: two adjacent query words as one ("code list" -> codelist).
- :func:`initialisms`: acronyms a run of query words spells ("personally identifiable
  information" -> pii, "multi-party computation" -> mpc), and :func:`title_initialisms`,
  the acronyms of a concept title, indexed with it so "MAU" finds "Monthly active users".
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "INITIALISM_STOPWORDS",
    "abbreviations",
    "initialism_runs",
    "initialisms",
    "joined_pair_parts",
    "joined_pairs",
    "spelling_variants",
    "synonyms",
    "title_initialisms",
    "word_forms",
]

# Inflection endings stripped to find stems, longest first, and the endings regrown.
_STRIP = ("ations", "ation", "ings", "ing", "ions", "ion", "ed", "es", "s", "e", "y")
_GROW = ("", "s", "es", "e", "ed", "d", "ing", "ion", "ions", "ation", "y", "er", "ers")
_DERIVED = frozenset(("ion", "ions", "ation", "y", "er", "ers"))
_MIN_STEM = 4
_VOWELS = "aeiou"
# "station" must not become "stat(e)": -ion comes off longer stems only.
_MIN_ION_STEM = 5
#: Words left out of the content-word initialism ("trips per bike per day" -> tbd, with
#: tpbpd from every word).
INITIALISM_STOPWORDS = frozenset("a an and as at by for from in of on or per the to with".split())
_MIN_INITIALS, _MAX_INITIALS = 3, 6
#: Words no run of initials starts or ends with: the function words above, and a
#: question's own ("what is an MRAP" spelt "iam" from "is an MRAP", agent QA on the
#: crossplane catalog: a page citing IAM ranked among the pages on MRAP).
_NO_RUN_EDGE = INITIALISM_STOPWORDS | frozenset(
    "are be can did do does how i is it me my was were what when where which who why you "
    "your".split()
    # Pronouns and determiners (hybrid QA: "my cat chewed a leaf, is that dangerous" spelt
    # "lit" from "leaf is that", and a page saying "well lit" ranked as its acronym).
    + "that this these those there their they them its has have had".split()
)


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


# Irregular English verbs, each line one verb's forms. Verbs whose forms are also common
# words of another meaning (left, found, bound, lead, mean, saw, won...) are left out,
# and so are the light verbs of questions (get, make, take, come, go, know, say...) and
# verbs that are mostly nouns in technical text (run, build, feed, drive, break...).
_IRREGULAR = """
buy buys buying bought; sell sells selling sold; pay pays paying paid; send sends sending
sent; spend spends spending spent; write writes writing wrote written; ride rides riding
rode ridden; choose chooses choosing chose chosen; lose loses losing lost; begin begins
beginning began begun; bring brings bringing brought; eat eats eating ate eaten; forget
forgets forgetting forgot forgotten; freeze freezes freezing froze frozen; grow grows
growing grew grown; hide hides hiding hid hidden; lend lends lending lent; seek seeks
seeking sought; shake shakes shaking shook shaken; sing sings singing sang sung; sleep
sleeps sleeping slept; speak speaks speaking spoke spoken; steal steals stealing stole
stolen; teach teaches teaching taught; understand understands understanding understood; wear
wears wearing wore worn; withdraw withdraws withdrawing withdrew withdrawn; fight fights
fighting fought; hear hears hearing heard; undergo undergoes undergoing underwent undergone;
forgive forgives forgiving forgave forgiven
"""
# Periods and their adjectives, which the regular endings do not reach (words of four
# letters get none, and -ly is no ending of theirs): "users each week" meets "weekly
# active users" (helper QA), "monthly revenue" a page about revenue per month.
_PERIODS = "hour hours hourly; day days daily; week weeks weekly; month months monthly; "
_PERIODS += "quarter quarters quarterly; year years yearly"
# "can't" reads as "cant", which met pages saying "can't" and never those saying "cannot"
# (words QA: "countries that can't invest" missed the FAQ's "We cannot accept").
_CONTRACTED = "cannot cant"
_IRREGULAR_FORMS: dict[str, tuple[str, ...]] = {
    form: tuple(forms.split())
    for forms in (_IRREGULAR.replace("\n", " ") + ";" + _PERIODS + ";" + _CONTRACTED).split(";")
    for form in forms.split()
}
# Derivations: (ending of the word, ending of the derived form), both ways.
_DERIVATIONS = (
    ("ability", "able"),
    ("ibility", "ible"),
    ("ivity", "ive"),
    ("ality", "al"),
)
_MIN_DERIVED_STEM = 3
_DERIVED_ENDINGS = (*(end for pair in _DERIVATIONS for end in pair), "ity", "ness", "ment")


def _derived(word: str) -> set[str]:
    """Derived forms: -ity <-> -ive/-able/-al/-e, and -ness, -ment taken off."""
    found: set[str] = set()
    if not word.endswith(_DERIVED_ENDINGS):
        return found
    for noun, adjective in _DERIVATIONS:
        for have, other in ((noun, adjective), (adjective, noun)):
            stem = word[: -len(have)]
            if word.endswith(have) and len(stem) >= _MIN_DERIVED_STEM:
                found.add(stem + other)
    for suffix in ("ity", "ness", "ment"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= _MIN_STEM:
            found.update((stem, stem + "e") if suffix == "ity" else (stem,))
    return found


def _noun_of(word: str) -> set[str]:
    """The nouns of an adjective in -e and back (new-producers QA: "deploying safely" and
    "safe deployment" missed "Deployment Safety Lessons"; "private" missed "Privacy"):
    -e <-> -ety and -ity ("safe" safety, "sure" surety; "secure" security, "pure"
    purity), -ate <-> -acy ("private" privacy, "accurate" accuracy). A form no page
    holds costs a look-up only."""
    found: set[str] = set()
    if not word.isalpha() or not word.islower():
        return found
    if word.endswith("ety") and len(word) >= 6:
        found.add(word[:-2])  # safety -> safe
    elif word.endswith("acy") and len(word) >= 7:
        found.add(word[:-2] + "te")  # privacy -> private
    elif word.endswith("ate") and len(word) >= 7:
        found.add(word[:-2] + "cy")  # private -> privacy
    elif word.endswith("e") and len(word) >= 4 and word[-2] not in _VOWELS:
        found.add(word + "ty")  # safe -> safety
        if len(word) >= 6:
            found.add(word[:-1] + "ity")  # secure -> security
    return found


def _y_verb(word: str) -> str:
    """The verb in consonant + y that ``word`` is a form of ("certifying", "certified",
    "certification" -> certify; "query" itself), or "" when it is none."""
    if word.endswith("ying") and len(word) >= 7 and word[-5] not in _VOWELS:
        return word[:-3]  # copying -> copy
    if word.endswith("ied") and len(word) >= 7:
        return word[:-3] + "y"  # certified -> certify; "tied", "died" are too short
    for noun in ("ification", "ifications"):
        if word.endswith(noun) and len(word) > len(noun) + 1:
            return word[: -len(noun)] + "ify"  # classifications -> classify
    if word.endswith("y") and word[-2] not in _VOWELS:
        return word
    return ""


def _y_forms(word: str) -> set[str]:
    """The forms of a verb in consonant + y, which turns y to i before -ed and -es
    ("certify" -> certified, certifies, certifying), and of one in -ify, whose noun ends in
    -ification ("classify" <-> classification): the regular endings of :func:`_stems`
    miss both ("certifyed")."""
    verb = _y_verb(word)
    if len(verb) < _MIN_ION_STEM:
        return set()
    stem = verb[:-1]
    forms = {verb, stem + "ied", stem + "ies", verb + "ing"}
    if verb.endswith("ify"):
        forms.update((stem + "ication", stem + "ications"))
    return forms


#: Endings of a last syllable English mostly leaves unstressed, which doubles nothing
#: ("entered", "opened", "visited"), but for "-fer" (referred, transferred; not
#: "offered") and "-mit" (committed, submitted).
_UNSTRESSED = ("er", "en", "on", "or", "om", "et", "it", "ic")


def _doubled(word: str) -> set[str]:
    """The forms of a verb ending in one vowel and one consonant that doubles it before
    -ed and -ing ("overlap" -> overlapped, overlapping; "control" -> controlled; paraphrase
    QA: "overlap" was named missing on a page saying "overlapped"); words of four letters
    too ("stop", "plan", "scan"), whose doubled forms are no other word."""
    if len(word) < 4 or word[-1] in "aeiouwxy" or word[-2] not in _VOWELS:
        return set()
    if word[-3] in _VOWELS:
        return set()  # "repeat", "detail": the vowel is a pair, nothing doubles
    stressed = word.endswith("mit") or (word.endswith("fer") and word[-4] != "f")
    if word.endswith(_UNSTRESSED) and not stressed:
        return set()  # "user", "open", "button", "color": a last syllable not stressed
    return {word + word[-1] + "ed", word + word[-1] + "ing"}


#: Words in -ly that are no adverb of their stem's adjective ("likely": like, "family"),
#: and the adverbs of a speaker's stance, which say nothing of a question's subject ("who
#: are we actually permitted to email": a page saying "actual" is no better an answer).
_NO_ADJECTIVE = frozenset(
    "likely really simply family assembly actually basically certainly clearly currently "
    "definitely especially essentially eventually exactly finally hopefully literally "
    "mostly obviously originally possibly presumably probably recently seemingly surely "
    "totally truly ultimately".split()
)


def _adjective_of(word: str) -> set[str]:
    """The adjective an adverb in -ly is made from ("automatically" -> automatic,
    "instantly" -> instant, "easily" -> easy, "possibly" -> possible; paraphrase QA: "does
    the app update itself automatically" missed the page saying "automatic"); a query's
    word only, so a page's "exactly" is no "exact"."""
    if len(word) < 6 or not word.endswith("ly") or word in _NO_ADJECTIVE:
        return set()
    stem = word[:-2]
    if word.endswith("ically"):
        return {word[:-4]}  # automatically -> automatic
    if word.endswith("ily"):
        return {stem[:-1] + "y"}  # easily -> easy
    if word.endswith(("bly", "ply", "tly", "gly", "dly", "kly", "cly", "zly")) and stem[-1] != "l":
        return {stem, stem + "le"}  # instantly -> instant, simply -> simple
    return {stem}  # deeply -> deep, carefully -> careful


#: Adverbs in -ly of three-letter adjectives, which the length rules leave out ("newly").
_SHORT_ADVERBS = {"newly": "new", "oddly": "odd", "badly": "bad", "sadly": "sad", "hotly": "hot"}


def _short_stem(word: str) -> str | None:
    """The three-letter verb of an -ing or -ed form that doubles its last consonant
    ("digging" -> dig, "mapping" -> map, "logged" -> log; words QA: "digging" was named
    missing on a page saying "Permit to Dig"), or the adjective of a short adverb
    ("newly" -> new); else None."""
    if word in _SHORT_ADVERBS:
        return _SHORT_ADVERBS[word]
    for suffix in ("ing", "ed"):
        stem = word.removesuffix(suffix)
        if (
            stem != word
            and len(stem) == 4
            and stem[2] == stem[3]
            and stem[3] not in "aeiouwxyls"
            and stem[1] in _VOWELS
            and stem[0] not in _VOWELS
        ):
            return stem[:3]
    return None


def word_forms(word: str) -> list[str]:
    """Other inflections and derivations of ``word`` worth looking up, ``word`` itself
    left out.

    Only lowercase alphabetic words of at least five letters get regular forms: short
    words ("bus", "data") have too many unrelated neighbours; irregular verbs ("paid")
    get theirs at any length. Words ending in s get no inflections (plurals are
    :func:`~okfx.search.analyzer.plural_variants`' job), only derivations.
    """
    forms = set(_IRREGULAR_FORMS.get(word, ()))
    if word.isalpha() and word.islower():
        forms.update(_doubled(word))
        adjectives = _adjective_of(word)
        forms.update(adjectives)
        forms.update(_noun_of(word))
        for adjective in adjectives:  # safely -> safe -> safety
            forms.update(_noun_of(adjective))
    if len(word) >= 5 and word.isalpha() and word.islower():
        forms.update(_derived(word))  # "freshness" ends in s but is no plural
        forms.update(_y_forms(word))
        if not word.endswith("s"):
            forms.update(
                stem + ending
                for stem in _stems(word)
                for ending in _GROW
                # "bill" + "ion" is another word: derivations grow on longer stems only.
                if len(stem) >= _MIN_ION_STEM or ending not in _DERIVED
            )
    short = _short_stem(word) if word.isalpha() and word.islower() else None
    forms.discard(word)
    found = {f for f in forms if len(f) >= 3 and (len(f) >= _MIN_STEM or f in _IRREGULAR_FORMS)}
    if short is not None:
        found.add(short)
    return sorted(found)


# British <-> American spellings, as endings: (British, American, endings that may follow,
# least letters before). Applied both ways; "size" (too short) keeps its spelling.
_SPELLING_RULES = (
    ("is", "iz", ("e", "ed", "es", "ing", "er", "ers", "ation", "ations"), 3),
    ("ys", "yz", ("e", "ed", "es", "ing"), 3),
    ("our", "or", ("", "s", "ed", "ing", "able", "ite", "ites"), 3),
    ("ogue", "og", ("", "s"), 3),
    ("ell", "el", ("ed", "ing", "er", "ers"), 2),
    ("tre", "ter", ("", "s"), 2),
    ("bre", "ber", ("", "s"), 2),
    ("ence", "ense", ("", "s"), 2),
    ("gramme", "gram", ("", "s"), 3),
)


def _spelling_table() -> dict[str, list[tuple[str, int]]]:
    """Word ending -> [(the other spelling's ending, least letters before it)]."""
    table: dict[str, list[tuple[str, int]]] = {}
    for british, american, endings, least in _SPELLING_RULES:
        for ending in endings:
            table.setdefault(british + ending, []).append((american + ending, least))
            table.setdefault(american + ending, []).append((british + ending, least))
    return table


_SPELLINGS = _spelling_table()
_SPELLING_LENGTHS = sorted({len(ending) for ending in _SPELLINGS})
_SPELLING_ENDINGS = tuple(_SPELLINGS)


def spelling_variants(word: str) -> list[str]:
    """The other (British or American) spellings of ``word``: "organisation" ->
    organization, "catalog" -> catalogue. Forms an index lacks are ignored by it."""
    if len(word) < 5 or not word.endswith(_SPELLING_ENDINGS):  # most words: a C-level no
        return []
    if not (word.isascii() and word.isalpha()):
        return []
    found = set()
    for size in _SPELLING_LENGTHS:
        for other, least in _SPELLINGS.get(word[-size:], ()):
            stem = word[:-size]
            # "color" -> "colour", but "flour" is no "flor" and "four" no "for"
            if len(stem) >= least and not (other.startswith("our") and stem.endswith("u")):
                found.add(stem + other)
    found.discard(word)
    return sorted(found)


def initialism_runs(
    words: Sequence[str], hyphened: frozenset[int] = frozenset()
) -> list[tuple[str, tuple[str, ...]]]:
    """``(initials, run)`` of every run of 3..6 words (3..6 letters), over all words and
    over content words only: what :func:`initialisms` spells, with the words that spell
    each. A run never starts or ends with a function word: "electrical safeguarding of"
    spells no "eso" (hybrid QA: it found ElectricitySupportObject, and nothing else),
    unless that word is joined by a hyphen to the one before it (``hyphened``: indexes in
    ``words``), part of one compound: "single sign-on" spells sso (agent QA: a wiki
    writing SSO 15 times found nothing)."""
    runs: list[tuple[str, tuple[str, ...]]] = []
    every = list(range(len(words)))
    content = [i for i in every if words[i] not in INITIALISM_STOPWORDS]
    for places in (every, content):
        seq = [words[i] for i in places]
        letters = [w[0] for w in seq if w and w[0].isalpha()]
        if len(letters) != len(seq):
            continue
        for size in range(_MIN_INITIALS, _MAX_INITIALS + 1):
            for start in range(len(letters) - size + 1):
                run = tuple(seq[start : start + size])
                last = places[start + size - 1]
                if run[0] in _NO_RUN_EDGE or (run[-1] in _NO_RUN_EDGE and last not in hyphened):
                    continue  # "Bureau of Labor" holds one; none starts or ends with one
                runs.append(("".join(letters[start : start + size]), run))
    return runs


def _acronyms(words: Sequence[str], hyphened: frozenset[int] = frozenset()) -> set[str]:
    """The initials of every run of 3..6 words (:func:`initialism_runs`)."""
    return {initials for initials, _ in initialism_runs(words, hyphened)}


def initialisms(words: Sequence[str], hyphened: frozenset[int] = frozenset()) -> list[str]:
    """Acronyms spelled by runs of ``words`` (query words in order, lowercase), for an
    optional lookup: "personally identifiable information" -> ["pii"]. A query of a
    single word has none. ``hyphened``: see :func:`initialism_runs`."""
    if len(words) < 2:
        return []
    return sorted(a for a in _acronyms(words, hyphened) if a not in words)


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
    return [left + right for left, right in joined_pair_parts(chunks)]


def joined_pair_parts(chunks: Sequence[str]) -> list[tuple[str, str]]:
    """The two words of each pair :func:`joined_pairs` joins, lowercase."""
    words = [chunk.casefold() for chunk in chunks]
    out: list[tuple[str, str]] = []
    for left, right in zip(words, words[1:], strict=False):
        if min(len(left), len(right)) < 3 or not (left.isalpha() and right.isalpha()):
            continue
        if left in INITIALISM_STOPWORDS or right in INITIALISM_STOPWORDS:
            continue
        out.append((left, right))
    return out


# Usual abbreviations of data column names ("order_ts", "avg_price", "item_qty"), each
# line a word (singular) and its short forms. Short forms that are also common words or
# read two ways (min: minimum or minute, desc: descending or description, pos: position or
# point of sale, temp, cat, us, ms, dst) are left out.
_ABBREVIATIONS = """
timestamp ts; transaction tx txn; quantity qty; amount amt; average avg; percent pct;
percentage pct; count cnt; number num; millisecond msec; microsecond usec;
identifier id; customer cust; address addr; configuration config cfg; database db;
information info; application app; department dept; organisation org; organization org;
government gov govt; reference ref; repository repo; statistic stats; document doc;
authentication auth; specification spec; environment env; message msg; previous prev;
maximum max; sequence seq; account acct; currency ccy; description descr; source src;
destination dest
"""


def _abbreviation_table() -> tuple[dict[str, tuple[str, ...]], dict[str, list[str]]]:
    """(word -> its short forms, short form -> the words it stands for)."""
    short: dict[str, tuple[str, ...]] = {}
    long: dict[str, list[str]] = {}
    for line in _ABBREVIATIONS.replace("\n", " ").split(";"):
        word, *shorts = line.split()
        short[word] = tuple(shorts)
        for form in shorts:
            long.setdefault(form, []).append(word)
    return short, long


_SHORT, _LONG = _abbreviation_table()


def abbreviations(word: str) -> list[str]:
    """The usual short forms of ``word`` in column names, or the words a short form
    stands for: "timestamp" -> ts, "ts" -> timestamp, "transactions" -> tx, txn."""
    if word in _LONG:
        return sorted(_LONG[word])
    singular = word[:-1] if word.endswith("s") and word[:-1] in _SHORT else word
    return list(_SHORT.get(singular, ()))


# Nouns a question uses for a word bundles write instead ("what kinds of votes are there"
# asks for the vote *types*), each line a group of words that stand for each other. Only
# words that mean the same in any bundle: "sort" (to sort) or "category" (a column of its
# own in many schemas) are left out.
_SYNONYMS = """
kind type
"""


def _synonym_table() -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for line in _SYNONYMS.strip().splitlines():
        group = line.split()
        for word in group:
            table[word] = [other for other in group if other != word]
    return table


_SYNONYM_TABLE = _synonym_table()


def synonyms(word: str) -> list[str]:
    """Words that stand for ``word`` in any bundle, in its number: "kinds" -> types,
    "type" -> kind."""
    if word in _SYNONYM_TABLE:
        return list(_SYNONYM_TABLE[word])
    if word.endswith("s") and word[:-1] in _SYNONYM_TABLE:
        return [other + "s" for other in _SYNONYM_TABLE[word[:-1]]]
    return []
