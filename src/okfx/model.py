"""The data model: concepts, links, sources, index and log files. No I/O here.

Values are normalised at load time (see :mod:`okfx.bundle.fields`); the raw frontmatter
mapping is kept as ``Concept.frontmatter`` with unknown keys (spec §4.1 extensions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from itertools import repeat
from operator import call
from typing import Any, NamedTuple, TypeVar

from okfx.trust import is_stale

_T = TypeVar("_T")

__all__ = [
    "Computation",
    "Concept",
    "Generated",
    "IdRef",
    "IndexEntry",
    "IndexFile",
    "IndexSection",
    "Link",
    "LogEntry",
    "LogFile",
    "Parameter",
    "Problem",
    "Source",
    "UsageWindow",
    "Verification",
]


class Problem(NamedTuple):
    """One load warning: the bundle path it concerns, a stable code and a message."""

    path: str
    code: str
    message: str


class Link(NamedTuple):
    """A directed edge from ``source`` to ``target`` (both canonical bundle paths).

    ``field`` is ``"body"`` for markdown links, else the frontmatter field it came from
    (``resource``, ``sources[0].resource``, ``computation``, ``executor.resource``,
    ``attester.resource``). ``exists`` says whether ``target`` is a file of the bundle.
    """

    source: str
    target: str
    href: str
    text: str
    field: str
    line: int
    exists: bool

    def __reduce__(self) -> tuple[Callable[..., Link], tuple[Any, ...]]:
        # Rebuilt by tuple.__new__ in C: a bundle holds several links per concept, and
        # the NamedTuple constructor is a Python-level call (see okfx.records).
        return tuple.__new__, (Link, tuple(self))


class IdRef(NamedTuple):
    """A producer's relation key naming another concept by its frontmatter ``id``
    (``related: [flutter.widget_identity]``), *beyond the spec*: ``field`` is the key,
    ``value`` the id as written, ``line`` the key's line in the file (0 when unknown).
    The bundle turns it into a :class:`Link` once it knows every concept's id
    (:mod:`okfx.bundle.idlinks`)."""

    field: str
    value: str
    line: int


def _positional_pickle(cls: type[_T]) -> type[_T]:
    """Pickle a frozen slotted dataclass as ``cls(*fields)``: the dataclass default
    (a state dict set through ``object.__setattr__`` after looking the fields up) costs
    several times more per object, and a restart reads hundreds of thousands of them."""
    names: tuple[str, ...] = cls.__slots__  # type: ignore[attr-defined]

    def __reduce__(self: _T) -> tuple[type[_T], tuple[Any, ...]]:
        return cls, tuple([getattr(self, name) for name in names])

    cls.__reduce__ = __reduce__  # type: ignore[assignment,method-assign]
    return cls


@_positional_pickle
@dataclass(frozen=True, slots=True)
class UsageWindow:
    start: datetime | None
    end: datetime | None


@_positional_pickle
@dataclass(frozen=True, slots=True)
class Source:
    """One ``sources`` entry (spec §5.1) with its credibility signals."""

    resource: str
    id: str | None = None
    title: str | None = None
    author: str | None = None
    usage_count: int | None = None
    last_modified: datetime | None = None
    usage_window: UsageWindow | None = None


@_positional_pickle
@dataclass(frozen=True, slots=True)
class Generated:
    """``generated: {by, at}`` (spec §5.2); ``legacy`` when ``at`` came from v0.1 ``timestamp``."""

    by: str | None
    at: datetime | None
    legacy: bool = False


@_positional_pickle
@dataclass(frozen=True, slots=True)
class Verification:
    by: str
    at: datetime | None


@_positional_pickle
@dataclass(frozen=True, slots=True)
class Parameter:
    """One declared parameter of an Attested Computation (spec §10.2: ``{name, type,
    required}``), with the constraints some producers add: ``default`` (bound when no
    value is given), ``example``, ``enum`` (the values allowed) and ``minimum`` /
    ``maximum`` (``min`` / ``max``), kept as YAML read them; None when absent."""

    name: str
    type: str | None
    required: bool
    default: Any = None
    example: Any = None
    enum: tuple[Any, ...] | None = None
    minimum: Any = None
    maximum: Any = None


@_positional_pickle
@dataclass(frozen=True, slots=True)
class Computation:
    """The Attested Computation contract (spec §10). okfx records it; it never runs it."""

    runtime: str | None
    parameters: tuple[Parameter, ...]
    computation_path: str | None  # the ``computation`` field, when the code is a file
    inline: str | None  # the fenced block under ``# Computation``, when inline
    inline_language: str | None
    executor_resource: str | None
    receipt: tuple[str, ...]
    attester_resource: str | None

    @property
    def twice(self) -> bool:
        """Whether it names a computation file and has a ``# Computation`` block as well:
        the file is the one bound (spec §10.3 asks to omit the block when it is given)."""
        return self.computation_path is not None and self.inline is not None


class Concept:
    """One concept document (spec §4). Build through :meth:`Bundle.load`."""

    __slots__ = (
        "path",
        "id",
        "type",
        "title",
        "description",
        "resource",
        "tags",
        "aliases",
        "status",
        "stale_after",
        "sources",
        "usage_window",
        "generated",
        "verified",
        "trust_tier",
        "computation",
        "citations",
        "links",
        "external_links",
        "declared_id",
        "id_refs",
        "frontmatter",
        "body",
        "body_line",
    )

    path: str
    id: str
    type: str
    title: str
    description: str
    resource: str | None
    tags: tuple[str, ...]
    aliases: tuple[str, ...]  # other names (the producer key ``aliases``), searched as title
    status: str
    stale_after: datetime | None
    sources: tuple[Source, ...]
    usage_window: UsageWindow | None
    generated: Generated | None
    verified: tuple[Verification, ...]
    trust_tier: str
    computation: Computation | None
    citations: tuple[str, ...]
    links: tuple[Link, ...]
    external_links: tuple[str, ...]
    # A producer's own ``id`` key (the concept's ID is its path, spec §2) and the ids its
    # relation keys name, beyond the spec (okfx.bundle.idlinks draws those edges).
    declared_id: str | None
    id_refs: tuple[IdRef, ...]
    frontmatter: dict[str, Any]
    body: str
    body_line: int

    def __init__(self, **values: Any) -> None:
        for name, set_slot in _CONCEPT_SLOTS:
            set_slot(self, values[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Concept is read-only")

    # Immutable: copies are the object itself; pickling restores the slots directly.
    def __copy__(self) -> Concept:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Concept:
        return self

    def __reduce__(self) -> tuple[Callable[[tuple[Any, ...]], Concept], tuple[Any, ...]]:
        return _concept_from, (tuple([getattr(self, name) for name in self.__slots__]),)

    def __repr__(self) -> str:
        return f"<Concept {self.path} type={self.type!r}>"

    @property
    def directory(self) -> str:
        """The bundle directory holding the concept (``/`` for the root)."""
        return self.path.rsplit("/", 1)[0] or "/"

    @property
    def last_verified(self) -> datetime | None:
        """The latest ``verified[].at`` ("how recently", spec §5.2)."""
        times = [v.at for v in self.verified if v.at is not None]
        return max(times) if times else None

    def is_stale(self, now: datetime | None = None) -> bool:
        """True when ``now >= stale_after``; ``now`` defaults to the current UTC time."""
        return is_stale(self.stale_after, now)

    def source_for(self, footnote: str) -> Source | None:
        """The ``sources`` entry a ``[^id]`` footnote label points at (spec §5.1)."""
        for source in self.sources:
            if source.id == footnote:
                return source
        return None


# Each slot's own setter: bypasses the read-only __setattr__ without looking the name up
# on every assignment (a bundle builds one Concept per file).
_CONCEPT_SLOTS = [(name, vars(Concept)[name].__set__) for name in Concept.__slots__]
_CONCEPT_SETTERS = [set_slot for _, set_slot in _CONCEPT_SLOTS]


def _concept_from(values: tuple[Any, ...]) -> Concept:
    """A Concept from its slot values in ``__slots__`` order (how it is pickled)."""
    if len(values) != len(_CONCEPT_SETTERS):
        raise ValueError("a stored concept has the wrong number of fields")
    concept: Concept = object.__new__(Concept)
    any(map(call, _CONCEPT_SETTERS, repeat(concept), values))
    return concept


@_positional_pickle
@dataclass(frozen=True, slots=True)
class IndexEntry:
    title: str
    href: str
    target: str | None  # canonical bundle path, None for external links
    description: str


@_positional_pickle
@dataclass(frozen=True, slots=True)
class IndexSection:
    title: str
    entries: tuple[IndexEntry, ...]


@_positional_pickle
@dataclass(frozen=True, slots=True)
class IndexFile:
    """A reserved ``index.md`` (spec §8): sections of entries; readable, never a concept."""

    path: str
    body: str
    frontmatter: dict[str, Any]
    sections: tuple[IndexSection, ...]
    links: tuple[Link, ...]

    @property
    def directory(self) -> str:
        return self.path.rsplit("/", 1)[0] or "/"


@_positional_pickle
@dataclass(frozen=True, slots=True)
class LogEntry:
    date: date | None  # None when the heading is not an ISO YYYY-MM-DD date
    heading: str
    text: str


@_positional_pickle
@dataclass(frozen=True, slots=True)
class LogFile:
    """A reserved ``log.md`` (spec §9): dated entries, newest first as written."""

    path: str
    body: str
    frontmatter: dict[str, Any]
    title: str
    entries: tuple[LogEntry, ...]
    links: tuple[Link, ...]

    @property
    def directory(self) -> str:
        return self.path.rsplit("/", 1)[0] or "/"
