"""The wasm engine adapter: liblock.wasm under wasmtime. One compiled module per process,
an :class:`Instance` per client (WASI only, its calls serialized by a lock) and
:class:`WasmEngine`, stepped by the host (core/hostabi/PROTOCOL.md). Calls go through
wasmtime's "unchecked" C entry points with a preallocated argument array (≈ 3 µs a call,
against ≈ 30 µs through ``Func.__call__``), which ties this file to the pinned wasmtime.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ._errors import InternalError, LibraryError, error_for
from ._files import check_versions, search_path

from ._proto_gen import ABI_VERSION as ABI_VERSION  # the spec's
WASM_NAME = "liblock.wasm"
WASMTIME_PIN = "wasmtime==50.0.1"

EXPORTS = ("lock_abi_version", "lock_engine_new", "lock_engine_step", "lock_engine_free", "lock_buffer")
OPTIONAL_EXPORTS = ("lock_engine_protocol_version",)
IN_CAP = 64 * 1024    # one event (a RECEIVED is split to fit)
OUT_CAP = 256 * 1024  # PROTOCOL.md: at least 64 KiB, which any one action fits in


def find_module() -> Path:
    tried = []
    for what, path in search_path("LIBLOCK_WASM_PATH", WASM_NAME):
        if path.is_file():
            return path
        if what == "LIBLOCK_WASM_PATH":
            raise LibraryError(f"LIBLOCK_WASM_PATH={path} does not name a file")
        tried.append(f"{what}: {path}")
    raise LibraryError(
        f"{WASM_NAME} not found; tried " + "; ".join(tried)
        + ". Build it with `make build` in the liblock repository, or set LIBLOCK_WASM_PATH.")


def _import_wasmtime() -> Tuple[Any, Any]:
    try:
        import wasmtime
        from wasmtime import _bindings as ffi
    except ImportError as e:
        raise LibraryError(
            f"the wasm backend needs the wasmtime package: pip install {WASMTIME_PIN} ({e})") from None
    for name in ("wasmtime_func_call_unchecked", "wasmtime_memory_data", "wasmtime_memory_data_size"):
        if not hasattr(ffi, name):
            raise LibraryError(
                f"this wasmtime lacks {name}; "
                f"this binding is tested with {WASMTIME_PIN}")
    return wasmtime, ffi


class Compiled:
    """The process's engine and compiled module (compiling takes seconds; once)."""

    def __init__(self, path: Path) -> None:
        self.wasmtime, self.ffi = _import_wasmtime()
        wt = self.wasmtime
        cfg = wt.Config()
        self.cached = False
        if os.environ.get("LIBLOCK_WASM_CACHE", "1") != "0":
            try:
                cfg.cache = True  # wasmtime's own on-disk cache of compiled code
                self.cached = True
            except Exception:  # noqa: BLE001 - no usable cache directory: compile each time
                pass
        # Linear memory never moves (growth stays inside a 4 GiB reservation): each engine's
        # buffers are read and written in place, through views made once (WasmEngine).
        cfg.memory_may_move = False
        if sys.maxsize > 2**32:
            cfg.memory_reservation = 1 << 32  # (the default on 64-bit hosts; relied on)
        self.engine = wt.Engine(cfg)
        self.path = path
        try:
            data = path.read_bytes()
        except OSError as e:
            raise LibraryError(f"cannot read {path}: {e}") from e
        t0 = time.perf_counter()
        try:
            self.module = wt.Module(self.engine, data)
        except Exception as e:  # noqa: BLE001 - wasmtime's errors are plain exceptions
            raise LibraryError(f"{path} is not a loadable WebAssembly module: {e}") from None
        self.compile_seconds = time.perf_counter() - t0
        names = {e.name for e in self.module.exports}
        missing = [n for n in EXPORTS if n not in names]
        if "lock_abi_version" not in names:
            raise LibraryError(f"{path} is not liblock.wasm (no lock_abi_version export)")
        self.missing = missing  # reported after the ABI check, which says more


_compile_lock = threading.Lock()
_compiled: Optional[Compiled] = None
_compiled_pid: Optional[int] = None


def compiled() -> Compiled:
    """The compiled module, compiled on first use (per process)."""
    global _compiled, _compiled_pid
    c = _compiled
    if c is not None and _compiled_pid == os.getpid():
        return c
    with _compile_lock:
        if _compiled is None or _compiled_pid != os.getpid():
            _compiled = Compiled(find_module())
            _compiled_pid = os.getpid()
        return _compiled


def loaded_path() -> Optional[str]:
    """Path of the compiled liblock.wasm, or None before the first wasm client."""
    c = _compiled
    return str(c.path) if c is not None else None


class Trapped(InternalError):
    """The module trapped (a Go runtime fatal error): the instance is unusable."""


class Instance:
    """One instantiated module: raw export calls and its buffers. Every call takes ``mu``."""

    def __init__(self) -> None:
        t0 = time.perf_counter()
        c = compiled()
        wt, ffi = c.wasmtime, c.ffi
        self._ffi = ffi
        self.mu = threading.Lock()
        self.dead: Optional[str] = None
        self.pid = os.getpid()
        self.store = wt.Store(c.engine)
        wasi = wt.WasiConfig()
        wasi.inherit_stderr()  # Go's runtime reports a fatal error there; nothing is preopened
        self.store.set_wasi(wasi)
        linker = wt.Linker(c.engine)
        linker.define_wasi()
        try:
            instance = linker.instantiate(self.store, c.module)
        except Exception as e:  # noqa: BLE001
            raise LibraryError(f"cannot instantiate {c.path}: {e}") from None
        exports = instance.exports(self.store)
        self._ctx = self.store._context()
        # The ctypes functions themselves, not wasmtime's Python wrappers around them.
        self._call_unchecked = getattr(ffi, "_wasmtime_func_call_unchecked", ffi.wasmtime_func_call_unchecked)
        self._memory_data = getattr(ffi, "_wasmtime_memory_data", ffi.wasmtime_memory_data)
        self._memory_size = getattr(ffi, "_wasmtime_memory_data_size", ffi.wasmtime_memory_data_size)
        self._raw = (ffi.wasmtime_val_raw_t * 8)()
        # The same entry point for WasmEngine.step, without argtypes (it drops the GIL: a
        # PyDLL handle measured the same, and a step blocked on a full stderr would hold all).
        fast = type(self._call_unchecked)(("wasmtime_func_call_unchecked", self._ffi_dll()))
        fast.restype = ctypes.c_void_p
        self._fast_call = fast
        self._eight = ctypes.c_size_t(8)
        # (input, output) buffers of freed engines, for the next (lock_buffer's are never freed)
        self._spare_bufs: List[Tuple[int, int]] = []
        self._trap = ctypes.POINTER(ffi.wasm_trap_t)()
        self._trap_ref = ctypes.byref(self._trap)
        self._funcs: Dict[str, Any] = {}
        for name in ("_initialize",) + EXPORTS + OPTIONAL_EXPORTS:
            try:
                f = exports[name]
            except KeyError:
                continue
            self._funcs[name] = ctypes.byref(f._func)
        self._mem = exports["memory"]._memory
        self._mem_ref = ctypes.byref(self._mem)
        self.call("_initialize")
        check_versions(c.path, abi=self.call("lock_abi_version"))
        if c.missing:
            raise LibraryError(
                f"{c.path} lacks the exports {', '.join(c.missing)}: it predates the engine "
                "interface; rebuild it with `make build`")
        proto = self.call("lock_engine_protocol_version") if "lock_engine_protocol_version" in self._funcs else 1
        check_versions(c.path, proto=proto)
        self.in_ptr = self.call("lock_buffer", IN_CAP) & 0xFFFFFFFF
        self.out_ptr = self.call("lock_buffer", OUT_CAP) & 0xFFFFFFFF
        if not self.in_ptr or not self.out_ptr:
            raise InternalError("liblock.wasm: lock_buffer failed at start-up")
        self.instantiate_seconds = time.perf_counter() - t0

    @staticmethod
    def _ffi_dll() -> Any:
        from wasmtime import _ffi
        return _ffi.dll

    def take_buffers(self) -> Tuple[int, int]:
        """An (input, output) pair of module buffers: a freed engine's, or two new ones."""
        with self.mu:
            if self._spare_bufs:
                return self._spare_bufs.pop()
            in_ptr = self.call("lock_buffer", IN_CAP) & 0xFFFFFFFF
            out_ptr = self.call("lock_buffer", OUT_CAP) & 0xFFFFFFFF
        if not in_ptr or not out_ptr:
            raise InternalError("liblock.wasm: lock_buffer failed")
        return in_ptr, out_ptr

    def give_buffers(self, bufs: Tuple[int, int]) -> None:
        with self.mu:
            self._spare_bufs.append(bufs)

    def wasmtime_error(self, err: Any) -> str:
        from wasmtime import WasmtimeError
        return str(WasmtimeError._from_ptr(err))

    def call(self, name: str, *args: int) -> int:
        """Call an export with integer arguments; its result as an i64."""
        if self.dead is not None:
            raise Trapped(f"liblock.wasm instance is unusable after a trap: {self.dead}")
        raw = self._raw
        for i, a in enumerate(args):
            raw[i].i64 = a
        err = self._call_unchecked(self._ctx, self._funcs[name], raw, 8, self._trap_ref)
        if err or self._trap:
            self._fail(name, err)
        return int(raw[0].i64)

    def _fail(self, name: str, err: Any) -> None:
        if err:
            msg = self.wasmtime_error(err)
        else:
            from wasmtime import Trap
            trap = self._trap
            self._trap = ctypes.POINTER(self._ffi.wasm_trap_t)()
            self._trap_ref = ctypes.byref(self._trap)
            msg = str(Trap._from_ptr(trap))
        self.dead = f"{name}: {msg}"
        raise Trapped(f"liblock.wasm trapped in {name}: {msg}")

    def base(self) -> int:
        # The same for the instance's life (memory never moves; tests/test_wasm.py checks)
        return ctypes.addressof(self._memory_data(self._ctx, self._mem_ref).contents)

    def engine_new(self, config: bytes) -> int:
        """lock_engine_new; raises the engine's error."""
        with self.mu:
            ptr = self.in_ptr if len(config) <= IN_CAP else self.call("lock_buffer", len(config)) & 0xFFFFFFFF
            ctypes.memmove(self.base() + ptr, config, len(config))
            handle = self.call("lock_engine_new", ptr, len(config), self.out_ptr, OUT_CAP)
            if handle > 0:
                return handle
            at = self.base() + self.out_ptr
            n = int.from_bytes(ctypes.string_at(at, 4), "little")
            msg = ctypes.string_at(at + 4, min(n, OUT_CAP - 4)).decode("utf-8", "replace")
        raise error_for(-handle, msg)


class WasmEngine:
    """One engine inside a Client's Instance, stepped by one host. Its input and output
    buffers are in module memory (``inbuf`` and ``step``'s result are views of them: no copy
    per step), and ``step`` calls ``lock_engine_step`` over a private argument array in
    which only the handle and the event's length are written per call."""

    in_cap = IN_CAP
    out_cap = OUT_CAP

    def __init__(self, inst: Instance, config: bytes) -> None:
        self.inst = inst
        self.handle = inst.engine_new(config)
        try:
            self._bufs: Optional[Tuple[int, int]] = inst.take_buffers()
        except BaseException:
            with inst.mu:
                if inst.dead is None:
                    inst.call("lock_engine_free", self.handle)
            raise
        in_ptr, out_ptr = self._bufs
        base = inst.base()
        self.inbuf = memoryview((ctypes.c_char * IN_CAP).from_address(base + in_ptr)).cast("B")
        self._outview = memoryview((ctypes.c_char * OUT_CAP).from_address(base + out_ptr)).cast("B")
        # wasmtime_val_raw_t is 16 bytes: argument i is the i64 at index 2*i
        args = (ctypes.c_int64 * 16)()
        args[2], args[6], args[8] = in_ptr, out_ptr, OUT_CAP
        self._args = args
        self._func = inst._funcs["lock_engine_step"]

    def step(self, n: int) -> memoryview:
        inst = self.inst
        args = self._args
        with inst.mu:
            if inst.dead is not None:
                inst.call("lock_engine_step")  # raises Trapped
            args[0] = self.handle
            args[4] = n
            err = inst._fast_call(inst._ctx, self._func, args, inst._eight, inst._trap_ref)
            if err or inst._trap:
                inst._fail("lock_engine_step", err)
            got: int = args[0]
        if got <= 0:
            if got < 0:
                raise error_for(-got, f"liblock.wasm: lock_engine_step failed with status {-got}")
            return self._outview[:0]
        return self._outview[:got]

    def free(self) -> None:
        inst, handle, self.handle = self.inst, self.handle, 0
        if handle and inst.dead is None and os.getpid() == inst.pid:
            with inst.mu:
                inst.call("lock_engine_free", handle)
        bufs, self._bufs = self._bufs, None
        if bufs is not None:
            # a late writer writes into a buffer of its own, not the next engine's
            self.inbuf = memoryview(bytearray(IN_CAP))
            self._outview = memoryview(bytearray(0))
            inst.give_buffers(bufs)
