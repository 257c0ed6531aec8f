"""Normalise one concept's frontmatter into typed values, collecting warnings.

A bad *optional* field never costs the concept: it is left out of the normalised value,
kept in the raw frontmatter, and reported as ``(code, message, key)``, ``key`` being the
path of the frontmatter value the problem is on (``sources[0].author``), which
:meth:`okfx.bundle.keylines.KeyLines.line` turns into the file's line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

from okfx.bundle.links import lines_outside_code
from okfx.model import Computation, Generated, Parameter, Source, UsageWindow, Verification
from okfx.trust import is_placeholder_actor, is_valid_actor, loose_actor, parse_instant

__all__ = [
    "STATUSES",
    "FieldReport",
    "computation_heading",
    "kind_of",
    "normalize",
    "second_computation_block",
]

STATUSES = ("draft", "stable", "deprecated")
FieldReport = list[tuple[str, str, str]]  # code, message, key path

_COMPUTATION_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+computation[ \t#]*+$", re.I | re.M)
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]", re.M)
# Possessive runs (Python 3.11+): each run of fence characters, blanks and info text is
# taken one way only. Greedy runs would try every way to split "~~~~...`" or
# "```abc...`" between the marker, the language and the rest: cubic time (issue 16).
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}+|~{3,}+)[ \t]*+([^`\s]*+)[^\n`]*+$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}+|~{3,}+)[ \t]*+$")
#: The words of a name an actor id is made of (letters and digits, any script).
_ACTOR_WORD = re.compile(r"[^\W_]+")


def _text(value: Any) -> str | None:
    """Scalars become text (``title: 2026`` -> ``"2026"``); collections do not."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    return None


def _instant(value: Any, name: str, report: FieldReport) -> Any:
    """A date or time field in UTC. A date alone, or a time without an offset, is read in
    UTC (a date as the start of its day) and noted as ``assumed_utc``; anything else
    that is not an ISO 8601 instant is left out (``invalid_field``)."""
    when, reason = parse_instant(value, lenient=True)
    if reason and when is None:
        report.append(("invalid_field", f"{name} {reason}; ignored", name))
    elif reason:
        report.append(("assumed_utc", f"{name} {reason}", name))
    return when


def _window(value: Any, name: str, report: FieldReport) -> UsageWindow | None:
    if not isinstance(value, dict):
        report.append(("invalid_field", f"{name} must be a mapping {{from, to}}; ignored", name))
        return None
    start = _instant(value["from"], f"{name}.from", report) if "from" in value else None
    end = _instant(value["to"], f"{name}.to", report) if "to" in value else None
    return UsageWindow(start, end)


# Words for a YAML value's kind, in the order tried (a datetime is a date too).
_KIND_WORDS = (
    (str, "a string"),
    (list, "a list"),
    (dict, "a mapping"),
    (datetime, "a date and time"),
    (date, "a date"),
)


def kind_of(value: Any) -> str:
    """What a YAML value is, in words, for a message ("'type' is a number")."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    for kind, words in _KIND_WORDS:
        if isinstance(value, kind):
            return words
    return f"a {type(value).__name__}"


def _as_list(value: Any, name: str, report: FieldReport) -> list[Any]:
    if isinstance(value, dict):
        return [value]  # a bare mapping is a one-element list (spec §5.2)
    if isinstance(value, list):
        return value
    message = f"{name} must be a mapping or a list of mappings, not {kind_of(value)}; ignored"
    if name == "verified":  # validate QA: 'verified: "yes"' gave no form and no consequence
        message += (
            ", so the concept counts as unverified (spec §5.3): write verified: "
            "[{by: human:jane, at: 2026-06-25T09:00:00Z}] with the reviewer's id and the "
            "review's time (§5.2)"
        )
    report.append(("invalid_field", message, name))
    return []


def _string_tags(value: str, report: FieldReport) -> list[str]:
    """The tags one string plainly names, reported: other consumers read no list.

    A quoted list (``tags: "[a, b]"``, as an Obsidian vault writes it: validate QA, 189
    concepts) is that list; any other string is the names it separates by ``;``, or by
    ``,`` when it has no ``;``, as ``aliases`` are read (``tags: stackoverflow, wiki``:
    new-producers QA, whose tag filter missed 8 of 17 concepts); a string with neither
    is one tag. Blanks do not separate: ``tags: machine learning`` is one tag."""
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        report.append(
            (
                "invalid_field",
                "tags is a quoted string that looks like a list; okfx reads it as that list, "
                "other consumers may not: remove the quotes so YAML reads a list "
                "(tags: [a, b])",
                "tags",
            )
        )
        items = [item.strip().strip("'\"").strip() for item in text[1:-1].split(",")]
        return [item for item in items if item]
    items = [item.strip() for item in text.split(";" if ";" in text else ",")]
    items = [item for item in items if item]
    if not items:
        report.append(("invalid_field", "tags is an empty string; ignored", "tags"))
        return []
    what = f"the tag {items[0][:80]!r}" if len(items) == 1 else f"{len(items)} tags"
    message = (
        f"tags is one string, not a list; okfx reads it as {what}, other consumers read "
        f"no tags: write it as a YAML list, tags: [{', '.join(items)[:200]}]"
    )
    report.append(("invalid_field", message, "tags"))
    return items


def _tags(value: Any, report: FieldReport) -> tuple[str, ...]:
    if isinstance(value, str):
        value = _string_tags(value, report)
    if not isinstance(value, list):
        message = f"tags is {kind_of(value)}; it must be a YAML list like [a, b]; ignored"
        report.append(("invalid_field", message, "tags"))
        return ()
    tags: list[str] = []
    for i, item in enumerate(value):
        text = _text(item)
        if text:
            if text not in tags:
                tags.append(text)
        else:
            what = "empty" if isinstance(item, str) else "not a string"
            message = f"tags entry {item!r} is {what}; ignored"
            report.append(("invalid_field", message, f"tags[{i}]"))
    return tuple(tags)


#: Most aliases of one concept read; the rest are left in the frontmatter.
MAX_ALIASES = 32


def _aliases(value: Any) -> tuple[str, ...]:
    """The other names a concept goes by (``aliases``, as Obsidian and several OKF
    producers write it): a list of strings, or one string of names separated by ``;``
    (or ``,``). Not a field of the spec, so nothing is reported: an entry that is not a
    scalar is skipped, and the key stays in the frontmatter as written."""
    if isinstance(value, str):
        items: list[Any] = value.split(";" if ";" in value else ",")
    elif isinstance(value, list):
        items = value
    else:
        return ()
    names: dict[str, str] = {}
    for item in items:
        text = _text(item)
        if text and len(names) < MAX_ALIASES:
            names.setdefault(text.casefold(), text)
    return tuple(names.values())


def _bare_resource(value: str, name: str, section: str, report: FieldReport) -> str:
    """A bare URL or path written where a ``{resource: ...}`` mapping belongs (a source,
    an executor, an attester): what it names is plain, so it is read as that resource
    rather than lost, and reported."""
    bare = value.strip()
    message = (
        f"{name} is a string, not a mapping: read as {{resource: {bare[:200]!r}}}; "
        f"write it that way (spec {section})"
    )
    report.append(("invalid_field", message, name))
    return bare


#: Keys some producers write for a source's ``resource`` (m3e-okf writes ``url``).
RESOURCE_LOOKALIKES = ("url", "uri", "href", "link")


def source_resource(entry: dict[Any, Any]) -> tuple[str, str] | None:
    """The key a ``sources`` entry names what it derives from under, and that resource:
    ``resource``, else the first of :data:`RESOURCE_LOOKALIKES` with a text value (read
    as the resource rather than lose the source: what it names is plain); None when
    there is none."""
    for key in ("resource", *RESOURCE_LOOKALIKES):
        text = _text(entry.get(key))
        if text:
            return key, text
    return None


def source_places(value: Any) -> list[int]:
    """Where each entry :func:`_sources` keeps stands in ``sources`` as written (its index
    there), so a kept entry is named ``sources[i]`` as the warnings about the list are."""
    entries = [value] if isinstance(value, dict) else value if isinstance(value, list) else []
    return [
        i
        for i, entry in enumerate(entries)
        if (isinstance(entry, str) and entry.strip())
        or (isinstance(entry, dict) and source_resource(entry) is not None)
    ]


def _sources(fm: dict[str, Any], report: FieldReport) -> tuple[Source, ...]:
    out: list[Source] = []
    if isinstance(fm["sources"], dict):
        # §5.2 allows one mapping for verified, §5.1 none for sources (spec-audit QA).
        message = (
            "sources is one mapping, not a list: okfx reads it as one source, other "
            "consumers read no sources (spec §5.1): write it as a list, sources: [{resource: "
            "...}]"
        )
        report.append(("invalid_field", message, "sources"))
    for i, entry in enumerate(_as_list(fm["sources"], "sources", report)):
        name = f"sources[{i}]"
        if isinstance(entry, str) and entry.strip():
            out.append(Source(resource=_bare_resource(entry, name, "§5.1", report)))
            continue
        if not isinstance(entry, dict):
            message = f"{name} is {kind_of(entry)}, not a mapping with a resource; entry ignored"
            report.append(("invalid_field", message, name))
            continue
        found = source_resource(entry)
        if found is None:
            report.append(("invalid_field", f"{name} has no resource; entry ignored", name))
            continue
        key, resource = found
        if key != "resource":
            message = (
                f"{name} has no resource, but {key}: {resource[:200]!r}, read as its "
                f"resource; rename {key} to resource (spec §5.1)"
            )
            report.append(("invalid_field", message, name))
        usage = entry.get("usage_count")
        if usage is not None and (isinstance(usage, bool) or not isinstance(usage, int)):
            message = f"{name}.usage_count must be an integer; ignored"
            report.append(("invalid_field", message, f"{name}.usage_count"))
            usage = None
        elif usage is not None and usage < 0:
            message = (
                f"{name}.usage_count is {usage}: a count of uses is 0 or more (spec §5.1); ignored"
            )
            report.append(("invalid_field", message, f"{name}.usage_count"))
            usage = None
        author = entry.get("author")
        if author is not None and not is_valid_actor(author):
            # A source's author is a signal to read, not a trust input (that is verified[]):
            # a name written as text ("Tiago Forte", the author of a book) is kept.
            kept = _text(author) if isinstance(author, str) else None
            how = "kept as written" if kept else "ignored"
            message = f"{name}.author {author!r} is not an actor{_actor_hint(author)}; {how}"
            report.append(("invalid_field", message, f"{name}.author"))
            author = kept or None
        modified = entry.get("last_modified")
        window = entry.get("usage_window")
        source_id = _text(entry.get("id")) or None
        if source_id is not None and any(s.id == source_id for s in out):
            # Validate QA: four sources of one concept shared an id, and a footnote cited it.
            message = (
                f"{name}.id {source_id[:80]!r} is also an earlier source's: a footnote "
                f"[^{source_id[:80]}] cannot tell them apart (spec §5.1: the id is the key a "
                "footnote cites); give each source its own id"
            )
            report.append(("invalid_field", message, f"{name}.id"))
        out.append(
            Source(
                resource=resource,
                id=source_id,
                title=_text(entry.get("title")) or None,
                author=author,
                usage_count=usage,
                last_modified=_instant(modified, f"{name}.last_modified", report)
                if modified is not None
                else None,
                usage_window=_window(window, f"{name}.usage_window", report)
                if window is not None
                else None,
            )
        )
    return tuple(out)


def _loose_message(name: str, value: str, kind: str) -> str:
    """The warning for an actor read by its prefix alone (:func:`~okfx.trust.loose_actor`):
    how it was read, and how to write it (spec QA: ``human:ada lovelace`` had been
    dropped, and the concept ranked unverified, below machine-confirmed)."""
    rest = value.strip().partition(":")[2]
    slug = "-".join(_ACTOR_WORD.findall(rest.casefold()))[:60] or "<id>"
    return (
        f"{name} {value!r} is read as a {'person' if kind == 'human' else 'process'} by its "
        f"prefix (spec §7 keys trust off it), but an actor is {kind}:<id>, lowercase prefix "
        f"and no blanks: write {kind}:{slug}"
    )


def _actor_hint(value: object, agent: bool = False) -> str:
    """What an actor looks like (spec §7), with the value written as one when it is a
    name: "Tiago Forte" -> ``human:tiago-forte`` (QA: the message named no fix); for
    what generated a concept (``generated.by: claude``), both forms, the agent's first
    (validate QA: ``human:claude`` alone labelled a model's output a person's)."""
    prefix, colon, rest = value.strip().partition(":") if isinstance(value, str) else ("", "", "")
    if colon and prefix and not rest.startswith("/") and not any(c.isspace() for c in prefix):
        # Its prefix is written already (human: ada, human:ada lovelace): keep it, make the
        # id one token (spec-audit QA: the fix read human:human-ada-lovelace).
        slug = "-".join(_ACTOR_WORD.findall(rest.casefold()))[:60] or "<id>"
        example = f"{prefix.casefold()}:{slug}"
        return f" (spec §7: human:<id>, process:<id> or producer/version, e.g. {example})"
    slug = "-".join(_ACTOR_WORD.findall(value.casefold())) if isinstance(value, str) else ""
    if agent and slug:
        example = f"{slug[:60]}/<version> for an agent or tool, human:{slug[:60]} for a person"
    else:
        example = f"human:{slug[:60]}" if slug else "human:<id>"
    return f" (spec §7: human:<id>, process:<id> or producer/version, e.g. {example})"


def _generated(fm: dict[str, Any], report: FieldReport) -> Generated | None:
    """``generated`` with what could be read of it; None when nothing could."""
    value = fm.get("generated")
    legacy = fm.get("timestamp")
    if value is None:
        if legacy is None:
            return None
        # v0.1 ``timestamp`` stands in for ``generated.at`` (spec §13.1).
        at = _instant(legacy, "timestamp", report)
        return None if at is None else Generated(None, at, legacy=True)
    if not isinstance(value, dict):
        message = "generated must be a mapping {by, at}; ignored"
        report.append(("invalid_field", message, "generated"))
        return None
    by = value.get("by")
    if by is None:
        message = "generated has no 'by' (spec §5.2 requires an actor)"
        report.append(("invalid_field", message, "generated"))
    elif is_placeholder_actor(by):
        message = f"generated.by {by!r} is a placeholder, not a producer: write who made it"
        report.append(("invalid_field", message, "generated.by"))
        by = None
    elif (loose := loose_actor(by)) is not None:
        report.append(("invalid_field", _loose_message("generated.by", by, loose), "generated.by"))
    elif not is_valid_actor(by):
        message = f"generated.by {by!r} is not an actor{_actor_hint(by, agent=True)}"
        report.append(("invalid_field", message, "generated.by"))
        by = None
    at = _instant(value["at"], "generated.at", report) if value.get("at") is not None else None
    if at is None and legacy is not None:
        at = _instant(legacy, "timestamp", report)
        if at is not None:
            return Generated(by, at, legacy=True)
    return None if by is None and at is None else Generated(by, at)


def _verified(fm: dict[str, Any], report: FieldReport) -> tuple[Verification, ...]:
    out: list[Verification] = []
    for i, entry in enumerate(_as_list(fm["verified"], "verified", report)):
        name = f"verified[{i}]"
        if not isinstance(entry, dict):
            message = f"{name} is {kind_of(entry)}, not a mapping {{by, at}}; entry ignored"
            report.append(("invalid_field", message, name))
            continue
        by = entry.get("by")
        if by is None:
            message = f"{name} has no 'by' (spec §5.2: each event has by and at); entry ignored"
            report.append(("invalid_field", message, name))
            continue
        loose = loose_actor(by)
        if is_placeholder_actor(by):
            message = (
                f"{name}.by {by!r} is a placeholder, not a reviewer: write who reviewed it "
                "(human:jane); entry ignored, so it verifies nothing"
            )
            report.append(("invalid_field", message, f"{name}.by"))
            continue
        if loose is not None:
            report.append(("invalid_field", _loose_message(f"{name}.by", by, loose), f"{name}.by"))
        elif not isinstance(by, str) or not is_valid_actor(by):
            message = f"{name}.by {by!r} is not an actor{_actor_hint(by)}; entry ignored"
            report.append(("invalid_field", message, f"{name}.by"))
            continue
        at = entry.get("at")
        if at is None:
            report.append(
                ("invalid_field", f"verified[{i}] has no 'at' (spec §5.2: each event has by "
                 "and at); kept without a date", f"verified[{i}]")
            )  # fmt: skip
        out.append(Verification(by, _instant(at, f"verified[{i}].at", report) if at else None))
    return tuple(out)


def _computation_heading(body: str) -> re.Match[str] | None:
    """The body's first ``# Computation`` heading outside code blocks and comments (a
    ``# computation`` line of a shell block is a comment, not the heading)."""
    return next(lines_outside_code(body, _COMPUTATION_HEADING), None)


def computation_heading(body: str) -> int | None:
    """Where the body's ``# Computation`` heading starts (an offset), or ``None``."""
    heading = _computation_heading(body)
    return None if heading is None else heading.start()


def _inline_computation(body: str) -> tuple[str | None, str | None]:
    """The first code block under a ``# Computation`` heading (fenced or indented)."""
    first = next(_computation_blocks(body), None)
    if first is None or not first[1]:
        return None, None
    return first[1], None if first[2] is _INDENTED else first[2]


def second_computation_block(body: str) -> int | None:
    """Where a second fenced block under the ``# Computation`` heading starts (an offset
    in ``body``), or ``None``: spec §10.3 asks for a single block, and okfx binds the
    first."""
    blocks = _computation_blocks(body)
    if next(blocks, None) is None:
        return None
    later = next((block for block in blocks if block[2] is not _INDENTED), None)
    return None if later is None else later[0]


#: The language of an indented block (which has none), told apart from a fence's.
_INDENTED: Any = object()


def _computation_blocks(body: str) -> Iterator[tuple[int, str, str | None]]:
    """The code blocks of the section under the body's ``# Computation`` heading, each as
    (offset of its first line, code (``""`` when blank), fence language or ``None``;
    :data:`_INDENTED` for an indented block), until a heading of its level or above
    outside a fence.

    Scanned line by line so a ``#`` line inside the fence (a SQL or Python comment) is
    code, not the next heading.
    """
    heading = _computation_heading(body)
    if heading is None:
        return
    level = len(heading.group(1))
    offset = body.find("\n", heading.end())
    if offset < 0:
        return
    offset += 1
    fence: str | None = None
    language: str | None = None
    code: list[str] = []
    start = offset
    for line in body[offset:].split("\n"):
        here, offset = offset, offset + len(line) + 1
        if fence is not None:
            close = _FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                yield from _block(start, code, language)
                fence, code = None, []
                continue
            code.append(line)
            continue
        opening = _FENCE_OPEN.match(line)
        if opening and not code:
            fence, language, start = opening.group(1), opening.group(2) or None, here
            continue
        if line.startswith(("    ", "\t")):
            if not code:
                start, language = here, _INDENTED
            code.append(line[4:] if line.startswith("    ") else line[1:])
            continue
        if code and not line.strip():
            code.append("")
            continue
        if code:
            yield from _block(start, code, language)
            code = []
            opening = _FENCE_OPEN.match(line)
            if opening:
                fence, language, start = opening.group(1), opening.group(2) or None, here
                continue
        nxt = _HEADING.match(line)
        if nxt and len(nxt.group(1)) <= level:
            return
    if fence is not None or code:  # a fence left open holds the rest of the body
        yield from _block(start, code, language)


def _block(
    start: int, code: list[str], language: str | None
) -> Iterator[tuple[int, str, str | None]]:
    text = "\n".join(code).strip("\n")
    yield start, text + "\n" if text else "", language


def _path_field(value: Any, name: str, report: FieldReport) -> str | None:
    if value is None:
        return None
    text = _text(value)
    if not text:
        # new-producers QA: resource: '' was told it must be a string, which it was.
        what = "is empty" if isinstance(value, str) else f"is {kind_of(value)}"
        message = f"{name} {what}, not a path or URI; ignored: write one, or leave the key out"
        report.append(("invalid_field", message, name))
    return text or None


def _contract_part(fm: dict[str, Any], name: str, report: FieldReport) -> dict[Any, Any]:
    """``executor`` or ``attester`` of an Attested Computation (spec §10.2): a mapping
    whose ``resource`` names what runs or checks it. A bare path where the mapping belongs
    is read as that resource; a mapping without one is kept, and reported unless it is an
    executor that declares its receipt."""
    raw = fm.get(name)
    if raw is None:
        return {}
    if isinstance(raw, dict):
        if raw.get("resource") is None:
            # An executor that only declares its receipt is whole: the consumer's own code
            # runs the runtime (okf4net's host does), and §10.2 fixes no packaging.
            if name == "attester":
                message = f"{name} has no resource: it names no check of a run (spec §10.2)"
                report.append(("invalid_field", message, name))
            elif raw.get("receipt") is None:
                message = (
                    f"{name} names neither a resource (what runs it) nor a receipt (what a "
                    "run returns) (spec §10.2)"
                )
                report.append(("invalid_field", message, name))
        return raw
    if isinstance(raw, str) and raw.strip():
        return {"resource": _bare_resource(raw, name, "§10.2", report)}
    message = f"{name} is {kind_of(raw)}, not a mapping with a resource; ignored"
    report.append(("invalid_field", message, name))
    return {}


# A parameter's constraints some producers write beside {name, type, required}, and the
# Parameter attribute each is kept in.
_CONSTRAINTS = (
    ("default", "default"),
    ("example", "example"),
    ("min", "minimum"),
    ("max", "maximum"),
)
_SCALAR = (str, int, float, bool, date)


def _constraints(entry: dict[str, Any], name: str, report: FieldReport) -> dict[str, Any]:
    """``default``, ``example``, ``enum``, ``min`` and ``max`` of one parameter when they
    are scalars (``enum`` a list of them); anything else is reported and left out. They
    are checked against the declared type when the computation is bound."""
    out: dict[str, Any] = {}
    for key, attribute in _CONSTRAINTS:
        value = entry.get(key)
        if value is None:
            continue
        if isinstance(value, _SCALAR):
            out[attribute] = value.isoformat() if isinstance(value, date) else value
        else:
            message = f"{name}.{key} is {kind_of(value)}, not one value; ignored"
            report.append(("invalid_field", message, f"{name}.{key}"))
    enum = entry.get("enum")
    if enum is not None:
        if isinstance(enum, list) and enum and all(isinstance(v, _SCALAR) for v in enum):
            out["enum"] = tuple(v.isoformat() if isinstance(v, date) else v for v in enum)
        else:
            message = f"{name}.enum must be a non-empty list of values; ignored"
            report.append(("invalid_field", message, f"{name}.enum"))
    return out


def _computation(
    fm: dict[str, Any], type_: str, body: str, report: FieldReport
) -> Computation | None:
    if type_.casefold() != "attested computation" and "runtime" not in fm:
        return None
    runtime = _text(fm.get("runtime")) or None
    if runtime is None:
        message = (  # validate QA: it said neither why it matters nor what to write
            "runtime is required for an Attested Computation (spec §10.2), and none is "
            "written: it names the engine that runs the computation and reads its "
            "parameters, so the computation cannot be bound; add one (runtime: duckdb, "
            "bigquery, postgres, ...)"
        )
        if fm.get("runtime") is not None:
            written = fm["runtime"]
            what = "empty" if isinstance(written, str) else kind_of(written)
            message = (
                f"runtime is {what}; an Attested Computation names one engine as a string "
                "(runtime: duckdb)"
            )
        report.append(("invalid_field", message, "runtime" if "runtime" in fm else "type"))
    params: list[Parameter] = []
    raw_params = fm.get("parameters")
    if isinstance(raw_params, dict) and "name" in raw_params:
        # §10.2 writes a list; one parameter as a bare mapping is read, as sources is (CI
        # QA: nothing said so, and another consumer finds no parameter to bind)
        message = (
            "parameters is one mapping, not a list: okfx reads it as one parameter, other "
            "consumers read none (spec §10.2): write it as a list, parameters: [{name: "
            "..., type: ...}]"
        )
        report.append(("invalid_field", message, "parameters"))
    for i, entry in enumerate(_as_list(raw_params, "parameters", report) if raw_params else []):
        if not isinstance(entry, dict):
            message = (
                f"parameters[{i}] is {kind_of(entry)}, not a mapping {{name, type, required}}; "
                "ignored"
            )
            report.append(("invalid_field", message, f"parameters[{i}]"))
            continue
        pname = _text(entry.get("name"))
        if not pname and isinstance(raw_params, dict) and "name" not in entry:
            message = (
                "parameters is a mapping of names; write a list of {name, type, required} "
                "(parameters: [{name: year, type: integer, required: true}]); ignored"
            )
            report.append(("invalid_field", message, "parameters"))
            continue
        if not pname:
            message = f"parameters[{i}] has no name; ignored"
            report.append(("invalid_field", message, f"parameters[{i}]"))
            continue
        required = entry.get("required", False)
        if not isinstance(required, bool):
            # The safe side: a computation bound with NULL would attest a wrong figure.
            message = (
                f"parameters[{i}].required is {kind_of(required)} {str(required)[:40]!r}, "
                "not true or false; read as true: write true or false"
            )
            report.append(("invalid_field", message, f"parameters[{i}].required"))
            required = True
        extra = _constraints(entry, f"parameters[{i}]", report)
        params.append(Parameter(pname, _text(entry.get("type")) or None, required is True, **extra))
    executor = _contract_part(fm, "executor", report)
    attester = _contract_part(fm, "attester", report)
    receipt_raw = executor.get("receipt", [])
    receipt = tuple(str(r) for r in receipt_raw) if isinstance(receipt_raw, list) else ()
    inline, language = _inline_computation(body)
    return Computation(
        runtime=runtime,
        parameters=tuple(params),
        computation_path=_path_field(fm.get("computation"), "computation", report),
        inline=inline,
        inline_language=language,
        executor_resource=_path_field(executor.get("resource"), "executor.resource", report),
        receipt=receipt,
        attester_resource=_path_field(attester.get("resource"), "attester.resource", report),
    )


#: Statuses that say the content was checked: §5.4 has no such status, and §5.2 records a
#: check as a ``verified`` event (boi-wiki writes ``status: reviewed`` on 178 concepts).
_REVIEW_WORDS = frozenset(
    {
        "reviewed", "approved", "verified", "validated", "checked", "accepted", "confirmed",
        "certified", "audited", "signed-off", "signed off", "signedoff",
    }
)  # fmt: skip


#: Statuses that retire a concept, that say it is unfinished, and that say it is current
#: (validate QA: 'archived' and 'todo' were read as stable with only "write one of the
#: three"; cricketstudio writes 'active' on 3,492 concepts).
_RETIRED_WORDS = frozenset(
    "archived obsolete superseded retired legacy replaced outdated deprecate removed".split()
)
_UNFINISHED_WORDS = frozenset(
    {
        "todo", "wip", "in-progress", "in progress", "inprogress", "needs-review",
        "needs review", "pending", "proposed", "planned", "experimental", "beta", "alpha",
        "preview", "incomplete", "unfinished",
    }
)  # fmt: skip
_CURRENT_WORDS = frozenset("active published current live final released ga done".split())


def _status_message(raw: Any, text: str | None) -> str:
    """Why ``status`` reads as stable, and what to write: for a word that says the content
    was reviewed, also where a review is recorded (new-producers QA)."""
    message = f"status {raw!r} is not draft, stable or deprecated (spec §5.4); read as stable"
    if text and text.casefold() in _REVIEW_WORDS:
        return (
            f"{message}: write stable, and record the review as verified: [{{by: human:jane, "
            "at: 2026-06-25T09:00:00Z}] with the reviewer's id and the review's time (spec "
            "§5.2), which makes the concept human-reviewed (§5.3)"
        )
    folded = (text or "").casefold()
    if folded in _RETIRED_WORDS:
        return (
            f"{message}, so consumers serve it as current: if it is retired, write deprecated "
            "(kept for links and history)"
        )
    if folded in _UNFINISHED_WORDS:
        return f"{message}, ready for consumption: if it is not finished, write draft"
    if folded in _CURRENT_WORDS:
        return f"{message}, as meant: write stable, or leave the key out (absent means stable)"
    return f"{message}: write one of the three"


def normalize(fm: dict[str, Any], type_: str, body: str) -> tuple[dict[str, Any], FieldReport]:
    """Typed values for every optional family, and the warnings about bad fields."""
    report: FieldReport = []
    status = "stable"
    raw_status = fm.get("status")
    if raw_status is not None:
        text = _text(raw_status)
        if text and text.casefold() in STATUSES:
            status = text.casefold()
        else:
            report.append(("unknown_status", _status_message(raw_status, text), "status"))
    stale = fm.get("stale_after")
    resource = fm.get("resource")
    values: dict[str, Any] = {
        "title": _text(fm.get("title")) or None,
        "description": _text(fm.get("description")) or "",
        "resource": _path_field(resource, "resource", report),
        "tags": _tags(fm["tags"], report) if fm.get("tags") is not None else (),
        "aliases": _aliases(fm.get("aliases")),
        "status": status,
        "stale_after": _instant(stale, "stale_after", report) if stale is not None else None,
        "sources": _sources(fm, report) if fm.get("sources") is not None else (),
        "usage_window": _window(fm["usage_window"], "usage_window", report)
        if fm.get("usage_window") is not None
        else None,
        "generated": _generated(fm, report),
        "verified": _verified(fm, report) if fm.get("verified") is not None else (),
        "computation": _computation(fm, type_, body, report),
    }
    for name in ("title", "description"):
        if fm.get(name) is not None and _text(fm[name]) is None:
            report.append(("invalid_field", f"{name} must be a string; ignored", name))
    return values, report
