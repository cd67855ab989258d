"""Every node URL form, against real redis-servers started here, on the backend under
test (both passes run it): a unix socket with a db number, a password (escaped in the
URL), an ACL user, TLS with and without skip_verify, client_name. Both backends
connect alike: the native one with liblock.so's engine, the
wasm one with the same engine compiled to wasm (the URL parser and the handshake are
the engine's in both)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

import liblock
from _servers import Server, tls_server
from conftest import BACKEND, free_port

# A password with every character that a URL's userinfo must escape, and a '+',
# which stays a '+' there (only a query turns it into a space).
PW = "p@ss:w/rd+%#?"
PW_URL = "p%40ss%3Aw%2Frd+%25%23%3F"


def _client(url: str) -> liblock.Client:
    return liblock.Client([url], node_timeout=2.0, backend=BACKEND)


@pytest.fixture
def unix_server() -> Iterator[Server]:
    sock_dir = Path(tempfile.mkdtemp(prefix="ll-s-", dir="/tmp"))  # short: sun_path is 108 bytes
    sock = str(sock_dir / "redis.sock")
    try:
        srv = Server("--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
                     "--requirepass", PW, unix=sock, password=PW)
    except BaseException:
        shutil.rmtree(sock_dir, ignore_errors=True)
        raise
    srv.also_remove.append(sock_dir)
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture
def pw_server() -> Iterator[Server]:
    port = free_port()
    srv = Server("--port", str(port), "--requirepass", PW,
                 "--user", "alice", "on", ">alice-pw", "~*", "+@all",
                 port=port, password=PW)
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture
def tls() -> Iterator[Server]:
    srv = tls_server("--requirepass", PW)
    try:
        yield srv
    finally:
        srv.close()


def _no_key_anywhere(srv: Server) -> bool:
    info = srv.cmd("INFO", "keyspace")
    return "keys=" not in info


def test_unix_socket_with_password_and_db(unix_server: Server) -> None:
    with _client(f"unix://:{PW_URL}@{unix_server.unix}?db=3") as client:
        lock = client.acquire("sock", ttl=10)
        assert unix_server.cmd("GET", "sock", db=3) == lock.token
        assert unix_server.cmd("DBSIZE") == 0  # not in db 0
        lock.release()
        assert unix_server.cmd("EXISTS", "sock", db=3) == 0
    assert _no_key_anywhere(unix_server)


def test_unix_socket_db_is_a_query_not_a_path(unix_server: Server) -> None:
    """go-redis: for unix:// the whole path is the socket; ?db=N picks the database."""
    with _client(f"unix://:{PW_URL}@{unix_server.unix}") as client:
        with client.lock("db0", ttl=10) as lock:
            assert unix_server.cmd("GET", "db0") == lock.token
    with _client(f"unix://:{PW_URL}@{unix_server.unix}/3") as client:  # no such socket
        with pytest.raises(liblock.Unavailable):
            client.acquire("x", ttl=10, wait=0)
    assert _no_key_anywhere(unix_server)


@pytest.mark.parametrize("userinfo", [f":{PW_URL}", f"default:{PW_URL}", "alice:alice-pw"],
                         ids=["password", "default-user", "acl-user"])
def test_password_and_db_in_path(pw_server: Server, userinfo: str) -> None:
    with _client(f"redis://{userinfo}@127.0.0.1:{pw_server.port}/5") as client:
        lock = client.acquire("pw", ttl=10)
        assert pw_server.cmd("GET", "pw", db=5) == lock.token
        assert pw_server.cmd("DBSIZE") == 0
        lock.extend(10)
        lock.release()
    assert _no_key_anywhere(pw_server)


@pytest.mark.parametrize("userinfo,error", [
    (":wr0ng-pw@", "WRONGPASS"),
    ("alice:wr0ng-pw@", "WRONGPASS"),
    ("nobody:wr0ng-pw@", "WRONGPASS"),
    ("", "NOAUTH"),
    ("default@", "NOAUTH"),  # a user name without a password: no AUTH is sent (go-redis)
], ids=["wrong-password", "wrong-user-password", "unknown-user", "no-password", "user-only"])
def test_refused_credentials_are_unavailable_with_the_nodes_error(
        pw_server: Server, userinfo: str, error: str) -> None:
    with _client(f"redis://{userinfo}127.0.0.1:{pw_server.port}/5") as client:
        with pytest.raises(liblock.Unavailable) as e:
            client.acquire("pw", ttl=10, wait=0.3)
        assert e.value.status == 5
        assert error in str(e.value), str(e.value)
        assert "wr0ng" not in str(e.value)
    assert _no_key_anywhere(pw_server)


def test_tls_with_skip_verify(tls: Server) -> None:
    url = f"rediss://:{PW_URL}@127.0.0.1:{tls.port}/4?skip_verify=true&client_name=liblock-py"
    with _client(url) as client:
        lock = client.acquire("tls", ttl=10)
        assert tls.cmd("GET", "tls", db=4) == lock.token
        assert "name=liblock-py" in tls.cmd("CLIENT", "LIST")
        lock.release()
        assert tls.cmd("EXISTS", "tls", db=4) == 0
    assert _no_key_anywhere(tls)


@pytest.mark.parametrize("query", ["", "?skip_verify=false", "?skip_verify=0", "?skip_verify="])
def test_tls_verifies_the_certificate_unless_told_not_to(tls: Server, query: str) -> None:
    with _client(f"rediss://:{PW_URL}@127.0.0.1:{tls.port}{query}") as client:
        with pytest.raises(liblock.Unavailable) as e:
            client.acquire("tls", ttl=10, wait=0)
        assert "certificate" in str(e.value).lower(), str(e.value)
    assert _no_key_anywhere(tls)


def test_plain_connection_to_a_tls_port_is_unavailable(tls: Server) -> None:
    with _client(f"redis://:{PW_URL}@127.0.0.1:{tls.port}") as client:
        with pytest.raises(liblock.Unavailable):
            client.acquire("tls", ttl=10, wait=0)
    assert _no_key_anywhere(tls)


@pytest.mark.parametrize("url", [
    "redis://127.0.0.1:1?dial_timeout=3s&read_timeout=1&pool_size=10&max_retries=2&protocol=3",
    "redis://127.0.0.1:1?conn_max_idle_time=1m&conn_max_lifetime=2h&conn_max_lifetime_jitter=1s&pool_fifo=true",
    "redis://127.0.0.1:1?db=2&client_name=worker+1", "redis://[::1]:1/3", "redis://user:pw@localhost",
    "rediss://127.0.0.1:1?skip_verify=1", "unix:///tmp/none.sock?db=1&protocol=2", "unix:/tmp/none.sock",
])
def test_go_redis_options_are_accepted(url: str) -> None:
    with liblock.Client([url], backend=BACKEND) as client:
        assert client.handle


@pytest.mark.parametrize("url,message", [
    ("redis://127.0.0.1:1?skip_verify=true", "unexpected option: skip_verify"),
    ("unix:///tmp/s.sock?skip_verify=true", "unexpected option: skip_verify"),
    ("rediss://127.0.0.1:1?skip_verify=maybe", "invalid skip_verify boolean"),
    ("redis://127.0.0.1:1?ssl_cert_reqs=none", "unexpected option: ssl_cert_reqs"),  # redis-py's, not go-redis's
    ("redis://127.0.0.1:1?foo=1&bar=2", "unexpected option: bar, foo"),
    ("redis://127.0.0.1:1?db=x", "invalid database number"),
    ("redis://127.0.0.1:1/x", "invalid database number"),
    ("redis://127.0.0.1:1/1/2", "nodes[0]"),
    ("redis://127.0.0.1:1?dial_timeout=3x", 'unknown unit "x"'),
    ("redis://127.0.0.1:1?idle_timeout=1&conn_max_idle_time=2", "unexpected option: idle_timeout"),
    ("redis://u:hunter2@127.0.0.1:1?db=hunter2", "nodes[0]"),
])
def test_what_go_redis_refuses_is_refused(url: str, message: str) -> None:
    with pytest.raises(liblock.InvalidArgument) as e:
        liblock.Client(["redis://127.0.0.1:1", url], backend=BACKEND)
    text = str(e.value).replace("nodes[1]", "nodes[0]")
    assert message in text and "hunter2" not in text, text
