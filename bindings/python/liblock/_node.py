"""liblock.Node: one entry of Client(nodes=...) with TLS settings of its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Node:
    """A node of :class:`liblock.Client` given with its own TLS settings, where they
    differ from the client's (say its certificate comes from another private CA):
    ``Client(nodes=["rediss://a:6380", liblock.Node("rediss://b:6380",
    ssl_ca_certs="/etc/redis/b-ca.pem")], ssl_ca_certs="/etc/redis/ca.pem")``.

    ``url`` is the node's URL, as a plain entry of ``nodes``. The ``ssl_*`` fields are
    the client's parameters of the same names, checked the same way when the client is
    made (errors name the entry: ``nodes[1].ssl_ca_certs: ...``). A Node's settings
    **replace** the client's for that node, they are not merged: give the node all it
    needs. A Node without any ``ssl_*`` field gets the client's, as a URL string does.
    """

    url: str
    ssl_context: Optional[Any] = None
    ssl_ca_certs: Optional[Any] = None
    ssl_certfile: Optional[Any] = None
    ssl_keyfile: Optional[Any] = None
    ssl_server_name: Optional[str] = None

    def has_tls(self) -> bool:
        """Whether any ``ssl_*`` field is given."""
        return any(v is not None for v in (self.ssl_context, self.ssl_ca_certs, self.ssl_certfile,
                                           self.ssl_keyfile, self.ssl_server_name))
