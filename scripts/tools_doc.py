#!/usr/bin/env python3
"""Print the parameter table of every tool, as docs/tools.md holds it (tests compare)."""

from __future__ import annotations

import inspect
import typing
from typing import Any

from okfx import Toolbox
from okfx.tools.toolbox import RUN_TOOL
from okfx.tools.toolbox import TOOL_NAMES as CONTRACT

#: Every tool, run_computation last (it is offered only with a configured executor).
TOOL_NAMES = (*CONTRACT, RUN_TOOL)


def _type_name(annotation: Any) -> str:
    base = typing.get_args(annotation)[0] if hasattr(annotation, "__metadata__") else annotation
    text = str(base).replace("typing.", "")
    return text if not isinstance(base, type) else base.__name__


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
    return "\n".join(rows) + "\n"


def main() -> None:
    print("\n".join(tool_table(name) for name in TOOL_NAMES))


if __name__ == "__main__":
    main()
