"""The wasm backend: liblock.wasm's engine under wasmtime, driven by the asyncio host.

One module instance per Client (``_wasm.Instance``; its calls are serialized),
holding one engine per event loop the client's asyncio forms run on, plus one
for the synchronous API: that one runs on a private event loop in one daemon
thread (``liblock-wasm-driver``, started by the first synchronous call, stopped
by close), which also carries out its auto-extensions. Synchronous calls hand
their operation to that loop and wait (interruptibly) for its completion.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

from . import _host, _lib, _wasm
from ._errors import ClientClosed, ForkedProcessError

_CLOSED_MESSAGE = "liblock: the client is closed"


class WasmBackend(_host.HostOps):
    """One Client's module instance, engines and loop thread. The lock-level
    methods (``HostOps``) are those of the synchronous API's host."""

    name = "wasm"

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._inst = _wasm.Instance()
        self._mu = threading.Lock()
        self._thread: Optional[_host.LoopThread] = None
        self._sync_engine: Optional[_wasm.WasmEngine] = None
        self._hosts: Optional[_host.Hosts] = None
        self._tls: Any = None
        self._closed = False
        self._timeout = 2.0
        self._released = set()

    def _usable(self) -> None:
        if os.getpid() != self._pid:
            raise ForkedProcessError(
                f"this liblock client (wasm backend) was created in process {self._pid}; "
                f"process {os.getpid()} is a fork of it and cannot use it: its Redis "
                "connections and lock state belong to the parent. Create a new "
                "liblock.Client in the child.")
        if self._closed:
            raise ClientClosed(_CLOSED_MESSAGE)

    @property  # type: ignore[override]
    def host(self) -> _host.Host:  # the synchronous API's host (HostOps.host)
        self._usable()
        t = self._thread
        if t is None:
            with self._mu:
                self._usable()
                if self._thread is None:
                    engine, self._sync_engine = self._sync_engine, None
                    assert engine is not None
                    self._thread = _host.LoopThread(engine, "liblock-wasm-driver", self._tls)
                t = self._thread
        assert t.host is not None
        return t.host

    def async_host(self) -> _host.Host:
        """The asyncio host of the running loop."""
        self._usable()
        assert self._hosts is not None
        return self._hosts.get()

    # ------------------------------------------------------------ Backend

    def client_new(self, config: bytes, tls: Any = None) -> int:
        # the engine of the synchronous API: made now, so that a bad config fails here
        self._sync_engine = _wasm.WasmEngine(self._inst, config)
        timeout = json.loads(config).get("node_timeout_ms", 50) / 1000.0
        self._timeout = 2.0 + 4 * timeout
        self._tls = tls  # both APIs connect through asyncio hosts: the context goes there
        self._hosts = _host.Hosts(lambda: _wasm.WasmEngine(self._inst, config), self._timeout, tls)
        return 1

    def free_client(self, handle: int) -> None:
        _lib.handle_closed()
        if os.getpid() != self._pid:
            return  # a forked child: the parent's instance and sockets are not ours
        with self._mu:
            if self._closed:
                return
            self._closed = True
            thread, self._thread = self._thread, None
            engine, self._sync_engine = self._sync_engine, None
        if self._hosts is not None:
            self._hosts.close_all()
        if thread is not None:
            thread.stop(self._timeout)
        if engine is not None:
            engine.free()

    def acquire(self, client: int, res: bytes, ttl_ms: int, opts: Optional[bytes],
                interruptible: bool) -> Tuple[int, Dict[str, Any]]:
        o: Dict[str, Any] = json.loads(opts) if opts else {}
        return _host.acquire_blocking(self.host, res, ttl_ms, int(o.get("wait_ms", 0)),
                                      bool(o.get("auto_extend", False)), bool(o.get("fence", False)),
                                      str(o.get("token", "")).encode("utf-8"),
                                      {"read": 1, "write": 2}.get(str(o.get("mode", "")), 0))

    def inspect(self, client: int, res: bytes) -> Any:
        """The INSPECTED fields (an INSPECTED action after its op, ``_proto.decode_action``), through the sync host."""
        host = self.host
        return _host.run_op(host, lambda done: host.start_inspect(res, done))

    def free_lock(self, lock: int, lost_key: List[int]) -> None:
        if self._closed or os.getpid() != self._pid or self._thread is None:
            from . import _lib as L
            key, lost_key[0] = lost_key[0], 0
            if key:
                L.unregister(key)
            L.handle_closed()
            return
        super().free_lock(lock, lost_key)
