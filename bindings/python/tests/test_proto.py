"""The engine's byte protocol (core/hostabi/PROTOCOL.md) as liblock/_protocol.py
writes and reads it: events byte for byte against the spec, actions decoded from
bytes laid out by hand, then the codec against the backend's real engine (no I/O)."""

from __future__ import annotations

import struct

import pytest

from conftest import BACKEND
from liblock import _protocol as P


def _str(b: bytes) -> bytes:
    return struct.pack("<I", len(b)) + b


def enc_error(err) -> bytes:  # noqa: ANN001 - the engine's side, for the vectors below
    if err is None:
        err = (0, "", "", "", [])
    status, message, a, b, nodes = err[:5]
    bound, limit, unit, got = err[5:] or ("", 0, "", 0)  # protocol 4: an out-of-range argument's bound
    out = struct.pack("<i", status) + _str(message.encode()) + _str(a.encode()) + _str(b.encode())
    out += struct.pack("<H", len(nodes))
    for node, addr, cause in nodes:
        out += struct.pack("<H", node) + _str(addr.encode()) + _str(cause.encode())
    return out + _str(bound.encode()) + struct.pack("<q", limit) + _str(unit.encode()) + struct.pack("<q", got)


_NO_BOUND = ("", 0, "", 0)  # an error record's bound fields when no bound was crossed


def enc_inspected(op: int, held: bool, validity_ms: int, owner: str, nodes, permits: int = 0,  # noqa: ANN001
                  holders=(), term: int = 0, value: str = "") -> bytes:  # noqa: ANN001
    out = bytes([P.ACT_INSPECTED]) + struct.pack("<QBq", op, 1 if held else 0, validity_ms)
    out += _str(owner.encode()) + struct.pack("<H", len(nodes))
    for node, addr, flags, node_owner, ttl_ms, cause in nodes:
        out += struct.pack("<H", node) + _str(addr.encode()) + bytes([flags]) + _str(node_owner.encode())
        out += struct.pack("<q", ttl_ms) + _str(cause.encode())
    out += struct.pack("<IH", permits, len(holders))  # protocol 3: a semaphore's permits and holders
    for slot, h_owner, h_validity, h_mode in holders:  # protocol 4: the mode (1: a reader)
        out += struct.pack("<I", slot) + _str(h_owner.encode()) + struct.pack("<qB", h_validity, h_mode)
    out += struct.pack("<q", term) + _str(value.encode())  # protocol 3: an election's leader
    return out


def _event(fn, *args) -> bytes:  # noqa: ANN001
    buf = bytearray(1024)
    n = fn(buf, *args)
    return bytes(buf[:n])


def test_events_byte_for_byte() -> None:
    assert _event(P.acquire, b"orders:42", 10000, 2500, True) == (
        b"\x01" + _str(b"orders:42") + struct.pack("<q", 10000) + struct.pack("<q", 2500) + b"\x01")
    assert _event(P.acquire, b"r", 1, 0, False)[-1:] == b"\x00"
    assert _event(P.extend, 7, 3000) == b"\x02" + struct.pack("<Q", 7) + struct.pack("<q", 3000)
    for kind in (P.EV_RELEASE, P.EV_CANCEL, P.EV_FORGET, P.EV_LOCK_INFO):
        assert _event(P.handle_event, kind, 2**53 - 1) == bytes([kind]) + struct.pack("<Q", 2**53 - 1)
    assert _event(P.simple, P.EV_CLOSE) == b"\x06"
    assert _event(P.simple, P.EV_TICK) == b"\x0a"
    assert _event(P.opened, 3) == b"\x07" + struct.pack("<I", 3)
    assert _event(P.received, 3, b"+OK\r\n") == b"\x08" + struct.pack("<I", 3) + _str(b"+OK\r\n")
    assert _event(P.conn_failed, 4, b"refused") == b"\x09" + struct.pack("<I", 4) + _str(b"refused")


def test_actions_decoded() -> None:
    err = (5, "liblock: unavailable", "acquire", "2 of 3 nodes failed",
           [(0, "127.0.0.1:1", "refused"), (2, "[::1]:2", "timeout")]) + _NO_BOUND
    raw = (b"\x01" + struct.pack("<IIB", 1, 0, 3) + _str(b"tcp") + _str(b"h:1") + _str(b"h")
           + b"\x02" + struct.pack("<I", 1) + _str(b"*1\r\n")
           + b"\x03" + struct.pack("<I", 1)
           + b"\x04" + struct.pack("<QQqB", 9, 4, 0, 0) + enc_error(None)
           + b"\x04" + struct.pack("<QQqB", 10, 0, 0, 0) + enc_error(err)
           + b"\x05" + struct.pack("<Q", 4) + enc_error((2, "liblock: lock lost", "", "", []) + _NO_BOUND)
           + b"\x06" + struct.pack("<q", 1500)
           + b"\x07"
           + b"\x08" + struct.pack("<Q", 11)
           + b"\x09" + enc_error((3, "liblock: invalid argument: ttl: too long", "ttl", "too long", [],
                                   "max", 86400000, "ms", 2**40))
           + b"\x0a\x01"
           + b"\x0b" + _str(b"res") + _str(b"p:res") + _str(b"tok") + struct.pack("<qqB", 10000, 9000, 1)
           + enc_error(None))
    assert P.decode(memoryview(raw)) == [
        (P.ACT_OPEN, 1, 0, 3, "tcp", "h:1", "h"),
        (P.ACT_WRITE, 1, b"*1\r\n"),
        (P.ACT_CLOSE, 1),
        (P.ACT_DONE, 9, 4, 0, 0, None),
        (P.ACT_DONE, 10, 0, 0, 0, err),
        (P.ACT_LOST, 4, (2, "liblock: lock lost", "", "", []) + _NO_BOUND),
        (P.ACT_TIMER, 1500),
        (P.ACT_CLOSED,),
        (P.ACT_STARTED, 11),
        (P.ACT_REJECTED, (3, "liblock: invalid argument: ttl: too long", "ttl", "too long", [],
                          "max", 86400000, "ms", 2**40)),
        (P.ACT_CANCELED, 1),
        (P.ACT_INFO, "res", "p:res", "tok", 10000, 9000, 1, None),
    ]


@pytest.mark.parametrize("bad", [b"\x63", b"\x02\x01\x00\x00\x00\xff\x00\x00\x00"])
def test_malformed_actions_raise(bad: bytes) -> None:
    with pytest.raises((P.ProtocolError, struct.error)):
        P.decode(bad)


def _engine():  # noqa: ANN202
    config = b'{"nodes":["redis://127.0.0.1:1","redis://127.0.0.1:2","redis://127.0.0.1:3"]}'
    if BACKEND == "wasm":
        from liblock import _wasm
        return _wasm.WasmEngine(_wasm.Instance(), config)
    from liblock import _native
    return _native.NativeEngine(config)


def test_codec_against_the_engine() -> None:
    """Requests answered at once (no I/O happens before the host carries out an OPEN)."""
    eng = _engine()
    try:
        out = P.decode(eng.step(P.handle_event(eng.inbuf, P.EV_LOCK_INFO, 12345)))
        assert [a[0] for a in out] == [P.ACT_REJECTED] and out[0][1][0] == 4  # unknown lock
        out = P.decode(eng.step(P.acquire(eng.inbuf, b"r", 0, 0, False)))
        assert out[0][0] == P.ACT_REJECTED and out[0][1][0] == 3 and out[0][1][2].startswith("ttl")
        out = P.decode(eng.step(P.acquire(eng.inbuf, b"r", 10000, 0, False)))
        kinds = [a[0] for a in out]
        assert kinds[0] == P.ACT_STARTED and kinds.count(P.ACT_OPEN) == 3, out
        assert {a[4] for a in out if a[0] == P.ACT_OPEN} == {"tcp"}
        op = out[0][1]
        out = P.decode(eng.step(P.handle_event(eng.inbuf, P.EV_CANCEL, op)))
        assert (P.ACT_CANCELED, 1) in out
        assert any(a[0] == P.ACT_DONE and a[1] == op and a[5][0] == 6 for a in out), out  # CANCELED
        out = P.decode(eng.step(P.simple(eng.inbuf, P.EV_CLOSE)))
        assert P.decode(eng.step(0)) == []
    finally:
        eng.free()


def test_fence_token_inspect_events_byte_for_byte() -> None:
    """ACQUIRE's flags bit 1 (fence) and bit 2 (then `str token` follows the flags); INSPECT."""
    head = b"\x01" + _str(b"r") + struct.pack("<q", 5000) + struct.pack("<q", 0)
    assert _event(P.acquire, b"r", 5000, 0, False, True) == head + b"\x02"
    assert _event(P.acquire, b"r", 5000, 0, True, True) == head + b"\x03"
    tok = b"a-token-of-my-own-0001"
    assert _event(P.acquire, b"r", 5000, 0, False, False, tok) == head + b"\x04" + _str(tok)
    assert _event(P.acquire, b"r", 5000, 0, True, False, tok) == head + b"\x05" + _str(tok)
    assert _event(P.inspect, b"orders:42") == b"\x0c" + _str(b"orders:42") + b"\x00"  # flags: the mutex


def test_fence_token_inspect_actions_decoded() -> None:
    nodes = [(0, "127.0.0.1:1", 3, "worker-7", 9998, ""), (1, "127.0.0.1:2", 1, "", -1, ""),
             (2, "[::1]:3", 0, "", -1, "dial tcp: connection refused")]
    # Engine protocol 2: an acquire's fence and re-entry ride on its DONE (FENCE, kind 13, is retired).
    assert P.PROTOCOL_VERSION == 5 and not hasattr(P, "ACT_FENCE")
    raw = (b"\x04" + struct.pack("<QQqB", 3, 4, 17, 1) + enc_error(None)
           + enc_inspected(9, True, 9895, "worker-7", nodes)
           + enc_inspected(10, False, -1, "", [])
           + enc_inspected(11, True, 900, "w", [], 3, [(2, "w", 900, 0)])
           + enc_inspected(12, True, 500, "", [], 0, [], 7, "leader-1")
           + enc_inspected(13, False, 0, "", [], 0, [(0, "r1", 800, 1), (0, "", -1, 1)]))
    assert P.decode(memoryview(raw)) == [
        (P.ACT_DONE, 3, 4, 17, 1, None),
        (P.ACT_INSPECTED, 9, 1, 9895, "worker-7", nodes, 0, [], 0, ""),
        (P.ACT_INSPECTED, 10, 0, -1, "", [], 0, [], 0, ""),
        (P.ACT_INSPECTED, 11, 1, 900, "w", [], 3, [(2, "w", 900, 0)], 0, ""),
        (P.ACT_INSPECTED, 12, 1, 500, "", [], 0, [], 7, "leader-1"),
        (P.ACT_INSPECTED, 13, 0, 0, "", [], 0, [(0, "r1", 800, 1), (0, "", -1, 1)], 0, ""),
    ]
    from liblock import _inspection

    got = _inspection.from_engine(1, -1, "w", nodes)
    assert got.held and got.validity is None and got.owner == "w"
    assert [(n.locked, n.holder, n.ttl, n.error) for n in got.nodes] == [
        (True, True, 9.998, None), (True, False, None, None), (False, False, None, "dial tcp: connection refused")]
    sem = _inspection.from_engine(1, 900, "w", [], 3, [(2, "w", 900, 0)])
    assert sem.permits == 3 and sem.in_use == 1 and sem.holders == (_inspection.Holder(2, "w", 0.9),)
    assert sem.readers is None and got.readers is None
    rw = _inspection.from_engine(0, 0, "", [], 0, [(0, "r1", 800, 1), (0, "", -1, 1)], rw=True)
    assert rw.readers == (_inspection.Reader("r1", 0.8), _inspection.Reader("", None)) and rw.holders == ()
    assert _inspection.from_engine(0, 0, "", [], rw=True).readers == ()


def test_fence_token_inspect_codec_against_the_engine() -> None:
    """The engine's own checks of the new fields (answered at once, nothing sent)."""
    eng = _engine()
    try:
        for ev, arg in (((b"r", 1000, 0, False, False, b"short"), "token"),
                        ((b"r", 1000, 0, False, True, b"a-token-of-my-own-0001"), "fence")):
            out = P.decode(eng.step(P.acquire(eng.inbuf, *ev)))
            assert [a[0] for a in out] == [P.ACT_REJECTED] and out[0][1][0] == 3 and out[0][1][2] == arg, out
        out = P.decode(eng.step(P.inspect(eng.inbuf, b"")))
        assert [a[0] for a in out] == [P.ACT_REJECTED] and out[0][1][2] == "resource", out
        out = P.decode(eng.step(P.inspect(eng.inbuf, b"r")))
        assert out[0][0] == P.ACT_STARTED and [a[0] for a in out].count(P.ACT_OPEN) == 3, out
        out = P.decode(eng.step(P.acquire(eng.inbuf, b"r", 1000, 0, False, False, b"a-token-of-my-own-0001")))
        assert out[0][0] == P.ACT_STARTED, out
        eng.step(P.simple(eng.inbuf, P.EV_CLOSE))
        while len(eng.step(0)):
            pass
    finally:
        eng.free()


def test_bound_in_rejection_worded_in_python_units() -> None:
    """A rejection carries the bound it crossed (protocol 4): the binding names its own
    parameter and words durations in seconds, without a table of its own; from the
    backend's real engine too (answered at once, nothing sent)."""
    from liblock import InvalidArgument
    from liblock._host import exception

    def word(a: str, bound: str, limit: int, unit: str, got: int) -> str:
        e = exception((3, "m", a, "engine words", [], bound, limit, unit, got))
        assert isinstance(e, InvalidArgument)
        return str(e)

    assert word("ttl_ms", "max", 86400000, "ms", 90000000) == \
        "liblock: invalid argument: ttl: must be at most 86400 s, got 90000 s"
    assert word("wait_ms", "min", 0, "ms", -1) == "liblock: invalid argument: wait: must be at least 0 s, got -0.001 s"
    assert word("resource", "min", 1, "bytes", 0) == "liblock: invalid argument: resource: must not be empty"
    assert word("value", "max", 4096, "bytes", 4097) == \
        "liblock: invalid argument: value: must be at most 4096 bytes of UTF-8, got 4097 bytes"
    assert word("permits", "max", 1024, "count", 1025) == "liblock: invalid argument: permits: must be at most 1024, got 1025"
    assert word("resources[2]", "", 0, "", 0) == "liblock: invalid argument: resources[2]: engine words"

    eng = _engine()
    try:
        for ev, text in (((b"r", 86400001, 0, False), "ttl: must be at most 86400 s, got 86400.001 s"),
                         ((b"r", 1000, -5, False), "wait: must be at least 0 s, got -0.005 s"),
                         ((b"r", 1000, 0, False, False, b"short"), "token: must be at least 16 bytes of UTF-8, got 5 bytes"),
                         ((b"r", 1000, 0, False, False, b"", 1025), "permits: must be at most 1024, got 1025"),
                         ((b"", 1000, 0, False), "resource: must not be empty")):
            out = P.decode(eng.step(P.acquire(eng.inbuf, *ev)))
            assert [a[0] for a in out] == [P.ACT_REJECTED], out
            assert str(exception(out[0][1])) == "liblock: invalid argument: " + text
    finally:
        eng.free()


class _CannedEngine:
    """An engine whose every step answers the same actions."""

    in_cap = out_cap = 1 << 20

    def __init__(self, out: bytes) -> None:
        self.inbuf = bytearray(1024)
        self.out = out

    def step(self, n: int) -> memoryview:
        return memoryview(self.out)

    def free(self) -> None:
        pass


def test_host_runs_acquires_that_got_their_lock_first() -> None:
    """One step that ends a release and hands its key to waiters of the same client (the
    release, then the acquires, in the engine's order): the acquires' completions run
    first, in order, so that the new holder's task enters its section before the releaser's
    goes on; failures keep their place."""
    import asyncio

    from liblock import _host

    ok = enc_error(None)
    fail = enc_error((1, "liblock: not acquired", "", "", []))
    done = lambda op, lock, err: b"\x04" + struct.pack("<QQqB", op, lock, 0, 0) + err  # noqa: E731
    out = done(1, 0, ok) + done(2, 7, ok) + done(3, 0, fail) + done(4, 8, ok) + done(5, 0, ok)
    loop = asyncio.new_event_loop()
    try:
        host = _host.Host(_CannedEngine(out), loop)
        order = []
        for op in range(1, 6):
            host._ops[op] = lambda err, lock, op=op: order.append(op)
        host._step(0)
        assert order == [2, 4, 1, 3, 5]
    finally:
        loop.close()


def _golden() -> tuple:  # noqa: ANN401
    import json
    import pathlib

    spec_dir = pathlib.Path(__file__).resolve().parents[3] / "core" / "hostabi" / "spec"
    return (json.loads((spec_dir / "protocol.json").read_text("utf-8")),
            json.loads((spec_dir / "golden.json").read_text("utf-8")))


def _named(fields: list, values: tuple, spec: dict) -> dict:  # noqa: ANN401
    """A decoded action's (or record's) values by the spec's field names, as golden.json has them."""
    out = {}
    for f, v in zip(fields, values):
        if f["type"] == "bytes":
            v = v.hex()
        elif f["type"] == "error":
            v = None if v is None else _named(spec["error"]["fields"], v, spec)
        elif f["type"] == "list":
            v = [_named(f["items"], item, spec) for item in v]
        out[f["name"]] = v
    assert len(fields) == len(values)
    return out


def test_golden_vectors() -> None:
    """core/hostabi/spec/golden.json: the generated codec (liblock/_proto_gen.py) encodes every
    event and decodes every action as the Go codec does."""
    from liblock import _proto_gen as G

    spec, golden = _golden()
    assert len(golden["events"]) >= len(spec["events"]) and len(golden["actions"]) >= len(spec["actions"])
    for c in golden["events"]:
        ev = next(e for e in spec["events"] if e["name"] == c["kind"])
        assert getattr(G, "EV_" + c["kind"]) == ev["kind"], c["name"]
        args = []
        for f in ev["fields"]:
            v = c["fields"].get(f["name"])
            if f["type"] == "str":
                v = b"" if v is None else v.encode()
            elif f["type"] == "bytes":
                v = bytes.fromhex(v)
            elif f["type"] == "list":  # a list of one str per item: passed as bytes
                v = [item[f["items"][0]["name"]].encode() for item in v or []]
            elif v is None:  # a number absent without its flag
                v = 0
            args.append(v)
        buf = bytearray(b"\xee" * 4096)
        n = getattr(G, "enc_" + c["kind"].lower())(buf, *args)
        assert bytes(buf[:n]).hex() == c["hex"], c["name"]
        assert buf[n] == 0xee, c["name"]
    raw = bytes.fromhex("".join(c["hex"] for c in golden["actions"]))
    buf = memoryview(raw)
    at = 0
    for c in golden["actions"]:
        act = next(a for a in spec["actions"] if a["name"] == c["kind"])
        start = at
        a, at = G.decode_action(buf, at)
        assert raw[start:at].hex() == c["hex"], c["name"]
        assert a[0] == getattr(G, "ACT_" + c["kind"]) == act["kind"], c["name"]
        assert _named(act["fields"], a[1:], spec) == c["fields"], c["name"]
    assert at == len(raw)
    assert len(G.decode(buf)) == len(golden["actions"])
