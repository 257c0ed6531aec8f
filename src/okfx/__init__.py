"""okfx: read access to Open Knowledge Format (OKF v0.2) bundles for AI agents.

Importing okfx never imports an agent framework; adapters live in ``okfx.adapters``.
"""

from okfx.attest.lint import validate
from okfx.bundle.bundle import Bundle, Document, Neighbors
from okfx.bundle.validate import ConformanceReport
from okfx.errors import (
    InvalidArgument,
    InvalidRegex,
    NotFound,
    OKFError,
    TooLarge,
    Unreadable,
    UnsafePath,
)
from okfx.limits import Limits
from okfx.model import (
    Computation,
    Concept,
    Generated,
    IndexEntry,
    IndexFile,
    IndexSection,
    Link,
    LogEntry,
    LogFile,
    Parameter,
    Problem,
    Source,
    UsageWindow,
    Verification,
)
from okfx.search.filters import ConceptFilter
from okfx.search.grep import GrepMatch, GrepResults
from okfx.search.index import SearchHit, SearchIndex, SearchResults
from okfx.search.ranking import BM25Ranker, Ranker
from okfx.sources import GitSource, SourceLimits
from okfx.tools.manager import KnowledgeManager
from okfx.tools.prompt import INSTRUCTIONS
from okfx.tools.toolbox import TOOL_NAMES, Toolbox
from okfx.trust import TRUST_TIERS
from okfx.version import __version__

__all__ = [
    "BM25Ranker",
    "Bundle",
    "Computation",
    "Concept",
    "ConceptFilter",
    "ConformanceReport",
    "Document",
    "Generated",
    "GitSource",
    "GrepMatch",
    "GrepResults",
    "INSTRUCTIONS",
    "IndexEntry",
    "IndexFile",
    "IndexSection",
    "InvalidArgument",
    "InvalidRegex",
    "KnowledgeManager",
    "Limits",
    "Link",
    "LogEntry",
    "LogFile",
    "Neighbors",
    "NotFound",
    "OKFError",
    "Parameter",
    "Problem",
    "Ranker",
    "SearchHit",
    "SearchIndex",
    "SearchResults",
    "Source",
    "SourceLimits",
    "TOOL_NAMES",
    "TRUST_TIERS",
    "TooLarge",
    "Toolbox",
    "Unreadable",
    "UnsafePath",
    "UsageWindow",
    "Verification",
    "__version__",
    "validate",
]
