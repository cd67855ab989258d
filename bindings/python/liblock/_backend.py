"""Which engine a client that names none runs: liblock.so where it loads, else liblock.wasm
(said once, by a warning of its own category). Chosen once per process; an explicit
``backend="native"`` never falls back."""

from __future__ import annotations

import threading

from ._errors import ForkedProcessError, LibraryError

TYPE_CHECKING = False  # `import liblock` imports this module: no typing at run time
if TYPE_CHECKING:
    from typing import Any, Dict, Optional


class NativeUnavailableWarning(RuntimeWarning):
    """Issued once per process when a client that names no backend runs the wasm backend
    because liblock.so does not load here; pass ``backend="wasm"`` to choose it silently."""


_lock = threading.Lock()
_chosen: Optional[str] = None
_fallback: Optional[str] = None  # why the native library did not load, when wasm was chosen


def _native_error() -> Optional[LibraryError]:
    """None when liblock.so loads and speaks this binding's ABI and protocol."""
    from . import _native
    try:
        _native.lib()
        _native._engine_functions()
    except ForkedProcessError:
        raise  # the library did load, in the parent: not a platform without it
    except LibraryError as e:
        return e
    return None


def _wasm_error() -> Optional[LibraryError]:
    """None when liblock.wasm is found and wasmtime imports."""
    from . import _wasm
    try:
        _wasm.find_module()
        _wasm._import_wasmtime()
    except LibraryError as e:
        return e
    return None


def choose(backend: Optional[str]) -> str:
    """``backend`` itself when given, else the process's choice (made here the first time)."""
    global _chosen, _fallback
    if backend is not None:
        return backend
    if _chosen is not None:
        return _chosen
    with _lock:
        if _chosen is not None:
            return _chosen
        native = _native_error()
        if native is None:
            _chosen = "native"
            return _chosen
        wasm = _wasm_error()
        if wasm is not None:
            raise LibraryError(
                f"liblock has no backend that runs here: the native library does not load ({native}); "
                f"and the wasm backend cannot run either ({wasm})") from native
        _fallback = str(native)
        _chosen = "wasm"
    import warnings
    warnings.warn(
        f"liblock: running the wasm backend (liblock.wasm under wasmtime): the native library does "
        f"not load here ({_fallback}). Pass backend=\"wasm\" to choose it without this warning, or "
        f"backend=\"native\" to make this an error.", NativeUnavailableWarning, stacklevel=4)
    return _chosen


def library() -> Dict[str, Any]:
    """``liblock.library()``."""
    from ._proto_gen import ABI_VERSION
    backend = choose(None)
    if backend == "native":
        from . import _native
        path = _native.loaded_path()
    else:
        from . import _wasm
        path = _wasm.loaded_path() or str(_wasm.find_module())
    return {"backend": backend, "path": path, "abi_version": ABI_VERSION, "fallback_reason": _fallback}
