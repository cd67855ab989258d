"""Node URLs read exactly as the native backend reads them: a port of go-redis v9's
``ParseURL`` (options.go: ``setupTCPConn``, ``setupUnixConn``, ``setupConnParams``)
over the parts of Go's ``net/url`` it relies on.

The wasm backend connects with redis-py, whose ``from_url`` reads the same text
differently (it knows no ``skip_verify``, passes unknown query keys on as keyword
arguments, never verifies a host name, ...). This module decides instead, so that
a URL means the same connection on both backends and is refused by both or by
neither, with go-redis's messages. The module (liblock.wasm) has already checked
the syntax with its copy of ``url.Parse``; what is read here is what go-redis
reads after it.

Accepted forms (go-redis's):

* ``redis://[user[:password]@]host[:port][/db][?options]`` (host ``localhost`` and
  port 6379 when empty; ``[::1]`` for IPv6)
* ``rediss://...``: the same over TLS 1.2+, the certificate and host name verified
  against the system's roots; ``?skip_verify=true`` accepts any certificate
* ``unix://[user[:password]@]/path/to/socket[?db=N][&options]``

Options: ``db``, ``client_name`` and ``skip_verify`` (rediss only) are used;
go-redis's pool, retry, timeout and ``protocol`` options are checked and ignored (the
node timeout bounds every request, the protocol is RESP2); anything else is an error.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

# Query parameters go-redis reads as integers, durations, a bool; in its order,
# which decides which error is reported first.
_INTS_1 = ("protocol",)
_AFTER_CLIENT_NAME: Tuple[Tuple[str, str], ...] = (
    ("max_retries", "int"), ("min_retry_backoff", "duration"), ("max_retry_backoff", "duration"),
    ("dial_timeout", "duration"), ("read_timeout", "duration"), ("write_timeout", "duration"),
    ("pool_fifo", "bool"), ("pool_size", "int"), ("pool_timeout", "duration"),
    ("min_idle_conns", "int"), ("max_idle_conns", "int"), ("max_active_conns", "int"),
    ("max_concurrent_dials", "int"), ("pipeline_pool_size", "int"),
    ("pipeline_read_buffer_size", "int"), ("pipeline_write_buffer_size", "int"),
)
# net/url's default limit (GODEBUG urlmaxqueryparams): beyond it Query() is empty.
_MAX_QUERY_PARAMS = 10000
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_ATOI = re.compile(r"[+-]?[0-9]+\Z")
_DURATION_UNITS = {
    "ns": 1, "us": 1000, "\u00b5s": 1000, "\u03bcs": 1000, "ms": 1000_000,
    "s": 1000_000_000, "m": 60 * 1000_000_000, "h": 3600 * 1000_000_000,
}


class NodeURLError(ValueError):
    """go-redis would refuse this URL; the message is go-redis's (without the password)."""


@dataclass(frozen=True)
class NodeOptions:
    """What a connection to one node needs: the fields of go-redis's Options that
    liblock's native transport uses."""

    network: str             # "tcp" or "unix"
    host: str                # tcp: host name or address (IPv6 without brackets)
    port: str                # tcp: decimal digits, as written ("6379" when empty)
    path: str                # unix: socket path
    username: bytes          # AUTH user password, when both are set
    password: bytes          # AUTH password alone when there is no user name
    db: int                  # SELECT db when not 0
    client_name: bytes       # CLIENT SETNAME when not empty
    tls: bool                # rediss
    skip_verify: bool        # rediss ...?skip_verify=true

    @property
    def addr(self) -> str:
        """go-redis's Addr: host:port (IPv6 in brackets), or the socket path."""
        if self.network == "unix":
            return self.path
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse(raw: str) -> NodeOptions:
    """go-redis's ParseURL. Raises :class:`NodeURLError` with its message."""
    try:
        return _parse(raw)
    except NodeURLError as e:
        raise NodeURLError(scrub(str(e), raw)) from None


def scrub(msg: str, raw: str) -> str:
    """core's scrub: the URL's password, as written, replaced by xxxxx."""
    i = raw.find("://")
    if i >= 0:
        rest = raw[i + 3:]
        at = rest.rfind("@")
        if at >= 0:
            colon = rest.find(":", 0, at)
            if colon >= 0:
                pw = rest[colon + 1:at]
                if pw:
                    msg = msg.replace(pw, "xxxxx")
    return msg


# ---------------------------------------------------------------- net/url

@dataclass
class _URL:
    scheme: str = ""
    username: Optional[bytes] = None
    password: Optional[bytes] = None
    host: bytes = b""
    path: bytes = b""
    raw_query: str = ""


def _split_url(raw: str) -> _URL:
    """url.Parse, for a URL the module has already accepted (so well-formed)."""
    u = _URL()
    rest = raw.split("#", 1)[0]
    m = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*):", rest)
    if m is None:
        raise NodeURLError("malformed URL")
    u.scheme = m.group(1).lower()
    rest = rest[m.end():]
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest, _, u.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        return u  # opaque ("redis:x"): no host, no path
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        userinfo, at, host = authority.rpartition("@")
        if at:
            name, colon, pw = userinfo.partition(":")
            u.username = _unescape(name, plus_is_space=False)
            if colon:
                u.password = _unescape(pw, plus_is_space=False)
        u.host = _unescape(host, plus_is_space=False)
    u.path = _unescape(rest, plus_is_space=False)
    return u


def _unescape(s: str, plus_is_space: bool) -> bytes:
    """net/url's unescape: %XX to its byte (an error if malformed), '+' to ' ' in a
    query. The result is bytes, as Go strings are: %FF stays one byte 0xFF."""
    raw = s.encode("utf-8", "surrogateescape")
    if b"%" not in raw and not (plus_is_space and b"+" in raw):
        return raw
    out = bytearray()
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == 0x25:  # %
            hexpart = raw[i + 1:i + 3]
            if len(hexpart) < 2 or not all(chr(h) in "0123456789abcdefABCDEF" for h in hexpart):
                bad = raw[i:i + 3].decode("utf-8", "replace")
                raise NodeURLError(f"invalid URL escape {_quote(bad)}")
            out.append(int(hexpart, 16))
            i += 3
        elif c == 0x2B and plus_is_space:
            out.append(0x20)
            i += 1
        else:
            out.append(c)
            i += 1
    return bytes(out)


def _hostname_port(host: bytes) -> Tuple[bytes, bytes]:
    """url.URL's Hostname() and Port()."""
    name, port = host, b""
    colon = host.rfind(b":")
    if colon != -1 and re.fullmatch(rb":[0-9]*", host[colon:]):
        name, port = host[:colon], host[colon + 1:]
    if name.startswith(b"[") and name.endswith(b"]"):
        name = name[1:-1]
    return name, port


def _query(raw_query: str) -> Dict[str, List[str]]:
    """url.URL's Query(): pairs that do not parse are dropped, as Go drops them."""
    values: Dict[str, List[str]] = {}
    if raw_query.count("&") + 1 > _MAX_QUERY_PARAMS:
        return values
    for pair in raw_query.split("&"):
        if ";" in pair or pair == "":
            continue
        key, _, value = pair.partition("=")
        try:
            k = _unescape(key, plus_is_space=True)
            v = _unescape(value, plus_is_space=True)
        except NodeURLError:
            continue
        values.setdefault(_text(k), []).append(_text(v))
    return values


def _text(b: bytes) -> str:
    """Go string bytes as a str that round-trips (invalid UTF-8 kept as surrogates)."""
    return b.decode("utf-8", "surrogateescape")


def _quote(s: str) -> str:
    """strconv.Quote, enough for messages (printable text unchanged)."""
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif 0xDC80 <= ord(ch) <= 0xDCFF:  # a byte that is not UTF-8
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif not ch.isprintable():
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# ---------------------------------------------------------------- strconv, time

def _atoi(s: str) -> int:
    """strconv.Atoi on a 64-bit platform; raises with its message."""
    if not _ATOI.match(s):
        raise NodeURLError(f"strconv.Atoi: parsing {_quote(s)}: invalid syntax")
    n = int(s)
    if not _INT64_MIN <= n <= _INT64_MAX:
        raise NodeURLError(f"strconv.Atoi: parsing {_quote(s)}: value out of range")
    return n


def _check_duration(s: str) -> None:
    """time.ParseDuration's acceptance (the value itself is not used)."""
    orig = s
    if s[:1] in ("-", "+"):
        s = s[1:]
    if s == "0":
        return
    if s == "":
        raise NodeURLError(f"time: invalid duration {_quote(orig)}")
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise NodeURLError(f"time: invalid duration {_quote(orig)}")
        m = re.match(r"[0-9]*", s)
        assert m is not None
        digits = m.group(0)
        s = s[len(digits):]
        v = 0
        for d in digits:  # leadingInt: an overflow is an error
            if v > (1 << 63) // 10:
                raise NodeURLError(f"time: invalid duration {_quote(orig)}")
            v = v * 10 + int(d)
            if v > 1 << 63:
                raise NodeURLError(f"time: invalid duration {_quote(orig)}")
        frac, scale, post = 0, 1.0, False
        if s.startswith("."):
            s = s[1:]
            m = re.match(r"[0-9]*", s)
            assert m is not None
            fdigits = m.group(0)
            s = s[len(fdigits):]
            post = fdigits != ""
            overflow = False
            for d in fdigits:  # leadingFraction: stops adding digits once they overflow
                if overflow:
                    continue
                if frac > ((1 << 63) - 1) // 10:
                    overflow = True
                    continue
                y = frac * 10 + int(d)
                if y > 1 << 63:
                    overflow = True
                    continue
                frac, scale = y, scale * 10
        if digits == "" and not post:
            raise NodeURLError(f"time: invalid duration {_quote(orig)}")
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise NodeURLError(f"time: missing unit in duration {_quote(orig)}")
        unit_name, s = s[:i], s[i:]
        unit = _DURATION_UNITS.get(unit_name)
        if unit is None:
            raise NodeURLError(f"time: unknown unit {_quote(unit_name)} in duration {_quote(orig)}")
        if v > (1 << 63) // unit:
            raise NodeURLError(f"time: invalid duration {_quote(orig)}")
        v *= unit
        if frac > 0:
            v += int(float(frac) * (float(unit) / scale))
            if v > 1 << 63:
                raise NodeURLError(f"time: invalid duration {_quote(orig)}")
        total += v
        if total > 1 << 63:
            raise NodeURLError(f"time: invalid duration {_quote(orig)}")
    if orig[:1] != "-" and total > (1 << 63) - 1:
        raise NodeURLError(f"time: invalid duration {_quote(orig)}")


# ---------------------------------------------------------------- go-redis

class _Query:
    """go-redis's queryOptions: each read consumes the key; the first error is kept."""

    def __init__(self, values: Dict[str, List[str]]) -> None:
        self.q = values
        self.err: Optional[str] = None

    def has(self, name: str) -> bool:
        return len(self.q.get(name, [])) > 0

    def string(self, name: str) -> str:
        vs = self.q.get(name, [])
        if not vs:
            return ""
        del self.q[name]
        return vs[-1]

    def int(self, name: str) -> int:
        s = self.string(name)
        if s == "":
            return 0
        try:
            return _atoi(s)
        except NodeURLError as e:
            if self.err is None:
                self.err = f"redis: invalid {name} number: {e}"
            return 0

    def duration(self, name: str) -> None:
        s = self.string(name)
        if s == "":
            return  # the default
        try:
            _atoi(s)
            return  # a plain integer: seconds
        except NodeURLError:
            pass
        try:
            _check_duration(s)
        except NodeURLError as e:
            if self.err is None:
                self.err = f"redis: invalid {name} duration: {e}"

    def bool(self, name: str) -> bool:
        s = self.string(name)
        if s in ("true", "1"):
            return True
        if s in ("false", "0", ""):
            return False
        if self.err is None:
            self.err = (f"redis: invalid {name} boolean: expected true/false/1/0 or an empty "
                        f"string, got {_quote(s)}")
        return False


def _parse(raw: str) -> NodeOptions:
    u = _split_url(raw)
    username = u.username or b""
    password = u.password or b""
    if u.scheme in ("redis", "rediss"):
        hostname, port = _hostname_port(u.host)
        host = _text(hostname) or "localhost"
        port_text = _text(port) or "6379"
        fields = [f for f in _text(u.path).split("/") if f]
        db = 0
        if len(fields) == 1:
            try:
                db = _atoi(fields[0])
            except NodeURLError:
                raise NodeURLError(f"redis: invalid database number: {_quote(fields[0])}") from None
        elif len(fields) > 1:
            raise NodeURLError(f"redis: invalid URL path: {_text(u.path)}")
        network, path, tls = "tcp", "", u.scheme == "rediss"
    elif u.scheme == "unix":
        if _text(u.path).strip() == "":
            raise NodeURLError("redis: empty unix socket path")
        network, host, port_text, path, db, tls = "unix", "", "", os.fsdecode(u.path), 0, False
    else:
        raise NodeURLError(f"redis: invalid URL scheme: {u.scheme}")

    q = _Query(_query(u.raw_query))
    db_text = q.string("db")
    if db_text != "":
        try:
            db = _atoi(db_text)
        except NodeURLError as e:
            raise NodeURLError(f"redis: invalid database number: {e}") from None
    for name in _INTS_1:
        q.int(name)
    client_name = q.string("client_name")
    for name, kind in _AFTER_CLIENT_NAME:
        if kind == "int":
            q.int(name)
        elif kind == "duration":
            q.duration(name)
        else:
            q.bool(name)
    # Each pair reads its first name when present, else its older alias.
    for new, old in (("conn_max_idle_time", "idle_timeout"), ("conn_max_lifetime", "max_conn_age")):
        q.duration(new if q.has(new) else old)
    if q.has("conn_max_lifetime_jitter"):
        q.duration("conn_max_lifetime_jitter")
    skip_verify = False
    if tls and q.has("skip_verify"):
        skip_verify = q.bool("skip_verify")
    if q.err is not None:
        raise NodeURLError(q.err)
    if q.q:
        raise NodeURLError("redis: unexpected option: " + ", ".join(sorted(q.q)))
    return NodeOptions(network=network, host=host, port=port_text, path=path,
                       username=username, password=password, db=db,
                       client_name=client_name.encode("utf-8", "surrogateescape"),
                       tls=tls, skip_verify=skip_verify)
