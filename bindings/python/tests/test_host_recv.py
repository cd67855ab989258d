"""The asyncio host's receive path (_host._Conn): a BufferedProtocol reading straight
into the engine's input buffer after a RECEIVED head it writes itself."""

import asyncio
import struct

import pytest

from liblock import _host
from liblock._errors import InternalError


def test_conn_is_a_buffered_protocol() -> None:
    # asyncio's transports call get_buffer/buffer_updated (recv_into) only for these
    assert issubclass(_host._Conn, asyncio.BufferedProtocol)
    assert not hasattr(_host._Conn, "data_received")


def test_recv_head_matches_the_generated_encoder() -> None:
    _host._recv_head()  # raises on a mismatch...
    saved = _host._RECV_HEAD
    _host._RECV_HEAD = struct.Struct("<BIH")  # negative control: a wrong layout is caught
    try:
        with pytest.raises(InternalError, match="disagrees"):
            _host._recv_head()
    finally:
        _host._RECV_HEAD = saved


def test_get_buffer_without_an_engine_is_a_scratch_buffer() -> None:
    """A read that comes after the engine was dropped goes nowhere (and steps nothing)."""
    host = _host.Host.__new__(_host.Host)
    host.engine = None
    host._conns = {}
    c = _host._Conn(host, 3)
    buf = c.get_buffer(-1)
    assert len(buf) > 0
    c.buffer_updated(1)  # no engine: nothing to step, no error
