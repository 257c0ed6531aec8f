"""A footnote defined in the body is a footnote, not a sources[] citation (issue 17,
item 7); a label that names a sources[].id is a citation (spec §5.1) either way."""

from __future__ import annotations

from conftest import MakeBundle
from okfx import Bundle

DOC = """---
type: Note
sources:
  - id: spec
    resource: https://example.com/spec
---
A claim.[^spec] An aside.[^note] A dangling one.[^ghost] Code `[^code]` is not one.

[^spec]: The spec.
[^note]: Just an ordinary footnote,
    continued on a second line.
"""


def test_body_defined_footnotes_are_not_citations(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({"a.md": DOC}))
    c = bundle.concept("a")
    # docs/okf.md (spec-audit QA): a label naming nothing is cited still, with no source
    assert c.citations == ("spec", "ghost")
    assert c.source_for("spec") is not None and c.source_for("ghost") is None
    unknown = [p.message for p in bundle.warnings if p.code == "unknown_footnote"]
    assert len(unknown) == 1 and "[^ghost]" in unknown[0]


def test_a_real_gfm_footnote_only_bundle_is_quiet(make_bundle: MakeBundle) -> None:
    text = "---\ntype: Note\n---\nSee the docs.[^fn:1]\n\n[^fn:1]: https://docs.example.com\n"
    bundle = Bundle.load(make_bundle({"a.md": text}))
    assert bundle.concept("a").citations == ()
    assert bundle.warnings == []
