"""Bad arguments of every kind: wrong types raise TypeError, bad values ValueError,
both checked in Python before anything reaches the library (so that every message
names the caller's parameter in seconds: tests/test_units.py). Both also derive
from liblock.LockError."""

from __future__ import annotations

import datetime
import math

import pytest

import liblock
from conftest import BACKEND

URL = "redis://127.0.0.1:1"


def _check(exc_info, base) -> None:
    e = exc_info.value
    assert isinstance(e, base) and isinstance(e, liblock.LockError)
    assert str(e), "the message must say what is wrong"


@pytest.mark.parametrize("nodes", [None, URL, b"redis://x", 42, [1], [None], [b"redis://127.0.0.1:1"], {1: 2}.values()])
def test_client_nodes_type(nodes) -> None:
    with pytest.raises(TypeError) as e:
        liblock.Client(nodes, backend=BACKEND)
    _check(e, liblock.ArgumentTypeError)


@pytest.mark.parametrize("nodes", [[], ["not a url"], ["http://127.0.0.1:1"], [""], ["redis://127.0.0.1:1\x00"],
                                   [URL] * 65, ["redis://127.0.0.1:notaport"]])
def test_client_nodes_value(nodes) -> None:
    with pytest.raises(ValueError) as e:
        liblock.Client(nodes, backend=BACKEND)
    _check(e, liblock.InvalidArgument)


@pytest.mark.parametrize("nodes,says", [
    ([URL, "redis://127.0.0.1:2", URL], "nodes[2]: the same server as nodes[0]"),
    ([URL, URL + "/3"], "nodes[1]: the same server as nodes[0]"),
    (["127.0.0.1:6379"], "nodes[0]: no scheme: write redis://127.0.0.1:6379"),
])
def test_client_nodes_mistakes_named(nodes, says) -> None:
    # One server listed twice would grant twice and fake a quorum.
    with pytest.raises(liblock.InvalidArgument) as e:
        liblock.Client(nodes, backend=BACKEND)
    assert says in str(e.value)


@pytest.mark.parametrize("kw,exc", [
    (dict(node_timeout="1"), TypeError),
    (dict(node_timeout=True), TypeError),
    (dict(node_timeout=[1]), TypeError),
    (dict(node_timeout=0), ValueError),
    (dict(node_timeout=-1.0), ValueError),
    (dict(node_timeout=math.nan), ValueError),
    (dict(node_timeout=math.inf), ValueError),
    (dict(node_timeout=61), ValueError),
    (dict(node_timeout=datetime.timedelta(seconds=61)), ValueError),
    (dict(node_timeout=0.0004), ValueError),  # rounds to 0 ms
    (dict(node_timeout=50), ValueError),  # 50 s: milliseconds written as seconds
    (dict(node_timeout=1e300), ValueError),
    (dict(drift_factor="0.01"), TypeError),
    (dict(drift_factor=False), TypeError),
    (dict(drift_factor=-0.1), ValueError),
    (dict(drift_factor=0.5), ValueError),
    (dict(drift_factor=math.nan), ValueError),
    (dict(drift_factor=-math.inf), ValueError),
    (dict(key_prefix=b"p:"), TypeError),
    (dict(key_prefix=1), TypeError),
    (dict(key_prefix="p" * 257), ValueError),
    (dict(key_prefix="a\x00"), ValueError),
])
def test_client_options(kw, exc) -> None:
    with pytest.raises(exc) as e:
        liblock.Client([URL], **kw, backend=BACKEND)
    _check(e, liblock.LockError)


def test_client_unknown_keyword() -> None:
    with pytest.raises(TypeError):
        liblock.Client([URL], nodetimeout=1, backend=BACKEND)  # type: ignore[call-arg]


def test_good_options_accepted() -> None:
    with liblock.Client((u for u in [URL]), node_timeout=datetime.timedelta(milliseconds=20),
                        drift_factor=0, key_prefix="", backend=BACKEND):
        pass
    with liblock.Client([f"redis://127.0.0.1:{port}" for port in range(1, 65)],  # 64 distinct servers
                        node_timeout=datetime.timedelta(seconds=60), drift_factor=0.1,
                        key_prefix="p" * 256, backend=BACKEND):
        pass
    with liblock.Client([URL], node_timeout=9.5, backend=BACKEND) as client:  # long, but plausibly seconds
        assert client.node_timeout == 9.5


BAD_ACQUIRE = [
    (dict(resource=None), TypeError),
    (dict(resource=b"r"), TypeError),
    (dict(resource=42), TypeError),
    (dict(resource=""), ValueError),
    (dict(resource="r" * 1025), ValueError),
    (dict(resource="é" * 513), ValueError),  # 1026 bytes of UTF-8
    (dict(resource="a\x00b"), ValueError),
    (dict(resource="\ud800"), ValueError),
    (dict(ttl=None), TypeError),
    (dict(ttl="10"), TypeError),
    (dict(ttl=True), TypeError),
    (dict(ttl=0), ValueError),
    (dict(ttl=0.0001), ValueError),
    (dict(ttl=-1), ValueError),
    (dict(ttl=math.nan), ValueError),
    (dict(ttl=math.inf), ValueError),
    (dict(ttl=-math.inf), ValueError),
    (dict(ttl=1e300), ValueError),
    (dict(ttl=10**30), ValueError),
    (dict(ttl=24 * 3600 + 1), ValueError),
    (dict(wait="1"), TypeError),
    (dict(wait=False), TypeError),
    (dict(wait=-0.5), ValueError),
    (dict(wait=math.nan), ValueError),
    (dict(wait=24 * 3600 + 1), ValueError),
    (dict(auto_extend=1), TypeError),
    (dict(auto_extend="yes"), TypeError),
    (dict(auto_extend=None), TypeError),
    (dict(on_lost=1), TypeError),
    (dict(on_lost="print"), TypeError),
]


def _acquire_kwargs(over):
    kw = dict(resource="r", ttl=1.0)
    kw.update(over)
    return kw


@pytest.mark.parametrize("over,exc", BAD_ACQUIRE)
def test_acquire_arguments(client1, over, exc) -> None:
    kw = _acquire_kwargs(over)
    with pytest.raises(exc) as e:
        client1.acquire(**kw)
    _check(e, liblock.LockError)


@pytest.mark.parametrize("over,exc", BAD_ACQUIRE)
def test_lock_context_arguments(client1, over, exc) -> None:
    kw = _acquire_kwargs(over)
    if exc is TypeError:  # types are checked when the context is made
        with pytest.raises(exc):
            client1.lock(**kw)
    with pytest.raises(exc):
        with client1.lock(**kw):
            pytest.fail("entered the block")


@pytest.mark.parametrize("over,exc", BAD_ACQUIRE)
def test_acquire_async_arguments(client1, over, exc) -> None:
    import asyncio
    kw = _acquire_kwargs(over)
    with pytest.raises(exc):
        asyncio.run(client1.acquire_async(**kw))


def test_library_messages_reach_exceptions() -> None:
    with pytest.raises(liblock.InvalidArgument) as e:
        liblock.Client(["http://127.0.0.1:1"], backend=BACKEND)  # the URL is the library's to judge
    assert e.value.status == 3 and str(e.value)


def test_extend_arguments(c1, client1) -> None:
    lock = client1.acquire("ext-args", ttl=10)
    for bad, exc in [(None, TypeError), ("1", TypeError), (True, TypeError), (0, ValueError),
                     (-1, ValueError), (math.nan, ValueError), (math.inf, ValueError),
                     (1e300, ValueError)]:
        with pytest.raises(exc):
            lock.extend(bad)
    assert not lock.lost
    with pytest.raises(TypeError):
        lock.on_lost(5)  # type: ignore[arg-type]
    lock.release()
    assert c1.all_keys() == []


def test_boundaries_accepted(c1, client1) -> None:
    for resource in ["r" * 1024, "é" * 512, "ключ:42"]:
        with client1.lock(resource, ttl=5) as lock:
            assert lock.resource == resource
    client1.acquire("max", ttl=24 * 3600).release()
    client1.acquire("td", ttl=datetime.timedelta(seconds=5), wait=datetime.timedelta(0)).release()


def test_raise_on_lost_type(client1) -> None:
    with pytest.raises(TypeError):
        client1.lock("r", ttl=2, raise_on_lost="no")


def test_exception_hierarchy_and_status_mapping() -> None:
    from liblock._errors import error_for

    expect = {1: liblock.NotAcquired, 2: liblock.LockLost, 3: liblock.InvalidArgument,
              4: liblock.InvalidHandle, 5: liblock.Unavailable, 6: liblock.Canceled,
              7: liblock.InternalError}
    for status, cls in expect.items():
        e = error_for(status, "msg from the library")
        assert type(e) is cls and e.status == status and e.message == "msg from the library"
        assert isinstance(e, liblock.LockError)
    assert "LOCK_INTERNAL" in str(error_for(7, None))
    unknown = error_for(99, "x")
    assert type(unknown) is liblock.LockError and unknown.status == 99
    assert issubclass(liblock.InvalidArgument, ValueError)
    assert issubclass(liblock.ArgumentTypeError, TypeError)
    assert issubclass(liblock.LibraryError, OSError)
    assert not issubclass(liblock.NotAcquired, ValueError)
