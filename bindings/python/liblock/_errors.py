"""Exception hierarchy of the liblock binding. Every error derives from :class:`LockError`;
bad arguments also from :class:`ValueError` or :class:`TypeError`."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported at run time: `import liblock` stays light
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple, Type

    from ._inspection import NodeFailure

# The C ABI's status codes, names and classes: the spec's (core/hostabi/spec/protocol.json).
from . import _proto_gen as _g  # noqa: E402



class LockError(Exception):
    """Base class of every liblock error. ``status``: the C ABI status code (``None`` for the
    binding's own errors: library not found, use after fork)."""

    status: Optional[int] = None

    def __init__(self, message: str = "", status: Optional[int] = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class NotAcquired(LockError):
    """The resource is held by another owner and the wait ran out."""

    status = _g.STATUS_NOT_ACQUIRED


class LockLost(LockError):
    """The lock is no longer held on a quorum (expired, or taken by another owner),
    or it was released already (a second ``release()`` or an ``extend()`` after it)."""

    status = _g.STATUS_LOST


class InvalidArgument(LockError, ValueError):
    """A bad value, named by the caller's parameter (``ttl``, ``wait``, ``nodes[0]``, ...)."""

    status = _g.STATUS_INVALID_ARGUMENT


class ArgumentTypeError(LockError, TypeError):
    """An argument of the wrong Python type (checked before calling the library)."""

    status = _g.STATUS_INVALID_ARGUMENT


class InvalidHandle(LockError):
    """A handle that is gone: ``Lock.info()`` of a released lock, a lock whose event loop
    shut down. A closed client raises the subclass :class:`ClientClosed`."""

    status = _g.STATUS_INVALID_HANDLE


class ClientClosed(InvalidHandle):
    """A call on a client after its ``close()``, or on one of its locks (which ``close()``
    released). The message starts with ``liblock: the client is closed``."""


class Unavailable(LockError):
    """Too many Redis nodes failed (errors, timeouts, refused connections) for a quorum.
    ``nodes``: each node that neither granted nor refused, with its cause, as
    :class:`liblock.NodeFailure` ``(node, addr, cause)``, in node order."""

    status = _g.STATUS_UNAVAILABLE
    nodes: List[NodeFailure]

    def __init__(self, message: str = "", status: Optional[int] = None,
                 nodes: Optional[Sequence[Tuple[int, str, str]]] = None) -> None:
        super().__init__(message, status)
        from ._inspection import NodeFailure

        found = _node_causes(message) if nodes is None else nodes
        self.nodes = [NodeFailure(int(i), str(addr), str(cause)) for i, addr, cause in found]


def _node_causes(message: str) -> List[Tuple[int, str, str]]:
    """The per-node causes in the engine's message (``...; node 0 (ADDR): CAUSE; node 1
    ...``), for an ``Unavailable`` made from a message alone."""
    import re

    marks = list(re.finditer(r"; node (\d+) \((.*?)\): ", message))
    out = []
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(message)
        out.append((int(m.group(1)), m.group(2), message[m.end():end]))
    return out


class Canceled(LockError):
    """A pending operation was canceled (e.g. its client was closed)."""

    status = _g.STATUS_CANCELED


class InternalError(LockError):
    """A bug inside the library; the message says what. The process survives."""

    status = _g.STATUS_INTERNAL


class LibraryError(LockError, OSError):
    """What a backend needs is missing: liblock.so (not found, not loadable here, another
    ABI version), or liblock.wasm or wasmtime."""


class ForkedProcessError(LockError):
    """liblock was used in a process forked after the library had been loaded (a Go runtime
    does not survive ``fork()``): use ``multiprocessing``'s ``spawn`` or ``forkserver``."""


_BY_STATUS: Dict[int, Type[LockError]] = {status: globals()[name] for status, name in _g.STATUS_CLASSES.items()}


def error_for(status: int, message: Optional[str],
              nodes: Optional[Sequence[Tuple[int, str, str]]] = None) -> LockError:
    """The exception for a non-OK status (for Unavailable, with the per-node causes)."""
    cls = _BY_STATUS.get(status)
    if not message:
        message = _g.STATUS_NAMES.get(status, f"status {status}")
    if cls is None:
        return LockError(f"unknown status {status} from liblock: {message}", status)
    if cls is Unavailable:
        return Unavailable(message, status, nodes)
    return cls(message, status)


# What an operation on a closed client's host raises (InvalidHandle).
CLOSED_MESSAGE = "liblock: invalid handle: the client was closed"
# This process's id, renewed in a forked child by an at-fork hook (os.getpid() is a system
# call, and check_fork runs a few times per operation).
_pid = os.getpid()


def _forked_child() -> None:
    global _pid
    _pid = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked_child)


def check_fork(pid: int) -> None:
    """Raise ForkedProcessError in a process forked from the one (``pid``) a client was made in."""
    if _pid != pid:
        raise ForkedProcessError(
            f"this liblock client was created in process {pid}; process {os.getpid()} is a fork of "
            "it and cannot use it: its connections and locks (and liblock.so's Go runtime, which "
            "does not survive fork()) belong to the parent. Create a new liblock.Client in the "
            "child: with backend=\"wasm\" always (liblock.wasm has no Go runtime to lose), on the "
            "native backend only if liblock.so was not loaded before the fork; or use "
            "multiprocessing's 'spawn' or 'forkserver' start method.")
