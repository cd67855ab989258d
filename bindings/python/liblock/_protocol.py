"""The engine's byte protocol (core/hostabi/PROTOCOL.md): the tables, encoders and
decoders generated from core/hostabi/spec/protocol.json (``_proto_gen.py``), and the
host's shorthands for the events it sends."""

from __future__ import annotations

from ._proto_gen import *  # noqa: F401,F403 - the generated tables and codecs
from ._proto_gen import (
    ACQUIRE_AUTO_EXTEND,
    ACQUIRE_ELECTION,
    ACQUIRE_FENCE,
    ACQUIRE_PERMITS,
    ACQUIRE_READ,
    ACQUIRE_RESOURCES,
    ACQUIRE_TOKEN,
    ACQUIRE_WRITE,
    EV_CANCEL,
    EV_CLOSE,
    EV_FORGET,
    EV_LOCK_INFO,
    EV_OVERHEAD,
    EV_RECEIVED,
    EV_RELEASE,
    EV_TICK,
    INSPECT_ELECTION,
    enc_acquire,
    enc_cancel,
    enc_close,
    enc_conn_failed,
    enc_extend,
    enc_forget,
    enc_inspect,
    enc_lock_info,
    enc_opened,
    enc_received,
    enc_release,
    enc_tick,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Sequence, Tuple

    # An error: (status, message, a, b, [(node, addr, cause), ...], bound, limit, unit, got);
    # status 0 = none; bound ("min", "max" or ""), limit, unit, got: an argument out of range.
    Error = Tuple[int, str, str, str, List[Tuple[int, str, str]], str, int, str, int]

RECEIVED_OVERHEAD = EV_OVERHEAD[EV_RECEIVED]
_ELECTION = ACQUIRE_AUTO_EXTEND | ACQUIRE_FENCE | ACQUIRE_ELECTION


def acquire(buf: Any, resource: bytes, ttl_ms: int, wait_ms: int, auto_extend: bool,
            fence: bool = False, token: bytes = b"", permits: int = 0, mode: int = 0,
            resources: Sequence[bytes] = (), value: bytes = b"") -> int:
    """ACQUIRE (a ``_args.Request``'s fields); each option sets its flag when given, an
    election's ``value`` makes it a campaign (fenced and auto-extended)."""
    flags = (ACQUIRE_AUTO_EXTEND if auto_extend else 0) | (ACQUIRE_FENCE if fence else 0)
    if token:
        flags |= ACQUIRE_TOKEN
    flags |= _kind_flags(permits, mode)
    if resources:
        flags |= ACQUIRE_RESOURCES
    if value:
        flags |= _ELECTION
    return enc_acquire(buf, resource, ttl_ms, wait_ms, flags, token, permits, resources, value)


def inspect(buf: Any, resource: bytes, permits: int = 0, mode: int = 0, election: bool = False) -> int:
    """INSPECT of the mutex, a semaphore (permits), a read-write lock (mode) or an election."""
    return enc_inspect(buf, resource, INSPECT_ELECTION if election else _kind_flags(permits, mode), permits)


def _kind_flags(permits: int, mode: int) -> int:
    f = ACQUIRE_PERMITS if permits else 0
    if mode == 1:
        f |= ACQUIRE_READ
    elif mode == 2:
        f |= ACQUIRE_WRITE
    return f


extend = enc_extend
opened = enc_opened
received = enc_received
conn_failed = enc_conn_failed
_BY_HANDLE = {EV_RELEASE: enc_release, EV_CANCEL: enc_cancel, EV_FORGET: enc_forget, EV_LOCK_INFO: enc_lock_info}
_BARE = {EV_CLOSE: enc_close, EV_TICK: enc_tick}


def handle_event(buf: Any, kind: int, handle: int) -> int:
    """RELEASE, CANCEL, FORGET and LOCK_INFO: the kind and one u64."""
    return _BY_HANDLE[kind](buf, handle)


def simple(buf: Any, kind: int) -> int:
    """CLOSE and TICK: the kind alone."""
    return _BARE[kind](buf)
