"""The client's TLS settings (ssl_ca_certs, ssl_certfile, ssl_keyfile, ssl_server_name,
ssl_context) on the backend under test (both passes run it), through the synchronous
and the asyncio API (the engine host on both: its TLS connections are non-blocking
ssl.SSLSockets in its epoll set, _epoll.py, or asyncio's SSL transports where there
is no epoll). Certificates are made here by core/testkit/tlstest/mkcerts.sh
(a private CA, an unrelated CA, server certificates for 127.0.0.1 and for
redis.internal, a client certificate); TLS-only redis-servers run on them."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

import liblock
from _servers import Deployment, Server
from conftest import BACKEND, eventually, free_port

ROOT = Path(__file__).resolve().parents[3]
MKCERTS = ROOT / "core" / "testkit" / "tlstest" / "mkcerts.sh"


class TLSServer(Server):
    """A TLS-only redis-server on certs/<name>.pem, asking for a client certificate
    from ca.pem when auth_clients."""

    def __init__(self, certs: Path, name: str, auth_clients: bool) -> None:
        self.certs = certs
        port = free_port()
        super().__init__("--port", "0", "--tls-port", str(port),
                         "--tls-cert-file", str(certs / f"{name}.pem"),
                         "--tls-key-file", str(certs / f"{name}.key"),
                         "--tls-ca-cert-file", str(certs / "ca.pem"),
                         "--tls-auth-clients", "yes" if auth_clients else "no", port=port, tls=True)

    def connect(self) -> Any:  # the observer: no verification, with the client certificate
        import socket

        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.load_cert_chain(str(self.certs / "client.pem"), str(self.certs / "client.key"))
        return ctx.wrap_socket(s)


@pytest.fixture(scope="module")
def certs() -> Iterator[Path]:
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test certificates: apt-get install -y openssl")
    d = Path(tempfile.mkdtemp(prefix="ll-certs-", dir="/tmp"))
    try:
        subprocess.run(["sh", str(MKCERTS), str(d)], check=True, timeout=60)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def servers(certs: Path) -> Iterator[Dict[str, TLSServer]]:
    made: Dict[str, TLSServer] = {}
    try:
        made["plain"] = TLSServer(certs, "server", False)
        made["mutual"] = TLSServer(certs, "server", True)
        made["internal"] = TLSServer(certs, "internal", False)
        yield made
    finally:
        for s in made.values():
            s.close()


def url(srv: Server, query: str = "") -> str:
    return f"rediss://127.0.0.1:{srv.port}{query}"


def client(node: str, **tls: Any) -> liblock.Client:
    return liblock.Client([node], node_timeout=2.0, backend=BACKEND, **tls)


def take(c: liblock.Client, api: str) -> None:
    """One lock taken and released, through the synchronous or the asyncio API."""
    if api == "sync":
        c.acquire("tls:ok", ttl=10, wait=0).release()
        return

    async def run() -> None:
        lock = await c.acquire_async("tls:ok", ttl=10, wait=0)
        await lock.release_async()
    asyncio.run(run())


def refused(c: liblock.Client, api: str, cause: str) -> None:
    """Unavailable naming node 0 and the TLS reason."""
    with pytest.raises(liblock.Unavailable) as e:
        take(c, api)
    msg = str(e.value)
    assert "node 0 (127.0.0.1:" in msg, msg
    import re
    assert re.search(cause, msg), msg


# The reasons, as OpenSSL words them (Go's crypto/tls words, from the native synchronous
# API's days on liblock.so's Go driver, still accepted).
UNTRUSTED = r"CERTIFICATE_VERIFY_FAILED|certificate signed by unknown authority"
NO_CLIENT_CERT = r"certificate required|CERTIFICATE_REQUIRED"
WRONG_NAME = r"IP address mismatch|doesn't contain any IP SANs"

APIS = ["sync", "async"]


@pytest.mark.parametrize("api", APIS)
def test_private_ca_verifies(servers: Dict[str, TLSServer], certs: Path, api: str) -> None:
    with client(url(servers["plain"]), ssl_ca_certs=str(certs / "ca.pem")) as c:
        take(c, api)
    with client(url(servers["plain"]), ssl_ca_certs=certs / "ca.pem") as c:  # a PathLike
        take(c, api)


@pytest.mark.parametrize("api", APIS)
def test_ssl_context_verifies(servers: Dict[str, TLSServer], certs: Path, api: str) -> None:
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    with client(url(servers["plain"]), ssl_context=ctx) as c:  # every mode connects from Python
        take(c, api)


@pytest.mark.parametrize("api", APIS)
def test_without_the_ca_or_with_another_ca_unavailable(servers: Dict[str, TLSServer], certs: Path,
                                                       api: str) -> None:
    with client(url(servers["plain"])) as c:
        refused(c, api, UNTRUSTED)
    with client(url(servers["plain"]), ssl_ca_certs=str(certs / "other-ca.pem")) as c:
        refused(c, api, UNTRUSTED)
    assert servers["plain"].cmd("DBSIZE") == 0


@pytest.mark.parametrize("api", APIS)
def test_mutual_tls(servers: Dict[str, TLSServer], certs: Path, api: str) -> None:
    ca = str(certs / "ca.pem")
    with client(url(servers["mutual"]), ssl_ca_certs=ca, ssl_certfile=str(certs / "client.pem"),
                ssl_keyfile=str(certs / "client.key")) as c:
        take(c, api)
    with client(url(servers["mutual"]), ssl_ca_certs=ca) as c:
        refused(c, api, NO_CLIENT_CERT)


@pytest.mark.parametrize("api", APIS)
def test_server_name(servers: Dict[str, TLSServer], certs: Path, api: str) -> None:
    ca = str(certs / "ca.pem")
    with client(url(servers["internal"]), ssl_ca_certs=ca, ssl_server_name="redis.internal") as c:
        take(c, api)
    with client(url(servers["internal"]), ssl_ca_certs=ca) as c:
        refused(c, api, WRONG_NAME)


@pytest.mark.parametrize("api", APIS)
def test_skip_verify_still_works(servers: Dict[str, TLSServer], certs: Path, api: str) -> None:
    with client(url(servers["plain"], "?skip_verify=true")) as c:
        take(c, api)
    with client(url(servers["plain"], "?skip_verify=true"), ssl_ca_certs=str(certs / "other-ca.pem")) as c:
        take(c, api)


def test_bad_input_at_construction(certs: Path) -> None:
    key = (certs / "client.key").read_text()
    key_line = key.splitlines()[1]
    node = "rediss://127.0.0.1:1"
    missing = str(certs / "missing.pem")
    cases = [
        (dict(ssl_ca_certs=missing), liblock.InvalidArgument, "ssl_ca_certs: cannot read"),
        (dict(ssl_ca_certs=str(certs / "garbage.pem")), liblock.InvalidArgument, "ssl_ca_certs: no PEM certificate"),
        (dict(ssl_ca_certs=str(certs / "client.key")), liblock.InvalidArgument, "ssl_ca_certs: no PEM certificate"),
        (dict(ssl_certfile=missing, ssl_keyfile=str(certs / "client.key")), liblock.InvalidArgument,
         "ssl_certfile: cannot read"),
        (dict(ssl_certfile=str(certs / "client.pem"), ssl_keyfile=missing), liblock.InvalidArgument,
         "ssl_keyfile: cannot read"),
        (dict(ssl_certfile=str(certs / "garbage.pem"), ssl_keyfile=str(certs / "client.key")),
         liblock.InvalidArgument, "ssl_certfile: no PEM certificate"),
        (dict(ssl_certfile=str(certs / "client.pem"), ssl_keyfile=str(certs / "garbage.pem")),
         liblock.InvalidArgument, "ssl_keyfile: no usable PEM private key"),
        (dict(ssl_certfile=str(certs / "client.pem"), ssl_keyfile=str(certs / "server.key")),
         liblock.InvalidArgument, "ssl_keyfile: does not match ssl_certfile"),
        (dict(ssl_keyfile=str(certs / "client.key")), liblock.InvalidArgument, "ssl_keyfile: needs ssl_certfile"),
        (dict(ssl_certfile=str(certs / "client.pem")), liblock.InvalidArgument, "ssl_certfile: no usable PEM private key"),
        (dict(ssl_context="ca.pem"), liblock.ArgumentTypeError, "ssl_context must be an ssl.SSLContext"),
        (dict(ssl_context=ssl.create_default_context(), ssl_ca_certs=str(certs / "ca.pem")),
         liblock.InvalidArgument, "not both"),
        (dict(ssl_ca_certs=3), liblock.ArgumentTypeError, "ssl_ca_certs must be a str or os.PathLike"),
        (dict(ssl_server_name=""), liblock.InvalidArgument, "ssl_server_name"),
        (dict(ssl_server_name=b"x"), liblock.ArgumentTypeError, "ssl_server_name must be a str"),
    ]
    for kw, exc, want in cases:
        with pytest.raises(exc) as e:
            client(node, **kw)
        msg = str(e.value)
        assert want in msg, (kw, msg)
        assert key_line not in msg and "PRIVATE KEY" not in msg, msg
    assert liblock.InvalidArgument.status == liblock.ArgumentTypeError.status



# ------------------------------------------------------------------ per node

@pytest.fixture(scope="module")
def three(certs: Path, servers: Dict[str, TLSServer]) -> Iterator[Dict[str, Server]]:
    """Two TLS nodes whose certificates come from two private CAs (ca, other-ca) and a
    plain node."""
    made: Dict[str, Server] = {"a": servers["plain"]}
    try:
        made["b"] = TLSServer(certs, "other", False)
        port = free_port()
        made["bare"] = Server("--port", str(port), port=port)
        yield made
    finally:
        for k in ("b", "bare"):
            if k in made:
                made[k].close()


def per_node(three: Dict[str, Server], certs: Path, a: Any, b: Any) -> liblock.Client:
    """A client of [a, b, the plain node] whose own CA is ca.pem."""
    return liblock.Client([a, b, f"redis://127.0.0.1:{three['bare'].port}"], node_timeout=2.0,
                          backend=BACKEND, ssl_ca_certs=str(certs / "ca.pem"))


def acquire_inspect(c: liblock.Client, api: str, res: str) -> Any:
    """Take res, inspect it, release it; the inspection."""
    if api == "sync":
        with c.lock(res, ttl=10, wait=0):
            return c.inspect(res)

    async def run() -> Any:
        lock = await c.acquire_async(res, ttl=10, wait=0)
        try:
            return await c.inspect_async(res)
        finally:
            await lock.release_async()
    return asyncio.run(run())


@pytest.mark.parametrize("api", APIS)
def test_per_node_each_its_own_ca(three: Dict[str, Server], certs: Path, api: str) -> None:
    b = liblock.Node(url(three["b"]), ssl_ca_certs=str(certs / "other-ca.pem"))
    with per_node(three, certs, url(three["a"]), b) as c:
        i = acquire_inspect(c, api, "tls:pernode")
    assert [(n.holder, n.error) for n in i.nodes] == [(True, None)] * 3, i


@pytest.mark.parametrize("api", APIS)
def test_per_node_client_ca_only(three: Dict[str, Server], certs: Path, api: str) -> None:
    # liblock.Node without ssl_* fields: the client's settings, as a URL string
    with per_node(three, certs, url(three["a"]), liblock.Node(url(three["b"]))) as c:
        i = acquire_inspect(c, api, "tls:clientca")  # 2 of 3
    assert [n.holder for n in i.nodes] == [True, False, True], i
    import re
    assert re.search(UNTRUSTED, i.nodes[1].error or ""), i


@pytest.mark.parametrize("api", APIS)
def test_per_node_replaces_the_client_settings(three: Dict[str, Server], certs: Path, api: str) -> None:
    a = liblock.Node(url(three["a"]), ssl_ca_certs=str(certs / "other-ca.pem"))
    with per_node(three, certs, a, url(three["b"])) as c:
        with pytest.raises(liblock.Unavailable) as e:
            take(c, api)
    assert [n.node for n in e.value.nodes] == [0, 1], e.value
    import re
    for n in e.value.nodes:
        assert re.search(UNTRUSTED, n.cause), e.value


@pytest.mark.parametrize("api", APIS)
def test_per_node_ssl_context(three: Dict[str, Server], certs: Path, api: str) -> None:
    b = liblock.Node(url(three["b"]), ssl_context=ssl.create_default_context(cafile=str(certs / "other-ca.pem")))
    with per_node(three, certs, url(three["a"]), b) as c:
        i = acquire_inspect(c, api, "tls:pernode-ctx")
    assert [(n.holder, n.error) for n in i.nodes] == [(True, None)] * 3, i


def test_per_node_bad_input(certs: Path) -> None:
    missing = str(certs / "missing.pem")
    ok = "rediss://127.0.0.1:1"
    cases = [
        (liblock.Node(ok, ssl_ca_certs=missing), liblock.InvalidArgument, "nodes[1].ssl_ca_certs: cannot read"),
        (liblock.Node(ok, ssl_ca_certs=str(certs / "garbage.pem")), liblock.InvalidArgument,
         "nodes[1].ssl_ca_certs: no PEM certificate"),
        (liblock.Node(ok, ssl_keyfile=str(certs / "client.key")), liblock.InvalidArgument,
         "nodes[1].ssl_keyfile: needs nodes[1].ssl_certfile"),
        (liblock.Node(ok, ssl_certfile=str(certs / "client.pem"), ssl_keyfile=str(certs / "server.key")),
         liblock.InvalidArgument, "nodes[1].ssl_keyfile: does not match nodes[1].ssl_certfile"),
        (liblock.Node(ok, ssl_context="ca.pem"), liblock.ArgumentTypeError, "nodes[1].ssl_context must be an ssl.SSLContext"),
        (liblock.Node(ok, ssl_context=ssl.create_default_context(), ssl_ca_certs=str(certs / "ca.pem")),
         liblock.InvalidArgument, "nodes[1].ssl_context: give either"),
        (liblock.Node(ok, ssl_server_name=""), liblock.InvalidArgument, "nodes[1].ssl_server_name"),
        (liblock.Node(ok, ssl_ca_certs=3), liblock.ArgumentTypeError, "nodes[1].ssl_ca_certs must be a str"),
        (liblock.Node(b"x"), liblock.ArgumentTypeError, "nodes[1].url must be a str"),  # type: ignore[arg-type]
        (liblock.Node("http://x"), liblock.InvalidArgument, "nodes[1]"),
        (3, liblock.ArgumentTypeError, "nodes[1] must be a URL string or a liblock.Node"),
    ]
    for node, exc, want in cases:
        with pytest.raises(exc) as e:
            liblock.Client(["redis://127.0.0.1:1", node], backend=BACKEND)
        assert want in str(e.value), (node, str(e.value))


def test_node_is_a_frozen_dataclass() -> None:
    import dataclasses

    n = liblock.Node("rediss://h:1", ssl_ca_certs="/ca.pem")
    assert "Node" in liblock.__all__ and dataclasses.is_dataclass(n)
    with pytest.raises(dataclasses.FrozenInstanceError):
        n.url = "x"  # type: ignore[misc]
    assert n == liblock.Node("rediss://h:1", ssl_ca_certs="/ca.pem")


# A Redis Cluster whose nodes listen with TLS and run their bus and replication
# over it (build/redisnodes -cluster -tls DIR): a rediss:// cluster=yes URL with the
# private CA takes the lock on its shard (the primary and, the default WAIT 1, its
# replica); without the CA nothing is taken.
@pytest.fixture(scope="module")
def tls_cluster(certs: Path) -> Iterator[Deployment]:
    d = Deployment("-cluster", "cluster_tls_url", extra=["-tls", str(certs)])
    try:
        yield d
    finally:
        d.close()


@pytest.mark.parametrize("api", APIS)
def test_tls_cluster(tls_cluster: Deployment, certs: Path, api: str) -> None:
    assert tls_cluster.url.startswith("rediss://127.0.0.1:") and "cluster=yes" in tls_cluster.url
    with liblock.Client([tls_cluster.url], node_timeout=3.0, backend=BACKEND,
                        ssl_ca_certs=str(certs / "ca.pem")) as c:
        def held() -> None:
            eventually(lambda: sum(k.count("{tls:clu}") for k in tls_cluster.keys()) == 2,
                       what="the key on its primary and its replica")

        if api == "sync":
            lock = c.acquire("tls:clu", ttl=10, wait=0)
            assert lock.key == "{tls:clu}"
            held()
            lock.release()
        else:
            async def run() -> None:
                lock = await c.acquire_async("tls:clu", ttl=10, wait=0)
                assert lock.key == "{tls:clu}"
                await asyncio.get_running_loop().run_in_executor(None, held)
                await lock.release_async()
            asyncio.run(run())
        eventually(lambda: all(not k for k in tls_cluster.keys()), what="no key left")
    with liblock.Client([tls_cluster.url], node_timeout=3.0, backend=BACKEND) as c:
        with pytest.raises(liblock.Unavailable) as e:
            take(c, api)
        import re
        assert re.search(UNTRUSTED, str(e.value)), str(e.value)
    assert all(not k for k in tls_cluster.keys())


@pytest.mark.parametrize("drain", [True, False])
def test_a_record_larger_than_the_read_is_read_whole(
        servers: Dict[str, TLSServer], certs: Path, monkeypatch: pytest.MonkeyPatch, drain: bool) -> None:
    """What OpenSSL decrypted beyond one read's buffer (``SSLSocket.pending()``) is read at
    once: epoll cannot tell of it, the socket itself being empty. Here every read takes 2
    bytes (the host's read buffer cut short), so each reply is several reads of one record.
    Control (drain=False, the pending() read off): the rest of a reply is never read and
    the call fails for want of an answer."""
    from liblock import _epoll

    if not drain:
        monkeypatch.setattr(ssl.SSLSocket, "pending", lambda self: 0)
    with client(url(servers["plain"]), ssl_ca_certs=str(certs / "ca.pem")) as c:
        c.acquire("tls:warm", ttl=10, wait=0).release()  # the connection is open
        host = c._driver.sync_host()
        if not host._mux or not all(isinstance(m, _epoll.MuxConn) and m.tls for m in host._conns.values()):
            pytest.skip("no epoll set here: TLS goes through asyncio's transports")
        host._recv_view = host._recv_view[:2]
        if drain:
            for _ in range(5):
                lock = c.acquire("tls:small", ttl=10, wait=0)
                assert lock.info()["resource"] == "tls:small"
                lock.release()
        else:
            with pytest.raises((liblock.Unavailable, liblock.NotAcquired, liblock.LockLost)):
                c.acquire("tls:small", ttl=10, wait=0).release()
