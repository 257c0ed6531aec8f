"""The source cache trusts nothing it did not make.

What is in the cache is served as the source it came from, under that source's name and
provenance (issue 16). So the cache lives in the user's own cache folder, not the working
folder; a cache folder others could write to or redirect is refused; an entry, tree or
metadata file that is a symlink or another user's is rebuilt, never read; a planted lock
symlink makes okfx refuse, not create a file where it points; and a clone made with one
user's credentials is never served for a URL with other credentials.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest
from hostile import MARKER, assert_bundle_clean, concept, within, write

from okfx import Bundle
from okfx.errors import UnsafeCacheDir
from okfx.sources import ArchiveError, GitSource, open_source
from okfx.sources.cache import Slot, default_cache_dir, resolve_cache_dir
from okfx.sources.spec import git_cache_key


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    path = tmp_path / "kb.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("kb/a.md", concept(title="inside", body="inside"))
    return path


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A private folder of the user running okfx, which no bundle should serve."""
    return write(tmp_path / "private", {"kb/a.md": concept(title=MARKER, body=MARKER)})


def _slot(cache: Path, archive: Path) -> Slot:
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    return Slot(cache, "archive", digest)


def test_the_default_cache_is_the_user_cache_folder_not_the_working_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, archive: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / "sources"
    with open_source(archive) as (root, _):
        assert root.is_relative_to(tmp_path / "home" / "sources")
    assert not (tmp_path / ".okfx_cache").exists()
    assert (tmp_path / "home" / "sources").stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("OKFX_CACHE_DIR", str(tmp_path / "env"))
    assert resolve_cache_dir(None) == tmp_path / "env"
    assert resolve_cache_dir(tmp_path / "arg") == tmp_path / "arg"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="needs user ids")
@pytest.mark.parametrize("where", ["cache", "parent"])
def test_a_cache_folder_others_can_write_is_refused(
    tmp_path: Path, archive: Path, where: str
) -> None:
    shared = tmp_path / "shared"
    cache = shared / "cache"
    cache.mkdir(parents=True)
    os.chmod(cache if where == "cache" else shared, 0o777)  # no sticky bit
    with pytest.raises(UnsafeCacheDir, match="writable by other users"):
        with open_source(archive, cache_dir=cache):
            pass
    with pytest.raises(UnsafeCacheDir):
        Bundle.load(archive, cache_dir=cache)


def test_a_symlinked_cache_area_is_refused(tmp_path: Path, archive: Path, victim: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "archive").symlink_to(victim)
    with pytest.raises(UnsafeCacheDir, match="symlink"):
        with open_source(archive, cache_dir=cache):
            pass


def test_an_entry_whose_tree_is_a_symlink_is_rebuilt_not_served(
    tmp_path: Path, archive: Path, victim: Path
) -> None:
    cache = tmp_path / "cache"
    with open_source(archive, cache_dir=cache):
        pass
    slot = _slot(cache, archive)
    shutil.rmtree(slot.tree)
    slot.tree.symlink_to(victim)  # the metadata still says "complete"
    bundle = Bundle.load(archive, cache_dir=cache)
    assert_bundle_clean(bundle)
    assert bundle.concept("a").title == "inside"
    assert not slot.tree.is_symlink()
    assert (victim / "kb" / "a.md").is_file()  # retiring the link left its target alone


def test_an_entry_folder_that_is_a_symlink_is_rebuilt_not_served(
    tmp_path: Path, archive: Path
) -> None:
    cache = tmp_path / "cache"
    slot = _slot(cache, archive)
    planted = write(tmp_path / "planted", {"tree/kb/a.md": concept(title=MARKER, body=MARKER)})
    (planted / "okfx-source.json").write_text(
        json.dumps({"format": 1, "complete": True, "kind": "archive"}), encoding="utf-8"
    )
    slot.final.symlink_to(planted)
    bundle = Bundle.load(archive, cache_dir=cache)
    assert_bundle_clean(bundle)
    assert bundle.concept("a").title == "inside"


def test_a_planted_lock_symlink_is_refused_and_creates_nothing(
    tmp_path: Path, archive: Path, victim: Path
) -> None:
    cache = tmp_path / "cache"
    slot = _slot(cache, archive)
    target = victim / "created-by-okfx"
    slot.lock_path.symlink_to(target)
    with pytest.raises(UnsafeCacheDir, match="lock file"):
        with open_source(archive, cache_dir=cache):
            pass
    assert not target.exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_an_entry_another_user_made_is_rebuilt(tmp_path: Path, archive: Path) -> None:
    cache = tmp_path / "cache"
    with open_source(archive, cache_dir=cache):
        pass
    slot = _slot(cache, archive)
    (slot.tree / "kb" / "a.md").write_text(concept(title=MARKER, body=MARKER), encoding="utf-8")
    for path in (slot.final, slot.tree, slot.final / "okfx-source.json"):
        os.chown(path, 65534, 65534, follow_symlinks=False)  # "nobody"
    bundle = Bundle.load(archive, cache_dir=cache)
    assert_bundle_clean(bundle)
    assert os.stat(slot.final).st_uid == os.getuid()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://alice:t1@h.example/r.git", "https://bob:t2@h.example/r.git"),
        ("https://alice:t1@h.example/r.git", "https://alice:t2@h.example/r.git"),
        ("https://alice:t1@h.example/r.git", "https://h.example/r.git"),
        ("https://t0k3n@h.example/r.git", "https://h.example/r.git"),
    ],
)
def test_credentials_are_part_of_the_git_cache_key(a: str, b: str) -> None:
    assert git_cache_key(GitSource(a)) != git_cache_key(GitSource(b))
    same = a.replace("h.example/r.git", "H.EXAMPLE/r.git/")  # the same repository, written so
    assert git_cache_key(GitSource(a)) == git_cache_key(GitSource(same))


def test_a_fifo_given_as_an_archive_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "kb.zip"
    os.mkfifo(fifo)
    for load in (
        lambda: open_source(fifo, cache_dir=tmp_path / "c").__enter__(),
        lambda: Bundle.load(fifo, cache_dir=tmp_path / "c"),
    ):
        with pytest.raises(ArchiveError, match="not a regular file"):
            within(20, load, unblock=[fifo])
