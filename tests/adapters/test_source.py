"""The adapters' shared plumbing: what a source may be, and the never-raising wrapper."""

from __future__ import annotations

import inspect
import json
import logging
from datetime import date

import pytest
from adapter_contract import KNOWLEDGE, PARAMS, raising

from okfx import TOOL_NAMES, Bundle, KnowledgeManager, Toolbox
from okfx.adapters._source import (
    guarded,
    guarded_tools,
    renamer,
    to_json,
    to_manager,
    toolbox,
)


def test_a_manager_is_used_as_is() -> None:
    manager = KnowledgeManager.from_paths([KNOWLEDGE])

    assert to_manager(manager) is manager


def test_a_toolbox_is_used_as_is_and_lends_its_manager() -> None:
    box = Toolbox(Bundle.load(KNOWLEDGE))

    assert toolbox(box) is box
    assert to_manager(box) is box.manager


def test_a_bundle_is_served_alone() -> None:
    bundle = Bundle.load(KNOWLEDGE)

    assert to_manager(bundle).bundles == {"knowledge": bundle}


@pytest.mark.parametrize("source", [str(KNOWLEDGE), KNOWLEDGE, [KNOWLEDGE], (str(KNOWLEDGE),)])
def test_a_path_or_a_list_of_paths_is_loaded(source: object) -> None:
    assert to_manager(source).names == ["knowledge"]


def test_a_mapping_names_the_bundles() -> None:
    assert to_manager({"bikes": KNOWLEDGE}).names == ["bikes"]


def test_guarded_tools_keep_the_toolbox_names_and_signatures() -> None:
    tools = guarded_tools(Toolbox(Bundle.load(KNOWLEDGE)))

    assert [tool.__name__ for tool in tools] == list(TOOL_NAMES)
    for tool in tools:
        assert list(inspect.signature(tool).parameters) == PARAMS[tool.__name__]
        assert tool.__doc__ == getattr(Toolbox, tool.__name__).__doc__


def test_guarded_turns_an_exception_into_a_logged_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    box = Toolbox(Bundle.load(KNOWLEDGE))
    broken = guarded(raising(Toolbox.read_concept).__get__(box))

    with caplog.at_level(logging.ERROR, logger="okfx"):
        result = broken(path="metrics/dock-availability")

    assert result["error"]["code"] == "internal_error"
    assert "secret detail" not in json.dumps(result)
    assert "secret detail" in caplog.text


def test_to_json_keeps_unicode_and_degrades_odd_values_to_text() -> None:
    text = to_json({"title": "Zürich", "day": date(2026, 1, 2)})

    assert json.loads(text) == {"title": "Zürich", "day": "2026-01-02"}
    assert text == '{"title":"Zürich","day":"2026-01-02"}'  # compact, as the cap counts it


def test_a_renamer_renames_tools_in_okfx_text_only() -> None:
    """What okfx writes names the tools as the model has them; a bundle's text does not
    change, nor does a name that is part of a longer one."""
    rename = renamer({"read_concept": "okf_read_concept", "list_bundles": "list_bundles"})
    result = {
        "error": {"code": "not_found", "message": "call read_concept(path='x')"},
        "notices": ["read_concept takes it; okf_read_concept stays; x.read_concept too"],
        "body": "read_concept is the body's word",
        "hits": [{"snippet": "read_concept(", "notice": "see read_concept"}],
    }
    assert rename(result) == {
        "error": {"code": "not_found", "message": "call okf_read_concept(path='x')"},
        "notices": ["okf_read_concept takes it; okf_read_concept stays; x.read_concept too"],
        "body": "read_concept is the body's word",
        "hits": [{"snippet": "read_concept(", "notice": "see okf_read_concept"}],
    }
    same = renamer({"read_concept": "read_concept"})
    assert same(result) is result


def test_a_renamer_says_a_tool_left_out_is_not_offered() -> None:
    """Agent QA F2: with only=[search_concepts, read_concept], an empty search advised
    grep_concepts, and a model that called it ended an OpenAI Agents run."""
    rename = renamer(
        {"search_concepts": "search_concepts", "read_concept": "read_concept"},
        ["search_concepts", "read_concept", "grep_concepts", "list_concepts"],
    )
    said = rename({"notice": "Try grep_concepts for a name, or list_concepts to browse."})
    assert said == {
        "notice": "Try grep_concepts (not offered here) for a name, or list_concepts "
        "(not offered here) to browse."
    }


def test_a_framework_whose_own_import_fails_is_not_called_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Framework QA: with one of the framework's dependencies broken, the message said
    "not installed", and its pip command changes nothing."""
    import importlib.abc
    import sys

    from okfx.adapters._optional import require

    monkeypatch.setitem(sys.modules, "okfx_fake_framework", None)
    with pytest.raises(ImportError, match="which is not installed"):
        require("okfx_fake_framework", "mcp")

    class Broken(importlib.abc.MetaPathFinder):  # the framework is there, its dependency not
        def find_spec(self, name: str, path: object, target: object = None) -> None:
            if name == "okfx_fake_outer":
                raise ModuleNotFoundError(
                    "No module named 'okfx_fake_inner'", name="okfx_fake_inner"
                )

    monkeypatch.setattr(sys, "meta_path", [Broken(), *sys.meta_path])
    with pytest.raises(ImportError, match="is installed but could not be imported"):
        require("okfx_fake_outer", "mcp")


@pytest.mark.parametrize("prefix", ["my kb", "okf.v1", "ok/f", "p" * 60])
def test_a_prefix_model_apis_would_refuse_is_refused_at_once(prefix: str) -> None:
    """Framework QA: "my kb" or "okf.v1" made tool names OpenAI and Gemini refuse, found
    only when a request was sent."""
    from okfx.adapters._source import exposed_names

    with pytest.raises(ValueError, match="makes names model APIs refuse"):
        exposed_names(Toolbox(Bundle.load(KNOWLEDGE)), prefix)
    assert exposed_names(Toolbox(Bundle.load(KNOWLEDGE)), "okf-v1")["read_concept"] == (
        "okf-v1_read_concept"
    )
