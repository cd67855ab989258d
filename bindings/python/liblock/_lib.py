"""Loading liblock.so through ctypes: lookup, ABI check, signatures, fork guard,
and the one C callback trampoline shared by every asynchronous call.

Nothing here loads the library at import time: :func:`lib` does it on first use.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import traceback
from ctypes import POINTER, c_char_p, c_int32, c_int64, c_uint64, c_void_p
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._errors import ForkedProcessError, LibraryError, error_for
from ._files import search_path

from ._proto_gen import ABI_VERSION as ABI_VERSION  # noqa: E402 - the spec's (core/hostabi/spec/protocol.json)
from ._proto_gen import PROTOCOL_VERSION  # noqa: E402
LIB_NAME = "liblock.so"

# void (*lock_callback)(void *user_data, int32_t status, uint64_t handle, const char *err)
CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_int32, c_uint64, c_char_p)

_load_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None
_loaded_in_pid: Optional[int] = None
_forked = False


def candidates() -> List[Tuple[str, Path]]:
    """Where the library is looked for, in order."""
    return search_path("LIBLOCK_PATH", LIB_NAME)


# Said by every "cannot find or load liblock.so" error: where the native library
# cannot go (macOS, Windows, musl, sandboxes), the wasm backend needs no .so.
ALTERNATIVE = (
    "Set LIBLOCK_PATH to the path of a liblock.so built for this platform (`make build` in the "
    "liblock repository writes build/liblock.so), or use the wasm backend, which needs no "
    "native library: liblock.Client(nodes, backend=\"wasm\"), which needs wasmtime "
    "(pip install wasmtime==50.0.1, or install liblock with its [wasm] extra).")


def find_library() -> Path:
    """The first candidate that is a file. An LIBLOCK_PATH that names no file is an
    error of its own (an explicit path is not a hint to fall back from)."""
    tried = []
    env = os.environ.get("LIBLOCK_PATH")
    for what, path in candidates():
        if path.is_file():
            return path
        tried.append(f"{what}: {path}")
        if what == "LIBLOCK_PATH" and env:
            raise LibraryError(f"LIBLOCK_PATH={env} does not name a file. {ALTERNATIVE}")
    raise LibraryError(f"{LIB_NAME} not found; tried " + "; ".join(tried) + ". " + ALTERNATIVE)


def _after_fork_in_child() -> None:
    global _forked
    if _lib is not None:
        _forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def forked() -> bool:
    """True in a process forked after liblock.so was loaded (the library is unusable there)."""
    return _forked


def _fork_error() -> ForkedProcessError:
    return ForkedProcessError(
        f"liblock cannot be used in this process (pid {os.getpid()}): it was forked from "
        f"pid {_loaded_in_pid} after liblock.so had been loaded there, and a Go runtime does "
        "not survive fork(). Use multiprocessing's 'spawn' or 'forkserver' start method "
        "(multiprocessing.get_context('spawn')), or create liblock clients only after forking."
    )


def _declare(dll: ctypes.CDLL) -> None:
    u64p = POINTER(c_uint64)
    errp = POINTER(c_void_p)  # char **err: kept as void* so that we can free it
    sig = {
        "lock_abi_version": (c_int32, []),
        "lock_client_new": (c_int32, [c_char_p, u64p, errp]),
        "lock_acquire": (c_int32, [c_uint64, c_char_p, c_int64, c_char_p, u64p, errp]),
        "lock_extend": (c_int32, [c_uint64, c_int64, errp]),
        "lock_release": (c_int32, [c_uint64, errp]),
        "lock_free": (c_int32, [c_uint64]),
        "lock_string_free": (None, [c_void_p]),
        "lock_acquire_async": (
            c_int32, [c_uint64, c_char_p, c_int64, c_char_p, CALLBACK, c_void_p, u64p, errp]),
        "lock_extend_async": (c_int32, [c_uint64, c_int64, CALLBACK, c_void_p, errp]),
        "lock_release_async": (c_int32, [c_uint64, CALLBACK, c_void_p, errp]),
        "lock_cancel": (c_int32, [c_uint64]),
        "lock_on_lost": (c_int32, [c_uint64, CALLBACK, c_void_p, errp]),
        "lock_info": (c_int32, [c_uint64, errp, errp]),
    }
    for name, (restype, argtypes) in sig.items():
        try:
            fn = getattr(dll, name)
        except AttributeError:
            raise LibraryError(f"{_lib_path}: missing symbol {name}; rebuild with `make build`") from None
        fn.restype = restype
        fn.argtypes = argtypes


_inspect_fn: Any = None


def inspect_function() -> Any:
    """lock_inspect (C ABI 1, added with inspect/re-entry/fencing): looked up on first
    use, so that a liblock.so without it still serves everything else."""
    global _inspect_fn
    if _inspect_fn is None:
        dll = lib()
        try:
            fn = dll.lock_inspect
        except AttributeError:
            raise LibraryError(f"{_lib_path}: missing symbol lock_inspect (an older liblock.so); "
                               "rebuild it with `make build`") from None
        fn.restype = c_int32
        fn.argtypes = [c_uint64, c_char_p, POINTER(c_void_p), POINTER(c_void_p)]
        _inspect_fn = fn
    return _inspect_fn


_inspect_ex_fn: Any = None


def inspect_ex_function() -> Any:
    """lock_inspect_ex (a semaphore's inspection, C ABI 1 addition): looked up on first use."""
    global _inspect_ex_fn
    if _inspect_ex_fn is None:
        dll = lib()
        try:
            fn = dll.lock_inspect_ex
        except AttributeError:
            raise LibraryError(f"{_lib_path}: missing symbol lock_inspect_ex (an older liblock.so); "
                               "rebuild it with `make build`") from None
        fn.restype = c_int32
        fn.argtypes = [c_uint64, c_char_p, c_char_p, POINTER(c_void_p), POINTER(c_void_p)]
        _inspect_ex_fn = fn
    return _inspect_ex_fn


def lib() -> ctypes.CDLL:
    """The loaded library; loads it on first use. Raises in a forked child."""
    global _lib, _lib_path, _loaded_in_pid
    if _forked:
        raise _fork_error()
    dll = _lib
    if dll is not None:
        return dll
    with _load_lock:
        if _lib is not None:
            return _lib
        path = find_library()
        try:
            dll = ctypes.CDLL(str(path))  # CDLL: the GIL is released during every call
        except OSError as e:
            raise LibraryError(f"cannot load {path} on {sys.platform}: {e}. {ALTERNATIVE}") from e
        try:
            abi = dll.lock_abi_version
        except AttributeError:
            raise LibraryError(f"{path} is not liblock (no lock_abi_version symbol). {ALTERNATIVE}") from None
        abi.restype = c_int32
        abi.argtypes = []
        version = abi()
        if version != ABI_VERSION:
            raise LibraryError(
                f"{path} has C ABI version {version}, but this liblock binding needs version "
                f"{ABI_VERSION}; rebuild the library (`make build`) or install a matching binding")
        _lib_path = str(path)
        _declare(dll)
        _loaded_in_pid = os.getpid()
        _lib = dll
        return dll


def loaded_path() -> Optional[str]:
    return _lib_path


# ------------------------------------------------------------ the engine interface

ENGINE_IN = 64 * 1024    # one event (a RECEIVED is split to fit)
ENGINE_OUT = 256 * 1024  # PROTOCOL.md: at least 64 KiB, which any one action fits in
_engine_fns: Optional[Tuple[Any, Any, Any]] = None


def _engine_functions() -> Tuple[Any, Any, Any]:
    """lock_engine_new/step/free, through a PyDLL handle of the same library: a step
    is short and never blocks, so it keeps the GIL (no release/re-acquire per call,
    no wait for another thread to hand the GIL back)."""
    global _engine_fns
    if _engine_fns is None:
        lib()
        dll = ctypes.PyDLL(str(_lib_path))
        try:
            new, step, free = dll.lock_engine_new, dll.lock_engine_step, dll.lock_engine_free
        except AttributeError:
            raise LibraryError(f"{_lib_path}: missing lock_engine_step; rebuild with `make build`") from None
        try:
            proto_fn = dll.lock_engine_protocol_version
            proto_fn.restype, proto_fn.argtypes = c_int32, []
            proto = int(proto_fn())
        except AttributeError:
            proto = 1  # a library without it speaks engine protocol 1
        if proto != PROTOCOL_VERSION:
            raise LibraryError(
                f"{_lib_path} speaks engine protocol {proto}, but this liblock binding needs "
                f"{PROTOCOL_VERSION}; rebuild the library (`make build`) or install a matching binding")
        new.restype, new.argtypes = c_int32, [c_char_p, POINTER(c_uint64), POINTER(c_void_p)]
        step.restype = c_int64
        step.argtypes = [c_uint64, c_void_p, ctypes.c_size_t, c_void_p, ctypes.c_size_t]
        free.restype, free.argtypes = c_int32, [c_uint64]
        _engine_fns = (new, step, free)
    return _engine_fns


class NativeEngine:
    """One engine of liblock.so (``lock_engine_*``), stepped by one asyncio host.
    Events are packed into ``inbuf``; ``step`` returns a view of the actions in the
    output buffer (both allocated once)."""

    in_cap = ENGINE_IN
    out_cap = ENGINE_OUT

    def __init__(self, config: bytes) -> None:
        new, self._step, self._free = _engine_functions()
        out, err = c_uint64(), c_void_p()
        status = new(config, ctypes.byref(out), ctypes.byref(err))
        check(status, err)
        self.handle = int(out.value)
        self._in = ctypes.create_string_buffer(ENGINE_IN)
        self._out = ctypes.create_string_buffer(ENGINE_OUT)
        self.inbuf = memoryview(self._in).cast("B")
        self._outview = memoryview(self._out).cast("B")

    def step(self, n: int) -> memoryview:
        got = self._step(self.handle, self._in, n, self._out, ENGINE_OUT)
        if got < 0:
            raise error_for(-got, f"liblock: lock_engine_step failed with status {-got}")
        return self._outview[:got]

    def free(self) -> None:
        if self.handle and not _forked:
            self._free(self.handle)
        self.handle = 0


def take_string(ptr: c_void_p) -> Optional[str]:
    """Copy a library-allocated C string and free it."""
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace")
    finally:
        lib().lock_string_free(ptr)


def check(status: int, err: c_void_p) -> None:
    """Raise the exception for a failed call (and free its message)."""
    message = take_string(err)
    if status != 0:
        raise error_for(status, message)


# ---------------------------------------------------------------- callbacks
#
# One CFUNCTYPE object for the life of the process (ctypes must keep it alive
# while C may call it). user_data is never a Python object pointer: it is the
# address of a 1-byte ctypes buffer owned by _pending, used as a key. (A small
# integer would do for C, but the Go runtime rejects pointer-typed values below
# 4096 it finds on a goroutine stack, so the key must look like real memory.)

_pending: Dict[int, Tuple[Callable[[int, int, Optional[str]], None], Any]] = {}
# RLocks: a finalizer (free_lock -> unregister) may run from a garbage collection
# triggered on this very thread while the lock is held.
_pending_lock = threading.RLock()


def register(fn: Callable[[int, int, Optional[str]], None]) -> int:
    anchor = ctypes.c_char()
    key = ctypes.addressof(anchor)
    entry = (fn, anchor)
    with _pending_lock:
        _pending[key] = entry
    return key


def unregister(key: int) -> None:
    with _pending_lock:
        _pending.pop(key, None)


def take(key: int) -> Optional[Callable[[int, int, Optional[str]], None]]:
    """Remove a registration and return its function (None if already gone)."""
    with _pending_lock:
        entry = _pending.pop(key, None)
    return entry[0] if entry is not None else None


def pending_count() -> int:
    with _pending_lock:
        return len(_pending)


def _trampoline(user_data: Optional[int], status: int, handle: int, err: Optional[bytes]) -> None:
    # Runs on a thread owned by the Go runtime. Must never raise into C.
    try:
        fn = take(user_data or 0)
        if fn is None:
            return
        fn(status, handle, err.decode("utf-8", "replace") if err else None)
    except BaseException:  # noqa: BLE001 - nothing may escape into C
        try:
            traceback.print_exc(file=sys.stderr)
        except BaseException:  # noqa: BLE001
            pass


C_CALLBACK = CALLBACK(_trampoline)


# ------------------------------------------------------------ handle counts

_live = 0
_live_lock = threading.RLock()


def handle_opened() -> None:
    global _live
    with _live_lock:
        _live += 1


def handle_closed() -> None:
    """Counterpart of :func:`handle_opened` (any backend)."""
    global _live
    with _live_lock:
        _live -= 1


def free_handle(handle: int) -> None:
    """Finalizer-safe lock_free: a no-op after fork or when the library is gone."""
    handle_closed()
    if _forked or _lib is None or not handle:
        return
    try:
        _lib.lock_free(handle)
    except Exception:  # noqa: BLE001 - finalizers must not raise
        pass


def free_lock(handle: int, lost_key: List[int]) -> None:
    """Finalizer of a Lock: drop its on_lost registration, then free the handle."""
    key, lost_key[0] = lost_key[0], 0
    if key:
        unregister(key)
    free_handle(handle)


def live_handles() -> int:
    """Handles created through this binding and not freed yet (a debugging aid)."""
    with _live_lock:
        return _live
