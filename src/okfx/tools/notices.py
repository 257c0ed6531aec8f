"""The sentences a tool adds when a call comes back empty, so the model knows what to do
next: a search with no hits, a read or a page past the end, a resource path that is a
folder."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from okfx.bundle.bundle import Bundle
from okfx.errors import NotFound, OKFError
from okfx.model import Concept
from okfx.tools.display import quoted
from okfx.trust import status_as_written

__all__ = [
    "AS_LAST_FETCHED",
    "AS_LAST_READ",
    "CHANGED_SINCE_LOAD",
    "MISSING_WORDS",
    "RELOADS",
    "RESPELL_CUTOFF",
    "TYPO_CUTOFF",
    "changed_since_load",
    "close_names",
    "close_names_of",
    "close_sentence",
    "common_words_only",
    "first_by_meaning",
    "folder_not_file",
    "gone_since_load",
    "limit_capped",
    "missing_in_bundle",
    "missing_words",
    "nested_in",
    "no_hits",
    "nothing_to_search",
    "past_end",
    "past_last_row",
    "respelled",
    "reworded",
    "rows_capped",
]

#: A read of a concept whose file changed since the bundle was loaded (Bundle.as_now).
CHANGED_SINCE_LOAD = (
    "CHANGED: the file changed since the bundle was loaded; this read is the file as it "
    "is now. Search, listings and links show the change after the next reload."
)

#: When the next reload comes, by ``KnowledgeManager.reloads`` (author QA: a server
#: that never reloads told the agent that search would catch up "after the next reload").
RELOADS: dict[str | None, str] = {
    None: "the next reload",
    "watch": "the next reload, which this server makes on its own within seconds",
    "operator": "the next reload, which this server makes when its operator asks",
    "never": (
        "this server is restarted: it reads its bundles once (okfx serve --watch reloads "
        "them when their files change)"
    ),
}


def changed_since_load(reloads: str | None) -> str:
    """:data:`CHANGED_SINCE_LOAD`, saying when search catches up (:data:`RELOADS`)."""
    when = ("once " if reloads == "never" else "after ") + RELOADS.get(reloads, RELOADS[None])
    return CHANGED_SINCE_LOAD.replace("after the next reload", when)


#: A read of a concept of a bundle whose folder the last reload could not read.
AS_LAST_READ = (
    "AS LAST READ: the bundle's folder could not be read at the last reload (list_bundles "
    "says why); this is the concept as it was last read."
)


#: A read of a concept of a git bundle whose last refresh failed.
AS_LAST_FETCHED = (
    "AS LAST READ: fetching the bundle's git source again failed at the last refresh "
    "(list_bundles says why); this is the concept as of the commit read before."
)


def gone_since_load(path: str, bundle: str, reloads: str | None = None) -> str:
    """Why a read finds no concept at ``path``, which the loaded bundle still lists; a
    file being saved is empty for a moment (author QA: 6 of 816 reads during saves were
    told the concept had gone)."""
    until = RELOADS.get(reloads, RELOADS[None])
    return (
        f"{path} in bundle {bundle!r} is gone, or no longer a concept, since the bundle was "
        f"loaded (or its file is being saved right now: read it again in a moment); search "
        f"and listings still show it until {until}"
    )


#: Files named in a folder's listing at most.
FOLDER_FILES = 20
#: Concepts a search with no hits names, at most, for a query close to their names.
CLOSE_NAMES = 3
#: How alike a missing word and a concept's name must be to be named (1.0: the same).
TYPO_CUTOFF = 0.8
#: How alike a missing word and a word of a concept's name must be for the query to be
#: respelt with it: a letter left out or doubled in a word of five letters or more
#: ("buton", "instrinsic", "enviroment"), not one changed in a short word, which is as
#: often another word ("apple" and apply are 0.8 alike).
RESPELL_CUTOFF = 0.85
#: Query words that no concept holds, named at most.
MISSING_WORDS = 10
# A run of letters: a query word as respelled() replaces it.
_LETTERS = re.compile(r"[^\W\d_]+")


def nothing_to_search(names: Sequence[str]) -> str:
    """A search of bundles that hold no concept: say so, and where to see why."""
    which = ", ".join(quoted(name) for name in names[:5])
    return (
        f"Bundle {which} has no concepts, so no search can find anything: list_bundles "
        "says why (its empty field), as okfx validate does."
        if len(names) == 1
        else f"Bundles {which} have no concepts, so no search can find anything: "
        "list_bundles says why (their empty fields), as okfx validate does."
    )


def missing_in_bundle(words: Sequence[str], bundle: str) -> str:
    """A search of several bundles whose first hit's ``bundle`` holds none of ``words``,
    which other loaded bundles hold."""
    shown = ", ".join(repr(w[:40]) for w in words[:MISSING_WORDS])
    return (
        f"No concept of bundle {quoted(bundle)}, the first hit's, contains the word(s) "
        f"{shown}: only other loaded bundles do, so its hits do not hold them."
    )


def first_by_meaning(confidence: float) -> str:
    """A hybrid search whose first hit holds no word of the query and is not near it
    (``confidence`` under 0.5), above hits that hold some of its words."""
    return (
        f"The first hit holds no word of the query and is not near it by meaning "
        f"(confidence {confidence:.2f}): a guess; hits after it hold some of the query's "
        "words."
    )


def all_by_meaning(confidence: float) -> str:
    """A hybrid search whose hits all hold no word of the query, the first not near it
    (``confidence`` under 0.5), while concepts holding its words rank below them."""
    return (
        f"No hit holds a word of the query: each was found by meaning alone, and the first "
        f"is not near it (confidence {confidence:.2f}): guesses. Concepts that hold the "
        "query's words rank below these: ask for more hits with limit, or grep_concepts "
        "for its rarest word."
    )


def no_words(query: str) -> str:
    """A search with nothing to search for: an empty query, punctuation, or only common
    words, which found nothing (docs QA: "try fewer or other words" came first)."""
    if not query.strip():
        return "The query is empty: ask with the words of the subject."
    return (
        f"{quoted(query)} has no searchable words (only common words such as 'the' and "
        "'what', or punctuation): ask with the words of the subject."
    )


def no_hits(
    query: str,
    hidden: str,
    close: list[dict[str, str]] | None = None,
    respelt: str | None = None,
    filtered: bool = False,
) -> str:
    """A search found nothing admissible: the concepts named close to the query (or the
    query ``respelt`` with the bundle's words), what to try, then what the filters hid.
    When a filter the caller chose hid matches (``filtered``), that is the cause, and it
    comes first (viewer QA: "try fewer or other words" for words that matched 10
    concepts a tag filter hid)."""
    if filtered and hidden:
        return (
            f"Concepts match {quoted(query)}, but not within the filters: {hidden} Widen or "
            "drop the filter to see them."
        )
    advice = f"No concept matches {quoted(query)}." + close_sentence(close, respelt, query)
    advice += (
        " Try fewer or other words, grep_concepts for an exact name or phrase, or "
        "list_concepts with a type or tag to browse."
    )
    return f"{advice} {hidden}" if hidden else advice


def missing_words(
    words: Sequence[str],
    hidden: str,
    hybrid: bool = False,
    close: list[dict[str, str]] | None = None,
    respelt: str | None = None,
    by_meaning: bool = False,
    query: str = "",
) -> str:
    """A search found hits, but some of the query's words are in no concept: say which,
    so that a misspelling or a word the bundle does not use is seen as such. With
    ``by_meaning`` (hybrid hits holding no word of the query) say that they are guesses,
    rather than ask to check the spelling of words that may be right (hybrid QA)."""
    shown = ", ".join(repr(w[:40]) for w in words[:MISSING_WORDS])
    more = f" and {len(words) - MISSING_WORDS} more" if len(words) > MISSING_WORDS else ""
    if by_meaning and hybrid:
        advice = (
            f"No concept contains the word(s) {shown}{more}, and no hit holds any word of "
            "the query: every hit was found by meaning alone, a guess (its confidence says "
            "how near), not an answer that names what was asked. The bundle may not "
            "cover it; concepts with a close name, if any, are in did_you_mean."
        )
        advice += close_sentence(close, respelt, query)
        return f"{advice} {hidden}" if hidden else advice
    found = (
        "hits found by meaning may still be about them"
        if hybrid
        else "the hits match the query's other words"
    )
    advice = (
        f"No concept contains the word(s) {shown}{more}: {found}. Check the spelling, "
        "or use the bundle's own words for it."
    )
    advice += close_sentence(close, respelt, query)
    return f"{advice} {hidden}" if hidden else advice


def rows_capped(most: int) -> str:
    """A listing asked for more rows than one page holds."""
    return f"limit is at most {most}: this page holds {most} rows; continue from next_offset."


def limit_capped(most: int) -> str:
    """A search asked for more hits than one result holds."""
    return (
        f"limit is at most {most}: these are the best {most} hits. Narrow the query, or "
        "filter by directory, type or tags, to see others."
    )


def common_words_only(query: str) -> str:
    """A search whose words are all common ones: its hits say nothing of the subject."""
    return (
        f"{quoted(query)} holds only common words (such as 'the', 'what', 'does'): a page "
        "matches them whatever it is about, and no hit's confidence counts them. Ask with "
        "the words of the subject."
    )


def close_sentence(
    close: list[dict[str, str]] | None, respelt: str | None = None, query: str = ""
) -> str:
    """The sentence naming the concepts of ``did_you_mean`` (after a space), or ''; for
    a query ``respelt`` with the bundle's words, the sentence saying so, naming the words
    it spelt otherwise (agent QA: the whole query, cut mid-word at 80 characters)."""
    if respelt is not None:
        found = "its best hits are in did_you_mean" if close else "it finds nothing either"
        changed = [
            f"{quoted(was)} as {quoted(now)}"
            for was, now in zip(_LETTERS.findall(query), _LETTERS.findall(respelt), strict=False)
            if was != now
        ]
        if changed:
            return f" Spelt with the bundle's words ({', '.join(changed)}), the query: {found}."
        return f" Spelt with the bundle's words, the query reads {quoted(respelt)}: {found}."
    if not close:
        return ""
    names = "; ".join(f"{quoted(c['title'])} ({c['path']})" for c in close)
    return f" Concepts with a close name (did_you_mean): {names}."


def close_names_of(bundles: list[Bundle], words: Sequence[str]) -> list[dict[str, str]]:
    """:func:`close_names` of each of the first words no concept holds, at most
    :data:`CLOSE_NAMES` in all. Such a word is as often a real word the bundle does not
    use ("server", "came") as a misspelling, so only words of five letters or more are
    looked up, and only names at least :data:`TYPO_CUTOFF` alike are named ("trpis" and
    Trips are 0.8 alike, "server" and Reserves 0.71). Several such words are first looked
    up together, as a name of several words misspelt ("comand palete" for Command
    Palette, which neither word is 0.8 alike alone)."""
    found: list[dict[str, str]] = []
    long = [w for w in words if len(w) >= 5][:CLOSE_NAMES]
    probes = ([" ".join(words[:CLOSE_NAMES])] if len(words) > 1 else []) + long
    for word in probes:
        for item in close_names(bundles, word, TYPO_CUTOFF):
            if item not in found and len(found) < CLOSE_NAMES:
                found.append(item)
    return found


def respelled(bundles: list[Bundle], query: str, words: Sequence[str]) -> str | None:
    """``query`` with each of ``words`` (words no concept holds, of five letters or more)
    spelt as the closest word of a concept's name (:meth:`Bundle.name_words`, at least
    :data:`RESPELL_CUTOFF` alike): "instrinsic hieght widget" -> "intrinsic hieght widget";
    None when no word has such a spelling. A word replaced where the query has it as a
    whole word, in any case."""
    spelt: dict[str, str] = {}
    for word in words:
        if len(word) < 5 or not word.isalpha():
            continue
        for b in bundles:
            found = b.name_words().closest(word, RESPELL_CUTOFF)
            if found is not None and not _other_form(word, found):
                spelt[word] = found
                break
    if not spelt:
        return None
    return _LETTERS.sub(lambda m: spelt.get(m.group().casefold(), m.group()), query)


def _other_form(word: str, found: str) -> bool:
    """Whether ``found`` is ``word`` or only adds or drops an ending of two letters or
    more: another form of the word ("secretly" and secret), no misspelling of it; or
    only adds or drops a first letter: as often another word ("election" and selection,
    agent QA: "leader election" was respelt, as if misspelt, with the same hits), or one
    of the prefixes that make a word of a word (:data:`_PREFIXES`: "redesign" and design,
    agent QA: "redesign" was respelt as a typo)."""
    short, long = sorted((word, found), key=len)
    if long.endswith(short) and (
        len(long) - len(short) == 1 or long[: len(long) - len(short)] in _PREFIXES
    ):
        return True
    return long.startswith(short) and len(long) - len(short) != 1


#: English prefixes that make another word of a whole word (re+design, un+safe): a word
#: that only adds or drops one of them is no misspelling.
_PREFIXES = frozenset(
    "re un in im il ir de dis mis non pre pro sub super co counter over under out multi "
    "inter anti auto semi post".split()
)


def close_names(
    bundles: list[Bundle], query: str, cutoff: float | None = None
) -> list[dict[str, str]]:
    """The concepts whose file name or title is close to a query that found nothing (a
    typo, "custommer" for the customers table), at most :data:`CLOSE_NAMES`, the best of
    each bundle first. From each bundle's name index (:mod:`okfx.search.suggest`), which
    compares a bounded number of candidates whatever the bundle's size."""
    per_bundle = [(b, b.suggest(query, CLOSE_NAMES, cutoff)) for b in bundles]
    found: list[dict[str, str]] = []
    for rank in range(CLOSE_NAMES):
        for b, paths in per_bundle:
            if rank < len(paths) and len(found) < CLOSE_NAMES:
                concept = b.get(paths[rank])
                title = concept.title if isinstance(concept, Concept) else paths[rank]
                found.append({"bundle": b.name, "path": paths[rank], "title": title})
    return found


def past_end(offset: int, chars: int) -> str:
    return (
        f"offset {offset} is past the end of the body ({chars} characters): nothing is left "
        "to read; call with offset=0 to read from the start."
    )


def past_last_row(offset: int, total: int) -> str:
    return (
        f"offset {offset} is past the last of the {total} concepts that match: "
        "call with offset=0 for the first page."
    )


def folder_not_file(bundle: Bundle, folder: str) -> NotFound | None:
    """The error for ``read_resource`` on a folder path: it names the files in it (the
    non-concept ones first to read with read_resource), or ``None`` if no file is in it."""
    name = folder.rstrip("/") or "/"
    if name not in bundle.directories:
        return None  # the common case, a wrong path: no scan of every file
    prefix = name.rstrip("/") + "/"
    inside = sorted(f for f in bundle.files if f.startswith(prefix))
    if not inside:
        return None
    concepts = [f for f in inside if isinstance(bundle.get(f), Concept)]
    readable = [f for f in inside if not isinstance(bundle.get(f), Concept)]
    message = f"{name} is a folder, not a file; "
    if readable:
        shown = ", ".join(readable[:FOLDER_FILES])
        more = f" and {len(readable) - FOLDER_FILES} more" if len(readable) > FOLDER_FILES else ""
        message += f"read one of its {len(readable)} files: {shown}{more}"
    else:
        message += "it holds no file other than concepts"
    if concepts:
        message += f" ({len(concepts)} concepts in it are read with read_concept)"
    return NotFound(message + ".", path=folder, suggestions=readable[:FOLDER_FILES])


def reworded(text: str, words: dict[str, str]) -> str:
    """A tool's sentence with each of its tool words (``grep_concepts for``, ``pass
    include_deprecated=true``) replaced by a front end's (a command, a page's link)."""
    for tool_words, replacement in words.items():
        text = text.replace(tool_words, replacement)
    return text


#: Values a notice lists for a filter value no concept has.
FILTER_VALUES = 12


def unknown_filter_values(
    bundles: list[Bundle], type_: object, tags: object, directory: object
) -> str:
    """A sentence for each filter value that no concept of ``bundles`` has, listing the
    values there are, the closest first, else the most held (agent QA: a guessed type or
    folder emptied the result, and "try fewer or other words" pointed at the query).
    Empty when every value asked for is held somewhere. Values are matched as the filter
    matches them: a type or tag in any case, a folder as a subtree."""
    from difflib import get_close_matches

    from okfx.search.filters import normalize_directory

    said: list[str] = []

    def listing(asked: str, held: dict[str, tuple[str, int]]) -> str:
        # values holding the asked one as a word first ('BigQuery Table' for 'table':
        # agent QA), then the close ones, then the most held
        words = [v for v in sorted(held, key=lambda v: (-held[v][1], v)) if asked in v.split()]
        close = get_close_matches(asked, list(held), n=FILTER_VALUES, cutoff=0.6)
        common = sorted(held, key=lambda value: (-held[value][1], value))
        shown = list(dict.fromkeys([*words, *close, *common]))
        listed = ", ".join(quoted(held[value][0]) for value in shown[:FILTER_VALUES])
        more = len(shown) - FILTER_VALUES
        return listed + (f" and {more} more" if more > 0 else "") if listed else "none"

    for facet, asked in (("type", type_), *(("tag", tag) for tag in _asked_tags(tags))):
        if not isinstance(asked, str) or not asked.strip():
            continue
        held: dict[str, tuple[str, int]] = {}
        for b in bundles:
            for value, (shown, count) in b.facets().values(facet).items():
                before = held.get(value, (shown, 0))
                held[value] = (before[0], before[1] + count)
        wanted = asked.strip().casefold()
        if wanted not in held:
            what = "has type" if facet == "type" else "is tagged"
            said.append(f"No concept {what} {quoted(asked)} ({facet}s: {listing(wanted, held)}).")
    try:
        folder = normalize_directory(directory)
    except OKFError:
        folder = None
    if folder is not None and not any(b.facets().mask("dir", folder) for b in bundles):
        # The top folders that hold a concept (agent QA: '/okf/', which holds none, was
        # listed as a folder to try).
        tops = {
            top
            for b in bundles
            for d in b.directories
            if d.count("/") == 1
            and (top := d.rstrip("/") + "/") != "/"
            and b.facets().mask("dir", top)
        }
        near = {top: (top, 1) for top in sorted(tops)}
        # and a folder at any depth one slip away, first (CLI QA: '/functions/function-kr/'
        # got the top folders only, not '/functions/function-kro/')
        deep = {d.rstrip("/") + "/": b for b in bundles for d in b.directories}
        for close in get_close_matches(folder, list(deep), n=FILTER_VALUES, cutoff=0.8):
            if close not in near and deep[close].facets().mask("dir", close):
                near[close] = (close, 1)
        said.append(f"No concept is in {quoted(folder)} (folders: {listing(folder, near)}).")
        said.extend(nested_in(bundles, folder))
    return " ".join(said)


def nested_in(bundles: list[Bundle], folder: str) -> list[str]:
    """A sentence for each nested bundle at, in or above ``folder``: its concepts are no
    concepts of this bundle (agent QA: only okfx validate named it)."""
    said: list[str] = []
    for b in bundles:
        for root in b.nested_bundles:
            inner = root.rstrip("/") + "/"
            if inner.startswith(folder) or folder.startswith(inner):
                said.append(
                    f"{quoted(inner)} holds a bundle of its own (its index.md declares "
                    f"okf_version), which okfx does not read as part of {quoted(b.name)}: "
                    "load it as a bundle to search it."
                )
    return said


def _asked_tags(tags: object) -> list[object]:
    """The tags a filter asks for, as :class:`~okfx.search.filters.ConceptFilter` reads
    them: a lone string is one tag."""
    if isinstance(tags, str):
        return [tags]
    return list(tags) if isinstance(tags, list | tuple | set | frozenset) else []


def statuses_as_written(concepts: Iterable[Concept], what: str) -> str:
    """A sentence naming the statuses spec §5.4 does not define that ``concepts`` (hits
    or rows, ``what``) were written with, read as stable (agent QA: a producer's
    ``status: generated`` on every stub page showed as ``stable`` in every hit, and only
    read_concept said otherwise); empty when there is none."""
    written: dict[str, int] = {}
    for concept in concepts:
        raw = status_as_written(concept.frontmatter, concept.status)
        if raw is not None:
            written[raw[:40]] = written.get(raw[:40], 0) + 1
    if not written:
        return ""
    n = sum(written.values())
    names = ", ".join(f"{word!r}" for word in sorted(written, key=lambda w: (-written[w], w)))
    return (
        f"{n} {what}{'' if n == 1 else 's'} {'has' if n == 1 else 'have'} a status spec §5.4 "
        f"does not define ({names}), shown as the status okfx reads it as; read_concept "
        "says so."
    )
