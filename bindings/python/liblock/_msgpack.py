"""The two msgpack messages of liblock.wasm's ``exec`` host call (wasm/PROTOCOL.md §5).

Hand-written rather than the ``msgpack`` package: the messages are two fixed shapes
(a request ``[client, timeout_ms, [nil | [str...]...]]`` and a response of per-node
``nil | [kind, value]``), so about a hundred lines cover them strictly, with no
dependency to install or to keep in step with.
"""

from __future__ import annotations

import struct
from typing import List, Optional, Tuple, Union

Command = List[bytes]
# One response entry: None (nothing sent), or (kind, value) with
# kind 0 nil reply, 1 integer, 2 status/bulk string, 3 node failure (text).
Entry = Optional[Tuple[int, Union[None, int, bytes, str]]]

REPLY_NIL = 0
REPLY_INT = 1
REPLY_STR = 2
REPLY_ERROR = 3

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_I64 = struct.Struct(">q")


class MsgpackError(ValueError):
    """A request that is not what PROTOCOL.md §5 describes."""


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise MsgpackError("truncated message")
        out = self.data[self.pos:end]
        self.pos = end
        return out

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise MsgpackError("truncated message")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def array_len(self, b: int) -> int:
        if 0x90 <= b <= 0x9F:
            return b & 0x0F
        if b == 0xDC:
            return int(_U16.unpack(self._take(2))[0])
        if b == 0xDD:
            return int(_U32.unpack(self._take(4))[0])
        raise MsgpackError(f"expected an array, got 0x{b:02x}")

    def uint(self) -> int:
        b = self.byte()
        if b <= 0x7F:
            return b
        if b == 0xCC:
            return self.byte()
        if b == 0xCD:
            return int(_U16.unpack(self._take(2))[0])
        if b == 0xCE:
            return int(_U32.unpack(self._take(4))[0])
        if b == 0xCF:
            return int(_U64.unpack(self._take(8))[0])
        if 0xD0 <= b <= 0xD3:  # signed formats holding a non-negative value
            size = 1 << (b - 0xD0)
            v = int.from_bytes(self._take(size), "big", signed=True)
            if v < 0:
                raise MsgpackError(f"expected an unsigned integer, got {v}")
            return v
        raise MsgpackError(f"expected an unsigned integer, got 0x{b:02x}")

    def text(self) -> bytes:
        b = self.byte()
        if 0xA0 <= b <= 0xBF:
            n = b & 0x1F
        elif b in (0xD9, 0xC4):
            n = self.byte()
        elif b in (0xDA, 0xC5):
            n = int(_U16.unpack(self._take(2))[0])
        elif b in (0xDB, 0xC6):
            n = int(_U32.unpack(self._take(4))[0])
        else:
            raise MsgpackError(f"expected a string, got 0x{b:02x}")
        return self._take(n)


def decode_request(data: bytes) -> Tuple[int, int, List[Optional[Command]]]:
    """``(client, timeout_ms, cmds)``; each command is a list of byte strings or None."""
    try:
        return _decode_common(data)
    except (IndexError, _NotCommon):
        return _decode_any(data)


class _NotCommon(Exception):
    pass


def _decode_common(data: bytes) -> Tuple[int, int, List[Optional[Command]]]:
    """The shape the module writes in practice (fixarray, fixint client and timeout or
    uint16 timeout, fixstr/str8 arguments) without a method call per byte; anything
    else goes to the general reader."""
    if data[0] != 0x93 or data[1] > 0x7F:
        raise _NotCommon
    client = data[1]
    b = data[2]
    if b <= 0x7F:
        timeout_ms, pos = b, 3
    elif b == 0xCC:
        timeout_ms, pos = data[3], 4
    elif b == 0xCD:
        timeout_ms, pos = (data[3] << 8) | data[4], 5
    else:
        raise _NotCommon
    b = data[pos]
    if not 0x90 <= b <= 0x9F:
        raise _NotCommon
    pos += 1
    cmds: List[Optional[Command]] = []
    for _ in range(b & 0x0F):
        b = data[pos]
        pos += 1
        if b == 0xC0:
            cmds.append(None)
            continue
        if not 0x90 <= b <= 0x9F:
            raise _NotCommon
        cmd = []
        for _ in range(b & 0x0F):
            h = data[pos]
            if 0xA0 <= h <= 0xBF:
                n, pos = h & 0x1F, pos + 1
            elif h == 0xD9:
                n, pos = data[pos + 1], pos + 2
            else:
                raise _NotCommon
            end = pos + n
            if end > len(data):
                raise _NotCommon
            cmd.append(data[pos:end])
            pos = end
        cmds.append(cmd)
    if pos != len(data):
        raise _NotCommon
    return client, timeout_ms, cmds


def _decode_any(data: bytes) -> Tuple[int, int, List[Optional[Command]]]:
    r = _Reader(data)
    if r.array_len(r.byte()) != 3:
        raise MsgpackError("a request is an array of 3")
    client = r.uint()
    timeout_ms = r.uint()
    n = r.array_len(r.byte())
    if n > 64:
        raise MsgpackError(f"{n} nodes in a request (at most 64)")
    cmds: List[Optional[Command]] = []
    for _ in range(n):
        b = r.byte()
        if b == 0xC0:
            cmds.append(None)
            continue
        k = r.array_len(b)
        cmds.append([r.text() for _ in range(k)])
    if r.pos != len(data):
        raise MsgpackError("bytes after the request")
    return client, timeout_ms, cmds


def _str(out: bytearray, s: bytes) -> None:
    n = len(s)
    if n < 32:
        out.append(0xA0 | n)
    elif n < 0x100:
        out += b"\xd9" + bytes((n,))
    elif n < 0x10000:
        out += b"\xda" + _U16.pack(n)
    else:
        out += b"\xdb" + _U32.pack(n)
    out += s


def _int(out: bytearray, v: int) -> None:
    if 0 <= v <= 0x7F:
        out.append(v)
    elif -32 <= v < 0:
        out.append(v & 0xFF)
    else:
        out += b"\xd3" + _I64.pack(max(-(2**63), min(2**63 - 1, v)))


def encode_response(entries: List[Entry]) -> bytes:
    """The response array: one entry per node of the request, in its order."""
    out = bytearray()
    n = len(entries)
    if n < 16:
        out.append(0x90 | n)
    else:
        out += b"\xdc" + _U16.pack(n)
    for e in entries:
        if e is None:
            out.append(0xC0)
            continue
        kind, value = e
        out.append(0x92)
        out.append(kind)
        if value is None:
            out.append(0xC0)
        elif isinstance(value, int):
            _int(out, value)
        elif isinstance(value, bytes):
            _str(out, value)
        else:
            _str(out, value.encode("utf-8", "replace"))
    return bytes(out)
