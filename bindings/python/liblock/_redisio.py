"""The wasm backend's Redis I/O: one redis-py connection per node, one command per
node sent to every node at once, every reply read within one shared deadline.

Connections are made from the node URLs as the native backend makes them (see
:class:`_Node`): redis-py only carries the bytes.

"At once" without threads: a command is a few dozen bytes, so writing it to each
node's socket returns at once and all nodes work in parallel; the replies are
then read one node after the other, each read bounded by what is left of the
request's ``timeout_ms``. The whole exchange costs the slowest node's round
trip, a frozen (SIGSTOP) node costs ``timeout_ms`` once, and no thread is needed
(nothing to hand work to, nothing to leak).
"""

from __future__ import annotations

import ssl
import time
from typing import Any, Dict, List, Optional

from ._msgpack import REPLY_ERROR, REPLY_INT, REPLY_NIL, REPLY_STR, Command, Entry
from ._nodeurl import NodeOptions, NodeURLError
from ._nodeurl import parse as parse_node_url

import redis
from redis._parsers import _RESP2Parser
from redis.exceptions import ConnectionError, ResponseError

# A read gets at least this long, so that a reply already waiting in the socket
# is still read once an earlier node used up the deadline.
_MIN_READ_S = 0.001


class _RawErrorParser(_RESP2Parser):
    """redis-py's RESP2 parser, except that an error reply keeps its full text.

    redis-py strips the error code (``NOSCRIPT No matching script`` becomes
    ``NoScriptError("No matching script...")``); the module needs the code to
    fall back from EVALSHA to EVAL, so the text is kept as Redis sent it.
    """

    @classmethod
    def parse_error(cls, response: Any) -> Any:
        return ResponseError(response)


class _Node:
    """One node's connection, made from its URL as the native backend makes it:
    go-redis's reading of the URL (``_nodeurl``), then on every new connection
    the native transport's handshake (``core/resp_conn.go``): AUTH [user] password
    when the URL has a password, SELECT db when not 0, CLIENT SETNAME when asked,
    or else a PING; each answered before the next, all within the request's
    deadline. A refused step fails the connection (``AUTH refused: WRONGPASS …``):
    a command never runs on a connection whose AUTH or SELECT failed. (The PING
    keeps a fresh connection to a frozen node from queueing a command that would
    run when it thaws.)"""

    def __init__(self, opts: NodeOptions, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.deadline = 0.0  # monotonic; set by NodeSet.exec before each exchange
        steps: List[Command] = []
        if opts.password and opts.username:
            steps.append([b"AUTH", opts.username, opts.password])
        elif opts.password:
            steps.append([b"AUTH", opts.password])
        if opts.db != 0:
            steps.append([b"SELECT", str(opts.db).encode()])
        if opts.client_name:
            steps.append([b"CLIENT", b"SETNAME", opts.client_name])
        self.steps = steps or [[b"PING"]]
        common: Dict[str, Any] = dict(
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            parser_class=_RawErrorParser,
            lib_name=None,  # nothing but the handshake above: no CLIENT SETINFO
            lib_version=None,
            health_check_interval=0,
            redis_connect_func=self._handshake,
        )
        if opts.network == "unix":
            self.conn: Any = redis.connection.UnixDomainSocketConnection(  # type: ignore[no-untyped-call]
                path=opts.path, **common)
        elif opts.tls:
            # go-redis: TLS 1.2 or later, the server's certificate checked against the
            # system's roots and the URL's host name, unless skip_verify.
            self.conn = redis.connection.SSLConnection(  # type: ignore[no-untyped-call]
                host=opts.host, port=int(opts.port),
                ssl_cert_reqs="none" if opts.skip_verify else "required",
                ssl_check_hostname=not opts.skip_verify,
                ssl_min_version=ssl.TLSVersion.TLSv1_2,
                **common)
        else:
            self.conn = redis.connection.Connection(  # type: ignore[no-untyped-call]
                host=opts.host, port=int(opts.port), **common)

    def prepare(self, deadline: float) -> None:
        """Bound a (re)connection made by the next send (connect, TLS, handshake) by deadline."""
        self.deadline = deadline
        conn = self.conn
        if conn._sock is None:
            left = max(deadline - time.monotonic(), _MIN_READ_S)
            conn.socket_connect_timeout = left
            conn.socket_timeout = left  # the TLS handshake runs under this one

    def _handshake(self, conn: Any) -> None:
        """redis-py's connect hook, in place of its on_connect (runs on the new socket)."""
        conn.socket_timeout = self.timeout_s
        conn._sock.settimeout(self.timeout_s)
        conn._parser.on_connect(conn)
        for cmd in self.steps:
            name = cmd[0].decode()
            conn.send_command(*cmd, check_health=False)
            left = self.deadline - time.monotonic()
            if not conn.can_read(max(left, _MIN_READ_S)):
                raise ConnectionError(f"{name} refused: i/o timeout")
            try:
                conn.read_response()
            except ResponseError as e:
                raise ConnectionError(f"{name} refused: {e}") from None


class NodeSet:
    """The connections of one client, in the config's node order."""

    def __init__(self, urls: List[str], node_timeout_s: float) -> None:
        """Raises :class:`NodeURLError` naming ``nodes[i]`` for a URL go-redis refuses."""
        opts = []
        for i, url in enumerate(urls):
            try:
                opts.append(parse_node_url(url))
            except NodeURLError as e:
                raise NodeURLError(f"nodes[{i}]: {e}") from None
        self._nodes = [_Node(o, node_timeout_s) for o in opts]
        self._conns: List[Any] = [n.conn for n in self._nodes]

    def __len__(self) -> int:
        return len(self._conns)

    def exec(self, timeout_ms: int, cmds: List[Optional[Command]]) -> List[Entry]:
        """Send ``cmds[i]`` to node i (None: nothing), return one entry per node."""
        n = len(self._conns)
        if len(cmds) != n:
            err: Entry = (REPLY_ERROR, f"liblock host: {len(cmds)} commands for {n} nodes")
            return [err if c is not None else None for c in cmds]
        deadline = time.monotonic() + max(timeout_ms, 1) / 1000.0
        out: List[Entry] = [None] * n
        sent: List[int] = []
        for i, cmd in enumerate(cmds):
            if cmd is None:
                continue
            conn = self._conns[i]
            left = deadline - time.monotonic()
            if left <= 0:
                out[i] = (REPLY_ERROR, f"timeout: no time left to send to node {i}")
                continue
            self._nodes[i].prepare(deadline)  # used only when (re)connecting
            try:
                conn.send_command(*cmd)
            except Exception as e:  # noqa: BLE001 - every failure is this node's entry
                out[i] = (REPLY_ERROR, _describe(e))
                conn.disconnect()
                continue
            sent.append(i)
        for i in sent:
            conn = self._conns[i]
            try:
                if not conn.can_read(max(deadline - time.monotonic(), _MIN_READ_S)):
                    # The reply may still come: the connection is out of step now.
                    conn.disconnect()
                    out[i] = (REPLY_ERROR, f"i/o timeout after {timeout_ms} ms")
                    continue
                out[i] = _entry(conn.read_response())
            except ResponseError as e:  # an error reply: the connection stays usable
                out[i] = (REPLY_ERROR, str(e))
            except Exception as e:  # noqa: BLE001
                conn.disconnect()
                out[i] = (REPLY_ERROR, _describe(e))
        return out

    def close(self) -> None:
        for conn in self._conns:
            try:
                conn.disconnect()
            except Exception:  # noqa: BLE001
                pass


def _entry(reply: Any) -> Entry:
    if reply is None:
        return (REPLY_NIL, None)
    if isinstance(reply, int):
        return (REPLY_INT, reply)
    if isinstance(reply, bytes):
        return (REPLY_STR, reply)
    return (REPLY_ERROR, f"liblock host: unexpected reply of type {type(reply).__name__}")


def _describe(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return text
