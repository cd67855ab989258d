"""The engine's byte protocol (core/hostabi/PROTOCOL.md), both directions.

The kinds, flags, status table, limits, the event encoders and the action decoders
are generated from the protocol's spec (core/hostabi/spec/protocol.json) into
``_proto_gen.py``; this module adds the host's shorthands for the events it sends.
Events are packed into the adapter's input buffer with ``struct.pack_into``; the
actions the engine answers with are read from its output buffer with
``struct.unpack_from`` (``decode_action``), without copying it.
"""

from __future__ import annotations

from ._proto_gen import *  # noqa: F401,F403 - the generated tables and codecs
from ._proto_gen import (
    ACQUIRE_AUTO_EXTEND,
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
    # status 0 = none. bound ("min", "max" or ""), limit, unit and got: protocol 4's
    # out-of-range argument.
    Error = Tuple[int, str, str, str, List[Tuple[int, str, str]], str, int, str, int]
    # An INSPECTED's node: (node, addr, flags (NODE_LOCKED, NODE_HOLDER), owner, ttl_ms or -1, cause).
    NodeTuple = Tuple[int, str, int, str, int, str]

RECEIVED_OVERHEAD = EV_OVERHEAD[EV_RECEIVED]


def acquire(buf: Any, resource: bytes, ttl_ms: int, wait_ms: int, auto_extend: bool,
            fence: bool = False, token: bytes = b"", permits: int = 0, mode: int = 0,
            resources: Sequence[bytes] = ()) -> int:
    """ACQUIRE; a token (bytes, non-empty) sets ACQUIRE_TOKEN; permits (a
    semaphore's count), mode (1 read, 2 write) and resources (the further
    resources of a multi-resource lock) set their bits when given."""
    flags = (ACQUIRE_AUTO_EXTEND if auto_extend else 0) | (ACQUIRE_FENCE if fence else 0)
    if token:
        flags |= ACQUIRE_TOKEN
    flags |= _kind_flags(permits, mode)
    if resources:
        flags |= ACQUIRE_RESOURCES
    return enc_acquire(buf, resource, ttl_ms, wait_ms, flags, token, permits, resources)


def inspect(buf: Any, resource: bytes, permits: int = 0, mode: int = 0) -> int:
    """INSPECT of the mutex, or of a semaphore (permits) or read-write lock (mode)."""
    return enc_inspect(buf, resource, _kind_flags(permits, mode), permits)


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
