"""Notes for ``okfx validate`` on producer habits no single problem names: a ``log.md``
with no dated entry, ``okf_version`` written in concepts instead of the root ``index.md``,
and a folder none of whose ``.md`` files has frontmatter (new-producers QA: a compiler's
audit-table log, a profile that writes the version in all 182 concepts, a project's
memory folder told to exclude most of itself). None breaks §11 on its own; each is said
once, with what to do.
"""

from __future__ import annotations

from collections.abc import Mapping

from okfx.bundle.bundle import Bundle
from okfx.model import LogFile

__all__ = ["no_frontmatter_note", "undated_log_note", "version_in_concepts_note"]

_SHOWN = 3  # paths a note names
#: Concepts whose frontmatter :func:`version_in_concepts_note` looks at, in path order:
#: a concept kept in the state cache parses its frontmatter again when asked for it.
_VERSION_LOOKS = 500
#: Codes that say a file has a frontmatter block, whatever is wrong with it.
_HAS_FRONTMATTER = frozenset(
    {
        "missing_type", "invalid_type", "malformed_yaml", "unterminated_frontmatter",
        "frontmatter_not_mapping", "unquoted_colon", "duplicate_key", "reserved_frontmatter",
        "log_frontmatter", "reserved_concept",
    }
)  # fmt: skip


def _holds_text(log: LogFile) -> bool:
    """Whether a log holds anything besides its title (a new, empty log is no habit)."""
    lines = [line.strip() for line in log.body.split("\n") if line.strip()]
    if lines and log.title and lines[0].lstrip("#").strip() == log.title:
        lines = lines[1:]
    return bool(lines)


def undated_log_note(bundle: Bundle, codes: Mapping[str, set[str]]) -> str | None:
    """A note naming the ``log.md`` files with text but no dated entry: §9 groups a log's
    changes under ``YYYY-MM-DD`` headings, and without one no change has a date (a log
    written as an audit table is preamble to okfx). ``codes``: each path's problem codes
    (a concept's page under the name ``log.md`` is ``reserved_concept`` already, and a
    list of entries before any date heading ``log_ungrouped``, with the heading to add, and
    a heading that is no date ``log_section`` or ``invalid_log_date``, with what to write)."""
    reported = {"reserved_concept", "log_ungrouped", "log_section", "invalid_log_date"}
    undated = sorted(
        log.path
        for log in bundle.logs.values()
        if not any(entry.date for entry in log.entries)
        and not reported & codes.get(log.path, set())
        and _holds_text(log)
    )
    if not undated:
        return None
    shown = ", ".join(undated[:_SHOWN]) + (" ..." if len(undated) > _SHOWN else "")
    said = f"{shown} has" if len(undated) == 1 else f"{len(undated)} log.md files ({shown}) have"
    return (
        f"{said} no YYYY-MM-DD date heading, so okfx reads no dated change from "
        f"{'it' if len(undated) == 1 else 'them'}: spec §9 lists a log's changes under "
        "'## YYYY-MM-DD' headings, newest first; head each day's changes with its date"
    )


def version_in_concepts_note(bundle: Bundle) -> str | None:
    """A note when the bundle declares no ``okf_version`` and concepts write one in their
    own frontmatter, where §12 does not read it: move it to the root ``index.md``. Looks
    at the first :data:`_VERSION_LOOKS` concepts in path order."""
    if bundle.okf_version is not None:
        return None
    looked = 0
    written: dict[str, int] = {}
    for concept in bundle:
        if looked == _VERSION_LOOKS:
            break
        looked += 1
        value = concept.frontmatter.get("okf_version")
        if value is not None and not isinstance(value, list | dict):
            written[str(value)] = written.get(str(value), 0) + 1
    if not written:
        return None
    n = sum(written.values())
    version = max(sorted(written), key=lambda v: written[v])[:40]
    if looked < len(bundle):
        who = f"{n} of the first {looked} concepts"
    else:
        who = "1 concept" if n == 1 else f"{n} concepts"
    verb = "writes okf_version in its" if n == 1 else "write okf_version in their"
    where = "the frontmatter of /index.md" if "/" in bundle.indexes else "a new /index.md"
    return (
        f"{who} {verb} frontmatter, where spec §12 does not read it: only the bundle-root "
        f'index.md declares the version, so this bundle declares none; write okf_version: "'
        f'{version}" in {where}'
    )


def no_frontmatter_note(bundle: Bundle, counts: Mapping[str, int]) -> str | None:
    """A note when the folder has no concept and none of its ``.md`` files opens with a
    frontmatter block: not a bundle with a few bad files, but no OKF bundle at all (the
    advice to exclude the folder holding most of them leaves nothing to load)."""
    if len(bundle) or bundle.okf_version is not None or not counts.get("no_frontmatter"):
        return None
    if any(counts.get(code) for code in _HAS_FRONTMATTER):
        return None
    n = counts["no_frontmatter"]
    return (
        f"none of the {n} .md files here opens with a frontmatter block ('---', then 'type: "
        "...'): this folder does not look like an OKF bundle, whose concepts each do (spec "
        "§4): check the path, or give each file meant as a concept its frontmatter"
    )
