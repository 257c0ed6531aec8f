"""Bundle sources: local folders, git repositories (cached shallow clones) and archives.

Turns a source string into a local folder the loader can walk. Imports nothing else
from okfx: :mod:`okfx.bundle` uses it, never the other way round.
"""

from okfx.sources.errors import (
    ArchiveError,
    ArchiveLimitError,
    GitError,
    GitNotFound,
    SourceSpecError,
    UnsafeSourceError,
)
from okfx.sources.limits import SourceLimits
from okfx.sources.opener import open_source
from okfx.sources.spec import ArchiveSource, GitSource, LocalDir, ParsedSource, parse_source

__all__ = [
    "ArchiveError",
    "ArchiveLimitError",
    "ArchiveSource",
    "GitError",
    "GitNotFound",
    "GitSource",
    "LocalDir",
    "ParsedSource",
    "SourceLimits",
    "SourceSpecError",
    "UnsafeSourceError",
    "open_source",
    "parse_source",
]
