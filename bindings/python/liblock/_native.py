"""The native engine adapter: liblock.so through ctypes (lookup, ABI check, fork guard,
loaded by :func:`lib` on first use) and :class:`NativeEngine` over its
``lock_engine_new/step/free``, which the host drives as it drives liblock.wasm's."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from ctypes import POINTER, c_char_p, c_int32, c_int64, c_uint64, c_void_p
from pathlib import Path
from typing import Any, Optional, Tuple

from ._errors import ForkedProcessError, LibraryError, error_for
from ._files import check_versions, search_path

from ._proto_gen import ABI_VERSION as ABI_VERSION  # the spec's
LIB_NAME = "liblock.so"

_load_lock = threading.Lock()
_dll: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None
_loaded_in_pid: Optional[int] = None
_forked = False


# Said by every "cannot find or load liblock.so" error.
ALTERNATIVE = (
    "Set LIBLOCK_PATH to the path of a liblock.so built for this platform (`make build` in the "
    "liblock repository writes build/liblock.so), or use the wasm backend, which needs no "
    "native library: liblock.Client(nodes, backend=\"wasm\"), which needs wasmtime "
    "(pip install wasmtime==50.0.1, or install liblock with its [wasm] extra).")


def find_library() -> Path:
    """The first candidate that is a file; an LIBLOCK_PATH naming no file is an error."""
    tried = []
    env = os.environ.get("LIBLOCK_PATH")
    for what, path in search_path("LIBLOCK_PATH", LIB_NAME):
        if path.is_file():
            return path
        tried.append(f"{what}: {path}")
        if what == "LIBLOCK_PATH" and env:
            raise LibraryError(f"LIBLOCK_PATH={env} does not name a file. {ALTERNATIVE}")
    raise LibraryError(f"{LIB_NAME} not found; tried " + "; ".join(tried) + ". " + ALTERNATIVE)


def _after_fork_in_child() -> None:
    global _forked
    if _dll is not None:
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
        "not survive fork(). Create the child's clients with backend=\"wasm\" (liblock.wasm "
        "has no Go runtime: it works in a forked child), use multiprocessing's 'spawn' or "
        "'forkserver' start method (multiprocessing.get_context('spawn')), or load liblock.so "
        "only after forking (create native clients only in the children)."
    )


def lib() -> ctypes.CDLL:
    """The loaded library; loads it on first use. Raises in a forked child."""
    global _dll, _lib_path, _loaded_in_pid
    if _forked:
        raise _fork_error()
    dll = _dll
    if dll is not None:
        return dll
    with _load_lock:
        if _dll is not None:
            return _dll
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
        check_versions(path, abi=abi())
        _lib_path = str(path)
        dll.lock_string_free.restype, dll.lock_string_free.argtypes = None, [c_void_p]
        _loaded_in_pid = os.getpid()
        _dll = dll
        return dll


def loaded_path() -> Optional[str]:
    return _lib_path


# ------------------------------------------------------------ the engine interface

ENGINE_IN = 64 * 1024    # one event (a RECEIVED is split to fit)
ENGINE_OUT = 256 * 1024  # PROTOCOL.md: at least 64 KiB, which any one action fits in
_engine_fns: Optional[Tuple[Any, Any, Any]] = None


def _engine_functions() -> Tuple[Any, Any, Any]:
    """lock_engine_new/step/free, through a PyDLL handle: a step is short and never blocks,
    so it keeps the GIL (no release and re-acquire per call)."""
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
        check_versions(_lib_path, proto=proto)
        new.restype, new.argtypes = c_int32, [c_char_p, POINTER(c_uint64), POINTER(c_void_p)]
        step.restype = c_int64
        step.argtypes = [c_uint64, c_void_p, ctypes.c_size_t, c_void_p, ctypes.c_size_t]
        free.restype, free.argtypes = c_int32, [c_uint64]
        _engine_fns = (new, step, free)
    return _engine_fns


_fast_fn: Any = None


def _fast_step() -> Any:
    """lock_engine_step without argtypes (the caller passes ctypes objects of the C types)."""
    global _fast_fn
    if _fast_fn is None:
        fn = ctypes.PyDLL(str(_lib_path))["lock_engine_step"]
        fn.restype = c_int64
        _fast_fn = fn
    return _fast_fn


class NativeEngine:
    """One engine of liblock.so, stepped by one host: events are packed into ``inbuf``;
    ``step`` returns a view of the actions in the output buffer (both allocated once)."""

    in_cap = ENGINE_IN
    out_cap = ENGINE_OUT

    def __init__(self, config: bytes) -> None:
        if _forked:
            raise _fork_error()
        new, self._step, self._free = _engine_functions()
        out, err = c_uint64(), c_void_p()
        status = new(config, ctypes.byref(out), ctypes.byref(err))
        check(status, err)
        self.handle = int(out.value)
        self._in = ctypes.create_string_buffer(ENGINE_IN)
        self._out = ctypes.create_string_buffer(ENGINE_OUT)
        self.inbuf = memoryview(self._in).cast("B")
        self._outview = memoryview(self._out).cast("B")
        # step's arguments but the length, converted once (0.3 µs of a 0.8 µs call)
        self._fast = _fast_step()
        self._handle_c = c_uint64(self.handle)
        self._out_cap_c = ctypes.c_size_t(ENGINE_OUT)
        # the length, set per call (a step is never re-entered)
        self._n_c = ctypes.c_size_t(0)

    def step(self, n: int) -> memoryview:
        n_c = self._n_c
        n_c.value = n
        got = self._fast(self._handle_c, self._in, n_c, self._out, self._out_cap_c)
        if got < 0:
            raise error_for(-got, f"liblock: lock_engine_step failed with status {-got}")
        return self._outview[:got]

    def free(self) -> None:
        if self.handle and not _forked:
            self._free(self.handle)
        self.handle = 0
        self._handle_c = c_uint64(0)


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
