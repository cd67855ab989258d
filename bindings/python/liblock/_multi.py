"""Multi-resource locks: ``client.acquire(["a", "b"], ttl)`` takes
every resource of the list or none.

The engine does the work (one script per node over the set's keys); this module checks
the list in Python's terms before anything is sent (each element's type and text, the
count, duplicates — errors name ``resources[i]``, the element's index in the list, as the
engine's do) and carries the set through the code paths of a one-resource acquire: the
first resource travels as ``res`` (a :class:`ResourceSet`, a ``bytes`` of the first
resource that also knows the others), which the host protocol's ACQUIRE gets as its
``resources`` field.
"""

from __future__ import annotations

# Nothing heavy at import time (as _client.py): typing only when type-checking.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Tuple, TypeVar

    _L = TypeVar("_L")

from ._errors import ArgumentTypeError, InvalidArgument
from ._proto_gen import LIMIT_RESOURCES_MAX

MAX_RESOURCES = LIMIT_RESOURCES_MAX
"""The most resources one acquire of a list takes (the spec's limit)."""


class ResourceSet(bytes):
    """The first resource of a multi-resource acquire, as UTF-8, with the others in
    :attr:`more` (UTF-8 too)."""

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


def set_resources(lock: _L, res: bytes) -> _L:
    """Give the lock its set (the host protocol's lock info does not carry it)."""
    names = getattr(res, "names", ())
    if names:
        lock.resources = list(names)  # type: ignore[attr-defined]
    return lock
