"""TLS settings of rediss:// nodes: an ``ssl.SSLContext`` of the caller's, or one built
from redis-py-style file shortcuts (``ssl_ca_certs``, ``ssl_certfile``, ``ssl_keyfile``),
plus ``ssl_server_name``; and the default contexts of nodes without settings."""

from __future__ import annotations

import ssl
from typing import Any, Dict, Optional

from ._errors import ArgumentTypeError, InvalidArgument

class TLS:
    """What a host needs to open a rediss:// connection."""

    def __init__(self, verify: ssl.SSLContext, no_verify: ssl.SSLContext,
                 server_name: Optional[str]) -> None:
        self._verify = verify
        self._no_verify = no_verify
        self.server_name = server_name

    def context(self, verify: bool) -> ssl.SSLContext:
        """The context of a connection: ``verify`` False for a URL's skip_verify=true."""
        return self._verify if verify else self._no_verify


def _path(name: str, value: Any) -> str:
    import os

    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a str or os.PathLike, not {type(value).__name__}")
    if not value or "\0" in value:
        raise InvalidArgument(f"{name}: must be a non-empty path without NUL")
    try:
        with open(value, "rb"):
            pass
    except OSError as e:
        raise InvalidArgument(f"{name}: cannot read {value!r}: {e.strerror or e}") from None
    return value


def _reason(e: ssl.SSLError) -> str:
    # OpenSSL's library and reason ("[X509: KEY_VALUES_MISMATCH] ..."), never the file
    if e.reason:
        return f"{e.library or 'SSL'}: {e.reason}"
    return str(e.args[1]) if len(e.args) > 1 else type(e).__name__


_defaults: Dict[bool, ssl.SSLContext] = {}


def default(verify: bool) -> ssl.SSLContext:
    """The context of a node without settings (the system's roots), made once."""
    ctx = _defaults.get(verify)
    if ctx is None:
        ctx = _defaults[verify] = _context(verify, None)
    return ctx


def _context(verify: bool, cafile: Optional[str]) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=cafile) if verify else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def settings(ssl_context: Any, ssl_ca_certs: Any, ssl_certfile: Any, ssl_keyfile: Any,
             ssl_server_name: Any, prefix: str = "") -> Optional[TLS]:
    """Check the TLS arguments and build the settings (None: none given). Files are read now:
    errors name the parameter, after ``prefix`` ("nodes[1]." for a liblock.Node's)."""
    files_given = any(v is not None for v in (ssl_ca_certs, ssl_certfile, ssl_keyfile))
    if ssl_context is None and not files_given and ssl_server_name is None:
        return None
    server_name: Optional[str] = None
    if ssl_server_name is not None:
        if not isinstance(ssl_server_name, str):
            raise ArgumentTypeError(f"{prefix}ssl_server_name must be a str, not {type(ssl_server_name).__name__}")
        if not ssl_server_name or "\0" in ssl_server_name:
            raise InvalidArgument(f"{prefix}ssl_server_name: must be a non-empty host name")
        server_name = ssl_server_name
    if ssl_context is not None:
        if not isinstance(ssl_context, ssl.SSLContext):
            raise ArgumentTypeError(f"{prefix}ssl_context must be an ssl.SSLContext, not {type(ssl_context).__name__}")
        if files_given:
            raise InvalidArgument(f"{prefix}ssl_context: give either ssl_context or the file shortcuts "
                                  "(ssl_ca_certs, ssl_certfile, ssl_keyfile), not both")
        # skip_verify=true in a URL: a context of liblock's without verification (a
        # caller's context is never changed; its client certificate is not in it)
        return TLS(ssl_context, _context(False, None), server_name)
    cafile = None if ssl_ca_certs is None else _path(prefix + "ssl_ca_certs", ssl_ca_certs)
    certfile = None if ssl_certfile is None else _path(prefix + "ssl_certfile", ssl_certfile)
    keyfile = None if ssl_keyfile is None else _path(prefix + "ssl_keyfile", ssl_keyfile)
    if keyfile is not None and certfile is None:
        raise InvalidArgument(f"{prefix}ssl_keyfile: needs {prefix}ssl_certfile")
    try:
        verify = _context(True, cafile)
    except ssl.SSLError as e:
        raise InvalidArgument(f"{prefix}ssl_ca_certs: no PEM certificate in {cafile!r} ({_reason(e)})") from None
    no_verify = _context(False, None)
    if certfile is not None:
        try:  # the certificate alone first, to name the file that is wrong
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=certfile)
        except ssl.SSLError as e:
            raise InvalidArgument(f"{prefix}ssl_certfile: no PEM certificate in {certfile!r} ({_reason(e)})") from None
        for ctx in (verify, no_verify):
            try:
                ctx.load_cert_chain(certfile, keyfile)
            except ssl.SSLError as e:
                if e.reason == "KEY_VALUES_MISMATCH":
                    raise InvalidArgument(f"{prefix}ssl_keyfile: does not match {prefix}ssl_certfile" if keyfile
                                          else f"{prefix}ssl_certfile: its key does not match its certificate") from None
                what = prefix + ("ssl_keyfile" if keyfile else "ssl_certfile")
                raise InvalidArgument(f"{what}: no usable PEM private key in {keyfile or certfile!r} "
                                      f"({_reason(e)})") from None
    return TLS(verify, no_verify, server_name)


class ClientTLS:
    """A client's TLS settings (``base``, None: the defaults) and, by node index, those of
    the nodes given as ``liblock.Node`` with some, which replace ``base`` for them."""

    def __init__(self, base: Optional[TLS], nodes: Dict[int, TLS]) -> None:
        self.base = base
        self.nodes = nodes

    def for_node(self, node: int) -> Optional[TLS]:
        return self.nodes.get(node, self.base)
