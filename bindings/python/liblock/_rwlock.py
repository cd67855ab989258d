"""Read-write locks: the ``mode`` argument of ``acquire``, ``acquire_async`` and ``lock``.

The engine does the work (core/engine/rwlock.go); the binding checks the argument and
passes it on as the engine protocol's READ and WRITE flags.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: `import liblock` loads nothing heavy
    from typing import Any, Optional, TypeVar

    _L = TypeVar("_L")


from ._errors import ArgumentTypeError, InvalidArgument

#: The engine's LockMode numbers, by ``mode`` value.
MODES = {"exclusive": 0, "read": 1, "write": 2}


def mode_arg(mode: Any, token: Optional[str]) -> str:
    """Check ``mode``: None (the mutex), ``"read"`` or ``"write"``; returns its name.
    Errors name ``mode``; a read-write lock takes no caller's token."""
    if mode is None:
        return "exclusive"
    if not isinstance(mode, str):
        raise ArgumentTypeError(f"mode must be a str ('read' or 'write'), not {type(mode).__name__}")
    if mode not in MODES:
        raise InvalidArgument(f"mode must be 'read' or 'write', got {mode!r}")
    if mode != "exclusive" and token is not None:
        raise InvalidArgument("mode cannot be combined with token=...: a read-write lock does not "
                              "take a caller's token")
    return mode


#: ``Lock.mode`` by the engine's number.
NAMES = {v: k for k, v in MODES.items()}



def with_mode(lock: _L, mode: int) -> _L:
    """Set a new Lock's ``mode`` (the request's, by the engine's number)."""
    if mode:
        lock.mode = NAMES[mode]  # type: ignore[attr-defined]
    return lock
