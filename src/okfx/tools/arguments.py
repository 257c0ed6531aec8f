"""Raw tool-call arguments (JSON from a model) checked against each tool's signature.

A transport that hands okfx the arguments a model wrote (the MCP server) checks them here
before the tool runs: every missing, mistyped, out-of-range or unknown argument becomes
one ``invalid_argument`` error whose message names the argument and the form it takes,
read from the same JSON schema the model was shown (the tool's signature). For an unknown
argument the message names the tools that do take it, so a model that picked the wrong
tool learns which one to use.

Values are converted as the MCP SDK converted them (``"5"`` is 5; a list sent as JSON
text is a list), so no client that worked before is refused now.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from okfx.errors import InvalidArgument, OKFError
from okfx.tools.payloads import error_payload

__all__ = ["ToolArguments"]

Tool = Callable[..., dict[str, Any]]

_SHOWN_CHARS = 60


class ToolArguments:
    """The argument check for a set of tools, by name (the schemas are built once)."""

    def __init__(self, tools: Mapping[str, Tool]) -> None:
        self.tools = dict(tools)
        self._models = {name: _model(name, tool) for name, tool in self.tools.items()}
        self._schemas = {
            name: model.model_json_schema()["properties"] for name, model in self._models.items()
        }

    def check(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments to call ``tool`` with: only those given, converted.

        Raises :class:`~okfx.errors.InvalidArgument` naming every bad argument.
        """
        schema = self._schemas[tool]
        given = {
            name: _within(_from_json_text(value, schema.get(name)), schema.get(name))
            for name, value in arguments.items()
        }
        flags = [name for name, value in given.items() if _flag_for_number(value, schema.get(name))]
        if flags:  # JSON's true is no count, though Python's bool is an int
            raise InvalidArgument(
                f"{tool}: "
                + " ".join(
                    f"{name} must be {_form(schema[name])}, got {_shown(given[name])}."
                    for name in flags
                )
            )
        try:
            checked = self._models[tool].model_validate(given)
        except ValidationError as exc:
            raise InvalidArgument(self._message(tool, given, exc)) from None
        except RecursionError:  # a list nested thousands deep, sent as a value
            raise InvalidArgument(f"{tool}: an argument is nested too deeply") from None
        out: dict[str, Any] = {}
        for name in checked.model_fields_set:
            value, sent = getattr(checked, name), given.get(name)
            # An integer stays exact where a float is taken too (AC QA: the value to
            # check against a result, 9007199254740993, was 9007199254740992.0).
            exact = isinstance(value, float) and type(sent) is int
            out[name] = sent if exact else value
        return out

    def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check the arguments, then run ``tool``; a bad argument is an error result."""
        try:
            kwargs = self.check(tool, arguments)
        except OKFError as exc:
            return error_payload(exc)
        return self.tools[tool](**kwargs)

    # -- messages ------------------------------------------------------------------------
    def _message(self, tool: str, given: Mapping[str, Any], exc: ValidationError) -> str:
        schema = self._schemas[tool]
        parts: list[str] = []
        seen: set[str] = set()
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else ""
            if name in seen:  # one sentence per argument (a union reports each branch)
                continue
            seen.add(name)
            if error["type"] == "extra_forbidden":
                parts.append(self._unknown(tool, name))
            elif error["type"] == "missing":
                parts.append(f"{name} is required: {_form(schema[name])}{_about(schema[name])}.")
            else:
                value = given.get(name)
                hint = (
                    f" (one value goes in a list: {json.dumps([value])})"
                    if _is_list(schema[name]) and isinstance(value, str)
                    else ""
                )
                parts.append(f"{name} must be {_form(schema[name])}, got {_shown(value)}{hint}.")
        return f"{tool}: " + " ".join(parts)

    def _unknown(self, tool: str, name: str) -> str:
        takers = [other for other, props in self._schemas.items() if name in props]
        where = (
            f"{' and '.join(takers)} {'takes' if len(takers) == 1 else 'take'} it"
            if takers
            else "no other tool takes it either"
        )
        own = self._schemas[tool]
        takes = f"it takes {', '.join(own)}" if own else "it takes no arguments"
        return f"no argument {name!r} here ({where}); {takes}."


def _model(name: str, tool: Tool) -> type[BaseModel]:
    """A pydantic model of the tool's parameters that refuses unknown arguments."""
    fields: dict[str, Any] = {}
    for param in inspect.signature(tool).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (param.annotation, default)
    config = ConfigDict(extra="forbid")
    model: type[BaseModel] = create_model(name, __config__=config, **fields)
    return model


def _branches(schema: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], bool]:
    """The non-null alternatives of a property schema, and whether null is allowed."""
    options = schema.get("anyOf") or [schema]
    kept = [option for option in options if option.get("type") != "null"]
    return kept, len(kept) < len(options)


def _is_list(schema: Mapping[str, Any] | None) -> bool:
    return schema is not None and any(b.get("type") == "array" for b in _branches(schema)[0])


def _form(schema: Mapping[str, Any]) -> str:
    """The valid form of a property, in words: "an integer from 1 to 200", "a string"."""
    branches, nullable = _branches(schema)
    words = " or ".join(_one_form(branch) for branch in branches) or "null"
    return f"{words}, or null" if nullable and branches else words


def _one_form(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None and high is not None:
            return f"an integer from {low} to {high}"
        if low is not None:
            return f"an integer of at least {low}"
        return "an integer" if high is None else f"an integer of at most {high}"
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        item = _one_form(schema.get("items") or {})
        plural = item.removeprefix("a ").removeprefix("an ") + "s"
        return (
            f'a list of {plural} such as ["a", "b"]'
            if item == "a string"
            else f"a list of {plural}"
        )
    if kind == "string":
        return "a string"
    if kind == "number":
        return "a number"
    if kind == "object":
        return 'an object such as {"name": value}'
    return "a JSON value"


def _about(schema: Mapping[str, Any]) -> str:
    description = schema.get("description")
    return f" ({description.rstrip('.')})" if description else ""


def _shown(value: Any) -> str:
    """The value a model sent, short enough for a message."""
    try:
        text = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    except (ValueError, RecursionError):  # a list nested thousands deep (security QA)
        return "a value nested too deeply to show"
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _integer(schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The integer branch of a property's schema, if it has one."""
    if not schema:
        return None
    branches, _ = _branches(schema)
    return next((b for b in branches if b.get("type") == "integer"), None)


def _within(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """An integer above its property's maximum (``"limit": 100000``) as the maximum, as
    the tools read it called from Python: a model asking for more gets all there is, not
    an error to retry (MCP QA: the two paths disagreed)."""
    branch = _integer(schema)
    if branch is None or isinstance(value, bool) or not isinstance(value, int):
        return value
    high = branch.get("maximum")
    return high if isinstance(high, int) and value > high else value


def _flag_for_number(value: Any, schema: Mapping[str, Any] | None) -> bool:
    """Whether a boolean was sent for a property that takes a number and no boolean
    (``"limit": true``; ``"value": true`` for a number or a string, which pydantic read
    as 1.0 and matched a result of 1: AC QA)."""
    if not isinstance(value, bool) or schema is None:
        return False
    kinds = {b.get("type") for b in _branches(schema)[0]}
    return bool(kinds & {"integer", "number"}) and kinds <= {"integer", "number", "string"}


def _from_json_text(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """A list sent as JSON text (some clients do that) becomes the list."""
    if isinstance(value, str) and _is_list(schema):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):  # "[" * 2000 (security QA): left as text
            return value
        if isinstance(parsed, list):
            return parsed
    return value
