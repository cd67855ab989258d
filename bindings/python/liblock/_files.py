"""Where the binding looks for its native files (liblock.so, liblock.wasm)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Tuple


def search_path(env_var: str, name: str) -> List[Tuple[str, Path]]:
    """The places ``name`` is looked for, in order, each with what it is: the path in
    ``env_var`` if set, the repository's ``build/`` when run from a liblock checkout
    (``bindings/python/liblock``), then the copy packaged beside this file."""
    out: List[Tuple[str, Path]] = []
    env = os.environ.get(env_var)
    if env:
        out.append((env_var, Path(env)))
    here = Path(__file__).resolve().parent
    if here.parent.name == "python" and here.parents[1].name == "bindings":
        out.append(("repository build", here.parents[2] / "build" / name))
    out.append(("packaged copy", here / name))
    return out


def version() -> str:
    """``liblock.__version__``: _version.py in a built package, else the VERSION file of
    the liblock checkout this copy runs from."""
    try:
        from ._version import VERSION  # type: ignore[import-not-found,unused-ignore]
        return str(VERSION)
    except ImportError:
        pass
    here = Path(__file__).resolve().parent
    repo = here.parents[2] / "VERSION" if len(here.parents) > 2 else None
    if repo is not None and repo.is_file():
        return repo.read_text().strip()
    return "0+unknown"
