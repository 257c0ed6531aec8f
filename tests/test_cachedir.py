"""The cache folder check: private folders pass, anything another user could change fails."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from okfx.cachedir import CACHE_ROOT_ENV, private_dir, user_cache_root
from okfx.errors import UnsafeCacheDir

posix_only = pytest.mark.skipif(not hasattr(os, "getuid"), reason="needs POSIX user ids")


def test_a_new_cache_folder_is_created_private_with_its_parents(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o700)
    folder = private_dir(tmp_path / "a" / "b" / "okfx")
    assert folder.is_dir()
    for part in (tmp_path / "a", tmp_path / "a" / "b", folder):
        assert stat.S_IMODE(os.stat(part).st_mode) == 0o700


def test_an_existing_private_folder_is_accepted(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o700)
    (tmp_path / "c").mkdir(mode=0o700)
    assert private_dir(tmp_path / "c", create=False) == tmp_path / "c"


@posix_only
def test_a_folder_writable_by_others_is_refused(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o700)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(UnsafeCacheDir, match="writable by other users"):
        private_dir(shared)


@posix_only
def test_a_parent_writable_by_others_without_sticky_bit_is_refused(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o700)
    parent = tmp_path / "open"
    parent.mkdir()
    os.chmod(parent, 0o777)
    with pytest.raises(UnsafeCacheDir, match="open is writable by other users"):
        private_dir(parent / "cache" / "okfx")
    # refused before anything is made in it (platform QA: a 0700 subfolder was left)
    assert list(parent.iterdir()) == []


@posix_only
def test_a_sticky_shared_parent_is_fine_for_a_folder_we_own(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o700)
    parent = tmp_path / "tmp"
    parent.mkdir()
    os.chmod(parent, 0o1777)
    assert private_dir(parent / "cache").is_dir()


def test_a_symlinked_cache_folder_is_refused(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o700)
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(UnsafeCacheDir, match="is a symlink"):
        private_dir(tmp_path / "link")


@posix_only
def test_a_symlinked_parent_into_a_shared_folder_is_refused(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o700)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    (tmp_path / "home").symlink_to(shared)
    with pytest.raises(UnsafeCacheDir, match="writable by other users"):
        private_dir(tmp_path / "home" / "cache")


def test_a_file_in_place_of_the_folder_is_refused(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o700)
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(UnsafeCacheDir):
        private_dir(tmp_path / "f")


def test_a_missing_folder_is_refused_when_not_created(tmp_path: Path) -> None:
    with pytest.raises(UnsafeCacheDir, match="cannot be read"):
        private_dir(tmp_path / "missing", create=False)


def test_the_message_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(UnsafeCacheDir) as info:
        private_dir(tmp_path / "f")
    assert CACHE_ROOT_ENV in info.value.message and info.value.code == "unsafe_cache_dir"


def test_the_cache_root_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ROOT_ENV, str(tmp_path / "mine"))
    assert user_cache_root() == tmp_path / "mine"
    monkeypatch.delenv(CACHE_ROOT_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.name == "posix" and os.uname().sysname == "Linux":
        assert user_cache_root() == tmp_path / "xdg" / "okfx"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    if os.name == "posix" and os.uname().sysname == "Linux":
        assert user_cache_root() == Path.home() / ".cache" / "okfx"


@posix_only
def test_a_refused_sources_cache_names_the_setting_that_chose_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Sources QA: a folder from $OKFX_CACHE_DIR was refused with advice to set
    $OKFX_CACHE_HOME (which it overrides) or turn the state cache off (which does not
    apply to clones)."""
    from okfx.sources.cache import resolve_cache_dir
    from okfx.statecache import StateCache

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("OKFX_CACHE_DIR", str(shared))
    with pytest.raises(UnsafeCacheDir) as from_env:
        resolve_cache_dir(None)
    said = from_env.value.message
    assert said.endswith("Set $OKFX_CACHE_DIR to a folder that only you can write, or unset it.")
    assert "OKFX_STATE_CACHE" not in said
    with pytest.raises(UnsafeCacheDir) as given:
        resolve_cache_dir(shared)
    assert given.value.message.endswith("Pass a cache folder that only you can write.")
    # the state cache keeps its own way out
    assert StateCache(shared).usable() is None
    assert "turned off (OKFX_STATE_CACHE=off). Loading without the state cache." in caplog.text
