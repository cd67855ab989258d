"""liblock.Node: one entry of Client(nodes=...) with TLS settings of its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Node:
    """A node of :class:`liblock.Client` with TLS settings of its own: ``Client(nodes=[
    "rediss://a:6380", liblock.Node("rediss://b:6380", ssl_ca_certs="b-ca.pem")],
    ssl_ca_certs="ca.pem")``. The ``ssl_*`` fields are the client's parameters of the same
    names (errors name ``nodes[1].ssl_ca_certs``); they **replace** the client's for that
    node, not merged. A Node without any gets the client's, as a URL string does."""

    url: str
    ssl_context: Optional[Any] = None
    ssl_ca_certs: Optional[Any] = None
    ssl_certfile: Optional[Any] = None
    ssl_keyfile: Optional[Any] = None
    ssl_server_name: Optional[str] = None

    def has_tls(self) -> bool:
        return any(v is not None for v in (self.ssl_context, self.ssl_ca_certs, self.ssl_certfile,
                                           self.ssl_keyfile, self.ssl_server_name))
