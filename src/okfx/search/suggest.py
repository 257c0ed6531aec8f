"""Did you mean: the names closest to one that does not exist, from an index built once.

Agents guess paths all the time, so a wrong path must cost about what a right one does.
Comparing the guess with every name of the bundle (``difflib.get_close_matches``, as
okfx did first) grows with the bundle: 0.55 s at 10k concepts, while the GIL stalls
every other client. :class:`NameIndex` keeps, for each character trigram of an entry's
file name and title, the entries that have it, and the entries of each folder. A probe
counts the entries sharing its rarer trigrams (at most :data:`BUDGET` postings, whatever
the size of the bundle), keeps the few that share the most and scores only those.

A typo, a transposition or a missing letter changes at most three trigrams of a name; a
wrong folder or a missing ``.md`` changes none of the file name's; a title given for a
path shares its words with the file name or the title; so the entry meant stays among
the few kept. A misspelt folder is matched to the closest folder the same way.

The score is the indel similarity ``2 * LCS / (len(a) + len(b))`` (LCS: the longest
common subsequence, found bit-parallel), which is at least difflib's ratio, so whatever
difflib suggested still passes the same cutoff. An entry is scored by its full name (a
concept id such as ``metrics/revenue``), its file name (``revenue``) and its title, and
ranked by the best of the three.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain

from okfx.search.versions import release_family, release_of

__all__ = [
    "BUDGET",
    "CUTOFF",
    "NameIndex",
    "WordIndex",
    "closest",
    "fold",
    "name_words",
    "similarity",
]

#: A name must score at least this to be suggested (difflib's default cutoff).
CUTOFF = 0.6
#: Postings counted per probe at most; the rarest trigrams are counted first.
BUDGET = 4096
# Entries kept by shared trigrams, then scored (about 20 us each): more finds more, fewer
# cost less.
_SCORED = 16
#: Release copies of shortlisted entries scored beside them, at most.
_COPIES = 64
# Characters of a probe compared at most: a name is never longer than a path.
_MAX_PROBE = 512
_SEPARATORS = re.compile(r"[\W_]+")
# A run of letters, and the words of an ASCII one written in camelCase or PascalCase.
_LETTERS = re.compile(r"[^\W\d_]+")
_CAMEL_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def fold(text: str) -> str:
    """Casefolded words separated by one space: ``dock_Availability`` -> ``dock availability``."""
    return _SEPARATORS.sub(" ", text.casefold()).strip()


def name_words(name: str) -> list[str]:
    """The casefolded words of a name of three letters or more, a camelCase run's parts
    besides the run (``EnvironmentConfig v2`` -> environmentconfig, environment,
    config): what :class:`WordIndex` respells to. A regex pass, many times faster than
    the search analyzer, for a bundle's every title."""
    words: list[str] = []
    for run in _LETTERS.findall(name):
        words.append(run.casefold())
        if run.isascii() and not run.islower():
            words.extend(part.lower() for part in _CAMEL_PARTS.findall(run))
    return [word for word in words if len(word) >= 3]


def _grams(text: str) -> set[str]:
    padded = f" {text} "
    return {padded[at : at + 3] for at in range(len(padded) - 2)}


class _Probe:
    """One probe string, ready to be compared with many names."""

    __slots__ = ("masks", "size", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.size = len(text)
        masks: dict[str, int] = {}
        for at, char in enumerate(text):
            masks[char] = masks.get(char, 0) | (1 << at)
        self.masks = masks

    def similarity(self, name: str) -> float:
        """``2 * LCS / (len(probe) + len(name))``, 0.0 for two empty strings.

        The LCS is counted bit-parallel (Allison and Dix 1986; Hyyrö 2004): bit ``i`` of
        ``row`` is cleared once the subsequence can end at probe character ``i``.
        """
        total = self.size + len(name)
        if not total:
            return 0.0
        if 2 * min(self.size, len(name)) < CUTOFF * total:
            return 0.0  # too different in length to reach the cutoff
        full = (1 << self.size) - 1
        row = full
        masks = self.masks
        for char in name:
            matched = row & masks.get(char, 0)
            row = (row + matched) | (row - matched)
        common = self.size - (row & full).bit_count()
        return 2.0 * common / total


def similarity(a: str, b: str) -> float:
    """The indel similarity of ``a`` and ``b``: ``2 * LCS / (len(a) + len(b))``, in 0..1
    (0.0 when the lengths alone keep it under :data:`CUTOFF`)."""
    return _Probe(a).similarity(b)


def closest(probe: str, choices: Sequence[str], limit: int = 5) -> list[str]:
    """The ``choices`` closest to ``probe`` (case-insensitive, at least :data:`CUTOFF`),
    best first; for short lists such as a document's headings or the loaded bundles."""
    compare = _Probe(probe.strip().casefold()[:_MAX_PROBE])
    scored = [(compare.similarity(choice.casefold()), at) for at, choice in enumerate(choices)]
    ranked = sorted((-score, at) for score, at in scored if score >= CUTOFF)
    return [choices[at] for _, at in ranked[:limit]]


def _shortlist(
    postings: dict[str, array[int]],
    grams: Iterable[str],
    size: int,
    held_by: array[int] | None = None,
) -> list[int]:
    """The ``size`` entries that hold the most of ``grams``, counting the rarest first and
    at most :data:`BUDGET` postings; none when even the rarest is held by more. With
    ``held_by`` (each entry's own number of grams), of entries that hold as many, those
    with the fewest others come first: "unity-catalogue" shares its grams with every
    "...-unity-catalog" page alike, and the first 16 in path order had left out
    ``unity-catalog.md`` itself (viewer QA, databricks)."""
    lists = sorted((held for gram in grams if (held := postings.get(gram))), key=len)
    counted: list[array[int]] = []
    spent = 0
    for held in lists:
        spent += len(held)
        if spent > BUDGET:
            break
        counted.append(held)
    if not counted:
        return []
    shared = Counter(chain.from_iterable(counted))
    top = shared.most_common(size + 1)
    if held_by is None or len(top) <= size or top[size][1] < top[size - 1][1]:
        return [at for at, _ in top[:size]]  # no tie across the cut
    # Entries tied at the cut: those with the fewest grams of their own first.
    floor = top[size - 1][1]
    above = [at for at, count in top if count > floor]
    tied = sorted((held_by[at], at) for at, count in shared.items() if count == floor)
    return above + [at for _, at in tied[: size - len(above)]]


def _key(text: str) -> str:
    """A path or name as names are compared: ``/Metrics/Revenue.md`` -> ``metrics/revenue``."""
    return text.strip().strip("/").removesuffix(".md").casefold()[:_MAX_PROBE]


def _within(probe: str, title: str) -> float:
    """A score for a probe the title holds whole, which similarity misses for a title
    much longer than it: ``CUTOFF`` plus the share of the title it is, scaled to the
    rest. Only for a probe of two CJK characters or four others at least (Chinese QA:
    the path 缓存雪崩 named nothing, beside the title 缓存雪崩 / 穿透 / 击穿)."""
    if len(probe) < (4 if probe.isascii() else 2) or probe not in title:
        return 0.0
    return CUTOFF + (1.0 - CUTOFF) * len(probe) / len(title)


class NameIndex:
    """Close paths to a probe among entries ``(path, title)``, from trigram postings.

    A path's file name is its last part; ``/`` and ``.md`` around it do not count.
    Built once per loaded bundle and read-only afterwards, so it is safe to share
    between threads.
    """

    def __init__(self, entries: Iterable[tuple[str, str]]) -> None:
        self._entries: list[tuple[str, str]] = []
        postings: dict[str, list[int]] = {}
        sizes: list[int] = []
        for at, (path, title) in enumerate(entries):
            self._entries.append((path, title))
            folder, _, leaf = _key(path).rpartition("/")
            # a folder's key ends in "/", which no trigram of folded text holds
            grams = _grams(fold(leaf)) | _grams(fold(title)) | {f"{folder}/"}
            sizes.append(len(grams))
            for gram in grams:
                held = postings.get(gram)
                if held is None:
                    postings[gram] = [at]
                else:
                    held.append(at)
        # The copies of a page kept once per release folder, so all of them are scored
        # when one is shortlisted (agent QA: 16 of 20 copies of backup-restore.md were
        # shortlisted in path order, the newest releases left out).
        copies: dict[tuple[str, str], list[int]] = {}
        for at, (path, _) in enumerate(self._entries):
            family = release_family(path)
            if family is not None:
                copies.setdefault(family, []).append(at)
        self._copies = {at: held for held in copies.values() if len(held) > 1 for at in held}
        # 4-byte arrays: a fraction of the memory of lists of int objects
        self._postings = {gram: array("i", held) for gram, held in postings.items()}
        self._sizes = array("i", sizes)
        self._folders = sorted(gram[:-1] for gram in self._postings if gram.endswith("/"))
        by_gram: dict[str, list[int]] = {}
        for at, folder in enumerate(self._folders):
            for gram in _grams(fold(folder)):
                by_gram.setdefault(gram, []).append(at)
        self._folder_grams = {gram: array("i", held) for gram, held in by_gram.items()}

    def __len__(self) -> int:
        return len(self._entries)

    def _with_copies(self, shortlist: list[int]) -> list[int]:
        """``shortlist`` and the other release copies of its entries, at most
        :data:`_COPIES` more."""
        if not self._copies:
            return shortlist
        seen = dict.fromkeys(shortlist)
        for at in shortlist:
            for other in self._copies.get(at, ()):
                if len(seen) >= len(shortlist) + _COPIES:
                    return list(seen)
                seen.setdefault(other)
        return list(seen)

    def _folder(self, folder: str) -> str:
        """``folder`` when some entry is in it, else the closest folder that is."""
        if f"{folder}/" in self._postings or not folder:
            return folder
        # A release that is not there (3.20 of .../3.14 ... 3.19): the newest release of
        # that place (agent QA: .../scalardb/3.20/x.md was told another product's 3.10).
        family = release_family(f"{folder}/_")
        if family is not None:
            copies = [
                f for f in self._folders
                if f.startswith(family[0]) and release_family(f"{f}/_") == family
            ]  # fmt: skip
            if copies:
                return max(copies, key=lambda f: release_of(f"{f}/_"))
        near = [self._folders[at] for at in _shortlist(self._folder_grams, _grams(folder), 8)]
        near.sort(key=lambda f: release_of(f"{f}/_"), reverse=True)  # equals: newest first
        return next(iter(closest(folder, near, 1)), folder)

    def suggest(self, text: str, limit: int = 5, cutoff: float = CUTOFF) -> list[str]:
        """Paths whose full path, file name or title is close to ``text`` (a similarity
        of ``cutoff`` at least), or whose title holds it (:func:`_within`), best first (of
        two equal scores, by full path, then file name, then title)."""
        key = _key(text)
        folder, _, leaf = key.rpartition("/")
        if not leaf:
            return []
        wanted = _grams(fold(leaf)) | {f"{self._folder(folder)}/"}
        whole, file_name = _Probe(key), _Probe(leaf)
        best: dict[str, tuple[float, int, float]] = {}  # path -> (score, -kind, whole)
        for at in self._with_copies(_shortlist(self._postings, wanted, _SCORED, self._sizes)):
            path, title = self._entries[at]
            name = _key(path)
            folded = title.casefold()
            scores = (
                whole.similarity(name),
                file_name.similarity(name.rpartition("/")[2]),
                whole.similarity(folded),
                _within(leaf, folded),
            )
            for kind, score in enumerate(scores):
                if score >= cutoff and (score, -kind) > best.get(path, (0.0, -9))[:2]:
                    best[path] = (score, -kind, scores[0])
        # Of equal scores, the path closer to the one asked first: one file name kept in
        # many folders (agent QA: /products/scalardb/3.20/backup-restore.md was told
        # scalardb-community/3.10's and 3.11's, not scalardb/3.19's, by path order).
        # Then the newest release (3.19 before 3.14), then by path.
        ranked = sorted(best.items())
        ranked.sort(key=lambda item: release_of(item[0]), reverse=True)
        ranked.sort(key=lambda item: (-item[1][0], -item[1][1], -item[1][2]))
        return [path for path, _ in ranked[:limit]]


class WordIndex:
    """The word closest to a misspelt one among a set of words (the words of a bundle's
    concept names), from the same trigram postings as :class:`NameIndex`: "instrinsic"
    -> intrinsic, "enviroment" -> environment. Read-only once built."""

    def __init__(self, words: Iterable[str]) -> None:
        self._words = sorted(set(words))
        postings: dict[str, list[int]] = {}
        for at, word in enumerate(self._words):
            for gram in _grams(word):
                postings.setdefault(gram, []).append(at)
        self._postings = {gram: array("i", held) for gram, held in postings.items()}

    def __len__(self) -> int:
        return len(self._words)

    def closest(self, word: str, cutoff: float = CUTOFF) -> str | None:
        """The word most alike ``word`` (its indel similarity at least ``cutoff``, two
        letters swapped counting as one left out: "sqaush" -> squash), or None; of two
        equally alike, the one with ``word``'s first letter ("catolog" is catalog, not
        autolog: agent QA), then the first in order."""
        probe = _Probe(word[:_MAX_PROBE])
        best: str | None = None
        best_key = (cutoff, False)
        for at in sorted(_shortlist(self._postings, _grams(word), _SCORED)):
            candidate = self._words[at]
            score = probe.similarity(candidate)
            if score < 1.0 and _swapped(word, candidate):
                score = max(score, 2 * len(word) / (2 * len(word) + 1))
            key = (score, candidate[:1] == word[:1])
            if key > best_key or (best is None and key == best_key):
                best, best_key = candidate, key
        return best


def _swapped(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with two adjacent letters swapped."""
    if len(a) != len(b):
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    if len(diff) != 2:
        return False
    i, j = diff
    return j == i + 1 and a[i] == b[j] and a[j] == b[i]
