"""okfx.adapters._balance in one process: two workers' sockets over one listening socket.
A worker holding more connections lets a new one go to the other, for a while; a closed
connection gives its count back."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from okfx.adapters import _balance
from okfx.adapters._balance import Balance, BalancedSocket


class Pair:
    """A listening socket, the two workers' sockets on it, and clients connecting."""

    def __init__(self) -> None:
        self.listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.listening.bind(("127.0.0.1", 0))
        self.listening.listen(16)
        self.balance = Balance(2)
        self.first = BalancedSocket(self.listening, self.balance, 0)
        self.second = BalancedSocket(self.listening, self.balance, 1)
        for sock in (self.first, self.second):
            sock.settimeout(5)
        self.clients: list[socket.socket] = []

    def connect(self) -> None:
        self.clients.append(socket.create_connection(self.listening.getsockname(), timeout=5))

    def close(self) -> None:
        for sock in (*self.clients, self.first, self.second, self.listening):
            sock.close()


@pytest.fixture
def pair() -> Iterator[Pair]:
    made = Pair()
    yield made
    made.close()


def test_a_busier_worker_leaves_a_new_connection_to_the_other(pair: Pair) -> None:
    first, second, balance = pair.first, pair.second, pair.balance
    pair.connect()
    held, _ = first.accept()
    assert list(balance.counts) == [1, 0]
    pair.connect()
    with pytest.raises(BlockingIOError):
        first.accept()  # it holds more: the other takes this one
    taken, _ = second.accept()
    assert list(balance.counts) == [1, 1]
    pair.connect()
    extra, _ = first.accept()  # even again: either takes it
    assert list(balance.counts) == [2, 1]
    held.close()
    held.close()  # counted once
    assert list(balance.counts) == [1, 1]
    taken.close()
    extra.close()
    assert list(balance.counts) == [0, 0]


def test_past_its_patience_it_takes_the_connection_itself(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stuck or dead worker never leaves a connection waiting: after PATIENCE seconds
    of refusing, the busier one accepts. Each new wait starts its own clock."""
    first, second, balance = pair.first, pair.second, pair.balance
    monkeypatch.setattr(_balance, "PATIENCE", 0.2)
    balance.counts[0] = 3  # first holds three connections, second none
    pair.connect()
    with pytest.raises(BlockingIOError):
        first.accept()
    taken, _ = second.accept()  # the other took it: that wait is over
    assert list(balance.counts) == [3, 1]

    time.sleep(0.3)  # later, another connection: a wait of its own, not the old one's end
    pair.connect()
    start = time.monotonic()
    with pytest.raises(BlockingIOError):
        first.accept()
    while True:  # nobody else accepts: past its patience, first does
        try:
            conn, _ = first.accept()
            break
        except BlockingIOError:
            time.sleep(0.01)
    assert 0.2 <= time.monotonic() - start < 2
    assert list(balance.counts) == [4, 1]
    for sock in (taken, conn):
        sock.close()
    assert list(balance.counts) == [3, 0]


def test_a_slot_of_a_worker_that_ended_is_forgotten() -> None:
    balance = Balance(3)
    balance.counts[1] = 7
    assert not balance.least(1) and balance.least(0)
    balance.reset(1)
    assert balance.least(1)
