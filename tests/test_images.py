"""An image a concept shows from a file the bundle lacks is a ``broken_image`` for
``okfx validate`` (validate QA: deskulpt's ``![OKF System Architecture](/assets/diagram.png)``
in a bundle with no /assets/ was said by nothing)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx import Bundle, validate
from okfx.cli.commands import cli


def test_an_image_of_a_missing_file_is_reported_on_its_line(make_bundle: MakeBundle) -> None:
    body = (
        "Intro.\n\n![arch](/assets/diagram.png)\n"
        "![here](img/ok.png) ![there](../pics/gone%20one.png#x)\n"
        "![web](https://example.com/a.png) ![data](data:image/png;base64,AAA) ![h](//cdn/x.png)\n"
        "`![code](/not/checked.png)`\n\n```\n![fence](/nor/this.png)\n```\n"
        "![up](../../../outside.png)\n"
    )
    root = make_bundle({"docs/a.md": concept(body=body), "docs/img/ok.png": "png"})
    report = validate(Bundle.load(root))
    found = [(w.path, w.message) for w in report.warnings if w.code == "broken_image"]
    assert [message.split(" leads to ")[1].split(",")[0] for _, message in found] == [
        "/assets/diagram.png",
        "/pics/gone one.png",
    ]
    assert found[0][1].endswith("or link it by full URL (line 6)")
    assert found[1][1].endswith("(line 7)")
    assert report.by_code["broken_image"] == 2 and report.conformant
    result = CliRunner().invoke(cli, ["validate", "--json", str(root)])
    lines = [
        w["line"] for w in json.loads(result.output)["warnings"] if w["code"] == "broken_image"
    ]
    assert lines == [6, 7]


def test_a_bundle_whose_images_are_all_there_has_no_broken_image(make_bundle: MakeBundle) -> None:
    body = "![x](b.png)\n![y](/b.png)\n![z](.assets/c.png)\n"
    root = make_bundle({"a.md": concept(body=body), "b.png": "png", ".assets/c.png": "png"})
    assert "broken_image" not in validate(Bundle.load(root)).by_code


def test_an_image_through_a_symlink_out_of_the_bundle_is_broken(
    make_bundle: MakeBundle, tmp_path
) -> None:
    """Nothing outside the root is looked at: a folder symlinked out holds no picture of
    the bundle."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.png").write_text("png")
    root = make_bundle({"a.md": concept(body="![x](pics/x.png)\n")})
    (root / "pics").symlink_to(outside)
    assert validate(Bundle.load(root)).by_code.get("broken_image") == 1
