"""Hostile git repositories and archives: only the gaps the source tests leave.

Already covered, not repeated here:

- ``tests/test_sources_spec.py::test_unsafe_specs_are_refused_with_a_value_error``:
  ``ext::``/``fd::`` transports, ``-``/``--upload-pack=`` URLs and refs, bad schemes,
  escaping subdirectories; ``test_redact_hides_url_credentials`` and
  ``test_scrub_also_removes_credentials_git_echoes_without_a_scheme``.
- ``tests/test_sources_git.py``: option-like URLs and ``ext::`` run nothing (marker files),
  git refuses ``ext`` even when the environment allows it, credentials are redacted from
  clone errors, hooks and submodules never run, a symlinked subdir pointing outside is
  refused, git is killed on timeout.
- ``tests/test_sources_archive.py``: zip-slip (``..``, absolute, drive, backslash names),
  symlink/hard-link/device/FIFO entries, duplicates, ratio/size/count bombs, lying headers.
- ``tests/test_sources_bundle.py``: a committed absolute symlink out of the bundle is
  skipped and reported.

Added here: the same refusals through ``Bundle.load`` / ``KnowledgeManager.from_paths``
(the entry points a user calls), credentials in the subdirectory errors, a committed
*relative* symlink from the bundle subdir into the rest of the repository, and archive
entries whose names the filesystem cannot hold or that carry control characters.
"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from hostile import MARKER, assert_bundle_clean, codes, concept, write

from okfx import Bundle, KnowledgeManager
from okfx.sources import ArchiveError, GitSource, UnsafeSourceError
from okfx.sources.git import bundle_root

REAL_GIT = shutil.which("git") or "git"
TOKEN = "s3cr3t-t0ken-9f1"
CREDENTIALED = f"https://alice:{TOKEN}@git.example.org/org/repo.git"


@pytest.mark.parametrize(
    "spec",
    [
        "--upload-pack=touch {marker}",
        "-u touch {marker}",
        "ext::sh -c touch% {marker}",
        "fd::3",
        "ftp://alice:" + TOKEN + "@host/repo.git",
        "http://alice:" + TOKEN + "@host/repo.git",
    ],
)
def test_hostile_sources_are_refused_by_the_public_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "pwned"
    text = spec.replace("{marker}", str(marker))
    for load in (
        lambda: Bundle.load(text, cache_dir=tmp_path / "c"),
        lambda: KnowledgeManager.from_paths([text], cache_dir=tmp_path / "c"),
    ):
        # Bundle.load reads a string without "://" as a folder first, so "ext::..." gets
        # FileNotFoundError there; either way it is refused before anything runs.
        with pytest.raises((UnsafeSourceError, FileNotFoundError)) as caught:
            load()
        assert TOKEN not in str(caught.value)
    assert not marker.exists()
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").rglob("tree"))


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = write(tmp_path / "checkout", {"kb/a.md": concept(), "file.md": concept()})
    (root / "escape").symlink_to(tmp_path)
    return root


@pytest.mark.parametrize(
    ("subdir", "error"),
    [
        ("missing", FileNotFoundError),
        ("file.md", NotADirectoryError),
        ("escape", UnsafeSourceError),
    ],
)
def test_subdirectory_errors_never_show_url_credentials(
    checkout: Path, subdir: str, error: type[Exception]
) -> None:
    with pytest.raises(error) as caught:
        bundle_root(checkout, GitSource(CREDENTIALED, subdir=subdir))
    assert TOKEN not in str(caught.value) and "alice" not in str(caught.value)


def git(*args: str, cwd: Path | None = None) -> None:
    command = [REAL_GIT, "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"]
    subprocess.run([*command, *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty.gitconfig"
    empty.write_text("", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.org")


@pytest.mark.usefixtures("isolated_git")
def test_committed_relative_symlinks_out_of_the_subdir_are_skipped_not_read(
    tmp_path: Path,
) -> None:
    work, bare = tmp_path / "work", tmp_path / "remote.git"
    write(
        work,
        {
            "kb/a.md": concept(body="[leak](leak.md) [up](../private/secret.md)"),
            "kb/sub/b.md": concept(),
            "private/secret.md": concept(title=MARKER, body=MARKER),
            "private/secret.txt": MARKER,
        },
    )
    (work / "kb" / "leak.md").symlink_to("../private/secret.md")
    (work / "kb" / "leak.txt").symlink_to("../private/secret.txt")
    (work / "kb" / "privdir").symlink_to("../private")
    (work / "kb" / "sub" / "deeper.md").symlink_to("../../private/secret.md")
    (work / "kb" / "passwd.txt").symlink_to("/etc/passwd")
    git("init", "-q", str(work))
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "hostile", cwd=work)
    git("clone", "-q", "--bare", str(work), str(bare))
    bundle = Bundle.load(GitSource(bare.as_uri(), subdir="kb"), cache_dir=tmp_path / "c")
    assert [c.path for c in bundle] == ["/a.md", "/sub/b.md"]
    for path in ("/leak.md", "/leak.txt", "/privdir", "/sub/deeper.md", "/passwd.txt"):
        assert codes(bundle, path) == ["unsafe_path"], path
    assert "unsafe_link" in codes(bundle, "/a.md")
    assert_bundle_clean(bundle)


def zip_with(path: Path, name: str) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("kb/index.md", "# KB\n")
        archive.writestr("kb/a.md", concept())
        archive.writestr(name, concept())
    return path


@pytest.mark.parametrize(
    "name", ["kb/" + "a" * 300 + ".md", "kb/" + "d/" * 2_100 + "x.md"], ids=["long-name", "deep"]
)
def test_entries_the_filesystem_cannot_hold_are_refused_as_archive_errors(
    tmp_path: Path, name: str
) -> None:
    with pytest.raises(ArchiveError):
        Bundle.load(zip_with(tmp_path / "a.zip", name), cache_dir=tmp_path / "c")


@pytest.mark.parametrize("name", ["kb/a\nb.md", "kb/a\x1bb.md", "kb/\u202egnp.md"])
def test_odd_entry_names_are_extracted_inside_and_reported_or_loaded(
    tmp_path: Path, name: str
) -> None:
    bundle = Bundle.load(zip_with(tmp_path / "a.zip", name), cache_dir=tmp_path / "c")
    assert "/a.md" in [c.path for c in bundle]
    leaf = "/" + name.split("/", 1)[1]
    # a direction control too: a read of the path refuses it, so it is no concept either
    # (security QA: listed and searchable, never readable)
    assert codes(bundle, leaf) == ["unsafe_path"]
    assert leaf not in [c.path for c in bundle]
    assert not list(tmp_path.glob("a*b.md")) and not (tmp_path / "gnp.md").exists()
