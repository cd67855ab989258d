"""Multi-resource locks: ``client.acquire(["a", "b"], ttl)`` takes every resource or none.
The engine does the work; this module checks the list (errors name ``resources[i]``) and
carries the set through a one-resource acquire's path as a :class:`ResourceSet`."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Tuple

from ._errors import ArgumentTypeError, InvalidArgument
from ._proto_gen import LIMIT_RESOURCES_MAX

MAX_RESOURCES = LIMIT_RESOURCES_MAX
"""The most resources one acquire of a list takes (the spec's limit)."""


class ResourceSet(bytes):
    """The first resource of a multi-resource acquire (UTF-8), with the others in :attr:`more`."""

    more: "Tuple[bytes, ...]" = ()
    names: "Tuple[str, ...]" = ()


def resource_arg(value: Any, text: Callable[..., bytes], max_bytes: int, min_bytes: int) -> bytes:
    """acquire's ``resource``: a str (one resource), or a list or tuple of them (a set)."""
    if not isinstance(value, (list, tuple)):
        return text("resource", value, max_bytes, min_bytes)
    if len(value) == 0:
        raise InvalidArgument("resources must name at least one resource")
    if len(value) > MAX_RESOURCES:
        raise InvalidArgument(f"resources: at most {MAX_RESOURCES} resources in one lock, got {len(value)}")
    out = []
    seen: Dict[str, int] = {}
    for i, r in enumerate(value):
        if not isinstance(r, str):
            raise ArgumentTypeError(f"resources[{i}] must be a str, not {type(r).__name__}")
        out.append(text(f"resources[{i}]", r, max_bytes, min_bytes))
        if r in seen:
            raise InvalidArgument(f"resources[{i}] duplicates resources[{seen[r]}] ({r!r})")
        seen[r] = i
    res = ResourceSet(out[0])
    res.more = tuple(out[1:])
    res.names = tuple(value)
    return res


def check_token(res: bytes, token: bytes) -> None:
    """A set cannot be re-entered or handed over by token."""
    if token and isinstance(res, ResourceSet):
        raise InvalidArgument("token=... is not supported with a list of resources: a "
                              "multi-resource lock cannot be re-entered or handed over by token")
