"""okfx.gcpause: the collector is off inside bulk work, back on after, and frozen at the
end only when the process asked for it."""

from __future__ import annotations

import gc

import pytest

from okfx import gcpause
from okfx.gcpause import freeze_after_loads, gc_paused


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(gcpause, "_freeze", False)
    monkeypatch.setattr(gc, "freeze", lambda: seen.append("freeze"))
    real_enable = gc.enable

    def enable() -> None:
        seen.append("enable")
        real_enable()

    monkeypatch.setattr(gc, "enable", enable)
    return seen


def test_paused_inside_and_enabled_after_without_a_freeze(calls: list[str]) -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert calls == ["enable"]


def test_freeze_after_loads_freezes_before_the_collector_is_back(calls: list[str]) -> None:
    freeze_after_loads()
    with gc_paused():
        pass
    assert calls == ["freeze", "enable"]
    freeze_after_loads(False)
    with gc_paused():
        pass
    assert calls == ["freeze", "enable", "enable"]


def test_a_collector_that_was_off_stays_off_and_nothing_is_frozen(calls: list[str]) -> None:
    freeze_after_loads()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
        assert calls == []
    finally:
        gc.enable()


def test_an_error_inside_still_turns_the_collector_back_on(calls: list[str]) -> None:
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
