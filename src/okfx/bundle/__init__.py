"""Reading a bundle: from a folder on disk to a :class:`Bundle` of typed concepts.

Owns the walk (:mod:`~okfx.bundle.walk`), the path guard (:mod:`~okfx.bundle.paths`), the
frontmatter split and YAML readers (:mod:`~okfx.bundle.frontmatter`,
:mod:`~okfx.bundle.quickyaml`), field normalisation (:mod:`~okfx.bundle.fields`), links
(:mod:`~okfx.bundle.links`), the reserved ``index.md``/``log.md`` files
(:mod:`~okfx.bundle.reserved`), turning one file into a concept (:mod:`~okfx.bundle.parse`),
a bundle's state as a state file (:mod:`~okfx.bundle.state`), concepts whose bodies stay in
their files (:mod:`~okfx.bundle.stored`), incremental reload (:mod:`~okfx.bundle.reload`),
the :class:`Bundle` itself and the spec §11 conformance report (:mod:`~okfx.bundle.validate`).

May import: :mod:`okfx.search` (``Bundle.search`` builds on it), :mod:`okfx.sources` (git
URLs and archives) and the core modules (``model``, ``errors``, ``limits``, ``trust``,
``gcpause``, ``memory``). Must not import ``okfx.tools``, ``okfx.cli``, ``okfx.web`` or
``okfx.adapters``.
"""

from okfx.bundle.bundle import Bundle, Document, Neighbors
from okfx.bundle.validate import ConformanceReport, validate

__all__ = ["Bundle", "ConformanceReport", "Document", "Neighbors", "validate"]
