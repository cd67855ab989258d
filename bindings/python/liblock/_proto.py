"""The engine's byte protocol (core/hostabi/PROTOCOL.md), both directions.

Events (host -> engine) are packed into the adapter's input buffer with
``struct.pack_into``; the actions the engine answers with are read from its output
buffer with ``struct.unpack_from``, without copying it. Little-endian; ``str`` and
``bytes`` are a u32 length and the bytes; every event and action starts with its
kind as a u8.
"""

from __future__ import annotations

import struct
from typing import Any, List, Optional, Tuple

# Events
EV_ACQUIRE = 1
EV_EXTEND = 2
EV_RELEASE = 3
EV_CANCEL = 4
EV_FORGET = 5
EV_CLOSE = 6
EV_OPENED = 7
EV_RECEIVED = 8
EV_CONN_FAILED = 9
EV_TICK = 10
EV_LOCK_INFO = 11
EV_INSPECT = 12

# Actions
ACT_OPEN = 1
ACT_WRITE = 2
ACT_CLOSE = 3
ACT_DONE = 4
ACT_LOST = 5
ACT_TIMER = 6
ACT_CLOSED = 7
ACT_STARTED = 8
ACT_REJECTED = 9
ACT_CANCELED = 10
ACT_INFO = 11
ACT_INSPECTED = 12  # the outcome of a successful INSPECT, in place of its DONE
ACT_FENCE = 13      # just before the DONE of an acquire that asked for a fence or gave a token

OPEN_TLS = 1
OPEN_SKIP_VERIFY = 2
INFO_AUTO_EXTEND = 1
INFO_RELEASED = 2
ACQUIRE_AUTO_EXTEND = 1
ACQUIRE_FENCE = 2
ACQUIRE_TOKEN = 4  # then `str token` follows the flags
NODE_LOCKED = 1
NODE_HOLDER = 2

# Headers of the fixed-size parts (kind included for events).
_B = struct.Struct("<B")
_BI = struct.Struct("<BI")
_BQ = struct.Struct("<BQ")
_BII = struct.Struct("<BII")
_BQq = struct.Struct("<BQq")
_qqB = struct.Struct("<qqB")
_I = struct.Struct("<I")
_Q = struct.Struct("<Q")
_QQ = struct.Struct("<QQ")
_q = struct.Struct("<q")
_H = struct.Struct("<H")
_QqB = struct.Struct("<QqB")
_Bq = struct.Struct("<Bq")

# An error: (status, message, a, b, [(node, addr, cause), ...]); status 0 = none.
Error = Tuple[int, str, str, str, List[Tuple[int, str, str]]]


class ProtocolError(Exception):
    """The engine's output could not be decoded (a bug, reported as InternalError)."""


# ---------------------------------------------------------------- events

def acquire(buf: Any, resource: bytes, ttl_ms: int, wait_ms: int, auto_extend: bool,
            fence: bool = False, token: bytes = b"") -> int:
    n = len(resource)
    _BI.pack_into(buf, 0, EV_ACQUIRE, n)
    buf[5:5 + n] = resource
    flags = (ACQUIRE_AUTO_EXTEND if auto_extend else 0) | (ACQUIRE_FENCE if fence else 0)
    if token:
        flags |= ACQUIRE_TOKEN
    _qqB.pack_into(buf, 5 + n, ttl_ms, wait_ms, flags)
    at = 5 + n + 17
    if token:
        m = len(token)
        _I.pack_into(buf, at, m)
        buf[at + 4:at + 4 + m] = token
        at += 4 + m
    return at


def inspect(buf: Any, resource: bytes) -> int:
    n = len(resource)
    _BI.pack_into(buf, 0, EV_INSPECT, n)
    buf[5:5 + n] = resource
    return 5 + n


def extend(buf: Any, lock: int, ttl_ms: int) -> int:
    _BQq.pack_into(buf, 0, EV_EXTEND, lock, ttl_ms)
    return 17


def handle_event(buf: Any, kind: int, handle: int) -> int:
    """RELEASE, CANCEL, FORGET and LOCK_INFO: the kind and one u64."""
    _BQ.pack_into(buf, 0, kind, handle)
    return 9


def simple(buf: Any, kind: int) -> int:
    """CLOSE and TICK: the kind alone."""
    _B.pack_into(buf, 0, kind)
    return 1


def opened(buf: Any, conn: int) -> int:
    _BI.pack_into(buf, 0, EV_OPENED, conn)
    return 5


def received(buf: Any, conn: int, data: Any) -> int:
    n = len(data)
    _BII.pack_into(buf, 0, EV_RECEIVED, conn, n)
    buf[9:9 + n] = data
    return 9 + n


def conn_failed(buf: Any, conn: int, message: bytes) -> int:
    n = len(message)
    _BII.pack_into(buf, 0, EV_CONN_FAILED, conn, n)
    buf[9:9 + n] = message
    return 9 + n


RECEIVED_OVERHEAD = 9

# ---------------------------------------------------------------- actions


def read_str(buf: Any, at: int) -> Tuple[str, int]:
    (n,) = _I.unpack_from(buf, at)
    at += 4
    end = at + n
    if end > len(buf):
        raise ProtocolError(f"string of {n} bytes past the end of the actions")
    return bytes(buf[at:end]).decode("utf-8", "replace"), end


def read_bytes(buf: Any, at: int) -> Tuple[bytes, int]:
    (n,) = _I.unpack_from(buf, at)
    at += 4
    end = at + n
    if end > len(buf):
        raise ProtocolError(f"data of {n} bytes past the end of the actions")
    return bytes(buf[at:end]), end


_NO_ERROR = struct.Struct("<iIIIH")  # status 0 and four empty fields: 18 bytes


def read_error(buf: Any, at: int) -> Tuple[Optional[Error], int]:
    """An ``error`` field: None when its status is 0."""
    fields = _NO_ERROR.unpack_from(buf, at)
    if not any(fields):
        return None, at + 18
    status = fields[0]
    message, at = read_str(buf, at + 4)
    a, at = read_str(buf, at)
    b, at = read_str(buf, at)
    (n,) = _H.unpack_from(buf, at)
    at += 2
    nodes: List[Tuple[int, str, str]] = []
    for _ in range(n):
        (node,) = _H.unpack_from(buf, at)
        addr, at = read_str(buf, at + 2)
        cause, at = read_str(buf, at)
        nodes.append((node, addr, cause))
    if status == 0:
        return None, at
    return (status, message, a, b, nodes), at


def decode(buf: Any) -> List[Tuple[Any, ...]]:
    """Every action in ``buf`` as a tuple ``(kind, fields...)`` (for tests and tools;
    the host decodes in its own loop)."""
    out: List[Tuple[Any, ...]] = []
    at, end = 0, len(buf)
    while at < end:
        kind = buf[at]
        at += 1
        if kind == ACT_OPEN:
            conn, node, flags = struct.unpack_from("<IIB", buf, at)
            network, at = read_str(buf, at + 9)
            addr, at = read_str(buf, at)
            server_name, at = read_str(buf, at)
            out.append((kind, conn, node, flags, network, addr, server_name))
        elif kind == ACT_WRITE:
            (conn,) = _I.unpack_from(buf, at)
            data, at = read_bytes(buf, at + 4)
            out.append((kind, conn, data))
        elif kind == ACT_CLOSE:
            (conn,) = _I.unpack_from(buf, at)
            at += 4
            out.append((kind, conn))
        elif kind == ACT_DONE:
            op, lock = _QQ.unpack_from(buf, at)
            err, at = read_error(buf, at + 16)
            out.append((kind, op, lock, err))
        elif kind == ACT_LOST:
            (lock,) = _Q.unpack_from(buf, at)
            err, at = read_error(buf, at + 8)
            out.append((kind, lock, err))
        elif kind == ACT_TIMER:
            (delay,) = _q.unpack_from(buf, at)
            at += 8
            out.append((kind, delay))
        elif kind == ACT_CLOSED:
            out.append((kind,))
        elif kind == ACT_STARTED:
            (op,) = _Q.unpack_from(buf, at)
            at += 8
            out.append((kind, op))
        elif kind == ACT_REJECTED:
            err, at = read_error(buf, at)
            out.append((kind, err))
        elif kind == ACT_CANCELED:
            out.append((kind, buf[at]))
            at += 1
        elif kind == ACT_INFO:
            info, at = read_info(buf, at)
            out.append((kind,) + info)
        elif kind == ACT_FENCE:
            lock, fence, reentered = _QqB.unpack_from(buf, at)
            at += 17
            out.append((kind, lock, fence, reentered))
        elif kind == ACT_INSPECTED:
            (op,) = _Q.unpack_from(buf, at)
            inspected, at = read_inspected(buf, at + 8)
            out.append((kind, op) + inspected)
        else:
            raise ProtocolError(f"unknown action kind {kind} at byte {at - 1}")
    return out


def read_info(buf: Any, at: int) -> Tuple[Tuple[str, str, str, int, int, int, Optional[Error]], int]:
    resource, at = read_str(buf, at)
    key, at = read_str(buf, at)
    token, at = read_str(buf, at)
    ttl_ms, validity_ms, flags = _qqB.unpack_from(buf, at)
    err, at = read_error(buf, at + 17)
    return (resource, key, token, ttl_ms, validity_ms, flags, err), at


# An INSPECTED's node: (node, addr, flags (NODE_LOCKED, NODE_HOLDER), owner, ttl_ms or -1, cause).
NodeTuple = Tuple[int, str, int, str, int, str]


def read_inspected(buf: Any, at: int) -> Tuple[Tuple[int, int, str, List[NodeTuple]], int]:
    """An INSPECTED after its op: (held, validity_ms (-1: no expiry), owner, nodes)."""
    held, validity_ms = _Bq.unpack_from(buf, at)
    owner, at = read_str(buf, at + 9)
    (n,) = _H.unpack_from(buf, at)
    at += 2
    nodes: List[NodeTuple] = []
    for _ in range(n):
        (node,) = _H.unpack_from(buf, at)
        addr, at = read_str(buf, at + 2)
        flags = buf[at]
        node_owner, at = read_str(buf, at + 1)
        (ttl_ms,) = _q.unpack_from(buf, at)
        cause, at = read_str(buf, at + 8)
        nodes.append((node, addr, flags, node_owner, ttl_ms, cause))
    return (held, validity_ms, owner, nodes), at


# ------------------------------------------------------- encoders of actions
# (for tests: the engine's side of the protocol)

def _s(b: bytes) -> bytes:
    return _I.pack(len(b)) + b


def enc_error(err: Optional[Error]) -> bytes:
    if err is None:
        err = (0, "", "", "", [])
    status, message, a, b, nodes = err
    out = struct.pack("<i", status) + _s(message.encode()) + _s(a.encode()) + _s(b.encode())
    out += _H.pack(len(nodes))
    for node, addr, cause in nodes:
        out += _H.pack(node) + _s(addr.encode()) + _s(cause.encode())
    return out


def enc_inspected(op: int, held: bool, validity_ms: int, owner: str, nodes: List[NodeTuple]) -> bytes:
    out = bytes([ACT_INSPECTED]) + _Q.pack(op) + _Bq.pack(1 if held else 0, validity_ms)
    out += _s(owner.encode()) + _H.pack(len(nodes))
    for node, addr, flags, node_owner, ttl_ms, cause in nodes:
        out += _H.pack(node) + _s(addr.encode()) + bytes([flags]) + _s(node_owner.encode())
        out += _q.pack(ttl_ms) + _s(cause.encode())
    return out
