"""Paths are compared in one Unicode normal form (issue 17, item 9): a link written in
NFD reaches a file named in NFC and the other way round; the path guard is unchanged."""

from __future__ import annotations

import unicodedata

import pytest

from conftest import MakeBundle, concept
from okfx import Bundle, Toolbox
from okfx.errors import UnsafePath

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")


@pytest.mark.parametrize(("on_disk", "in_link"), [(NFC, NFD), (NFD, NFC)])
def test_a_link_in_another_normal_form_reaches_the_file(
    make_bundle: MakeBundle, on_disk: str, in_link: str
) -> None:
    assert on_disk != in_link
    root = make_bundle(
        {
            f"{on_disk}.md": concept(title="Café"),
            f"menü/{on_disk}.md": concept(),
            "a.md": concept(
                body=f"[one]({in_link}.md) [two](/{in_link}) [three](./{in_link}.md) "
                f"[four](/men{unicodedata.normalize('NFD', 'ü')}/{in_link}.md)"
            ),
        }
    )
    bundle = Bundle.load(root)
    targets = [(link.target, link.exists) for link in bundle.concept("a").links]
    assert targets == [
        (f"/{on_disk}.md", True),
        (f"/{on_disk}.md", True),
        (f"/{on_disk}.md", True),
        (f"/menü/{on_disk}.md", True),
    ]
    assert not [p for p in bundle.warnings if p.code == "broken_link"]
    assert bundle.concept(in_link).title == "Café"
    assert Toolbox(bundle).read_concept(path=f"{in_link}.md")["title"] == "Café"
    assert bundle.neighbors(f"/{on_disk}.md").backlinks


def test_the_path_guard_still_refuses_what_it_refused(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle({f"{NFC}.md": concept()}))
    with pytest.raises(UnsafePath):
        bundle.get(f"../{NFD}.md")
