"""The Search and Grep pages: the search_concepts and grep_concepts tools, so a person
sees the ranking an agent gets (hybrid when it is enabled), with the matches marked."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import re2

from okfx.search.analyzer import analyze_query, latin_marks_in_place
from okfx.search.cjk import has_cjk
from okfx.search.scoring import CONFIDENT
from okfx.search.versions import other_versions
from okfx.tools.notices import close_sentence, reworded
from okfx.tools.toolbox import Toolbox
from okfx.web import urls
from okfx.web.answers import checked, flag_arg, int_arg
from okfx.web.site import view_of

__all__ = ["grep", "marked", "plain", "search"]


def _filters(params: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "bundle": params.get("bundle") or None,
        "type": params.get("type") or None,
        "tags": [t for t in params.get("tag", []) if t] or None,
        "directory": params.get("dir") or None,
        "include_deprecated": flag_arg(params.get("deprecated")),
    }


def _placed(box: Toolbox, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Search hits or grep matches, each with the ``url`` of its page."""
    for item in found:
        item["url"] = view_of(box.manager.bundle(item["bundle"])).url_of(item["path"])
    return found


def search(box: Toolbox, params: Mapping[str, Any]) -> dict[str, Any]:
    """Ranked search: the search_concepts tool, its hits placed and their words marked."""
    query = (params.get("q") or "").strip()
    filters = _filters(params)
    tier = params.get("tier") or None
    stale = params.get("stale") != "exclude"
    context: dict[str, Any] = {
        "title": f"Search: {query}" if query else "Search",
        "q": query,
        "params": {**filters, "tier": tier, "stale": "" if stale else "exclude"},
        "hits": [],
        "bundles": box.manager.names,
    }
    if not query:
        return context
    limit = int_arg(params.get("limit"), SHOWN, 1, MOST)
    payload = checked(
        box.search_concepts(
            query=query,
            limit=limit,
            trust_tier=tier,
            include_stale=stale,
            **filters,
        )
    )
    forms = {term.text: [form for form, _ in term.forms] for term in analyze_query(query)}
    for hit in _placed(box, payload["hits"]):
        held = [form for term in hit["matched"] for form in forms.get(term, ())]
        hit["pieces"] = marked(plain(hit["snippet"]), hit["matched"], held)
        # Under CONFIDENT the hit holds few of the query's words: say so, as agents read it.
        hit["weak"] = float(hit.get("confidence", 1.0)) < CONFIDENT
        named, hit["more_versions"] = other_versions(hit)  # a page kept once per release
        hit["versions"] = [(v, urls.concept(hit["bundle"], path)) for v, path in named]
    close = [
        (c["title"], c["bundle"], urls.concept(c["bundle"], c["path"]))
        for c in payload.get("did_you_mean") or ()
    ]
    notice = payload.get("notice", "")
    respelt = payload.get("respelled_query")
    if close and not respelt:  # the names are the links under the notice: once is enough
        notice = notice.replace(close_sentence(payload["did_you_mean"]), "")
    notice = reworded(notice, _VIEWER_WORDS)
    context.update({"hits": payload["hits"], "notice": notice, "close": close})
    if respelt:  # the query spelt with the bundle's words, as a search to run
        asked = {key: params.get(key) for key in ("bundle", "type", "dir", "tier", "stale")}
        context["respelt"] = (respelt, urls.search(q=respelt, **asked))
    if len(payload["hits"]) == limit < MOST:  # there may be more: say so, and how to see them
        asked = {key: params.get(key) for key in ("q", "bundle", "type", "dir", "tier", "stale")}
        asked.update(tag=params.get("tag") or None, deprecated=params.get("deprecated"))
        context["more"] = (limit, urls.search(**asked, limit=MOST))
    return context


#: Hits a search page shows, and at most (the search_concepts tool's own limit).
SHOWN = 20
MOST = 50


#: The tools' notices name tools and their arguments; on a page they are the page's own
#: links and boxes (the close names are listed as links under the notice).
_VIEWER_WORDS = {
    "pass regex=true with": "tick “regular expression” and grep for",
    "with search_concepts, or browse with list_concepts": "with search, or browse by type or tag",
    "ask for more hits with limit, or grep_concepts for": "show more hits, or grep for",
    "grep_concepts for": "grep for",
    "list_concepts with a type or tag to browse": "browse by type or tag",
    "pass include_deprecated=true to see them": "tick “include deprecated” to see them",
    "pass include_stale=true to see them": "untick “leave out stale” to see them",
    " (did_you_mean)": "",
    "its best hits are in did_you_mean": "its best hits are the links below",
    "if any, are in did_you_mean": "if any, are the links below",
    # grep's and the rows' advice, in the page's boxes and pages (viewer QA)
    "(pass regex=true, ignore_case=true)": "(tick “regular expression” and “ignore case”)",
    "(pass ignore_case=true)": "(tick “ignore case”)",
    "(pass regex=true)": "(tick “regular expression”)",
    ", ignore_case=true, or search_concepts for the words": (
        ", tick “ignore case”, or search for the words"
    ),
    ", or search_concepts for the words": ", or search for the words",
    "pass bundle= to grep one": "choose one in Bundle to grep it alone",
    "; read_concept says so.": "; its page says so.",
    # error pages (viewer QA: they spoke the tools' words)
    "; read it as an attached file (read_resource)": "; open it as a file",
    "are read with read_concept)": "have pages of their own)",
    "(okfx serve --watch reloads them when their files change)": (
        "(okfx view without --no-watch reloads them when their files change)"
    ),
}


def page_words(text: str) -> str:
    """A tool's sentence (a notice, an error) in the viewer's words."""
    return reworded(text, _VIEWER_WORDS)


def grep(box: Toolbox, params: Mapping[str, Any]) -> dict[str, Any]:
    """Grep: the grep_concepts tool, each matching line with its matches marked."""
    pattern = params.get("pattern") or ""
    regex = flag_arg(params.get("regex"))
    ignore_case = flag_arg(params.get("i"))
    filters = _filters(params)
    context: dict[str, Any] = {
        "title": f"Grep: {pattern}" if pattern else "Grep",
        "pattern": pattern,
        "regex": regex,
        "ignore_case": ignore_case,
        "params": filters,
        "matches": [],
        "bundles": box.manager.names,
    }
    if not pattern:
        return context
    found = box.grep_concepts(
        pattern=pattern, regex=regex, ignore_case=ignore_case, limit=200, **filters
    )
    if (found.get("error") or {}).get("code") == "invalid_regex":
        # The form again with the pattern as typed, and why, in the page's words: a
        # bare 400 page had dropped both (viewer QA).
        message = str(found["error"]["message"]).replace(
            "pass regex=false", "untick “regular expression”"
        )
        context.update(notice=message, status=400)
        return context
    payload = checked(found)
    finder = _finder(pattern, regex, ignore_case)
    for match in _placed(box, payload["matches"]):
        match["pieces"] = _pieces(match["text"], finder)
        # The page a line is on, as a reader knows it (viewer QA: a path alone).
        doc = box.manager.bundle(match["bundle"]).get(match["path"])
        match["title"] = getattr(doc, "title", "") or ""
    notice = reworded(payload.get("notice", ""), _VIEWER_WORDS)
    matches = payload["matches"]
    context.update(
        {
            "matches": matches,
            "notice": notice,
            "concepts": payload.get("concepts", 0),
            # the concepts the lines shown come from (fewer when the lines were cut)
            "shown_concepts": len({(m["bundle"], m["path"]) for m in matches}),
        }
    )
    return context


def plain(line: str) -> str:
    """A snippet (one markdown line, as agents get it) as a person reads it: a heading's
    ``#`` run, a list's bullet, emphasis and code marks and a table's pipes gone, and a
    link ``[text](url)`` its text. String steps only: a snippet is bundle text."""
    text = line.strip()
    head = text.lstrip("#")
    if head != text and head[:1] in (" ", "\t"):
        text = head.strip()
    if text[:2] in ("- ", "* ", "+ ", "> "):
        text = text[2:]
    if "[[" in text:
        text = _wikilinks_as_text(text)
    if text.startswith(_CUT):
        # A cut that starts inside a link's text leaves its end (``…RFC 9700](x.md), …``).
        closed, opened = text.find("]("), text.find("[")
        end = text.find(")", closed) if closed >= 0 else -1
        if end >= 0 and (opened < 0 or opened > closed):
            text = text[:closed] + text[end + 1 :]
    out: list[str] = []
    at = 0
    while (opened := text.find("[", at)) >= 0:
        closed = text.find("](", opened)
        end = text.find(")", closed) if closed >= 0 else -1
        if closed >= 0 and end < 0 and "[" not in text[opened + 1 : closed]:
            # A link the snippet's cut ends inside (``[text](https://learn.micro…``).
            out += (text[at:opened], text[opened + 1 : closed], "…")
            at = len(text)
            break
        if closed < 0 and text.endswith(_CUT) and "]" not in text[opened:]:
            # A cut that ends inside a link's text (``… unlike a [bearer to…``).
            out += (text[at:opened], text[opened + 1 :])
            at = len(text)
            break
        if closed < 0 or end < 0 or "[" in text[opened + 1 : closed]:
            out.append(text[at : opened + 1])
            at = opened + 1
            continue
        out += (text[at:opened], text[opened + 1 : closed])
        at = end + 1
    text = "".join(out) + text[at:]
    for mark in ("**", "__", "`"):
        text = text.replace(mark, "")
    text = _without_emphasis(text)
    if text.startswith("|") or " | " in text:
        text = " · ".join(cell.strip() for cell in text.strip("|").split("|") if cell.strip())
    return text


def _wikilinks_as_text(text: str) -> str:
    """``text`` with each ``[[target|label]]`` its label and ``[[target#part]]`` its
    target, as the viewer shows a wikilink (viewer QA: snippets showed them raw)."""
    out: list[str] = []
    at = 0
    while (opened := text.find("[[", at)) >= 0:
        closed = text.find("]]", opened + 2)
        inner = text[opened + 2 : closed] if closed >= 0 else ""
        if closed < 0 or "\n" in inner or "[" in inner:
            out.append(text[at : opened + 2])
            at = opened + 2
            continue
        target, bar, label = inner.partition("|")
        out += (text[at:opened], (label if bar else target.partition("#")[0]).strip())
        at = closed + 2
    return "".join(out) + text[at:]


_CUT = "\u2026"  # where a snippet's line was cut


def _without_emphasis(text: str) -> str:
    """``text`` without the single ``*`` of ``*emphasis*``: an opening one before a
    character that is no blank, at the start or after a blank or an opening bracket, and
    its closing one after a character that is no blank, at the end or before a blank or
    punctuation. A lone ``*`` (``3 * 4``, ``*.md``) stays."""
    out: list[str] = []
    at = 0
    while (opened := text.find("*", at)) >= 0:
        before = text[opened - 1] if opened else " "
        after = text[opened + 1 : opened + 2]
        closed = text.find("*", opened + 1)
        if (
            closed > opened + 1
            and (before.isspace() or before in "([")
            and after.strip()
            and text[closed - 1].strip()
            and not text[closed + 1 : closed + 2].isalnum()
        ):
            out += (text[at:opened], text[opened + 1 : closed])
            at = closed + 1
        else:
            out.append(text[at : opened + 1])
            at = opened + 1
    return "".join(out) + text[at:]


def marked(text: str, terms: list[str], forms: Sequence[str] = ()) -> list[tuple[str, bool]]:
    """``text`` cut into ``(piece, is_match)`` where a word starts with a matched term,
    or is one of its word ``forms`` whole ("push" and "pushing" for "pushed"), or, for a
    Chinese, Japanese or Korean term (written without spaces between words), wherever
    the term itself is."""
    words = sorted({t for t in terms if t}, key=len, reverse=True)
    if not words:
        return [(text, False)]
    # A word is marked from its start (a term's plural or longer form too), but a term of
    # one or two characters only whole ("s" of "S4U" would mark every word in s).
    alternatives = [
        re.escape(word)
        if has_cjk(word)
        else r"\b" + re.escape(word) + (r"\b" if len(word) <= 2 else r"\w*")
        for word in words
    ]
    # A word form only whole: "push" of "pushed" must not mark "pushover".
    whole = sorted({f for f in forms if f and not has_cjk(f)} - set(words), key=len, reverse=True)
    alternatives += [r"\b" + re.escape(form) + r"\b" for form in whole]
    # matched on the text without its Latin diacritics, as search read it ("badha" marks
    # "bādha"), and cut from the text as written: the offsets are the same
    return _pieces(text, re.compile("(?i)" + "|".join(alternatives)), latin_marks_in_place(text))


def _finder(pattern: str, regex: bool, ignore_case: bool) -> Any:
    text = pattern if regex else re.escape(pattern)
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True  # only whole matches are marked (see okfx.search.grep)
    try:
        return re2.compile(("(?i)" if ignore_case else "") + text, options)
    except Exception:  # the tool reported it already
        return None


def _pieces(text: str, finder: Any, searched: str | None = None) -> list[tuple[str, bool]]:
    """``text`` cut at ``finder``'s matches in ``searched`` (``text`` itself by default;
    else a copy of the same length)."""
    if finder is None:
        return [(text, False)]
    out: list[tuple[str, bool]] = []
    at = 0
    for match in finder.finditer(text if searched is None else searched):
        if match.end() == match.start():
            continue
        out.append((text[at : match.start()], False))
        out.append((text[match.start() : match.end()], True))
        at = match.end()
    out.append((text[at:], False))
    return [piece for piece in out if piece[0]]
