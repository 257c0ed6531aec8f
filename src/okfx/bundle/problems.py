"""What okfx reports about a bundle: the problem codes, what each one means, and the
grouping by code that ``okfx validate``, the tools and a viewer share.

A load records at most ``Limits.max_warnings`` problems (plus as many §11 errors again),
but counts every one by code, so a report built from :func:`group` is exact however many
problems a bundle has.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from okfx.model import Problem

__all__ = [
    "ERROR_CODES",
    "EXPLANATIONS",
    "ProblemGroup",
    "group",
    "kept_past",
    "kinds",
    "problem_dict",
    "problem_line",
    "reading_order",
    "unsaid_line",
    "varied",
]

#: Codes that break spec §11 rules 1-2 (the file is not a usable concept; for
#: ``unquoted_colon`` and ``duplicate_key``, okfx reads it but other consumers will not:
#: YAML keys are unique, and js-yaml, Go's yaml.v3 and ruamel.yaml refuse a repeated one)
#: and rule 3 (a reserved file off the structure of §8 or §9: frontmatter in an
#: ``index.md`` other than the root's ``okf_version``, entries outside a heading's section
#: in one, a ``log.md`` date heading not in ``YYYY-MM-DD`` form or entries before any
#: date heading), plus a bundle
#: with no concept at all (``okfx validate`` adds it: a wrong path must not pass a check).
ERROR_CODES = frozenset(
    {
        "reserved_frontmatter",
        "reserved_concept",
        "index_no_section",
        "invalid_log_date",
        "log_ungrouped",
        "no_frontmatter",
        "unterminated_frontmatter",
        "malformed_yaml",
        "unquoted_colon",
        "duplicate_key",
        "frontmatter_not_mapping",
        "missing_type",
        "invalid_type",
        "invalid_encoding",
        "no_concepts",
    }
)


def kept_past(code: str, kept: int, cap: int) -> bool:
    """Is a problem of ``code`` listed when ``kept`` are listed already? Up to ``cap``
    (``Limits.max_warnings``) any is; a §11 error is, up to as many again."""
    return kept < cap or (code in ERROR_CODES and kept < 2 * cap)


#: One line per code: what it means for the bundle and what to do.
EXPLANATIONS: dict[str, str] = {
    "no_frontmatter": "a .md file other than index.md/log.md has no frontmatter, so it is not "
    "a concept (§11 rule 1); add one, or exclude the file (--exclude, or .okfignore)",
    "unterminated_frontmatter": "the frontmatter opens with '---' but never closes (§4)",
    "malformed_yaml": "the frontmatter is not valid YAML, so the file is not a concept (§11)",
    "unquoted_colon": "a frontmatter value holds ': ' without quotes, which is not valid "
    "YAML (§11): okfx reads the value as text, other consumers skip the file; quote it",
    "frontmatter_not_mapping": "the frontmatter is not a key: value mapping (§4.1)",
    "missing_type": "the frontmatter has no non-empty 'type', so the file is not a concept "
    "(§11 rule 2)",
    "invalid_type": "'type' is not a string (§4.1)",
    "invalid_encoding": "the file is not UTF-8 text (§4)",
    "no_concepts": "the folder holds no concept: check the path",
    "duplicate_key": "a frontmatter key appears twice, which YAML does not allow (§11 rule 1): "
    "okfx keeps the last one, other consumers reject the file; keep one",
    "invalid_field": "an optional field has a value off the spec; the concept is kept, and "
    "each line says what okfx made of the value (ignored, or read as written)",
    "assumed_utc": "a date or time without a UTC offset was read in UTC (a date as the start "
    "of its day, §5 asks for an offset)",
    "unknown_status": "status is not draft, stable or deprecated (§5.4); read as stable (a "
    "review, status: reviewed or approved, is recorded in verified, §5.2)",
    "okf_version_number": "okf_version is written as a number YAML reads otherwise (0.10 is "
    "0.1); okfx keeps the text as written: quote it (§12)",
    "unquoted_scalar": "a text field (type, title, description, a tag, a source's id or "
    "title) is "
    "a plain value YAML reads as a number or true/false (3.10 is 3.1, NO is false); okfx "
    "keeps the text as written: quote it",
    "status_case": "status is draft, stable or deprecated in capitals; okfx reads it, "
    "§5.4 writes the values in lower case",
    "usage_window_incomplete": "a usage_window lacks 'from' or 'to'; §5.1 frames usage_count "
    "with a {from, to} range",
    "usage_window_reversed": "a usage_window's 'from' is after its 'to' (§5.1)",
    "missing_computation": "an Attested Computation has no code block under '# Computation' "
    "and no 'computation' file (§10.3); it cannot be bound",
    "computation_twice": "an Attested Computation names a 'computation' file and has a code "
    "block under '# Computation' too; §10.3 asks for one; okfx binds the file",
    "computation_blocks": "an Attested Computation has more than one fenced code block under "
    "'# Computation'; §10.3 asks for a single block; okfx binds the first",
    "receipt_not_list": "executor.receipt is not a list of field names (§10.2); ignored",
    "unbindable_computation": "okfx cannot bind this SQL Attested Computation for any value "
    "(a placeholder its parameters do not declare, SQL okfx cannot read, a parameter type "
    "okfx does not know, a default or constraint that breaks its own type): "
    "prepare_computation refuses it",
    "unused_parameter": "an Attested Computation declares a parameter its SQL never uses "
    "(often a hole written in a syntax the runtime does not read as a placeholder)",
    "unknown_footnote": "a [^label] footnote has no definition in the body and matches no "
    "sources[].id (§5.1)",
    "broken_link": "a link's target is not in the bundle; tolerated (§6.1)",
    "ambiguous_path": "a frontmatter path (computation, resource, a source's resource) names "
    "a file from the bundle root and another beside its page; okfx reads the root's (§6.2, "
    "as the spec's examples write them): write /x or ./x to say which",
    "link_from_root": "a relative body link (tables/x.md) names nothing beside its page, and "
    "okfx follows it from the bundle root, where its target is; other readers (GitHub, the "
    "spec's standard markdown paths) find nothing: write it from the root (/tables/x.md)",
    "broken_anchor": "a link's #fragment names no heading (by GitHub's heading ids) or "
    "id/name anchor of its target; the link still leads to the document (§6.1)",
    "repository_root_links": "absolute links are written from the repository root, not the "
    "bundle root (§6.1)",
    "ambiguous_wikilink": "a [[wikilink]] matches several files; it is not followed",
    "unknown_id": "a relation key (related, prerequisites, ...) names an id that no concept "
    "of the bundle declares in its 'id' key; no edge (beyond the spec)",
    "ambiguous_id": "a relation key names an id that several concepts declare; no edge "
    "(beyond the spec)",
    "duplicate_id": "a concept declares an 'id' another concept declares too, in a bundle "
    "whose relation keys name concepts by id (beyond the spec)",
    "unsafe_link": "a link points above the bundle root, or is no path okfx opens (a "
    "backslash or a control character in it); okfx never follows it",
    "source_outside_bundle": "a sources[].resource points outside the bundle; the source is "
    "kept, the path is not followed",
    "too_many_links": "a document has more links than Limits.max_links_per_concept; the rest "
    "are ignored",
    "reserved_frontmatter": "an index.md carries frontmatter, which §8 allows only in the root "
    "index.md and only for okf_version (§12; okfx adds exclude): §11 rule 3; okfx ignores "
    "it. Move the keys out",
    "reserved_concept": "a log.md is a concept's page (a type, no date heading), but §3.1 "
    "forbids the name for concepts: it is read as the log, so no index, search or grep "
    "finds it (§11 rule 3). Rename the file, or, if it is the bundle's change log, rewrite it "
    "as §9 writes one",
    "index_no_section": "an index.md lists entries outside any heading, or has no section at "
    "all; §8 groups entries under headings: §11 rule 3",
    "index_table": "an index.md lists its links in a table, with no '* [Title](url) - "
    "description' entry (§8): okfx keeps the links, other consumers may read no listing",
    "log_ungrouped": "a log.md lists entries before any date heading; §9 groups entries "
    "under YYYY-MM-DD headings: §11 rule 3",
    "log_frontmatter": "a log.md starts with a frontmatter block, which is no part of the log "
    "format of §9; okfx ignores it",
    "log_order": "a log.md lists an older date before a newer one; §9 lists entries newest "
    "first (okfx reads them in any order)",
    "log_section": "a log.md heading holds no date (a section such as '## Notes'); §9 groups "
    "a log's changes under YYYY-MM-DD headings, so its entries get no date",
    "invalid_log_date": "a log.md date heading is not in YYYY-MM-DD form, which §9 requires "
    "(§11 rule 3); its entries get the date it starts with, if any, else none",
    "case_collision": "two file names differ only in letter case: a macOS or Windows "
    "checkout holds one of them, so the bundle differs by machine",
    "md_case": "a file ends in .MD or .Md: okfx reads only .md files as concepts, so it is "
    "not read; rename it",
    "broken_image": "an image in a concept's body shows a file the bundle does not have: "
    "the picture does not show",
    "reserved_case": "a file is named Index.md, LOG.md or so: on macOS and Windows it is the "
    "folder's reserved index.md or log.md (§3.1); rename it",
    "nested_bundle": "a folder is a bundle of its own (its index.md declares okf_version); "
    "its files are left out of this one",
    "unsafe_path": "a file name or symlink okfx will not open",
    "not_regular_file": "a FIFO, device or socket; never opened",
    "symlink_loop": "a folder reached twice through symlinks; visited once",
    "unreadable": "a file or folder the operating system would not let okfx read",
    "too_deep": "folders deeper than Limits.max_dir_depth are not read",
    "too_many_files": "the walk stopped at Limits.max_files",
    "file_too_large": "a file over Limits.max_file_bytes is not read",
    "bundle_too_large": "reading stopped at Limits.max_total_bytes",
    "too_many_warnings": "more problems than Limits.max_warnings: the rest are counted, not listed",
}


@dataclass(frozen=True, slots=True)
class ProblemGroup:
    """Every problem of one code: how many (exact), what it means, the recorded ones."""

    code: str
    severity: str  # "error" (breaks §11) or "warning"
    count: int
    explanation: str
    problems: tuple[Problem, ...]  # the recorded ones, in path order

    @property
    def unlisted(self) -> int:
        """Problems counted but not recorded (over ``Limits.max_warnings``)."""
        return self.count - len(self.problems)

    def to_dict(self, examples: int | None = None) -> dict[str, Any]:
        """JSON-able; ``examples`` keeps only the first few problems."""
        shown = self.problems if examples is None else self.problems[:examples]
        return {
            "code": self.code,
            "severity": self.severity,
            "count": self.count,
            "explanation": self.explanation,
            "problems": [problem_dict(p) for p in shown],
        }


def group(
    problems: Iterable[Problem], counts: Mapping[str, int] | None = None
) -> list[ProblemGroup]:
    """``problems`` grouped by code: errors first, then the most frequent codes.

    ``counts`` (code -> number, as :meth:`Bundle.problem_counts` gives) makes each count
    exact when some problems were not recorded; without it the recorded ones are counted.
    """
    by_code: dict[str, list[Problem]] = {}
    for problem in problems:
        by_code.setdefault(problem.code, []).append(problem)
    totals = dict(counts) if counts is not None else {}
    for code, listed in by_code.items():
        totals[code] = max(totals.get(code, 0), len(listed))
    groups = [
        ProblemGroup(
            code=code,
            severity="error" if code in ERROR_CODES else "warning",
            count=count,
            explanation=EXPLANATIONS.get(code, ""),
            problems=tuple(sorted(by_code.get(code, ()), key=reading_order)),
        )
        for code, count in totals.items()
        if count > 0
    ]
    groups.sort(key=lambda g: (g.severity != "error", -g.count, g.code))
    return groups


def reading_order(problem: Problem) -> tuple[str, int, str, str]:
    """The sort key of a report's problems: path, then line (those without one first),
    then code and message: an author fixes a file from the top (validate QA: one file's
    links came as lines 160, 77, 79, 78, 214)."""
    return problem.path, problem_line(problem) or 0, problem.code, problem.message


#: Where a message names a file line: the last ``(line N)`` of a link problem (what comes
#: before it quotes bundle text), or a ``(line N)`` that ends the message (YAML errors,
#: the checks of :mod:`okfx.bundle.conventions` and ``duplicate_key`` put it there, after
#: any bundle text they quote).
_LINK_LINE = re.compile(r"\(line (\d+)\)")
_LAST_LINE = re.compile(r" \(line (\d+)\)$")
_LINK_CODES = frozenset({"broken_link", "ambiguous_wikilink"})


def problem_line(problem: Problem) -> int | None:
    """The line of the file a problem is on, when its message says; else ``None``."""
    if problem.code in _LINK_CODES:
        numbers = _LINK_LINE.findall(problem.message)
        return int(numbers[-1]) if numbers else None
    last = _LAST_LINE.search(problem.message)
    return int(last.group(1)) if last else None


def unsaid_line(problem: Problem) -> int | None:
    """:func:`problem_line` when the message does not already say it as ``(line N)``
    (at its end, or a link's after its href): the line a reader is still to be told, for
    the CLI and the viewer to add."""
    line = problem_line(problem)
    return None if line is None or f"(line {line})" in problem.message else line


def problem_dict(problem: Problem) -> dict[str, Any]:
    """A problem as JSON: ``path``, ``code``, ``message`` and ``line`` (the file's line,
    1-based, or ``None`` when okfx does not know it)."""
    return {**problem._asdict(), "line": problem_line(problem)}


_QUOTED = re.compile(r"'([^'\n]{1,80})'")


def problem_kind(problem: Problem) -> str | None:
    """What sets a problem apart within its code, for the codes where that is one fix:
    the field an ``invalid_field`` is about ("tags", "verified"), the value an
    ``unknown_status`` reads ("'active'"); None for the other codes."""
    if problem.code == "invalid_field":
        return problem.message.split(" ", 1)[0].split("[", 1)[0]
    if problem.code == "unknown_status":
        quoted = _QUOTED.search(problem.message)
        return f"'{quoted.group(1)}'" if quoted else None
    return None


def kinds(problems: Sequence[Problem]) -> Counter[str]:
    """How many of ``problems`` (one code's) are of each :func:`problem_kind`, so a report
    can say "tags 3167, timestamp 490, verified 141" where three examples by path showed
    only the 141 (validate QA on okf-explorer); empty for a code without kinds."""
    return Counter(kind for p in problems if (kind := problem_kind(p)) is not None)


def varied(problems: Sequence[Problem], k: int) -> list[Problem]:
    """``k`` examples of one code's ``problems`` (in reading order): the first of each
    kind first, the most frequent kind first, then the next ones in order."""
    counted = kinds(problems)
    if len(problems) <= k or len(counted) < 2:
        return list(problems[:k])
    first: dict[str, Problem] = {}
    for problem in problems:
        kind = problem_kind(problem)
        if kind is not None:
            first.setdefault(kind, problem)
    picked = [first[kind] for kind, _ in counted.most_common(k)]
    chosen = set(map(id, picked))
    picked += [p for p in problems if id(p) not in chosen][: k - len(picked)]
    return sorted(picked, key=reading_order)
