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
