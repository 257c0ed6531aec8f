"""Which files of a folder belong to the bundle: nested bundles and exclusions.

Two things real producers do that the spec does not cover (docs/okf.md, "Beyond the
spec"):

- **Nested bundles.** A subfolder whose ``index.md`` declares ``okf_version`` is the root
  of a bundle of its own (spec §12 allows that key only in a bundle-root ``index.md``). Its
  files are left out of the outer bundle, with one ``nested_bundle`` warning that says how
  to load it; the folder itself stays, so a link to it resolves.
- **Exclusions.** ``exclude`` patterns (``Bundle.load(..., exclude=[...])``, ``okfx
  --exclude``, or an ``exclude`` list in the root ``index.md`` frontmatter) name ``.md``
  files that are not concepts: a repository's ``README.md``, ``CONTRIBUTING.md``. They are
  reported as excluded, never as errors, and stay files of the bundle (readable resources,
  link targets).

A pattern without ``/`` matches a file or folder name at any depth (``README.md``,
``*.draft.md``, ``templates``); a pattern with ``/`` matches the path from the bundle root
(``docs/internal/*``, ``/CHARTER.md``); a pattern that names a folder matches everything
under it. ``*``, ``?`` and ``[...]`` are :mod:`fnmatch` wildcards (``*`` also crosses ``/``).
"""

from __future__ import annotations

import errno
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from okfx.bundle.frontmatter import FrontmatterError, load_yaml, split
from okfx.bundle.ignorefile import IGNORE_FILE, MAX_IGNORE_BYTES, MAX_RULES, IgnoreRules, parse
from okfx.bundle.paths import BeneathOpener, PathGuard, open_error
from okfx.bundle.walk import FileEntry, Walk, decode_text, read_head
from okfx.limits import Limits

__all__ = ["Scope", "find_scope", "matches", "written_version"]

Warn = Callable[[str, str, str], None]

_OKF_VERSION = re.compile(r"^okf_version[ \t]*:[ \t]*['\"]?([^'\"\s#]*)", re.MULTILINE)


def written_version(text: str) -> str | None:
    """The ``okf_version`` an ``index.md`` (or its frontmatter) declares, as written
    (``0.10`` stays ``0.10``, where YAML reads the number 0.1); None when it declares
    none."""
    found = _OKF_VERSION.search(text)
    return None if found is None else found.group(1)


@dataclass(frozen=True, slots=True)
class Scope:
    """What the walk found that is not this bundle's own."""

    nested: tuple[str, ...] = ()  # roots of bundles inside this one
    excluded: tuple[str, ...] = ()  # .md files that are not concepts (exclude patterns)
    patterns: tuple[str, ...] = ()  # the exclude patterns in force

    def apply(self, listing: Walk) -> Walk:
        """``listing`` without the files and folders of nested bundles (their roots stay,
        as folders, so that a link to one resolves)."""
        if not self.nested:
            return listing
        prefixes = tuple(root + "/" for root in self.nested)
        inside = Walk()
        inside.files = [f for f in listing.files if not f.path.startswith(prefixes)]
        inside.dirs = {d for d in listing.dirs if not d.startswith(prefixes)}
        return inside


def matches(path: str, patterns: Iterable[str]) -> bool:
    """Whether the bundle path ``path`` (``/docs/README.md``) is matched by a pattern."""
    parts = path.strip("/").split("/")
    for raw in patterns:
        pattern = raw.strip().rstrip("/")
        if not pattern:
            continue
        if "/" not in pattern:  # a name, at any depth
            if any(fnmatchcase(part, pattern) for part in parts):
                return True
            continue
        pattern = pattern.lstrip("/")  # a path from the bundle root
        for depth in range(1, len(parts) + 1):
            if fnmatchcase("/".join(parts[:depth]), pattern):
                return True
    return False


def _head(entry: FileEntry, limits: Limits, opener: BeneathOpener | None) -> str | None:
    """The frontmatter block of an ``index.md``, as YAML text (None when it has none);
    read through ``opener`` when given (no symlink followed, see okfx.bundle.paths)."""
    try:
        source = entry.host if opener is None else opener.open(opener.relative(entry.host))
        data, _ = read_head(source, limits.max_frontmatter_bytes + 8)
        yaml_text, _, _ = split(decode_text(data))
    except (OSError, UnicodeDecodeError, FrontmatterError):
        return None  # the parse reports it
    return yaml_text


def _root_patterns(yaml_text: str | None, limits: Limits, warn: Warn) -> list[str]:
    if yaml_text is None or "exclude" not in yaml_text:
        return []
    try:
        data, _ = load_yaml(yaml_text, limits, {})
    except FrontmatterError:
        return []  # the parse of index.md reports it
    value: Any = data.get("exclude") if isinstance(data, dict) else None
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        warn("/index.md", "invalid_field", "exclude must be a list of patterns; ignored")
        return []
    return [v for v in value if v.strip()]


def find_scope(
    listing: Walk,
    exclude: Sequence[str],
    limits: Limits,
    warn: Warn,
    root_dir: str = "<bundle>",
    guard: PathGuard | None = None,
) -> Scope:
    """Nested bundle roots and excluded files of ``listing``; warns ``nested_bundle``
    once per nested root (naming it under ``root_dir``, the bundle folder as the user
    knows it). Reads the frontmatter of ``index.md`` files only, below ``guard``'s root
    without following a symlink when it is given."""
    with guard.opener() if guard is not None else nullcontext() as opener:
        return _find_scope(listing, exclude, limits, warn, root_dir, opener)


def _find_scope(
    listing: Walk,
    exclude: Sequence[str],
    limits: Limits,
    warn: Warn,
    root_dir: str,
    opener: BeneathOpener | None,
) -> Scope:
    # Shallowest first, so a bundle nested in a nested bundle goes with the outer one.
    indexes = sorted(
        (f for f in listing.files if f.path.endswith("/index.md")),
        key=lambda f: (f.path.count("/"), f.path),
    )
    root = next((f for f in indexes if f.path == "/index.md"), None)
    patterns = list(exclude)
    if root is not None:
        patterns += _root_patterns(_head(root, limits, opener), limits, warn)
    ignored = _ignore_rules(opener, warn)

    def left_out(path: str) -> bool:
        return matches(path, patterns) or ignored.excluded(path)

    nested: list[str] = []
    for entry in indexes:
        folder = entry.path[: -len("/index.md")]
        if not folder or left_out(entry.path):
            continue
        if any(folder.startswith(outer + "/") for outer in nested):
            continue  # inside a nested bundle already left out
        yaml_text = _head(entry, limits, opener)
        written = written_version(yaml_text) if yaml_text else None
        if written is None:
            continue
        nested.append(folder)
        count = sum(1 for f in listing.files if f.path.startswith(folder + "/"))
        version = f" {written}" if written else ""
        inner = root_dir.rstrip("/") + folder
        warn(
            folder,
            "nested_bundle",
            f"{folder} is a bundle of its own (its index.md declares okf_version{version}): "
            f"its {count} files are left out of this bundle. Load it on its own "
            f"(okfx validate {inner}; Bundle.load({inner!r})), or serve both, named: "
            f"okfx serve outer={root_dir} inner={inner}",
        )
    scope = Scope(tuple(nested), (), tuple(patterns))
    if not patterns and not ignored:
        return scope
    inside = scope.apply(listing)
    excluded = tuple(f.path for f in inside.files if f.path.endswith(".md") and left_out(f.path))
    return Scope(scope.nested, excluded, scope.patterns)


def _ignore_rules(opener: BeneathOpener | None, warn: Warn) -> IgnoreRules:
    """The patterns of the bundle's ``.okfignore`` (:mod:`okfx.bundle.ignorefile`), read
    below the root without following a symlink; none when it has none."""
    if opener is None:
        return IgnoreRules(())
    try:
        data, size = read_head(opener.open(IGNORE_FILE), MAX_IGNORE_BYTES)
        text = decode_text(data)
    except FileNotFoundError:
        return IgnoreRules(())
    except (OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, UnicodeDecodeError):
            reason = "it is not UTF-8 text"
        elif exc.errno in (errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP)):
            reason = "it is a symlink, and okfx reads it only as a plain file of the bundle"
        else:
            reason = open_error(exc)
        warn(f"/{IGNORE_FILE}", "unreadable", f"{IGNORE_FILE} is not read: {reason}")
        return IgnoreRules(())
    # A cut file loses its last, partial line rather than reading half a pattern.
    rules = parse(text if size <= MAX_IGNORE_BYTES else text.rsplit("\n", 1)[0])
    if size > MAX_IGNORE_BYTES or len(rules) == MAX_RULES:
        warn(
            f"/{IGNORE_FILE}",
            "file_too_large",
            f"{IGNORE_FILE} is {size} bytes: only its first {MAX_IGNORE_BYTES} bytes and "
            f"{MAX_RULES} patterns are read",
        )
    return IgnoreRules(rules)
