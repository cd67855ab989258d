"""Where the engine adapters look for liblock.so and liblock.wasm, and what they check."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List, Optional, Tuple


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


def check_versions(path: Any, abi: Optional[int] = None, proto: Optional[int] = None) -> None:
    """Refuse an engine file of another ABI version or engine protocol than the spec's."""
    from ._errors import LibraryError
    from ._proto_gen import ABI_VERSION, PROTOCOL_VERSION
    for what, got, want in (("ABI version", abi, ABI_VERSION), ("engine protocol", proto, PROTOCOL_VERSION)):
        if got is not None and got != want:
            raise LibraryError(f"{path} has {what} {got}, but this liblock binding needs {what.split()[-1]} "
                               f"{want}; rebuild it (`make build`) or install a matching binding")
