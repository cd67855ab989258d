"""The liblock-cli wheel: the static liblock command as a console script, as ruff ships
its binary: the file goes to the wheel's .data/scripts/, which pip installs into the
environment's bin/ with its exec bit. A static binary needs no libc of the system, so one
wheel is tagged for glibc and musl machines of its architecture alike.

    python .ci/dist/cli_wheel.py BINARY ARCH VERSION OUT_DIR   (ARCH: x86_64 | aarch64)
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path


def main() -> None:
    binary, arch, version, out = Path(sys.argv[1]), sys.argv[2], sys.argv[3], Path(sys.argv[4])
    licence = (Path(__file__).resolve().parents[2] / "LICENSE").read_bytes()
    tag = f"py3-none-manylinux_2_17_{arch}.manylinux2014_{arch}.musllinux_1_1_{arch}"
    name = "liblock_cli"
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}-{version}.data/scripts/liblock": (binary.read_bytes(), 0o755),
        f"{info}/METADATA": ((
            "Metadata-Version: 2.1\n"
            "Name: liblock-cli\n"
            f"Version: {version}\n"
            "Summary: The liblock command (run, elect, inspect, release, doctor): a Redlock lock "
            "for shell scripts, cron lines and services, as one static binary\n"
            "License: MIT\n"
            "License-File: LICENSE\n"
            "Requires-Python: >=3.8\n").encode(), 0o644),
        f"{info}/LICENSE": (licence, 0o644),
        f"{info}/WHEEL": ((
            "Wheel-Version: 1.0\n"
            "Generator: liblock .ci/dist/cli_wheel.py\n"
            "Root-Is-Purelib: false\n"
            + "".join(f"Tag: py3-none-{t}\n" for t in tag.split("-")[2].split("."))).encode(), 0o644),
    }
    record = []
    for path, (data, _mode) in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = (("\n".join(record) + "\n").encode(), 0o644)
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for path, (data, mode) in files.items():
            zi = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    print(wheel)


if __name__ == "__main__":
    main()
