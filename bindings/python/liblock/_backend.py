"""The small internal interface between the Python front end (``_client``) and a
backend: the native ``liblock.so`` (``_native``) or ``liblock.wasm`` under wasmtime
(``_wasmbackend``). The asyncio forms of both run on the asyncio host
(``_host``; ``async_host()``), whose locks have the same lock-level interface
(``_host.HostOps``).

Its shape is the C ABI's (handles, status codes, ``(status, handle, message)``
completions), so ``_client`` keeps one code path for every kind of lock.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple, Union

# A completion: (status, handle, message). Called exactly once, on an engine
# thread or (when it finishes at once) on the calling thread; must not block.
Done = Callable[[int, int, Optional[str]], None]

BACKENDS = ("native", "wasm")


class Backend(Protocol):
    """What a Client needs from its engine. Every method raises the binding's
    exceptions (``_errors``); ``free_*`` never raise (finalizers)."""

    name: str

    def client_new(self, config: bytes, tls: Any = None) -> int:
        """Parse the config JSON and make a client; its handle. ``tls``: the client's
        ``_tls.ClientTLS`` settings, or None."""
        ...

    def free_client(self, handle: int) -> None:
        """Close a client (releasing its locks, cancelling its pending acquires)."""
        ...

    def acquire(self, client: int, res: bytes, ttl_ms: int, opts: Optional[bytes],
                interruptible: bool) -> Union[int, Tuple[int, Dict[str, Any]]]:
        """Blocking acquire; the lock handle (or the handle and its info).
        ``interruptible``: wait in Python so that a signal's exception (Ctrl-C)
        cancels the pending acquire."""
        ...

    def inspect(self, client: int, res: bytes, permits: int = 0) -> Any:
        """Blocking inspect: the lock_inspect JSON (str), or the INSPECTED fields
        (an INSPECTED action after its op, ``_proto.decode_action``) of an engine."""
        ...

    def async_host(self) -> Any:
        """The asyncio host (``_host.Host``) of the running event loop."""
        ...

    def extend(self, lock: int, ttl_ms: int) -> None:
        ...

    def release(self, lock: int) -> Tuple[int, Optional[str]]:
        """(status, message): OK and LOST both end the lock."""
        ...

    def extend_async(self, lock: int, ttl_ms: int, done: Done) -> None:
        ...

    def release_async(self, lock: int, done: Done) -> None:
        ...

    def on_lost(self, lock: int, key: int) -> None:
        """Call the function registered as ``key`` in ``_lib``'s registry when the lock is lost."""
        ...

    def info(self, lock: int) -> Union[None, str, Dict[str, Any]]:
        """The lock_info JSON, or its fields (an engine's lock)."""
        ...

    def release_then_free(self, lock: int) -> None:
        """Release and free a lock nobody will own, without blocking the caller."""
        ...

    def free_lock(self, lock: int, lost_key: List[int]) -> None:
        """Finalizer of a Lock: drop its on_lost registration, free (and so release) it."""
        ...

