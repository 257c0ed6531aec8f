"""Archive sources: good archives match their folder; hostile ones are refused with a reason."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from okfx.sources import (
    ArchiveError,
    ArchiveLimitError,
    SourceLimits,
    UnsafeSourceError,
    open_source,
)
from okfx.sources.archive import _zip_name

BUNDLE = {
    "index.md": "# KB\n",
    "metrics/revenue.md": "---\ntype: Metric\ntitle: Revenue\n---\nSum of sales.\n",
    "metrics/margin.md": "---\ntype: Metric\n---\nSee [revenue](revenue.md).\n",
    "tables/orders.md": "---\ntype: Table\n---\nOrders.\n",
}


def tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def make_zip(path: Path, entries: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def tar_mode(path: Path) -> str:
    name = path.name
    if name.endswith((".tar.gz", ".tgz")):
        return "w:gz"
    return "w:xz" if name.endswith(".xz") else "w"


def make_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, tar_mode(path)) as archive:  # type: ignore[call-overload]
        for info, data in members:
            if data is not None:
                info.size = len(data)
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def file_member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes | None]:
    return tarfile.TarInfo(name), data


def special_member(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def folder_archive(path: Path, files: dict[str, str], top: str | None) -> Path:
    prefix = f"{top}/" if top else ""
    if path.name.endswith(".zip"):
        return make_zip(path, {prefix + name: text for name, text in files.items()})
    members = [file_member(prefix + name, text.encode()) for name, text in files.items()]
    return make_tar(path, members)


def no_entries_published(cache: Path) -> bool:
    area = cache / "archive"
    return not area.exists() or all(p.name.endswith(".lock") for p in area.iterdir())


FORMATS = ["kb.zip", "kb.tar", "kb.tar.gz", "kb.tgz", "kb.tar.xz"]


@pytest.mark.parametrize("file", FORMATS)
def test_a_good_archive_with_one_top_folder_yields_that_folder_and_its_name(
    file: str, tmp_path: Path
) -> None:
    archive = folder_archive(tmp_path / file, BUNDLE, top="acme")
    with open_source(archive, cache_dir=tmp_path / "cache") as (root, name):
        assert tree(root) == BUNDLE
        assert name == "acme"


@pytest.mark.parametrize("file", FORMATS)
def test_an_archive_without_a_single_top_folder_is_named_after_its_stem(
    file: str, tmp_path: Path
) -> None:
    archive = folder_archive(tmp_path / file, BUNDLE, top=None)
    with open_source(str(archive), cache_dir=tmp_path / "cache") as (root, name):
        assert tree(root) == BUNDLE
        assert name == "kb"


def test_an_extraction_is_reused_for_the_same_content_under_any_name(tmp_path: Path) -> None:
    first = folder_archive(tmp_path / "kb.zip", BUNDLE, top=None)
    second = tmp_path / "copy.zip"
    second.write_bytes(first.read_bytes())
    with open_source(first, cache_dir=tmp_path / "c") as (root, name):
        inode = root.stat().st_ino
    with open_source(second, cache_dir=tmp_path / "c") as (again, again_name):
        assert again == root and again.stat().st_ino == inode
    assert (name, again_name) == ("kb", "copy")
    assert len([p for p in (tmp_path / "c" / "archive").iterdir() if p.is_dir()]) == 1


def test_a_leftover_partial_extraction_is_removed_and_redone(tmp_path: Path) -> None:
    archive = folder_archive(tmp_path / "kb.tgz", BUNDLE, top="kb")
    with open_source(archive, cache_dir=tmp_path / "c") as (root, _):
        entry = root.parent.parent
    (entry / "okfx-source.json").unlink()  # as if killed just before publishing
    leftover = entry.parent / f"{entry.name}.tmp-killed"
    (leftover / "tree").mkdir(parents=True)
    with open_source(archive, cache_dir=tmp_path / "c") as (root, _):
        assert tree(root) == BUNDLE
    assert not leftover.exists()


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda d: make_zip(d / "a.zip", {"../../evil.md": "x"}), "'..'"),
        (lambda d: make_zip(d / "a.zip", {"kb/..\\..\\evil.md": "x"}), "'..'"),
        (lambda d: make_tar(d / "a.tar.gz", [file_member("../../evil.md", b"x")]), "'..'"),
        (lambda d: make_zip(d / "a.zip", {str(d / "abs.md"): "x"}), "absolute"),
        (lambda d: make_tar(d / "a.tar", [file_member(str(d / "abs.md"), b"x")]), "absolute"),
        (lambda d: make_zip(d / "a.zip", {"C:/evil.md": "x"}), "absolute"),
    ],
)
def test_entries_that_would_land_outside_the_folder_are_refused(
    make: Callable[[Path], Path], reason: str, tmp_path: Path
) -> None:
    archive = make(tmp_path)
    with pytest.raises(ArchiveError, match=reason):
        with open_source(archive, cache_dir=tmp_path / "c" / "d" / "e"):
            pass
    assert not (tmp_path / "evil.md").exists() and not (tmp_path / "abs.md").exists()
    assert not list(tmp_path.rglob("evil.md"))
    assert no_entries_published(tmp_path / "c" / "d" / "e")


def zip_with_mode(path: Path, name: str, mode: int, data: str) -> Path:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("kb/index.md", "# KB\n")
        archive.writestr(info, data)
    return path


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda d: zip_with_mode(d / "a.zip", "kb/x.md", stat.S_IFLNK | 0o777, "/etc"), "symlink"),
        (lambda d: zip_with_mode(d / "a.zip", "kb/null", stat.S_IFCHR | 0o666, ""), "special"),
        (
            lambda d: make_tar(d / "a.tar", [special_member("kb/x.md", tarfile.SYMTYPE, "/etc")]),
            "symlink",
        ),
        (
            lambda d: make_tar(d / "a.tgz", [special_member("kb/x.md", tarfile.SYMTYPE, "ok.md")]),
            "symlink",
        ),
        (
            lambda d: make_tar(
                d / "a.tar", [special_member("kb/x.md", tarfile.LNKTYPE, "../../etc/passwd")]
            ),
            "hard link",
        ),
        (
            lambda d: make_tar(
                d / "a.tar",
                [
                    file_member("kb/a.md", b"a"),
                    special_member("kb/b.md", tarfile.LNKTYPE, "kb/a.md"),
                ],
            ),
            "hard link",
        ),
        (lambda d: make_tar(d / "a.tar", [special_member("kb/dev", tarfile.CHRTYPE)]), "device"),
        (lambda d: make_tar(d / "a.tar", [special_member("kb/disk", tarfile.BLKTYPE)]), "device"),
        (lambda d: make_tar(d / "a.tar", [special_member("kb/pipe", tarfile.FIFOTYPE)]), "FIFO"),
    ],
)
def test_link_device_and_fifo_entries_are_refused(
    make: Callable[[Path], Path], reason: str, tmp_path: Path
) -> None:
    with pytest.raises(ArchiveError, match=reason):
        with open_source(make(tmp_path), cache_dir=tmp_path / "c"):
            pass
    assert no_entries_published(tmp_path / "c")


def test_a_duplicate_entry_cannot_overwrite_an_earlier_file(tmp_path: Path) -> None:
    members = [file_member("kb/a.md", b"first"), file_member("kb/a.md", b"second")]
    with pytest.raises(ArchiveError, match="duplicate"):
        with open_source(make_tar(tmp_path / "a.tar", members), cache_dir=tmp_path / "c"):
            pass


ZEROS = bytes(20 << 20)  # 20 MiB of zeros deflates about a thousandfold


@pytest.mark.parametrize(
    "make",
    [
        lambda d: make_zip(d / "bomb.zip", {"kb/zeros.md": ZEROS}),
        lambda d: make_tar(d / "bomb.tar.gz", [file_member("kb/zeros.md", ZEROS)]),
        lambda d: make_tar(d / "bomb.tar.xz", [file_member("kb/zeros.md", ZEROS)]),
    ],
)
def test_a_compression_bomb_is_refused_by_the_ratio_cap(
    make: Callable[[Path], Path], tmp_path: Path
) -> None:
    with pytest.raises(ArchiveLimitError, match=r"archive exceeds max_ratio=100\.0") as caught:
        with open_source(make(tmp_path), cache_dir=tmp_path / "c"):
            pass
    assert caught.value.limit == "max_ratio"
    assert no_entries_published(tmp_path / "c")
    assert sum(p.stat().st_size for p in (tmp_path / "c").rglob("*") if p.is_file()) < 2 << 20


@pytest.mark.parametrize("file", ["big.zip", "big.tar", "big.tar.gz"])
def test_the_total_size_cap_counts_real_bytes(file: str, tmp_path: Path) -> None:
    # Four files each under the cap, together over it: only counting catches a tar stream.
    files = {f"kb/{i}.md": "x" * 400 for i in range(4)}
    archive = folder_archive(tmp_path / file, files, top=None)
    limits = SourceLimits(max_total_bytes=1000)
    with pytest.raises(ArchiveLimitError, match="archive exceeds max_total_bytes=1000"):
        with open_source(archive, cache_dir=tmp_path / "c", limits=limits):
            pass


@pytest.mark.parametrize("file", ["many.zip", "many.tgz"])
def test_the_file_count_cap_is_enforced(file: str, tmp_path: Path) -> None:
    archive = folder_archive(tmp_path / file, {f"{i}.md": "x" for i in range(5)}, top=None)
    with pytest.raises(ArchiveLimitError, match="archive exceeds max_files=3"):
        with open_source(archive, cache_dir=tmp_path / "c", limits=SourceLimits(max_files=3)):
            pass


def test_a_cached_extraction_is_rechecked_against_stricter_limits(tmp_path: Path) -> None:
    archive = folder_archive(tmp_path / "kb.zip", BUNDLE, top=None)
    with open_source(archive, cache_dir=tmp_path / "c"):
        pass
    with pytest.raises(ArchiveLimitError, match="max_files=2"):
        with open_source(archive, cache_dir=tmp_path / "c", limits=SourceLimits(max_files=2)):
            pass


def test_a_zip_whose_header_understates_the_size_is_refused(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "lying.zip", {"kb/a.md": "y" * 5000})
    data = bytearray(archive.read_bytes())
    # Patch the uncompressed size in the local (offset 22) and central (offset 24) headers.
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.index(signature) + offset
        data[at : at + 4] = (10).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="cannot read"):
        with open_source(archive, cache_dir=tmp_path / "c"):
            pass
    assert no_entries_published(tmp_path / "c")


@pytest.mark.parametrize("file", ["junk.zip", "junk.tar.gz", "junk.tar.xz", "junk.tar"])
def test_a_corrupt_archive_raises_archive_error(file: str, tmp_path: Path) -> None:
    junk = {"junk.tar.gz": b"\x1f\x8b" + b"junk" * 50, "junk.tar.xz": b"\xfd7zXZ\x00" + b"j" * 50}
    (tmp_path / file).write_bytes(junk.get(file, b"not an archive at all" * 40))
    with pytest.raises(ArchiveError, match="cannot read"):
        with open_source(tmp_path / file, cache_dir=tmp_path / "c"):
            pass


def test_a_missing_archive_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        with open_source(tmp_path / "gone.zip", cache_dir=tmp_path / "c"):
            pass


def test_windows_separators_and_macos_metadata_do_not_hide_the_top_folder(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "win.zip",
        {"kb\\index.md": "# KB\n", "kb\\metrics\\m.md": "m\n", "__MACOSX/kb/._index.md": "junk"},
    )
    with open_source(archive, cache_dir=tmp_path / "c") as (root, name):
        assert name == "kb"
        assert tree(root) == {"index.md": "# KB\n", "metrics/m.md": "m\n"}


@pytest.mark.parametrize("junk", [".DS_Store", "._kb", "Thumbs.db", "desktop.ini", ".hidden/x.md"])
def test_a_hidden_or_desktop_file_beside_the_top_folder_does_not_move_the_bundle(
    tmp_path: Path, junk: str
) -> None:
    """Platform QA: a stray top-level .DS_Store made the extraction the bundle, named after
    the file, with every concept path under /knowledge/."""
    archive = make_zip(tmp_path / "mac.zip", {"knowledge/a.md": "a\n", junk: "junk"})
    with open_source(archive, cache_dir=tmp_path / "c") as (root, name):
        assert name == "knowledge" and tree(root) == {"a.md": "a\n"}


@pytest.mark.parametrize(
    "kwargs", [{"max_files": 0}, {"max_total_bytes": -1}, {"max_ratio": 0}, {"max_files": True}]
)
def test_source_limits_must_be_positive(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="must be a positive number"):
        SourceLimits(**kwargs)


def test_a_local_folder_is_yielded_in_place_without_touching_the_cache(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "index.md").write_text("# KB\n", encoding="utf-8")
    with open_source(tmp_path / "kb", cache_dir=tmp_path / "c") as (root, name):
        assert root == tmp_path / "kb" and name == "kb"
    assert not (tmp_path / "c").exists()
    with pytest.raises(FileNotFoundError):
        with open_source(tmp_path / "missing"):
            pass


@pytest.mark.parametrize("file", ["kb-main.zip", "kb-main.tar.gz"])
def test_a_folder_inside_an_archive_is_the_bundle_when_named_after_a_hash(
    file: str, tmp_path: Path
) -> None:
    """Platform QA: a repository's download (``kb-main/okf/sales/...``) could only be read
    whole, so every concept's path started with the repository's other folders."""
    files = {"README.md": "# repo\n", **{f"okf/sales/{k}": v for k, v in BUNDLE.items()}}
    archive = folder_archive(tmp_path / file, files, "kb-main")
    cache = tmp_path / "cache"
    for spec in (f"{archive}#okf/sales", f"{archive}#:okf/sales/", f"{archive}#kb-main/okf/sales"):
        with open_source(spec, cache_dir=cache) as (root, name):
            assert tree(root) == BUNDLE and name == "sales"
    assert len(list((cache / "archive").glob("*/tree"))) == 1  # one extraction for all three


def test_a_missing_folder_in_an_archive_names_the_folders_it_has(tmp_path: Path) -> None:
    archive = folder_archive(tmp_path / "kb.zip", BUNDLE, "kb")
    with pytest.raises(FileNotFoundError) as missing:
        with open_source(f"{archive}#okf", cache_dir=tmp_path / "c"):
            pass
    assert str(missing.value) == (
        f"folder 'okf' not found in {archive} (its folders: metrics, tables)"
    )
    with pytest.raises(FileNotFoundError) as deeper:
        with open_source(f"{archive}#metrics/nope", cache_dir=tmp_path / "c"):
            pass
    assert str(deeper.value).endswith("(the folders of metrics/: none)")
    with pytest.raises(FileNotFoundError) as case:
        with open_source(f"{archive}#Tables", cache_dir=tmp_path / "c"):
            pass
    assert str(case.value).endswith("(its folders: metrics, tables); did you mean 'tables'?")
    with pytest.raises(NotADirectoryError, match="is a file"):
        with open_source(f"{archive}#index.md", cache_dir=tmp_path / "c"):
            pass
    with pytest.raises(UnsafeSourceError):
        with open_source(f"{archive}#../x", cache_dir=tmp_path / "c"):
            pass


def test_a_path_holding_a_hash_that_exists_is_read_as_that_path(tmp_path: Path) -> None:
    folder = tmp_path / "notes#2"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntype: Note\n---\n", encoding="utf-8")
    with open_source(str(folder), cache_dir=tmp_path / "c") as (root, name):
        assert root == folder and name == "notes#2"
    archive = folder_archive(tmp_path / "kb#1.zip", BUNDLE, "kb")
    with open_source(str(archive), cache_dir=tmp_path / "c") as (root, _):
        assert tree(root) == BUNDLE
    with open_source(f"{archive}#metrics", cache_dir=tmp_path / "c") as (root, name):
        assert sorted(tree(root)) == ["margin.md", "revenue.md"] and name == "metrics"


def test_utf8_names_of_a_zip_without_the_utf8_flag_keep_their_letters(tmp_path: Path) -> None:
    """Sources QA: Info-ZIP's zip writes UTF-8 names without the flag; read as CP437 the
    folder ``ventes-été`` became ``ventes-├⌐t├⌐``. A CP437 name that is no UTF-8 stays."""
    archive = tmp_path / "kb.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for name, data in {
            "kb/ventes-été/a.md": BUNDLE["tables/orders.md"],
            "kb/x.md": "x",
        }.items():
            info = zipfile.ZipInfo(name)
            out.writestr(info, data)
    raw = archive.read_bytes()
    # Clear bit 11 (UTF-8) in every header, as Info-ZIP leaves it: the name bytes are UTF-8.
    raw = raw.replace(b"PK\x03\x04\x14\x00\x00\x08", b"PK\x03\x04\x14\x00\x00\x00")
    raw = raw.replace(b"PK\x01\x02\x14\x03\x14\x00\x00\x08", b"PK\x01\x02\x14\x03\x14\x00\x00\x00")
    archive.write_bytes(raw)
    with zipfile.ZipFile(archive) as check:
        assert "kb/ventes-├⌐t├⌐/a.md" in check.namelist()  # what zipfile alone reads
    with open_source(f"{archive}#ventes-été", cache_dir=tmp_path / "c") as (root, name):
        assert name == "ventes-été" and tree(root) == {"a.md": BUNDLE["tables/orders.md"]}
    assert _zip_name(zipfile.ZipInfo("caf\x82.md")) == "caf\x82.md"  # cp437 'é' alone


def test_a_folder_deep_in_an_archive_still_says_where_it_came_from(tmp_path: Path) -> None:
    """Sources QA: the origin was looked for 8 folders up at most, and said no folder, so
    three folders of one archive read the same."""
    from okfx import Bundle

    deep = "a/b/c/d/e/f/g/h/i"
    files = {f"{deep}/{k}": v for k, v in BUNDLE.items()} | {"x/a.md": BUNDLE["index.md"]}
    archive = folder_archive(tmp_path / "kb.zip", files, "kb-main")
    loaded = Bundle.load(f"{archive}#{deep}", cache_dir=tmp_path / "c")
    assert loaded.origin is not None and loaded.origin["folder"] == f"kb-main/{deep}"
    other = Bundle.load(f"{archive}#x", cache_dir=tmp_path / "c")
    assert other.origin is not None and other.origin["folder"] == "kb-main/x"
    assert other.origin["sha256"] == loaded.origin["sha256"]


def test_okfx_cache_path_names_the_fetched_sources_and_their_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sources QA: ``okfx cache path`` showed the state cache alone, while the fetched
    sources, which nothing bounds, held more."""
    from click.testing import CliRunner

    from okfx import Bundle
    from okfx.cli.commands import cli

    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OKFX_CACHE_DIR", raising=False)
    archive = folder_archive(tmp_path / "kb.zip", BUNDLE, "kb")
    Bundle.load(archive)
    shown = CliRunner().invoke(cli, ["cache", "path"])
    assert shown.exit_code == 0, shown.output
    assert f"fetched sources: {tmp_path / 'home' / 'sources'}: 0 git clone(s), 1 archive(s)" in (
        shown.stderr
    )
    assert "okfx cache clear --sources removes them" in shown.stderr


def test_the_cli_says_a_refused_entry_is_no_damaged_file_and_a_missing_archive_by_name(
    tmp_path: Path,
) -> None:
    """Sources QA: a symlink entry (a policy refusal) was told "the file may be cut short
    ...; fetch or build it again", and a missing archive was a "bundle folder not found",
    or "archive not found." with no path."""
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    refused = zip_with_mode(tmp_path / "a.zip", "kb/x.md", stat.S_IFLNK | 0o777, "/etc")
    said = CliRunner().invoke(cli, ["bundles", str(refused)]).output
    assert "symlink" in said and "build the archive without it" in said
    assert "cut short" not in said
    for name in ("missing.tar.gz", "missing.zip#kb"):
        out = CliRunner().invoke(cli, ["bundles", str(tmp_path / name)]).output
        assert f"archive not found: {tmp_path / name.split('#')[0]}" in out, out


def test_an_scp_like_url_with_any_user_is_a_git_url(tmp_path: Path, monkeypatch) -> None:
    """Sources QA: "alice@host:org/kb.git" (docs: user@host:org/repo) was read as a
    missing local folder; only git@ was taken for a git URL."""
    from okfx import Bundle
    from okfx.sources.spec import GitSource, parse_source

    seen: list[object] = []

    def opened(spec: object, **_: object) -> object:
        seen.append(spec)
        raise OSError("stop here")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("okfx.sources.open_source", opened)
    with pytest.raises(OSError, match="stop here"):
        Bundle.load("alice@127.0.0.1:org/kb.git")
    assert seen == ["alice@127.0.0.1:org/kb.git"]
    assert isinstance(parse_source("alice@127.0.0.1:org/kb.git"), GitSource)


def test_advice_on_a_fetched_bundle_names_its_source_not_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sources QA: validate told the author to load the cache's folder
    (.../sources/archive/<sha>/tree/kb1-main/catalog), which a refresh replaces; the
    advice now names the source form that loads it, and that form loads it."""
    from okfx import Bundle, validate

    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path / "cache"))
    concept = "---\ntype: Note\n---\nText.\n"
    archive = make_zip(
        tmp_path / "kb1.zip",
        {
            "kb1-main/README.md": "# Repo\n",
            "kb1-main/catalog/index.md": "---\nokf_version: '0.2'\n---\n# Catalog\n",
            "kb1-main/catalog/a.md": concept,
        },
    )
    report = validate(Bundle.load(str(archive)))
    said = " ".join(p.message for p in report.warnings) + " ".join(report.notes)
    assert f"okfx validate {archive}#catalog" in said
    assert "sources/archive" not in said
    assert len(Bundle.load(f"{archive}#catalog")) == 1


def test_an_archive_of_folders_nested_too_deep_is_refused_and_the_cache_stays_clearable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sources QA: a 38 KB tar.gz of 1,900 nested folders raised RecursionError, left a
    folder in the cache, and broke `okfx cache path` and `okfx cache clear --sources`."""
    from click.testing import CliRunner

    from okfx.cli.commands import cli
    from okfx.sources.trees import remove_tree, tree_files

    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path / "cache"))
    deep = "kb/" + "d/" * 1900 + "x.md"
    archive = make_zip(
        tmp_path / "deep.zip", {"kb/index.md": "# KB\n", deep: "---\ntype: N\n---\n"}
    )
    with pytest.raises(ArchiveError, match="folders deep, more than the 256"):
        with open_source(archive, cache_dir=tmp_path / "cache" / "sources"):
            pass
    for args in (["cache", "path"], ["cache", "clear", "--sources"]):
        assert CliRunner().invoke(cli, args).exit_code == 0, args
    # a tree that deep (a git checkout may hold one) is measured and removed without recursion
    tree = tmp_path / "tree"
    path = tree
    path.mkdir()
    for _ in range(1200):
        path = path / "d"
        path.mkdir()
    (path / "x.md").write_text("x")
    (tree / "link").symlink_to(tmp_path)
    assert sum(1 for _ in tree_files(tree)) == 2
    remove_tree(tree)
    assert not tree.exists() and tmp_path.exists()


def test_a_hidden_folder_in_an_archive_is_named_by_what_holds_it(tmp_path: Path) -> None:
    """Sources QA: `nhis.tgz#.okf` was a bundle named `.okf`, where the same folder on
    disk is named after its parent."""
    hidden = {f".okf/{k}": v for k, v in BUNDLE.items()}
    nested = folder_archive(tmp_path / "nested.zip", hidden, "nhis-main")
    with open_source(f"{nested}#.okf", cache_dir=tmp_path / "c") as (_, name):
        assert name == "nhis-main"
    flat = folder_archive(tmp_path / "nhis.tar.gz", {"README.md": "# x\n", **hidden}, None)
    with open_source(f"{flat}#.okf", cache_dir=tmp_path / "c") as (root, name):
        assert name == "nhis" and tree(root) == BUNDLE
