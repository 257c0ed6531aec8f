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
from collections.abc import Iterator

__all__ = ["remove_tree", "tree_files"]


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
