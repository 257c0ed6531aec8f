"""Memory stays bounded by what a load keeps, not by how much a bundle holds.

Byte caps do not bound memory: a link is six bytes of a file and a few hundred of
memory, an empty folder a kilobyte (issue 16: 10M links in a 60 MB archive took 3.6 GB).
The bundle-wide caps of :class:`okfx.limits.Limits` (``max_links``, ``max_dirs``,
``max_concepts``, ``max_body_chars``) each stop the load at a bound with one warning that
names the cap, says how to raise it and counts what was left out. Here the caps are
scaled down so each case runs in a fraction of a second; ``bench/stress.py`` loads the
full-size shapes.
"""

from __future__ import annotations

from pathlib import Path

from hostile import call, codes, concept, peak_mib, write

from okfx import Bundle, Toolbox
from okfx.limits import MIB, Limits


def warning(bundle: Bundle, code: str) -> str:
    [message] = [w.message for w in bundle.warnings if w.code == code]
    return message


def links_body(count: int, prefix: str = "/t") -> str:
    return "".join(f"[a]({prefix}{i}.md) " for i in range(count))


def test_the_bundle_wide_link_cap_keeps_the_first_links_and_says_what_it_cut(
    tmp_path: Path,
) -> None:
    files: dict[str, str | bytes] = {f"c{i}.md": concept(body=links_body(100)) for i in range(10)}
    bundle = Bundle.load(write(tmp_path / "b", files), limits=Limits(max_links=250))
    assert len(bundle) == 10  # every concept loads; only links are cut
    assert [len(c.links) for c in bundle] == [100, 100, 50] + [0] * 7
    message = warning(bundle, "too_many_links_in_bundle")
    assert "max_links=250" in message and "Limits(max_links=...)" in message
    assert "8 concepts lost" in message and "/c2.md" in message
    assert call(Toolbox(bundle), "get_neighbors", path="c0")["outbound"] == []


def test_a_cap_is_reported_even_when_the_warning_list_is_full(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"c{i}.md": concept(body=links_body(20)) for i in range(5)}
    limits = Limits(max_links=30, max_warnings=5)  # 100 broken links fill the list first
    bundle = Bundle.load(write(tmp_path / "b", files), limits=limits)
    assert "too_many_links_in_bundle" in codes(bundle) and "too_many_warnings" in codes(bundle)
    assert bundle.problem_counts()["too_many_links_in_bundle"] == 1


def test_external_links_and_footnotes_count_against_the_per_concept_cap(tmp_path: Path) -> None:
    body = "".join(f"[x](https://e.example/{i}) [^f{i}] " for i in range(500))
    bundle = Bundle.load(
        write(tmp_path / "b", {"a.md": concept(body=body)}),
        limits=Limits(max_links_per_concept=40),
    )
    kept = bundle.concept("a")
    assert len(kept.external_links) == 40 and len(kept.citations) == 40
    assert codes(bundle, "/a.md")[0] == "too_many_links"


def test_a_link_flood_in_one_body_is_not_held_in_memory_before_the_cap(tmp_path: Path) -> None:
    body = links_body(150_000, "/missing/t")  # 3.3 MB of distinct, broken links
    root = write(tmp_path / "b", {"a.md": concept(body=body)})
    limits = Limits(max_links_per_concept=100, max_warnings=10)
    bundle, peak = peak_mib(lambda: Bundle.load(root, limits=limits))
    assert isinstance(bundle, Bundle) and len(bundle.concept("a").links) == 100
    # The text alone is 3.3 MB (twice, while it is split); 150k scanned links were ~30 MB.
    assert peak < 16, f"scanning one body held {peak:.0f} MiB"


def test_a_wikilink_flood_is_not_held_in_memory_before_the_cap(tmp_path: Path) -> None:
    body = "".join(f"[[gone{i}]] " for i in range(150_000))  # 1.8 MB
    root = write(tmp_path / "b", {"a.md": concept(body=body)})
    limits = Limits(max_links_per_concept=100, max_warnings=10)
    bundle, peak = peak_mib(lambda: Bundle.load(root, limits=limits, wikilinks=True))
    assert isinstance(bundle, Bundle) and len(bundle.concept("a").links) == 100
    assert "too_many_links" in codes(bundle, "/a.md")
    assert peak < 12, f"scanning wikilinks held {peak:.0f} MiB"


def test_a_warning_flood_is_counted_not_held_while_a_batch_is_parsed(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        f"c{i:03}.md": concept(body="".join(f"[^n{i}x{j}] " for j in range(5_000)))
        for i in range(60)
    }
    root = write(tmp_path / "b", files)  # 300,000 unknown footnotes
    limits = Limits(max_warnings=10)
    bundle, peak = peak_mib(lambda: Bundle.load(root, limits=limits, state_cache=False))
    assert isinstance(bundle, Bundle)
    assert bundle.problem_counts()["unknown_footnote"] == 300_000
    # Holding every message of a batch until it is replayed took about 90 MiB.
    assert peak < 55, f"{peak:.0f} MiB"


def test_link_memory_is_bounded_by_max_links(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        f"c{i}.md": concept(body=links_body(2_000, f"/gone{i}/t")) for i in range(30)
    }
    root = write(tmp_path / "b", files)
    loose = Limits(max_warnings=10)
    tight = Limits(max_links=5_000, max_warnings=10)
    _, free_peak = peak_mib(lambda: Bundle.load(root, limits=loose))
    bundle, capped_peak = peak_mib(lambda: Bundle.load(root, limits=tight))
    assert isinstance(bundle, Bundle)
    assert sum(len(c.links) for c in bundle) == 5_000
    assert capped_peak < free_peak / 3, (capped_peak, free_peak)


def test_the_folder_cap_stops_the_walk_and_counts_what_it_left(tmp_path: Path) -> None:
    root = write(tmp_path / "b", {"a.md": concept(), "zz/last.md": concept()})
    for i in range(60):
        (root / f"d{i:02}").mkdir()
    bundle = Bundle.load(root, limits=Limits(max_dirs=20))
    assert len(bundle.directories) == 20
    assert "/zz/last.md" not in bundle.files
    message = warning(bundle, "too_many_dirs")
    assert "max_dirs=20" in message and "Limits(max_dirs=...)" in message
    assert "42 more folders" in message  # 61 folders: 19 walked beside the root
    assert [c.path for c in bundle] == ["/a.md"]


def test_the_concept_cap_keeps_a_prefix_and_still_reads_index_files(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"c{i:02}.md": concept() for i in range(30)}
    files["z/index.md"] = "# Z\n\n* [c](/c00.md) - first\n"
    bundle = Bundle.load(write(tmp_path / "b", files), limits=Limits(max_concepts=10))
    assert [c.path for c in bundle] == [f"/c{i:02}.md" for i in range(10)]
    assert "/z" in bundle.indexes
    message = warning(bundle, "too_many_concepts")
    assert "max_concepts=10" in message and "20 concept files" in message
    assert "/c10.md" in message and "Limits(max_concepts=...)" in message


def test_the_body_cap_stops_loading_concepts_once_bodies_fill_it(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"c{i:02}.md": concept(body="x" * 1000) for i in range(20)}
    bundle = Bundle.load(write(tmp_path / "b", files), limits=Limits(max_body_chars=5_500))
    assert len(bundle) == 5
    message = warning(bundle, "bodies_too_large")
    assert "max_body_chars=5500" in message and "15 concept files" in message


def test_bodies_are_not_held_twice_while_a_load_parses_them(tmp_path: Path) -> None:
    body = ("word " * 20 + "\n") * (MIB // 101)
    files: dict[str, str | bytes] = {f"c{i:02}.md": concept(body=body) for i in range(40)}
    root = write(tmp_path / "b", files)
    bundle, peak = peak_mib(lambda: Bundle.load(root))
    assert isinstance(bundle, Bundle)
    kept = sum(len(c.body) for c in bundle) / MIB
    # Whole 256-file batches held every text and its body together: twice the bodies.
    assert peak < 1.6 * kept, f"{peak:.0f} MiB peak for {kept:.0f} MiB of bodies"


def test_every_cap_has_a_default_and_the_state_key_sees_it() -> None:
    limits = Limits()
    assert (limits.max_links, limits.max_dirs) == (2_000_000, 100_000)
    assert (limits.max_concepts, limits.max_body_chars) == (500_000, 512 * MIB)
    assert repr(Limits(max_links=1)) != repr(limits)  # the state cache keys on it
