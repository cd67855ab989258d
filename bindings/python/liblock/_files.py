"""Where the binding looks for its native files (liblock.so, liblock.wasm)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Tuple


def search_path(env_var: str, name: str) -> List[Tuple[str, Path]]:
    """Where ``name`` is looked for, in order: ``env_var``'s path, a liblock checkout's
    ``build/``, the copy packaged beside this file."""
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
    """``liblock.__version__``: a built package's _version.py, else the checkout's VERSION."""
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
