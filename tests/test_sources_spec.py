"""Pure parsing of source specs: URLs, paths, redaction and cache keys (no git, no network)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from okfx.sources import (
    ArchiveSource,
    GitSource,
    LocalDir,
    UnsafeSourceError,
    parse_source,
)
from okfx.sources.spec import (
    archive_stem,
    git_cache_key,
    git_default_name,
    normalized_url,
    redact,
    scrub,
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "https://github.com/org/repo/tree/main/okf/bundle",
            GitSource("https://github.com/org/repo", "main", "okf/bundle"),
        ),
        ("https://github.com/org/repo/tree/v1.2", GitSource("https://github.com/org/repo", "v1.2")),
        ("https://github.com/org/repo", GitSource("https://github.com/org/repo")),
        ("https://github.com/org/repo.git", GitSource("https://github.com/org/repo.git")),
        (
            "https://gitlab.com/group/sub/repo/-/tree/release/docs/okf?ref_type=heads",
            GitSource("https://gitlab.com/group/sub/repo", "release", "docs/okf"),
        ),
        (
            "https://git.example.org/team/repo/-/tree/main",
            GitSource("https://git.example.org/team/repo", "main"),
        ),
        (
            "https://github.com/org/repo/tree/main/with%20space",
            GitSource("https://github.com/org/repo", "main", "with space"),
        ),
        (
            "https://tok@github.com/org/private/tree/main/kb",
            GitSource("https://tok@github.com/org/private", "main", "kb"),
        ),
        (
            "ssh://git@example.org:2222/org/repo.git",
            GitSource("ssh://git@example.org:2222/org/repo.git"),
        ),
        ("git@github.com:org/repo.git", GitSource("git@github.com:org/repo.git")),
        ("git://example.org/repo", GitSource("git://example.org/repo")),
        ("file:///srv/git/repo.git", GitSource("file:///srv/git/repo.git")),
    ],
)
def test_git_urls_parse_into_url_ref_and_subdir(spec: str, expected: GitSource) -> None:
    assert parse_source(spec) == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("https://example.org/kb1.git#dev", GitSource("https://example.org/kb1.git", "dev")),
        (
            "git@host.example:org/kb.git#release/2026-q1:docs/okf",
            GitSource("git@host.example:org/kb.git", "release/2026-q1", "docs/okf"),
        ),
        ("file:///srv/kb.git#:okf/", GitSource("file:///srv/kb.git", None, "okf")),
        ("https://example.org/kb1.git#", GitSource("https://example.org/kb1.git")),
        ("https://github.com/o/r#v1:kb", GitSource("https://github.com/o/r", "v1", "kb")),
    ],
)
def test_a_fragment_names_the_ref_and_subdir(spec: str, expected: GitSource) -> None:
    """Platform QA: ``kb1.git#dev`` served the default branch, without a word."""
    assert parse_source(spec) == expected


@pytest.mark.parametrize("query", ["?ref=dev", "?branch=dev", "?x=1&tag=v1"])
def test_a_ref_in_the_query_is_refused_naming_the_fragment(query: str) -> None:
    with pytest.raises(UnsafeSourceError, match="URL#REF"):
        parse_source(f"https://example.org/kb1.git{query}")


def test_a_fragment_that_contradicts_the_given_ref_is_an_error() -> None:
    with pytest.raises(ValueError, match="conflicts"):
        parse_source(GitSource("https://example.org/kb1.git#dev", ref="main"))
    assert parse_source(GitSource("https://example.org/kb1.git#dev", ref="dev")).ref == "dev"


def test_a_git_source_given_a_tree_url_takes_ref_and_subdir_from_it() -> None:
    parsed = parse_source(GitSource("https://github.com/o/r/tree/dev/kb", subdir="./kb/"))
    assert parsed == GitSource("https://github.com/o/r", "dev", "kb")


def test_a_ref_that_contradicts_the_tree_url_is_an_error() -> None:
    with pytest.raises(ValueError, match="conflicts"):
        parse_source(GitSource("https://github.com/o/r/tree/dev/kb", ref="main"))


def test_a_plain_local_git_source_path_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_source(GitSource("remote.git")) == GitSource(str(tmp_path / "remote.git"))


def test_folders_archives_and_missing_paths_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb.zip").write_bytes(b"")
    (tmp_path / "dir.tar.gz").mkdir()
    assert parse_source(tmp_path / "kb") == LocalDir(tmp_path / "kb")
    assert parse_source(str(tmp_path / "kb.zip")) == ArchiveSource(tmp_path / "kb.zip")
    assert parse_source(tmp_path / "dir.tar.gz") == LocalDir(tmp_path / "dir.tar.gz")
    assert parse_source(tmp_path / "later.TGZ") == ArchiveSource(tmp_path / "later.TGZ")
    assert parse_source(tmp_path / "nothing") == LocalDir(tmp_path / "nothing")


def test_a_local_git_work_tree_is_just_a_folder(tmp_path: Path) -> None:
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "init", "-q", str(tmp_path / "wt")], check=True
    )
    assert parse_source(str(tmp_path / "wt")) == LocalDir(tmp_path / "wt")


@pytest.mark.parametrize(
    "spec",
    [
        "ext::sh -c touch% /tmp/okfx-pwned",
        "fd::3",
        "http://example.org/repo.git",
        "ftp://example.org/repo.git",
        "-uhelp",
        "--upload-pack=touch /tmp/okfx-pwned",
        GitSource("-uhelp"),
        GitSource("--upload-pack=touch /tmp/okfx-pwned"),
        GitSource("ext::sh -c id"),
        GitSource("https://example.org/r\n--upload-pack=x"),
        GitSource("https://example.org/r", ref="--upload-pack=x"),
        GitSource("https://example.org/r", subdir="../outside"),
        GitSource("https://example.org/r", subdir="kb/../../outside"),
        GitSource("https://example.org/r", subdir="/etc"),
    ],
)
def test_unsafe_specs_are_refused_with_a_value_error(spec: str | GitSource) -> None:
    with pytest.raises(UnsafeSourceError):
        parse_source(spec)


def test_an_existing_folder_whose_name_starts_with_a_dash_is_still_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-kb").mkdir()
    assert parse_source("-kb") == LocalDir(Path("-kb"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://user:token@host/x", "https://***@host/x"),
        ("https://token@host/x", "https://***@host/x"),
        ("https://u:p@ss@host/x and ssh://git@h/r", "https://***@host/x and ssh://***@h/r"),
        ("fatal: 'https://a:b@h/r.git/' not found", "fatal: 'https://***@h/r.git/' not found"),
        ("https://host/path@v1", "https://host/path@v1"),
    ],
)
def test_redact_hides_url_credentials(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_scrub_also_removes_credentials_git_echoes_without_a_scheme() -> None:
    url = "git://alice:p%40ss@host/r.git"
    text = "unable to look up alice:p@ss@host and alice:p%40ss@host"
    cleaned = scrub(text, url)
    assert "p@ss" not in cleaned and "p%40ss" not in cleaned and "alice" not in cleaned


def test_git_source_repr_does_not_show_the_token() -> None:
    assert "tok3n" not in repr(GitSource("https://x:tok3n@github.com/o/r"))


def test_cache_key_ignores_case_and_dot_git_but_not_the_ref_or_the_credentials() -> None:
    plain = git_cache_key(GitSource("https://github.com/org/repo"))
    assert git_cache_key(GitSource("https://GitHub.com/org/repo.git/")) == plain
    signed = git_cache_key(GitSource("https://u:tok@github.com/org/repo"))
    assert git_cache_key(GitSource("https://u:tok@GitHub.com/org/repo.git/")) == signed
    assert signed != plain  # one user's clone is never served to another (issue 16)
    assert git_cache_key(GitSource("https://github.com/org/repo", ref="dev")) != plain
    assert git_cache_key(GitSource("https://github.com/org/other")) != plain
    assert "github" not in plain and len(plain) == 32


def test_normalized_url_keeps_the_ssh_user_but_not_a_password() -> None:
    assert normalized_url("ssh://git:pw@Host/org/repo.git") == "ssh://git@host/org/repo.git"
    assert normalized_url("git@Host:org/repo.git") == "ssh://git@host/org/repo.git"
    assert normalized_url("git@GitHub.com:org/repo.git") == "ssh://git@github.com/org/repo"


@pytest.mark.parametrize(
    ("source", "name"),
    [
        (GitSource("https://github.com/org/repo.git"), "repo"),
        (GitSource("git@github.com:org/kb.git", subdir="okf/sales"), "sales"),
        (GitSource("file:///srv/git/remote.git/"), "remote"),
    ],
)
def test_default_name_is_subdir_tail_else_repository_name(source: GitSource, name: str) -> None:
    assert git_default_name(source) == name


@pytest.mark.parametrize(
    ("file", "stem"),
    [("kb.tar.gz", "kb"), ("kb.TGZ", "kb"), ("kb.v2.zip", "kb.v2"), ("kb.tar.xz", "kb")],
)
def test_archive_stem_drops_the_whole_archive_suffix(file: str, stem: str) -> None:
    assert archive_stem(Path(file)) == stem


def test_a_copied_page_address_reads_as_its_folder_or_names_the_folder_to_give() -> None:
    """Sources QA: a tree page copied with its anchor (``#readme``) read the anchor as a
    second ref; a file's page was cloned as a repository; an upper-case commit id given
    beside a tree URL's lower-case one was a conflict (and exit 1, not 2)."""
    from okfx.sources import SourceSpecError

    sha = "d6e8500ed2b480c29c102f0c91e51cb3b258d8d4"
    tree = f"https://github.com/org/kb/tree/{sha}/catalog/cli"
    expected = GitSource("https://github.com/org/kb", ref=sha, subdir="catalog/cli")
    assert parse_source(f"{tree}#readme") == expected
    assert parse_source(GitSource(tree, ref=sha.upper())) == expected
    with pytest.raises(SourceSpecError) as page:
        parse_source(f"https://tok:en@github.com/org/kb/blob/{sha}/catalog/cli/index.md#L3")
    assert str(page.value) == (
        f"https://***@github.com/org/kb/blob/{sha}/catalog/cli/index.md is the page of one "
        f"file; a bundle is a folder: give its folder's page, e.g. "
        f"https://***@github.com/org/kb/tree/{sha}/catalog/cli"
    )
    with pytest.raises(SourceSpecError, match=r"/-/tree/main/okf"):
        parse_source("https://gitlab.example.org/g/sub/kb/-/blob/main/okf/a.md")
    with pytest.raises(SourceSpecError, match="conflicts"):
        parse_source(GitSource(tree, ref="main"))


def test_a_scheme_in_capitals_is_handed_to_git_in_lower_case() -> None:
    """Sources QA: "HTTPS://" and "FILE://" passed okfx's checks, then git refused
    "transport 'HTTPS' not allowed"; the rest of the URL keeps its letters."""
    found = parse_source("HTTPS://Example.com/Org/Repo.git#v1:okf")
    assert isinstance(found, GitSource)
    assert (found.url, found.ref, found.subdir) == ("https://Example.com/Org/Repo.git", "v1", "okf")
    assert parse_source("File:///tmp/x.git").url == "file:///tmp/x.git"


def test_a_repository_and_its_dot_git_twin_are_two_unless_a_forge_aliases_them() -> None:
    """Sources QA: /srv/git/kb and /srv/git/kb.git shared one cache entry, so one
    repository's files were served under the other's URL."""
    from okfx.sources.spec import normalized_url

    assert normalized_url("file:///srv/git/kb") != normalized_url("file:///srv/git/kb.git")
    assert normalized_url("ssh://git@host/o/r") != normalized_url("ssh://git@host/o/r.git")
    assert normalized_url("https://github.com/o/r") == normalized_url("https://GitHub.com/o/r.git/")
    assert normalized_url("git@gitlab.com:o/r.git") == normalized_url("git@gitlab.com:o/r")
