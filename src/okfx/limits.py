"""Resource bounds applied while loading a bundle; every one is configurable.

Defaults are generous for real bundles and small enough that a hostile bundle cannot
exhaust memory or time. Anything skipped because of a bound is reported as a warning.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits"]

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds for loading and reading a bundle.

    Files over ``max_file_bytes`` are skipped with a ``file_too_large`` warning; a
    frontmatter block over ``max_frontmatter_bytes`` or nested deeper than
    ``max_yaml_depth`` is not parsed (``malformed_yaml``); YAML that expands (through
    aliases) to more than ``max_yaml_nodes`` nodes is refused; links (internal and
    external) and footnotes beyond ``max_links_per_concept`` (for an ``index.md``, which
    may list every file, twice the bundle's file count when that is larger) are dropped with a
    ``too_many_links`` warning; the walk stops at ``max_files`` files,
    ``max_total_bytes`` bytes read and ``max_dir_depth`` folder levels.

    The bundle-wide caps bound memory rather than bytes (a link costs a few hundred
    bytes of memory for the six or so it takes in a file; an empty folder about a
    kilobyte): the walk stops at ``max_dirs`` folders (``too_many_dirs``); concepts stop
    loading after ``max_concepts`` concepts (``too_many_concepts``) or once their bodies
    hold ``max_body_chars`` characters (``bodies_too_large``: what a load parses, and what
    the search index then holds, although a body itself is read again from its file when
    asked for); links stop being kept after
    ``max_links`` in the whole bundle (``too_many_links_in_bundle``). Each warning names
    the cap, says how to raise it and counts what was left out. With the defaults, a
    bundle that reaches any one of them loads in well under 1 GiB of memory.
    """

    max_file_bytes: int = 8 * MIB
    max_frontmatter_bytes: int = 256 * KIB
    max_yaml_depth: int = 64
    max_yaml_nodes: int = 100_000
    max_links_per_concept: int = 5_000
    max_files: int = 1_000_000
    max_total_bytes: int = 4 * 1024 * MIB
    max_dir_depth: int = 256
    max_resource_bytes: int = 64 * KIB
    max_warnings: int = 10_000
    max_dirs: int = 100_000
    max_concepts: int = 500_000
    max_body_chars: int = 512 * MIB
    max_links: int = 2_000_000
