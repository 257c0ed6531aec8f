"""The agent tools' canonical names, in one place for the toolbox, its adapters and the
prompt block that calls them by name."""

from __future__ import annotations

__all__ = ["RUN_TOOL", "TOOL_NAMES"]

#: The canonical tool names, in the order adapters register them.
TOOL_NAMES = (
    "list_bundles",
    "list_concepts",
    "search_concepts",
    "grep_concepts",
    "read_concept",
    "get_neighbors",
    "read_resource",
    "prepare_computation",
    "check_attestation",
)
#: The tool that runs a computation: offered only with a configured executor, not read-only.
RUN_TOOL = "run_computation"
