"""okfx.tools.arguments: raw JSON arguments checked against the tool signatures."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import PROJECT_ROOT
from okfx import TOOL_NAMES, Bundle, Toolbox
from okfx.errors import OKFError
from okfx.tools.arguments import ToolArguments

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"


@pytest.fixture(scope="module")
def box() -> Toolbox:
    return Toolbox(Bundle.load(EXAMPLE))


@pytest.fixture(scope="module")
def checked(box: Toolbox) -> ToolArguments:
    return ToolArguments({tool.__name__: tool for tool in box.tools()})


def test_good_arguments_reach_the_tool_converted_and_only_those_given(
    checked: ToolArguments,
) -> None:
    assert checked.check("list_concepts", {"limit": "3", "tags": '["stations"]'}) == {
        "limit": 3,
        "tags": ["stations"],
    }
    assert checked.check("read_concept", {"path": "tables/trips"}) == {"path": "tables/trips"}
    assert checked.call("list_concepts", {"limit": 2})["concepts"].__len__() == 2


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("read_concept", {}, "read_concept: path is required: a string (Bundle-relative"),
        (
            "list_concepts",
            {"limit": 0},
            "list_concepts: limit must be an integer from 1 to 200, got 0.",
        ),
        (
            "list_concepts",
            {"tags": "bikes"},
            'tags must be a list of strings such as ["a", "b"], or null, got \'bikes\' '
            '(one value goes in a list: ["bikes"]).',
        ),
        ("read_concept", {"path": "x", "offset": -1}, "offset must be an integer of at least 0"),
        (
            "list_concepts",
            {"query": "x"},
            "list_concepts: no argument 'query' here (search_concepts takes it); it takes "
            "bundle, directory, type, tags, trust_tier, include_deprecated, include_stale, "
            "limit, offset, version.",
        ),
        (
            "read_concept",
            {"path": "x", "limit": 5},
            "no argument 'limit' here (list_concepts and search_concepts and grep_concepts "
            "and get_neighbors take it)",
        ),
        ("list_bundles", {"x": 1}, "no other tool takes it either); it takes no arguments."),
        ("grep_concepts", {"pattern": 5, "regex": "no"}, "pattern must be a string, got 5."),
    ],
)
def test_each_bad_argument_is_named_with_its_valid_form(
    checked: ToolArguments, tool: str, arguments: dict[str, Any], message: str
) -> None:
    result = checked.call(tool, arguments)
    assert result["error"]["code"] == "invalid_argument"
    assert message in result["error"]["message"]


def test_every_bad_argument_of_one_call_is_named(checked: ToolArguments) -> None:
    result = checked.call("search_concepts", {"query": 1, "limit": "x", "colour": "red"})
    message = result["error"]["message"]
    for name in ("query", "limit", "'colour'"):
        assert name in message


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tool=st.sampled_from(TOOL_NAMES),
    arguments=st.dictionaries(
        st.sampled_from(["path", "query", "pattern", "limit", "offset", "tags", "regex", "x"]),
        JSON,
        max_size=4,
    ),
)
def test_any_json_arguments_give_a_result_or_an_error_naming_each_bad_one(
    checked: ToolArguments, tool: str, arguments: dict[str, Any]
) -> None:
    result = checked.call(tool, arguments)  # never raises
    assert isinstance(result, dict)
    error = result.get("error")
    if error is None or error["code"] != "invalid_argument":
        return
    params = inspect.signature(getattr(Toolbox, tool)).parameters
    named = [name for name in arguments if name in error["message"]]
    missing = [n for n, p in params.items() if n != "self" and p.default is p.empty]
    assert named or any(name in error["message"] for name in missing), (arguments, error)


def test_a_boolean_argument_takes_the_words_and_numbers_mcp_md_lists(
    checked: ToolArguments,
) -> None:
    """QA: "yes" and 1 were read as true, undocumented; docs/mcp.md now lists them."""

    def read(value: Any) -> Any:
        return checked.check("grep_concepts", {"pattern": "x", "regex": value})["regex"]

    for word in ("true", "yes", "on", "y", "t", "1", "YES"):
        assert read(word) is True, word
    for word in ("false", "no", "off", "n", "f", "0", "Off"):
        assert read(word) is False, word
    assert (read(1), read(0)) == (True, False)
    for other in (None, 2, "", "yes ", "1.0"):
        with pytest.raises(OKFError, match="regex must be true or false"):
            read(other)


def test_the_value_to_check_keeps_its_json_type(checked: ToolArguments) -> None:
    """AC QA: over MCP, `value: true` was read as 1.0 and matched a result of 1, and an
    integer past 2**53 lost its last digit and matched another result."""
    big = 9_007_199_254_740_993
    given = {"path": "p", "receipt": {}}
    assert checked.check("check_attestation", {**given, "value": big})["value"] == big
    assert checked.check("check_attestation", {**given, "value": 3.5})["value"] == 3.5
    with pytest.raises(OKFError, match="value must be a number or a string, or null, got true"):
        checked.check("check_attestation", {**given, "value": True})


def test_an_object_argument_says_an_object_is_wanted(checked: ToolArguments) -> None:
    # AC QA: "receipt must be a JSON value, got [1]", [1] being one
    with pytest.raises(OKFError, match=r'receipt must be an object such as \{"name": value\}'):
        checked.check("check_attestation", {"path": "p", "receipt": [1]})
