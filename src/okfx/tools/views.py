"""What each tool returns: argument checks, look-ups and payload assembly.

``tools.Toolbox`` holds the signatures a model sees; this module does the work, raising
:class:`~okfx.errors.OKFError` subclasses that the Toolbox turns into error results.
"""

from __future__ import annotations

import contextvars
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote, unquote

from okfx.bundle.anchors import fragment_key, heading_ids
from okfx.bundle.bundle import Bundle
from okfx.bundle.links import (
    footnote_spans,
    footnotes_cited,
    leaving_links,
    lines_outside_code,
)
from okfx.bundle.meant import meant
from okfx.bundle.paths import hidden_said, missing_folder, normalize, open_error, parent_dir
from okfx.bundle.problems import ERROR_CODES
from okfx.bundle.reserved import HEADING_LINES, heading_text, page_heading
from okfx.bundle.validate import why_empty
from okfx.bundle.walk import read_page
from okfx.bundle.wikilinks import leaving_wikilinks
from okfx.errors import InvalidArgument, NotFound, OKFError, TooLarge, Unreadable, UnsafePath
from okfx.model import Concept, IndexFile, Link, LogFile
from okfx.search.analyzer import only_stopwords
from okfx.search.cjk import has_cjk
from okfx.search.filters import CHOSEN
from okfx.search.index import MAX_LIMIT
from okfx.search.suggest import closest
from okfx.search.versions import (
    TIE_ROOM,
    fold_versions,
    newest_in_ties,
    one_per_page,
    release_family,
)
from okfx.tools import notices, pageversions
from okfx.tools.caps import (
    DESCRIPTION_CHARS,
    EDGES,
    ITEMS,
    LABEL_CHARS,
    RESULT_CHARS,
    TITLE_CHARS,
    TYPE_CHARS,
    VALUE_CHARS,
    clip,
    fit_text,
    leave_out,
    leave_out_each,
    note,
)
from okfx.tools.folders import folder_listing, folder_no_links
from okfx.tools.hostpaths import short_source, without_file_urls, without_source_path
from okfx.tools.payloads import (
    ID_CANDIDATES,
    UNTRUSTED,
    concept_header,
    concept_row,
    continuation_header,
    id_payload,
    link_payload,
)
from okfx.tools.prompt import index_summary
from okfx.tools.siblings import landing

if TYPE_CHECKING:
    from okfx.tools.manager import KnowledgeManager


class Toolbox(Protocol):
    """What a view needs of the toolbox calling it: the bundles and the clock.

    A protocol rather than the ``Toolbox`` class itself, so this module never imports
    the module that imports it."""

    @property
    def manager(self) -> KnowledgeManager: ...

    def now(self) -> datetime: ...


__all__ = ["EVENT"]

#: The access event of the tool call running in this context (set by ``tools._tool``).
EVENT: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("okfx_event")

MAX_READ_CHARS = 100_000
MAX_QUERY_CHARS = 2_000
# A lone surrogate: no character, and no UTF-8 encoder takes it (a JSON client may send
# one; echoed back, it broke the caller's encoding of the result: agent QA).
_SURROGATE = re.compile("[\ud800-\udfff]")


def _event(**fields: Any) -> None:
    event = EVENT.get(None)
    if event is not None:
        event.update(fields)


# -- argument checks --------------------------------------------------------------------------
def _text(value: Any, name: str, *, optional: bool = False, max_len: int = 4096) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > max_len:
        raise TooLarge(f"{name} is {len(value)} characters, over the {max_len} limit")
    return value if value.isascii() else _SURROGATE.sub("\ufffd", value)


def _int(value: Any, name: str, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name} must be an integer, got {type(value).__name__}")
    if value < lo:
        raise InvalidArgument(f"{name} must be >= {lo}, got {value}")
    return value if hi is None else min(value, hi)


#: The scheme of the addresses the MCP server gives its resources (``okf://ops/a/b.md``).
OKF_SCHEME = "okf://"


def located(box: Toolbox, path: Any, bundle: Any) -> tuple[Bundle, str | None]:
    """The bundle and the path a tool reads: ``path`` as given, or an ``okf://`` address
    (the MCP server's own resource URIs, which a model copies) taken apart into its
    bundle and path, ``okf://<bundle>/index`` being the root index (MCP QA: the tools
    refused the addresses the server advertised). A bundle named in both must agree."""
    raw = _text(path, "path")
    if raw is not None and raw[: len(OKF_SCHEME)].casefold() == OKF_SCHEME:
        raw = OKF_SCHEME + raw[len(OKF_SCHEME) :]  # a scheme reads in any case (RFC 3986)
    if raw is not None and _external(raw):
        # agent QA: a concept's resource, https://..., read as the file /https:/...
        raise InvalidArgument(
            f"{raw[:200]!r} is an external address, not a file of the bundle: "
            "okfx reads only the bundle's own files (a concept's resource or source may "
            "name a web page or a system outside it)"
        )
    named_path = None if raw is None else _named_place(box, raw)
    if named_path is not None:
        named, inner = named_path
        if raw is not None and raw.startswith(OKF_SCHEME) and inner == "/index":
            inner = "/index.md"  # okf://<bundle>/index, the root index's resource
        chosen = _bundle(box, named)
        _agrees(box, bundle, named, f"path {raw!r}")
        return chosen, inner
    if raw is None:
        return _bundle(box, bundle), raw
    if bundle in (None, "") and len(box.manager) > 1:
        _climbing(box, list(box.manager.bundles.values()), raw)
        raw = _as_linked(list(box.manager.bundles.values()), raw)
        return _holding(box, raw), raw
    chosen = _bundle(box, bundle)
    _climbing(box, [chosen], raw)
    return chosen, _as_linked([chosen], raw)


def _climbing(box: Toolbox, within: list[Bundle], raw: str) -> None:
    """Refuse ``raw`` when it climbs above the root (``../slis/x.md``, a link's href
    copied from a body), naming the documents of ``within`` it means once its leading
    ``../`` are dropped (agent QA F8: every link of slo.okf is written so, and reading
    one was refused with no way on). Nothing above the root is looked at."""
    if not raw.startswith(("../", "./../")):
        return
    try:
        normalize(raw)
        return  # it stays inside after all
    except UnsafePath as exc:
        refused = exc
    rest = raw
    while rest.startswith(("../", "./")):
        rest = rest.removeprefix("./").removeprefix("../")
    meant: list[str] = []
    for b in within:
        try:
            found = b.get("/" + rest.partition("#")[0]) if rest else None
        except OKFError:
            found = None
        if found is not None:
            several = len(box.manager) > 1
            meant.append(
                f"{OKF_SCHEME}{quote(b.name, safe='')}{found.path}" if several else found.path
            )
    if meant:
        raise UnsafePath(
            f"{refused.message}; it names {meant[0]} once its '../' are dropped",
            path=raw,
            suggestions=meant,
        )


def _folder_address(box: Toolbox, directory: Any, bundle: Any) -> tuple[Any, Any]:
    """``(directory, bundle)``, with a ``directory`` written as an address okfx hands out,
    ``okf://<bundle>/<folder>`` or ``<bundle>:/<folder>``, taken apart (agent QA F6: the
    folder of an address was read as the folder ``/okf:/bundle/slos/``). A bundle named
    in both must agree."""
    if not isinstance(directory, str):
        return directory, bundle
    named = _named_place(box, directory.strip())
    if named is None:
        return directory, bundle
    name, folder = named
    _agrees(box, bundle, name, f"directory {directory!r}")
    return folder, name


def _named_place(box: Toolbox, raw: str) -> tuple[str, str] | None:
    """``(bundle name, path)`` of ``raw`` written ``NAME:/path`` (as the CLI and the viewer
    show a path and the CLI takes it back: new-producers QA, the tools said no loaded
    bundle held it) or ``okf://NAME/path`` (split, then decoded: a bundle named
    "ops/team" is "ops%2Fteam" in an address); None for a plain path."""
    named = _shown_form(box, raw)
    if named is None and raw.startswith(OKF_SCHEME):
        quoted_name, _, quoted_inner = raw[len(OKF_SCHEME) :].partition("/")
        named = unquote(quoted_name), "/" + unquote(quoted_inner)
    return named


def _agrees(box: Toolbox, bundle: Any, named: str, said: str) -> None:
    """Refuse a ``bundle`` argument that names another bundle than the one the argument
    ``said`` names: it agrees when it names the same bundle, in any case as a name is
    matched (agent QA: bundle="EVIL" with okf://evil/... was refused)."""
    given = _text(bundle, "bundle", optional=True)
    if given is not None and given != named and not _same_bundle(box, given, _bundle(box, named)):
        raise InvalidArgument(f"{said} is in bundle {named!r}, not {given!r}")


def _shown_form(box: Toolbox, raw: str) -> tuple[str, str] | None:
    """``(bundle name, path)`` of ``raw`` written ``NAME:/path`` (``okfx read`` and the
    viewer's form) when NAME is a loaded bundle's name; else None."""
    name, colon, rest = raw.partition(":")
    if not colon or not rest.startswith("/") or rest.startswith("//") or "/" in name:
        return None
    return (name, rest) if name in box.manager.bundles else None


def _same_bundle(box: Toolbox, name: str, bundle: Bundle) -> bool:
    try:
        return _bundle(box, name) is bundle
    except OKFError:
        return False


def _external(raw: str) -> bool:
    """Whether a path argument is an address with a scheme (``https://``, ``s3://``,
    ``file://``) other than the MCP server's own ``okf://``."""
    scheme, sep, _ = raw.partition("://")
    return bool(
        sep
        and scheme[:1].isalpha()
        and len(scheme) <= 32
        and all(c.isascii() and (c.isalnum() or c in "+.-") for c in scheme)
        and scheme.casefold() != "okf"
    )


def _holding(box: Toolbox, raw: str) -> Bundle:
    """The one loaded bundle that holds ``raw`` (a document, file or folder), for a call
    that names no bundle when several are loaded (MCP QA: a read of a path only one
    bundle has had cost a round trip). Several holding it is an ``invalid_argument``
    naming them; none, a ``not_found`` whose ``did_you_mean`` gives each bundle's close
    concepts as ``okf://`` addresses, which the tools read as they are."""
    # The path is refused whichever bundle it is read in (adapter QA); x.md#part is
    # read in the bundle holding x.md.
    normalize(raw.partition("#")[0])
    loaded = list(box.manager.bundles.values())
    holders = [b for b in loaded if _holds(b, raw)]
    if len(holders) == 1:
        _event(bundle=holders[0].name)
        return holders[0]
    names = ", ".join(repr(b.name) for b in holders or loaded)
    if holders:
        raise InvalidArgument(
            f"{raw!r} is in {len(holders)} of the loaded bundles; pass bundle= one of {names}"
        )
    # each bundle's files of the name asked (an attached file remembered by its name:
    # agent QA F4), then each bundle's best, then its second
    canon = normalize(raw.partition("#")[0])
    close = [
        (-1, f"{OKF_SCHEME}{quote(b.name, safe='')}{quote(p, safe='/')}")
        for b in loaded
        for p in _same_name(b, canon, 2)
    ]
    close += [
        (i, f"{OKF_SCHEME}{quote(b.name, safe='')}{quote(p, safe='/')}")
        for b in loaded
        for i, p in enumerate(b.suggest(raw, 2))
    ]
    said = f"no loaded bundle holds {raw!r} (bundles: {names})"
    raise NotFound(
        said if close else f"{said}; {NEXT_STEP}",
        path=raw,
        suggestions=[address for _, address in sorted(close, key=lambda pair: pair[0])],
    )


#: What a ``not_found`` with nothing close to it says to do next (agent QA F11).
NEXT_STEP = (
    "nothing is named close to it: find a page by its subject with search_concepts, or "
    "browse with list_concepts"
)


def _next_step(b: Bundle, exc: NotFound) -> NotFound:
    """``exc``, or when nothing is close to the path it names, ``exc`` saying the folder
    the bundle lacks on its way and how to find a page instead."""
    if exc.suggestions or exc.file or not exc.path:
        return exc
    folder = missing_folder(b.directories, exc.path)
    place = f"; the bundle has no folder {folder}" if folder else ""
    exc.message = f"{exc.message}{place}; {NEXT_STEP}"  # the same error, its flags kept
    exc.args = (exc.message,)
    return exc


def _held_elsewhere(box: Toolbox, b: Bundle, raw: str | None, exc: NotFound) -> NotFound:
    """``exc``, or when other loaded bundles hold ``raw`` an error that names them, their
    addresses first in ``did_you_mean`` (agent QA: a path read with the wrong bundle= got
    that bundle's unrelated close paths, and no word of the bundle holding it)."""
    if not raw or exc.file:
        return exc
    others = [o for o in box.manager.bundles.values() if o is not b and _holds(o, raw)]
    if not others:
        # nothing close: a guessed path (agent QA F11: no next step)
        return _next_step(b, exc)
    path = normalize(raw.partition("#")[0])
    names = ", ".join(repr(o.name) for o in others[:ITEMS])
    held = f"bundle {names} holds it" if len(others) == 1 else f"bundles {names} hold it"
    addresses = [f"{OKF_SCHEME}{quote(o.name, safe='')}{quote(path, safe='/')}" for o in others]
    return NotFound(
        f"{exc.message}; {held}: read it with bundle={others[0].name!r}",
        path=path,
        suggestions=[*addresses, *exc.suggestions],
    )


def _is_file_or_folder(b: Bundle, path: str) -> bool:
    return path in b.files or path in b.directories


def _holds(b: Bundle, raw: str) -> bool:
    """Whether ``b`` has a document, file or folder at ``raw`` (a fragment left out)."""
    page = raw.partition("#")[0]
    try:
        return b.get(page) is not None or _is_file_or_folder(b, normalize(page))
    except UnsafePath:
        return False


def _as_linked(within: list[Bundle], raw: str) -> str:
    """``raw``, or its percent-decoded form when no bundle of ``within`` holds ``raw`` and
    one holds that: a path copied from a link's href (``my%20file.md``), which links are
    resolved from (agent QA: get_neighbors named ``/my file.md``, and read_concept of the
    href was not found). The decoded path meets the same guard as any path."""
    if "%" not in raw:
        return raw
    decoded = unquote(raw)
    if decoded == raw or any(_holds(b, raw) for b in within):
        return raw
    return decoded if any(_holds(b, decoded) for b in within) else raw


def _bundle(box: Toolbox, name: Any) -> Bundle:
    found = box.manager.bundle(_text(name, "bundle", optional=True))
    _event(bundle=found.name)
    return found


# -- L0 / L1 ---------------------------------------------------------------------------------
#: Characters the rows' index excerpts take together: each gets its share, at most 600;
#: under :data:`MIN_EXCERPT` they are left out (platform QA: 170 bundles' rows passed the
#: result cap, and 26 bundles were not listed at all).
EXCERPTS_CHARS, MIN_EXCERPT = 64_000, 120


def bundles(box: Toolbox) -> dict[str, Any]:
    _event(found=True)
    rows = []
    excerpt = min(600, EXCERPTS_CHARS // max(len(box.manager), 1))
    for b in box.manager.bundles.values():
        counts = b.problem_counts()  # exact, past max_warnings too
        errors = sum(n for code, n in counts.items() if code in ERROR_CODES)
        rows.append(
            {
                "name": b.name,
                "concepts": len(b),
                "okf_version": None if b.okf_version is None else clip(b.okf_version, VALUE_CHARS),
                # §11 errors (a file skipped, a frontmatter not YAML) apart from the
                # warnings: one count said 194 for m3e, 2 of them errors (QA)
                "errors": errors,
                "warnings": sum(counts.values()) - errors,
            }
        )
        if excerpt >= MIN_EXCERPT:
            rows[-1]["index"] = index_summary(b, excerpt, named=len(box.manager.bundles) > 1)
        if counts:  # what the two counts are (agent QA: "warnings: 192", and no way to know)
            rows[-1]["problems"] = _problem_kinds(counts)
        if b.origin:  # a git clone or an archive: which one (platform QA: two copies of
            # one bundle, from a folder and from git, could not be told apart)
            rows[-1]["source"] = {
                key: clip(short_source(str(value)) if key == "url" else str(value), VALUE_CHARS)
                for key, value in b.origin.items()
            }  # a file:// clone's or a local archive's host path is not said (security QA)
    for row, b in zip(rows, box.manager.bundles.values(), strict=True):
        if not row["concepts"]:  # okfx validate reports it as its no_concepts error
            row["empty"] = clip(f"no concepts: {why_empty(b, where=False)}", VALUE_CHARS)
    failed = box.manager.reload_failures
    unfetched = box.manager.refresh_failures
    for row in rows:
        if row["name"] in failed:
            row["reload_failed"] = (
                "the bundle's folder could not be read at the last reload; what it read "
                "before is served until it can be read again"
            )
        elif row["name"] in unfetched:  # a git source's refresh (author QA: stderr only)
            row["reload_failed"] = clip(
                f"fetching its git source again failed at the last refresh "
                f"({without_file_urls(unfetched[row['name']])}); the commit it read before "
                "is served until a refresh works",
                VALUE_CHARS,
            )
    payload: dict[str, Any] = {"bundles": rows}
    if excerpt < MIN_EXCERPT:
        payload["notice"] = (
            f"{len(rows)} bundles are loaded: their rows leave out the index excerpt, to "
            "list them all; read_concept('/index.md', bundle=NAME) reads one."
        )
    if box.manager.unavailable:  # given to the server, but they did not load
        known = [str(b.root) for b in box.manager.bundles.values()]
        known += [source for source in box.manager.unavailable]

        def said(reason: str) -> str:  # no source's host path (a clash names two)
            for source in known:
                reason = without_source_path(reason, source)
            return reason

        payload["unavailable"] = [
            {
                "source": clip(short_source(source), VALUE_CHARS),
                "reason": clip(said(reason), VALUE_CHARS),
            }
            for source, reason in box.manager.unavailable.items()
        ][:ITEMS]
    payload[UNTRUSTED] = True
    leave_out(payload, "bundles", "bundles", "read each bundle's index with read_concept")
    return payload


#: Kinds of problem a bundle's row names, the most frequent first.
PROBLEM_KINDS = 5


def _problem_kinds(counts: dict[str, int]) -> str:
    """``"138 invalid_field, 47 broken_link, ... (okfx validate lists them, ...)"``."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{n} {code}" for code, n in ranked[:PROBLEM_KINDS])
    more = len(ranked) - PROBLEM_KINDS
    kinds = f"{shown} and {more} more kind(s)" if more > 0 else shown
    # validate also checks links' #anchors, which a load does not (validate QA: 12 here,
    # 339 there, with nothing to say why)
    return f"{kinds} (okfx validate lists them, and checks links' #anchors and images too)"


#: Rows one list_concepts page holds at most.
_MAX_ROWS = 200


def list_rows(
    box: Toolbox,
    bundle: Any,
    directory: Any,
    type_: Any,
    tags: Any,
    trust_tier: Any,
    include_deprecated: Any,
    include_stale: Any,
    limit: Any,
    offset: Any,
    version: Any = None,
) -> dict[str, Any]:
    limit_ = _int(limit, "limit", 1, _MAX_ROWS)
    offset_ = _int(offset, "offset", 0)
    given = _text(version, "version", optional=True, max_len=64)
    directory, bundle = _folder_address(box, directory, bundle)
    from okfx.search.filters import ConceptFilter, hidden_notice

    spec = ConceptFilter.create(
        directory=directory,
        type=type_,
        tags=tags,
        trust_tier=trust_tier,
        include_deprecated=include_deprecated,
        include_stale=include_stale,
        now=box.now(),
    )
    name = _text(bundle, "bundle", optional=True)
    if name is None and len(box.manager) > 1:
        # Every bundle's rows, one bundle after the other, as search and grep span them
        # all (QA: the one tool that refused to without bundle=).
        scope = list(box.manager.bundles.values())
    else:
        scope = [_bundle(box, name)]
    rows: list[dict[str, Any]] = []
    shown: list[Concept] = []
    total, hidden = 0, dict[str, int]()
    for b in scope:
        # Each bundle's part of the page (none once it is full), with its count.
        chosen = b.facets().select(b.name, spec, max(offset_ - total, 0), limit_ - len(rows))
        for key, count in chosen.hidden.items():
            hidden[key] = hidden.get(key, 0) + count
        rows += [concept_row(b.name, c, c.is_stale(spec.now)) for c in chosen.concepts]
        if _odd_statuses(b):  # reading each row's frontmatter costs: only when some may
            shown += chosen.concepts
        total += chosen.total
    start = min(offset_, total)
    notice = hidden_notice(hidden, chosen=not rows)
    written = notices.statuses_as_written(shown, "row")
    notice = " ".join(filter(None, [notice, written]))
    if not rows and offset_ and total:
        notice = " ".join(filter(None, [notices.past_last_row(offset_, total), notice]))
    elif not rows:
        unknown = notices.unknown_filter_values(scope, type_, tags, directory)
        notice = " ".join(filter(None, [unknown, notice]))
    if isinstance(limit, int) and limit > _MAX_ROWS == len(rows):  # agent QA: said nothing
        notice = " ".join(filter(None, [notice, notices.rows_capped(_MAX_ROWS)]))
    stamp = pageversions.of_listing(scope)
    if given is not None and given != stamp:
        moved = pageversions.moved(given, stamp, "listing", pageversions.LISTING_MOVED)
        notice = " ".join(filter(None, [moved, notice]))
    payload = {
        "bundle": scope[0].name if len(scope) == 1 else None,
        "total": total,
        "version": stamp,
        "offset": start,
        "next_offset": None,
        "concepts": rows,
        "hidden": hidden,
        "notice": notice,
        UNTRUSTED: True,
    }
    kept = leave_out(payload, "concepts", "rows", "continue from next_offset")
    next_offset = start + kept
    payload["next_offset"] = next_offset if next_offset < total else None
    _event(found=bool(kept), hits=kept)
    return payload


# -- search and grep -------------------------------------------------------------------------
def search(
    box: Toolbox,
    query: Any,
    bundle: Any,
    limit: Any,
    type_: Any,
    tags: Any,
    directory: Any,
    trust_tier: Any,
    include_deprecated: Any,
    include_stale: Any,
) -> dict[str, Any]:
    text = _text(query, "query", max_len=MAX_QUERY_CHARS) or ""
    directory, bundle = _folder_address(box, directory, bundle)
    name = _text(bundle, "bundle", optional=True)
    named = _bundle(box, name) if name is not None else None
    ranked = partial(
        box.manager.search,
        text,
        bundle=name,
        type=type_,
        tags=tags,
        directory=directory,
        trust_tier=trust_tier,
        include_deprecated=include_deprecated,
        include_stale=include_stale,
        now=box.now(),
    )
    payload = _folded(ranked, text, _int(limit, "limit", 1, MAX_LIMIT))
    for hit in payload["hits"]:
        hit.update(
            title=clip(hit["title"], TITLE_CHARS),
            type=clip(hit["type"], TYPE_CHARS),
            description=clip(hit["description"], DESCRIPTION_CHARS),
            snippet=clip(hit["snippet"], VALUE_CHARS),
        )
    missing = (
        box.manager.missing_words(text, bundle=name) if payload.get("ranking") != "ranker" else ()
    )
    payload["missing_words"] = [clip(w, VALUE_CHARS) for w in missing[: notices.MISSING_WORDS]]
    scope = [named] if named is not None else list(box.manager.bundles.values())
    filters = {
        "type": type_,
        "tags": tags,
        "directory": directory,
        "trust_tier": trust_tier,
        "include_deprecated": include_deprecated,
        "include_stale": include_stale,
    }
    respelt: str | None = None
    empty = [b.name for b in scope if not len(b)]
    if not payload["hits"] and len(empty) == len(scope):
        # Nothing to search, not a query to reword (okf-gem QA: "try other words").
        payload["missing_words"] = []
        payload["notice"] = notices.nothing_to_search(empty)
        payload[UNTRUSTED] = True  # as every search result says (results QA)
        return payload
    if not payload["hits"] and (only_stopwords(text) or not any(c.isalnum() for c in text)):
        payload["notice"] = notices.no_words(text)
    elif not payload["hits"]:
        close: list[dict[str, Any]] = []
        if (
            text.strip()
            and not payload.get("hidden")
            and not (type_ or tags or directory or trust_tier)
        ):
            # Nothing matched and no filter narrowed it: perhaps a name, misspelt, as the
            # whole query ("custommer") or as one of its words ("custmer email adress").
            close = one_per_page(  # releases of one page are one name, as in the hits
                notices.close_names(scope, text) or notices.close_names_of(scope, missing)
            )
            if not close:
                respelt, close = _respelled(box, scope, text, name, missing, filters)
            payload["did_you_mean"] = _named(close)
        hidden = payload.get("hidden") or {}
        filtered = any(hidden.get(name) for name in CHOSEN)  # a filter asked for hid them
        payload["notice"] = notices.no_hits(
            text, payload.get("notice", ""), close, respelt, filtered
        )
        unknown = notices.unknown_filter_values(scope, type_, tags, directory)
        payload["notice"] = " ".join(filter(None, [unknown, payload["notice"]]))
    elif missing:
        # A word no concept holds: perhaps a name, misspelt ("custommer orders"), or a
        # word of one ("instrinsic hieght widget": the query spelt with the bundle's words).
        # Hits that hold none of the query's words were found by meaning alone: the
        # query may be a name misspelt whole, as when nothing is found (hybrid QA:
        # "unidentifed burried" lost the suggestion lexical search gave).
        by_meaning = all(not hit.get("matched") for hit in payload["hits"])
        close = notices.close_names(scope, text) if by_meaning else []
        close = one_per_page(close or notices.close_names_of(scope, missing))
        if not close:
            respelt, close = _respelled(box, scope, text, name, missing, filters)
            _sure_as_respelt(payload["hits"], close)
        payload["did_you_mean"] = _named(close)
        hybrid = payload.get("ranking") == "hybrid"
        payload["notice"] = notices.missing_words(
            missing, payload.get("notice", ""), hybrid, close, respelt, by_meaning, text
        )
    if respelt is not None:
        payload["respelled_query"] = clip(respelt, VALUE_CHARS)
    if payload["hits"] and only_stopwords(text):
        said = notices.common_words_only(text)
        payload["notice"] = " ".join(filter(None, [said, payload.get("notice", "")]))
    hits = payload["hits"]
    if hits and name is None and len(box.manager) > 1 and payload.get("ranking") != "ranker":
        # Several bundles: a word only another bundle holds is no missing word of the
        # union, yet the first hit's bundle lacks it (agent QA: "smoking rate among
        # adults" was warned on the survey bundle alone, and silent beside a wiki
        # whose "smoke tests" hold "smoking")
        first = str(hits[0]["bundle"])
        own = [w for w in box.manager.missing_words(text, within=first) if w not in missing]
        if own:
            said = notices.missing_in_bundle(own, first)
            payload["notice"] = " ".join(filter(None, [payload.get("notice", ""), said]))
    guess = first_guess(payload["hits"], words_held=not missing)
    if guess:
        payload["notice"] = " ".join(filter(None, [guess, payload.get("notice", "")]))
    if isinstance(limit, int) and limit > MAX_LIMIT == len(payload["hits"]):
        said = notices.limit_capped(MAX_LIMIT)
        payload["notice"] = " ".join(filter(None, [payload.get("notice", ""), said]))
    written = notices.statuses_as_written(_hit_concepts(box, payload["hits"]), "hit")
    if written:
        payload["notice"] = " ".join(filter(None, [payload.get("notice", ""), written]))
    payload["query"] = text
    payload[UNTRUSTED] = True
    kept = leave_out(payload, "hits", "hits", "narrow the query, or lower limit")
    _event(found=bool(kept), query=text, hits=kept)
    return payload


def first_guess(hits: list[dict[str, Any]], words_held: bool = False) -> str:
    """The notice for hybrid hits whose first holds no word of the query and reads under
    0.5, above hits that hold some of its words (paraphrase QA: a page found by meaning
    alone, confidence 0.0, came first, and the notice said nothing); or, with
    ``words_held`` (every word of the query is in some concept), above none, the concepts
    holding the words ranking below them all (words QA: ten guesses at confidence 0 for
    "SSSI boundaries in Wales", and no notice); else ``""``."""
    if not hits or hits[0].get("found") != "semantic" or hits[0].get("matched"):
        return ""  # a semantic hit may hold query words too (agent QA: "api" was matched)
    first = float(hits[0].get("confidence") or 0.0)
    if first >= 0.5:
        return ""
    if any(hit.get("matched") for hit in hits[1:]):
        return notices.first_by_meaning(first)
    return notices.all_by_meaning(first) if words_held else ""


def _hit_concepts(box: Toolbox, hits: list[dict[str, Any]]) -> Iterator[Concept]:
    """The concepts of ``hits`` whose bundle has a status the spec does not define."""
    for hit in hits:
        found = box.manager.bundles.get(hit["bundle"])
        concept = None if found is None or not _odd_statuses(found) else found.get(hit["path"])
        if isinstance(concept, Concept):
            yield concept


def _odd_statuses(b: Bundle) -> bool:
    """Whether a concept of ``b`` was written with a status §5.4 does not define (its
    load counted them, exactly)."""
    return bool(b.problem_counts().get("unknown_status"))


def _folded(ranked: Callable[..., Any], text: str, limit: int) -> dict[str, Any]:
    """The search's result with version siblings folded into one hit each
    (:func:`~okfx.search.versions.fold_versions`). For a bundle that keeps pages in
    release folders the search looks :data:`~okfx.search.versions.TIE_ROOM` rows past
    the cut, puts the copies of a page that tie on score newest first and folds them all,
    and while folding leaves fewer than ``limit`` pages it searches three times as deep
    (up to :data:`~okfx.search.index.MAX_LIMIT`): ten hits asked for are then up to ten
    pages, not ten copies of three, and a page shows the same release whatever the
    limit (CLI QA: 3.12 at ``--limit 10``, 3.13 at ``--limit 20``, and two pages for
    ``--limit 3``)."""
    payload: dict[str, Any] = ranked(limit=limit).to_dict()
    if not any(release_family(str(hit["path"])) for hit in payload["hits"]):
        return payload  # no release folders: nothing to fold
    depth = limit
    while True:
        asked = min(MAX_LIMIT, depth + TIE_ROOM)
        payload = ranked(limit=asked).to_dict()
        rows = payload["hits"]
        complete = len(rows) < asked  # every match is here
        ordered = newest_in_ties(
            [(hit, float(hit["score"])) for hit in rows],
            lambda hit: f"{hit['bundle']}\0{hit['path']}",  # one bundle's copies only
        )
        # every row fetched is folded: a copy past the cut can still be the release a
        # page is shown as (agent QA: limit=1 showed 3.17, larger limits 3.19)
        folded = fold_versions([hit for hit, _ in ordered], text)
        if len(folded) >= limit or complete or asked >= MAX_LIMIT:
            break
        depth = min(MAX_LIMIT, 3 * depth)
    payload["hits"] = folded[:limit]
    return payload


def _respelled(
    box: Toolbox,
    scope: list[Bundle],
    text: str,
    bundle: str | None,
    missing: Sequence[str],
    filters: dict[str, Any],
) -> tuple[str | None, list[dict[str, Any]]]:
    """The query spelt with the bundle's words (:func:`notices.respelled`) and the best
    hits of that query, named as ``did_you_mean`` names concepts; ``(None, [])`` when no
    missing word has a close spelling."""
    respelt = notices.respelled(scope, text, missing)
    if respelt is None:
        return None, []
    found = box.manager.search(
        respelt, bundle=bundle, limit=3 * notices.CLOSE_NAMES, now=box.now(), **filters
    )
    # Releases of one page are one name, as in the hits (results QA: three copies of one)
    hits = fold_versions([h.to_dict() for h in found.hits], respelt)[: notices.CLOSE_NAMES]
    return respelt, [
        {
            "bundle": h["bundle"],
            "path": h["path"],
            "title": clip(h["title"], TITLE_CHARS),
            "confidence": h["confidence"],  # for _sure_as_respelt; not shown as is
        }
        for h in hits
    ]


def _named(close: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``did_you_mean`` as a result gives it: the concepts named, without the confidence
    a respelt query's hits carry for :func:`_sure_as_respelt`."""
    return [{k: v for k, v in c.items() if k != "confidence"} for c in close]


def _sure_as_respelt(hits: list[dict[str, Any]], close: list[dict[str, Any]]) -> None:
    """A hit that is also a best hit of the query as respelt reads the confidence it has
    there, when higher: "verfied field ..." found the page on verified fields first,
    at 0.38, for the one word it had misspelt (okf-gem QA)."""
    sure = {(c["bundle"], c["path"]): c["confidence"] for c in close}
    for hit in hits:
        respelt = sure.get((hit["bundle"], hit["path"]))
        if respelt is not None and respelt > hit["confidence"]:
            hit["confidence"] = respelt


def grep(
    box: Toolbox,
    pattern: Any,
    bundle: Any,
    regex: Any,
    ignore_case: Any,
    type_: Any,
    tags: Any,
    directory: Any,
    include_deprecated: Any,
    limit: Any,
) -> dict[str, Any]:
    text = _text(pattern, "pattern", max_len=MAX_QUERY_CHARS) or ""
    if not text:
        raise InvalidArgument("pattern must not be empty")
    directory, bundle = _folder_address(box, directory, bundle)
    name = _text(bundle, "bundle", optional=True)
    targets = [_bundle(box, name)] if name is not None else list(box.manager.bundles.values())
    from okfx.search.grep import grep as run_grep
    from okfx.tools.grepping import grep_set

    # the filters every run keeps; a run that finds nothing is tried again another way
    filters: dict[str, Any] = {"type": type_, "tags": tags, "directory": directory}
    filters.update(include_deprecated=include_deprecated, now=box.now())

    searched = grep_set(targets)

    def run(regex: Any, ignore_case: Any, limit: int, pattern: str = text) -> Any:
        return run_grep(
            searched, pattern, regex=regex, ignore_case=ignore_case, limit=limit, **filters
        )

    result = run(regex, ignore_case, _int(limit, "limit", 1, 200))
    payload: dict[str, Any] = result.to_dict()
    if not payload["matches"]:
        # Nothing as asked: say what would match (MCP QA: "hpsov" found nothing in a
        # bundle that writes HPSOV, and a model took grep's silence for absence).
        # CLI QA: with matches the filters hid, "no concept holds the text in this letter
        # case, try -i" was untrue: the filter is what to change, as the notice says.
        hid = any(payload.get("hidden", {}).values())
        said = "" if hid else _grep_miss(text, regex, ignore_case, partial(run, limit=200))
        unknown = notices.unknown_filter_values(targets, type_, tags, directory)
        payload["notice"] = " ".join(filter(None, [unknown, said, payload.get("notice", "")]))
    for match in payload["matches"]:
        match["text"] = clip(match["text"], VALUE_CHARS)
    payload["pattern"] = text
    payload[UNTRUSTED] = True
    kept = leave_out(payload, "matches", "matches", "narrow the pattern or the filters")
    _event(found=bool(kept), query=text, hits=kept)
    return payload


#: What in a pattern grep reads as text looks like a regular expression's syntax.
_REGEX_LOOK = re.compile(r"\\[wdsbWDSB.]|\.[*+?]|\[[^\]]{1,40}\]|\([^)]{0,80}\|")


def _grep_miss(text: str, regex: Any, ignore_case: Any, rerun: Any) -> str:
    """Why a grep found nothing, and what would find something: the same text in another
    case (``ignore_case=true``), or the pattern as a regular expression when it looks
    like one (``regex=true``); else what grep matches and where else to look."""
    tries: list[tuple[str, bool, bool]] = []
    # Text with no letter that has a case (Hangul, Han, digits): another case cannot help
    # (agent QA: ignore_case=true was offered for a Korean word)
    cased = text != text.casefold() or text != text.upper()
    ignore_case = ignore_case or not cased
    if not ignore_case:
        tries.append(("ignoring case (pass ignore_case=true)", bool(regex), True))
    if not regex and _REGEX_LOOK.search(text):
        tries.append(("as a regular expression (pass regex=true)", True, bool(ignore_case)))
        if not ignore_case:
            tries.append(
                (
                    "as a regular expression ignoring case (pass regex=true, ignore_case=true)",
                    True,
                    True,
                )
            )
    for how, as_regex, no_case in tries:
        try:
            found = rerun(as_regex, no_case)
        except OKFError:  # not a valid expression after all
            continue
        if found.concepts:
            return f"No match as written; {found.concepts} concept(s) match {how}."
    words = text.split()
    if not regex and len(words) > 1 and len(text) <= 2_000:
        # A sentence the page wraps across lines (agent QA F10: a quote checked before
        # citing it read "No concept holds the exact text", the opposite of the fact).
        spaced = r"\s+".join(re.escape(word) for word in words)
        found = rerun(True, ignore_case, pattern=spaced)
        if found.concepts:
            where = ", ".join(sorted({m.path for m in found.matches})[:3])
            return (
                f"No match on one line; {found.concepts} concept(s) hold the text across a "
                f"line break ({where}): pass regex=true with {spaced[:200]!r} to see where."
            )
    # The advice follows the call (agent QA: it offered ignore_case=true to a call that
    # had passed it, and "as written" to a regular expression).
    kind = "the regular expression" if regex else "the exact text"
    # Ignoring case was tried above and found nothing too (CLI QA: "in this letter case"
    # read as if another case would match)
    case = "" if ignore_case or not tries else ", in any letter case"
    how = " Try" if regex else " grep matches text as written: try"
    ideas = ["a looser expression" if regex else "a shorter piece"]
    ideas.append("or search_concepts for the words")
    return f"No concept holds {kind}{case}.{how} {', '.join(ideas)}."


# -- L2 --------------------------------------------------------------------------------------
def _loose(text: str) -> str:
    """Heading text as a reader types it: whitespace collapsed, case and the inline code
    and emphasis marks (`` ` ``, ``*``) ignored, so ``LOG_LEVEL`` finds ``### `LOG_LEVEL```,
    and typographic quotes and dashes read as typed ones (``format: "esm" - ES Module``
    finds bun-book's ``format: “esm” - ES Module``)."""
    plain = text.translate(_TYPED).replace("`", " ").replace("*", " ")
    return " ".join(plain.split()).casefold()


#: Typographic quotes and dashes, as a keyboard types them.
_TYPED = str.maketrans(
    {"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'",
     "\u2013": "-", "\u2014": "-"}
)  # fmt: skip


def _section(body: str, heading: str) -> tuple[str, str | None]:
    """The section under ``heading`` (to the next heading of its level or above) and a
    notice when other sections share its heading. ``heading`` is matched as written, then
    without inline marks, then as the heading's GitHub id (``log_level-1``: the second
    heading of that text), so every section can be asked for; last, as words that one
    heading holds whole (``Merge`` for ``Merge precedence``), which the notice says."""
    # Compared in Unicode NFC, as search and grep read text: a heading pasted in NFD
    # (a macOS clipboard, a PDF) was "not found", and the first suggestion looked the same
    # as what was asked (agent QA F7, IAST diacritics).
    wanted = unicodedata.normalize("NFC", heading.strip().lstrip("#").strip())
    headings = list(lines_outside_code(body, HEADING_LINES))
    texts = [unicodedata.normalize("NFC", heading_text(m.group(2))) for m in headings]
    ids = heading_ids(texts)
    exact = " ".join(wanted.split()).casefold()
    picked = next((i for i, t in enumerate(texts) if " ".join(t.split()).casefold() == exact), None)
    loose = [_loose(t) for t in texts]
    if picked is None:
        asked = _loose(wanted)
        picked = next((i for i, t in enumerate(loose) if t == asked), None)
    by_id = picked is None
    if by_id:
        key = fragment_key(unicodedata.normalize("NFC", heading.strip().removeprefix("#")))
        picked = next((i for i, anchor in enumerate(ids) if anchor == key), None)
    held = None
    holding: list[int] = []
    if picked is None:
        # The one heading that holds the words asked, whole (agent QA: "Merge" for the
        # page's only "Merge precedence" was not found); in CJK text, which writes no
        # space between words, as a piece of it (CLI QA: 状态机 for "1.2 状态机：...").
        core = _loose(wanted)
        asked = core if has_cjk(core) else f" {core} "
        holding = [i for i, t in enumerate(loose) if core and asked in f" {t} "]
        if holding and len({loose[i] for i in holding}) == 1:
            picked, held = holding[0], texts[holding[0]]
    if picked is None:
        raise NotFound(
            _no_section(heading, texts, holding), suggestions=_near(heading, texts, holding)
        )
    match = headings[picked]
    level = len(match.group(1))
    end = len(body)
    for later in headings[picked + 1 :]:
        if len(later.group(1)) <= level:
            end = later.start()
            break
    twins = [i for i, t in enumerate(loose) if t == loose[picked]]
    notice = None
    if len(twins) > 1 and not by_id:
        others = [repr(ids[i]) for i in twins if i != picked]
        which = "its id) for the other" if len(others) == 1 else "their ids) for the others"
        named = ", ".join(others[:_TWINS_NAMED])
        if len(others) > _TWINS_NAMED:
            # a few and the count (security QA: a million repeats of one heading made a
            # notice of 11.9 million characters, past every result cap)
            named += f" and {len(others) - _TWINS_NAMED} more (numbered on)"
        notice = (
            f"{len(twins)} sections are headed {clip(texts[picked], TITLE_CHARS)!r}; this is "
            f"the first: ask for section={named} ({which}"
        )
    if held is not None:
        read = f"No heading is {wanted!r}; this is the section headed {clip(held, TITLE_CHARS)!r}."
        notice = f"{read} {notice}" if notice else read
    return _with_footnotes(body, match.start(), end), notice


def _no_section(heading: str, texts: list[str], holding: list[int]) -> str:
    """Why no section is ``heading``: the headings that hold its words, when several do;
    the page's headings are in ``did_you_mean`` (CLI QA: they were listed twice, first as
    a Python list)."""
    if not texts:
        return f"no section {heading!r}: the page has no heading"
    if holding:
        named = "; ".join(repr(clip(texts[i], TITLE_CHARS)) for i in holding[:_HEADINGS_SHOWN])
        return f"no section {heading!r}: {len(holding)} headings hold it ({named}); ask for one"
    return (
        f"no section {heading!r}; the page's {len(texts)} headings are in did_you_mean, "
        "the closest first"
    )


def _near(heading: str, texts: list[str], holding: list[int]) -> list[str]:
    """The page's headings as ``did_you_mean``: those holding the words asked, else the
    close ones, first, then the others in order."""
    shown = [clip(t, TITLE_CHARS) for t in texts[:_HEADINGS_SHOWN]]
    first = [clip(texts[i], TITLE_CHARS) for i in holding] or closest(heading, shown)
    return list(dict.fromkeys([*first, *shown]))[:_HEADINGS_SHOWN]


#: Headings a section's not-found message names.
_HEADINGS_SHOWN = 30


def _with_footnotes(body: str, start: int, end: int) -> str:
    """``body[start:end]``, a section, with the footnotes it cites: a definition written
    elsewhere (most producers put them all at the end of the page) is added after it,
    and one in it that it does not cite is left out. crossplane QA: the last section of a
    page brought every footnote of the page, the others none of theirs."""
    spans = footnote_spans(body)
    if not spans:
        return body[start:end]
    cited = footnotes_cited(body[start:end])
    kept, after, at = [], [], start
    for label, first, last in spans:
        if start <= first < end:
            if label not in cited:  # not this section's: left out
                kept.append(body[at:first])
                at = min(last + 1, end)
        elif label in cited:
            after.append(body[first:last])
    kept.append(body[at:end])
    text = "".join(kept)
    if after:
        text = text.rstrip("\n") + "\n\n" + "\n".join(after) + "\n"
    return text


def read(
    box: Toolbox,
    path: Any,
    bundle: Any,
    section: Any,
    offset: Any,
    max_chars: Any,
    version: Any = None,
) -> dict[str, Any]:
    b, raw = located(box, path, bundle)
    heading = _text(section, "section", optional=True)
    if heading is not None and not heading.strip():
        heading = None  # a blank section is none: the whole body (agent QA: "" and " " differed)
    given = _text(version, "version", optional=True, max_len=64)
    if raw and "#" in raw and b.get(raw) is None:
        # "x.md#setup", as a link names a part of a page: that section (okf-studio QA); an
        # empty fragment (x.md#, a link copied short) is the page; with section= too, the
        # fragment is no part of the file's name (agent QA F9: "no concept at x.md#...").
        page, _, fragment = raw.partition("#")
        if b.get(page) is not None:
            named = unquote(fragment).strip()
            if named and heading is not None and heading.strip() != named:
                asked = f"path={raw!r} names the section {named!r} and section={heading!r}"
                if fragment_key(named) != fragment_key(heading.strip().removeprefix("#")):
                    raise InvalidArgument(f"{asked}: pass one of them")
            raw = page
            if named and heading is None:
                heading = named
    listing = folder_listing(b, raw or "", box.now())
    if listing is not None:  # a folder without index.md
        _event(path=listing["path"], found=True)
        where = f"list_concepts(directory={listing['path']!r}) pages through them all"
        leave_out(listing, "concepts", "concepts", where)
        return listing
    changed = False
    try:
        doc = b.document(raw)
    except NotFound as exc:
        whole = b.whole_now(exc.file) if exc.file else None
        if whole is None:
            raise _held_elsewhere(box, b, raw, exc) from None
        doc, changed = whole, True  # a concept again since the load: read as now
    _event(path=doc.path)
    if isinstance(doc, Concept) and not changed:
        now = b.as_now(doc)  # one version of the file: header and body alike
        if now is None:
            gone = notices.gone_since_load(doc.path, b.name, box.manager.reloads)
            raise NotFound(gone, path=doc.path)
        changed, doc = now is not doc, now
    start = _int(offset, "offset", 0)
    default = box.manager.max_body_chars
    cap = _int(max_chars, "max_chars", 1, MAX_READ_CHARS) if max_chars is not None else default
    text, twins = _section(doc.body, heading) if heading else (doc.body, None)
    requested, start = start, min(start, len(text))
    payload: dict[str, Any]
    # what is served when the folder or the git source could not be read again
    last = (
        notices.AS_LAST_READ
        if b.name in box.manager.reload_failures
        else notices.AS_LAST_FETCHED
        if b.name in box.manager.refresh_failures
        else None
    )
    if isinstance(doc, Concept):
        header = concept_header if start == 0 else continuation_header
        payload = header(b.name, doc, doc.is_stale(box.now()))
        payload["kind"] = "concept"
        if changed and "notices" in payload:
            payload["notices"].append(notices.changed_since_load(box.manager.reloads))
        if last is not None and "notices" in payload:
            payload["notices"].append(last)
    else:
        payload = {
            "bundle": b.name,
            "path": doc.path,
            "title": _page_title(doc),  # as get_neighbors names the page
            "kind": "index" if isinstance(doc, IndexFile) else "log",
        }
        log = b.logs.get(doc.directory) if isinstance(doc, IndexFile) else None
        if log is not None:  # the folder's history, found by no listing or search
            payload["log"] = log.path
        if last is not None:  # as a concept's notices say (edit QA: concepts alone did)
            payload["notice"] = last
    if start == 0:  # a continuation read does not repeat them
        headings = [m.group(2) for m in islice(lines_outside_code(doc.body, HEADING_LINES), 50)]
        payload["headings"] = [clip(heading_text(h), TITLE_CHARS) for h in headings]
    stamp = pageversions.of_text(text)
    said = None
    if given is not None and given != stamp:
        # edit QA: a part read after an edit was of another text, and nothing said so
        said = pageversions.part_moved(given, stamp, "section" if heading else "body", start)
    elif requested and requested >= len(text):
        said = notices.past_end(requested, len(text))
    elif twins:
        said = twins
    if said is not None:
        payload["notice"] = f"{payload['notice']} {said}" if payload.get("notice") else said
    payload.update(
        {
            "section": heading,
            "body": text[start : start + cap],
            "body_chars": len(text),
            "version": stamp,
            "offset": start,
            "truncated": False,
            "next_offset": None,
            "truncation": "",
        }
    )
    # The header and the body together stay within the result budget (okfx.tools.caps).
    chunk = payload["body"] = _whole_words(
        fit_text(payload, "body", RESULT_CHARS - 512), text, start
    )
    rest = max(len(text) - start - len(chunk), 0)
    payload.update(truncated=rest > 0, next_offset=start + len(chunk) if rest else None)
    del payload["truncation"]
    if rest:
        where = _where(box, b, section=heading)  # the section read goes on, in its bundle
        call = (
            f"read_concept(path={doc.path!r}{where}, offset={start + len(chunk)}, "
            f"version={stamp!r})"
        )
        notes = _only_footnotes(text, start + len(chunk))
        payload["truncation"] = (
            f"[cut: the rest is {notes} footnote definition(s), {rest} characters: the "
            f"sources they cite are in sources and citations; call {call} to read them]"
            if notes
            # a section read is one section already (agent QA N7)
            else f"[cut: {rest} more characters; call {call} for the rest"
            + ("]" if heading else ", or read one section]")
        )
    payload[UNTRUSTED] = True
    _event(found=True, body_chars=len(chunk))
    return payload


#: How many other sections of one heading a notice names by id.
_TWINS_NAMED = 10


def _only_footnotes(text: str, cut: int) -> int:
    """How many footnote definitions ``text`` holds after ``cut`` when nothing else but
    blank space does, else 0 (agent QA: for 9 of the 13 cut pages of one bundle, the
    read the cut asked for brought only the footnotes its sources had listed)."""
    spans = [(start, end) for _, start, end in footnote_spans(text) if end > cut]
    if not spans:
        return 0
    at = cut
    for start, end in spans:
        if text[at:start].strip():
            return 0
        at = max(at, end)
    return 0 if text[at:].strip() else len(spans)


#: How far back from a page's cut an end of line or word is looked for, in characters.
_CUT_BACK = 400


def _whole_words(chunk: str, text: str, start: int) -> str:
    """``chunk`` (``text`` from ``start``, cut short of its end) ending at its last line
    end, or else its last blank, within :data:`_CUT_BACK` characters of the cut, so that
    no word is split between two pages ("identif" / "iers": okf-studio QA); as it is
    when the rest of ``text`` follows or no such place is near (CJK text has no blanks)."""
    end = start + len(chunk)
    if end >= len(text) or not chunk or text[end].isspace() or chunk[-1].isspace():
        return chunk
    floor = max(len(chunk) - _CUT_BACK, len(chunk) // 2)
    at = chunk.rfind("\n", floor)
    if at < 0:
        at = max(chunk.rfind(" ", floor), chunk.rfind("\t", floor))
    return chunk[: at + 1] if at >= 0 else chunk


def neighbors(box: Toolbox, path: Any, bundle: Any, limit: Any, offset: Any) -> dict[str, Any]:
    """``path``'s links, a page of each list: its edges ``offset`` to ``offset + limit``,
    counted after merging the links of one end and field (a hub's 5,120 links come
    ``limit`` at a time, not 130k characters at once)."""
    limit, offset = _int(limit, "limit", 1, EDGES), _int(offset, "offset", 0)
    b, where = located(box, path, bundle)
    text = where or ""
    if "#" in text and b.get(text) is None and b.get(text.partition("#")[0]) is not None:
        text = text.partition("#")[0]  # "x.md#setup", as a link names a part: the page's
    folder = folder_no_links(b, text)
    if folder is not None:
        raise folder
    try:
        doc = b.document(text)
    except NotFound as exc:
        raise _next_step(b, exc) from None
    _event(path=doc.path)
    around = b.neighbors(doc.path)
    now = box.now()

    def meta(target: str) -> dict[str, Any] | None:
        found = b.get(target)
        if isinstance(found, Concept):
            return {
                "title": clip(found.title, TITLE_CHARS),
                "type": clip(found.type, TYPE_CHARS),
                "status": found.status,
                "trust_tier": found.trust_tier,
                "stale": found.is_stale(now),
            }
        if isinstance(found, IndexFile | LogFile):
            return {
                "title": _page_title(found),
                "type": "index" if isinstance(found, IndexFile) else "log",
            }
        if target in b.directories:  # a folder without index.md
            return {"title": target.rstrip("/").rsplit("/", 1)[-1] + "/", "type": "folder"}
        return None

    cut: list[str] = []
    totals: dict[str, int] = {}

    def page(name: str, items: list[Any]) -> list[Any]:
        totals[name] = len(items)
        return items[offset : offset + limit]

    def edges(
        links: tuple[Link, ...], outbound: bool, name: str, ids: Sequence[dict[str, Any]] = ()
    ) -> list[dict[str, Any]]:
        merged: dict[tuple[str, str], Link] = {}
        for link in links:  # one edge per other end and field, in link order
            merged.setdefault((link.target if outbound else link.source, link.field), link)
        out: list[dict[str, Any]] = []
        for item in page(name, [*merged.items(), *ids]):  # ids unresolved after the links
            if isinstance(item, dict):
                out.append(item)
                continue
            (other, _), link = item
            entry = link_payload(link, meta(other), other)
            candidates = b.wikilink_candidates(link) if name == "unresolved" else []
            if candidates:  # [[name]] naming several files: which, not a guess
                entry["reason"] = "ambiguous_wikilink"
                entry["candidates"] = candidates[:ID_CANDIDATES]
            elif name == "unresolved":
                nested = b.nested_root(other)
                skipped = None if nested else b.skipped_at(other)
                if skipped is not None:  # there, but okfx does not read it (viewer QA)
                    entry["not_read"] = clip(skipped, VALUE_CHARS)
                missing = None if nested or skipped else missing_folder(b.directories, other)
                if missing is not None:
                    entry["missing_folder"] = missing
                if nested is not None:  # there, but a bundle of its own (security QA)
                    entry["nested_bundle"] = clip(nested, VALUE_CHARS)
                close = meant(b, other, link.source)
                if close is not None:
                    entry["did_you_mean"] = close
            out.append(entry)
        return out

    payload: dict[str, Any] = {"bundle": b.name, "path": doc.path}
    if isinstance(doc, Concept):
        payload.update(
            {
                "title": clip(doc.title, TITLE_CHARS),
                "type": clip(doc.type, TYPE_CHARS),
                "status": doc.status,
            }
        )
    else:  # an index or a log page: named as a link to it is (review: it had neither)
        payload.update({key: value for key, value in (meta(doc.path) or {}).items()})
    payload.update(
        {
            "outbound": edges(around.outbound, True, "outbound"),
            "backlinks": edges(around.backlinks, False, "backlinks"),
            "unresolved": edges(
                around.unresolved,
                True,
                "unresolved",
                [id_payload(u) for u in b.unresolved_ids(doc.path)],
            ),
        }
    )
    listed = page("listed_in", list(b.listed_in(doc.path)))
    if listed:  # index and log pages list it: no backlinks, but no orphan either
        payload["listed_in"] = [{"path": source, **(meta(source) or {})} for source in listed]
    leaving = (
        _leaving(b, doc, cut, box.manager.bundles) if offset == 0 else []
    )  # not found again on each page
    if leaving:
        payload["leaves_bundle"] = leaving
    payload.update(total=totals, offset=offset)
    payload[UNTRUSTED] = True
    for text in cut:
        note(payload, text)
    keys = ("leaves_bundle", "listed_in", "backlinks", "unresolved", "outbound")
    leave_out_each(payload, keys, "ask for fewer links with limit")  # least wanted first
    _page_notes(payload, totals, offset, f"get_neighbors(path={doc.path!r}{_where(box, b)}")
    _event(found=True, hits=len(payload["outbound"]) + len(payload["backlinks"]))
    return payload


def _page_notes(payload: dict[str, Any], totals: dict[str, int], offset: int, call: str) -> None:
    """Say which edges of each list a ``get_neighbors`` page shows and where the next page
    starts (``next_offset``): after the shortest part shown of a list that goes on, so
    no edge is skipped, also when the result's size cap kept fewer than ``limit``."""
    goes_on: list[int] = []
    for name, total in totals.items():
        shown = len(payload.get(name, ()))
        if shown and total > offset + shown:
            first = f"{offset + 1}-" if offset else "the first "
            note(payload, f"{name}: {first}{offset + shown} of {total} shown")
            goes_on.append(offset + shown)
    payload["next_offset"] = min(goes_on) if goes_on else None
    if goes_on:
        note(payload, f"call {call}, offset={min(goes_on)}) for the next page")
    elif offset and offset >= max(totals.values()):
        longest = max(totals.values())
        note(payload, f"offset {offset} is past the end of every list: the longest has {longest}")


def _leaving(
    b: Bundle,
    doc: Concept | IndexFile | LogFile,
    cut: list[str],
    bundles: Mapping[str, Bundle],
) -> list[Any]:
    """The body links of ``doc`` that leave the bundle (``unsafe_link`` warnings), which
    have no edge: their hrefs as written, so an agent knows they exist and that okfx
    cannot follow them, and where one lands in another of the loaded ``bundles``, the
    bundle and path to read it by. Found again from the body, only when asked for."""
    if not b.problem_counts().get("unsafe_link"):
        return []  # the load counted every one (past max_warnings too): no body to scan
    limit = b.limits.max_links_per_concept
    links = leaving_links(doc.body, parent_dir(doc.path), limit)
    if b.wikilinks:  # a [[../x]] that climbs, as the load warned it (security QA)
        links.extend(leaving_wikilinks(doc.body, parent_dir(doc.path), limit))
        links.sort(key=lambda link: link[2])
    if not links:
        return []
    body_line = doc.body_line if isinstance(doc, Concept) else None
    out = []
    for href, text, offset in links[:EDGES]:
        line = None if body_line is None else body_line + doc.body.count("\n", 0, offset)
        entry: dict[str, Any] = {
            "href": clip(href, VALUE_CHARS),
            "field": "body",
            "text": clip(" ".join(text.split()), LABEL_CHARS),
            "line": line,
        }
        lands = landing(bundles, b, parent_dir(doc.path), href)
        if lands is not None:  # a sibling bundle loaded beside it (new-producers QA)
            entry["bundle"], entry["path"] = lands
        out.append(entry)
    if len(links) > EDGES:
        cut.append(f"leaves_bundle: the first {EDGES} of {len(links)} shown")
    return out


def _where(box: Toolbox, b: Bundle, section: str | None = None) -> str:
    """The arguments a "call ... for the rest" hint needs besides path and offset: the
    section being read, and the bundle when several are loaded (MCP QA: the hint, called
    as written, answered "pass bundle=")."""
    said = f", section={section!r}" if section else ""
    return said + (f", bundle={b.name!r}" if len(box.manager.bundles) > 1 else "")


def _page_title(page: IndexFile | LogFile) -> str:
    """How the tools name an index or log page: its first heading (a log's title), as a
    reader knows the page; without one, its folder and name (``cli-guide/index.md``),
    which tell apart the index files a root index links."""
    named = page.path.lstrip("/").rsplit("/", 2)[-2:]
    return clip(page_heading(page), TITLE_CHARS) or "/".join(named)


# -- L3 --------------------------------------------------------------------------------------
#: The continuation bytes a resource offset may land on inside a UTF-8 character.
_LEAD = 3


def _continuation_bytes(data: bytes) -> int:
    """How many of ``data``'s first bytes continue a UTF-8 character (``10xxxxxx``)."""
    count = 0
    while count < len(data) and data[count] & 0xC0 == 0x80:
        count += 1
    return count


def _same_name(b: Bundle, canon: str, most: int = 3) -> list[str]:
    """The bundle's files that are no concept named as ``canon``'s last part is, by file
    name or, for a name without an extension, by stem (``viz`` for ``/viz.html``), in
    path order: the file an agent remembers by name, wherever it lies (agent QA F4: the
    path similarity named a concept page for ``wiki-rag-flow.svg``, never
    ``/raw/assets/wiki-rag-flow.svg``)."""
    name = canon.rsplit("/", 1)[-1]
    if not name:
        return []
    by_stem = "." not in name
    found = []
    for path in b.files_named(name):
        leaf = path.rsplit("/", 1)[-1].casefold()
        if leaf != name.casefold() and not by_stem:
            continue  # a name with an extension names files of that very name only
        if path != canon and path not in found and not isinstance(b.get(path), Concept):
            found.append(path)
            if len(found) == most:
                break
    return found


#: The fewest bytes a read_resource page may be asked for (``max_bytes``).
MIN_RESOURCE_PAGE = 256


def resource(
    box: Toolbox,
    path: Any,
    bundle: Any,
    offset: Any = 0,
    version: Any = None,
    max_bytes: Any = None,
) -> dict[str, Any]:
    b, raw = located(box, path, bundle)
    assert raw is not None
    start = _int(offset, "offset", 0)
    most = b.limits.max_resource_bytes
    # a smaller page when asked (agent QA N6: one call gave 72 KB, a minified script)
    asked_bytes = _int(max_bytes, "max_bytes", MIN_RESOURCE_PAGE) if max_bytes is not None else None
    given = _text(version, "version", optional=True, max_len=64)
    from okfx.bundle.paths import normalize

    if "#" in raw and raw.partition("#")[0] and normalize(raw.partition("#")[0]) in b.files:
        raw = raw.partition("#")[0]  # "api.yaml#paths", as a link names a part: the file
    canon = b.file_path(normalize(raw))
    _event(path=canon)
    if canon not in b.files:
        folder = notices.folder_not_file(b, canon)
        if folder is not None:
            raise folder
        nested = b.nested_not_found(canon, "file")
        if nested is not None:
            raise nested
        close = list(dict.fromkeys([*_same_name(b, canon), *b.names(files=True).suggest(canon)]))
        # read_resource reads the files that are no concept: those first; a concept
        # among them is named for read_concept (m3e QA: a suggested concept path, tried
        # next, answered invalid_argument)
        concepts = [p for p in close if isinstance(b.get(p), Concept)]
        message = f"no file at {canon} in bundle {b.name!r}"
        if (hidden := hidden_said(canon)) is not None:
            message += f": okfx does not read it ({hidden})"
        if concepts:
            message += f"; close paths that are concepts, for read_concept: {', '.join(concepts)}"
        raise NotFound(
            message,
            path=canon,
            suggestions=[p for p in close if p not in concepts] + concepts,
        )
    # A concept's file reads as written, frontmatter included: read_concept shows each
    # frontmatter value within a cap, and the rest of a long one (an ontology's `sql`)
    # had no other way to be read (agent QA, ultracart).
    is_concept = isinstance(b.get(canon), Concept)
    cap = max(min(most, asked_bytes or most), 4)  # a page holds at least one character
    try:  # no symlink followed: a race that swaps a folder fails, never reads outside
        head, st = read_page(b.open_file(canon), cap + _LEAD, start)
    except OSError as exc:
        if b.gone_now(canon):  # deleted, or now a symlink, folder or FIFO (edit QA)
            gone = NotFound(
                f"{canon} in bundle {b.name!r} is gone, or no longer a file, since the bundle "
                "was loaded (or is being saved right now)",
                path=canon,
            )
            raise gone.quoting_bundle() from None
        failed = Unreadable(f"{canon} cannot be read: {open_error(exc)}", path=canon)
        raise failed.quoting_bundle() from None
    size, stamp = st.st_size, pageversions.of_file(st)
    asked, start = start, min(start, size)
    # An offset inside a character (not one okfx gave) moves on to the next character.
    lead = _continuation_bytes(head[:_LEAD]) if start else 0
    start, head = start + lead, head[lead : lead + cap]
    if b"\x00" in head[:8192]:
        binary = Unreadable(
            f"{canon} is a binary file; only text resources can be read", path=canon
        )
        raise binary.quoting_bundle()
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if start + len(head) >= size or exc.start < len(head) - 4:
            raise Unreadable(f"{canon} is not UTF-8 text", path=canon).quoting_bundle() from None
        text = head[: exc.start].decode("utf-8")  # a character cut at the cap
    if start + len(head) < size:
        # A cut page ends at its last line end when that is in its second half, so a
        # statement or line of code is not split between two reads.
        line_end = text.rfind("\n") + 1
        if line_end and len(text[:line_end].encode("utf-8")) * 2 >= cap:
            text = text[:line_end]
    end = start + len(text.encode("utf-8"))
    _event(found=True, body_chars=len(text))
    payload: dict[str, Any] = {
        "bundle": b.name,
        "path": canon,
        "bytes": size,
        "version": stamp,
        "offset": start,
        "text": text,
        "truncated": end < size,
        "next_offset": end if end < size else None,
    }
    if end < size:
        payload["truncation"] = (
            f"[cut: {size - end} more bytes; call read_resource(path={canon!r}"
            f"{_where(box, b)}, offset={end}, version={stamp!r}"
            f"{f', max_bytes={asked_bytes}' if asked_bytes and asked_bytes < most else ''})"
            " for the rest]"
        )
    if given is not None and given != stamp:
        payload["notice"] = pageversions.part_moved(given, stamp, "file", start)
    elif start and not text:
        where = "at the end" if asked == start else "past the end"
        payload["notice"] = (
            f"offset {asked} is {where} of the file ({size} bytes): nothing is left to "
            "read; call with offset=0 to read from the start."
        )
    payload.update(
        {
            "note": _CONCEPT_FILE if is_concept else _ATTACHED_FILE,
            UNTRUSTED: True,
        }
    )
    return payload


_ATTACHED_FILE = "A file attached to the bundle, returned as text; okfx never runs it."
_CONCEPT_FILE = (
    "A concept's file as written, frontmatter included, returned as text; read_concept "
    "gives its header (trust tier, provenance, freshness) and body."
)
