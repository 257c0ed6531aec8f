"""Errors raised while fetching or unpacking a bundle source.

Each subclasses the builtin a caller would already catch, so ``except ValueError`` keeps working:

- ``GitError(RuntimeError)``: git is missing, or a git command failed; carries git's reason.
    - ``GitNotFound``: the repository or the ref asked for is not there.
- ``UnsafeSourceError(ValueError)``: a spec, subdirectory or link we refuse to follow.
- ``SourceSpecError(ValueError)``: a spec that says two things at once (two refs) or names
  no folder (a file's web page).
- ``ArchiveError(ValueError)``: an archive that cannot be read, or holds an entry we refuse.
    - ``ArchiveLimitError``: an archive over one of the ``SourceLimits`` caps; ``.limit`` names it.

Lock waits and git commands that run out of time raise the builtin ``TimeoutError``; a missing
folder, archive or git subdirectory raises ``FileNotFoundError``.
"""

from __future__ import annotations

__all__ = [
    "ArchiveError",
    "ArchiveLimitError",
    "GitError",
    "GitNotFound",
    "SourceSpecError",
    "UnsafeSourceError",
]


class GitError(RuntimeError):
    """git is not installed, or a git command failed (the message carries git's stderr)."""

    code = "git_failed"


class GitNotFound(GitError):
    """The repository, or the branch or tag asked for, is not there (or not visible with
    the access this machine has): the source as written names nothing to clone."""

    code = "git_not_found"


class UnsafeSourceError(ValueError):
    """A source spec, subdirectory or committed symlink that would escape where it should stay."""

    code = "unsafe_source"


class SourceSpecError(ValueError):
    """A source spec okfx cannot read as one source: a ref or subdirectory given twice with
    different values, or a file's page where a folder's is needed; the message says what
    to write."""

    code = "invalid_source"


class ArchiveError(ValueError):
    """An archive that is corrupt or holds an entry okfx refuses to extract."""

    code = "bad_archive"


class ArchiveLimitError(ArchiveError):
    """An archive over a ``SourceLimits`` cap; ``limit`` is the cap's field name."""

    code = "archive_limit"

    def __init__(self, limit: str, value: float, detail: str) -> None:
        super().__init__(f"archive exceeds {limit}={value}: {detail}")
        self.limit = limit
        self.value = value
