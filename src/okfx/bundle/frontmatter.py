"""Split one file's text into YAML frontmatter and body, and parse the YAML safely.

Strict on purpose: text without a well-formed ``---`` block is reported, never silently
treated as body (spec §4). YAML is parsed with PyYAML's C ``CSafeLoader`` when libyaml
is available (most frontmatter is read by :mod:`okfx.bundle.quickyaml` instead, with the same
result), with these differences from ``yaml.safe_load``:

- timestamps stay text (PyYAML raises ``ValueError`` on impossible dates such as
  ``2026-02-30``; the model parses and validates them field by field);
- duplicate keys are detected and reported (the last one still wins, as in YAML 1.1);
- size, nesting depth and alias expansion are bounded before anything is built, since
  libyaml can crash the process on ~100k nested brackets and aliases can expand
  exponentially ("billion laughs").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from okfx.bundle.quickyaml import quick_load
from okfx.bundle.yamlerrors import complex_key, explain
from okfx.bundle.yamlrepair import COLON_PROBLEM, quote_colon_values
from okfx.limits import Limits

__all__ = ["FrontmatterError", "Parsed", "duplicate_places", "load_repaired", "parse", "split"]

_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
_MERGE = _TAG + "merge"
#: The kind of node each of these tags names, and how it is written.
_KINDS = {_STR: yaml.ScalarNode, _MAP: yaml.MappingNode, _SEQ: yaml.SequenceNode}
_SHORT = {_STR: "!!str", _MAP: "!!map", _SEQ: "!!seq"}
_TIMESTAMP_TAG = _TAG + "timestamp"
_MAX_INT_CHARS = 4000
_MAX_INT_BITS = 14_000  # about 4,200 decimal digits: str() (4,300 at most) always works
_FAST_BASE: Any = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


def _without_timestamps(base: Any) -> dict[Any, list[tuple[str, Any]]]:
    resolvers: dict[Any, list[tuple[str, Any]]] = base.yaml_implicit_resolvers
    return {
        first: [(tag, rx) for tag, rx in entries if tag != _TIMESTAMP_TAG]
        for first, entries in resolvers.items()
    }


class _CheckedMixin:
    """Records duplicate mapping keys instead of letting the last one pass silently."""

    duplicate_keys: list[str]

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
        if len(keys) != len(set(keys)) and "<<" not in keys:
            seen: set[str] = set()
            for key in keys:
                if key in seen and key not in self.duplicate_keys:
                    self.duplicate_keys.append(str(key))
                seen.add(key)
        return super().construct_mapping(node, deep)  # type: ignore[misc]

    def construct_yaml_int(self, node: Any) -> int:
        # Python refuses str() of ints over 4,300 digits, and PyYAML's base-60 ints
        # ("1:2:3...") cost quadratic time: bound both before and after building.
        text = str(node.value)
        if len(text) > _MAX_INT_CHARS or (":" in text and len(text) > 100):
            raise ValueError(f"an integer of {len(text)} characters is too long")
        value: int = super().construct_yaml_int(node)  # type: ignore[misc]
        if value.bit_length() > _MAX_INT_BITS:
            raise ValueError("an integer is too large")
        return value

    def construct_yaml_set_in_order(self, node: Any) -> Any:
        # PyYAML builds a Python set, which prints in hash order: a different order on
        # every run. The members as a list, in the order the author wrote them, keep the
        # same bundle giving the same output everywhere.
        members: list[Any] = []
        yield members
        members.extend(self.construct_mapping(node))


class _QuickResolveMixin:
    """PyYAML's ``BaseResolver.resolve`` for loaders without path resolvers, faster.

    libyaml's composer calls ``resolve`` (pure Python) for every node and
    ``descend_resolver`` / ``ascend_resolver`` around it: about a quarter of the YAML
    time of a frontmatter block. The result is the same tag: the same (tag, regexp)
    pairs are tried in the same order, looked up once per first character instead of
    concatenating two lists on every call.
    """

    yaml_implicit_resolvers: dict[Any, list[tuple[str, Any]]]
    yaml_path_resolvers: dict[Any, Any]
    _by_first: dict[str, tuple[tuple[str, Any], ...]]
    _wildcard: tuple[tuple[str, Any], ...]

    @classmethod
    def index_resolvers(cls) -> None:
        """Precompute the per-first-character table; call after changing the resolvers."""
        if cls.yaml_path_resolvers:
            raise TypeError("the quick resolver does not support path resolvers")
        table = cls.yaml_implicit_resolvers
        wildcard = list(table.get(None, []))
        cls._by_first = {
            first: tuple(entries + wildcard)
            for first, entries in table.items()
            if first is not None
        }
        cls._wildcard = tuple(wildcard)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str | None:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                # value[:1] is "" for an empty value, the key PyYAML uses for it too.
                for tag, regexp in self._by_first.get(value[:1], self._wildcard):
                    if regexp.match(value):
                        return tag
            return _STR
        if kind is yaml.MappingNode:
            return _MAP
        return _SEQ if kind is yaml.SequenceNode else None

    # Without path resolvers PyYAML's versions return at once: skip even the lookup.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


class _FastLoader(_QuickResolveMixin, _CheckedMixin, _FAST_BASE):  # type: ignore[misc]
    pass


class _PureLoader(_CheckedMixin, yaml.SafeLoader):
    pass


_loader: Any
for _loader in (_FastLoader, _PureLoader):
    _loader.add_constructor("tag:yaml.org,2002:int", _CheckedMixin.construct_yaml_int)
    _loader.add_constructor("tag:yaml.org,2002:set", _CheckedMixin.construct_yaml_set_in_order)
    _loader.yaml_implicit_resolvers = _without_timestamps(_loader)
    # An explicit ``!!timestamp`` tag must not reach datetime parsing either.
    _loader.add_constructor(_TIMESTAMP_TAG, yaml.SafeLoader.construct_yaml_str)
_FastLoader.index_resolvers()


class FrontmatterError(Exception):
    """Why a file's frontmatter could not be used; ``code`` is a stable warning code."""

    def __init__(self, code: str, message: str, problem: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.problem = problem  # PyYAML's own words, when it raised: what a repair reads


@dataclass(slots=True)
class Parsed:
    data: dict[str, Any]
    body: str
    body_line: int  # 1-based line of the file where the body starts
    duplicate_keys: list[str] = field(default_factory=list)
    #: Frontmatter lines whose plain value held ": " and was read as text
    #: (:mod:`okfx.bundle.yamlrepair`).
    quoted_lines: list[int] = field(default_factory=list)
    #: The YAML text ``data`` was loaded from: the frontmatter, with those values quoted.
    yaml_text: str = ""


# The closing line, matched from the newline before it: a literal first character lets
# the regex engine jump ahead, where ``^`` would be tried at every position.
_CLOSE = re.compile(r"\n---[ \t]*$", re.MULTILINE)
_OPEN = re.compile(r"---[ \t]*(?:\n|$)")
# A run of "- " / "? " at a line start opens one nested block collection per marker.
_COMPACT_NEST = re.compile(r"^(?:[ \t]*[-?][ \t]+)+", re.MULTILINE)
_BRACKETS = re.compile(r"[\[\]{}]")


def split(text: str) -> tuple[str | None, str, int]:
    """Return ``(yaml_text, body, body_line)``; ``yaml_text`` is None without frontmatter.

    Raises :class:`FrontmatterError` (``unterminated_frontmatter``) when the opening
    ``---`` has no closing line. ``text`` must already have ``\\n`` line endings.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    opened = _OPEN.match(text)
    if not opened:
        return None, text, 1
    start = opened.end()
    close = _CLOSE.search(text, start - 1)  # the opening line ends with that newline
    if close is None:
        raise FrontmatterError(
            "unterminated_frontmatter",
            "frontmatter opened with '---' on line 1 but has no closing '---' line",
        )
    yaml_text = text[start : close.start() + 1]
    body_start = close.end() + 1 if close.end() < len(text) else close.end()
    body_line = yaml_text.count("\n") + 3
    return yaml_text, text[body_start:], body_line


def _node_stats(root: Any, max_nodes: int, max_depth: int) -> str | None:
    """Check alias expansion and depth on the composed node graph (iterative, memoised)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if depth > max_depth:
            return f"frontmatter is nested deeper than {max_depth} levels"
        key = id(node)
        if key in sizes:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = 1
            continue
        children = (
            [c for pair in node.value for c in pair]
            if isinstance(node, yaml.MappingNode)
            else list(node.value)
        )
        if done:
            total = 1 + sum(sizes.get(id(c), 1) for c in children)
            if total > max_nodes:
                return f"frontmatter expands to more than {max_nodes} YAML nodes (alias bomb?)"
            sizes[key] = total
            continue
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children if id(c) not in sizes)
    return None


_CONVERTERS = {
    _TAG + "int": "construct_yaml_int",
    _TAG + "float": "construct_yaml_float",
    _TAG + "bool": "construct_yaml_bool",
    _TAG + "null": "construct_yaml_null",
    _TIMESTAMP_TAG: "construct_yaml_str",
}


# Strings up to this length (statuses, authors, tags, ids) repeat across a bundle; the
# builder makes one object of each (``load_yaml(strings=...)``). Longer ones rarely repeat.
_SHARED_MAX = 32


class _Unusual(Exception):
    """The node graph holds something the fast builder leaves to PyYAML's constructor."""


def _build(loader: Any, node: Any, memo: dict[int, Any], depth: int, max_depth: int) -> Any:
    """Python values for a composed node graph: PyYAML's safe semantics, about twice as
    fast as its generic constructor for the plain mappings, lists and scalars of
    frontmatter. Merge keys, sets, pairs and custom tags raise :class:`_Unusual`."""
    tag = node.tag
    if tag in _KINDS and not isinstance(node, _KINDS[tag]):
        # ``!!str {a: 1}``, ``!!seq {a: 1}``: a tag another kind of node than it names
        # (security QA: the raw nodes came back as the value, or the load raised)
        line = node.start_mark.line + 2  # the frontmatter's first line is the file's second
        raise FrontmatterError(
            "malformed_yaml",
            f"YAML error: a value tagged {_SHORT[tag]} is not one (line {line}): remove the "
            "tag, or write a value of that kind",
        )
    if tag == _STR:
        return node.value
    key = id(node)
    if key in memo:  # an alias: share the value, as PyYAML does
        return memo[key]
    if depth > max_depth:
        raise FrontmatterError(
            "malformed_yaml", f"frontmatter is nested deeper than {max_depth} levels"
        )
    if tag == _MAP:
        out: dict[Any, Any] = {}
        memo[key] = out
        _fill_mapping(loader, node, out, memo, depth + 1, max_depth)
        return out
    if tag == _SEQ:
        items: list[Any] = []
        memo[key] = items
        share = loader.strings.setdefault
        for item in node.value:
            # Plain strings (most items) are read inline: a call per item costs more.
            if item.tag == _STR and type(item) is yaml.ScalarNode:
                value = item.value
                if type(value) is str and len(value) <= _SHARED_MAX:
                    value = share(value, value)
                items.append(value)
            else:
                items.append(_build(loader, item, memo, depth + 1, max_depth))
        return items
    method = _CONVERTERS.get(tag)
    if method is None or not isinstance(node, yaml.ScalarNode):
        raise _Unusual
    value = getattr(loader, method)(node)
    memo[key] = value
    return value


def _fill_mapping(
    loader: Any, node: Any, out: dict[Any, Any], memo: dict[int, Any], depth: int, max_depth: int
) -> None:
    """The pairs of a mapping node into ``out`` (``depth`` is the pairs' depth)."""
    share = loader.strings.setdefault
    for k_node, v_node in node.value:
        k_tag = k_node.tag
        if k_tag == _STR and type(k_node) is yaml.ScalarNode:
            k = k_node.value
            if type(k) is str:
                k = share(k, k)  # the same few keys in every concept
        elif k_tag == _MERGE:
            raise _Unusual
        else:
            k = _build(loader, k_node, memo, depth, max_depth)
            if isinstance(k, list | dict):
                line = k_node.start_mark.line
                raise FrontmatterError("malformed_yaml", complex_key(loader.yaml_text, line))
        if k in out:
            if _other_value(k, out):
                k = share(k_node.value, k_node.value)  # 1 and true: kept, by its text
            if k in out and k_node.value not in loader.duplicate_keys:
                loader.duplicate_keys.append(str(k_node.value))
        if v_node.tag == _STR and type(v_node) is yaml.ScalarNode:
            value = v_node.value
            if type(value) is str and len(value) <= _SHARED_MAX:
                value = share(value, value)
        else:
            value = _build(loader, v_node, memo, depth, max_depth)
        out[k] = value


def _other_value(key: Any, out: dict[Any, Any]) -> bool:
    """Whether ``key`` is another YAML value than the key of ``out`` equal to it in Python:
    ``1``, ``1.0`` and ``true`` are three keys to YAML, one to a dict (spec QA: ``1: one``
    then ``true: yes`` was a duplicate key, an error, and "one" was lost)."""
    held = next((other for other in out if other is key or other == key), key)
    return type(held) is not type(key)  # a NaN key is itself: found by identity


def _nesting_bound(yaml_text: str) -> int:
    """An upper bound on the nesting libyaml would have to recurse through, found in
    linear time *before* parsing (libyaml's composer can crash the process on ~100k
    nested brackets). Brackets inside quoted text count too: over-counting only
    refuses absurd documents, never lets a deep one through."""
    depth = deepest = 0
    if "[" in yaml_text or "{" in yaml_text:
        for match in _BRACKETS.finditer(yaml_text):
            if match.group() in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif depth:
                depth -= 1
    compact = 0
    if "- " in yaml_text or "? " in yaml_text or "-\t" in yaml_text:
        compact = max(
            (
                m.group().count("-") + m.group().count("?")
                for m in _COMPACT_NEST.finditer(yaml_text)
            ),
            default=0,
        )
    return deepest + compact


def _markers(yaml_text: str) -> int:
    """A coarser bound than :func:`_nesting_bound`, never below it: each bracket and
    each "-" / "?" marker it counts is one character counted here. Four single-character
    counts (C loops) spare the exact scan for almost every frontmatter."""
    count = yaml_text.count
    return count("[") + count("{") + count("-") + count("?")


def load_yaml(
    yaml_text: str, limits: Limits, strings: dict[str, str] | None = None
) -> tuple[Any, list[str]]:
    """Parse one YAML document within ``limits``; raises :class:`FrontmatterError`.

    ``strings`` maps strings already built to themselves: keys and short values equal to
    one of them reuse it (pass the same dict for every file of a bundle to share them).
    """
    if len(yaml_text) > limits.max_frontmatter_bytes:
        raise FrontmatterError(
            "malformed_yaml",
            f"frontmatter is {len(yaml_text)} characters, over the "
            f"max_frontmatter_bytes={limits.max_frontmatter_bytes} bound",
        )
    if _markers(yaml_text) > limits.max_yaml_depth and (
        _nesting_bound(yaml_text) > limits.max_yaml_depth
    ):
        raise FrontmatterError(
            "malformed_yaml",
            f"frontmatter is nested deeper than max_yaml_depth={limits.max_yaml_depth}",
        )
    quick = quick_load(
        yaml_text,
        strings,
        max_depth=limits.max_yaml_depth,
        max_nodes=limits.max_yaml_nodes,
    )
    if quick is not None:
        return quick
    return _load_with_pyyaml(yaml_text, limits, strings)


def _load_with_pyyaml(
    yaml_text: str, limits: Limits, strings: dict[str, str] | None
) -> tuple[Any, list[str]]:
    """:func:`load_yaml` for text its limits checks let through, with PyYAML: the path
    for everything :func:`quick_load` leaves, and the reference it is tested against."""
    loader: Any = None
    try:
        loader = _FastLoader(yaml_text)
        loader.yaml_text = yaml_text  # what a complex key's message quotes
        loader.duplicate_keys = []
        loader.strings = {} if strings is None else strings
        node = loader.get_single_node()
        if node is None:
            return None, []
        checked = "&" in yaml_text or len(yaml_text) > 16_384
        if checked:
            problem = _node_stats(node, limits.max_yaml_nodes, limits.max_yaml_depth)
            if problem:
                raise FrontmatterError("malformed_yaml", problem)
        try:
            data = _build(loader, node, {}, 1, limits.max_yaml_depth)
        except _Unusual:
            # PyYAML's constructor does not bound depth itself: check once if not yet done.
            problem = (
                None if checked else _node_stats(node, limits.max_yaml_nodes, limits.max_yaml_depth)
            )
            if problem:
                raise FrontmatterError("malformed_yaml", problem) from None
            loader.duplicate_keys = []
            data = loader.construct_document(node)
    except FrontmatterError:
        raise
    except yaml.MarkedYAMLError as exc:
        said = explain(exc, yaml_text)
        raise FrontmatterError("malformed_yaml", said, exc.problem or "") from None
    except RecursionError:
        raise FrontmatterError("malformed_yaml", "frontmatter is nested too deeply") from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        raise FrontmatterError("malformed_yaml", explain(exc, yaml_text)) from None
    except (LookupError, AttributeError):
        # PyYAML's constructors for a tagged value that is no such value (``!!bool
        # maybe``, an empty ``!!int``): security QA, the load raised KeyError/IndexError
        raise FrontmatterError(
            "malformed_yaml",
            "YAML error: a value tagged with !! (such as !!bool or !!int) is not a value of "
            "that type: remove the tag, or write a value of that type",
        ) from None
    finally:
        if loader is not None:
            loader.dispose()
    return data, loader.duplicate_keys


def load_repaired(
    yaml_text: str, limits: Limits, strings: dict[str, str] | None = None
) -> tuple[Any, list[str], list[int], str]:
    """:func:`load_yaml`, and when the only mistake is values holding an unquoted ``: ``,
    the text with those values quoted (:mod:`okfx.bundle.yamlrepair`): the data, the
    duplicate keys, the lines quoted and the text loaded. Raises the first error
    otherwise."""
    try:
        data, duplicates = load_yaml(yaml_text, limits, strings)
    except FrontmatterError as exc:
        repaired = quote_colon_values(yaml_text) if COLON_PROBLEM in exc.problem else None
        if repaired is None:
            raise
        try:
            data, duplicates = load_yaml(repaired[0], limits, strings)
        except FrontmatterError:
            raise exc from None  # another mistake too: the first one is the one to fix
        return data, duplicates, repaired[1], repaired[0]
    return data, duplicates, [], yaml_text


def _no_frontmatter(text: str) -> str:
    """Why ``text`` has no frontmatter, naming the mistake when it is a common one (author
    QA: an empty file, and a block after blank lines, were told only the rule)."""
    rule = "a concept must start with a '---' line, a 'type: ...' line and a closing '---' line"
    if not text.strip():
        return f"no YAML frontmatter: the file is empty ({rule})"
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    lines = text.lstrip("\ufeff").splitlines()
    at = next((n for n, line in enumerate(lines) if line.strip()), None)
    if at is not None and at > 0 and lines[at].rstrip() == "---":
        return (
            f"no YAML frontmatter: its '---' is on line {at + 1}, after blank lines; the "
            "frontmatter must start on line 1: remove the lines above it"
        )
    if first.strip() == "---" and first != "---":
        return "no YAML frontmatter: the first line is '---' with spaces around it; write it alone"
    return (
        f"no YAML frontmatter: {rule}; a file that is no concept (a README) is left out with "
        "--exclude or a line in .okfignore"
    )


def parse(text: str, limits: Limits, strings: dict[str, str] | None = None) -> Parsed:
    """Split and parse; the frontmatter must be a mapping (an empty block is not).
    ``strings`` as for :func:`load_yaml`."""
    yaml_text, body, body_line = split(text)
    if yaml_text is None:
        raise FrontmatterError("no_frontmatter", _no_frontmatter(text))
    data, duplicates, quoted, loaded = load_repaired(yaml_text, limits, strings)
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}, not a mapping"
        raise FrontmatterError(
            "frontmatter_not_mapping", f"frontmatter is {kind}; it must be 'key: value' pairs"
        )
    return Parsed(data, body, body_line, duplicates, quoted, loaded)


def duplicate_places(yaml_text: str) -> dict[str, tuple[int, str]]:
    """For each key repeated within one mapping of ``yaml_text``: the 0-based line of its
    second occurrence and the place of that mapping ("" at the top, "sources[0]",
    "generated"). Read again only for a frontmatter that has a duplicate, which loaded
    (so within the limits): validate QA: a nested one had no line and no parent."""
    try:
        root = yaml.compose(yaml_text, Loader=_FAST_BASE)
    except yaml.YAMLError:
        return {}
    found: dict[str, tuple[int, str]] = {}
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        node, place = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else ""
                if name in seen and name not in found:
                    found[name] = (key.start_mark.line, place)
                seen.add(name)
                stack.append((value, f"{place}.{name}" if place else name))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{place}[{i}]") for i, item in enumerate(node.value))
    return found
