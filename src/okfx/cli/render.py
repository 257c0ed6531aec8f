"""Readable terminal output for the ``okfx`` commands: tool payloads as text.

Each function takes the dict a :class:`~okfx.tools.toolbox.Toolbox` tool returned and gives back
lines; ``click.echo`` drops the colours when the output is not a terminal. Payload keys are
read with ``.get`` so a renderer never fails on a field another tool version left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import click
import re2

from okfx.bundle.problems import kinds, problem_line, varied
from okfx.cli import target
from okfx.cli.terminal import HIDDEN_SHOWN, columns, cut_columns, visible, visible_line
from okfx.errors import OKFError
from okfx.search.scoring import CONFIDENT
from okfx.search.snippets import cut_line
from okfx.search.versions import other_versions
from okfx.tools.display import one_line, quoted
from okfx.tools.notices import reworded

if TYPE_CHECKING:
    from okfx.bundle.validate import ConformanceReport
    from okfx.model import Problem
    from okfx.tools.manager import KnowledgeManager

__all__ = [
    "badges",
    "bundles",
    "concept",
    "error",
    "folder",
    "grep",
    "index",
    "neighbors",
    "report",
    "resource",
    "search",
    "serve_banner",
    "stdio_notice",
    "table",
]

TIER_COLOURS = {"human-reviewed": "green", "machine-confirmed": "cyan", "unverified": "yellow"}
STATUS_COLOURS = {"deprecated": "red", "draft": "yellow"}
MAX_CELL = 48
#: Problems the validate report shows per code before "… N more".
REPORT_EXAMPLES = 3


def _edge_name(edge: dict[str, Any], key: str) -> str:
    """An edge's other end as the TITLE (TEXT) column names it: its title, else the link's
    text, but not a field name the VIA column gives (a file's ``computation`` edge)."""
    if edge.get("title"):
        return str(edge["title"])
    text = str(edge.get("text") or "")
    return "" if key != "unresolved" and text == edge.get("field") else text


def _dim(text: str) -> str:
    return click.style(text, dim=True)


def badges(row: dict[str, Any]) -> str:
    """Trust and lifecycle flags, e.g. ``[human-reviewed] [DEPRECATED] [STALE]``."""
    out: list[str] = []
    tier = row.get("trust_tier")
    if tier:
        out.append(click.style(f"[{tier}]", fg=TIER_COLOURS.get(tier)))
    status = row.get("status")
    if status and status != "stable":
        out.append(click.style(f"[{str(status).upper()}]", fg=STATUS_COLOURS.get(status, "red")))
    if row.get("stale"):
        out.append(click.style("[STALE]", fg="red", bold=True))
    return " ".join(out)


def _cut_around(text: str, width: int, needles: Iterable[str], regex: str = "") -> str:
    """``text`` cut to ``width`` around the first place one of ``needles`` (or ``regex``)
    matches it, regardless of case; from its start when none does. A hit's excerpt is
    centred on its match, but its match can sit near its end (a long line's last words):
    a cut from the start would leave the very words searched for out."""
    if columns(text) <= width:
        return text
    spans = [m.span() for n in needles if n and (m := re.search(re.escape(n), text, re.I))]
    if not spans and regex:
        spans += _regex_span(regex, text)
    if not spans:
        return cut_columns(text, width)
    start, end = min(spans)
    chars = width
    shown = cut_line(text, start, end, chars)
    while columns(shown) > width and chars > 1:  # wide (CJK) characters take two columns
        chars -= max(1, (columns(shown) - width + 1) // 2)
        shown = cut_line(text, start, end, chars)
    return shown


def _regex_span(pattern: str, text: str) -> list[tuple[int, int]]:
    """Where ``pattern`` first matches ``text`` (case ignored), as grep reads it: with
    RE2, in linear time whatever the pattern; ``[]`` when it does not, or is no RE2."""
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = False
    data = text.encode("utf-8")
    try:
        found = re2.compile(pattern, options).search(data)
    except re2.error:
        return []
    if found is None or found.end() <= found.start():
        return []
    start = len(data[: found.start()].decode("utf-8", "ignore"))
    return [(start, start + len(data[found.start() : found.end()].decode("utf-8", "ignore")))]


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], last: Sequence[str] = ()) -> str:
    """Columns aligned by hand; ``last`` (already styled) is appended unpadded to each row.
    A cell is cut at :data:`MAX_CELL` columns, but for the first: a path or a name, which a
    reader pastes into the next command, so it is shown whole."""
    cells = [
        [
            text if i == 0 else cut_columns(text, MAX_CELL)
            for i, text in enumerate(" ".join(str(c).split()) for c in row)
        ]
        for row in rows
    ]
    widths = [max([len(h)] + [columns(r[i]) for r in cells]) for i, h in enumerate(headers)]
    head = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    lines = [click.style(head.rstrip(), bold=True)]
    for i, row in enumerate(cells):
        text = "  ".join(c + " " * (w - columns(c)) for c, w in zip(row, widths, strict=True))
        tail = last[i] if i < len(last) else ""
        lines.append(f"{text}  {tail}".rstrip())
    return "\n".join(lines)


def error(payload: dict[str, Any]) -> str:
    """``error[code]: message`` plus close matches."""
    err = payload.get("error") or {}
    message = cli_words(str(err.get("message")))
    line = click.style(f"error[{err.get('code', 'error')}]", fg="red") + f": {message}"
    if err.get("did_you_mean"):
        line += "\n  did you mean: " + ", ".join(map(_cli_address, err["did_you_mean"]))
    return line


def _cli_address(item: object) -> str:
    """A tool's ``okf://bundle/path`` as the CLI writes a concept, ``bundle:/path`` (docs
    QA: several bundles' suggestions read as addresses no other CLI output uses)."""
    text = str(item)
    if not text.startswith("okf://"):
        return text
    name, _, path = text[len("okf://") :].partition("/")
    return f"{unquote(name)}:/{unquote(path)}"


def _several_bundles(items: Sequence[dict[str, Any]], several: bool | None) -> bool:
    """Whether rows name their bundle: when several bundles are loaded (``several``), or
    when the rows come from more than one."""
    return bool(several) or len({item.get("bundle") for item in items}) > 1


#: The tools' notices and errors name tools and their arguments; on the command line they
#: are commands and options.
CLI_WORDS = {
    "pass regex=true with": "grep with --regex for",
    "with search_concepts, or browse with list_concepts": (
        "with okfx search, or browse with okfx index"
    ),
    "ask for more hits with limit, or grep_concepts for": (
        "ask for more with --limit, or okfx grep for"
    ),
    "pass include_deprecated=true": "add --include-deprecated",
    "pass include_stale=true": "drop --exclude-stale",
    "pass regex=false": "drop --regex",
    "pass regex=true, ignore_case=true": "add --regex -i",
    "pass regex=true": "add --regex",
    "pass ignore_case=true": "add -i",
    "piece, ignore_case=true, or search_concepts for": "piece, -i, or okfx search for",
    "or search_concepts for the words": "or okfx search for the words",
    "grep_concepts for": "okfx grep for",
    "list_concepts with a type or tag": "okfx index with --type or --tag",
    "call with offset=0": "use --offset 0",
    "raise limit (at most 200)": "raise --limit (at most 200)",
    "pass bundle= to grep one": "choose one with --bundle NAME",
    "ask for section=": "ask for --section ",
    "read_concept": "okfx read",
    "get_neighbors gives each link's": "okfx neighbors gives each link's",
    " (did_you_mean)": "",
    "its best hits are in did_you_mean": "its best hits are listed below",
    "headings are in did_you_mean": "headings are listed below",
    "pass bundle= one of": "choose one with --bundle NAME:",
    # (CLI QA: the filters and the limit were named as the tool's arguments)
    "limit is at most": "--limit is at most",
    " rows; continue from next_offset.": " rows.",
    "filter by directory, type or tags": "filter with --dir, --type or --tag",
    "(directory filter)": "(--dir)",
    "(type filter)": "(--type)",
    "(tags filter)": "(--tag)",
    "(trust_tier filter)": "(--trust-tier)",
    "(bundle filter)": "(--bundle)",
    "; read it as an attached file (read_resource)": "; shown as a file",
    "list_bundles says why (its empty field), as okfx validate does": "okfx validate says why",
    "list_bundles says why (their empty fields), as okfx validate does": "okfx validate says why",
}


def cli_words(text: str) -> str:
    """A tool's sentence in the command line's words."""
    return reworded(text, CLI_WORDS)


def _notice(payload: dict[str, Any]) -> list[str]:
    notice = cli_words(str(payload.get("notice") or ""))
    return [click.style(notice, fg="yellow")] if notice else []


def bundles(payload: dict[str, Any]) -> str:
    rows = payload.get("bundles") or []
    body = table(
        ["BUNDLE", "CONCEPTS", "OKF", "ERRORS", "WARNINGS"],
        [
            [str(b.get("name")), str(b.get("concepts")), str(b.get("okf_version") or "-"),
             str(b.get("errors", 0)), str(b.get("warnings"))]
            for b in rows
        ],
    )  # fmt: skip
    # why a bundle holds no concept (docs QA: a bundle in a hidden .okf read "0", and
    # only --json said why)
    empty = [f"{b.get('name')}: {b['empty']}" for b in rows if b.get("empty")]
    return "\n".join([body, *empty])


def index(payload: dict[str, Any]) -> str:
    rows = payload.get("concepts") or []
    if not rows:
        first = "No concepts on this page." if payload.get("total") else "No concepts match."
        return "\n".join([first, *_notice(payload)])
    several = payload.get("bundle") is None  # rows of every bundle: each names its own
    body = table(
        ["PATH", "TYPE", "TITLE"],
        [[f"{r.get('bundle')}:{r.get('path')}" if several else str(r.get("path")),
          str(r.get("type")), str(r.get("title"))] for r in rows],
        [badges(r) for r in rows],
    )  # fmt: skip
    start = int(payload.get("offset") or 0)
    total = payload.get("total")
    footer = f"{start + 1}-{start + len(rows)} of {total} concept{'' if total == 1 else 's'}"
    footer += f" in {payload.get('bundle')}" if payload.get("bundle") else ""
    if payload.get("next_offset") is not None:
        footer += f"; next page: --offset {payload['next_offset']}"
    return "\n".join([body, _dim(footer), *_notice(payload)])


def _one(value: Any) -> str:
    """A one-line field of bundle text (a title, a type, a description) on one line: a
    line break in it would print a line of its own, a fake path, score or badge under a
    hit (CLI QA; index and grep fold them the same way)."""
    return one_line(str(value))


def search(payload: dict[str, Any], several: bool | None = None) -> str:
    """Ranked hits; each names its bundle (``bundle:path``) when ``several`` are loaded."""
    hits = payload.get("hits") or []
    if not hits:  # the notice says there were none, and what to try
        return "\n".join(
            (_notice(payload) + _respelled(payload, hits))
            or [f"No hits for {quoted(str(payload.get('query', '')))}."]
        )
    lines: list[str] = []
    several = _several_bundles(hits, several)
    for rank, hit in enumerate(hits, 1):
        title = click.style(_one(hit.get("title")), bold=True)
        sure = hit.get("confidence")
        weak = isinstance(sure, int | float) and sure < CONFIDENT
        # A page holding few of the query's words: said, as the viewer's badge says it.
        flags = badges(hit) + (" " + click.style("[weak match]", fg="yellow") if weak else "")
        lines.append(f"{rank:>2}. {title}  {flags}".rstrip())
        score = hit.get("score")
        where = f"{_one(hit.get('path'))}  ({_one(hit.get('type'))}"
        if isinstance(score, int | float):
            where += f", score {score:.2f}"
        where += f", confidence {sure:.2f})" if isinstance(sure, int | float) else ")"
        if several:
            where = target.shown(hit.get("bundle"), where)
        lines.append("    " + _dim(where))
        if hit.get("snippet"):
            snippet = " ".join(str(hit["snippet"]).split())
            lines.append("    " + _cut_around(snippet, 100, map(str, hit.get("matched") or ())))
        lines += _also(hit)
    notice, listed = _notice(payload), _respelled(payload, hits)
    if notice and not listed:  # they are these hits (or none is named)
        notice = [notice[0].replace("are listed below", "are the hits above")]
    return "\n".join(lines + notice + listed)


def _respelled(payload: dict[str, Any], hits: Sequence[dict[str, Any]]) -> list[str]:
    """The best hits of the query spelt with the bundle's words, which the notice says
    are in ``did_you_mean`` (CLI QA: a list the text never showed): listed under the
    notice, or said to be these hits when they are."""
    close = [c for c in payload.get("did_you_mean") or () if isinstance(c, dict)]
    if not close or not payload.get("respelled_query"):
        return []
    shown = {(h.get("bundle"), h.get("path")) for h in hits}
    if all((c.get("bundle"), c.get("path")) in shown for c in close):
        return []
    several = _several_bundles(close, None)
    rows = []
    for item in close:
        path = _one(item.get("path"))
        where = target.shown(item.get("bundle"), path) if several else path
        rows.append(f"  {where}  {_one(item.get('title'))}")
    return rows


#: Other versions of a folded hit that ``okfx search`` names before "and N more".
ALSO_VERSIONS = 5


def _also(hit: dict[str, Any]) -> list[str]:
    """The line under a hit that folded other versions of its page: ``also 3.12, 3.11``."""
    named, more = other_versions(hit)
    if not named:
        return []
    more += max(len(named) - ALSO_VERSIONS, 0)
    said = ", ".join(version for version, _ in named[:ALSO_VERSIONS])
    return ["    " + _dim(f"also {said}" + (f" and {more} more" if more else ""))]


def grep(payload: dict[str, Any], several: bool | None = None) -> str:
    """Matching lines as ``path:line: text`` (``bundle:path:line`` when ``several``)."""
    matches = payload.get("matches") or []
    if not matches:
        return "\n".join(
            [f"No matches for {quoted(str(payload.get('pattern', '')))}.", *_notice(payload)]
        )
    lines = []
    several = _several_bundles(matches, several)
    for m in matches:
        field = m.get("field", "body")
        spot = f"{m.get('path')}:{m.get('line')}" if field == "body" else f"{m.get('path')} {field}"
        if several:
            spot = target.shown(m.get("bundle"), spot)
        text = m.get("text", m.get("snippet", ""))
        pattern = str(payload.get("pattern") or "")
        shown = _cut_around(str(text).strip(), 160, [pattern], regex=pattern)
        lines.append(f"{click.style(spot, fg='magenta')}: {shown}")
    if payload.get("truncated") and not payload.get("notice"):
        lines.append(_dim("[more matches: raise --limit]"))
    return "\n".join(lines + _notice(payload))


def folder(payload: dict[str, Any]) -> str:
    """A read_concept result for a folder without index.md: its concepts and folders."""
    lines = [click.style(f"{payload.get('bundle')}:{payload.get('path')}", bold=True)]
    lines.append(_dim(str(payload.get("note") or "")))
    rows = payload.get("concepts") or []
    if rows:
        lines.append(
            table(
                ["PATH", "TYPE", "TITLE"],
                [[str(r.get("path")), str(r.get("type")), str(r.get("title"))] for r in rows],
                [badges(r) for r in rows],
            )
        )
    for sub in payload.get("folders") or []:
        n = sub.get("concepts")
        count = _dim(f"({n} concept{'' if n == 1 else 's'})")
        lines.append(f"{sub.get('path')}/  {count}")
    for attached in payload.get("files") or []:
        lines.append(f"{attached}  {_dim('(a file: okfx read shows it)')}")
    return "\n".join(lines + _notice(payload))


def _source(source: dict[str, Any]) -> str:
    """A ``sources`` entry on one line: its footnote label (the key a body's ``[^id]``
    cites, spec §5.1), its title, and what it names."""
    parts = [f"[^{source['id']}]"] if source.get("id") else []
    if source.get("title"):
        parts.append(str(source["title"]))
    parts.append(f"<{source.get('resource')}>")
    return " ".join(parts)


def concept(payload: dict[str, Any]) -> str:
    """A read_concept result: a header of provenance and trust, then the body."""
    if payload.get("kind") == "folder":
        return folder(payload)
    title = _one(payload.get("title") or payload.get("path"))
    lines = [f"{click.style(title, bold=True)}  {badges(payload)}".rstrip()]
    kind = _one(payload.get("type") or payload.get("kind"))
    path = _one(payload.get("path"))
    lines.append(_dim(f"{target.shown(payload.get('bundle'), path)}  ({kind})"))
    if payload.get("description"):
        lines.append(_one(payload["description"]))
    facts = [
        ("resource", payload.get("resource")),
        ("tags", ", ".join(payload.get("tags") or [])),
        ("stale after", payload.get("stale_after")),
        ("last verified", payload.get("last_verified")),
        ("verified by", ", ".join(str(v.get("by")) for v in payload.get("verified") or [])),
    ]
    generated = payload.get("generated") or {}
    if generated.get("by") or generated.get("at"):
        parts = [f"by {generated['by']}"] if generated.get("by") else []
        if generated.get("at"):  # a day written as a day, not as its midnight
            at = str(generated["at"])
            parts.append(f"at {at[:10] if generated.get('date_only') else at}")
        if generated.get("legacy_timestamp"):
            parts.append("(v0.1 timestamp)")
        facts.append(("generated", " ".join(parts)))
    for label, value in facts:
        if value:
            lines.append(f"{_dim(f'{label}:'.ljust(14))} {_one(value)}")
    for source in payload.get("sources") or []:
        lines.append(f"{_dim('source:'.ljust(14))} {_one(_source(source))}")
    lines.extend(_extensions(payload.get("extensions") or {}))
    for notice in payload.get("notices") or []:
        lines.append(click.style(str(notice), fg="yellow"))
    if payload.get("section"):
        lines.append(_dim(f"section: {payload['section']}"))
    lines.extend(_notice(payload))
    lines.append("")
    lines.append(str(payload.get("body", "")).strip("\n").rstrip())
    if payload.get("truncated"):
        lines.append(
            click.style(
                f"[cut: {payload.get('body_chars', 0) - (payload.get('next_offset') or 0)} more "
                f"characters; continue with --offset {payload.get('next_offset')}]",
                fg="yellow",
            )
        )
    return "\n".join(lines)


#: Producer keys a text read shows, at most, and the characters of each line.
EXTENSION_LINES, EXTENSION_CHARS = 8, 100


def _extensions(extensions: dict[str, Any]) -> list[str]:
    """The producer's own keys (flutter-okf's ``prerequisites``, m3e-okf's
    ``sources[0].note``), one short line each: a header shows what the spec defines, and
    a person reading in a terminal should still see the rest exists."""
    lines = []
    for key, value in list(extensions.items())[:EXTENSION_LINES]:
        if isinstance(value, list):
            shown = ", ".join(map(_compact, value))
        else:
            shown = _compact(value)
        line = f"{key}: {shown}"
        if len(line) > EXTENSION_CHARS:
            line = line[: EXTENSION_CHARS - 1] + "…"
        lines.append(_dim(line))
    more = len(extensions) - EXTENSION_LINES
    if more > 0:
        lines.append(_dim(f"… and {more} more of the producer's keys (--json shows them)"))
    return lines


def _compact(value: Any) -> str:
    """A value on one line: text as is, anything else as compact JSON."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return " ".join(text.split())


def resource(payload: dict[str, Any]) -> str:
    """An attached file's text (controls made visible), then where it is and how to go on."""
    footer = f"{payload.get('path')}: {payload.get('bytes')} bytes"
    if payload.get("next_offset") is not None:
        footer += f"; cut, next part: --offset {payload['next_offset']}"
    return "\n".join([visible(str(payload.get("text") or "")).rstrip("\n"), _dim(footer)])


def neighbors(payload: dict[str, Any]) -> str:
    title = payload.get("title") or payload.get("path")
    where = target.shown(payload.get("bundle"), payload.get("path"))
    lines = [f"{click.style(str(title), bold=True)}  {_dim(where)}"]
    for key, label in (
        ("outbound", "Links to"),
        ("backlinks", "Linked from"),
        ("unresolved", "Unresolved links"),
    ):
        edges = payload.get(key) or []
        lines.append("")
        lines.append(click.style(f"{label} ({_counted(payload, key, len(edges))})", bold=True))
        if not edges:
            lines.append(_dim("  none"))
            continue
        meant = any(e.get("did_you_mean") or e.get("candidates") for e in edges)  # unresolved
        body = table(
            # an unresolved link has no page to title: its text is shown
            ["PATH", "TEXT" if key == "unresolved" else "TITLE", "VIA"]
            + (["DID YOU MEAN"] if meant else []),
            [[_edge_end(e), _edge_name(e, key),
              f"{e.get('field')}" + (f":{e['line']}" if e.get("line") else "")]
             + ([_meant(e)] if meant else [])
             for e in edges],
            [badges(e) for e in edges],
        )  # fmt: skip
        lines.extend("  " + line for line in body.splitlines())
    listed = payload.get("listed_in") or []
    if listed:  # the index and log pages that list it, which are no backlinks
        lines += ["", _dim("Listed in " + ", ".join(str(e.get("path")) for e in listed))]
    leaving = payload.get("leaves_bundle") or []
    if leaving:  # links above the root, never followed: shown only when there are any
        lines += ["", click.style(f"Leaves the bundle, not followed ({len(leaving)})", bold=True)]
        landed = any(e.get("bundle") for e in leaving)  # in a sibling loaded beside it
        body = table(
            ["HREF", "TEXT", "VIA"] + (["LOADED AS"] if landed else []),
            [[str(e.get("href")), str(e.get("text") or ""),
              f"{e.get('field')}" + (f":{e['line']}" if e.get("line") else "")]
             + ([f"{e['bundle']}:{e['path']}" if e.get("bundle") else ""] if landed else [])
             for e in leaving],
        )  # fmt: skip
        lines.extend("  " + line for line in body.splitlines())
    if payload.get("next_offset") is not None:
        lines += ["", _dim(f"More links: --offset {payload['next_offset']}")]
    totals = [n for n in (payload.get("total") or {}).values() if isinstance(n, int)]
    offset = int(payload.get("offset") or 0)
    if offset and totals and offset >= max(totals):  # CLI QA: a page past the end, no way back
        lines += [
            "",
            _dim(f"--offset {offset} is past the last link (the longest list holds "
                 f"{max(totals)}): use --offset 0 for the first page."),
        ]  # fmt: skip
    return "\n".join(lines)


def _edge_end(edge: dict[str, Any]) -> str:
    """An edge's other end: its path, or the id a relation value names (unresolved)."""
    return str(edge["path"]) if "path" in edge else f"id {edge.get('id')} ({edge.get('reason')})"


def _meant(edge: dict[str, Any]) -> str:
    """What an unresolved edge likely meant: a path, or the concepts declaring its id."""
    return str(edge.get("did_you_mean") or " or ".join(edge.get("candidates") or ()))


def _counted(payload: dict[str, Any], key: str, shown: int) -> str:
    """How many edges of a list a page shows: ``12``, or ``101-200 of 5120``."""
    total = (payload.get("total") or {}).get(key, shown)
    if total == shown:
        return str(total)
    start = int(payload.get("offset") or 0)
    return f"{start + 1}-{start + shown} of {total}" if shown else f"none here of {total}"


def _served(manager: KnowledgeManager) -> str:
    """The bundles a server serves, for people: ``name (N concepts), ...``, and the commit
    a fetched clone is at (``pinned at`` one its source names whole: sources QA, an
    operator could not see which were pinned)."""
    return visible(", ".join(f"{b.name} ({_size_and_commit(b)})" for b in manager.bundles.values()))


def _size_and_commit(bundle: Any) -> str:
    said = f"{len(bundle)} concept{'' if len(bundle) == 1 else 's'}"
    origin = bundle.origin or {}
    commit = str(origin.get("commit") or "")
    if origin.get("kind") == "git" and commit:
        where = (
            "pinned"
            if origin.get("ref") == commit
            else str(origin.get("ref") or "the default branch")
        )
        said += f", {where} at {commit[:7]}"
    return said


def stdio_notice(manager: KnowledgeManager) -> str:
    """What ``okfx serve`` (stdio) says when a person started it in a terminal."""
    names = _served(manager)
    return "\n".join(
        [
            f"okfx: serving {names} as an MCP server on stdio.",
            "It is waiting for an MCP client to talk to it on stdin; nothing more is shown "
            "here. An MCP client starts this command itself (client configs: docs/mcp.md).",
            "To serve over HTTP instead: okfx serve BUNDLE... --transport http",
            "Stop with Ctrl+C.",
        ]
    )


def serve_banner(manager: KnowledgeManager, url: str, token: str | None) -> str:
    """What ``okfx serve --transport http`` prints to stderr before serving.

    ``token`` is the text to show in the client config (the caller hides the real one when
    stderr is not a terminal), ``None`` when the server takes no token.
    """
    names = _served(manager)
    server: dict[str, Any] = {"type": "http", "url": url}
    add = f"claude mcp add --transport http okfx {url}"
    if token is not None:
        server["headers"] = {"Authorization": f"Bearer {token}"}
        add += f' --header "Authorization: Bearer {token}"'
    config = json.dumps({"mcpServers": {"okfx": server}}, indent=2)
    lines = [
        f"okfx: serving {names} over streamable HTTP (stateless)",
        f"URL: {url}",
    ]
    if "://0.0.0.0:" in url or "://[::]:" in url:
        lines.append(_dim("(listening on every interface: clients use this machine's address)"))
    lines += [
        "MCP client config (Claude Code .mcp.json, Cursor mcp.json; Gemini CLI settings.json "
        'takes the URL as "httpUrl"; see docs/mcp.md):',
        config,
        f"Claude Code: {add}",
        "Stop with Ctrl+C.",
    ]
    return "\n".join(lines)


def problem_file(problem: Problem, root: str) -> str:
    """The file a problem is on as a reader opens it: ``root`` (the bundle's folder
    relative to the working directory, or empty) joined with the bundle path."""
    if root:
        return root.rstrip("/") + (problem.path if problem.path != "/" else "")
    return problem.path.lstrip("/") or "."


def problem_at(problem: Problem, root: str) -> str:
    """A problem as a compiler names it, ``file:line: message`` (``file: message`` when
    okfx does not know the line), so that a terminal or an editor opens the file at the
    line. The message's own closing `` (line N)`` is dropped: the location says it."""
    line = problem_line(problem)
    message = problem.message
    if line is None:
        return f"{problem_file(problem, root)}: {message}"
    return f"{problem_file(problem, root)}:{line}: {message.removesuffix(f' (line {line})')}"


def report(
    result: ConformanceReport, strict: bool = False, everything: bool = False, root: str = ""
) -> str:
    """A :class:`~okfx.bundle.validate.ConformanceReport`: the verdict, then the problems
    grouped by code, errors first: the count, what the code means and the first few files
    (``everything``: all of them), each as ``file:line: message`` (:func:`problem_at`,
    ``root`` as there). ``strict``: warnings fail the check too."""
    passed = result.passes(strict)
    mark = click.style("✓", fg="green") if passed else click.style("✗", fg="red")
    lines = [f"{mark} {visible_line(result.summary())}"]
    if result.conformant and not passed:
        lines.append("  --strict: the warnings below fail the check")
    lines.extend(f"  note: {visible_line(note)}" for note in result.notes)
    cut = False
    for found in result.groups():
        colour = "red" if found.severity == "error" else "yellow"
        tag = click.style(f"{found.severity}[{found.code}]", fg=colour)
        lines.append(f"  {tag} ×{found.count}  {_dim(found.explanation)}".rstrip())
        shown = found.problems if everything else varied(found.problems, REPORT_EXAMPLES)
        if not everything and len(found.problems) > REPORT_EXAMPLES:
            lines.extend(_by_kind(found.problems))
        lines.extend(f"      {visible_line(problem_at(p, root))}" for p in shown)
        more = found.count - len(shown)
        if more and everything:
            lines.append(_dim(f"      … {more} more counted but not recorded (max_warnings)"))
        elif more:
            lines.append(_dim(f"      … {more} more"))
            cut = True
    if result.excluded:
        paths = result.excluded if everything else result.excluded[:REPORT_EXAMPLES]
        more = len(result.excluded) - len(paths)
        names = ", ".join(paths) + (f" and {more} more" if more else "")
        lines.append(
            f"  excluded {len(result.excluded)} file{'' if len(result.excluded) == 1 else 's'} "
            "(exclude patterns, .okfignore): "
            f"{visible_line(names)}"
        )
    if cut:
        lines.append(_dim("  okfx validate --all lists every problem; --json gives them as data"))
    return "\n".join(lines)


def _by_kind(problems: Sequence[Problem]) -> list[str]:
    """A line counting one code's listed problems by kind ("tags 3167, timestamp 490"),
    when they are of several kinds or all of one value written everywhere (validate QA:
    okf-explorer's 3,809 invalid_field showed three of its 141 verified strings and none
    of its 3,167 tags strings; cricketstudio's 3,492 unknown_status were one value)."""
    counted = kinds(problems)
    if not counted:
        return []
    top = counted.most_common(6)
    shown = ", ".join(f"{kind} {n}" for kind, n in top)
    rest = len(counted) - len(top)
    more = f" and {rest} more {'kind' if rest == 1 else 'kinds'}" if rest else ""
    if len(counted) == 1:  # a kind quotes bundle text: shown as any line of it is
        said = f"all {len(problems)} listed are {top[0][0]}: one fix for every file"
        return [_dim(f"      {visible_line(said)}")]
    return [_dim(f"      listed by kind: {visible_line(shown)}{more}")]


def _workflow_data(text: str) -> str:
    # GitHub's workflow-command escapes: a line break in bundle text (a file name, a
    # frontmatter value quoted in a message) must not start a command of its own. The
    # runner also reads a legacy "##[command]" anywhere in a line: break that up too.
    # Control characters are shown, as on a terminal (the log viewer obeys colours).
    shown = visible(text).translate(HIDDEN_SHOWN)  # as on a line of the text report
    escaped = shown.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return escaped.replace("##[", "##%5B")


def _workflow_property(text: str) -> str:
    return _workflow_data(text).replace(":", "%3A").replace(",", "%2C")


#: Annotations of one code in ``--format github`` without ``--all``; the rest are counted
#: in one notice (validate QA: one producer-wide ``status: active`` gave 3,492 of 5,679).
ANNOTATIONS_PER_CODE = 50


def github_failure(exc: OKFError) -> str:
    """An ``::error`` for a bundle that did not load, so that a CI run shows why (validate
    QA: a wrong path gave no annotation, only a line on stderr)."""
    return f"::error title={_workflow_property(f'okfx {exc.code}')}::{_workflow_data(exc.message)}"


def github_annotations(
    result: ConformanceReport, root: str, strict: bool = False, everything: bool = False
) -> str:
    """The report as GitHub Actions workflow commands: ``::error`` / ``::warning`` per
    problem on the file it concerns (``root`` + the bundle path; ``root`` relative to the
    repository, or empty), at most :data:`ANNOTATIONS_PER_CODE` of one code unless
    ``everything``, then the verdict as a plain line that starts ``okfx:`` (``strict``
    as in :func:`report`). Every bundle-derived string is escaped: no line starts with
    ``::`` unless okfx wrote the command."""
    lines = []
    groups: dict[str, list[Problem]] = {}  # the problems listed, by code
    # Under --strict the warnings fail the job: annotated as errors, so a red job does not
    # show yellow annotations only (validate QA).
    warned = "error" if strict else "warning"
    for label, problems in (("error", result.errors), (warned, result.warnings)):
        kept: set[int] = set()
        by_code: dict[str, list[Problem]] = {}
        for problem in problems:
            by_code.setdefault(problem.code, []).append(problem)
        for code, group in by_code.items():
            groups.setdefault(code, []).extend(group)
            # one of each kind first, as the text report shows them (CI QA: 50 of one
            # field's problems, and the 3,167 of another never annotated)
            shown = group if everything else varied(group, ANNOTATIONS_PER_CODE)
            kept.update(map(id, shown))
        for problem in problems:
            if id(problem) not in kept:
                continue
            where = problem_file(problem, root)
            number = problem_line(problem)
            at = f",line={number}" if number else ""
            # The annotation carries the line: the message does not say it again.
            message = (
                problem.message.removesuffix(f" (line {number})") if number else problem.message
            )
            lines.append(
                f"::{label} file={_workflow_property(where)}{at},"
                f"title={_workflow_property(f'okfx {problem.code}')}::"
                f"{_workflow_data(message)}"
            )
    for code, group in groups.items():
        # the exact count, past the problems listed (CI QA: past 10,000 the notice counted
        # only those listed)
        count = max(result.by_code.get(code, len(group)), len(group))
        if not everything and count > ANNOTATIONS_PER_CODE:
            counted = kinds(group)
            of = (
                " (of the listed ones: "
                + ", ".join(f"{kind} {n}" for kind, n in counted.most_common(6))
                + ")"
                if len(counted) > 1
                else ""
            )
            every = (
                "okfx validate --all --format github annotates every one"
                if count == len(group)
                else f"okfx validate --all --format github annotates the {len(group)} listed"
            )
            lines.append(
                f"::notice title={_workflow_property(f'okfx {code}')}::"
                f"{count - ANNOTATIONS_PER_CODE} more {code} problems are not annotated "
                f"here{_workflow_data(of)}: {every}"
            )
    # The report's notes (a folder to exclude, stale concepts, unchecked wikilinks): the
    # most actionable lines of a report, which the CI log lacked (validate QA).
    lines.extend(f"::notice title=okfx note::{_workflow_data(note)}" for note in result.notes)
    failed_by_strict = result.conformant and not result.passes(strict)
    # A plain line, opened by okfx's own words: the summary starts with the bundle's
    # name, which could otherwise start a workflow command ("::error title=x::forged").
    lines.append(
        "okfx: "
        + _workflow_data(result.summary())
        + ("; --strict: the warnings fail the check" if failed_by_strict else "")
    )
    return "\n".join(lines)
