"""Turn what a user typed into a source: a local folder, a local archive, or a git repository.

Everything here is pure string and path work, plus an ``is_dir`` check to tell a folder from an
archive; nothing runs git or touches the network.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from okfx.sources.errors import SourceSpecError, UnsafeSourceError

__all__ = [
    "ARCHIVE_SUFFIXES",
    "ArchiveSource",
    "GitSource",
    "LocalDir",
    "ParsedSource",
    "is_commit_id",
    "parse_source",
    "redact",
]

# Longest first, so "x.tar.gz" is not taken for a ".gz" of something else.
ARCHIVE_SUFFIXES = (".tar.gz", ".tar.xz", ".tgz", ".zip", ".tar")
ALLOWED_SCHEMES = ("file", "git", "https", "ssh")

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# git runs "git-remote-<name>" for "<name>::<address>" (ext:: runs any shell command).
_REMOTE_HELPER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+._-]*::")
# scp-like ssh syntax; a user part is required so "notes:draft" stays a file name.
_SCP_LIKE = re.compile(r"^[^/@:\s]+@(\[[^\]]+\]|[^/:\s]+):(?!//)")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# A whole commit id: SHA-1 (40 hex digits) or SHA-256 (64). Git fetches a commit by its
# whole id only; an abbreviated one is read as a branch or tag name.
_COMMIT_ID = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
_SHORT_COMMIT = re.compile(r"[0-9a-fA-F]{7,39}")


def is_commit_id(ref: str | None) -> bool:
    """Whether ``ref`` is a whole commit id (40 or 64 hex digits), which pins a source."""
    return ref is not None and _COMMIT_ID.fullmatch(ref) is not None


def looks_like_short_commit(ref: str | None) -> bool:
    """Whether ``ref`` could be an abbreviated commit id (7 to 39 hex digits)."""
    return ref is not None and _SHORT_COMMIT.fullmatch(ref) is not None


@dataclass(frozen=True, repr=False)
class GitSource:
    """A git repository, optionally at a branch, a tag or a whole commit id (``ref``), and a
    subdirectory. A commit id pins the source: it never moves, so a refresh leaves it."""

    url: str
    ref: str | None = None
    subdir: str | None = None

    def __repr__(self) -> str:
        # The URL may carry a token; a repr ends up in logs and tracebacks.
        return f"GitSource(url={redact(self.url)!r}, ref={self.ref!r}, subdir={self.subdir!r})"


@dataclass(frozen=True)
class LocalDir:
    """A bundle folder on the local disk, read in place."""

    path: Path


@dataclass(frozen=True)
class ArchiveSource:
    """A local ``.zip``, ``.tar``, ``.tar.gz``, ``.tgz`` or ``.tar.xz`` file, and optionally
    the folder in it that holds the bundle (``subdir``, written ``kb.zip#okf/sales``)."""

    path: Path
    subdir: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "subdir", clean_subdir(self.subdir))


ParsedSource = LocalDir | GitSource | ArchiveSource


def parse_source(spec: str | os.PathLike[str] | ParsedSource) -> ParsedSource:
    """Classify ``spec`` as a local folder, a local archive or a git repository.

    URLs (https, ssh, git, file), scp-like ``git@host:org/repo`` and GitHub/GitLab
    ``.../tree/<ref>/<subdir>`` pages become a ``GitSource``; a path whose name ends in an
    archive suffix and that is not a directory becomes an ``ArchiveSource`` (``kb.zip#okf``,
    when no file has that whole name, names the folder ``okf`` in it); any other path,
    including a git work tree, is a ``LocalDir``. A missing path is reported when opened.

    Raises:
        UnsafeSourceError: remote-helper transports (``ext::``), a disallowed URL scheme, a
            spec that starts with ``-`` and is no existing path, or a subdirectory with ``..``.
    """
    if isinstance(spec, GitSource):
        return _checked_git(spec)
    if isinstance(spec, LocalDir | ArchiveSource):
        return spec
    if isinstance(spec, os.PathLike):
        return _local(Path(spec))
    if not isinstance(spec, str):
        raise TypeError(f"expected a path, URL or GitSource, got {type(spec).__name__}")
    if _REMOTE_HELPER.match(spec) or _SCHEME.match(spec) or _SCP_LIKE.match(spec):
        scheme = _SCHEME.match(spec)
        if scheme is not None and not scheme.group(1).islower():
            # git allows its transports by their lower-case names (sources QA: "HTTPS://"
            # passed okfx's checks, then git refused "transport 'HTTPS' not allowed")
            spec = scheme.group(1).lower() + spec[scheme.end(1) :]
        return _checked_git(GitSource(spec))
    path = Path(spec).expanduser()
    if spec.startswith("-") and not path.exists():
        raise UnsafeSourceError(f"refusing source {redact(spec)!r}: it looks like an option")
    if "#" in spec and not path.exists():
        inside = _archive_folder(spec)
        if inside is not None:
            return inside
    return _local(path)


def _archive_folder(spec: str) -> ArchiveSource | None:
    """``kb.zip#okf/sales`` (or ``kb.zip#:okf/sales``, the git form) as an archive and the
    folder in it, when the text before a ``#`` names an archive; else None."""
    at = spec.find("#")
    while at >= 0:
        head, folder = spec[:at], spec[at + 1 :]
        if head.lower().endswith(ARCHIVE_SUFFIXES):
            return ArchiveSource(Path(head).expanduser(), folder.removeprefix(":") or None)
        at = spec.find("#", at + 1)
    return None


class FetchOnce:
    """The sources one command has fetched again: the first load of a source refreshes
    it, a later load of another folder of it (:func:`fetch_key`) reads that fetch."""

    def __init__(self) -> None:
        self._fetched: set[str] = set()

    def refresh(self, spec: str | os.PathLike[str] | ParsedSource, wanted: bool) -> bool:
        """Whether a load of ``spec`` that ``wanted`` a refresh fetches again."""
        if not wanted:
            return False
        key = fetch_key(spec)
        if key is None:
            return True
        fresh = key not in self._fetched
        self._fetched.add(key)
        return fresh


def fetch_key(spec: str | os.PathLike[str] | ParsedSource) -> str | None:
    """What one fetch serves: the cache entry of a git source (its repository, ref and
    credentials, whatever folder of it is asked) or an archive's path; None for a folder
    or a spec that does not parse. A command that refreshes several bundles of one source
    fetches it once (sources QA: three folders of one repository cloned it three times,
    and could serve three commits)."""
    try:
        parsed = parse_source(spec)
    except (ValueError, TypeError):
        return None
    if isinstance(parsed, GitSource):
        return "git:" + git_cache_key(parsed)
    if isinstance(parsed, ArchiveSource):
        return f"archive:{os.path.abspath(parsed.path)}"
    return None


def redact(text: str) -> str:
    """Replace the user-info part of every URL in ``text`` with ``***``.

    A URL is a scheme (a letter, then letters, digits, ``+``, ``.``, ``-``), ``://``, and
    its user-info runs up to the last ``@`` before the first ``/`` or blank (a password
    may itself hold ``@``). Found from each ``://`` in one pass, without a regular
    expression: the text may be a remote's error output, and a pattern that tries every
    start of a long run of scheme characters takes quadratic time on it.
    """
    out: list[str] = []
    done = 0  # text[:done] is copied to out already
    at = text.find("://")
    while at >= 0:
        start = at
        while start > done and text[start - 1] in _SCHEME_CHARS:
            start -= 1
        while start < at and not ("a" <= text[start].lower() <= "z"):
            start += 1  # a scheme starts with a letter
        stop = at + 3
        while stop < len(text) and text[stop] != "/" and not text[stop].isspace():
            stop += 1
        userinfo_end = text.rfind("@", at + 3, stop)
        if start < at and userinfo_end >= 0:
            out.append(text[done : at + 3] + "***@")
            done = userinfo_end + 1
        at = text.find("://", max(at + 3, done))
    out.append(text[done:])
    return "".join(out)


def secrets_of(url: str) -> list[str]:
    """The user name and password embedded in ``url``, raw and percent-decoded, for scrubbing."""
    match = _SCHEME.match(url)
    if not match:
        return []
    netloc = url[match.end() :].split("/", 1)[0]
    userinfo, at, _host = netloc.rpartition("@")
    if not at:
        return []
    found = {piece for raw in userinfo.split(":", 1) for piece in (raw, unquote(raw)) if piece}
    # Longest first so a shorter secret inside a longer one does not leave a fragment.
    return sorted(found, key=len, reverse=True)


def scrub(text: str, url: str) -> str:
    """``redact`` plus removal of ``url``'s credentials wherever they appear in ``text``."""
    text = redact(text)
    for secret in secrets_of(url):
        if len(secret) >= 3:
            text = text.replace(secret, "***")
    return text


def normalized_url(url: str) -> str:
    """The repository's identity: no credentials, lower-case scheme and host, no ``.git``
    on a host that serves a repository with and without it (:data:`ALIASED_GIT_HOSTS`)."""
    match = _SCHEME.match(url)
    if match:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        userinfo, _, host = parts.netloc.rpartition("@")
        # An ssh user name selects an account, not a secret; anything else in userinfo may be.
        user = userinfo.split(":", 1)[0] + "@" if scheme == "ssh" and userinfo else ""
        path = parts.path
        netloc = user + host.lower()
    else:
        scp = _SCP_LIKE.match(url)
        if scp:
            user_host, _, path = url.partition(":")
            user, _, host = user_host.rpartition("@")
            scheme, netloc, path = "ssh", f"{user}@{host.lower()}", "/" + path
        else:
            scheme, netloc, path = "file", "", os.path.abspath(url)
    path = path.rstrip("/")
    if netloc.rpartition("@")[2].split(":", 1)[0] in ALIASED_GIT_HOSTS:
        # These forges serve x and x.git as one repository; elsewhere (a folder, a plain
        # ssh or git server) they are two, and one cache entry served one for the other
        # (sources QA: /srv/git/kb beside /srv/git/kb.git)
        path = path.removesuffix(".git").rstrip("/")
    return urlunsplit((scheme, netloc, path, "", ""))


#: Hosts that serve ``org/repo`` and ``org/repo.git`` as one repository.
ALIASED_GIT_HOSTS = frozenset(
    {"github.com", "www.github.com", "gitlab.com", "bitbucket.org", "codeberg.org"}
)


def credential_identity(url: str) -> str:
    """Whom ``url`` signs in as: its user name and a hash of its password or token (never
    the secret itself), or ``""`` without credentials."""
    match = _SCHEME.match(url)
    netloc = url[match.end() :].split("/", 1)[0] if match else ""
    userinfo, at, _host = netloc.rpartition("@")
    if not at:
        return ""
    user, _, secret = unquote(userinfo).partition(":")
    hashed = hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest() if secret else ""
    return f"{user}\n{hashed}"


def git_cache_key(source: GitSource) -> str:
    """Cache folder name for (repository, ref, credentials): a hash, never URL text, so no
    secret leaks. Credentials are part of it, so a clone made with one user's token is
    never served for a URL with other credentials, or none."""
    identity = "\n".join(
        ("git", normalized_url(source.url), source.ref or "", credential_identity(source.url))
    )
    return hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def git_default_name(source: GitSource) -> str:
    """The subdirectory's last part, else the repository name without ``.git``; for a
    hidden last part (``.okf``), the folder holding it, as for a local folder (sources QA:
    the bundle was named ``.okf``)."""
    if source.subdir:
        subdir = PurePosixPath(source.subdir)
        if not subdir.name.startswith("."):
            return subdir.name
        if subdir.parent.name:
            return subdir.parent.name
        source = GitSource(source.url)
    path = urlsplit(normalized_url(source.url)).path
    name = unquote(path.rsplit("/", 1)[-1]).removeprefix("~").removesuffix(".git")
    return name or "bundle"


def archive_stem(path: Path) -> str:
    """``bundle.tar.gz`` -> ``bundle``."""
    name = path.name
    for suffix in ARCHIVE_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return path.stem or "bundle"


def check_git_url(url: str) -> None:
    """Refuse URLs git would treat as options or as commands to run.

    Raises:
        UnsafeSourceError: if ``url`` is empty, starts with ``-``, holds control characters,
            names a remote helper (``ext::``, ``fd::``) or a scheme other than https, ssh,
            git and file.
    """
    shown = redact(url)
    if not url:
        raise UnsafeSourceError("empty git URL")
    if url.startswith("-"):
        raise UnsafeSourceError(f"refusing git URL {shown!r}: it starts with '-'")
    if _CONTROL.search(url):
        raise UnsafeSourceError(f"refusing git URL {shown!r}: it contains control characters")
    if _REMOTE_HELPER.match(url):
        helper = url.split("::", 1)[0]
        raise UnsafeSourceError(
            f"refusing git URL {shown!r}: the '{helper}::' remote-helper transport is not allowed"
        )
    match = _SCHEME.match(url)
    if match and match.group(1).lower() not in ALLOWED_SCHEMES:
        raise UnsafeSourceError(
            f"refusing git URL {shown!r}: scheme {match.group(1)!r} is not one of "
            f"{', '.join(ALLOWED_SCHEMES)}"
        )


def clean_subdir(subdir: str | None) -> str | None:
    """Normalize a repository subdirectory; ``None`` for the repository root.

    Raises:
        UnsafeSourceError: for an absolute path or a ``..`` component.
    """
    if subdir is None:
        return None
    if "\x00" in subdir:
        raise UnsafeSourceError("refusing subdirectory: it contains a NUL byte")
    pure = PurePosixPath(subdir)
    if pure.is_absolute():
        raise UnsafeSourceError(f"refusing subdirectory {subdir!r}: it is absolute")
    if ".." in pure.parts:
        raise UnsafeSourceError(f"refusing subdirectory {subdir!r}: it contains '..'")
    parts = [part for part in pure.parts if part != "."]
    return "/".join(parts) or None


def web_tree_parts(url: str) -> tuple[str, str, str | None] | None:
    """Split a GitHub ``/tree/`` or GitLab ``/-/tree/`` page URL into (clone URL, ref, subdir).

    A ref containing ``/`` cannot be told apart from the subdirectory in such a URL; the
    first segment is taken as the ref, so pass ``ref=`` and ``subdir=`` explicitly for those.
    """
    page = _web_page(url, "tree")
    if page is None:
        return None
    parts, repo, rest = page
    clone_url = urlunsplit((parts.scheme, parts.netloc, "/" + "/".join(repo), "", ""))
    subdir = "/".join(unquote(segment) for segment in rest[1:]) or None
    return clone_url, unquote(rest[0]), subdir


def _web_page(url: str, kind: str) -> tuple[SplitResult, list[str], list[str]] | None:
    """A GitHub ``/<kind>/`` or GitLab ``/-/<kind>/`` page URL (``tree`` or ``blob``) taken
    apart: the URL's parts, the repository's path segments, and the segments after the
    kind (the ref first, at least one more); None for any other URL."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "https":
        return None
    host = parts.netloc.rpartition("@")[2].lower()
    raw = [segment for segment in parts.path.split("/") if segment]
    if host in ("github.com", "www.github.com"):
        if len(raw) < 4 or raw[2] != kind:
            return None
        return parts, raw[:2], raw[3:]
    # GitLab puts "-" between the (possibly nested) project path and the page kind.
    marker = next((i for i in range(2, len(raw) - 2) if raw[i] == "-" and raw[i + 1] == kind), None)
    if marker is None:
        return None
    return parts, raw[:marker], raw[marker + 2 :]


def fragment_parts(url: str) -> tuple[str, str | None, str | None]:
    """Split ``URL#REF``, ``URL#REF:SUBDIR`` or ``URL#:SUBDIR`` (the form Docker and npm
    take) into (URL, ref, subdir); a URL without ``#`` as it is. A ref may hold ``/``
    (``#release/2026-q1:docs``), never ``:``, which git refuses in a ref name. Platform QA:
    ``kb1.git#dev`` was cloned at the default branch, without a word.

    Raises:
        UnsafeSourceError: a ``ref=``, ``branch=`` or ``tag=`` query, which git would send
            to the server as part of the URL, naming the form to write instead.
    """
    query = urlsplit(url).query
    asked = [part.split("=", 1)[0] for part in query.split("&") if "=" in part]
    if any(key in ("ref", "branch", "tag") for key in asked):
        raise UnsafeSourceError(
            f"a git URL names its branch or tag after '#', not in '?{query}': write "
            "URL#REF, or URL#REF:SUBDIR for a folder in it"
        )
    url, hashed, fragment = url.partition("#")
    if not hashed:
        return url, None, None
    ref, _, subdir = fragment.partition(":")
    return url, unquote(ref) or None, unquote(subdir) or None


def _checked_git(source: GitSource) -> GitSource:
    check_git_url(source.url)
    _refuse_file_page(source.url)
    page = source.url.partition("#")[0]
    # A web page's "#..." is an anchor on that page (GitHub's "#readme"), never a ref.
    url, ref, subdir = (page, None, None) if web_tree_parts(page) else fragment_parts(source.url)
    given_ref = _same_case(source.ref)
    for given, named, what in (
        (given_ref, _same_case(ref), "ref"),
        (source.subdir, subdir, "subdir"),
    ):
        if given is not None and named is not None and given != named:
            raise SourceSpecError(f"{what} {given!r} conflicts with {named!r} in the URL")
    ref, subdir = given_ref or ref, source.subdir or subdir
    tree = web_tree_parts(url)
    if tree is not None:
        url, tree_ref, tree_subdir = tree
        if ref is not None and _same_case(ref) != _same_case(tree_ref):
            raise SourceSpecError(f"ref {ref!r} conflicts with {tree_ref!r} in the URL")
        if subdir is not None and clean_subdir(subdir) != clean_subdir(tree_subdir):
            raise SourceSpecError(f"subdir {subdir!r} conflicts with {tree_subdir!r} in the URL")
        ref, subdir = tree_ref, tree_subdir
    if ref is not None and ref.startswith(("refs/heads/", "refs/tags/")):
        # the form CI passes (GITHUB_REF=refs/heads/main); git clone --branch takes the
        # short name only (sources QA: "branch or tag 'refs/heads/dev' not found")
        ref = ref.split("/", 2)[2] or ref
    if ref is not None and (not ref or ref.startswith("-") or _CONTROL.search(ref) or " " in ref):
        raise UnsafeSourceError(f"refusing ref {ref!r}: not a branch or tag name")
    if ref is not None and is_commit_id(ref):
        ref = ref.lower()  # the form git writes; one pin, one cache entry
    if not _SCHEME.match(url) and not _SCP_LIKE.match(url):
        # A plain local path: pin it, since git would resolve it against its own cwd.
        url = os.path.abspath(url)
    return GitSource(url=url, ref=ref, subdir=clean_subdir(subdir))


def _same_case(ref: str | None) -> str | None:
    """A whole commit id in lower case (the form git writes); any other ref as it is."""
    return ref.lower() if ref is not None and is_commit_id(ref) else ref


def _refuse_file_page(url: str) -> None:
    """A GitHub or GitLab page of one file (``.../blob/<ref>/<path>``) names no folder to
    load: refuse it, naming the folder's page (sources QA: it was cloned as a repository
    that does not exist)."""
    page = _web_page(url.partition("#")[0], "blob")
    if page is None or len(page[2]) < 2:
        return
    parts, repo, rest = page
    host = parts.netloc.rpartition("@")[2].lower()
    tree = ["tree"] if host in ("github.com", "www.github.com") else ["-", "tree"]
    folder = "/".join([*repo, *tree, *rest[:-1]])
    shown = redact(urlunsplit((parts.scheme, parts.netloc, "/" + folder, "", "")))
    raise SourceSpecError(
        f"{redact(url.partition('#')[0])} is the page of one file; a bundle is a folder: "
        f"give its folder's page, e.g. {shown}"
    )


def _local(path: Path) -> ParsedSource:
    lowered = path.name.lower()
    if lowered.endswith(ARCHIVE_SUFFIXES) and not path.is_dir():
        return ArchiveSource(path)
    return LocalDir(path)
