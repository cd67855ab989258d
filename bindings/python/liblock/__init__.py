"""liblock: Redlock distributed locks for Python, over the liblock C library.

    import liblock
    with liblock.Client(["redis://127.0.0.1:7001"]) as client:
        with client.lock("orders:42", ttl=10.0, wait=5.0) as lock:
            ...

A thin layer: waiting, backoff, auto-extension, loss detection and quorum logic
all live in liblock's core, run either natively (liblock.so through ctypes, the
default) or as liblock.wasm under wasmtime (``Client(..., backend="wasm")``).
Nothing is loaded before the first client needs it.
"""

from __future__ import annotations

from typing import Optional

from . import _lib, _wasm
from ._client import Client, Lock, LockContext
from ._errors import (
    ArgumentTypeError,
    Canceled,
    ForkedProcessError,
    InternalError,
    InvalidArgument,
    InvalidHandle,
    LibraryError,
    LockError,
    LockLost,
    NotAcquired,
    Unavailable,
)

__version__ = "0.1.0"
ABI_VERSION = _lib.ABI_VERSION

__all__ = [
    "ABI_VERSION",
    "ArgumentTypeError",
    "Canceled",
    "Client",
    "ForkedProcessError",
    "InternalError",
    "InvalidArgument",
    "InvalidHandle",
    "LibraryError",
    "Lock",
    "LockContext",
    "LockError",
    "LockLost",
    "NotAcquired",
    "Unavailable",
    "abi_version",
    "library_path",
    "live_handles",
    "wasm_path",
]


def abi_version() -> int:
    """The C ABI version reported by the loaded liblock.so (loads it)."""
    return int(_lib.lib().lock_abi_version())


def library_path() -> Optional[str]:
    """Path of the loaded liblock.so, or None if not loaded yet."""
    return _lib.loaded_path()


def wasm_path() -> Optional[str]:
    """Path of the liblock.wasm compiled for the wasm backend, or None if no wasm client was made."""
    return _wasm.loaded_path()


def live_handles() -> int:
    """Client and lock handles created by this process and not freed yet."""
    return _lib.live_handles()
