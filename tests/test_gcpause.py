"""okfx.gcpause: the collector is off inside bulk work, back on after, and frozen at the
end only when the process asked for it; otherwise what the work made moves to the
oldest generation."""

from __future__ import annotations

import gc
import weakref

import pytest

from okfx import gcpause
from okfx.gcpause import freeze_after_loads, gc_paused


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(gcpause, "_freeze", False)
    monkeypatch.setattr(gc, "freeze", lambda: seen.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: seen.append("unfreeze"))
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 0)
    real_enable = gc.enable

    def enable() -> None:
        seen.append("enable")
        real_enable()

    monkeypatch.setattr(gc, "enable", enable)
    return seen


def test_paused_inside_and_enabled_after_a_promotion(calls: list[str]) -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert calls == ["freeze", "unfreeze", "enable"]


def test_freeze_after_loads_freezes_before_the_collector_is_back(calls: list[str]) -> None:
    freeze_after_loads()
    with gc_paused():
        pass
    assert calls == ["freeze", "enable"]
    freeze_after_loads(False)
    with gc_paused():
        pass
    assert calls == ["freeze", "enable", "freeze", "unfreeze", "enable"]


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


@pytest.fixture
def nothing_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcpause, "_freeze", False)
    # An earlier test may have frozen objects for real; give them back to the collector
    # (it only makes them collectable again) so the promotion is not skipped.
    gc.unfreeze()


@pytest.mark.usefixtures("nothing_frozen")
def test_what_the_work_made_leaves_the_young_generation() -> None:
    with gc_paused():
        made = [[i] for i in range(100)]
    young = {id(o) for o in gc.get_objects(generation=0)}
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(made) not in young
    assert id(made) in oldest
    assert all(id(item) in oldest and id(item) not in young for item in made)
    assert gc.get_freeze_count() == 0  # promoted, not frozen


class _Node:
    me: _Node


@pytest.mark.usefixtures("nothing_frozen")
def test_cyclic_garbage_made_inside_is_still_freed_by_a_full_collection() -> None:
    with gc_paused():
        node = _Node()
        node.me = node
        alive = weakref.ref(node)
        del node
    assert alive() is not None  # a cycle: only the collector frees it
    gc.collect()
    assert alive() is None


@pytest.mark.usefixtures("nothing_frozen")
def test_objects_the_process_froze_itself_stay_frozen() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        with gc_paused():
            made = [[1]]
        assert frozen > 0
        assert gc.get_freeze_count() == frozen  # not handed back by an unfreeze
        assert id(made) not in {id(o) for o in gc.get_objects(generation=2)}
    finally:
        gc.unfreeze()
