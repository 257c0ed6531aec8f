#!/usr/bin/env python3
"""Print every tool's parameters and result keys, as docs/tools.md holds them (tests compare).

The parameters come from the signatures; the result keys from :mod:`okfx.tools.results`.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

from okfx import Toolbox
from okfx.tools.results import ERROR, RESULTS, Table
from okfx.tools.toolbox import RUN_TOOL
from okfx.tools.toolbox import TOOL_NAMES as CONTRACT

#: Every tool, run_computation last (it is offered only with a configured executor).
TOOL_NAMES = (*CONTRACT, RUN_TOOL)


def _type_name(annotation: Any) -> str:
    base = typing.get_args(annotation)[0] if hasattr(annotation, "__metadata__") else annotation
    text = str(base).replace("typing.", "")
    return text if not isinstance(base, type) else base.__name__


def key_table(table: Table) -> str:
    """One object's keys: where it sits and what it is, then a row a key."""
    where = ", ".join(f"`{at}`" for at in table.at if at)
    rows = [f"{where}, {table.title}:" if where else f"{table.title[0].upper()}{table.title[1:]}:"]
    rows.append("")
    rows += ["| key | type | when | what |", "|---|---|---|---|"]
    rows += [f"| `{k.name}` | {k.type} | {k.when} | {k.what} |" for k in table.keys]
    return "\n".join(rows) + "\n"


def tool_table(name: str) -> str:
    method = getattr(Toolbox, name)
    summary = (inspect.getdoc(method) or "").strip()
    rows = [f"## {name}", "", summary, "", "| parameter | type | default | description |"]
    rows.append("|---|---|---|---|")
    for pname, param in list(inspect.signature(method).parameters.items())[1:]:
        meta = param.annotation.__metadata__[0]
        default = "required" if param.default is inspect.Parameter.empty else repr(param.default)
        rows.append(
            f"| `{pname}` | `{_type_name(param.annotation)}` | {default} | {meta.description} |"
        )
    results = "\n".join(key_table(table) for table in RESULTS[name])
    return "\n".join(rows) + "\n\n" + results


def error_table() -> str:
    """The one shape of a failed call, whatever the tool."""
    intro = "## A failed call\n\nEvery tool, when a call fails (the codes are listed above).\n"
    return intro + "\n" + "\n".join(key_table(table) for table in ERROR)


def block() -> str:
    """The generated part of docs/tools.md, between its markers."""
    return "\n".join([*(tool_table(name) for name in TOOL_NAMES), error_table()])


def main() -> None:
    print(block())


if __name__ == "__main__":
    main()
