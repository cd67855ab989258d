"""liblock: Redlock distributed locks for Python, over the liblock C library.

    import liblock
    with liblock.Client(["redis://127.0.0.1:7001"]) as client:
        with client.lock("orders:42", ttl=10.0, wait=5.0) as lock:
            ...

Waiting, backoff, auto-extension, loss detection and quorum logic live in liblock's
engine, run natively (liblock.so through ctypes, where it loads) or as liblock.wasm under
wasmtime, driven by one asyncio host in every mode (docs/python.md). Every duration is in
seconds (int, float or datetime.timedelta). ``import liblock`` loads nothing else.
"""

# No plain imports here: dir(liblock) shows only public names.
from ._client import DEFAULT_WAIT, Client, Lock, LockContext
from ._backend import NativeUnavailableWarning
from ._errors import (ArgumentTypeError, Canceled, ClientClosed, ForkedProcessError, InternalError,
                      InvalidArgument, InvalidHandle, LibraryError, LockError, LockLost, NotAcquired,
                      Unavailable)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

    from ._election import Leader, Leadership, Observation
    from ._inspection import Holder, Inspection, NodeFailure, NodeState, Reader
    from ._node import Node
del TYPE_CHECKING

from ._proto_gen import ABI_VERSION  # noqa: E402 - the ABI version this binding speaks
from ._multi import MAX_RESOURCES  # noqa: E402 - the most resources one acquire of a list takes

__all__ = [
    "ABI_VERSION", "ArgumentTypeError", "DEFAULT_WAIT", "Canceled", "Client", "ClientClosed",
    "ForkedProcessError", "Holder", "InternalError", "InvalidArgument", "Inspection", "InvalidHandle",
    "Leader", "Leadership", "LibraryError", "Lock", "LockContext", "LockError", "LockLost", "MAX_RESOURCES", "Node", "NodeFailure",
    "NativeUnavailableWarning", "NodeState", "NotAcquired", "Observation", "Reader", "Unavailable", "abi_version",
    "library", "library_path", "live_handles",
    "wasm_path",
]


def __getattr__(name: str) -> "Any":
    # The dataclasses and the election's types come with their first use.
    if name in ("Inspection", "NodeState", "NodeFailure", "Holder", "Reader"):
        from . import _inspection
        return getattr(_inspection, name)
    if name in ("Leader", "Leadership", "Observation"):
        from . import _election
        return getattr(_election, name)
    if name == "__version__":
        from ._files import version
        return version()
    if name == "Node":
        from . import _node
        return _node.Node
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def abi_version() -> int:
    """The C ABI version reported by the loaded liblock.so (loads it)."""
    from . import _native
    return int(_native.lib().lock_abi_version())


def library() -> "Dict[str, Any]":
    """The engine a client that names no backend runs here: ``backend`` (``"native"`` or
    ``"wasm"``), ``path``, ``abi_version`` and ``fallback_reason`` (why liblock.so was
    passed over, or None). Loads it (and decides, if no such client was made yet)."""
    from . import _backend
    return _backend.library()


def library_path() -> "Optional[str]":
    """Path of the loaded liblock.so, or None if not loaded yet."""
    import sys
    lib = sys.modules.get(__name__ + "._native")
    return None if lib is None else lib.loaded_path()


def wasm_path() -> "Optional[str]":
    """Path of the liblock.wasm compiled for the wasm backend, or None if no wasm client was made."""
    import sys
    wasm = sys.modules.get(__name__ + "._wasm")
    return None if wasm is None else wasm.loaded_path()


def live_handles() -> int:
    """Clients and locks made by this process and not freed yet (a debugging aid)."""
    import sys
    client = sys.modules.get(__name__ + "._client")
    return 0 if client is None else int(client._live[0])
