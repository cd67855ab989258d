"""The wasm backend's host side on its own: the exec messages (msgpack) and the
Redis I/O behind them (redis-py), against real nodes. Independent of the module."""

from __future__ import annotations

import time

import pytest

from conftest import Cluster, free_port
from liblock._msgpack import MsgpackError, decode_request, encode_response


def test_decode_request_example_from_protocol() -> None:
    # wasm/PROTOCOL.md §5, byte for byte
    req = bytes.fromhex("930132939" "6a3534554a3726573a354304ba24e58a25058a53130303030"
                        "96a3534554a3726573a354304ba24e58a25058a53130303030c0")
    client, timeout_ms, cmds = decode_request(req)
    assert (client, timeout_ms) == (1, 50)
    assert cmds == [[b"SET", b"res", b"T0K", b"NX", b"PX", b"10000"]] * 2 + [None]


def test_decode_request_every_int_and_str_format() -> None:
    req = (b"\x93" + b"\xcf" + (2**40).to_bytes(8, "big") + b"\xcd\x01\x00"
           + b"\x92" + b"\x93" + b"\xd9\x03abc" + b"\xc4\x01x" + b"\xda\x00\x02yz" + b"\x90")
    assert decode_request(req) == (2**40, 256, [[b"abc", b"x", b"yz"], []])


@pytest.mark.parametrize("bad", [
    b"", b"\x92\x01\x02", b"\x93\x01\x02", b"\x93\x01\x02\x91\x91\x01",  # short, not str
    b"\x93\xff\x02\x90", b"\x93\x01\x02\x90\x00",  # negative client, trailing byte
    b"\x93\x01\x02\x91\x91\xa5ab",  # truncated string
    b"\x93\x01\x02\xdc\x00\x41" + b"\xc0" * 65,  # 65 nodes
])
def test_decode_request_rejects_malformed(bad: bytes) -> None:
    with pytest.raises(MsgpackError):
        decode_request(bad)


def test_encode_response_example_from_protocol() -> None:
    assert encode_response([(2, b"OK"), (0, None), None]) == bytes.fromhex("939202a24f4b9200c0c0")
    assert encode_response([(3, "i/o timeout")]) == bytes.fromhex("919203ab692f6f2074696d656f7574")


def test_encode_response_ints_and_long_strings() -> None:
    out = encode_response([(1, 1), (1, 0), (1, -1), (1, 300), (2, b"x" * 40), (2, b"y" * 300)])
    assert out.startswith(b"\x96\x92\x01\x01\x92\x01\x00\x92\x01\xff\x92\x01\xd3")
    assert b"\xd9\x28" + b"x" * 40 in out and b"\xda\x01\x2c" + b"y" * 300 in out
    assert encode_response([None] * 20)[:3] == b"\xdc\x00\x14"


def _nodes(urls, timeout: float = 0.5):  # type: ignore[no-untyped-def]
    from liblock._redisio import NodeSet
    return NodeSet(urls, timeout)


def test_exec_replies_of_every_kind(c3: Cluster) -> None:
    ns = _nodes(c3.urls)
    try:
        out = ns.exec(500, [[b"SET", b"k", b"v", b"NX", b"PX", b"10000"],
                            [b"GET", b"missing"], None])
        assert out == [(2, b"OK"), (0, None), None]
        assert ns.exec(500, [[b"SET", b"k", b"w", b"NX"], [b"EVAL", b"return 7", b"0"], None]) == \
            [(0, None), (1, 7), None]
        assert c3.do(0, "GET", "k") == "v"
    finally:
        ns.close()


def test_exec_error_entries_keep_the_redis_error_code(c1: Cluster) -> None:
    """The module falls back from EVALSHA to EVAL on a text starting with NOSCRIPT."""
    ns = _nodes(c1.urls)
    try:
        (kind, text), = ns.exec(500, [[b"EVALSHA", b"0" * 40, b"0"]])  # type: ignore[misc]
        assert kind == 3 and text.startswith("NOSCRIPT "), text
        c1.do(0, "SET", "str", "x")
        (kind, text), = ns.exec(500, [[b"LPUSH", b"str", b"y"]])  # type: ignore[misc]
        assert kind == 3 and text.startswith("WRONGTYPE "), text
        (kind, text), = ns.exec(500, [[b"NOSUCHCOMMAND"]])  # type: ignore[misc]
        assert kind == 3 and text.startswith("ERR "), text
        # an error reply leaves the connection usable
        assert ns.exec(500, [[b"SET", b"after", b"1"]]) == [(2, b"OK")]
    finally:
        ns.close()


def test_exec_refused_node_is_an_error_entry(c1: Cluster) -> None:
    ns = _nodes([c1.urls[0], f"redis://127.0.0.1:{free_port()}"])
    try:
        out = ns.exec(500, [[b"SET", b"a", b"1"], [b"SET", b"a", b"1"]])
        assert out[0] == (2, b"OK")
        assert out[1] is not None and out[1][0] == 3 and "refused" in str(out[1][1]).lower()
    finally:
        ns.close()


def test_exec_frozen_node_costs_the_timeout_not_a_hang(c3: Cluster) -> None:
    ns = _nodes(c3.urls, timeout=5.0)  # the request's timeout_ms bounds it, not the socket default
    try:
        ns.exec(500, [[b"PING"]] * 3)  # connected before the freeze
        c3.freeze(1)
        t0 = time.monotonic()
        out = ns.exec(200, [[b"SET", b"f", b"1"]] * 3)
        took = time.monotonic() - t0
        assert out[0] == (2, b"OK") and out[2] == (2, b"OK")
        assert out[1] is not None and out[1][0] == 3 and "timeout" in str(out[1][1])
        assert took < 4.0, f"a frozen node held the exchange for {took:.1f}s"  # not the 5 s socket timeout
        c3.thaw(1)
        # the frozen node's late reply is never taken for the next command's
        assert ns.exec(2000, [[b"ECHO", b"n0"], [b"ECHO", b"n1"], [b"ECHO", b"n2"]]) == \
            [(2, b"n0"), (2, b"n1"), (2, b"n2")]
    finally:
        ns.close()


@pytest.mark.parametrize("timeout", [1, 127, 128, 255, 256, 50000, 70000])
def test_decode_request_fast_and_general_paths_agree(timeout: int) -> None:
    from liblock._msgpack import _decode_any
    t = (bytes((timeout,)) if timeout < 128 else b"\xcc" + bytes((timeout,)) if timeout < 256
         else b"\xcd" + timeout.to_bytes(2, "big") if timeout < 65536 else b"\xce" + timeout.to_bytes(4, "big"))
    long_arg = b"s" * 40
    req = b"\x93\x05" + t + b"\x93\x93\xa3SET\xa1k\xd9\x28" + long_arg + b"\xc0\x90"
    expect = (5, timeout, [[b"SET", b"k", long_arg], None, []])
    assert decode_request(req) == expect == _decode_any(req)
