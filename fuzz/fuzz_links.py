"""Atheris target: the link scanner and resolver never raise except ``UnsafePath``.

``okfx.bundle.links.scan_markdown`` takes any text; each href it finds (and the raw input read as
one frontmatter path value) goes through ``Resolver.resolve``, which may refuse it with
``UnsafePath`` and must otherwise return None or a canonical bundle path: rooted, no empty,
``.`` or ``..`` segments, no backslash or control character. Offsets must lie in the body.
Run: ``python fuzz/fuzz_links.py -runs=20000``.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["okfx"]):
    from okfx.bundle.links import Resolver, scan_markdown
    from okfx.errors import UnsafePath

FILES = {"/a.md", "/dir/b.md", "/dir/index.md", "/dir/sub/c.md", "/tables/index.md", "/x.py"}
DIRS = {"/", "/dir", "/dir/sub", "/tables"}
BASES = sorted(DIRS)
RESOLVER = Resolver(set(FILES), set(DIRS))


def check(href: str, base: str, frontmatter: bool) -> None:
    try:
        target = RESOLVER.resolve(href, base, frontmatter=frontmatter)
    except UnsafePath:
        return
    if target is None:
        return
    parts = target.split("/")
    if not target.startswith("/") or (
        target != "/" and any(p in ("", ".", "..") for p in parts[1:])
    ):
        raise AssertionError(f"{href!r} from {base} resolved to non-canonical {target!r}")
    if any(ord(ch) < 32 or ch in "\\\x7f" for ch in target):
        raise AssertionError(f"{href!r} resolved to {target!r} with a forbidden character")


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    base = BASES[fdp.ConsumeIntInRange(0, len(BASES) - 1)]
    frontmatter = fdp.ConsumeBool()
    body = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    links, footnotes = scan_markdown(body)
    for href, _text, offset in links:
        if not 0 <= offset < len(body):
            raise AssertionError(f"offset {offset} outside a body of {len(body)} characters")
        check(href, base, False)
    if len(footnotes) != len(set(footnotes)):
        raise AssertionError("a footnote label is listed twice")
    check(body[:500], base, frontmatter)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
