"""Exception hierarchy of the liblock binding.

Every error raised by liblock derives from :class:`LockError`. Bad arguments
also derive from the matching built-in (:class:`ValueError` or
:class:`TypeError`), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: `import liblock` stays light
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple, Type

    from ._inspection import NodeFailure

# Status codes of the C ABI (capi/liblock.h), their C names and each error status's
# class: from the protocol's spec (core/hostabi/spec/protocol.json) through _proto_gen.
from . import _proto_gen as _g  # noqa: E402

OK = _g.STATUS_OK
NOT_ACQUIRED = _g.STATUS_NOT_ACQUIRED
LOST = _g.STATUS_LOST
INVALID_ARGUMENT = _g.STATUS_INVALID_ARGUMENT
INVALID_HANDLE = _g.STATUS_INVALID_HANDLE
UNAVAILABLE = _g.STATUS_UNAVAILABLE
CANCELED = _g.STATUS_CANCELED
INTERNAL = _g.STATUS_INTERNAL

STATUS_NAMES: Dict[int, str] = _g.STATUS_NAMES


class LockError(Exception):
    """Base class of every liblock error.

    ``status`` is the C ABI status code (``None`` for errors raised by the
    binding itself, e.g. library not found or use after fork).
    """

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

    status = NOT_ACQUIRED


class LockLost(LockError):
    """The lock is no longer held on a quorum (expired, or taken by another owner),
    or it was released already (a second ``release()`` or an ``extend()`` after it)."""

    status = LOST


class InvalidArgument(LockError, ValueError):
    """A value out of range, named by the caller's parameter (``ttl``, ``wait``,
    ``node_timeout``, ...): empty resource, ttl out of range, a likely unit mistake, bad URL..."""

    status = INVALID_ARGUMENT


class ArgumentTypeError(LockError, TypeError):
    """An argument of the wrong Python type (checked before calling the library)."""

    status = INVALID_ARGUMENT


class InvalidHandle(LockError):
    """A handle that is gone: ``Lock.info()`` of a released lock, a lock whose event loop
    shut down. A closed client raises the subclass :class:`ClientClosed`."""

    status = INVALID_HANDLE


class ClientClosed(InvalidHandle):
    """A call on a client after its ``close()``, or on a lock of that client (which
    ``close()`` released: ``lock.released`` is then true). The message starts with
    ``liblock: the client is closed``. A subclass of :class:`InvalidHandle`, which
    this was reported as before."""


class Unavailable(LockError):
    """Too many Redis nodes failed (errors, timeouts, refused connections) for a quorum.

    ``nodes`` names each node that neither granted nor refused, with its cause (its error,
    or ``no answer yet when the outcome was certain``): a list of
    :class:`liblock.NodeFailure` ``(node, addr, cause)``, in node order."""

    status = UNAVAILABLE
    nodes: List[NodeFailure]

    def __init__(self, message: str = "", status: Optional[int] = None,
                 nodes: Optional[Sequence[Tuple[int, str, str]]] = None) -> None:
        super().__init__(message, status)
        from ._inspection import NodeFailure

        found = _node_causes(message) if nodes is None else nodes
        self.nodes = [NodeFailure(int(i), str(addr), str(cause)) for i, addr, cause in found]


def _node_causes(message: str) -> List[Tuple[int, str, str]]:
    """The per-node causes in an unavailable error's message, as the engine writes it:
    ``liblock: acquire: unavailable: REASON; node 0 (ADDR): CAUSE; node 1 (ADDR): CAUSE``
    (an address holds no "): "). For an ``Unavailable`` made from a message alone (the
    engine host passes the causes as fields)."""
    import re

    marks = list(re.finditer(r"; node (\d+) \((.*?)\): ", message))
    out = []
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(message)
        out.append((int(m.group(1)), m.group(2), message[m.end():end]))
    return out


class Canceled(LockError):
    """A pending operation was canceled (e.g. its client was closed)."""

    status = CANCELED


class InternalError(LockError):
    """A bug inside the library; the message says what. The process survives."""

    status = INTERNAL


class LibraryError(LockError, OSError):
    """What a backend needs is missing: liblock.so not found, not loadable on this
    platform or of another ABI version (native; the message names LIBLOCK_PATH and
    ``backend="wasm"``), or liblock.wasm or wasmtime (wasm backend)."""


class ForkedProcessError(LockError):
    """liblock was used in a process forked after the library had been loaded.

    A Go runtime does not survive ``fork()``. Use ``multiprocessing`` with the
    ``spawn`` or ``forkserver`` start method, or load liblock only after forking.
    """


_BY_STATUS: Dict[int, Type[LockError]] = {status: globals()[name] for status, name in _g.STATUS_CLASSES.items()}


def error_for(status: int, message: Optional[str],
              nodes: Optional[Sequence[Tuple[int, str, str]]] = None) -> LockError:
    """The exception for a non-OK status, carrying the library's message (and, for
    Unavailable, the engine's per-node causes; None: read them from the message)."""
    cls = _BY_STATUS.get(status)
    if not message:
        message = STATUS_NAMES.get(status, f"status {status}")
    if cls is None:
        return LockError(f"unknown status {status} from liblock: {message}", status)
    if cls is Unavailable:
        return Unavailable(message, status, nodes)
    return cls(message, status)
