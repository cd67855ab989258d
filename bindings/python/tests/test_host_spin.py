"""The asyncio host's spin (Host._spin): right after a request's writes the host reads the
epoll set again while the request is pending, at most eager_polls times in all, and only
while spinning pays on that host (_host._SPIN_CREDIT, _SPIN_PROBE): nodes that answer
slower than a spin (remote ones) cost a wasted spin only once per _SPIN_PROBE requests.
And a read of the set stops at the reply that settled an operation (_epoll.Mux)."""

import asyncio
import select
import socket
from typing import Any, List, Optional

import pytest

from liblock import _epoll, _host

pytestmark = pytest.mark.skipif(not hasattr(select, "epoll"), reason="epoll is Linux's")


class _Mux:
    """Counts reads; the request settles at read number ``settle_at`` (None: never);
    ``answers``: each read gets a node's reply (else none does)."""

    def __init__(self, host: Any, op: int, settle_at: Optional[int]) -> None:
        self.host, self.op, self.settle_at, self.polls = host, op, settle_at, 0
        self.answers = False
        self.reading = False  # (a read in progress: _epoll.Mux's flag)

    def poll(self) -> int:
        self.polls += 1
        if self.answers:
            self.host.reads += 1
        if self.settle_at is not None and self.polls >= self.settle_at:
            self.host._ops.pop(self.op, None)
        return 0


def _host_with(settle_at: Optional[int]) -> Any:
    host = _host.Host.__new__(_host.Host)
    host._ops = {}
    host._spin_credit = _host.SpinCredit()
    host._mux = _Mux(host, 7, settle_at)
    return host


def _requests(host: Any, n: int) -> None:
    for _ in range(n):  # what _read_now does after its first read, for a pending request 7
        host._ops[7] = None
        host._mux.settle_at = None if host._mux.settle_at is None else host._mux.polls + 3
        host._spin(7, 5)


def test_a_spin_stops_at_the_read_that_settled_the_request() -> None:
    host = _host_with(settle_at=3)
    host._ops[7] = None  # pending
    host._spin_credit.left = 1
    host._spin(7, 5)
    assert host._mux.polls == 3  # not eager_polls - 1
    assert host._spin_credit.left == 2  # it paid: one more


def test_a_spin_ends_once_every_node_has_answered() -> None:
    """An acquire that found the lock taken stays pending until its retry: once its
    nodes have all answered, the spin stops, and counts neither as paid nor as lost."""
    host = _host_with(settle_at=None)
    host._mux.answers = True
    host._ops[7] = None
    host._spin(7, 3)  # three nodes still to answer
    assert host._mux.polls == 3
    assert host._spin_credit.left == _host._SPIN_CREDIT
    # control: nodes that do not answer keep it spinning to the end, and it counts as lost
    host = _host_with(settle_at=None)
    host._ops[7] = None
    host._spin(7, 3)
    assert host._mux.polls == host.eager_polls - 1
    assert host._spin_credit.left == _host._SPIN_CREDIT - 1


def test_a_request_started_within_a_read_does_not_spin() -> None:
    """A request started by a completion that a read ran (an abandoned acquire's release)
    would only poll a set that is being read already (each poll returns at once)."""
    for reading, polls in ((True, 1), (False, _host._EAGER_POLLS)):
        host = _host_with(settle_at=None)
        host.loop = asyncio.new_event_loop()
        try:
            host._eager_left = _host._EAGER_RUN
            host._mux.reading = reading
            host._ops[7] = None
            host._read_now(7, 5)
            assert host._mux.polls == polls  # control (not reading): the spin's reads
            assert host._spin_credit.left == _host._SPIN_CREDIT - (0 if reading else 1)
        finally:
            host.loop.close()


def test_a_request_beside_other_operations_in_flight_does_not_spin() -> None:
    """Waiters of a contended lock (or other tasks' requests) pending on the host: the loop
    has work a spin would hold up, so only a request alone in flight spins."""
    for alone, polls in ((True, 1), (False, _host._EAGER_POLLS)):
        host = _host_with(settle_at=None)
        host.spin_alone = alone
        host.loop = asyncio.new_event_loop()
        try:
            host._eager_left = _host._EAGER_RUN
            host._ops[7] = None
            host._ops[8] = None  # a waiter, pending
            host._read_now(7, 5)
            assert host._mux.polls == polls  # control (the rule off): the spin's reads
        finally:
            host.loop.close()
    # alone in flight, it spins
    host = _host_with(settle_at=None)
    host.loop = asyncio.new_event_loop()
    try:
        host._eager_left = _host._EAGER_RUN
        host._ops[7] = None
        host._read_now(7, 5)
        assert host._mux.polls == _host._EAGER_POLLS
    finally:
        host.loop.close()


def test_spinning_goes_on_while_more_than_half_of_the_spins_pay() -> None:
    for wins_per_3, on in ((2, True), (1, False)):
        host = _host_with(settle_at=None)
        spun = 0
        for i in range(30 * _host._SPIN_PROBE):
            host._ops[7] = None
            host._mux.settle_at = host._mux.polls + 3 if i % 3 < wins_per_3 else None
            before = host._mux.polls
            host._spin(7, 5)
            spun += host._mux.polls > before
        # 2 wins in 3: every request spins; 1 in 3: the credit runs out, then the probes
        assert (spun == 30 * _host._SPIN_PROBE) is on
        assert on or spun < 3 * _host._SPIN_CREDIT + 30 * 2


def test_nodes_slower_than_a_spin_cost_one_spin_per_probe() -> None:
    host = _host_with(settle_at=None)  # no spin ever settles its request
    per_spin = host.eager_polls - 1
    n = _host._SPIN_CREDIT + 10 * _host._SPIN_PROBE
    _requests(host, n)
    # the credit's spins, then one probe per _SPIN_PROBE requests
    assert host._mux.polls == (_host._SPIN_CREDIT + 10) * per_spin
    assert host._spin_credit.left == 0
    # control: without the credit rule (credit never used up) every request spins
    host = _host_with(settle_at=None)
    host._spin_credit.left = 10 ** 9
    _requests(host, n)
    assert host._mux.polls == n * per_spin


def test_spinning_resumes_once_a_probe_pays() -> None:
    host = _host_with(settle_at=None)
    _requests(host, _host._SPIN_CREDIT)
    assert host._spin_credit.left == 0
    host._mux.settle_at = 0  # the nodes have become fast
    _requests(host, _host._SPIN_PROBE)  # the probe among these settles its request
    assert host._spin_credit.left == 1
    before = host._mux.polls
    _requests(host, 5)
    assert host._mux.polls == before + 5 * 3  # every request spins again


def _read_two_ready(done_first: bool) -> List[List[int]]:
    """Two connections with a reply each, every reply settling an operation: the
    connections each of two reads of the set (two loop turns) took."""
    host = _host.Host.__new__(_host.Host)
    host.loop = None  # (no read here fails: nothing is scheduled on it)
    host.done_first = done_first
    host.settled = 0
    host._recv_view = memoryview(bytearray(64))[9:]
    host._conns = {}
    turns: List[List[int]] = []

    class Engine:
        inbuf = memoryview(bytearray(64))

    host.engine = Engine()

    def step(n: int) -> None:
        turns[-1].append(int.from_bytes(bytes(host.engine.inbuf[1:5]), "little"))
        host.settled += 1  # the reply settled an operation (its completion ran)

    host._step = step
    mux = _epoll.Mux(host, select.epoll())
    socks: List[Any] = []
    try:
        for cid in (1, 2):
            a, b = socket.socketpair()
            a.setblocking(False)
            socks += [a, b]
            c = _epoll.MuxConn(mux, cid, a)
            mux.ep.register(c.fd, select.EPOLLIN)
            mux.conns[c.fd] = c
            host._conns[cid] = c
            b.send(b"+OK\r\n")
        for _ in range(2):
            turns.append([])
            mux.poll()
    finally:
        mux.ep.close()
        for s in socks:
            s.close()
    return turns


def test_a_read_of_the_set_stops_at_the_reply_that_settled_an_operation() -> None:
    """The settled operation's continuation (queued by call_soon) runs before the other
    ready connection is read: that one waits for the loop's next turn (the set is
    level-triggered, so it is still ready then)."""
    first, second = _read_two_ready(True)
    assert len(first) == 1 and len(second) == 1 and sorted(first + second) == [1, 2]
    # control: with done_first off, one read takes both
    first, second = _read_two_ready(False)
    assert sorted(first) == [1, 2] and second == []


def test_only_a_host_on_the_callers_loop_spins(c1: Any) -> None:
    """The synchronous API's loop thread does not spin (its caller's thread would wait for
    the GIL the spinning thread keeps taking back); an asyncio host does."""
    import liblock

    with liblock.Client(c1.urls, node_timeout=0.5, backend="wasm") as client:
        client.acquire("spin:sync", ttl=5).release()  # the wasm synchronous API: a loop thread
        assert client._driver.sync_host().eager_polls == 1

        async def main() -> int:
            lock = await client.acquire_async("spin:async", ttl=5)
            await lock.release_async()
            return int(client._driver.async_host().eager_polls)

        assert asyncio.run(main()) == _host._EAGER_POLLS > 1
