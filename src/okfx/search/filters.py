"""The one filter predicate: which concepts exist for a query.

Search, grep and listing all ask :meth:`ConceptFilter.reason`, so they can never
disagree about what a directory, type, tag, trust tier, lifecycle or staleness filter
means. Defaults everywhere: deprecated concepts are left out unless
``include_deprecated=True``; stale ones are included (and marked by the caller) unless
``include_stale=False``.

Nothing is dropped silently: callers count what each filter hid (:class:`Hidden`) and
turn the counts into one sentence for the agent (:func:`hidden_notice`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from okfx.errors import InvalidArgument

__all__ = [
    "FILTER_ORDER",
    "STATUSES",
    "TRUST_TIERS",
    "ConceptFilter",
    "ConceptLike",
    "aliases_of",
    "clamp_limit",
    "hidden_notice",
    "normalize_directory",
]

#: Spec §5.3, lowest to highest.
TRUST_TIERS = ("unverified", "machine-confirmed", "human-reviewed")
#: The lifecycle statuses a concept reads as (spec §5.4), which ``status`` filters by.
STATUSES = ("draft", "stable", "deprecated")
#: A hidden concept is counted once, under the first filter here that hides it. Explicit
#: filters come first: if a concept is both off-type and deprecated, passing
#: include_deprecated would not bring it back, so it is not counted as "deprecated".
FILTER_ORDER = (
    "bundle",
    "directory",
    "type",
    "tags",
    "trust_tier",
    "status",
    "deprecated",
    "stale",
    "fresh",
)


class ConceptLike(Protocol):
    """What search, grep and the filter read from a concept (``okfx.model.Concept``).
    Search also reads ``aliases`` (a tuple of strings) when the object has it
    (:func:`aliases_of`)."""

    @property
    def path(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def status(self) -> str: ...
    @property
    def trust_tier(self) -> str: ...
    @property
    def body(self) -> str: ...
    def is_stale(self, now: datetime | None = None) -> bool: ...


def aliases_of(concept: ConceptLike) -> tuple[str, ...]:
    """A concept's ``aliases`` (:attr:`okfx.model.Concept.aliases`); () for an object
    without them (a concept type of the caller's own, written before they were read)."""
    return getattr(concept, "aliases", ())


def normalize_directory(directory: object) -> str | None:
    """``"/tables"``, ``"tables/"``, ``"./tables"`` -> ``"/tables/"``; root -> None."""
    if directory is None:
        return None
    if not isinstance(directory, str):
        raise InvalidArgument(
            f"directory must be a string like '/tables', got {type(directory).__name__}"
        )
    parts = [p for p in directory.strip().replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise InvalidArgument(
            f"directory {directory!r} climbs with '..'; give a bundle directory like '/tables'"
        )
    if not parts:
        return None
    return "/" + "/".join(parts) + "/"


def clamp_limit(limit: object, maximum: int, name: str = "limit") -> int:
    """``limit`` clamped to ``1..maximum``; a non-integer raises ``InvalidArgument``."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidArgument(f"{name} must be an integer from 1 to {maximum}, got {limit!r}")
    return max(1, min(limit, maximum))


def _text(name: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{name} must be a non-empty string or null, got {value!r}")
    return value.strip()


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name} must be true or false, got {value!r}")
    return value


#: Tags one filter may ask for, and the characters of each: a concept must hold every
#: one (platform QA: 5,000 tags made a 1.2 MB notice, one sentence per tag, in 9 s).
MAX_FILTER_TAGS, MAX_TAG_CHARS = 50, 200


def _tags(value: object) -> frozenset[str]:
    if value is None:
        return frozenset()
    # A lone string is one tag, not a sequence of one-letter tags.
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple | set | frozenset):
        raise InvalidArgument(f"tags must be a list of strings, got {_short(value)}")
    if len(items) > MAX_FILTER_TAGS:
        raise InvalidArgument(
            f"tags lists {len(items)} tags; pass at most {MAX_FILTER_TAGS} (a concept must "
            "hold every one)"
        )
    tags: list[str] = []
    for tag in items:
        if not isinstance(tag, str) or not tag.strip():
            raise InvalidArgument(f"tags must be a list of non-empty strings, got {_short(value)}")
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidArgument(f"a tag is longer than {MAX_TAG_CHARS} characters")
        tags.append(tag.strip().casefold())
    return frozenset(tags)


def _short(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


@dataclass(frozen=True, slots=True)
class ConceptFilter:
    """Which concepts a query may return. Build with :meth:`create` (it validates).

    ``type`` and ``tags`` match case-insensitively and every requested tag must be on
    the concept. ``directory`` is a subtree. ``trust_tier`` is an exact tier. ``now``
    decides staleness; it is fixed when the filter is made, so one query sees one instant.
    ``status`` (an exact lifecycle status) and ``only_stale`` are not tool arguments: the
    viewer's listing uses them (and ``okfx.search.facets`` answers them as fast).
    """

    bundle: str | None = None
    directory: str | None = None
    type: str | None = None
    tags: frozenset[str] = frozenset()
    trust_tier: str | None = None
    include_deprecated: bool = False
    include_stale: bool = True
    status: str | None = None
    only_stale: bool = False
    now: datetime = field(default_factory=lambda: datetime.now(UTC))

    @classmethod
    def create(
        cls,
        *,
        bundle: object = None,
        directory: object = None,
        type: object = None,
        tags: object = None,
        trust_tier: object = None,
        include_deprecated: object = False,
        include_stale: object = True,
        status: object = None,
        only_stale: object = False,
        now: object = None,
    ) -> ConceptFilter:
        """Validate and normalise filter arguments; raises ``InvalidArgument``."""
        tier = _text("trust_tier", trust_tier)
        if tier is not None:
            tier = tier.casefold()
            if tier not in TRUST_TIERS:
                raise InvalidArgument(
                    f"unknown trust_tier {trust_tier!r}; use one of {sorted(TRUST_TIERS)}"
                )
        if now is not None and not isinstance(now, datetime):
            raise InvalidArgument(f"now must be a datetime, got {now.__class__.__name__}")
        kind = _text("type", type)
        state = _text("status", status)
        if state is not None and state not in STATUSES:
            # viewer QA: status=reviewed (a producer's word, read as stable) listed nothing
            # without a word, where a wrong trust tier was refused
            raise InvalidArgument(f"unknown status {state!r}; use one of {list(STATUSES)}")
        return cls(
            bundle=_text("bundle", bundle),
            directory=normalize_directory(directory),
            type=None if kind is None else kind.casefold(),
            tags=_tags(tags),
            trust_tier=tier,
            include_deprecated=_flag("include_deprecated", include_deprecated),
            include_stale=_flag("include_stale", include_stale),
            status=state,
            only_stale=_flag("only_stale", only_stale),
            now=datetime.now(UTC) if now is None else now,
        )

    def reason(self, bundle: str, concept: ConceptLike) -> str | None:
        """None when ``concept`` (of ``bundle``) passes, else the name of the first filter
        in :data:`FILTER_ORDER` that hides it."""
        if self.bundle is not None and bundle != self.bundle:
            return "bundle"
        if self.directory is not None and not concept.path.startswith(self.directory):
            return "directory"
        if self.type is not None and concept.type.casefold() != self.type:
            return "type"
        if self.tags and not self.tags <= {t.casefold() for t in concept.tags}:
            return "tags"
        if self.trust_tier is not None and concept.trust_tier.casefold() != self.trust_tier:
            return "trust_tier"
        if self.status is not None and concept.status != self.status:
            return "status"
        if not self.include_deprecated and concept.status == "deprecated":
            return "deprecated"
        if not self.include_stale and concept.is_stale(self.now):
            return "stale"
        if self.only_stale and not concept.is_stale(self.now):
            return "fresh"
        return None

    def accepts(self, bundle: str, concept: ConceptLike) -> bool:
        return self.reason(bundle, concept) is None


_NOTICES = {
    "bundle": "{n} {matches} in other bundles hidden (bundle filter)",
    "directory": "{n} {matches} outside the directory hidden (directory filter)",
    "type": "{n} {matches} of other types hidden (type filter)",
    "tags": "{n} {matches} without the requested tags hidden (tags filter)",
    "trust_tier": "{n} {matches} of other trust tiers hidden (trust_tier filter)",
    "status": "{n} {matches} of other statuses hidden (status filter)",
    "deprecated": "{n} deprecated {matches} hidden; pass include_deprecated=true to see them",
    "stale": "{n} stale {matches} hidden; pass include_stale=true to see them",
    "fresh": "{n} {matches} that are not stale hidden (stale only)",
}


#: The filters a caller chose (the others hide by default: deprecated, stale).
CHOSEN = frozenset({"bundle", "directory", "type", "tags", "trust_tier", "status", "fresh"})


def hidden_notice(hidden: dict[str, int], chosen: bool = True) -> str:
    """One sentence naming what the filters hid, e.g. "2 deprecated matches hidden;
    pass include_deprecated=true to see them." Empty when nothing was hidden.
    ``chosen=False`` leaves out what the filters the caller chose hid (:data:`CHOSEN`):
    said on every scoped call that found something, "1175 matches outside the directory
    hidden" is noise that may lead an agent to widen the filter (QA); the counts stay in
    ``hidden``, and a call that found nothing still names them."""
    parts = []
    for name in FILTER_ORDER:
        n = hidden.get(name, 0)
        if n and (chosen or name not in CHOSEN):
            parts.append(_NOTICES[name].format(n=n, matches="match" if n == 1 else "matches"))
    return ("; ".join(parts) + ".") if parts else ""
