from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from okfx.trust import (
    actor_kind,
    is_stale,
    is_valid_actor,
    loose_actor,
    parse_instant,
    trust_tier,
)


def test_no_verifier_is_unverified() -> None:
    assert trust_tier([]) == "unverified"


def test_only_machine_verifiers_are_machine_confirmed() -> None:
    assert trust_tier(["process:nightly", "agent/1.0"]) == "machine-confirmed"


def test_any_human_verifier_is_human_reviewed() -> None:
    assert trust_tier(["process:nightly", "human:ada"]) == "human-reviewed"


@pytest.mark.parametrize(
    ("actor", "valid", "kind"),
    [
        ("human:ahormati", True, "human"),
        ("process:finance-nightly", True, "process"),
        ("reference_agent/gemini-2.5-pro", True, "agent"),
        ("team:finance", True, "other"),
        ("human:", False, None),
        ("human: ada", False, None),
        ("", False, None),
        ("ada", False, None),
        (42, False, None),
        (None, False, None),
    ],
)
def test_actor_convention(actor: object, valid: bool, kind: str | None) -> None:
    assert is_valid_actor(actor) is valid
    if valid:
        assert isinstance(actor, str)
        assert actor_kind(actor) == kind


@pytest.mark.parametrize(
    ("actor", "loose", "tier"),
    [
        ("human:ada lovelace", "human", "human-reviewed"),  # a blank in the id
        ("human: ada", "human", "human-reviewed"),
        ("Human:ada", "human", "human-reviewed"),  # the prefix in another case
        (" HUMAN:Ada", "human", "human-reviewed"),
        ("process: nightly", "process", "machine-confirmed"),
        ("human:Ada", None, "human-reviewed"),  # valid: the id's case is the producer's
        ("human:", None, "human-reviewed"),
        ("team: finance", None, "machine-confirmed"),
    ],
)
def test_trust_keys_off_the_human_prefix_however_the_id_is_written(
    actor: str, loose: str | None, tier: str
) -> None:
    """Spec §7: consumers key trust off the human: prefix. Spec QA: ``human:ada lovelace``
    and ``human: ada`` were no actors, so the entry was dropped and the concept ranked
    unverified, below machine-confirmed; ``Human:ada`` ranked machine-confirmed."""
    assert loose_actor(actor) == loose
    assert trust_tier([actor]) == tier


@pytest.mark.parametrize(
    "written",
    ["2026-09-23t00:00:00z", "2026-09-23T00:00:00z", "2026-09-23t02:00:00+02:00"],
)
def test_rfc_3339_lower_case_t_and_z_are_read(written: str) -> None:
    """Spec QA: RFC 3339 allows "t" and "z"; okfx refused them, and the concept lost its
    stale_after."""
    assert parse_instant(written) == (datetime(2026, 9, 23, tzinfo=UTC), None)


def test_stale_exactly_at_and_after_stale_after() -> None:
    cutoff = datetime(2026, 12, 31, tzinfo=UTC)
    assert not is_stale(cutoff, cutoff - timedelta(microseconds=1))
    assert is_stale(cutoff, cutoff)
    assert is_stale(cutoff, cutoff + timedelta(days=1))
    assert not is_stale(None, cutoff)


def test_naive_now_is_read_as_utc() -> None:
    assert is_stale(datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1))


def test_parse_instant_normalises_offsets_to_utc() -> None:
    when, reason = parse_instant("2026-06-30T16:00:00+02:00")
    assert reason is None
    assert when == datetime(2026, 6, 30, 14, tzinfo=UTC)
    aware = datetime(2026, 1, 1, 5, tzinfo=timezone(timedelta(hours=5)))
    assert parse_instant(aware) == (datetime(2026, 1, 1, tzinfo=UTC), None)


@pytest.mark.parametrize(
    "value",
    ["2026-02-30T00:00:00Z", "2026-06-30T14:00:00", "2026-06-30", "soon", 20260630, None],
)
def test_parse_instant_refuses_what_it_would_have_to_guess(value: object) -> None:
    when, reason = parse_instant(value)
    assert when is None
    assert reason
