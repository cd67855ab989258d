"""liblock.wasm under wasmtime: module lookup, one compiled module per process, and
:class:`Instance`, a thin raw-call layer over one instantiated module.

The protocol is wasm/PROTOCOL.md (imports, exports, memory ownership) and the
non-blocking exports of the same file. Calls go through wasmtime's "unchecked"
C entry points with a preallocated argument array: ``Func.__call__`` costs
≈ 30 µs per call (it queries the function type and converts every value), the raw
path ≈ 3 µs, and a lock operation makes 3–5 calls. That ties this file to the
pinned wasmtime (requirements-wasm.txt); a missing entry point is reported as a
:class:`LibraryError` naming the pin.

An :class:`Instance` is not thread-safe: its owner (``_wasmbackend``) serializes calls.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._errors import InternalError, LibraryError
from ._files import search_path

ABI_VERSION = 1
WASM_NAME = "liblock.wasm"
WASMTIME_PIN = "wasmtime==50.0.1"

# Exports this binding calls; a module without them is too old.
EXPORTS = (
    "lock_abi_version", "lock_buf_alloc", "lock_buf_free", "lock_client_new",
    "lock_acquire_start", "lock_run", "lock_op_result", "lock_cancel",
    "lock_extend", "lock_release", "lock_free", "lock_info",
)

# exec(req, req_len, resp, resp_cap) -> resp_len, given the request bytes.
ExecFn = Callable[[bytes], bytes]


def candidates() -> List[Tuple[str, Path]]:
    """Where the module is looked for, in order."""
    return search_path("LIBLOCK_WASM_PATH", WASM_NAME)


def find_module() -> Path:
    tried = []
    for what, path in candidates():
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
    for name in ("wasmtime_func_call_unchecked", "wasmtime_linker_define_func_unchecked",
                 "wasmtime_memory_data", "wasmtime_memory_data_size", "wasmtime_caller_context",
                 "wasmtime_trap_new", "wasmtime_store_context"):
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
    """One instantiated module: raw export calls, memory access, the host imports."""

    # Scratch layout inside the module (one lock_buf_alloc each, kept for life).
    IN_CAP = 4096
    OUT = 0          # u64 out-parameter (client, op or lock handle)
    ERR = 8          # (ptr u32, len u32) error record
    INFO = 16        # (ptr u32, len u32) lock_info JSON
    RUN = 32         # lock_run: i64 next_run_ms, then 16-byte events
    RUN_EVENTS = 64
    OUT_CAP = RUN + 8 + 16 * RUN_EVENTS

    def __init__(self, exec_fn: ExecFn) -> None:
        t0 = time.perf_counter()
        c = compiled()
        wt, ffi = c.wasmtime, c.ffi
        self._ffi = ffi
        self._exec_fn = exec_fn
        self._pending = b""  # the last exec response, for exec_take
        self.dead: Optional[str] = None
        self.store = wt.Store(c.engine)
        wasi = wt.WasiConfig()
        wasi.inherit_stderr()  # Go's runtime reports a fatal error there; nothing is preopened
        self.store.set_wasi(wasi)
        linker = wt.Linker(c.engine)
        linker.define_wasi()
        self._callbacks: List[Any] = []  # the ctypes callbacks must outlive the instance
        i32 = wt.ValType.i32()
        self._define(linker, "exec", wt.FuncType([i32] * 4, [i32]), self._host_exec)
        self._define(linker, "exec_take", wt.FuncType([i32] * 2, [i32]), self._host_exec_take)
        self._define(linker, "interrupted", wt.FuncType([], [i32]), self._host_interrupted)
        try:
            instance = linker.instantiate(self.store, c.module)
        except Exception as e:  # noqa: BLE001
            raise LibraryError(f"cannot instantiate {c.path}: {e}") from None
        exports = instance.exports(self.store)
        self._ctx = self.store._context()
        # The ctypes functions themselves, not wasmtime's Python wrappers around them
        # (one frame less per call; these run a dozen times per lock operation).
        self._call_unchecked = getattr(ffi, "_wasmtime_func_call_unchecked", ffi.wasmtime_func_call_unchecked)
        self._memory_data = getattr(ffi, "_wasmtime_memory_data", ffi.wasmtime_memory_data)
        self._memory_size = getattr(ffi, "_wasmtime_memory_data_size", ffi.wasmtime_memory_data_size)
        self._raw = (ffi.wasmtime_val_raw_t * 8)()
        self._trap = ctypes.POINTER(ffi.wasm_trap_t)()
        self._trap_ref = ctypes.byref(self._trap)
        self._funcs: Dict[str, Any] = {}
        for name in ("_initialize",) + EXPORTS:
            try:
                f = exports[name]
            except KeyError:
                continue
            self._funcs[name] = ctypes.byref(f._func)
        self._mem = exports["memory"]._memory
        self._mem_ref = ctypes.byref(self._mem)
        self.call("_initialize")
        version = self.call("lock_abi_version")
        if version != ABI_VERSION:
            raise LibraryError(
                f"{c.path} has ABI version {version}, but this liblock binding needs version "
                f"{ABI_VERSION}; rebuild it (`make build`) or install a matching binding")
        if c.missing:
            raise LibraryError(
                f"{c.path} lacks the exports {', '.join(c.missing)}: it predates the non-blocking "
                "acquire; rebuild it with `make build`")
        self.in_buf = self.call("lock_buf_alloc", self.IN_CAP) & 0xFFFFFFFF
        self.out_buf = self.call("lock_buf_alloc", self.OUT_CAP) & 0xFFFFFFFF
        if not self.in_buf or not self.out_buf:
            raise InternalError("liblock.wasm: lock_buf_alloc failed at start-up")
        self.instantiate_seconds = time.perf_counter() - t0

    # ------------------------------------------------------------ host imports

    def _define(self, linker: Any, name: str, ty: Any, fn: Callable[[Any, Any], int]) -> None:
        ffi = self._ffi

        def callback(env: Any, caller: Any, args: Any, nargs: int) -> int:
            try:
                args[0].i32 = fn(caller, args)
                return 0
            except BaseException as e:  # noqa: BLE001 - nothing may unwind into wasm
                msg = f"liblock host: {name}: {type(e).__name__}: {e}".encode("utf-8", "replace")
                trap = ffi.wasmtime_trap_new(ctypes.create_string_buffer(msg, len(msg)), len(msg))
                return int(ctypes.cast(trap, ctypes.c_void_p).value or 0)

        cb = ffi.wasmtime_func_unchecked_callback_t(callback)
        fin = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(0)
        self._callbacks.append((cb, fin))
        mod, nm = b"liblock", name.encode()
        err = ffi.wasmtime_linker_define_func_unchecked(
            linker.ptr(), ctypes.create_string_buffer(mod, len(mod)), len(mod),
            ctypes.create_string_buffer(nm, len(nm)), len(nm), ty.ptr(), cb, None, fin)
        if err:
            raise LibraryError(f"cannot define liblock.{name}: {self.wasmtime_error(err)}")

    def wasmtime_error(self, err: Any) -> str:
        from wasmtime import WasmtimeError
        return str(WasmtimeError._from_ptr(err))

    def _caller_memory(self, caller: Any) -> Tuple[int, int]:
        ffi = self._ffi
        cctx = ffi.wasmtime_caller_context(caller)
        base = ctypes.addressof(ffi.wasmtime_memory_data(cctx, self._mem_ref).contents)
        return base, int(ffi.wasmtime_memory_data_size(cctx, self._mem_ref))

    def _host_exec(self, caller: Any, args: Any) -> int:
        req, req_len = args[0].i32 & 0xFFFFFFFF, args[1].i32 & 0xFFFFFFFF
        resp, resp_cap = args[2].i32 & 0xFFFFFFFF, args[3].i32 & 0xFFFFFFFF
        base, size = self._caller_memory(caller)
        if req + req_len > size or resp + resp_cap > size:
            raise ValueError("exec: buffer out of the module's memory")
        out = self._exec_fn(ctypes.string_at(base + req, req_len))
        self._pending = out
        if len(out) <= resp_cap:
            ctypes.memmove(base + resp, out, len(out))
        return len(out)

    def _host_exec_take(self, caller: Any, args: Any) -> int:
        buf, cap = args[0].i32 & 0xFFFFFFFF, args[1].i32 & 0xFFFFFFFF
        base, size = self._caller_memory(caller)
        data = self._pending[:cap]
        if buf + len(data) > size:
            raise ValueError("exec_take: buffer out of the module's memory")
        ctypes.memmove(base + buf, data, len(data))
        return len(data)

    def _host_interrupted(self, caller: Any, args: Any) -> int:
        return 0  # only the blocking lock_acquire polls it; this binding never calls that

    # ------------------------------------------------------------ calls

    def call(self, name: str, *args: int) -> int:
        """Call an export with integer arguments; its i32 result (every export returns
        an i32 or nothing; then the value is meaningless)."""
        if self.dead is not None:
            raise Trapped(f"liblock.wasm instance is unusable after a trap: {self.dead}")
        raw = self._raw
        for i, a in enumerate(args):
            raw[i].i64 = a
        err = self._call_unchecked(self._ctx, self._funcs[name], raw, 8, self._trap_ref)
        if err or self._trap:
            self._fail(name, err)
        return int(raw[0].i32)

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

    # ------------------------------------------------------------ memory

    def _base(self) -> Tuple[int, int]:
        # Asked again every time: memory may grow (and so move) during any call.
        base = ctypes.addressof(self._memory_data(self._ctx, self._mem_ref).contents)
        return base, int(self._memory_size(self._ctx, self._mem_ref))

    def read(self, ptr: int, n: int) -> bytes:
        base, size = self._base()
        if ptr < 0 or n < 0 or ptr + n > size:
            raise InternalError(f"liblock.wasm: out-of-range buffer ({ptr}, {n})")
        return ctypes.string_at(base + ptr, n)

    def u64(self, ptr: int) -> int:
        base, _ = self._base()
        return int(ctypes.c_uint64.from_address(base + ptr).value)

    def write(self, ptr: int, data: bytes) -> None:
        base, size = self._base()
        if ptr + len(data) > size:
            raise InternalError("liblock.wasm: write out of range")
        ctypes.memmove(base + ptr, data, len(data))

    def put(self, *items: bytes) -> List[Tuple[int, int]]:
        """Copy strings into the module: (ptr, len) each, in the scratch buffer when
        they fit. Free the result with :meth:`release_put` after the call."""
        total = sum(len(x) for x in items)
        if total <= self.IN_CAP:
            at = self.in_buf
            out = []
            base, _ = self._base()
            for x in items:
                ctypes.memmove(base + at, x, len(x))
                out.append((at, len(x)))
                at += len(x)
            return out
        out = []
        for x in items:
            p = self.call("lock_buf_alloc", len(x)) & 0xFFFFFFFF
            if not p:
                for q, _ in out:
                    self.call("lock_buf_free", q)
                raise InternalError(f"liblock.wasm: cannot allocate {len(x)} bytes")
            self.write(p, x)
            out.append((p, len(x)))
        return out

    def release_put(self, placed: List[Tuple[int, int]]) -> None:
        for p, _ in placed:
            if p < self.in_buf or p >= self.in_buf + self.IN_CAP:
                self.call("lock_buf_free", p)

    def take_pair(self, at: int) -> Optional[bytes]:
        """Copy and free the module buffer whose (ptr u32, len u32) is at ``at``."""
        base, _ = self._base()
        pair = ctypes.string_at(base + at, 8)
        ptr = int.from_bytes(pair[:4], "little")
        n = int.from_bytes(pair[4:], "little")
        if not ptr:
            return None
        data = self.read(ptr, n)
        self.call("lock_buf_free", ptr)
        return data

    def take_error(self) -> Optional[str]:
        """The message of the error record at out+ERR (freed), if any."""
        raw = self.take_pair(self.out_buf + self.ERR)
        if raw is None:
            return None
        try:
            rec = json.loads(raw)
            return str(rec.get("message") or raw.decode("utf-8", "replace"))
        except ValueError:
            return raw.decode("utf-8", "replace")

    def clear_error(self) -> None:
        self.write(self.out_buf + self.ERR, b"\0" * 8)
