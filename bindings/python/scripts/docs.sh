#!/usr/bin/env bash
# make docs, the Python part: the API reference rendered from liblock's docstrings by pdoc
# into build/docs/python (open build/docs/python/index.html). Every warning pdoc gives — a
# docstring it cannot parse, a reference it cannot resolve, a module it cannot import — fails
# the build, so a broken reference is caught like a failing test.
#   bash bindings/python/scripts/docs.sh [OUT_DIR]     (default: build/docs/python)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh" requirements-docs.txt
cd "$ROOT"
OUT="$(realpath -m "${1:-build/docs/python}")"
rm -rf "$OUT"
mkdir -p "$OUT"
# liblock makes some public names on first use (a module __getattr__, so that `import liblock`
# stays cheap); pdoc looks in the module's namespace, so they are made there first.
PYTHONPATH="$ROOT/bindings/python" PYTHONDONTWRITEBYTECODE=1 "$PY" -W error - "$OUT" <<'PY'
import sys
import liblock
for name in liblock.__all__:
    setattr(liblock, name, getattr(liblock, name))
import pdoc
import pdoc.render
pdoc.render.configure(docformat="restructuredtext")
pdoc.pdoc("liblock", output_directory=__import__("pathlib").Path(sys.argv[1]))

# Broken references: every :class:/:meth:/:func:/:data:/:exc:/:attr: role in a public
# docstring must name something that exists, in liblock or in the class it is written in.
import re
import pdoc.doc
ROLE = re.compile(r":(?:class|meth|func|data|exc|attr|obj):`[~!]?([A-Za-z_][\w.]*)`")
def resolves(name, owner):
    for base in ([owner] if owner is not None else []) + [liblock]:
        obj = base
        for part in name.removeprefix("liblock.").split("."):
            nxt = getattr(obj, part, None)
            if nxt is None and isinstance(obj, type) and instance_attr(obj, part):
                nxt = part   # an attribute every instance has (set in __init__, annotated, a slot)
            obj = nxt
            if obj is None:
                break
        else:
            return True
    return False
import inspect
def instance_attr(cls, name):
    if name in getattr(cls, "__annotations__", {}) or name in getattr(cls, "__slots__", ()):
        return True
    try:
        return re.search(rf"self\.{name}\s*[:=]", inspect.getsource(cls)) is not None
    except (OSError, TypeError):
        return False
broken = []
def walk(d, owner=None):
    if isinstance(d, pdoc.doc.Class):
        owner = d.obj
    for m in ROLE.finditer(d.docstring or ""):
        if not resolves(m.group(1), owner):
            broken.append(f"{d.fullname}: {m.group(0)} does not resolve")
    if isinstance(d, (pdoc.doc.Module, pdoc.doc.Class)):
        for member in d.own_members:
            walk(member, d.obj if isinstance(d, pdoc.doc.Class) else owner)
walk(pdoc.doc.Module(liblock))
if broken:
    sys.exit("docs: broken references in docstrings:\n  " + "\n  ".join(broken))
PY
echo "docs: $OUT/index.html"
