"""The wasm backend's Redis I/O: one redis-py connection per node, one command per
node sent to every node at once, every reply read within one shared deadline.

"At once" without threads: a command is a few dozen bytes, so writing it to each
node's socket returns at once and all nodes work in parallel; the replies are
then read one node after the other, each read bounded by what is left of the
request's ``timeout_ms``. The whole exchange costs the slowest node's round
trip, a frozen (SIGSTOP) node costs ``timeout_ms`` once, and no thread is needed
(nothing to hand work to, nothing to leak).
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional

from ._msgpack import REPLY_ERROR, REPLY_INT, REPLY_NIL, REPLY_STR, Command, Entry

import redis
from redis._parsers import _RESP2Parser
from redis.exceptions import ResponseError

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


class NodeSet:
    """The connections of one client, in the config's node order."""

    def __init__(self, urls: List[str], node_timeout_s: float) -> None:
        self._conns: List[Any] = []
        try:
            for url in urls:
                self._conns.append(self._connection(url, node_timeout_s))
        except Exception:
            self.close()
            raise

    @staticmethod
    def _connection(url: str, timeout_s: float) -> Any:
        kwargs: Dict[str, Any] = redis.connection.parse_url(url)  # type: ignore[no-untyped-call]
        cls = kwargs.pop("connection_class", redis.connection.Connection)
        kwargs.update(
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            parser_class=_RawErrorParser,
            lib_name=None,  # no CLIENT SETINFO round trips on connect
            lib_version=None,
            health_check_interval=0,
        )
        return cls(**kwargs)

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
            conn.socket_connect_timeout = left  # used only when (re)connecting
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
