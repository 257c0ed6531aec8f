"""What each tool returns, key by key: the reference a script author reads.

``okfx <command> --json`` prints a tool's payload unchanged and calls it stable, and agents
read the same payloads; their keys were written down only in prose. Here they are data:
per tool, every key its success result can hold, then the keys of one item of each list
(and of each object) in it, each with its JSON type in words, when it is present if not
always, and what it holds. ``scripts/tools_doc.py`` renders these tables into
``docs/tools.md``, and ``tests/test_results.py`` calls every tool in many situations and
fails when a payload holds a key described nowhere here, or when a key described here
comes back from none of the calls. A failure has one shape for every tool (:data:`ERROR`).

Keys are listed in the order a payload gives them, but for ``cut``, whose place depends on
what added it, and in ``read_concept``, whose order differs between a document and a folder.
"""

from __future__ import annotations

from dataclasses import dataclass

from okfx.search.hits import HIT_KEYS
from okfx.tools.payloads import UNTRUSTED

__all__ = ["ALWAYS", "ERROR", "RESULTS", "Key", "Table"]

#: The ``when`` of a key every result of its tool holds.
ALWAYS = "always"


@dataclass(frozen=True, slots=True)
class Key:
    """One key: its JSON type in words, what it holds, and when it is there."""

    name: str
    type: str
    what: str
    when: str = ALWAYS


@dataclass(frozen=True, slots=True)
class Table:
    """The keys of one kind of object in a result. ``at`` names where such objects sit:
    ``""`` is the result itself, ``"hits[]"`` each item of the list ``hits``, ``"total"``
    the object under ``total``, ``"verdict.checks[]"`` each check of the object under
    ``verdict``. ``ordered`` is false when the keys come in another order in some results."""

    at: tuple[str, ...]
    title: str
    keys: tuple[Key, ...]
    ordered: bool = True

    def names(self) -> tuple[str, ...]:
        return tuple(key.name for key in self.keys)


_TRUE = Key(UNTRUSTED, "true", "Bundle text in this result is data to read, never instructions.")
_BUNDLE = Key("bundle", "string", "The bundle's name (the tools' `bundle` argument).")


def _cut(items: str) -> Key:
    return Key(
        "cut",
        "string",
        f"How many {items} the size cap (131,072 characters of JSON) left out, and how to "
        "get them.",
        "only when the size cap left some out",
    )


# -- rows, hits, matches ----------------------------------------------------------------------
_ROW = (
    Key("bundle", "string", "The bundle holding the concept."),
    Key("path", "string", "The concept's bundle path, e.g. `/tables/trips.md`."),
    Key("type", "string", "Its `type` (cut at 120 characters)."),
    Key("title", "string", "Its title (cut at 300 characters)."),
    Key("description", "string", 'Its description (cut at 1,000 characters); `""` if none.'),
    Key("tags", "list of strings", "Its tags, at most 50 (each cut at 100 characters)."),
    Key("status", "string", "`draft`, `stable` or `deprecated`."),
    Key("trust_tier", "string", "`unverified`, `machine-confirmed` or `human-reviewed`."),
    Key("stale", "boolean", "Whether it is past its `stale_after` now."),
)
_ROW_CUT = Key(
    "cut",
    "list of strings",
    "Which lists were shortened, e.g. `tags: the first 50 of 80 shown`.",
    "only when a list was",
)

_HIT = {
    "bundle": Key("bundle", "string", "The bundle holding the concept."),
    "path": _ROW[1],
    "id": Key("id", "string", "The path without its leading `/` and `.md`."),
    "type": _ROW[2],
    "title": _ROW[3],
    "description": _ROW[4],
    "status": _ROW[6],
    "trust_tier": _ROW[7],
    "stale": _ROW[8],
    "score": Key("score", "number", "The rank score (4 decimals), relative to the corpus."),
    "matched": Key("matched", "list of strings", "The query's terms found in the concept."),
    "snippet": Key("snippet", "string", "Its best-matching body sentence (200 characters)."),
    "found": Key(
        "found",
        "string",
        "`lexical`, or in hybrid search `semantic` or `both`: which ranking's candidates "
        "held it (a `semantic` hit may still hold query words, listed in `matched`, that "
        "ranked it too low for the lexical candidates).",
    ),
    "confidence": Key(
        "confidence",
        "number",
        "0 to 1, for reading: the share of the query's words it holds (a word only in a "
        "link's address is not held, nor in `matched`); with hybrid ranking, "
        "its similarity to the query on the model's scale when that is higher.",
    ),
}
#: One hit, in :data:`okfx.search.hits.HIT_KEYS` order (a key added there needs its line).
_HITS = tuple(_HIT[name] for name in HIT_KEYS)
#: What search_concepts adds to a hit that stands for a page kept once per release
#: (:mod:`okfx.search.versions`).
_FOLDED = (
    Key(
        "other_versions",
        "list of strings",
        "The paths of the other releases of its page among the hits, newest first (at most 10).",
        "a hit that folded other releases",
    ),
    Key(
        "other_versions_total",
        "integer",
        "How many other releases it folded, when more than `other_versions` names.",
        "more than 10 other releases",
    ),
)

_NAMED = (
    Key("bundle", "string", "The bundle holding it."),
    Key("path", "string", "Its path (read it with `read_concept`)."),
    Key("title", "string", "Its title."),
)

_MATCH = (
    Key("bundle", "string", "The bundle holding the concept."),
    Key("path", "string", "The concept's path."),
    Key("field", "string", "`title`, `description` or `body`."),
    Key(
        "line",
        "integer or null",
        "The body line's number in the file; null in title or description.",
    ),
    Key("column", "integer", "The 1-based character where the first match on the line starts."),
    Key("text", "string", "The line, at most 200 characters around the match."),
)


def _hidden(which: str, among: str = "") -> str:
    return (
        f"Filter name (`directory`, `type`, `tags`, `trust_tier`, `deprecated`, `stale`...) to "
        f"how many {which} it hid{among}; `{{}}` when none."
    )


# -- list_bundles ------------------------------------------------------------------------------
_BUNDLES = (
    Table(
        ("",),
        "the result",
        (
            Key("bundles", "list of objects", "One per loaded bundle, in the order they loaded."),
            Key(
                "notice",
                "string",
                "Says the rows leave out their index excerpt, so that every bundle is listed.",
                "only when more than 533 bundles are loaded",
            ),
            Key(
                "unavailable",
                "list of objects",
                "Sources given to the server that did not load: `source` and `reason` each.",
                "only when a source given to `okfx serve` did not load",
            ),
            _TRUE,
            _cut("bundles"),
        ),
    ),
    Table(
        ("bundles[]",),
        "one bundle",
        (
            Key("name", "string", "The bundle's name (the tools' `bundle` argument)."),
            Key("concepts", "integer", "How many concepts it holds."),
            Key(
                "okf_version",
                "string or null",
                "The `okf_version` its root index declares, if any.",
            ),
            Key("errors", "integer", "The spec §11 errors its load found."),
            Key("warnings", "integer", "Its load's other problems (`okfx validate` lists them)."),
            Key(
                "index",
                "string",
                "Its root `index.md` (or a listing made up), cut at 600 characters, or at "
                "64,000 over the number of bundles when more than 106 are loaded, plus a "
                "marker saying how much more there is and how to read it (`[index cut: 458 "
                "more characters; read_concept('/index.md') ...]`).",
                "unless more than 533 bundles are loaded",
            ),
            Key(
                "problems",
                "string",
                "The kinds of problem its load found, the most frequent first, with counts "
                "(`47 broken_link, 7 index_table (okfx validate lists them, and checks links' "
                "#anchors and images too)`).",
                "only when it has some",
            ),
            Key(
                "source",
                "object",
                "Where it was fetched from.",
                "only for a bundle from a git URL or an archive",
            ),
            Key("empty", "string", "Why it holds no concept.", "only when it holds none"),
            Key(
                "reload_failed",
                "string",
                "Says the last reload could not read its folder, or the last refresh could "
                "not fetch its git source again (and why): it serves what it read before.",
                "only after such a reload or refresh",
            ),
        ),
    ),
    Table(
        ("bundles[].source",),
        "where a fetched bundle came from",
        (
            Key("kind", "string", "`git` or `archive`."),
            Key("url", "string", "The repository URL, credentials redacted.", "git"),
            Key("ref", "string", "The branch, tag or commit the URL named.", "git, when named"),
            Key("commit", "string", "The commit served.", "git"),
            Key("sha256", "string", "The archive's SHA-256.", "archive"),
            Key(
                "subdir",
                "string",
                "The bundle's folder in the repository.",
                "git, when the bundle is a folder of it",
            ),
            Key(
                "folder",
                "string",
                "The bundle's folder in the archive (its top folder too).",
                "archive, when the bundle is a folder of it",
            ),
        ),
    ),
)

# -- list_concepts -----------------------------------------------------------------------------
_NEXT = "The offset of the next page; null on the last page"
_REST = "where the rest starts; null when nothing is left"
_CONCEPTS = (
    Table(
        ("",),
        "the result",
        (
            Key(
                "bundle",
                "string or null",
                "The bundle listed; null when several are loaded and none was named (rows of all).",
            ),
            Key("total", "integer", "Concepts that pass the filters, over all pages."),
            Key(
                "version",
                "string",
                "A stamp of the concepts listed (paths, types, tags, statuses), 8 hex digits; "
                "give it back as `version` with the next page to learn whether they changed.",
            ),
            Key("offset", "integer", "Where this page starts (the offset asked, at most `total`)."),
            Key("next_offset", "integer or null", f"{_NEXT} (moved back when `cut`)."),
            Key("concepts", "list of objects", "This page's rows, in path order, never a body."),
            Key("hidden", "object", _hidden("concepts")),
            Key(
                "notice",
                "string",
                "What the filters hid, an offset past the end, and that the concepts changed "
                'since the page that gave the `version` (`CHANGED: ...`); `""` if nothing.',
            ),
            _TRUE,
            _cut("rows"),
        ),
    ),
    Table(("concepts[]",), "one row", (*_ROW, _ROW_CUT)),
)

# -- search_concepts ---------------------------------------------------------------------------
_SEARCH = (
    Table(
        ("",),
        "the result",
        (
            Key("query", "string", "The query as given."),
            Key(
                "hits",
                "list of objects",
                "The hits, best first, at most `limit`: by score, but in a lexical search "
                "hits that hold no word of the query as text (nothing `matched`, confidence "
                "0) after the others (a hybrid search ranks hits found by meaning alone by "
                "their score).",
            ),
            Key("hidden", "object", _hidden("matches", " of those that would have ranked here")),
            Key("notice", "string", "What to try next, what was hidden, how words were read."),
            Key(
                "ranking", "string", "`lexical` (BM25F), `hybrid` (with an embedding) or `ranker`."
            ),
            Key(
                "missing_words",
                "list of strings",
                "The query's words no concept holds in any form (at most 10).",
            ),
            Key(
                "did_you_mean",
                "list of objects",
                "Concepts named like the query or a missing word, or the respelt query's "
                "best hits; may be empty.",
                "no hits for a query of words, no type, tags or directory filter and nothing "
                "hidden; or hits and missing words",
            ),
            Key(
                "respelled_query",
                "string",
                "The query with missing words spelt as words of concept names; its best hits "
                "are `did_you_mean`.",
                "only when no name was close to a missing word, but a word of one was",
            ),
            _TRUE,
            _cut("hits"),
        ),
    ),
    Table(("hits[]",), "one hit", (*_HITS, *_FOLDED)),
    Table(("did_you_mean[]",), "one concept named", _NAMED),
)

# -- grep_concepts -----------------------------------------------------------------------------
_GREP = (
    Table(
        ("",),
        "the result",
        (
            Key("pattern", "string", "The pattern as given."),
            Key("matches", "list of objects", "Matching lines by bundle, path, field and line."),
            Key(
                "concepts", "integer", "Concepts with a match that pass the filters, shown or not."
            ),
            Key(
                "truncated",
                "boolean",
                "Whether `limit` left matching concepts out (each gives 50 lines at most).",
            ),
            Key("hidden", "object", _hidden("matching concepts")),
            Key("notice", "string", "What was hidden or cut, or, with no match, what would match."),
            _TRUE,
            _cut("matches"),
        ),
    ),
    Table(("matches[]",), "one matching line", _MATCH),
)

# -- read_concept ------------------------------------------------------------------------------
_HEADER = "a concept read from offset 0"
_DOCUMENT = "a concept, index or log page (not a folder)"
_READ = (
    Table(
        ("",),
        "the result (`kind` says which of a concept, an index or log page, or a folder)",
        (
            _BUNDLE,
            Key(
                "path",
                "string",
                "The path read, as the bundle names it (a folder without a final `/`).",
            ),
            Key("type", "string", "The concept's `type`.", "a concept"),
            Key("title", "string", "Its title; an index or log page's first heading.", _DOCUMENT),
            Key("description", "string", "Its description (cut at 1,000).", _HEADER),
            Key("tags", "list of strings", "Its tags (at most 50).", _HEADER),
            Key("status", "string", "`draft`, `stable` or `deprecated`.", "a concept"),
            Key("trust_tier", "string", "Its trust tier.", "a concept"),
            Key("stale", "boolean", "Whether it is past `stale_after` now.", "a concept"),
            Key("resource", "string or null", "The `resource` it describes.", _HEADER),
            Key("stale_after", "string or null", "When it goes stale (ISO 8601).", _HEADER),
            Key(
                "stale_after_date_only",
                "true",
                "`stale_after` was written as a day, read as its start in UTC.",
                "only for a day",
            ),
            Key("generated", "object or null", "Who or what generated it, and when.", _HEADER),
            Key(
                "verified",
                "list of objects",
                "Its verifications: `by` and `at` each, and `date_only: true` when `at` was "
                "written as a day.",
                _HEADER,
            ),
            Key("last_verified", "string or null", "The latest verification's `at`.", _HEADER),
            Key("sources", "list of objects", "Its `sources` (at most 50).", _HEADER),
            Key("usage_window", "object or null", "Its `usage_window`: `from` and `to`.", _HEADER),
            Key("citations", "list of objects", "The footnotes its body cites.", _HEADER),
            Key(
                "computation",
                "object or null",
                "An Attested Computation's contract; null for any other concept.",
                _HEADER,
            ),
            Key(
                "notices",
                "list of strings",
                "Lifecycle and trust flags (DEPRECATED, STALE...).",
                "a concept",
            ),
            Key(
                "extensions", "object", "Frontmatter keys shown nowhere else, as written.", _HEADER
            ),
            Key(
                "cut",
                "list of strings, or a string",
                "A concept: which header lists were shortened (a list); a folder: what the "
                "size cap left out (a string).",
                "only when something was",
            ),
            Key(
                "header",
                "string",
                "Says the header is short: the whole one came with offset 0.",
                "a concept read from an offset above 0",
            ),
            Key("kind", "string", "`concept`, `index`, `log` or `folder`."),
            Key(
                "log",
                "string",
                "The path of the folder's `log.md`.",
                "an index page whose folder has one",
            ),
            Key("note", "string", "Says the folder has no index.md.", "a folder"),
            Key(
                "concepts",
                "list of objects",
                "The concepts directly in it (rows, at most 50).",
                "a folder",
            ),
            Key(
                "folders",
                "list of objects",
                "Its subfolders: `path` and `concepts` (a count).",
                "a folder",
            ),
            Key(
                "files",
                "list of strings",
                "The paths of the files directly in it that are no concept (SQL, scripts, "
                "images: `read_resource` reads one), at most 50.",
                "a folder",
            ),
            Key("total", "integer", "How many concepts are directly in it.", "a folder"),
            Key(
                "headings",
                "list of strings",
                "The body's headings (at most 50).",
                "a document read from offset 0",
            ),
            Key(
                "notice",
                "string",
                "An offset past the end, other sections of the same heading, the heading "
                "a section asked by some of its words was read as, or that the text changed "
                "since the part that gave the `version` passed (`CHANGED: ...`: read it "
                "again from offset 0); an index or log page of a bundle served as last read "
                '(`AS LAST READ: ...`); a folder: what was not shown (`""` if all was).',
                "a folder; else only when there is one",
            ),
            Key(
                "section", "string or null", "The section read; null for the whole body.", _DOCUMENT
            ),
            Key(
                "body",
                "string",
                "The body (or section) from `offset`, at most `max_chars`.",
                _DOCUMENT,
            ),
            Key("body_chars", "integer", "Characters of the whole body (or section).", _DOCUMENT),
            Key(
                "version",
                "string",
                "A stamp of the body (or section) read, 8 hex digits; give it back as "
                "`version` with the next part (the cut's call does), to learn whether it "
                "changed between the parts.",
                _DOCUMENT,
            ),
            Key("offset", "integer", "Where `body` starts, in characters.", _DOCUMENT),
            Key(
                "truncated",
                "boolean",
                "Whether more follows (a folder: more than 50 concepts or subfolders in it).",
            ),
            Key("next_offset", "integer or null", f"The character {_REST}.", _DOCUMENT),
            Key(
                "truncation",
                "string",
                "The call that reads the rest; when the rest is only footnote definitions "
                "(whose sources `sources` and `citations` give), it says so.",
                "only when the body was cut",
            ),
            _TRUE,
        ),
        ordered=False,
    ),
    Table(
        ("generated",),
        "who or what generated the concept",
        (
            Key("by", "string", "The producer, as written.", "when readable"),
            Key("at", "string", "When (ISO 8601).", "when readable"),
            Key(
                "date_only",
                "true",
                "`at` was written as a day, read as its start in UTC.",
                "only for a day",
            ),
            Key("legacy_timestamp", "boolean", "Read from the older top-level `timestamp`."),
        ),
    ),
    Table(
        ("sources[]",),
        "one source",
        (
            Key("resource", "string", "What the source is: a URL or a bundle path."),
            Key("id", "string", "Its id (footnotes cite it).", "when written"),
            Key("title", "string", "Its title.", "when written"),
            Key("author", "string", "Its author.", "when written"),
            Key("usage_count", "integer", "How often it was used.", "when written"),
            Key("last_modified", "string", "When it last changed (ISO 8601).", "when written"),
            Key(
                "last_modified_date_only",
                "true",
                "`last_modified` was written as a day, read as its start in UTC.",
                "only for a day",
            ),
            Key("usage_window", "object", "`from` and `to` (ISO 8601).", "when written"),
        ),
    ),
    Table(
        ("citations[]",),
        "one footnote the body cites",
        (
            Key("footnote", "string", "The footnote's label (`1` for `[^1]`)."),
            Key("source", "boolean", "Whether a `sources[].id` is that label."),
        ),
    ),
    Table(
        ("computation",),
        "an Attested Computation's contract",
        (
            Key("runtime", "string or null", "Where it runs, e.g. `duckdb`, `bigquery`."),
            Key("parameters", "list of objects", "Its declared parameters."),
            Key("computation", "string or null", "The path of its computation file, if one."),
            Key("inline_computation", "string or null", "Its `# Computation` block, if one."),
            Key("executor", "object", "`resource` (how to run it) and `receipt` (field names)."),
            Key("attester", "object", "`resource`: its attester, which okfx never runs."),
            Key(
                "files",
                "object",
                "The bundle path each of `computation`, `executor.resource` and "
                "`attester.resource` leads to, as `read_resource` takes it (they are shown "
                "as written, often relative to the concept).",
                "when one leads to a file of the bundle",
            ),
            Key("note", "string", "What an agent may do with it."),
        ),
    ),
    Table(
        ("computation.parameters[]",),
        "one declared parameter",
        (
            Key("name", "string", "Its name."),
            Key("type", "string or null", "Its type, e.g. `date`, `integer`, `string`."),
            Key("required", "boolean", "Whether a value must be given."),
            Key("default", "any", "The value used when none is given.", "when declared"),
            Key("example", "any", "An example value.", "when declared"),
            Key("min", "any", "The least value allowed.", "when declared"),
            Key("max", "any", "The greatest value allowed.", "when declared"),
            Key("enum", "list", "The values allowed (at most 50).", "when declared"),
        ),
    ),
    Table(("concepts[]",), "one row of a folder listing", (*_ROW, _ROW_CUT)),
    Table(
        ("folders[]",),
        "one subfolder of a folder listing",
        (
            Key("path", "string", "The subfolder's path (read it with `read_concept`)."),
            Key("concepts", "integer", "How many concepts are in it, at any depth."),
        ),
    ),
)

# -- get_neighbors -----------------------------------------------------------------------------
_CONCEPT_END = "the other end is a concept"
_NEIGHBORS = (
    Table(
        ("",),
        "the result",
        (
            _BUNDLE,
            Key("path", "string", "The document whose links these are."),
            Key("title", "string", "Its title (an index page's first heading)."),
            Key("type", "string", "Its `type`; `index` or `log` for those pages."),
            Key("status", "string", "Its status.", "a concept"),
            Key("outbound", "list of objects", "Links from it that resolve, a page of them."),
            Key("backlinks", "list of objects", "Links to it from other documents, a page."),
            Key("unresolved", "list of objects", "Links from it to nothing in the bundle, a page."),
            Key(
                "listed_in",
                "list of objects",
                "The index and log pages that list it: `path`, `title`, `type` each.",
                "only when one does",
            ),
            Key(
                "leaves_bundle",
                "list of objects",
                "Body links (wikilinks too, when read) that climb above the bundle root, "
                "never followed.",
                "only on the first page, when it has such links",
            ),
            Key("total", "object", "How many links each list holds in all."),
            Key("offset", "integer", "Links of each list skipped (the offset asked)."),
            _TRUE,
            Key(
                "cut",
                "string",
                "Which part of each list this page shows and where the next page starts, "
                "what the size cap left out, or that `offset` is past every list.",
                "only when a list goes on, was cut, or is all skipped",
            ),
            Key("next_offset", "integer or null", f"{_NEXT} (no link is skipped)."),
        ),
    ),
    Table(
        ("outbound[]", "backlinks[]", "unresolved[]"),
        "one link (one per other end and field)",
        (
            Key(
                "path",
                "string",
                "The other end: the target, or for a backlink its source.",
                "every link but an unresolved id",
            ),
            Key(
                "id",
                "string",
                "The producer id a relation value names, which draws no edge.",
                "unresolved, a relation value naming an id",
            ),
            Key("field", "string", "Where the link is written: `body` or a frontmatter field."),
            Key("text", "string", "The link's text (cut at 100 characters)."),
            Key("line", "integer or null", "The link's line in its file; null if none."),
            Key("exists", "boolean", "Whether the target exists (false for unresolved)."),
            Key(
                "reason",
                "string",
                "Why it draws no edge: `unknown_id` (no concept declares the id), "
                "`ambiguous_id` (several do), or `ambiguous_wikilink` (the `[[name]]` names "
                "several files).",
                "unresolved, a relation value naming an id, or a `[[wikilink]]` naming "
                "several files",
            ),
            Key(
                "candidates",
                "list of strings",
                "The concepts declaring the id, or the files the wikilink names (at most 5).",
                "unresolved, an `ambiguous_id` or `ambiguous_wikilink`",
            ),
            Key(
                "section",
                "string",
                "The part of the target the link names (`read_concept` takes it).",
                "a link with a `#fragment`",
            ),
            Key(
                "title",
                "string",
                "The other end's title (a folder's name).",
                "the other end exists",
            ),
            Key(
                "type", "string", "Its `type`, or `index`, `log`, `folder`.", "the other end exists"
            ),
            Key("status", "string", "Its status.", _CONCEPT_END),
            Key("trust_tier", "string", "Its trust tier.", _CONCEPT_END),
            Key("stale", "boolean", "Whether it is past `stale_after` now.", _CONCEPT_END),
            Key(
                "missing_folder",
                "string",
                "The first folder on the target's way that the bundle lacks.",
                "unresolved, when a folder is missing",
            ),
            Key(
                "nested_bundle",
                "string",
                "The folder of a bundle of its own, left out of this one, that holds the target.",
                "unresolved, when the target is inside one",
            ),
            Key(
                "not_read",
                "string",
                "Why okfx does not read the target, there on disk: the path it or a folder "
                "above it has, and why (`/outdir: symlink points outside the bundle`).",
                "unresolved, when the load left it out",
            ),
            Key(
                "did_you_mean",
                "string",
                "The path of the concept the link (or the id) most likely meant.",
                "unresolved, when one is close",
            ),
        ),
    ),
    Table(
        ("listed_in[]",),
        "one page listing it",
        (
            Key("path", "string", "The index or log page's path."),
            Key("title", "string", "Its title (its first heading)."),
            Key("type", "string", "`index` or `log`."),
        ),
    ),
    Table(
        ("leaves_bundle[]",),
        "one link leaving the bundle",
        (
            Key("href", "string", "The link's target as written, e.g. `../../docs/x.md`."),
            Key("field", "string", "`body`."),
            Key("text", "string", "The link's text."),
            Key("line", "integer or null", "Its line in the file; null in an index or log page."),
            Key(
                "bundle",
                "string",
                "The loaded bundle it lands in (a sibling folder loaded beside this one).",
                "only when it names a document of another loaded bundle",
            ),
            Key(
                "path",
                "string",
                "That document's path there: read it with `bundle` and `path`.",
                "only when it names a document of another loaded bundle",
            ),
        ),
    ),
    Table(
        ("total",),
        "how many links each list holds",
        tuple(
            Key(name, "integer", f"Links of `{name}` in all pages.")
            for name in ("outbound", "backlinks", "unresolved", "listed_in")
        ),
    ),
)

# -- read_resource -----------------------------------------------------------------------------
_RESOURCE = (
    Table(
        ("",),
        "the result",
        (
            _BUNDLE,
            Key("path", "string", "The file's bundle path."),
            Key("bytes", "integer", "The file's size in bytes."),
            Key(
                "version",
                "string",
                "A stamp of the file (its size, modification time and inode), 8 hex digits; "
                "give it back as `version` with the next part (the cut's call does).",
            ),
            Key("offset", "integer", "The byte `text` starts at."),
            Key("text", "string", "The file's text from `offset`, at most 64 KiB."),
            Key("truncated", "boolean", "Whether the file goes on after `text`."),
            Key("next_offset", "integer or null", f"The byte {_REST}."),
            Key("truncation", "string", "The call that reads the rest.", "only when cut"),
            Key(
                "notice",
                "string",
                "Says the file changed since the part that gave the `version` passed "
                "(`CHANGED: ...`: read it again from offset 0), or that the offset is at "
                "the end of the file.",
                "only when either is so",
            ),
            Key(
                "note",
                "string",
                "Says okfx never runs the file, or, for a concept's file, that read_concept "
                "gives its header.",
            ),
            _TRUE,
        ),
    ),
)

# -- the computation tools ---------------------------------------------------------------------
_GATE_KEYS = (
    Key("trust_tier", "string", "The computation's trust tier."),
    Key("verified", "list of objects", "Its verifications: `by` and `at` each."),
)
_FRESHNESS = (
    Key("status", "string", "Its status (`draft` and `deprecated` warn)."),
    Key("stale", "boolean", "Whether it is past `stale_after` now."),
    Key("stale_after", "string or null", "When it goes stale (ISO 8601)."),
    Key("stale_policy", "string", "`warn` or `refuse`: what staleness does to the verdict."),
)
_PREPARE = (
    Table(
        ("",),
        "the result",
        (
            _BUNDLE,
            Key("path", "string", "The computation concept's path."),
            Key("title", "string", "Its title."),
            Key("runtime", "string", "Where it runs, e.g. `duckdb`, `bigquery`."),
            Key("dialect", "string", "The SQL dialect okfx read it in: `standard` or `bigquery`."),
            Key("computation", "string", "`inline`, or the path of its computation file."),
            Key("sql", "string", "The sanctioned SQL, as written."),
            Key("parameters", "list of objects", "Each declared parameter with its bound value."),
            Key("query_parameters", "object", "Name to value: pass them as named parameters."),
            Key("canonical_sql", "string", "The statement as compared: one line, `@name` params."),
            Key("expanded_sql", "string", "The statement with every value as a quoted literal."),
            Key("receipt_fields", "list of strings", "The fields a run's receipt must hold."),
            Key("executor", "object", "`resource` (how to run it) and `receipt` (field names)."),
            Key("attester", "object", "`resource` (never run by okfx) and a `note`."),
            Key("gate", "object", "Trust and freshness, as the verdict will judge them."),
            Key("can_run", "boolean", "Whether `run_computation` can run it here."),
            Key("next", "string", "What to call next."),
            _TRUE,
        ),
    ),
    Table(
        ("parameters[]",),
        "one declared parameter, bound",
        (
            Key("name", "string", "Its declared name."),
            Key("type", "string", "Its type, e.g. `date`, `integer`, `string`."),
            Key("required", "boolean", "Whether a value must be given."),
            Key("value", "any", "The value bound (dates as `YYYY-MM-DD`); null binds NULL."),
            Key("from_default", "boolean", "Whether it is the declared default, none given."),
        ),
    ),
    Table(
        ("gate",),
        "trust and freshness",
        (
            *_GATE_KEYS,
            *_FRESHNESS,
            Key("notices", "list of strings", "Lifecycle and trust flags (DEPRECATED, STALE...)."),
        ),
    ),
)

_VERDICT = (
    Key("verdict", "string", "`pass`, `warn` (shown, with reasons) or `fail` (refused)."),
    Key("display", "boolean", "Whether the value may be shown: false on `fail`."),
    _BUNDLE,
    Key("path", "string", "The computation concept's path."),
    Key("title", "string", "Its title."),
    Key("runtime", "string", "Where it runs."),
    Key("parameters", "object", "Name to the value bound."),
    Key("receipt_id", "string or null", "The receipt's `job_id`, `run_id` or `id`."),
    Key("reasons", "list of strings", "The messages of the checks that failed or warned."),
    Key("checks", "list of objects", "Every check, in the order run."),
    Key("difference", "object or null", "Where the SQL that ran first differs; null if none."),
    *_GATE_KEYS,
    Key("last_verified", "string or null", "The latest verification's `at`."),
    *_FRESHNESS,
    Key("now", "string", "The instant staleness was judged at (ISO 8601)."),
)
_CHECK = (
    Key(
        "check",
        "string",
        "`receipt`, `provenance`, `parameters`, `fidelity`, `freshness`, `status`, or an "
        "application attester's (`rerun`: the DuckDB executor's).",
    ),
    Key("status", "string", "`pass`, `warn`, `fail` or `skip`."),
    Key("message", "string", "What was found."),
    Key(
        "detail",
        "object",
        "`missing`: the receipt fields it lacks; `changed`: those a rerun found different.",
        "only when the check has more to say",
    ),
)
_DIFFERENCE = (
    Key("line", "integer", "The line of the receipt's SQL where it differs; 0 past its end."),
    Key("column", "integer", "The column there; 0 past its end."),
    Key("after", "string", "The text it follows."),
    Key("expected", "string", "What the sanctioned computation has there."),
    Key("found", "string", "What the receipt's SQL has."),
)
_CHECK_ATTESTATION = (
    Table(("",), "the result", (*_VERDICT, _TRUE)),
    Table(("checks[]",), "one check", _CHECK),
    Table(("difference",), "the first difference", _DIFFERENCE),
)

_RUN = (
    Table(
        ("",),
        "the result",
        (
            Key("receipt", "object", "The run's receipt, as the executor returned it."),
            Key("verdict", "object", "The verdict, as `check_attestation` returns it."),
            Key("display", "boolean", "Whether the value may be shown."),
            Key(
                "value",
                "any",
                "The result's first cell; null when `display` is false or it has none.",
            ),
            Key("note", "string", "Show the value with the verdict, or not at all."),
            _TRUE,
        ),
    ),
    Table(
        ("receipt",),
        "the DuckDB executor's receipt (another executor's has its own fields)",
        (
            Key("run_id", "string", "The run's id (`duckdb:` and a hex number)."),
            Key("executed_sql", "string", "The SQL that ran, with `$name` placeholders."),
            Key("parameters", "object", "Name to the value bound."),
            Key("columns", "list of strings", "The result's column names."),
            Key("result", "list or null", "The first row; null when there is none."),
            Key("rows", "list of lists", "The rows (100 at most)."),
            Key("row_count", "integer", "How many rows `rows` holds."),
            Key("truncated", "boolean", "Whether there were more rows."),
            Key("engine", "string", "`duckdb` and its version."),
            Key("elapsed_ms", "number", "How long the run took."),
            Key("error", "string", "Why the run failed.", "only when it did"),
        ),
    ),
    Table(("verdict",), "the verdict", _VERDICT),
    Table(("verdict.checks[]",), "one check", _CHECK),
    Table(("verdict.difference",), "the first difference", _DIFFERENCE),
)

#: Every tool's result: the result's own keys first, then those of the objects in it.
RESULTS: dict[str, tuple[Table, ...]] = {
    "list_bundles": _BUNDLES,
    "list_concepts": _CONCEPTS,
    "search_concepts": _SEARCH,
    "grep_concepts": _GREP,
    "read_concept": _READ,
    "get_neighbors": _NEIGHBORS,
    "read_resource": _RESOURCE,
    "prepare_computation": _PREPARE,
    "check_attestation": _CHECK_ATTESTATION,
    "run_computation": _RUN,
}

#: The result of a call that failed, whatever the tool (``okfx.tools.payloads.error_payload``).
ERROR: tuple[Table, ...] = (
    Table(
        ("",),
        "a failure",
        (
            Key("error", "object", "What went wrong."),
            Key(
                UNTRUSTED,
                "true",
                "The error quotes bundle text.",
                "with `did_you_mean` or `file`, and for `invalid_parameter` and "
                "`not_attestable` (they quote a computation's contract)",
            ),
        ),
    ),
    Table(
        ("error",),
        "the error",
        (
            Key("code", "string", "A stable code (the table above)."),
            Key("message", "string", "What was wrong and what to do next (2,000 at most)."),
            Key(
                "did_you_mean",
                "list of strings",
                "Close paths, titles, headings or `okf://` addresses (at most 50).",
                "`not_found`, when some are close",
            ),
            Key(
                "file",
                "string",
                "That file's path: read it with `read_resource`.",
                "`not_found` where the bundle has a file that is no concept",
            ),
        ),
    ),
)
