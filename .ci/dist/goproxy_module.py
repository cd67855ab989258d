"""A file GOPROXY holding this checkout as github.com/liblock/liblock at vVERSION, so that
`go install github.com/liblock/liblock/core/cmd/liblock@vVERSION` can be tried as a user
runs it (module zip from the committed files, nested modules left out as the go command
leaves them out).

    python .ci/dist/goproxy_module.py ROOT VERSION PROXY_DIR
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

MODULE = "github.com/liblock/liblock"


def main() -> None:
    root, version, proxy = Path(sys.argv[1]), "v" + sys.argv[2], Path(sys.argv[3])
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    names = [n for n in files.decode().split("\0") if n]
    nested = {str(Path(n).parent) for n in names if n.endswith("/go.mod")}
    d = proxy / MODULE / "@v"
    d.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(d / f"{version}.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for n in names:
            if any(n.startswith(m + "/") for m in nested) or "/vendor/" in n:
                continue
            p = root / n
            if p.is_file() and not p.is_symlink():
                z.write(p, f"{MODULE}@{version}/{n}")
    (d / f"{version}.mod").write_bytes((root / "go.mod").read_bytes())
    (d / f"{version}.info").write_text(json.dumps({"Version": version, "Time": "2026-01-01T00:00:00Z"}))
    (d / "list").write_text(version + "\n")


if __name__ == "__main__":
    main()
