"""What ``Client.inspect`` reports (imported on first use: ``import liblock`` does not pay
for ``dataclasses``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple


@dataclass(frozen=True)
class NodeFailure:
    """One node that failed an operation, in :attr:`liblock.Unavailable.nodes`."""

    node: int
    """The node's index in the client's ``nodes``."""
    addr: str
    """The node's address (``host:port`` or a socket path), without credentials."""
    cause: str
    """What went wrong there (refused, timed out, an error reply, ...)."""


@dataclass(frozen=True)
class NodeState:
    """One node's answer to an inspection."""

    node: int
    """The node's index in the client's ``nodes``."""
    addr: str
    """The node's address (``host:port`` or a socket path)."""
    locked: bool
    """The resource's key exists on this node."""
    holder: bool
    """Its value is the holder's (the one a quorum holds)."""
    owner: str
    """The owner label in this node's value (``Client(owner=...)`` of its taker); "" for none."""
    ttl: Optional[float]
    """Seconds the key has left on this node; ``None`` when it has no expiry (or no key: see ``locked``)."""
    error: Optional[str]
    """Why the node did not answer; ``None`` when it did."""


@dataclass(frozen=True)
class Holder:
    """One held permit of a counting semaphore (``Inspection.holders``)."""

    slot: int
    """The permit's slot, 0 to permits-1."""
    owner: str
    """Its holder's owner label; "" for none."""
    validity: Optional[float]
    """Seconds it certainly stays held; ``None`` without expiry."""


@dataclass(frozen=True)
class Reader:
    """One reader of a read-write lock that holds it on a quorum (``Inspection.readers``)."""

    owner: str
    """Its owner label (``Client(owner=...)`` of its taker); "" for none."""
    validity: Optional[float]
    """Seconds it certainly stays held; ``None`` without expiry."""


@dataclass(frozen=True)
class Inspection:
    """Whether a quorum holds a resource, for how long, and by whom (``Client.inspect``)."""

    held: bool
    """One holder (one value) holds the key on a quorum of nodes."""
    validity: Optional[float]
    """Seconds it certainly stays held: the least remaining ttl over the best quorum, less the
    time the round took and the drift. ``None``: held by a key without expiry (set by some
    other program without ``PX``); 0.0 when not held."""
    owner: str
    """The holder's owner label (``Client(owner=...)``); "" when it set none or the key was set
    by another program."""
    nodes: Tuple[NodeState, ...]
    """Each node's answer, in node order."""
    permits: int = 0
    """A semaphore's inspection (``inspect(..., permits=N)``): N; 0 for a mutex."""
    in_use: int = 0
    """A semaphore's inspection: how many permits a quorum holds."""
    holders: Tuple[Holder, ...] = ()
    """A semaphore's inspection: the held permits, by slot (``held``, ``validity`` and
    ``owner`` are then the first holder's)."""
    readers: Optional[Tuple[Reader, ...]] = None
    """A read-write lock's inspection (``inspect(..., mode=...)``): its readers on a quorum,
    by token order (``held``, ``validity`` and ``owner`` are then its writer's); () when none,
    ``None`` for any other lock."""


def _seconds(ms: int) -> Optional[float]:
    return None if ms < 0 else ms / 1000.0


_MODE_READ = 1  # a holder's mode in INSPECTED: a reader (0: a permit)


def from_engine(held: int, validity_ms: int, owner: str,
                nodes: Sequence[Tuple[int, str, int, str, int, str]], permits: int = 0,
                holders: Sequence[Tuple[int, str, int, int]] = (), term: int = 0, value: str = "",
                *, rw: bool = False) -> Inspection:
    """From an INSPECTED action's fields after its op (``term``, ``value``: an election's);
    ``rw``: a read-write lock's, whose holders are its readers."""
    hs = tuple(Holder(slot=h[0], owner=h[1], validity=_seconds(h[2])) for h in holders if h[3] != _MODE_READ)
    readers = tuple(Reader(owner=h[1], validity=_seconds(h[2])) for h in holders if h[3] == _MODE_READ)
    return Inspection(
        held=bool(held), validity=_seconds(validity_ms), owner=owner,
        nodes=tuple(NodeState(node=n, addr=addr, locked=bool(flags & 1), holder=bool(flags & 2),
                              owner=node_owner, ttl=_seconds(ttl_ms), error=cause or None)
                    for n, addr, flags, node_owner, ttl_ms, cause in nodes),
        permits=permits, in_use=len(hs), holders=hs, readers=readers if rw or readers else None)
