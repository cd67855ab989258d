"""The asyncio host's fast socket path (Linux): a host's TCP (plain or TLS) and unix
connections in one epoll set of its own, which the event loop watches as one reader.

With asyncio transports every reply costs the loop a callback of its own and every request
a transport.write: on 5 nodes most of the host's interpreter time. Here one loop callback
(:meth:`Mux._ready`) reads every ready connection straight into the engine's input buffer
(``recv_into``) and steps it, up to the reply that settles an operation (the rest wait for
the next turn, after its continuation); a WRITE is one ``send`` of a view of the engine's
output buffer. TLS connections are non-blocking ``ssl.SSLSocket`` objects (the handshake
runs on the loop; what OpenSSL decrypted beyond the buffer, ``pending()``, is read at
once). Where the loop cannot watch a descriptor, or there is no epoll, :func:`make`
returns None and the host uses transports. A connection keeps ``_host._Conn``'s contract:
bytes are never reordered or dropped before its end, reported after them.
"""

from __future__ import annotations

import select
import socket
import ssl
import struct
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from ._protocol import EV_RECEIVED

if TYPE_CHECKING:
    import asyncio

_IN = getattr(select, "EPOLLIN", 1)
_OUT = getattr(select, "EPOLLOUT", 4)
_ERRS = getattr(select, "EPOLLERR", 8) | getattr(select, "EPOLLHUP", 16)
# a read or send that would block (OpenSSL's too) or was interrupted: retry when ready
_RETRY = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)
# RECEIVED's head, written in front of what a read put in the engine's input buffer
# (_host._recv_head checks it against the generated codec)
RECV_HEAD = struct.Struct("<BII")
_pack_head = RECV_HEAD.pack_into
_RECV_AT = RECV_HEAD.size


class MuxConn:
    """One connection of a :class:`Mux`; its own ``transport`` (``write``, ``abort``)."""

    __slots__ = ("mux", "host", "cid", "sock", "fd", "transport", "_pending", "closed", "tls")

    def __init__(self, mux: "Mux", cid: int, sock: socket.socket) -> None:
        self.tls = isinstance(sock, ssl.SSLSocket)
        self.mux = mux
        self.host = mux.host
        self.cid = cid
        self.sock = sock
        self.fd = sock.fileno()
        self.transport = self
        self._pending: Optional[bytearray] = None  # what the kernel did not take yet
        self.closed = False

    def write(self, data: Any) -> None:
        """Send ``data`` (maybe a view of the engine's output buffer) now; a copy of what the
        socket does not take is sent when it is writable. An error ends the connection on
        the next loop turn (never inside the caller's step)."""
        if self.closed:
            return
        if self._pending is not None:
            self._pending += data
            return
        try:
            n = self.sock.send(data)
        except _RETRY:
            n = 0
        except OSError as e:
            self.host.loop.call_soon(self._fail, self._why(e))
            return
        if n < len(data):
            self._pending = bytearray(data[n:])
            self.mux.watch(self, _IN | _OUT)

    write_view = write

    def _flush(self) -> None:
        pending = self._pending
        if pending is None or self.closed:
            return
        try:
            n = self.sock.send(pending)
        except _RETRY:
            return
        except OSError as e:
            self._fail(self._why(e))
            return
        del pending[:n]
        if not pending:
            self._pending = None
            self.mux.watch(self, _IN)

    def _read(self) -> None:
        host = self.host
        view = host._recv_view
        if view is None:  # the engine is gone
            self.abort()
            return
        try:
            n = self.sock.recv_into(view)
        except _RETRY:
            return
        except OSError as e:
            self._fail(e)
            return
        if not n:  # the node closed its side (CLIENT KILL, a restart)
            self._fail(None)
            return
        host.reads += 1
        # the head in front of what was read, then one step (per reply: no call between)
        engine = host.engine
        if engine is None or host._conns.get(self.cid) is not self:
            return  # closed by the engine meanwhile: what the node still sent is dropped
        _pack_head(engine.inbuf, 0, EV_RECEIVED, self.cid, n)
        host._step(_RECV_AT + n)
        if self.tls and not self.closed and self.sock.pending():  # type: ignore[attr-defined]
            self._read()  # decrypted already, beyond the buffer: epoll would not tell of it

    def _why(self, exc: OSError) -> OSError:
        """Why a write failed: on TLS, the peer's alert when one waits unread (TLS 1.3 refuses a
        client certificate after the client's handshake is done); else ``exc``."""
        if self.tls:
            try:
                self.sock.recv_into(bytearray(4096))
            except _RETRY:
                pass
            except ssl.SSLError as alert:
                return alert
            except OSError:
                pass
        return exc

    def _fail(self, exc: Optional[Exception]) -> None:
        """The connection ended (EOF, or ``exc``): close it, then tell the host."""
        if self.closed:
            return
        self.abort()
        self.host._lost_conn(self, exc)

    def abort(self) -> None:
        """Close at once (what is unsent is dropped: the engine has forgotten it)."""
        if self.closed:
            return
        self.closed = True
        self._pending = None
        self.mux.forget(self)
        self.sock.close()


class Mux:
    """One host's connections in one epoll set, watched by the loop as one reader."""

    def __init__(self, host: Any, ep: Any) -> None:
        self.host = host
        self.ep = ep
        self.conns: Dict[int, MuxConn] = {}  # fd -> connection
        self.loop = host.loop
        self.reading = False  # in _ready (a request stepped from a completion does not poll)

    def _ready(self) -> int:
        """Read every connection ready now once (the loop saw the set readable, or a request
        polls right after its writes); nothing within a read. How many were ready."""
        if self.reading:
            return 0
        self.reading = True
        try:
            conns = self.conns
            host = self.host
            try:
                events = self.ep.poll(0)
            except (OSError, ValueError):  # closed under us (the host was freed from another thread)
                return 0
            settled = host.settled
            for fd, mask in events:
                c = conns.get(fd)
                if c is None:  # closed by an earlier one of these events' steps
                    continue
                if mask & _OUT:
                    c._flush()
                if mask & (_IN | _ERRS) and not c.closed:
                    c._read()
                    if host.settled != settled and host.done_first:
                        # An operation was settled: its continuation goes first; the late
                        # replies wait (level-triggered) for the loop's next turn or the
                        # next request's early read.
                        break
            return len(events)
        finally:
            self.reading = False

    poll = _ready

    async def connect(self, cid: int, network: str, addr: str, ctx: Optional[ssl.SSLContext] = None,
                      server_name: str = "") -> MuxConn:
        """Connect to ``addr`` (``host:port`` or a socket path) as asyncio's create_connection
        would (each resolved address in turn; TCP_NODELAY), with TLS when ``ctx`` is given
        (the name: ``server_name``, else the host, else "localhost"); then add it to the set."""
        loop = self.loop
        if network == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            await self._connect_sock(sock, addr)
            return await self._add(sock, cid, ctx, server_name or "localhost")
        host, _, port_s = addr.rpartition(":")
        host = host[1:-1] if host.startswith("[") else host
        port = int(port_s)
        import ipaddress  # here: only a connection needs it (`import liblock` stays light)

        try:
            ip = ipaddress.ip_address(host.partition("%")[0])
            infos: List[Any] = [(socket.AF_INET6 if ip.version == 6 else socket.AF_INET, (host, port))]
        except ValueError:
            got = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
            if not got:
                raise OSError(f"getaddrinfo({host!r}) returned an empty list")
            infos = [(family, sockaddr) for family, _, _, _, sockaddr in got]
        errors: List[OSError] = []
        for family, sockaddr in infos:
            sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                await self._connect_sock(sock, sockaddr)
            except OSError as e:
                errors.append(e)
                continue
            # (TLS on the first address that connects, as asyncio's)
            return await self._add(sock, cid, ctx, server_name or host)
        if len(errors) == 1:
            raise errors[0]
        raise OSError("Multiple exceptions: {}".format(", ".join(str(e) for e in errors)))

    async def _connect_sock(self, sock: socket.socket, address: Any) -> None:
        """Connect ``sock`` (closed when that fails)."""
        try:
            sock.setblocking(False)
            await self.loop.sock_connect(sock, address)
        except BaseException:
            sock.close()
            raise

    async def _add(self, sock: socket.socket, cid: int, ctx: Optional[ssl.SSLContext],
                   server_name: str) -> MuxConn:
        """The connected ``sock`` (after TLS's handshake) as connection ``cid`` of the set."""
        try:
            if ctx is not None:
                sock = ctx.wrap_socket(sock, server_hostname=server_name, do_handshake_on_connect=False)
                await self._handshake(sock)
            c = MuxConn(self, cid, sock)
            self.ep.register(c.fd, _IN)
            self.conns[c.fd] = c
            return c
        except BaseException:
            sock.close()
            raise

    async def _handshake(self, sock: ssl.SSLSocket) -> None:
        """TLS's handshake on the non-blocking ``sock``, each wait on the loop; errors raise."""
        loop = self.loop
        fd = sock.fileno()
        while True:
            try:
                sock.do_handshake()
                return
            except ssl.SSLWantReadError:
                add, remove = loop.add_reader, loop.remove_reader
            except ssl.SSLWantWriteError:
                add, remove = loop.add_writer, loop.remove_writer
            ready: "asyncio.Future[None]" = loop.create_future()

            def wake(ready: "asyncio.Future[None]" = ready) -> None:
                if not ready.done():
                    ready.set_result(None)
            add(fd, wake)
            try:
                await ready
            finally:
                remove(fd)

    def watch(self, c: MuxConn, events: int) -> None:
        try:
            self.ep.modify(c.fd, events)
        except (OSError, ValueError):  # closed meanwhile
            pass

    def forget(self, c: MuxConn) -> None:
        if self.conns.get(c.fd) is c:
            del self.conns[c.fd]
            try:
                self.ep.unregister(c.fd)
            except (OSError, ValueError):
                pass

    def close(self) -> None:
        """Close every connection and the set (any thread when the loop is gone)."""
        for c in list(self.conns.values()):
            c.abort()
        try:
            self.loop.remove_reader(self.ep.fileno())
        except (RuntimeError, ValueError, OSError):  # the loop is closed
            pass
        self.ep.close()


def make(host: Any) -> Optional[Mux]:
    """A Mux for ``host`` when its loop and platform allow one, else None (transports)."""
    epoll = getattr(select, "epoll", None)
    if epoll is None:
        return None
    ep = epoll()
    mux = Mux(host, ep)
    try:
        host.loop.add_reader(ep.fileno(), mux._ready)
    except (NotImplementedError, RuntimeError, AttributeError):
        ep.close()
        return None
    return mux

