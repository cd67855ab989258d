"""Argument checks shared above the host (a duration in seconds to the engine's
milliseconds, a str to UTF-8, a callback) and the acquire's :class:`Request` the host
sends. Errors name the caller's parameter in the caller's unit (seconds)."""

from __future__ import annotations

import math
import numbers
import sys
from operator import itemgetter

from . import _proto_gen as P
from ._errors import ArgumentTypeError, InvalidArgument

TYPE_CHECKING = False  # (typing is not imported by `import liblock`)
if TYPE_CHECKING:
    from typing import Any, Callable, Optional


def _timedelta_seconds(value: Any) -> Optional[float]:
    """value.total_seconds() if value is a datetime.timedelta (without importing datetime)."""
    for name in ("datetime", "_datetime"):
        mod = sys.modules.get(name)
        if mod is not None and isinstance(value, mod.timedelta):
            return float(value.total_seconds())
    return None


def _fmt_s(ms: int) -> str:
    """Milliseconds as seconds for messages: 50 -> '0.05 s'."""
    return f"{ms / 1000:g} s"


def _ms(name: str, value: Any, lo: int, hi: int) -> int:
    """Seconds (int, float or timedelta) -> milliseconds in [lo, hi]; errors name ``name``."""
    if type(value) is float and -1e15 < value < 1e15:  # fast path; excludes NaN/inf
        ms = round(value * 1000)
    else:
        td = _timedelta_seconds(value)
        if td is not None:
            value = td
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ArgumentTypeError(
                f"{name} must be a number of seconds (int, float or datetime.timedelta), "
                f"not {type(value).__name__}")
        f = float(value)
        if not math.isfinite(f):
            raise InvalidArgument(f"{name} must be a finite number of seconds, got {value!r}")
        if isinstance(value, numbers.Integral):
            ms = int(value) * 1000
        else:
            ms = round(f * 1000)
    if not lo <= ms <= hi:
        raise InvalidArgument(
            f"{name} must be between {_fmt_s(lo)} and {_fmt_s(hi)} (durations are seconds), "
            f"got {value!r} s")
    return ms


def _text(name: str, value: Any, max_bytes: Optional[int] = None, min_bytes: int = 0) -> bytes:
    """A str argument as NUL-terminated UTF-8 (the library checks length and emptiness)."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidArgument(f"{name} must not contain NUL characters")
    try:
        b = value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidArgument(f"{name} is not valid Unicode text: {e}") from None
    if len(b) < min_bytes:
        raise InvalidArgument(f"{name} must not be empty")
    if max_bytes is not None and len(b) > max_bytes:
        raise InvalidArgument(f"{name} must be at most {max_bytes} bytes of UTF-8, got {len(b)}")
    return b


def _callable(name: str, value: Any) -> Optional[Callable[..., Any]]:
    if value is not None and not callable(value):
        raise ArgumentTypeError(f"{name} must be callable or None, not {type(value).__name__}")
    fn: Optional[Callable[..., Any]] = value
    return fn


class Request(tuple):  # type: ignore[type-arg]
    """An acquire's checked arguments, in ``_protocol.acquire``'s parameter order (sent as
    ``_protocol.acquire(buf, *req)``): a tuple's cost per acquire, read by name elsewhere."""

    __slots__ = ()
    resource = property(itemgetter(0))  # bytes; a list's first (_multi: .more has the rest)
    ttl_ms = property(itemgetter(1))
    wait_ms = property(itemgetter(2))
    auto_extend = property(itemgetter(3))
    fence = property(itemgetter(4))
    token = property(itemgetter(5))  # b"" for a random one
    permits = property(itemgetter(6))  # 0 for the mutex
    mode = property(itemgetter(7))  # 0, or a read-write lock's 1 (read) / 2 (write)
    resources = property(itemgetter(8))  # a multi-resource lock's further resources
    value = property(lambda r: r[9] if len(r) > 9 else b"")  # an election's: a campaign
