"""The client's TLS settings (ssl_ca_certs, ssl_certfile, ssl_keyfile, ssl_server_name,
ssl_context) on the backend under test (both passes run it), through the synchronous
API (native: liblock.so's Go driver, given the files as lock_client_new's tls_* keys;
wasm: the asyncio host on the backend's loop thread) and the asyncio API (the
asyncio host on both). Certificates are made here by core/testkit/tlstest/mkcerts.sh
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
from _servers import Server
from conftest import BACKEND, free_port

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


# The reasons: OpenSSL's (asyncio host), Go's crypto/tls (native synchronous API).
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
    with client(url(servers["plain"]), ssl_context=ctx) as c:
        if api == "sync" and BACKEND == "native":
            # liblock.so's Go driver cannot use a Python SSLContext: a clear refusal,
            # not a connection that ignores it
            with pytest.raises(liblock.InvalidArgument, match="ssl_context= cannot reach the native backend's synchronous API"):
                take(c, api)
            with pytest.raises(liblock.InvalidArgument, match="ssl_ca_certs="):
                c.inspect("tls:ok")
            return
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

