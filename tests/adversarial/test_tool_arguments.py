"""Tool arguments: wrong types, absurd numbers and hostile patterns give a stable error code.

Every parameter of every tool gets values of the wrong type (derived from the Toolbox
signatures, so a new parameter is covered automatically); the answer must be an error
result with a stable code, never an exception or ``internal_error``. Numbers far out of
range are clamped or refused, and grep patterns built for catastrophic backtracking run in
linear time (grep uses RE2). ``tests/test_tools.py`` covers the ordinary error cases.
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import Any

import pytest
from hostile import (
    GROWTH_BOUND,
    STABLE_CODES,
    assert_clean,
    call,
    concept,
    error_code,
    growth,
    write,
)

from okfx import TOOL_NAMES, Bundle, Toolbox

REQUIRED = {
    "search_concepts": {"query": "alpha"},
    "grep_concepts": {"pattern": "alpha"},
    "read_concept": {"path": "a"},
    "get_neighbors": {"path": "a"},
    "read_resource": {"path": "r.sql"},
    "prepare_computation": {"path": "a"},
    "check_attestation": {"path": "a", "receipt": {}},
}


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Toolbox:
    root = write(
        tmp_path_factory.mktemp("args"),
        {
            "a.md": concept(title="alpha", body="# Head\nalpha " * 500 + "[b](b.md)\n"),
            "b.md": concept(title="beta", tags="[x, y]"),
            "r.sql": "select 1;\n",
        },
    )
    return Toolbox(Bundle.load(root))


def kind(annotation: Any) -> str:
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    optional = typing.get_origin(annotation) is typing.Union
    base = args[0] if optional else annotation
    if typing.get_origin(base) is dict:
        return ("opt_" if optional else "") + "dict"
    name = {str: "str", bool: "bool", int: "int", float: "num_or_str"}.get(base, "list")
    return ("opt_" if optional else "") + name


WRONG: dict[str, list[Any]] = {
    "str": [None, 5, 1.5, True, ["a"], {"a": 1}, b"a"],
    "opt_str": [5, 1.5, True, ["a"], {"a": 1}, b"a"],
    "opt_list": [5, True, 1.5, {"a": 1}, [1], [None], [["a"]], b"a"],
    "bool": [None, "true", 1, 0, 1.0, [True], {"a": 1}],
    "int": [None, "5", 1.5, True, [1], {"a": 1}, float("nan"), float("inf"), -1, -(10**30)],
    "opt_int": ["5", 1.5, True, [1], float("nan"), 0, -(10**30)],
    "dict": [None, 5, 1.5, True, ["a"], "x", b"a"],
    "opt_dict": [5, 1.5, True, ["a"], "x", b"a"],
    "opt_num_or_str": [True, ["a"], {"a": 1}, b"a"],
}


def wrong_cases() -> list[tuple[str, str, Any]]:
    cases = []
    for tool in TOOL_NAMES:
        params = list(inspect.signature(getattr(Toolbox, tool)).parameters.values())[1:]
        for param in params:
            for value in WRONG[kind(param.annotation)]:
                cases.append((tool, param.name, value))
    return cases


@pytest.mark.parametrize(
    ("tool", "name", "value"),
    wrong_cases(),
    ids=[f"{t}-{n}-{v!r:.20}" for t, n, v in wrong_cases()],
)
def test_a_wrong_type_in_any_argument_is_invalid_argument(
    box: Toolbox, tool: str, name: str, value: Any
) -> None:
    arguments = {**REQUIRED.get(tool, {}), name: value}
    result = call(box, tool, **arguments)
    assert error_code(result) == "invalid_argument", result


def test_every_parameter_kind_has_wrong_values() -> None:
    kinds = {
        kind(p.annotation)
        for tool in TOOL_NAMES
        for p in list(inspect.signature(getattr(Toolbox, tool)).parameters.values())[1:]
    }
    assert kinds <= set(WRONG)


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_unknown_and_extra_positional_arguments_are_invalid(box: Toolbox, tool: str) -> None:
    extra = call(box, tool, **REQUIRED.get(tool, {}), evil="$(touch /tmp/x)")
    assert error_code(extra) == "invalid_argument"
    positional = getattr(box, tool)(*REQUIRED.get(tool, {}).values(), *range(12))
    assert error_code(assert_and_return(positional)) == "invalid_argument"


def assert_and_return(result: Any) -> dict[str, Any]:
    assert_clean(result)
    return result  # type: ignore[no-any-return]


@pytest.mark.parametrize("tool", [t for t in TOOL_NAMES if t in REQUIRED])
def test_a_missing_required_argument_is_invalid(box: Toolbox, tool: str) -> None:
    assert error_code(call(box, tool)) == "invalid_argument"


HUGE = [10**30, 10**400, 2**63, 2**64 + 1]


@pytest.mark.parametrize("value", HUGE, ids=lambda v: f"2^{v.bit_length()}")
@pytest.mark.parametrize(
    ("tool", "rows", "ceiling"),
    [
        ("list_concepts", "concepts", 200),
        ("search_concepts", "hits", 50),
        ("grep_concepts", "matches", 200),
    ],
)
def test_huge_limits_are_clamped(
    box: Toolbox, tool: str, rows: str, ceiling: int, value: int
) -> None:
    result = call(box, tool, **{**REQUIRED.get(tool, {}), "limit": value})
    assert error_code(result) is None, result
    assert isinstance(result[rows], list) and len(result[rows]) <= ceiling


@pytest.mark.parametrize("value", HUGE, ids=lambda v: f"2^{v.bit_length()}")
def test_a_huge_max_chars_is_clamped(box: Toolbox, value: int) -> None:
    result = call(box, "read_concept", path="a", max_chars=value)
    assert error_code(result) is None
    assert len(result["body"]) == result["body_chars"]


@pytest.mark.parametrize("value", HUGE, ids=lambda v: f"2^{v.bit_length()}")
@pytest.mark.parametrize("tool", ["read_concept", "list_concepts"])
def test_a_huge_offset_is_clamped_to_the_end(box: Toolbox, tool: str, value: int) -> None:
    result = call(box, tool, **{**REQUIRED.get(tool, {}), "offset": value})
    assert error_code(result) is None
    end = result["body_chars"] if tool == "read_concept" else result["total"]
    assert result["offset"] <= end
    assert result.get("body", "") == "" and result.get("concepts", []) == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"pattern": "x" * 1_001},
        {"pattern": "x" * 1_000_000},
        {"pattern": "(a)\\1", "regex": True},
        {"pattern": "(?=a)a", "regex": True},
        {"pattern": "(?<=a)b", "regex": True},
        {"pattern": "[", "regex": True},
        {"pattern": "a{100000}", "regex": True},
        {"pattern": "((((((((((a{1000}){1000}){1000}))))))))", "regex": True},
        {"pattern": "\x00", "regex": True},
        {"pattern": ""},
    ],
    ids=lambda a: repr(a["pattern"][:24]),
)
def test_unrunnable_or_oversized_grep_patterns_get_a_stable_code(
    box: Toolbox, arguments: dict[str, Any]
) -> None:
    result = call(box, "grep_concepts", **arguments)
    code = error_code(result)
    assert code is None or code in STABLE_CODES, result


REDOS = ["(a+)+$", "(a|a)*$", "(a*)*b", "(.*a){20}", "^(([a-z])+.)+[A-Z]([a-z])+$", "(a|aa)+$"]


@pytest.fixture(scope="module")
def long_lines(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Toolbox]:
    base = tmp_path_factory.mktemp("redos")
    boxes = {}
    for n in (12_500, 100_000):
        body = "a" * n + "!\n" + "b" * n + "\n"
        root = write(base / str(n), {"a.md": concept(body=body), "b.md": concept(title="a" * n)})
        boxes[n] = Toolbox(Bundle.load(root))
    return boxes


@pytest.mark.parametrize("pattern", REDOS)
def test_catastrophic_regexes_run_in_linear_time(
    long_lines: dict[int, Toolbox], pattern: str
) -> None:
    def grep(box: Toolbox) -> object:
        return call(box, "grep_concepts", pattern=pattern, regex=True, ignore_case=True)

    assert growth(grep, lambda n: long_lines[n], 12_500) < GROWTH_BOUND


def test_search_survives_long_unicode_and_operator_queries(box: Toolbox) -> None:
    for query in (
        "a" * 2_000,
        " ".join(f"w{i}" for i in range(400)),
        "\ufdfa" * 500,  # NFKC expands each to 18 characters
        "* ? [ ] ( ) : ^ ~ AND OR NOT \" ' \\",
        "\x00\x01\x02",
        "",
    ):
        call(box, "search_concepts", query=query)
    assert error_code(box.search_concepts(query="a" * 100_000)) in STABLE_CODES


def test_tags_and_filters_accept_odd_but_valid_values(box: Toolbox) -> None:
    for arguments in (
        {"tags": []},
        {"tags": [""]},
        {"tags": "x"},
        {"tags": ["x"] * 1_000},
        {"type": ""},
        {"directory": "/"},
        {"directory": ""},
        {"trust_tier": None},
    ):
        result = call(box, "list_concepts", **arguments)
        code = error_code(result)
        assert code is None or code in STABLE_CODES, (arguments, result)


def test_tool_answers_are_fresh_and_independent(tmp_path: Path) -> None:
    root = write(tmp_path / "b", {"a.md": concept(title="alpha", owner="team")})
    box = Toolbox(Bundle.load(root))
    first = call(box, "read_concept", path="a")
    first["extensions"]["owner"] = "changed by the caller"
    first["tags"].append("x")
    again = call(box, "read_concept", path="a")
    assert again["extensions"]["owner"] == "team" and again["tags"] == []


@pytest.mark.parametrize("tool", ["list_concepts", "search_concepts", "grep_concepts"])
def test_a_list_argument_nested_thousands_deep_is_an_invalid_argument(
    box: Toolbox, tool: str
) -> None:
    """Security QA: tags sent as the JSON text "[" * 2000 raised RecursionError out of
    every adapter's tool (MCP answered internal_error); as a value nested that deep too."""
    from okfx.tools.arguments import ToolArguments

    checked = ToolArguments({name: getattr(box, name) for name in (tool,)})
    needed = {"search_concepts": {"query": "x"}, "grep_concepts": {"pattern": "x"}}.get(tool, {})
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    for tags in ("[" * 2000, "[" * 2000 + "]" * 2000, deep):
        result = checked.call(tool, {**needed, "tags": tags})
        assert result["error"]["code"] == "invalid_argument", result
