"""Concepts an author wrote under a hidden name, which the load skips (docs/okf.md: names
starting with ``.`` are ignored, as ``.git/`` and editors' files must be).

A ``.draft.md`` or a ``.notes/`` folder of typed pages loads as nothing, and nothing said
so: ``okfx validate`` answered "conformant, 1 concept" for a folder holding four. The note
of :func:`hidden_note` names them. Only ``.md`` files whose frontmatter has a ``type``
line count (an editor's swap file or a ``.github/`` template is no concept anyone lost),
symlinks are never followed, and the look is bounded (:data:`MAX_ENTRIES`,
:data:`HEAD_BYTES`) so a hidden folder of a million files costs a bounded time.
"""

from __future__ import annotations

import os

from okfx.bundle.bundle import Bundle

__all__ = ["HEAD_BYTES", "MAX_ENTRIES", "hidden_concepts", "hidden_note"]

#: How many entries under hidden folders are looked at, at most.
MAX_ENTRIES = 20_000
#: How much of a hidden file is read to find its frontmatter's ``type`` line.
HEAD_BYTES = 4096
#: Hidden folders never looked into: git's own, and folders said by other notes.
_SKIPPED = frozenset({".git"})


def _typed(path: str) -> bool:
    """Whether the file at ``path`` starts with frontmatter holding a ``type`` line."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        head = os.read(fd, HEAD_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    lines = head.decode("utf-8", "replace").removeprefix("\ufeff").splitlines()
    if not lines or lines[0].rstrip() != "---":
        return False
    for line in lines[1:]:
        if line.rstrip() == "---":
            return False
        if line.startswith("type") and line[4:].lstrip(" \t").startswith(":"):
            return True
    return False


def hidden_concepts(bundle: Bundle, skip: frozenset[str] = frozenset()) -> list[str]:
    """The bundle paths of the typed ``.md`` files the load skipped for a hidden name,
    their own or a folder's, sorted; ``skip``: hidden folders right under the root not to
    look into (a hidden bundle, which another note names)."""
    root = bundle.guard.real_root
    found: list[str] = []
    budget = MAX_ENTRIES
    folders = sorted({"", *(d.strip("/") for d in bundle.directories)})
    stack: list[tuple[str, bool]] = [(folder, False) for folder in reversed(folders)]
    while stack and budget > 0:
        folder, hidden = stack.pop()
        try:
            with os.scandir(os.path.join(root, folder)) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        for entry in listed:
            budget -= 1
            if budget < 0:
                break
            inside = hidden or entry.name.startswith(".")
            if not inside:
                continue  # a visible entry: its folder is in the list already
            path = f"{folder}/{entry.name}" if folder else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIPPED and (folder or entry.name not in skip):
                        stack.append((path, True))
                elif (
                    entry.name.lower().endswith(".md")
                    and entry.is_file(follow_symlinks=False)
                    and _typed(entry.path)
                ):
                    found.append("/" + path)
            except OSError:
                continue
    return sorted(found)


def hidden_note(bundle: Bundle, skip: frozenset[str] = frozenset()) -> str | None:
    """The validate note naming the typed files a hidden name kept out, or None."""
    paths = hidden_concepts(bundle, skip)
    if not paths:
        return None
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    one = len(paths) == 1
    return (
        f"{len(paths)} .md {'file' if one else 'files'} with a type in {'its' if one else 'their'} "
        f"frontmatter {'is' if one else 'are'} not read, for a name starting with '.' "
        f"({'its' if one else 'their'} own or a folder's), which okfx skips as hidden: {shown}; "
        "rename without the dot to make them concepts"
    )
