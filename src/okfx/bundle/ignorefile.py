"""``.okfignore``: a bundle's own exclusions, in ``.gitignore`` pattern semantics.

Another OKF toolkit (okf-parser, with its GitHub Action) reads the ``.md`` files a bundle
leaves out from an ``.okfignore`` beside its ``index.md``, with the rules of
``.gitignore``; a bundle kept with that toolkit carries one, and okfx reads it too rather
than failing the ``README.md`` it names. The rules:

- ``#`` starts a comment, a blank line says nothing, trailing blanks are dropped, and
  ``\\#`` / ``\\!`` write a first ``#`` or ``!``;
- a pattern with no ``/`` but a trailing one matches a name at any depth; a ``/`` at the
  start or in the middle anchors it at the bundle root; a trailing ``/`` matches folders
  only;
- ``*``, ``?``, ``[abc]`` and ``[!abc]`` stay inside one path segment; ``**`` spans any
  number of segments (a trailing ``/**`` one or more: what is inside a folder, not it);
- ``!`` re-includes, the last pattern that matches a path decides, and a path no pattern
  matches takes the decision of the nearest folder above it. As in that toolkit (and
  unlike git), a ``!`` pattern re-includes a file even when its folder is left out.

The file is bundle text: it is read through the bundle's path guard, bounded in size and
in patterns, and matched segment by segment (``**`` by a table over segments, linear in
the path's depth times the pattern's), never as one regular expression.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

__all__ = ["IGNORE_FILE", "MAX_IGNORE_BYTES", "MAX_RULES", "IgnoreRules", "Rule", "parse"]

IGNORE_FILE = ".okfignore"
#: Bytes of an ``.okfignore`` read at most; past it the rest is left out (and said so).
MAX_IGNORE_BYTES = 64 * 1024
#: Patterns kept at most.
MAX_RULES = 1000
_MAX_SEGMENTS = 64


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern: its path segments (``**`` among them), and how it applies."""

    parts: tuple[str, ...]
    negate: bool = False
    dir_only: bool = False
    anchored: bool = False

    def matches(self, parts: list[str], is_dir: bool) -> bool:
        """Does this pattern match the path of ``parts`` (a folder when ``is_dir``)?"""
        if self.dir_only and not is_dir:
            return False
        if not self.anchored:
            return fnmatchcase(parts[-1], self.parts[0])
        return _glob(self.parts, parts)


def _glob(pattern: tuple[str, ...], parts: list[str]) -> bool:
    """Segment-wise match, ``**`` for zero or more segments: a table over
    (pattern segment, path segment), so no input costs more than their product."""
    n = len(parts)
    last = len(pattern) - 1
    # reach[j]: the first i pattern segments can match the first j path segments.
    reach = [True] + [False] * n
    for i, segment in enumerate(pattern):
        if segment == "**" and i == last and i > 0:
            # A trailing "/**" is everything inside: one segment or more, not the folder.
            spans = [False] * (n + 1)
            for j in range(1, n + 1):
                spans[j] = spans[j - 1] or reach[j - 1]
            reach = spans
        elif segment == "**":
            for j in range(1, n + 1):
                reach[j] = reach[j] or reach[j - 1]
        else:
            reach = [False] + [reach[j] and fnmatchcase(parts[j], segment) for j in range(n)]
    return reach[n]


def _rule(line: str) -> Rule | None:
    """The pattern of one line of the file, or None for a comment or a blank line."""
    text = line.rstrip("\n").rstrip("\r")
    if text.endswith("\\ "):
        text = text[:-2].rstrip(" \t") + " "  # an escaped last blank stays
    else:
        text = text.rstrip(" \t")
    if not text or text.startswith("#"):
        return None
    negate = text.startswith("!")
    if negate:
        text = text[1:]
    elif text.startswith(("\\#", "\\!")):
        text = text[1:]
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    anchored = "/" in text
    parts = tuple(p for p in text.split("/") if p)[:_MAX_SEGMENTS]
    if not parts:
        return None
    if len(parts) == 1 and parts[0] == "**":
        anchored = True
    return Rule(parts, negate, dir_only, anchored or len(parts) > 1)


def parse(text: str) -> tuple[Rule, ...]:
    """The patterns of an ``.okfignore``, at most :data:`MAX_RULES`."""
    rules: list[Rule] = []
    for line in text.split("\n"):
        rule = _rule(line)
        if rule is not None:
            rules.append(rule)
            if len(rules) == MAX_RULES:
                break
    return tuple(rules)


class IgnoreRules:
    """The decision of an ``.okfignore`` for bundle paths, folders memoised."""

    __slots__ = ("_folders", "rules")

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self._folders: dict[str, bool] = {}

    def __bool__(self) -> bool:
        return bool(self.rules)

    def _own(self, parts: list[str], is_dir: bool) -> bool | None:
        """The last matching pattern's decision for this path itself, None when none."""
        decision = None
        for rule in self.rules:
            if rule.matches(parts, is_dir):
                decision = not rule.negate
        return decision

    def _folder(self, parts: list[str]) -> bool:
        key = "/".join(parts)
        found = self._folders.get(key)
        if found is None:
            inherited = self._folder(parts[:-1]) if len(parts) > 1 else False
            own = self._own(parts, True)
            found = self._folders[key] = inherited if own is None else own
        return found

    def excluded(self, path: str) -> bool:
        """Is the file at bundle path ``path`` (``/docs/README.md``) left out?"""
        parts = [p for p in path.split("/") if p]
        if not parts or not self.rules:
            return False
        own = self._own(parts, False)
        if own is not None:
            return own
        return self._folder(parts[:-1]) if len(parts) > 1 else False
