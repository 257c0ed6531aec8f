"""okfx: read access to Open Knowledge Format (OKF v0.2) bundles for AI agents.

Importing okfx never imports an agent framework; adapters live in ``okfx.adapters``.
"""

from .bundle import Bundle, Document, Neighbors
from .errors import (
    InvalidArgument,
    InvalidRegex,
    NotFound,
    OKFError,
    TooLarge,
    Unreadable,
    UnsafePath,
)
from .filters import ConceptFilter
from .grep import GrepMatch, GrepResults
from .limits import Limits
from .manager import KnowledgeManager
from .model import (
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
from .prompt import INSTRUCTIONS
from .ranking import BM25Ranker, Ranker
from .search import SearchHit, SearchIndex, SearchResults
from .sources import GitSource, SourceLimits
from .tools import TOOL_NAMES, Toolbox
from .trust import TRUST_TIERS
from .validate import ConformanceReport, validate

__version__ = "0.1.0"

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
