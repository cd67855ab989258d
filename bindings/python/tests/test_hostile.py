"""A hostile node beside real redis-servers: it passes the handshake (INFO, PING, AUTH, SELECT,
CLIENT, ROLE) and then answers every command with garbage, a reply of another type, an
endless or a maximal bulk string, an array nested 1000 deep, an endless array, nothing, or
half a reply. With two honest nodes of three the lock is granted and released; with two
hostile nodes of three the acquire fails with ``Unavailable``, each hostile node named with
its own cause, and no key is left. The Go twin of the server is
core/testkit/redistest/hostile."""

from __future__ import annotations

import re
import socket
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

import liblock
from conftest import BACKEND, Cluster, eventually

MAX_BULK = 64 << 20  # the engine's bound on a bulk string (core/engine/resp.go)

# The cause each behaviour gives its node. An endless reply fails at the decoder's bound or
# at the node timeout, whichever comes first on a loaded machine.
CAUSES: Dict[str, str] = {
    "garbage": r"redis protocol error: (malformed reply line|unexpected reply type)",
    "wrongtype": r"redis protocol error: SET answered an array of 2, not OK",
    "endlessbulk": r"redis protocol error: bulk string of 2147483647 bytes",
    "maxbulk": r"within the node timeout|bulk string not followed by CRLF",
    "deepnesting": r"redis protocol error: arrays nested too deep",
    "endlessarray": r"within the node timeout|a reply longer than|a reply of more than \d+ values",
    "silent": r"within the node timeout",
    "closemidreply": r"EOF|closed|reset",
}


class Hostile:
    """A TCP server on a free loopback port, one thread per connection."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns: List[socket.socket] = []
        self.hostile = 0
        self.lock = threading.Lock()
        self.closed = False
        self.threads: List[threading.Thread] = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self.threads.append(t)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def open_conns(self) -> int:
        with self.lock:
            return len(self.conns)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                c.close()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept (close alone does not)
        except OSError:
            pass
        self.sock.close()
        for t in self.threads:
            t.join(timeout=10)

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                if self.closed:
                    c.close()
                    return
                self.conns.append(c)
            t = threading.Thread(target=self._serve, args=(c,), daemon=True)
            t.start()
            self.threads.append(t)

    def _serve(self, c: socket.socket) -> None:
        f = c.makefile("rb")
        try:
            while True:
                args = _read_command(f)
                if args is None:
                    return
                name = args[0].upper()
                if name == b"PING":
                    c.sendall(b"+PONG\r\n")
                elif name == b"INFO":  # no run_id: the engine's identity check has nothing to compare
                    c.sendall(b"$10\r\n# Server\r\n\r\n")
                elif name in (b"AUTH", b"SELECT", b"CLIENT"):
                    c.sendall(b"+OK\r\n")
                elif name == b"ROLE":
                    c.sendall(b"*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n")
                else:
                    with self.lock:
                        self.hostile += 1
                    if not self._misbehave(c):
                        return
        except OSError:
            return
        finally:
            with self.lock:
                if c in self.conns:
                    self.conns.remove(c)
            c.close()

    def _misbehave(self, c: socket.socket) -> bool:
        b = self.behaviour

        def endless(chunk: bytes) -> bool:
            big = chunk * ((64 << 10) // len(chunk))
            while True:
                c.sendall(big)  # until the client closes: OSError ends _serve

        if b == "garbage":
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>\x00\xff</html>\r\n")
        elif b == "wrongtype":
            c.sendall(b"*2\r\n$3\r\nfoo\r\n:1\r\n")
        elif b == "endlessbulk":
            c.sendall(b"$2147483647\r\n")
            return endless(b"x")
        elif b == "maxbulk":
            c.sendall(b"$%d\r\n" % MAX_BULK)
            return endless(b"x")
        elif b == "deepnesting":
            c.sendall(b"*1\r\n" * 1000 + b":1\r\n")
        elif b == "endlessarray":
            c.sendall(b"*2147483647\r\n")
            return endless(b":1\r\n")
        elif b == "closemidreply":
            c.sendall(b"$10\r\nhello")
            return False
        return True  # silent: nothing, the connection stays open


def _read_command(f: Any) -> Optional[List[bytes]]:
    line = f.readline()
    if not line or not line.startswith(b"*"):
        return None
    args = []
    for _ in range(int(line[1:])):
        size = int(f.readline()[1:])
        args.append(f.read(size + 2)[:size])
    return args


@pytest.fixture
def hostile_pair() -> Iterator[Callable[[str], List[Hostile]]]:
    made: List[Hostile] = []

    def make(behaviour: str) -> List[Hostile]:
        pair = [Hostile(behaviour), Hostile(behaviour)]
        made.extend(pair)
        return pair

    yield make
    for h in made:
        h.close()


@pytest.mark.parametrize("behaviour", list(CAUSES))
def test_hostile_node(c3: Cluster, hostile_pair: Callable[[str], List[Hostile]], behaviour: str) -> None:
    h1, h2 = hostile_pair(behaviour)
    # Two honest nodes of three decide. A generous node timeout: a loaded machine still
    # answers every handshake within it, so the causes are the behaviours' own.
    with liblock.Client([c3.urls[0], c3.urls[1], h1.url], node_timeout=2.0, backend=BACKEND) as client:
        lock = client.acquire(f"hostile:{behaviour}", ttl=10, wait=0)
        lock.release()
    assert h1.hostile > 0, "the hostile node was asked"

    # Two hostile nodes of three: unavailable, each named with its cause.
    with liblock.Client([c3.urls[0], h1.url, h2.url], node_timeout=2.0, backend=BACKEND) as client:
        with pytest.raises(liblock.Unavailable) as e:
            client.acquire(f"hostile2:{behaviour}", ttl=10, wait=0)
    causes = {n.node: n.cause for n in e.value.nodes}
    assert 0 not in causes, e.value
    for i in (1, 2):
        assert re.search(CAUSES[behaviour], causes.get(i, "")), (i, str(e.value))
    eventually(lambda: c3.all_keys() == [], what="no key left on the honest nodes")
    eventually(lambda: h1.open_conns() == 0 and h2.open_conns() == 0,
               what="no connection left to the hostile nodes")
