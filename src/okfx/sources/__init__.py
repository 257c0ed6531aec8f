"""Bundle sources: local folders, git repositories (cached shallow clones) and archives."""

from okfx.sources.errors import ArchiveError, ArchiveLimitError, GitError, UnsafeSourceError
from okfx.sources.limits import SourceLimits
from okfx.sources.opener import open_source
from okfx.sources.spec import ArchiveSource, GitSource, LocalDir, ParsedSource, parse_source

__all__ = [
    "ArchiveError",
    "ArchiveLimitError",
    "ArchiveSource",
    "GitError",
    "GitSource",
    "LocalDir",
    "ParsedSource",
    "SourceLimits",
    "UnsafeSourceError",
    "open_source",
    "parse_source",
]
