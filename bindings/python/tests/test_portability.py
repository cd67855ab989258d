"""The package where liblock.so cannot go, and the other way round: the wasm backend
works with no liblock.so anywhere (nothing looks for one or loads one), the native
backend works without wasmtime (and neither backend needs redis-py), each missing piece is the documented
LibraryError naming the way out, and a wheel built by scripts/build-dist.sh (make dist)
carries liblock.so, liblock.wasm and py.typed, is tagged for the platform its
liblock.so needs, and finds its files itself. Every check runs in a
fresh interpreter against a real redis-server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Dict

from conftest import Cluster

BINDING = Path(__file__).resolve().parents[1]
ROOT = BINDING.parents[1]

# Put at the top of every child: loading anything named liblock*.so (or .dll/.dylib)
# through ctypes is an error (wasmtime loads its own native library, which is fine).
GUARD = textwrap.dedent("""\
    import ctypes, sys
    _real_init = ctypes.CDLL.__init__
    def _guarded(self, name, *a, **k):
        if name is not None and "liblock" in str(name) and not ALLOW_NATIVE:
            raise AssertionError("the wasm path tried to load " + str(name))
        _real_init(self, name, *a, **k)
    ctypes.CDLL.__init__ = _guarded
    """)


def _env(pythonpath: Path, **extra: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LIBLOCK_PATH", "LIBLOCK_WASM_PATH", "LIBLOCK_BACKEND")}
    env["PYTHONPATH"] = str(pythonpath)  # only the copy under test, never bindings/python
    env.update(extra)
    return env


def _python(code: str, cwd: Path, env: Dict[str, str], allow_native: bool = False,
            stdin: str = "") -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    prog = f"ALLOW_NATIVE = {allow_native}\n" + GUARD + textwrap.dedent(code)
    p = subprocess.run([sys.executable, "-c", prog], cwd=cwd, env=env, input=stdin,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"child failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    return p


def _copy_package(dest: Path, with_wasm: bool = False) -> Path:
    """bindings/python/liblock alone, in a temp dir: no repository build/ next to it."""
    pkg = dest / "site"
    shutil.copytree(BINDING / "liblock", pkg / "liblock", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.wasm"))
    if with_wasm:
        shutil.copy(ROOT / "build" / "liblock.wasm", pkg / "liblock" / "liblock.wasm")
    return pkg


WASM_HOLDS_THEN_NATIVE_FAILS = """
    import liblock, liblock._native as L
    assert liblock.library_path() is None and L._dll is None
    with liblock.Client([URL], node_timeout=0.5, backend="wasm") as client:
        lock = client.acquire("portable", ttl=10)
        print("HELD", lock.token, flush=True)
        sys.stdin.readline()   # the parent looks at the key meanwhile
        lock.release()
    print("WASM", liblock.wasm_path())
    assert L._dll is None and liblock.library_path() is None, "the wasm backend loaded liblock.so"
    for attempt in (lambda: liblock.Client([URL], backend="native"), liblock.abi_version):
        try:
            attempt()
        except liblock.LibraryError as e:
            assert isinstance(e, liblock.LockError) and isinstance(e, OSError)
            print("NATIVE", str(e).replace(chr(10), " "))
        else:
            raise AssertionError("the native backend worked without liblock.so")
    print("LIVE", liblock.live_handles())
"""


def _hold_and_check(c1: Cluster, code: str, cwd: Path, env: Dict[str, str]) -> str:
    prog = "ALLOW_NATIVE = False\n" + GUARD + f"URL = {c1.urls[0]!r}\n" + textwrap.dedent(code)
    child = subprocess.Popen([sys.executable, "-c", prog], cwd=cwd, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdin is not None
        first = child.stdout.readline()
        assert first.startswith("HELD "), first + (child.stderr.read() if child.stderr else "")
        assert c1.do(0, "GET", "portable") == first.split()[1]  # held in Redis by the wasm backend
        child.stdin.write("\n")
        child.stdin.flush()
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, out + err
    assert c1.all_keys() == []
    return out


def test_wasm_backend_with_liblock_path_naming_nothing(c1: Cluster, tmp_path: Path) -> None:
    """LIBLOCK_PATH names no file and the package copy has no repository build/ beside it."""
    site = _copy_package(tmp_path)
    env = _env(site, LIBLOCK_PATH="/nonexistent/liblock.so",
               LIBLOCK_WASM_PATH=str(ROOT / "build" / "liblock.wasm"))
    out = _hold_and_check(c1, WASM_HOLDS_THEN_NATIVE_FAILS, tmp_path, env)
    natives = [line for line in out.splitlines() if line.startswith("NATIVE ")]
    assert len(natives) == 2
    for line in natives:
        assert "LIBLOCK_PATH=/nonexistent/liblock.so does not name a file" in line
        assert 'backend="wasm"' in line and "LIBLOCK_PATH" in line, line
    assert f"WASM {ROOT / 'build' / 'liblock.wasm'}" in out
    assert "LIVE 0" in out


def test_wasm_backend_from_a_package_with_only_its_wasm(c1: Cluster, tmp_path: Path) -> None:
    """No LIBLOCK_* variable at all: the packaged liblock.wasm is found, liblock.so is
    nowhere, and the native error lists where it looked."""
    site = _copy_package(tmp_path, with_wasm=True)
    out = _hold_and_check(c1, WASM_HOLDS_THEN_NATIVE_FAILS, tmp_path, _env(site))
    assert f"WASM {site / 'liblock' / 'liblock.wasm'}" in out
    natives = [line for line in out.splitlines() if line.startswith("NATIVE ")]
    assert len(natives) == 2
    for line in natives:
        assert "liblock.so not found; tried packaged copy: " + str(site / "liblock" / "liblock.so") in line
        assert 'backend="wasm"' in line and "LIBLOCK_PATH" in line, line
        # what it says to install resolves (there is no "liblock" on PyPI)
        assert "pip install wasmtime==50.0.1" in line and "redis" not in line.split("backend=")[1] and '"liblock[wasm]"' not in line, line


def test_native_error_when_the_library_does_not_load(tmp_path: Path) -> None:
    """A liblock.so for another platform (here: not a library at all) names the way out too."""
    (tmp_path / "other").mkdir()  # not in the cwd: Python would import a ./liblock.so as a module
    bogus = tmp_path / "other" / "liblock.so"
    bogus.write_bytes(b"\x7fELF but not really")
    p = _python("""
        import liblock
        try:
            liblock.Client(["redis://127.0.0.1:1"], backend="native")
        except liblock.LibraryError as e:
            print("ERR", e)
        """, tmp_path, _env(_copy_package(tmp_path), LIBLOCK_PATH=str(bogus)), allow_native=True)
    assert "ERR cannot load " + str(bogus) in p.stdout
    assert 'backend="wasm"' in p.stdout and "LIBLOCK_PATH" in p.stdout


# A client naming no backend where liblock.so does not load: the wasm backend runs, the
# warning comes once for the process, library() says which and why; backend="native"
# still raises.
FALLS_BACK = """
    import warnings
    warnings.simplefilter("always")   # every warning issued is recorded, none deduplicated
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(2):
            with liblock.Client([URL], node_timeout=0.5) as client:
                assert client.backend == "wasm", client.backend
                with client.lock("fallback", ttl=10):
                    with liblock.Client([URL], node_timeout=0.5, backend="wasm") as other:
                        try:
                            other.acquire("fallback", ttl=10, wait=0)
                            print("HELD False")
                        except liblock.NotAcquired:
                            print("HELD True")  # taken in Redis by the fallback client
        info = liblock.library()
    fallbacks = [w for w in caught if issubclass(w.category, liblock.NativeUnavailableWarning)]
    print("WARNINGS", len(fallbacks))
    print("TEXT", str(fallbacks[0].message).replace(chr(10), " "))
    print("WHERE", fallbacks[0].filename)
    print("LIBRARY", info["backend"], info["path"], info["abi_version"] == liblock.ABI_VERSION)
    print("REASON", info["fallback_reason"])
    try:
        liblock.Client([URL], backend="native")
    except liblock.LibraryError as e:
        print("NATIVE raises")
"""


def _falls_back(c1: Cluster, tmp_path: Path, env: Dict[str, str], allow_native: bool = False) -> str:
    p = _python(f"URL = {c1.urls[0]!r}\nimport liblock\n" + textwrap.dedent(FALLS_BACK), tmp_path, env, allow_native)
    assert c1.all_keys() == []
    return p.stdout


def test_no_backend_named_falls_back_to_wasm_without_liblock_so(c1: Cluster, tmp_path: Path) -> None:
    """An installed copy whose liblock.so was removed (the packaged wasm only)."""
    site = _copy_package(tmp_path, with_wasm=True)
    out = _falls_back(c1, tmp_path, _env(site))
    assert out.count("HELD True") == 2, out
    assert "WARNINGS 1" in out, out   # once for the process, though two clients were made
    assert "liblock.so not found" in out.split("TEXT ")[1].split("\n")[0], out
    assert 'backend="wasm"' in out and 'backend="native"' in out
    assert "WHERE <string>" in out, out  # attributed to the caller's line, not liblock's
    assert f"LIBRARY wasm {site / 'liblock' / 'liblock.wasm'} True" in out, out
    assert "REASON liblock.so not found" in out
    assert "NATIVE raises" in out


def test_no_backend_named_falls_back_when_liblock_so_does_not_load(c1: Cluster, tmp_path: Path) -> None:
    """LIBLOCK_PATH names a file that is not a loadable library (another platform's)."""
    (tmp_path / "other").mkdir()
    bogus = tmp_path / "other" / "liblock.so"
    bogus.write_bytes(b"\x7fELF but not really")
    site = _copy_package(tmp_path, with_wasm=True)
    out = _falls_back(c1, tmp_path, _env(site, LIBLOCK_PATH=str(bogus)), allow_native=True)
    assert out.count("HELD True") == 2 and "WARNINGS 1" in out, out
    assert f"REASON cannot load {bogus}" in out, out
    assert "NATIVE raises" in out


def test_no_backend_named_runs_native_where_it_loads_and_warns_nothing(c1: Cluster, tmp_path: Path) -> None:
    p = _python(f"""
        import warnings
        warnings.simplefilter("error")
        import liblock
        with liblock.Client([{c1.urls[0]!r}], node_timeout=0.5) as client:
            with client.lock("native-default", ttl=10):
                print("BACKEND", client.backend)
        info = liblock.library()
        print("LIBRARY", info["backend"], info["path"] == liblock.library_path(), info["fallback_reason"])
        """, tmp_path, _env(BINDING), allow_native=True)
    assert "BACKEND native" in p.stdout and "LIBRARY native True None" in p.stdout, p.stdout
    assert c1.all_keys() == []


def test_no_backend_runs_anywhere_names_both_reasons(tmp_path: Path) -> None:
    p = _python("""
        sys.modules["wasmtime"] = None
        import liblock
        for attempt in (lambda: liblock.Client(["redis://127.0.0.1:1"]), liblock.library):
            try:
                attempt()
            except liblock.LibraryError as e:
                print("ERR", e)
        """, tmp_path, _env(_copy_package(tmp_path, with_wasm=True)))
    errs = [line for line in p.stdout.splitlines() if line.startswith("ERR ")]
    assert len(errs) == 2, p.stdout
    for line in errs:
        assert "no backend that runs here" in line and "liblock.so not found" in line, line
        assert "pip install wasmtime==50.0.1" in line, line


def test_native_backend_needs_neither_wasmtime_nor_redis(c1: Cluster, tmp_path: Path) -> None:
    p = _python(f"""
        sys.modules["wasmtime"] = None   # import wasmtime / import redis now raise ImportError
        sys.modules["redis"] = None
        import liblock
        with liblock.Client([{c1.urls[0]!r}], node_timeout=0.5) as client:
            with client.lock("native-only", ttl=10) as lock:
                print("HELD", lock.token)
        try:
            liblock.Client([{c1.urls[0]!r}], backend="wasm")
        except liblock.LibraryError as e:
            print("WASM", e)
        """, tmp_path, _env(BINDING), allow_native=True)
    assert "HELD " in p.stdout
    assert "WASM the wasm backend needs the wasmtime package: pip install wasmtime==" in p.stdout
    assert c1.all_keys() == []


def test_wasm_backend_needs_no_redis_client_library(c1: Cluster, tmp_path: Path) -> None:
    """The wasm backend's Redis I/O is the asyncio host's: no redis-py."""
    p = _python(f"""
        sys.modules["redis"] = None
        import liblock
        with liblock.Client([{c1.urls[0]!r}], node_timeout=0.5, backend="wasm") as client:
            with client.lock("wasm-no-redis-py", ttl=10) as lock:
                print("HELD", lock.token)
        assert "redis" not in sys.modules or sys.modules["redis"] is None
        """, tmp_path, _env(BINDING))
    assert "HELD " in p.stdout
    assert c1.all_keys() == []


def test_wasm_backend_without_wasmtime_says_what_to_install(tmp_path: Path) -> None:
    p = _python("""
        sys.modules["wasmtime"] = None
        import liblock
        try:
            liblock.Client(["redis://127.0.0.1:1"], backend="wasm")
        except liblock.LibraryError as e:
            print("WASM", e)
        """, tmp_path, _env(BINDING))
    assert "WASM the wasm backend needs the wasmtime package: pip install wasmtime==50.0.1" in p.stdout


def test_wheel_carries_both_libraries_and_finds_them(c1: Cluster, tmp_path: Path) -> None:
    build = subprocess.run(["bash", str(BINDING / "scripts" / "build-dist.sh"), str(tmp_path / "dist")],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    wheel, = (tmp_path / "dist").glob("liblock-*.whl")
    sdist, = (tmp_path / "dist").glob("liblock-*.tar.gz")
    tag = subprocess.run([sys.executable, str(BINDING / "setup.py"), "--platform-tag", str(ROOT / "build" / "liblock.so")],
                         capture_output=True, text=True, timeout=60).stdout.strip()
    assert tag.startswith("manylinux_2_") and wheel.name == f"liblock-0.1.0-py3-none-{tag}.whl", (tag, wheel.name)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for name in ("liblock/liblock.so", "liblock/liblock.wasm", "liblock/py.typed", "liblock/_host.py"):
        assert name in names, sorted(names)
    # wasmtime: a dependency of every wheel (the fallback's engine; one metadata for all wheels)
    assert "Requires-Dist: wasmtime==50.0.1\n" in metadata and "Provides-Extra: wasm" in metadata, metadata
    assert 'Requires-Dist: liblock-cli==0.1.0; extra == "cli"' in metadata, metadata
    assert "Requires-Dist: redis" not in metadata, metadata  # the wasm backend needs no Redis client
    site = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          "--no-deps", "--no-index", "--target", str(site), str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    p = _python(f"""
        import liblock
        assert liblock.__file__.startswith({str(site)!r}), liblock.__file__
        for backend in ("native", "wasm"):
            with liblock.Client([{c1.urls[0]!r}], node_timeout=0.5, backend=backend) as client:
                with client.lock("wheel-" + backend, ttl=10):
                    pass
        print("SO", liblock.library_path())
        print("WASM", liblock.wasm_path())
        """, tmp_path, _env(site), allow_native=True)
    assert f"SO {site / 'liblock' / 'liblock.so'}" in p.stdout
    assert f"WASM {site / 'liblock' / 'liblock.wasm'}" in p.stdout
    assert c1.all_keys() == []
