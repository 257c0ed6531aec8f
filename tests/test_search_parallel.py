"""okfx.search.parallel.alongside runs two pieces of a search at once, and the two users
of it give the results the one-at-a-time way gives: the query's encode beside the lexical
side (MiniLMEmbedder.embed_alongside, QueryVectors.get_alongside) and the similarity pass
split in two halves (okfx.search.vectors.products)."""

from __future__ import annotations

import contextvars
import os
import select
import signal
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okfx import deadline
from okfx.search import parallel
from okfx.search.parallel import alongside

np = pytest.importorskip("numpy", reason="the similarity pass needs okfx[semantic] (numpy)")

from okfx.search import vectors  # noqa: E402
from okfx.search.embedder import QueryVectors  # noqa: E402
from test_search_hybrid import _default_model  # noqa: E402

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def test_both_pieces_run_at_once_on_two_threads():
    # Each piece waits at a barrier for the other: only two threads running at once pass.
    barrier = threading.Barrier(2, timeout=10)

    def piece() -> str:
        barrier.wait()
        return threading.current_thread().name

    helper, caller = alongside(piece, piece)
    assert caller == threading.current_thread().name
    assert helper.startswith("okfx-helper") and helper != caller


def test_the_helper_runs_in_the_callers_context_so_a_deadline_follows_it():
    WHO.set("the caller")
    with deadline.budget(60):
        (who, left), _ = alongside(lambda: (WHO.get(), deadline.remaining()), lambda: None)
    assert who == "the caller"
    assert left is not None and 0 < left <= 60
    (_, left), _ = alongside(lambda: (WHO.get(), deadline.remaining()), lambda: None)
    assert left is None


def test_an_exception_of_the_helper_is_raised_once_the_caller_finished():
    done = []

    def helper() -> None:
        raise ValueError("helper failed")

    def caller() -> str:
        done.append("caller")
        return "ok"

    with pytest.raises(ValueError, match="helper failed"):
        alongside(helper, caller)
    assert done == ["caller"]


def test_an_exception_of_the_caller_is_raised_once_the_helper_finished():
    finished = threading.Event()
    release = threading.Event()

    def helper() -> None:
        release.wait(10)
        finished.set()

    def caller() -> None:
        release.set()
        raise KeyError("caller failed")

    with pytest.raises(KeyError, match="caller failed"):
        alongside(helper, caller)
    assert finished.is_set()


def test_a_helper_that_asks_for_a_helper_runs_both_pieces_itself():
    # Every helper busy with work that itself calls alongside: no piece waits for a
    # helper thread, so nothing deadlocks.
    names: list[tuple[str, str]] = []
    barrier = threading.Barrier(parallel.HELPER_THREADS, timeout=10)

    def nested() -> None:
        barrier.wait()  # all helpers are taken now
        here = threading.current_thread().name
        inner = alongside(lambda: threading.current_thread().name, lambda: here)
        names.append(inner)

    threads = [
        threading.Thread(target=alongside, args=(nested, lambda: None))
        for _ in range(parallel.HELPER_THREADS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert len(names) == parallel.HELPER_THREADS
    assert all(helper == caller for helper, caller in names)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_makes_its_own_helpers():
    alongside(lambda: None, lambda: None)  # the parent's helper threads exist now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its helpers must run work, not queue it for no thread
        try:
            helper, _ = alongside(lambda: threading.current_thread().name, lambda: None)
            os.write(write, helper.encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 20)
        answer = os.read(read, 100).decode() if ready else "no answer in 20 s"
    finally:
        os.close(read)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert answer.startswith("okfx-helper")


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(min_value=0, max_value=300),
    dim=st.integers(min_value=1, max_value=40),
    split=st.integers(min_value=1, max_value=64),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_the_split_similarity_pass_equals_the_whole_one(rows, dim, split, seed):
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((rows, dim), dtype=np.float32)
    vector = rng.standard_normal(dim, dtype=np.float32)
    whole = vectors.products(matrix, vector, split_rows=10**9)
    halves = vectors.products(matrix, vector, split_rows=split)
    assert halves.dtype == np.float32 and halves.shape == (rows,)
    # Each row's product is computed the same way in either: bit for bit equal.
    assert np.array_equal(whole, halves)
    assert np.allclose(halves, matrix @ vector, atol=1e-4)


class _Plain:
    """An embedder with no ``embed_alongside``: work runs first, then the encode."""

    model_id = "plain"
    dimension = 3

    def __init__(self) -> None:
        self.calls: list[str] = []

    def embed(self, texts):
        self.calls.append("embed")
        return np.asarray([[3.0, 4.0, 0.0] for _ in texts], dtype=np.float32)


def test_query_vectors_without_an_overlapping_embedder_run_the_work_first():
    embedder = _Plain()
    kept = QueryVectors(embedder)

    def work() -> str:
        embedder.calls.append("work")
        return "lexical"

    vector, result = kept.get_alongside("karma", work)
    assert result == "lexical" and embedder.calls == ["work", "embed"]
    assert np.allclose(vector, [0.6, 0.8, 0.0])
    # Kept: the next call only runs the work.
    again, result = kept.get_alongside("karma", work)
    assert again is vector and embedder.calls == ["work", "embed", "work"]
    # get: the kept vector, or an encode (then kept) for a new query.
    assert kept.get("karma") is vector and embedder.calls == ["work", "embed", "work"]
    other = kept.get("reputation")
    assert np.allclose(other, [0.6, 0.8, 0.0]) and kept.kept("reputation") is other
    assert embedder.calls == ["work", "embed", "work", "embed"]


def test_the_default_model_encodes_beside_the_work_as_it_encodes_alone():
    embedder = _default_model()
    barrier = threading.Barrier(2, timeout=30)
    seen: list[str] = []
    real_run = embedder._session.run

    def run(*args, **kwargs):
        barrier.wait()  # the work is running: both at once
        return real_run(*args, **kwargs)

    def work() -> int:
        barrier.wait()
        seen.append(threading.current_thread().name)
        return 42

    embedder._session.run = run  # type: ignore[method-assign]
    try:
        vector, result = embedder.embed_alongside("points a user earns for answers", work)
    finally:
        embedder._session.run = real_run  # type: ignore[method-assign]
    assert result == 42 and seen[0].startswith("okfx-helper")
    alone = embedder.embed(["points a user earns for answers"])
    assert vector.shape == (1, 384)
    assert np.array_equal(vector, alone)

    def failing() -> None:
        raise RuntimeError("lexical side failed")

    with pytest.raises(RuntimeError, match="lexical side failed"):
        embedder.embed_alongside("karma", failing)
