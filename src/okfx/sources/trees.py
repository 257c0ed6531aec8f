"""Removing and measuring folder trees of the source cache without recursion.

``shutil.rmtree`` and, before Python 3.12, ``os.walk`` recurse once per folder level: a
git repository or an archive holding 1,900 nested folders raised ``RecursionError`` out
of the cleanup of a refused extraction, and from then on out of ``okfx cache path`` and
``okfx cache clear --sources`` (sources QA). These walk with a list instead, never
follow a symlink, and, as ``rmtree(ignore_errors=True)`` does, leave what they cannot
remove.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["folders_near", "remove_tree", "tree_files"]

#: Folders named in the message for a folder a source lacks.
_LISTED = 20


def _children(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:
        return []


def tree_files(top: str | os.PathLike[str]) -> Iterator[str]:
    """The paths of every entry under ``top`` that is no folder (symlinks included, not
    followed), folder by folder."""
    stack = [os.fspath(top)]
    while stack:
        for entry in _children(stack.pop()):
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                stack.append(entry.path)
            else:
                yield entry.path


def remove_tree(top: str | os.PathLike[str]) -> None:
    """Delete ``top`` and everything under it, never following a symlink (a symlink is
    removed, not its target); errors are ignored, what cannot go stays."""
    root = os.fspath(top)
    if os.path.islink(root) or not os.path.isdir(root):
        try:
            os.unlink(root)
        except OSError:
            pass
        return
    folders = [root]
    at = 0
    while at < len(folders):
        for entry in _children(folders[at]):
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                    continue
                os.unlink(entry.path)
            except OSError:
                continue
        at += 1
    for folder in reversed(folders):  # the deepest first
        try:
            os.rmdir(folder)
        except OSError:
            continue


def folders_near(bases: Sequence[Path], subdir: str) -> str:
    """What to say after "folder ``subdir`` not found": the folders of the deepest folder
    on its way that exists (sources QA: the top level was listed for ``catalog/nope``),
    and one named alike in another letter case, as `` (its folders: a, b); did you mean
    'A'?``. Of several ``bases`` (an archive's top folder, then the extraction), the one
    the path goes deepest into, then one with a folder named alike, then one with any
    folder, the first of equals; ``.git`` is never listed."""
    views = [_view(base, subdir) for base in dict.fromkeys(bases)]
    if not views:
        return ""
    depth, _, _, label, folders, alike = max(views, key=lambda view: view[:3])
    shown = ", ".join(folders[:_LISTED]) or "none"
    if len(folders) > _LISTED:
        shown += f" and {len(folders) - _LISTED} more"
    hint = f"; did you mean {alike!r}?" if alike else ""
    return f" ({label}: {shown}){hint}"


def _view(base: Path, subdir: str) -> tuple[int, bool, bool, str, list[str], str]:
    """How far ``subdir`` goes into ``base``: (depth, has an alike, has folders, label,
    folders, alike) for :func:`folders_near`."""
    where, parts, depth = base, [part for part in subdir.split("/") if part], 0
    while parts and (where / parts[0]).is_dir():
        where, depth = where / parts.pop(0), depth + 1
    folders = sorted(
        (
            entry.name
            for entry in _children(os.fspath(where))
            if entry.name != ".git" and entry.is_dir(follow_symlinks=False)
        ),
        key=lambda name: (name.startswith("."), name),
    )
    alike = next((n for n in folders if parts and n.casefold() == parts[0].casefold()), "")
    inside = where.relative_to(base).as_posix()
    label = "its folders" if inside == "." else f"the folders of {inside}/"
    return depth, bool(alike), bool(folders), label, folders, alike
