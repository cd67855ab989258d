"""Read-write locks: the ``mode`` argument of ``acquire`` and ``lock`` (the engine does the
work: core/engine/rwlock.go)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional


from ._errors import ArgumentTypeError, InvalidArgument

#: The engine's LockMode numbers, by ``mode`` value.
MODES = {"exclusive": 0, "read": 1, "write": 2}


def mode_arg(mode: Any, token: Optional[str]) -> str:
    """Check ``mode``: None (the mutex), ``"read"`` or ``"write"``; returns its name."""
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


NAMES = {v: k for k, v in MODES.items()}  # Lock.mode by the engine's number
