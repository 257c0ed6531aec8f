"""Bundle names in a manager loaded from paths: two folders of one name are told apart."""

from __future__ import annotations

import logging

import pytest

from conftest import MakeBundle
from okfx import KnowledgeManager, Toolbox


def test_from_paths_names_two_folders_of_one_name_by_their_parents(
    make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture
) -> None:
    """Agent QA: ``from_paths`` refused ``AV-OKF/knowledge`` beside ``okf-poc/knowledge``,
    where the CLI names them by their parent folders."""
    files: dict[str, str | bytes] = {"a.md": "---\ntype: Note\n---\nA note.\n"}
    first, second = make_bundle(files), make_bundle(files)
    (first.parent / "av").mkdir()
    (first.parent / "poc").mkdir()
    one = first.rename(first.parent / "av" / "knowledge")
    two = second.rename(second.parent / "poc" / "knowledge")
    with caplog.at_level(logging.WARNING, logger="okfx"):
        manager = KnowledgeManager.from_paths([str(one), two], state_cache=False)
    listed = Toolbox(manager).list_bundles()["bundles"]
    assert sorted(b["name"] for b in listed) == ["av-knowledge", "poc-knowledge"]
    assert "two folders are named 'knowledge'" in caplog.text
    # a name given is kept, and the folder left unnamed keeps its own
    named = KnowledgeManager.from_paths([("mine", one), two], state_cache=False)
    assert sorted(b["name"] for b in Toolbox(named).list_bundles()["bundles"]) == [
        "knowledge",
        "mine",
    ]
    # one folder given twice is still refused, by name
    with pytest.raises(ValueError, match="two bundles are named 'knowledge'"):
        KnowledgeManager.from_paths([one, one], state_cache=False)
