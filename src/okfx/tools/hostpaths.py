"""No host path in what an agent reads.

A folder's path on the server is not said (``list_bundles``), yet a ``file://`` git URL,
a local archive, and a source that failed to load carried theirs whole, in ``source``
and in the failure's ``reason`` (security QA): a concept that tells the agent to call
``list_bundles`` and repeat it would hand the server's layout to whoever wrote it. Such
a source is shown by its last part alone (``file://…/gitrepo``, ``…/kb.zip#v1``).
"""

from __future__ import annotations

import os
import re

__all__ = ["short_source", "without_file_urls", "without_source_path"]

# file://[user@]host-or-empty/path, the credentials already redacted ("***@")
_FILE_URL = re.compile(r"^(file://)(?:[^/@]*@)?[^/]*(/[^#?]*)(.*)$", re.IGNORECASE | re.DOTALL)


def short_source(source: str) -> str:
    """``source`` (as an operator wrote it, or a clone's URL) without its host path: a
    ``file://`` URL or a local path keeps its last part and any ``#ref:subdir``; a
    remote URL is kept as is (its credentials are redacted elsewhere)."""
    found = _FILE_URL.match(source)
    if found is not None:
        return f"{found.group(1)}…/{_last(found.group(2))}{found.group(3)}"
    if "://" in source or source.startswith(("git@", "ssh:")):
        return source  # a remote: its address is what the agent may need to name it
    path, hash_, rest = source.partition("#")
    if os.sep in path or "/" in path:
        return f"…/{_last(path)}{hash_}{rest}"
    return source


def without_source_path(text: str, source: str) -> str:
    """``text`` (a failure's reason) with ``source``'s host path, as written and as an
    absolute path, replaced by :func:`short_source`'s form of it."""
    short = short_source(source)
    found = _FILE_URL.match(source)
    paths = {source.partition("#")[0]}
    if found is not None:
        paths.add(found.group(2))
    else:
        paths.add(os.path.abspath(source.partition("#")[0]))
    for path in sorted((p for p in paths if len(p) > 1), key=len, reverse=True):
        text = text.replace(path, short.partition("#")[0].removeprefix("file://"))
    return text


_FILE_URLS = re.compile(r"file://[^\s'\"()]*", re.IGNORECASE)


def without_file_urls(text: str) -> str:
    """``text`` with every ``file://`` URL in it shortened by :func:`short_source` (a git
    failure's message names the repository it asked)."""
    return _FILE_URLS.sub(lambda m: short_source(m.group()), text)


def _last(path: str) -> str:
    return path.rstrip("/").rpartition("/")[2] or path
