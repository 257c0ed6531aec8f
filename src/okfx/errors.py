"""Typed errors raised by the okfx library.

Every error carries a stable ``code`` string. Agent-facing tools never raise: the
``Toolbox`` turns these into ``{"error": {"code": ..., "message": ...}}`` results.

Hierarchy::

    OKFError                      code = "error"
    ├── NotFound                  code = "not_found"       (+ .path, .suggestions)
    ├── UnsafePath                code = "unsafe_path"     (+ .path)
    ├── InvalidArgument           code = "invalid_argument"
    │   ├── InvalidRegex          code = "invalid_regex"
    │   └── InvalidParameter      code = "invalid_parameter" (+ .parameter, .expected)
    ├── NotAttestable             code = "not_attestable"  (+ .path)
    ├── NoExecutor                code = "no_executor"
    ├── Unreadable                code = "unreadable"      (+ .path)
    ├── TooLarge                  code = "too_large"       (+ .path)
    ├── TimedOut                  code = "timeout"
    ├── UnsafeCacheDir            code = "unsafe_cache_dir" (+ .path)
    └── SemanticUnavailable       code = "semantic_unavailable"

Messages say what was wrong and what to do next.
"""

from __future__ import annotations

__all__ = [
    "InvalidArgument",
    "InvalidParameter",
    "InvalidRegex",
    "NoExecutor",
    "NotAttestable",
    "NotFound",
    "OKFError",
    "SemanticUnavailable",
    "TimedOut",
    "TooLarge",
    "UnsafeCacheDir",
    "UnsafePath",
    "Unreadable",
]


class OKFError(Exception):
    """Base class of every okfx error; ``code`` is stable and machine-readable."""

    code = "error"
    #: The message may quote text a bundle's author wrote (a contract's runtime, a
    #: parameter's declared type or name), which an agent must read as data.
    bundle_text = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def quoting_bundle(self) -> OKFError:
        """This error, marked as quoting bundle text (:attr:`bundle_text`): a file or
        folder name the message holds is the bundle author's."""
        self.bundle_text = True
        return self


class NotFound(OKFError):
    """A concept, file or bundle does not exist; ``suggestions`` holds close matches;
    ``file`` names the bundle file at the path when a concept was asked for and the file
    there is none (a README.md without frontmatter): read it as a file."""

    code = "not_found"

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        suggestions: list[str] | None = None,
        file: str | None = None,
    ):
        super().__init__(message)
        self.path = path
        self.suggestions = list(suggestions or [])
        self.file = file


class UnsafePath(OKFError):
    """A path would leave the bundle root (``..``, NUL, backslash, escaping symlink...)."""

    code = "unsafe_path"

    def __init__(
        self, message: str, *, path: str = "", suggestions: list[str] | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        #: Bundle paths the refused path likely meant (a link's ``../x.md`` copied as is).
        self.suggestions = suggestions or []


class InvalidArgument(OKFError):
    """An argument has the wrong type or an out-of-range value."""

    code = "invalid_argument"


class InvalidRegex(InvalidArgument):
    """A grep pattern is not a valid (linear-time) regular expression."""

    code = "invalid_regex"


class InvalidParameter(InvalidArgument):
    """A value for an Attested Computation parameter is missing, undeclared or of the
    wrong type; ``parameter`` names it and ``expected`` says what it must be."""

    code = "invalid_parameter"
    bundle_text = True  # the contract's declared names, types and values

    def __init__(self, message: str, *, parameter: str = "", expected: str = "") -> None:
        super().__init__(message)
        self.parameter = parameter
        self.expected = expected


class NotAttestable(OKFError):
    """A concept okfx cannot bind: not an Attested Computation, no computation, a runtime
    that is not SQL okfx reads, or a computation text it refuses to read."""

    code = "not_attestable"
    bundle_text = True  # the contract's runtime, the computation's own text

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class NoExecutor(OKFError):
    """No executor is configured for a computation's runtime: okfx runs nothing by default."""

    code = "no_executor"


class Unreadable(OKFError):
    """A file exists but cannot be read as text (binary, bad encoding, I/O error)."""

    code = "unreadable"

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class TooLarge(OKFError):
    """A file or request exceeds a configured size bound."""

    code = "too_large"

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class TimedOut(OKFError):
    """A call ran out of its time budget (see :mod:`okfx.deadline`): it stopped, or never
    started because the server was busy, instead of queueing without end."""

    code = "timeout"


class UnsafeCacheDir(OKFError):
    """A cache folder another user could write to or redirect (see :mod:`okfx.cachedir`)."""

    code = "unsafe_cache_dir"

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class SemanticUnavailable(OKFError):
    """Semantic search was asked for but cannot run: its packages are not installed (the
    message names the command that installs the ``semantic`` extra), or the bundle is over
    the size cap (``capped``)."""

    code = "semantic_unavailable"

    def __init__(self, message: str, *, capped: bool = False) -> None:
        super().__init__(message)
        self.capped = capped
