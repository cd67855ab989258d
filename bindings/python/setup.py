"""Build hooks of the liblock Python package (metadata: pyproject.toml).

A wheel (and so `pip install ./bindings/python`) carries liblock.so and liblock.wasm
next to the modules; they come from, in order:

1. a liblock checkout's build/ (this file in bindings/python/), when both files are
   newer than every Go, C and build-script source they are made from (`make build`);
2. otherwise a build with Go from the sources: the checkout's, or those this package's
   sdist carries in go-src/: `go build -buildmode=c-shared ./capi` (cgo: a C compiler)
   and wasm/scripts/build.sh (binaryen's wasm-opt; without it the module is built
   unoptimized, with a warning);
3. LIBLOCK_NO_BUNDLE=1 builds a package without them (found at run time through
   LIBLOCK_PATH / LIBLOCK_WASM_PATH).

Two variables choose what a wheel carries instead (.ci/dist/build.sh uses them):
LIBLOCK_WASM_ONLY=1 bundles liblock.wasm alone: a py3-none-any wheel for every
platform (clients run the wasm backend); LIBLOCK_SO=PATH bundles that liblock.so (a
cross build for another architecture) beside liblock.wasm.

A wheel carrying liblock.so is tagged py3-none-manylinux_2_XX_<arch>, XX being the
newest glibc symbol version liblock.so needs (read from its ELF version-needs
section, as `objdump -T` shows it), and at least 17 (manylinux2014: the oldest glibc
the cross builds target and the first with aarch64): it installs only where that
library loads.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

try:  # setuptools >= 70.1 has its own; older ones use the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - depends on the build environment
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
PACKAGE = "liblock"
FILES = ("liblock.so", "liblock.wasm")
SDIST_GO = "go-src"  # where an sdist keeps the Go sources

# ---------------------------------------------------------------- ELF: the platform tag

# Libraries a manylinux wheel may link against without carrying them (PEP 600 / 599).
MANYLINUX_LIBS = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
    "libresolv.so.2", "libgcc_s.so.1", "libstdc++.so.6", "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
}
ELF_MACHINES = {62: "x86_64", 183: "aarch64"}
GLIBC_FLOOR = (2, 17)


def _elf_sections(data: bytes) -> Tuple[int, List[Tuple[int, int, int, int]]]:
    """(e_machine, [(sh_type, sh_offset, sh_size, sh_link)]) of a 64-bit little-endian ELF."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    machine = struct.unpack_from("<H", data, 18)[0]
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = []
    for i in range(shnum):
        base = shoff + i * shentsize
        _name, sh_type, _flags, _addr, offset, size, link = struct.unpack_from("<IIQQQQI", data, base)
        sections.append((sh_type, offset, size, link))
    return machine, sections


def _cstr(data: bytes, start: int) -> str:
    return data[start:data.index(b"\0", start)].decode()


def elf_needs(path: Path) -> Tuple[str, List[str], Dict[str, List[str]]]:
    """(architecture, DT_NEEDED libraries, {library: versions needed from it})."""
    data = path.read_bytes()
    machine, sections = _elf_sections(data)
    arch = ELF_MACHINES.get(machine)
    if arch is None:
        raise ValueError(f"{path}: ELF machine {machine} has no manylinux tag here")
    needed: List[str] = []
    versions: Dict[str, List[str]] = {}
    for sh_type, offset, size, link in sections:
        strtab = sections[link][1]
        if sh_type == 6:  # SHT_DYNAMIC
            for off in range(offset, offset + size, 16):
                tag, val = struct.unpack_from("<qQ", data, off)
                if tag == 0:
                    break
                if tag == 1:  # DT_NEEDED
                    needed.append(_cstr(data, strtab + val))
        elif sh_type == 0x6FFFFFFE:  # SHT_GNU_verneed
            off = offset
            while True:
                _ver, cnt, file_, aux, nxt = struct.unpack_from("<HHIII", data, off)
                lib = _cstr(data, strtab + file_)
                a = off + aux
                for _ in range(cnt):
                    _hash, _flags, _other, name, anext = struct.unpack_from("<IHHII", data, a)
                    versions.setdefault(lib, []).append(_cstr(data, strtab + name))
                    a += anext
                if not nxt:
                    break
                off += nxt
    return arch, needed, versions


def platform_tag(path: Path) -> str:
    """manylinux_2_XX_<arch> for a shared library, from the newest GLIBC_2.XX it needs."""
    arch, needed, versions = elf_needs(path)
    foreign = [lib for lib in needed if lib not in MANYLINUX_LIBS]
    if foreign:
        raise ValueError(f"{path} needs {', '.join(foreign)}, which a manylinux wheel cannot assume")
    glibc = [tuple(int(x) for x in v[len("GLIBC_"):].split("."))
             for vs in versions.values() for v in vs
             if v.startswith("GLIBC_") and v[len("GLIBC_"):].replace(".", "").isdigit()]
    if not glibc:
        raise ValueError(f"{path} needs no versioned glibc symbol: not a glibc library (musl?)")
    major, minor = max(max(glibc)[:2], GLIBC_FLOOR)
    tag = f"manylinux_{major}_{minor}_{arch}"
    if (major, minor) == (2, 17):  # the legacy alias, for pip < 20.3
        tag += f".manylinux2014_{arch}"
    return tag


# ---------------------------------------------------------------- where the files come from

def _checkout_root() -> Optional[Path]:
    root = HERE.parent.parent
    if (root / "go.mod").is_file() and (root / "capi").is_dir() and (root / "Makefile").is_file():
        return root
    return None


def _go_root() -> Optional[Path]:
    """The Go module to build from: the checkout, or the sdist's go-src/."""
    root = _checkout_root()
    if root is not None:
        return root
    src = HERE / SDIST_GO
    return src if (src / "go.mod").is_file() else None


# Go sources and the files they embed (//go:embed: the engine's Lua scripts).
GO_EXTS = (".go", ".lua")


def _sources(root: Path, dirs: Iterable[str], exts: Tuple[str, ...]) -> Iterable[Path]:
    for d in dirs:
        for p in (root / d).rglob("*"):
            rel = p.relative_to(root).as_posix()
            if (p.is_file() and p.name.endswith(exts) and not p.name.endswith("_test.go")
                    and "/testdata/" not in rel and not rel.startswith(("wasm/host/", "capi/test/"))):
                yield p


def _inputs(root: Path, name: str) -> List[Path]:
    """The sources a file is made from (as the Makefile's rules list them)."""
    common = [root / "go.mod", root / "go.sum", *_sources(root, ["core"], GO_EXTS)]
    if name == "liblock.so":
        return common + list(_sources(root, ["capi"], GO_EXTS + (".c", ".h")))
    return common + list(_sources(root, ["wasm"], GO_EXTS)) + [root / "wasm" / "scripts" / "build.sh"]


def _fresh(built: Path, inputs: List[Path]) -> bool:
    if not built.is_file():
        return False
    newest = max((p.stat().st_mtime for p in inputs if p.is_file()), default=0.0)
    return built.stat().st_mtime >= newest


def _run(cmd: List[str], cwd: Path, env: Optional[Dict[str, str]] = None) -> None:
    print("liblock: " + " ".join(cmd), flush=True)
    try:
        subprocess.run(cmd, cwd=cwd, env=env, check=True)
    except FileNotFoundError as e:
        raise SystemExit(f"liblock: cannot run {cmd[0]}: {e}") from None
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"liblock: {' '.join(cmd)} failed with exit status {e.returncode}") from None


def _go() -> str:
    go = os.environ.get("GO") or shutil.which("go")
    if not go:
        raise SystemExit(
            "liblock: this package bundles liblock.so and liblock.wasm, built from its Go sources, "
            "and no Go toolchain was found (install Go >= the version in go.mod, or set GO). From a "
            "liblock checkout, `make build` first lets the build copy build/liblock.so and "
            "build/liblock.wasm instead; LIBLOCK_NO_BUNDLE=1 builds the package without them.")
    return go


def _build_with_go(root: Path, name: str, out: Path) -> None:
    go = _go()
    env = dict(os.environ)
    if name == "liblock.so":
        env["CGO_ENABLED"] = "1"
        env["CGO_CFLAGS"] = (env.get("CGO_CFLAGS", "-O2 -g") + f" -DLIBLOCK_VERSION={version()}").strip()
        _run([go, "build", "-trimpath", "-tags", "liblock_nootel", "-buildmode=c-shared", "-ldflags=-s -w", "-o", str(out), "./capi"],
             root, env)
        header = out.with_suffix(".h")  # cgo's generated header: not shipped
        if header.exists():
            header.unlink()
        return
    env["GO"] = go
    if shutil.which("wasm-opt"):
        _run(["bash", str(root / "wasm" / "scripts" / "build.sh"), str(out)], root, env)
        return
    print("liblock: WARNING: binaryen's wasm-opt is not installed (apt-get install binaryen): "
          "liblock.wasm is built without its -Oz pass (a little larger, same behaviour)", flush=True)
    env.update(GOOS="wasip1", GOARCH="wasm")
    _run([go, "build", "-trimpath", "-tags", "liblockwasm", "-buildmode=c-shared", "-ldflags=-s -w", "-o", str(out),
          "./wasm/module"], root, env)


def _wasm_only() -> bool:
    return os.environ.get("LIBLOCK_WASM_ONLY", "") not in ("", "0")


def _bundled_files() -> Tuple[str, ...]:
    return ("liblock.wasm",) if _wasm_only() else FILES


def bundle(dest: Path, scratch: Path) -> None:
    """Put liblock.so and liblock.wasm into the package directory ``dest``."""
    root = _go_root()
    checkout = _checkout_root()
    for name in _bundled_files():
        given = os.environ.get("LIBLOCK_SO") if name == "liblock.so" else None
        if given:
            print(f"liblock: bundling {given} (LIBLOCK_SO)", flush=True)
            shutil.copyfile(given, dest / name)
            continue
        if checkout is not None:
            built = checkout / "build" / name
            if _fresh(built, _inputs(checkout, name)):
                print(f"liblock: bundling {built} (up to date with its sources)", flush=True)
                shutil.copyfile(built, dest / name)
                continue
        if root is None:
            raise SystemExit(
                f"liblock: cannot bundle {name}: neither a liblock checkout (with `make build`) nor "
                f"the Go sources of an sdist ({SDIST_GO}/) are here. LIBLOCK_NO_BUNDLE=1 builds the "
                "package without the library files.")
        scratch.mkdir(parents=True, exist_ok=True)
        out = scratch / name
        _build_with_go(root, name, out)
        shutil.copyfile(out, dest / name)


def _no_bundle() -> bool:
    return os.environ.get("LIBLOCK_NO_BUNDLE", "") not in ("", "0")


# ---------------------------------------------------------------- commands

class BuildPy(build_py):
    """build_py, then liblock.so and liblock.wasm into the built package (never into the
    source tree)."""

    def run(self) -> None:
        super().run()
        dest = Path(self.build_lib) / PACKAGE
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "_version.py").write_text(f'VERSION = "{version()}"  # written by setup.py from VERSION\n')
        if _no_bundle():
            return
        with tempfile.TemporaryDirectory(prefix="liblock-go-") as scratch:
            bundle(dest, Path(scratch))


class BdistWheel(bdist_wheel):
    """A wheel carrying liblock.so is platform-specific: py3-none-manylinux_2_XX_<arch>."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not _no_bundle() and not _wasm_only():
            self.root_is_pure = False

    def get_tag(self) -> Tuple[str, str, str]:
        if _no_bundle() or _wasm_only():
            return "py3", "none", "any"
        so = Path(self.get_finalized_command("build_py").build_lib) / PACKAGE / "liblock.so"
        return "py3", "none", platform_tag(so)


class Sdist(sdist):
    """An sdist that carries the Go sources (go-src/), so that building a wheel from it
    builds the library with Go."""

    def make_release_tree(self, base_dir: str, files: List[str]) -> None:
        super().make_release_tree(base_dir, files)
        root = _checkout_root()
        if root is None:
            src = HERE / SDIST_GO
            if not (src / "go.mod").is_file():
                raise SystemExit("liblock: an sdist needs the Go sources: make it from a liblock checkout")
            shutil.copytree(src, Path(base_dir) / SDIST_GO)
            return
        out = Path(base_dir) / SDIST_GO
        picked = {root / "go.mod", root / "go.sum", root / "VERSION", root / "wasm" / "scripts" / "build.sh",
                  *_sources(root, ["core", "capi", "wasm"], GO_EXTS + (".c", ".h"))}
        for p in sorted(picked):
            target = out / p.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, target)


class BundlingDistribution(Distribution):
    """Carrying liblock.so makes the package platform-specific: installed as platlib,
    at the wheel's root (not under .data/purelib)."""

    def has_ext_modules(self) -> bool:
        return not _no_bundle() and not _wasm_only()


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--platform-tag":
    # python setup.py --platform-tag PATH: the wheel platform tag of a liblock.so
    print(platform_tag(Path(sys.argv[2])))
    raise SystemExit(0)

def version() -> str:
    """The release's version: the VERSION file of the checkout, or of the sdist's go-src/."""
    for path in (HERE.parent.parent / "VERSION", HERE / SDIST_GO / "VERSION"):
        if path.is_file():
            return path.read_text().strip()
    raise SystemExit("liblock: no VERSION file (neither a liblock checkout nor an sdist of one)")


setup(distclass=BundlingDistribution, version=version(),
      extras_require={
          "wasm": ["wasmtime==50.0.1"],
          "otel": ["opentelemetry-api>=1.20"],
          "cli": [f"liblock-cli=={version()}"],
      },
      cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel, "sdist": Sdist})
