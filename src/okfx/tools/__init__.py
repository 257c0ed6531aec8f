"""The agent tool contract: what every adapter exposes, as JSON-able dicts that never raise.

Owns :class:`Toolbox` (the tool signatures a model sees, :mod:`~okfx.tools.toolbox`), the
work behind each tool (:mod:`~okfx.tools.views`), the one place payloads and error results
are built (:mod:`~okfx.tools.payloads`), the ``<knowledge>`` prompt block
(:mod:`~okfx.tools.prompt`) and :class:`KnowledgeManager`, several bundles served together
(:mod:`~okfx.tools.manager`).

May import :mod:`okfx.bundle`, :mod:`okfx.search`, :mod:`okfx.sources` and the core
modules. Must not import ``okfx.cli``, ``okfx.web`` or ``okfx.adapters``, and imports no
agent framework.
"""

from okfx.tools.manager import KnowledgeManager
from okfx.tools.prompt import INSTRUCTIONS
from okfx.tools.toolbox import TOOL_NAMES, Toolbox

__all__ = ["INSTRUCTIONS", "TOOL_NAMES", "KnowledgeManager", "Toolbox"]
