"""``broken_anchor``: a link's ``#fragment`` must name a heading (GitHub's id) or an
explicit anchor of its target; ``okfx validate`` warns, never fails, when it does not."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx import Bundle, validate
from okfx.bundle.anchors import anchors_of, fragment_key, github_slug
from okfx.bundle.problems import EXPLANATIONS, problem_dict
from okfx.cli.commands import cli
from okfx.model import Problem


def anchor_problems(root: object) -> list[Problem]:
    report = validate(Bundle.load(root))  # type: ignore[arg-type]
    return [p for p in report.warnings if p.code == "broken_anchor"]


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Set up", "set-up"),
        ("Setup & Run", "setup--run"),  # one dash per space, "&" dropped
        ("What's new?", "whats-new"),
        ("snake_case and kebab-case", "snake_case-and-kebab-case"),
        ("Déjà vu!", "déjà-vu"),
        ("并发模型 (概述)", "并发模型-概述"),
        ("C++ / Rust", "c--rust"),
        ("Version 2.0", "version-20"),
    ],
)
def test_github_slug_follows_githubs_heading_ids(heading: str, slug: str) -> None:
    assert github_slug(heading) == slug


def test_anchors_read_headings_outside_code_with_githubs_numbering() -> None:
    body = (
        "# Intro\n\n## Intro\n\n```sh\n# not a heading\n```\n\n<!--\n# hidden\n-->\n"
        "Setext title\n============\n\n## [Linked](x.md) `code` **bold** ##\n"
        '## Title {#custom-id}\n\n<a name="Old-Name"></a>\n\nNote.[^n]\n\n[^n]: a note\n'
    )
    anchors = anchors_of(body)
    assert {"intro", "intro-1", "setext-title", "linked-code-bold", "custom-id"} <= anchors
    assert {"title", "old-name", "fn-n", "fnref-n"} <= anchors
    assert "not-a-heading" not in anchors and "hidden" not in anchors


def test_a_link_title_holding_a_parenthesis_is_no_heading_text() -> None:
    """Validate QA (Databricks docs): ``## 1) Install packages[​](#1-install-packages
    "Direct link to 1) Install packages")``: the link ended at the title's ")", and the
    rest of the title made the id, so four valid links read as broken anchors."""
    body = '## 1) Install packages[\u200b](#1-install-packages "Direct link to 1) Install")\n'
    body += "## Two [b](c.md 'it (is)') end\n"
    assert {"1-install-packages", "two-b-end"} <= anchors_of(body)


def test_fragments_are_decoded_lower_cased_and_lose_githubs_prefix() -> None:
    assert fragment_key("D%C3%A9j%C3%A0-Vu") == "déjà-vu"
    assert fragment_key("user-content-Setup") == "setup"


def test_cross_file_and_same_file_fragments_are_checked(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(
                body="# A\n\n## Usage\n\n[ok](other.md#set-up) [bad](other.md#setup)\n"
                "[here](#usage) [gone](#missing) [top](#top) [bare](other.md#)\n"
            ),
            "other.md": concept(body="# Set up\n\nText.\n"),
        }
    )
    found = sorted(anchor_problems(root), key=lambda p: p.message)
    assert [p.message for p in found] == [
        "link '#missing': this document has no heading or anchor 'missing' (line 9)",
        "link 'other.md#setup': /other.md has no heading or anchor 'setup'; "
        "did you mean '#set-up'? (line 8)",
    ]
    assert all(p.path == "/a.md" for p in found)
    report = validate(Bundle.load(root))
    assert report.conformant and report.by_code["broken_anchor"] == 2


def test_a_fragment_in_a_frontmatter_path_is_checked_too(make_bundle: MakeBundle) -> None:
    """awesome-okf cites sections of a references file in ``sources``."""
    sources = (
        "\n  - {id: a, resource: '/references/src.md#second-me-mindverse'}"
        "\n  - {id: b, resource: '/references/src.md#second-me'}"
        "\n  - {id: c, resource: 'https://example.org/x.md#nowhere'}"
    )
    root = make_bundle(
        {
            "a.md": concept(sources=sources),
            "references/src.md": concept(body="# Sources\n\n## Second-Me (mindverse)\n"),
        }
    )
    [problem] = anchor_problems(root)
    assert (problem.path, problem.message) == (
        "/a.md",
        "link '/references/src.md#second-me': /references/src.md has no heading or anchor "
        "'second-me'; did you mean '#second-me-mindverse'? (line 5)",
    )


def test_repeated_headings_take_a_number(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(body="[1](b.md#step-1) [2](b.md#step-2) [3](b.md#step-3)\n"),
            "b.md": concept(body="## Step\n\n## Step\n\n## Step\n"),
        }
    )
    assert [p.message.split(":")[0] for p in anchor_problems(root)] == ["link 'b.md#step-3'"]


def test_percent_encoded_and_non_ascii_fragments_match(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(
                body="[a](b.md#%E5%B9%B6%E5%8F%91%E6%A8%A1%E5%9E%8B) [b](b.md#Déjà-Vu) "
                "[c](b.md#two%20words) [d](b.md#%E6%B2%A1%E6%9C%89)\n"
            ),
            "b.md": concept(body="## 并发模型\n\n## Déjà vu\n\n## Two words\n"),
        }
    )
    # "two%20words" is "two words": no GitHub id has a space.
    messages = [p.message for p in anchor_problems(root)]
    assert len(messages) == 2
    assert any("'two words'" in m for m in messages) and any("'没有'" in m for m in messages)


def test_headings_in_code_do_not_count_but_html_anchors_do(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": concept(
                body="[code](b.md#install) [html](b.md#legacy) [id](b.md#Box) "
                "[fn](b.md#user-content-fn-1)\n"
            ),
            "b.md": concept(
                body='# B\n\n~~~\n# Install\n~~~\n\n    # install\n\n<a name="legacy"></a>\n'
                '<div id="box">x</div>\n\nA claim.[^1]\n\n[^1]: the source\n'
            ),
        }
    )
    messages = [p.message for p in anchor_problems(root)]
    assert messages == ["link 'b.md#install': /b.md has no heading or anchor 'install' (line 4)"]


def test_external_non_markdown_and_missing_targets_are_left_alone(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {
            "a.md": concept(
                body="[e](https://example.org/x.md#nope) [f](data.csv#row) "
                "[g](gone.md#nope) [h](index.md#nope)\n"
            ),
            "data.csv": "a,b\n",
            "index.md": "# Concepts\n\n- [A](a.md)\n",
        }
    )
    codes = {p.code for p in validate(Bundle.load(root)).warnings}
    assert "broken_link" in codes  # gone.md: reported once, as a broken link
    [problem] = anchor_problems(root)
    assert "index.md#nope" in problem.message  # a reserved file's headings count


def test_the_warning_carries_its_line_in_json_and_annotations(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "a.md": "---\ntype: Metric\n---\n# A\n\nText.\n\nSee [b](b.md#nowhere).\n",
            "b.md": concept(body="# B\n"),
        }
    )
    [problem] = anchor_problems(root)
    assert problem_dict(problem)["line"] == 8
    assert EXPLANATIONS["broken_anchor"]
    result = CliRunner().invoke(cli, ["validate", str(root), "--json"])
    assert result.exit_code == 0, result.output
    [warning] = json.loads(result.output)["warnings"]
    assert (warning["code"], warning["line"]) == ("broken_anchor", 8)
    github = CliRunner().invoke(cli, ["validate", str(root), "--format", "github"]).output
    assert "line=8,title=okfx broken_anchor" in github


def test_the_anchor_meant_shares_the_most_words_before_looking_alike() -> None:
    """Validate QA (ScalarDB): '#multi-storage-support' was offered '#multi_storagestorages',
    the id of a heading `multi_storage.storages`, over '#multi-storage-configurations',
    the section meant; a typo still finds its anchor."""
    from okfx.bundle.anchors import closest_anchor

    anchors = frozenset({"multi_storagestorages", "multi-storage-configurations", "setup"})
    assert closest_anchor("multi-storage-support", anchors) == "multi-storage-configurations"
    assert closest_anchor("setpu", anchors) == "setup"
    assert closest_anchor("billing", anchors) is None
