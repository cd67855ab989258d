"""The drivers' hot-path shortcuts say what the general code says."""

import itertools
import json
import struct

from liblock import _host, _protocol as P


def test_write_fast_path_matches_the_generated_decoder() -> None:
    """_host._apply reads WRITE in place; the layout it assumes is the codec's (and a
    WRITE whose data runs past the end is refused as decode_action refuses it)."""
    _host._write_head()  # raises on a mismatch...
    saved = _host._WRITE_HEAD
    _host._WRITE_HEAD = struct.Struct("<IH")  # negative control: a wrong layout is caught
    try:
        _host._write_head()
    except Exception as e:  # noqa: BLE001
        assert "disagrees" in str(e)
    else:
        raise AssertionError("_write_head accepted a wrong layout")
    finally:
        _host._WRITE_HEAD = saved
    data = b"*1\r\n$4\r\nPING\r\n"
    raw = bytes([P.ACT_WRITE]) + struct.pack("<II", 9, len(data)) + data
    assert P.decode_action(raw, 0) == ((P.ACT_WRITE, 9, data), len(raw))

    class Conn:
        def __init__(self) -> None:
            self.transport = self
            self.got = []

        def write(self, b: bytes) -> None:
            self.got.append(b)

        write_view = _host._Conn.write_view  # a transport connection's: it copies

    host = _host.Host.__new__(_host.Host)
    c = Conn()
    host._conns = {9: c}
    assert host._apply(memoryview(raw + raw)) is None
    assert c.got == [data, data] and all(type(b) is bytes for b in c.got)
    try:
        host._apply(memoryview(raw[:-1]))
    except P.ProtocolError:
        pass
    else:
        raise AssertionError("a truncated WRITE was accepted")
