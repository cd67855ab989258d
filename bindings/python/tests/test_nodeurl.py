"""The wasm backend reads node URLs as the native backend does: liblock/_nodeurl.py
against go-redis v9's ParseURL itself (tests/goredisurl, run with `go run`), URL by
URL, on every URL liblock's config check accepts — the ones the wasm host is given."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from liblock import _nodeurl

ROOT = Path(__file__).resolve().parents[3]

CORPUS: List[str] = [
    # tcp, every part
    "redis://127.0.0.1:6379", "redis://127.0.0.1", "redis://localhost:1/", "redis://h:1/0",
    "redis://h:1/15", "redis://h:1//3//", "redis://h:1/+3", "redis://h:1/-1", "redis://h:1/007",
    "redis://h:1/x", "redis://h:1/1/2", "redis://h:1/%33", "redis://h:1/99999999999999999999",
    "redis://h:", "REDIS://H:1", "redis://[::1]:6380", "redis://[::1]", "redis://[fe80::1%25eth0]:1",
    "redis://h:1#frag", "redis://h:1?", "redis://h:1?#x", "redis://h:00001",
    # credentials
    "redis://user:pw@h:1", "redis://:pw@h:1", "redis://user@h:1", "redis://user:@h:1",
    "redis://u%40x:p%3Aw%2F@h:1", "redis://u:p+w@h:1", "redis://u:p%ffw@h:1", "redis://a@b:c@h:1",
    "redis://u:p:q@h:1", "redis://%E2%82%AC:%E2%82%AC@h:1",
    # options
    "redis://h:1?db=3", "redis://h:1/2?db=5", "redis://h:1/2?db=", "redis://h:1?db=x", "redis://h:1?db=1&db=2",
    "redis://h:1?db=+4", "redis://h:1?db=%204", "redis://h:1?protocol=3", "redis://h:1?protocol=x",
    "redis://h:1?client_name=worker+1", "redis://h:1?client_name=a%26b", "redis://h:1?client_name=",
    "redis://h:1?dial_timeout=3", "redis://h:1?dial_timeout=3s", "redis://h:1?dial_timeout=1.5h2m",
    "redis://h:1?dial_timeout=-1", "redis://h:1?dial_timeout=0", "redis://h:1?dial_timeout=-0",
    "redis://h:1?dial_timeout=3x", "redis://h:1?dial_timeout=.s", "redis://h:1?dial_timeout=1.s",
    "redis://h:1?dial_timeout=.5ms", "redis://h:1?dial_timeout=1e3s", "redis://h:1?dial_timeout=s",
    "redis://h:1?dial_timeout=99999999999999999999", "redis://h:1?dial_timeout=9999999999h",
    "redis://h:1?dial_timeout=2562047h", "redis://h:1?dial_timeout=2562048h",
    "redis://h:1?dial_timeout=9223372036854775807ns", "redis://h:1?dial_timeout=9223372036854775808ns",
    "redis://h:1?dial_timeout=-9223372036854775808ns", "redis://h:1?dial_timeout=1%C2%B5s",
    "redis://h:1?dial_timeout=1%CE%BCs", "redis://h:1?dial_timeout=1us2ns3ms",
    "redis://h:1?read_timeout=1&write_timeout=2s&pool_timeout=3m&min_retry_backoff=1ms&max_retry_backoff=-1",
    "redis://h:1?max_retries=3&pool_size=10&min_idle_conns=1&max_idle_conns=2&max_active_conns=3",
    "redis://h:1?max_concurrent_dials=2&pipeline_pool_size=-1&pipeline_read_buffer_size=1&pipeline_write_buffer_size=2",
    "redis://h:1?pool_fifo=true", "redis://h:1?pool_fifo=1", "redis://h:1?pool_fifo=", "redis://h:1?pool_fifo=yes",
    "redis://h:1?pool_size=x&dial_timeout=y", "redis://h:1?dial_timeout=y&pool_size=x",
    "redis://h:1?idle_timeout=1", "redis://h:1?conn_max_idle_time=1", "redis://h:1?idle_timeout=1&conn_max_idle_time=2",
    "redis://h:1?max_conn_age=1", "redis://h:1?conn_max_lifetime=2&conn_max_lifetime_jitter=1",
    "redis://h:1?conn_max_lifetime_jitter=x",
    "redis://h:1?foo=1", "redis://h:1?foo=1&bar=2", "redis://h:1?foo", "redis://h:1?a;b=1", "redis://h:1?%zz=1",
    "redis://h:1?db=%zz", "redis://h:1?&&db=2&", "redis://h:1?db=2;x", "redis://h:1?username=x", "redis://h:1?password=x",
    "redis://h:1?addr=x", "redis://h:1?network=x",
    # TLS
    "rediss://h:1", "rediss://h:1?skip_verify=true", "rediss://h:1?skip_verify=1", "rediss://h:1?skip_verify=false",
    "rediss://h:1?skip_verify=", "rediss://h:1?skip_verify=maybe", "redis://h:1?skip_verify=true",
    "rediss://u:p@127.0.0.1:1/3?skip_verify=true&client_name=c", "rediss://[::1]:1", "REDISS://H:1",
    # unix sockets
    "unix:///tmp/redis.sock", "unix:///tmp/redis.sock?db=3", "unix://u:p@/tmp/s?db=2", "unix://:p@/tmp/s",
    "unix:/tmp/s", "unix://host/tmp/s", "unix:///tmp/a%20b.sock", "unix:///tmp/s?db=x", "unix:///tmp/s/3",
    "unix:///tmp/s?skip_verify=true", "unix:///tmp/s?protocol=3&client_name=x", "unix:///%20", "unix:///",
    # refused by liblock's check already (never reach the host): listed to show they stay refused
    "http://h:1", "redis://", "unix://", "redis:h", "", "redis://h:x", "redis://[::1", "redis://h:1/%zz",
]


def _reference(urls: List[str]) -> List[Dict[str, Any]]:
    go = shutil.which("go")
    if go is None:
        pytest.fail("the go toolchain is needed for this test (it builds liblock): see the top-level README")
    p = subprocess.run([go, "run", "./bindings/python/tests/goredisurl"], cwd=ROOT, timeout=300,
                       input="".join(json.dumps(u) + "\n" for u in urls), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == len(urls)
    return [json.loads(line) for line in lines]


def _ours(raw: str) -> Dict[str, Any]:
    try:
        o = _nodeurl.parse(raw)
    except _nodeurl.NodeURLError as e:
        return {"error": str(e)}
    out: Dict[str, Any] = {
        "network": o.network, "addr": o.addr, "username": o.username.hex(), "password": o.password.hex(),
        "db": o.db, "client_name": o.client_name.hex(), "tls": o.tls, "skip_verify": o.skip_verify,
    }
    if o.tls:
        out["server_name"] = o.host
    return out


def test_every_url_liblock_accepts_is_read_as_go_redis_reads_it() -> None:
    ref = _reference(CORPUS)
    checked = 0
    mismatches = []
    for raw, want in zip(CORPUS, ref):
        if not want.pop("accepted"):
            continue  # the module refuses it before any host sees it
        checked += 1
        if "error" in want:
            want = {"error": want["error"]}
        elif not want["tls"]:
            want.pop("server_name", None)
        got = _ours(raw)
        if got != want:
            mismatches.append(f"{raw!r}:\n  go-redis: {want}\n  python:   {got}")
    assert not mismatches, "\n".join(mismatches)
    assert checked > 100


def test_refused_urls_are_refused_by_the_module_first() -> None:
    """The last few corpus entries never reach _nodeurl: liblock's own check refuses them."""
    tail = CORPUS[-8:]
    assert not any(r["accepted"] for r in _reference(tail))


def test_password_never_in_parse_errors() -> None:
    with pytest.raises(_nodeurl.NodeURLError) as e:
        _nodeurl.parse("redis://u:hunter2@h:1?db=hunter2")
    assert "hunter2" not in str(e.value) and "xxxxx" in str(e.value)
