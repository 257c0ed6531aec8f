"""Git sources against real local repositories: cloning, the cache, errors and hardening.

Every repository is made in ``tmp_path`` with the real git binary and read through ``file://``
URLs. A wrapper script placed first on PATH logs each git command the library runs, so tests
can count clones.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from okfx.sources import GitError, GitSource, UnsafeSourceError, open_source, parse_source
from okfx.sources.git import run_git
from okfx.sources.spec import git_cache_key

REAL_GIT = shutil.which("git") or "git"


def git(*args: str, cwd: Path | None = None) -> str:
    command = [REAL_GIT, "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"]
    done = subprocess.run([*command, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def tree(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@dataclass
class Remote:
    work: Path
    bare: Path

    @property
    def url(self) -> str:
        return self.bare.as_uri()

    def commit(self, files: dict[str, str], message: str = "change", branch: str = "main") -> str:
        git("checkout", "-q", branch, cwd=self.work)
        write(self.work, files)
        git("add", "-A", cwd=self.work)
        git("commit", "-q", "-m", message, cwd=self.work)
        git("push", "-q", str(self.bare), branch, cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work).strip()


MAIN_FILES = {
    "README.md": "# repo\n",
    "okf/sales/index.md": "# Sales\n",
    "okf/sales/metrics/revenue.md": "---\ntype: Metric\n---\nRevenue.\n",
}


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Identity by env and an empty global config, so no developer setting leaks in."""
    empty = tmp_path / "empty.gitconfig"
    empty.write_text("", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.org")
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def remote(tmp_path: Path) -> Remote:
    work, bare = tmp_path / "work", tmp_path / "remote.git"
    git("init", "-q", str(work))
    write(work, MAIN_FILES)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "first", cwd=work)
    git("tag", "v1", cwd=work)
    git("checkout", "-q", "-b", "dev", cwd=work)
    write(work, {"okf/sales/dev-only.md": "dev\n"})
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "dev work", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    git("clone", "-q", "--bare", str(work), str(bare))
    git("push", "-q", str(bare), "dev", "v1", cwd=work)
    return Remote(work, bare)


@pytest.fixture
def git_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a logging ``git`` wrapper first on PATH; returns the log file."""
    bin_dir, log = tmp_path / "bin", tmp_path / "git.log"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{REAL_GIT}" "$@"\n', encoding="utf-8"
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    log.write_text("", encoding="utf-8")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def clones(log: Path) -> int:
    return sum(" clone " in line for line in log.read_text(encoding="utf-8").splitlines())


def test_file_url_clone_yields_the_default_branch_named_after_the_repo(
    remote: Remote, tmp_path: Path
) -> None:
    with open_source(remote.url, cache_dir=tmp_path / "cache") as (root, name):
        assert tree(root) == MAIN_FILES
        assert name == "remote"
        assert root.is_relative_to(tmp_path / "cache")


def test_cache_defaults_to_the_user_cache_folder_unless_env_says_otherwise(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path / "home-cache"))
    with open_source(remote.url) as (root, _):
        assert root.is_relative_to(tmp_path / "home-cache" / "sources")
    assert not (tmp_path / ".okfx_cache").exists()  # never the working folder
    monkeypatch.setenv("OKFX_CACHE_DIR", str(tmp_path / "env-cache"))
    with open_source(remote.url) as (root, _):
        assert root.is_relative_to(tmp_path / "env-cache")
    assert (tmp_path / "env-cache" / "CACHEDIR.TAG").is_file()


def test_branch_and_subdir_select_files_and_name_the_bundle_after_the_subdir(
    remote: Remote, tmp_path: Path
) -> None:
    source = GitSource(remote.url, ref="dev", subdir="okf/sales")
    with open_source(source, cache_dir=tmp_path / "cache") as (root, name):
        assert name == "sales"
        assert sorted(tree(root)) == ["dev-only.md", "index.md", "metrics/revenue.md"]


def test_a_url_fragment_clones_its_ref_and_reads_its_subdir(remote: Remote, tmp_path: Path) -> None:
    with open_source(f"{remote.url}#dev:okf/sales", cache_dir=tmp_path / "cache") as (root, name):
        by_fragment = tree(root)
    with open_source(
        GitSource(remote.url, ref="dev", subdir="okf/sales"), cache_dir=tmp_path / "c2"
    ) as (
        root,
        _,
    ):
        assert by_fragment == tree(root) and name == "sales"
    with open_source(remote.url, cache_dir=tmp_path / "c3") as (root, _):
        assert tree(root / "okf" / "sales") != by_fragment  # the default branch differs


def test_a_tag_ref_checks_out_the_tagged_commit(remote: Remote, tmp_path: Path) -> None:
    remote.commit({"okf/sales/new.md": "new\n"})
    with open_source(GitSource(remote.url, ref="v1"), cache_dir=tmp_path / "c") as (root, _):
        assert tree(root) == MAIN_FILES


def test_without_a_ref_the_remote_default_branch_is_used(remote: Remote, tmp_path: Path) -> None:
    git("symbolic-ref", "HEAD", "refs/heads/dev", cwd=remote.bare)
    with open_source(remote.url, cache_dir=tmp_path / "cache") as (root, _):
        assert "okf/sales/dev-only.md" in tree(root)


def test_a_plain_local_path_git_source_clones_too(remote: Remote, tmp_path: Path) -> None:
    with open_source(GitSource(str(remote.bare)), cache_dir=tmp_path / "c") as (root, name):
        assert tree(root) == MAIN_FILES and name == "remote"


def test_second_open_reuses_the_cache_without_cloning(
    remote: Remote, tmp_path: Path, git_log: Path
) -> None:
    with open_source(remote.url, cache_dir=tmp_path / "cache") as (first, _):
        inode = first.stat().st_ino
    with open_source(remote.url, cache_dir=tmp_path / "cache") as (second, _):
        assert second == first and second.stat().st_ino == inode
    assert clones(git_log) == 1
    # The cache folder is named by a hash, never by URL text.
    assert (tmp_path / "cache" / "git" / git_cache_key(parse_source(remote.url))).is_dir()  # type: ignore[arg-type]


def test_refresh_picks_up_a_new_commit_and_plain_open_does_not(
    remote: Remote, tmp_path: Path, git_log: Path
) -> None:
    cache = tmp_path / "cache"
    with open_source(remote.url, cache_dir=cache) as (root, _):
        assert "okf/sales/new.md" not in tree(root)
    remote.commit({"okf/sales/new.md": "new\n"})
    with open_source(remote.url, cache_dir=cache) as (root, _):
        assert "okf/sales/new.md" not in tree(root)
    with open_source(remote.url, cache_dir=cache, refresh=True) as (root, _):
        assert tree(root)["okf/sales/new.md"] == "new\n"
    with open_source(remote.url, cache_dir=cache) as (root, _):
        assert "okf/sales/new.md" in tree(root)
    assert clones(git_log) == 2
    assert (
        sorted(p.name for p in (cache / "git").iterdir() if ".tmp-" in p.name or ".old-" in p.name)
        == []
    )


def test_a_failed_refresh_keeps_the_cached_tree(remote: Remote, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with open_source(remote.url, cache_dir=cache):
        pass
    shutil.rmtree(remote.bare)
    with pytest.raises(GitError):
        with open_source(remote.url, cache_dir=cache, refresh=True):
            pass
    with open_source(remote.url, cache_dir=cache) as (root, _):
        assert tree(root) == MAIN_FILES


def test_a_missing_subdir_raises_file_not_found(remote: Remote, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope"):
        with open_source(GitSource(remote.url, subdir="nope"), cache_dir=tmp_path / "c"):
            pass


def test_an_unknown_branch_raises_git_error_with_gits_reason(
    remote: Remote, tmp_path: Path
) -> None:
    with pytest.raises(GitError, match="no-such-branch"):
        with open_source(GitSource(remote.url, ref="no-such-branch"), cache_dir=tmp_path / "c"):
            pass
    assert [p for p in (tmp_path / "c" / "git").iterdir() if not p.name.endswith(".lock")] == []


def test_a_committed_symlink_subdir_pointing_outside_is_refused(
    remote: Remote, tmp_path: Path
) -> None:
    (remote.work / "escape").symlink_to("../../..")
    (remote.work / "abs").symlink_to("/etc")
    remote.commit({}, "links")
    for subdir in ("escape", "abs", "abs/ssl"):
        with pytest.raises(UnsafeSourceError, match="outside the repository"):
            with open_source(GitSource(remote.url, subdir=subdir), cache_dir=tmp_path / "c"):
                pass


def test_dotdot_and_absolute_subdirs_are_refused_before_git_runs(
    remote: Remote, tmp_path: Path, git_log: Path
) -> None:
    for subdir in ("../work", "/etc", "okf/../../x"):
        with pytest.raises(ValueError):
            with open_source(GitSource(remote.url, subdir=subdir), cache_dir=tmp_path / "c"):
                pass
    assert clones(git_log) == 0


def test_a_missing_git_binary_raises_runtime_error(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "no-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    with pytest.raises(RuntimeError, match="git executable 'git' not found"):
        with open_source(remote.url, cache_dir=tmp_path / "c"):
            pass


@pytest.mark.parametrize("url", ["-uhelp", "--upload-pack=touch {marker}", "-c core.x=y"])
def test_option_like_urls_are_refused_and_nothing_runs(
    url: str, tmp_path: Path, git_log: Path
) -> None:
    marker = tmp_path / "marker"
    with pytest.raises(ValueError, match="starts with '-'"):
        with open_source(GitSource(url.format(marker=marker)), cache_dir=tmp_path / "c"):
            pass
    assert not marker.exists() and clones(git_log) == 0


def test_ext_transport_is_refused_before_git_and_nothing_runs(
    tmp_path: Path, git_log: Path
) -> None:
    marker = tmp_path / "pwned"
    with pytest.raises(UnsafeSourceError, match="ext::"):
        with open_source(f"ext::sh -c touch% {marker}", cache_dir=tmp_path / "c"):
            pass
    assert not marker.exists() and git_log.read_text(encoding="utf-8") == ""


def test_git_itself_refuses_ext_even_when_the_environment_allows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both variables would make a plain git run the command; the library overrides them.
    marker = tmp_path / "pwned"
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "ext:file")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.ext.allow")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "always")
    with pytest.raises(GitError, match="not allowed|unsupported"):
        run_git(["clone", "--", f"ext::sh -c touch% {marker}", str(tmp_path / "d")], timeout=20)
    assert not marker.exists()


def test_credentials_are_redacted_from_clone_errors(tmp_path: Path) -> None:
    # git echoes this URL's userinfo without a scheme ("unable to look up alice:...").
    url = "git://alice:s3cr3t-t0ken@127.0.0.1:1/org/repo.git"
    with pytest.raises(GitError) as caught:
        with open_source(url, cache_dir=tmp_path / "c", timeout=20):
            pass
    message = str(caught.value)
    assert "s3cr3t-t0ken" not in message and "alice" not in message
    assert "git://***@127.0.0.1:1/org/repo.git" in message


def test_hooks_from_the_users_config_do_not_run(remote: Remote, tmp_path: Path) -> None:
    hooks, marker = tmp_path / "hooks", tmp_path / "hook-ran"
    hooks.mkdir()
    hook = hooks / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n", encoding="utf-8")
    hook.chmod(0o755)
    (tmp_path / "empty.gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n", encoding="utf-8")
    git("clone", "-q", remote.url, str(tmp_path / "control"))
    assert marker.exists(), "the hook should run for a plain git clone"
    marker.unlink()
    with open_source(remote.url, cache_dir=tmp_path / "c") as (root, _):
        assert tree(root) == MAIN_FILES
    assert not marker.exists()


def test_submodules_are_not_fetched(remote: Remote, tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    git("init", "-q", str(sub))
    write(sub, {"secret.md": "from submodule\n"})
    git("add", "-A", cwd=sub)
    git("commit", "-q", "-m", "sub", cwd=sub)
    git("submodule", "add", "-q", sub.as_uri(), "okf/sales/vendored", cwd=remote.work)
    remote.commit({}, "add submodule")
    with open_source(remote.url, cache_dir=tmp_path / "c") as (root, _):
        assert (root / "okf/sales/vendored").is_dir()
        assert list((root / "okf/sales/vendored").iterdir()) == []


def test_a_git_command_past_the_timeout_is_killed_with_its_children(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake git starts a child the way git starts remote helpers, then hangs waiting.
    bin_dir, pid_file = tmp_path / "slow-bin", tmp_path / "child.pid"
    bin_dir.mkdir()
    script = f"#!/bin/sh\nsleep 60 >/dev/null 2>&1 &\necho $! > '{pid_file}'\nwait\n"
    (bin_dir / "git").write_text(script, encoding="utf-8")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(TimeoutError, match="did not finish within 1.0s"):
        with open_source(remote.url, cache_dir=tmp_path / "c", timeout=1.0):
            pass
    try:
        child = os.pidfd_open(int(pid_file.read_text(encoding="utf-8")))
    except ProcessLookupError:
        return  # already gone and reaped
    try:
        # A pidfd turns readable when its process exits: an event, not a polling loop.
        readable, _, _ = select.select([child], [], [], 5)
    finally:
        os.close(child)
    assert readable, "the grandchild of the timed-out git command is still running"


def test_the_cli_refreshes_a_clone_and_clears_fetched_sources(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Platform QA: a new commit stayed invisible to one-shot commands, and okfx cache
    clear left every clone in place."""
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path / "home"))
    source = f"{remote.url}#main:okf/sales"
    run = CliRunner().invoke
    first = run(cli, ["search", source, "quokka", "--json"])
    assert first.exit_code == 0 and json.loads(first.stdout)["hits"] == []
    remote.commit({"okf/sales/quokka.md": "---\ntype: Note\n---\nQuokka.\n"})
    stale = json.loads(run(cli, ["search", source, "quokka", "--json"]).stdout)
    assert stale["hits"] == []  # the cached clone, as documented
    fresh = json.loads(run(cli, ["search", source, "quokka", "--json", "--refresh"]).stdout)
    assert [hit["path"] for hit in fresh["hits"]] == ["/quokka.md"]
    cleared = run(cli, ["cache", "clear", "--sources"])
    assert cleared.exit_code == 0 and "removed 1 fetched sources" in cleared.output
    assert not any((tmp_path / "home" / "sources" / "git").glob("*/tree"))


def test_a_missing_repository_or_branch_is_said_in_one_line(remote: Remote, tmp_path: Path) -> None:
    """Platform QA: git's own lines came through whole (the cache's temp path, its advice
    paragraph), and a missing ref and a missing subdirectory gave different codes."""
    from okfx.sources import GitNotFound

    cache = tmp_path / "cache"
    with pytest.raises(GitNotFound) as missing:
        with open_source((tmp_path / "nope.git").as_uri(), cache_dir=cache):
            pass
    assert str(missing.value) == (
        f"repository {(tmp_path / 'nope.git').as_uri()} not found, or this machine has no "
        "access to it"
    )
    with pytest.raises(GitNotFound) as branch:
        with open_source(f"{remote.url}#team/x:okf", cache_dir=cache):
            pass
    said = str(branch.value)
    assert said.startswith("branch or tag 'team/x' not found in ") and "\n" not in said
    assert ".tmp-" not in said and "Please make sure" not in said


def test_a_missing_ref_or_folder_says_what_to_write_instead(remote: Remote, tmp_path: Path) -> None:
    """Sources QA: `#HEAD`, `#dev~1` and a folder written where the ref goes all got the
    one hint about '/' in branch names; a missing folder listed no folders."""
    from okfx.sources import GitNotFound

    cache, url = tmp_path / "cache", remote.url

    def said(spec: str) -> str:
        with pytest.raises((GitNotFound, FileNotFoundError)) as failed:
            with open_source(spec, cache_dir=cache):
                pass
        assert "\n" not in str(failed.value)
        return str(failed.value)

    assert said(f"{url}#HEAD:okf").endswith(
        f"(for the default branch, leave the ref out: {url}#:okf)"
    )
    assert "not a revision expression" in said(f"{url}#dev~1:okf")
    assert said(f"{url}#okf").endswith(
        f"(a folder is written after ':', as {url}#:okf or {url}#BRANCH:okf)"
    )
    missing = said(f"{url}#:okf/Sales")
    assert missing.endswith("(the folders of okf/: sales); did you mean 'sales'?"), missing
    assert said(f"{url}#:docs").endswith("(its folders: okf)")  # .git is never listed


def test_a_file_url_of_an_archive_or_a_folder_in_a_repo_says_what_it_names(
    remote: Remote, tmp_path: Path
) -> None:
    """Sources QA: "fatal: invalid gitfile format" for an archive's file:// URL, and "not
    found" for a folder of a work tree."""
    from okfx.sources import GitNotFound

    archive = tmp_path / "kb.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    with pytest.raises(GitNotFound) as file_url:
        with open_source(archive.as_uri(), cache_dir=tmp_path / "c"):
            pass
    assert str(file_url.value) == (
        f"{archive.as_uri()} is a file, not a git repository: an archive is loaded by its "
        "path, without file://"
    )
    inside = (remote.work / "okf").as_uri()
    with pytest.raises(GitNotFound) as folder:
        with open_source(f"{inside}#main:sales", cache_dir=tmp_path / "c"):
            pass
    assert str(folder.value).endswith(f"write {remote.work.as_uri()}#main:okf/sales")


def test_a_hidden_subdir_is_named_by_the_folder_or_repository_holding_it() -> None:
    """Sources QA: `repo#:.okf` was a bundle named `.okf`."""
    from okfx.sources.spec import git_default_name

    assert git_default_name(parse_source("file:///srv/git/nhis.git#:.okf")) == "nhis"
    assert git_default_name(parse_source("file:///srv/git/kb#main:docs/.okf")) == "docs"
    assert git_default_name(parse_source("file:///srv/git/kb#:docs/okf")) == "okf"


def test_a_full_ref_name_as_ci_passes_it_is_its_short_name(remote: Remote, tmp_path: Path) -> None:
    """Sources QA: GITHUB_REF=refs/heads/main was "not found"."""
    assert parse_source(f"{remote.url}#refs/heads/dev:okf").ref == "dev"
    assert parse_source(f"{remote.url}#refs/tags/v1").ref == "v1"
    with open_source(f"{remote.url}#refs/heads/dev:okf/sales", cache_dir=tmp_path / "c") as (
        root,
        _,
    ):
        assert (root / "dev-only.md").is_file()


def test_a_subdir_inside_a_submodule_is_named_as_such(remote: Remote, tmp_path: Path) -> None:
    remote.commit({".gitmodules": '[submodule "kb"]\n\tpath = vendor/kb\n\turl = ../kb.git\n'})
    with pytest.raises(FileNotFoundError, match="in the git submodule 'vendor/kb'"):
        with open_source(f"{remote.url}#:vendor/kb/okf", cache_dir=tmp_path / "cache"):
            pass


def test_a_whole_commit_id_pins_the_source_and_a_refresh_leaves_it(
    remote: Remote, tmp_path: Path, git_log: Path
) -> None:
    """Platform QA: a commit could not be pinned (``--branch`` takes branches and tags), so
    a GitHub permalink's ``tree/<commit>/...`` failed as a missing branch."""
    first = git("rev-parse", "HEAD", cwd=remote.work).strip()
    remote.commit({"okf/sales/new.md": "new\n"})
    cache = tmp_path / "cache"
    with open_source(f"{remote.url}#{first.upper()}:okf/sales", cache_dir=cache) as (root, name):
        assert (
            tree(root)
            == {
                "index.md": "# Sales\n",
                "metrics/revenue.md": MAIN_FILES["okf/sales/metrics/revenue.md"],
            }
            and name == "sales"
        )
    with open_source(GitSource(remote.url, ref=first), cache_dir=cache) as (root, _):
        assert tree(root) == MAIN_FILES
    meta = json.loads(next((cache / "git").glob("*/okfx-source.json")).read_text("utf-8"))
    assert meta["ref"] == first and meta["commit"] == first
    fetched = sum(" fetch " in line for line in git_log.read_text("utf-8").splitlines())
    assert fetched == 1 and clones(git_log) == 0  # one pin, one cache entry, in lower case
    with open_source(GitSource(remote.url, ref=first), cache_dir=cache, refresh=True):
        pass
    assert sum(" fetch " in line for line in git_log.read_text("utf-8").splitlines()) == 1


def test_a_github_permalink_with_a_commit_reads_as_a_pin() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    parsed = parse_source(f"https://github.com/org/kb/tree/{sha}/okf/sales")
    assert parsed == GitSource("https://github.com/org/kb", ref=sha, subdir="okf/sales")


def test_an_unknown_or_abbreviated_commit_says_what_to_write(
    remote: Remote, tmp_path: Path
) -> None:
    from okfx.sources import GitNotFound

    missing = "ab" * 20
    with pytest.raises(GitNotFound) as unknown:
        with open_source(f"{remote.url}#{missing}", cache_dir=tmp_path / "c"):
            pass
    assert str(unknown.value).startswith(f"commit {missing} not found in {remote.url}")
    short = git("rev-parse", "--short=10", "HEAD", cwd=remote.work).strip()
    with pytest.raises(GitNotFound) as abbreviated:
        with open_source(f"{remote.url}#{short}:okf/sales", cache_dir=tmp_path / "c"):
            pass
    assert (
        f"(to pin a commit, write its whole id: {remote.url}#<40 hex digits>:okf/sales, or "
        "ref=<40 hex digits>)"
    ) in str(abbreviated.value)
    assert [p for p in (tmp_path / "c" / "git").iterdir() if not p.name.endswith(".lock")] == []


def test_the_watcher_asks_no_remote_about_a_pinned_commit(remote: Remote, git_log: Path) -> None:
    from okfx.sources.refresh import remote_commit

    first = git("rev-parse", "HEAD", cwd=remote.work).strip()
    remote.commit({"okf/sales/new.md": "new\n"})
    assert remote_commit(GitSource(remote.url, ref=first)) == first
    assert remote_commit(GitSource(remote.url, ref="main")) != first
    assert sum(" ls-remote " in line for line in git_log.read_text("utf-8").splitlines()) == 1


def test_a_sha256_repository_is_pinned_by_its_64_digit_ids(tmp_path: Path) -> None:
    """Sources QA: the docs said a 64-digit id pins a SHA-256 repository, but okfx fetched
    it into a SHA-1 repository, and git read the id as a ref name."""
    from okfx.sources import GitNotFound

    work = tmp_path / "sha256"
    git("init", "-q", "--object-format=sha256", str(work))
    write(work, MAIN_FILES)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "first", cwd=work)
    head = git("rev-parse", "HEAD", cwd=work).strip()
    assert len(head) == 64
    with open_source(f"{work.as_uri()}#{head}:okf/sales", cache_dir=tmp_path / "c") as (root, _):
        assert tree(root)["metrics/revenue.md"] == MAIN_FILES["okf/sales/metrics/revenue.md"]
    with pytest.raises(GitNotFound, match="whose commits have SHA-256 \\(64 hex digits\\) ids"):
        with open_source(f"{work.as_uri()}#{head[:40]}", cache_dir=tmp_path / "c"):
            pass


def test_a_refresh_fetches_each_source_once_whatever_folders_of_it_load(
    remote: Remote, tmp_path: Path, git_log: Path
) -> None:
    """Sources QA: ``--refresh`` with three folders of one repository cloned it three
    times (each clone replacing the tree the bundles before had loaded from)."""
    from click.testing import CliRunner

    from okfx import KnowledgeManager
    from okfx.cli.commands import cli

    remote.commit({"okf/ops/a.md": "---\ntype: Runbook\n---\nA.\n"})
    specs = [f"{remote.url}#main:okf/sales", f"{remote.url}#main:okf/ops", f"{remote.url}#main:okf"]
    cache = tmp_path / "cache"
    manager = KnowledgeManager.from_paths(specs, cache_dir=cache, refresh=True)
    assert manager.names == ["sales", "ops", "okf"] and clones(git_log) == 1
    manager = KnowledgeManager.from_paths(specs[:2], cache_dir=cache, refresh=True)
    assert clones(git_log) == 2
    result = CliRunner(env={"OKFX_CACHE_HOME": str(tmp_path / "home")}).invoke(
        cli, ["bundles", "--refresh", *specs]
    )
    assert result.exit_code == 0, result.output
    assert clones(git_log) == 3


def test_the_serving_line_says_which_commit_each_clone_is_at_and_which_are_pinned(
    remote: Remote, tmp_path: Path
) -> None:
    """Sources QA: an operator could not tell from okfx serve's line which bundles were
    pinned, nor at which commit a branch was served."""
    from okfx import KnowledgeManager
    from okfx.cli.render import stdio_notice

    first = git("rev-parse", "HEAD", cwd=remote.work).strip()
    moved = remote.commit({"okf/sales/new.md": "---\ntype: Metric\n---\nNew.\n"})
    manager = KnowledgeManager.from_paths(
        {
            "pinned": GitSource(remote.url, ref=first, subdir="okf/sales"),
            "main": GitSource(remote.url, ref="main", subdir="okf/sales"),
            "default": GitSource(remote.url, subdir="okf/sales"),
        },
        cache_dir=tmp_path / "c",
    )
    line = stdio_notice(manager).splitlines()[0]
    assert f"pinned (1 concept, pinned at {first[:7]})" in line
    assert f"main (2 concepts, main at {moved[:7]})" in line
    assert f"default (2 concepts, the default branch at {moved[:7]})" in line


def test_validate_says_which_commit_it_checked(remote: Remote, tmp_path: Path) -> None:
    """Sources QA: a CI job that validated a pinned source could not show what it
    validated: neither the text report nor --json named the commit."""
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    head = git("rev-parse", "HEAD", cwd=remote.work).strip()
    runner = CliRunner(env={"OKFX_CACHE_HOME": str(tmp_path / "home")})
    spec = f"{remote.url}#{head}:okf/sales"
    text = runner.invoke(cli, ["validate", spec])
    assert f"; {remote.url} at {head[:12]}" in text.output.splitlines()[0], text.output
    report = json.loads(runner.invoke(cli, ["validate", "--json", spec]).output)
    assert report["source"]["commit"] == head and report["source"]["subdir"] == "okf/sales"
    folder = json.loads(runner.invoke(cli, ["validate", "--json", str(remote.work)]).output)
    assert folder["source"] is None


def test_a_repository_cannot_make_a_users_filter_driver_run(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Security QA: a repository committing ``*.md filter=evil`` made git run the smudge
    command the user's own git config defines for ``evil``, at a time the repository
    chose. A checkout writes the files as committed: no filter runs, clone or pin."""
    ran = tmp_path / "ran"
    config = tmp_path / "user.gitconfig"
    config.write_text(f'[filter "evil"]\n\tsmudge = touch {ran} && cat\n', encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    pinned = remote.commit({".gitattributes": "*.md filter=evil\n", "okf/sales/x.md": "x\n"})
    with open_source(remote.url, cache_dir=tmp_path / "c1") as (root, _):
        assert (root / "okf/sales/x.md").read_text(encoding="utf-8") == "x\n"
    with open_source(f"{remote.url}#{pinned}", cache_dir=tmp_path / "c2") as (root, _):
        assert (root / "okf/sales/x.md").read_text(encoding="utf-8") == "x\n"
    assert not ran.exists()


def test_an_annotated_tag_is_asked_for_its_commit(remote: Remote) -> None:
    """Sources QA: for an annotated tag git listed the tag object only, whose id is no
    commit, so validate cloned again at every run and serve reloaded at every interval."""
    from okfx.sources.refresh import remote_commit

    head = git("rev-parse", "HEAD", cwd=remote.work).strip()
    git("tag", "-a", "v2ann", "-m", "annotated", cwd=remote.work)
    git("push", "-q", str(remote.bare), "v2ann", cwd=remote.work)
    assert remote_commit(GitSource(remote.url, ref="v2ann")) == head
    assert (
        remote_commit(GitSource(remote.url, ref="main"))
        == git("rev-parse", "main", cwd=remote.work).strip()
    )
