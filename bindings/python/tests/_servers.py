"""Single redis-servers with the settings build/redisnodes does not make (a unix
socket, a password, ACL users, TLS), started by the test itself in a temp dir and
SIGKILLed at its end, plus a raw RESP client that reaches them (over the socket,
with AUTH, over TLS) to look at keys independently of liblock."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

from conftest import REDISNODES, _read, free_port

APT_REDIS = "apt-get install -y redis-server"


def redis_server_binary() -> str:
    path = shutil.which("redis-server")
    if path is None:
        pytest.fail(f"redis-server is not installed: {APT_REDIS}")
    return path


class Server:
    """One redis-server. ``port``: its TCP (or TLS) port, 0 when it listens on none;
    ``unix``: its socket path; ``password``: what AUTH needs; ``tls``: the port speaks TLS."""

    def __init__(self, *args: str, port: int = 0, unix: Optional[str] = None,
                 password: Optional[str] = None, tls: bool = False, user: Optional[str] = None) -> None:
        # A short directory: a unix socket path must fit in 108 bytes.
        self.dir = Path(tempfile.mkdtemp(prefix="ll-", dir="/tmp"))
        self.port, self.unix, self.password, self.tls, self.user = port, unix, password, tls, user
        self.also_remove: List[Path] = []  # e.g. the certificate's directory
        self.log = self.dir / "redis.log"
        argv = [redis_server_binary(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", str(self.dir), "--logfile", str(self.log), *args]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.STDOUT)
        from conftest import eventually

        def up() -> bool:
            if self.proc.poll() is not None:
                text = self.log.read_text(errors="replace") if self.log.exists() else ""
                self.close()
                raise ServerExited(f"redis-server {' '.join(args)} exited with {self.proc.returncode}: "
                                   f"{text.strip()[-600:]}")
            try:
                return bool(self.cmd("PING") == "PONG")
            except (OSError, RuntimeError):
                return False
        try:
            eventually(up, timeout=15, what=f"redis-server {' '.join(args)} to answer", interval=0.02)
        except BaseException:
            self.close()
            raise

    def connect(self) -> Any:
        if self.unix is not None:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(self.unix)
            return s
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        if self.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            s = ctx.wrap_socket(s)
        return s

    def cmd(self, *args: str, db: int = 0) -> Any:
        """One command on a fresh connection (AUTH and SELECT first as needed)."""
        with self.connect() as s:
            f = s.makefile("rb")
            pre: List[List[str]] = []
            if self.password is not None:
                pre.append(["AUTH", self.user, self.password] if self.user else ["AUTH", self.password])
            if db:
                pre.append(["SELECT", str(db)])
            for c in pre + [list(args)]:
                out = f"*{len(c)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in c)
                s.sendall(out.encode())
                reply = _read(f)
            return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        for d in [self.dir, *self.also_remove]:
            shutil.rmtree(d, ignore_errors=True)


class ServerExited(RuntimeError):
    """redis-server stopped during start-up (e.g. a directive this build does not know)."""


def tls_server(*args: str) -> Server:
    """A redis-server listening with TLS only, on a self-signed certificate for 127.0.0.1
    made by openssl (the flags of core/resp_transport_test.go's TestRespTLS)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is needed to make the test certificate: apt-get install -y openssl")
    certs = Path(tempfile.mkdtemp(prefix="ll-cert-", dir="/tmp"))
    try:
        key, cert = certs / "key.pem", certs / "cert.pem"
        p = subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
                            "-subj", "/CN=liblock test", "-addext", "subjectAltName=IP:127.0.0.1"],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            pytest.fail(f"openssl could not make a self-signed certificate: {p.stderr.strip()}")
        port = free_port()
        try:
            srv = Server("--port", "0", "--tls-port", str(port), "--tls-cert-file", str(cert),
                         "--tls-key-file", str(key), "--tls-ca-cert-file", str(cert),
                         "--tls-auth-clients", "no", *args, port=port, tls=True,
                         password=_password_of(args))
        except ServerExited as e:
            pytest.fail(f"this redis-server cannot serve TLS ({e}); Debian's is built with TLS: {APT_REDIS}")
    except BaseException:
        shutil.rmtree(certs, ignore_errors=True)
        raise
    srv.also_remove.append(certs)
    return srv


def _password_of(args: tuple) -> Optional[str]:  # type: ignore[type-arg]
    for i, a in enumerate(args):
        if a == "--requirepass":
            return str(args[i + 1])
    return None


class Deployment:
    """A deployment from build/redisnodes (``-sentinel`` or ``-cluster``), driven
    over its line protocol; ``url`` is its node URL (the JSON field ``url_field`` of
    its first line)."""

    def __init__(self, mode: str, url_field: str, n: int = 3, extra: Sequence[str] = ()) -> None:
        self.proc = subprocess.Popen([str(REDISNODES), mode, "-n", str(n), *extra], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            pytest.fail(f"build/redisnodes {mode} did not start (exit {self.proc.wait()})")
        self.url: str = json.loads(line)[url_field]

    def cmd(self, line: str) -> Dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply: Dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert reply.get("ok"), reply
        return reply

    def keys(self) -> List[List[str]]:
        """Each node's keys, in the deployment's node order."""
        keys: List[List[str]] = self.cmd("keys")["keys"]
        return keys

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
