"""No import cycle in the bindings, checked by `make test-docs`.

The graphs checked:

- Python: the liblock package (bindings/python/liblock). Every import of a sibling module
  counts, wherever it is written: at the top, inside a function, under `if TYPE_CHECKING:`.
  A function-local import defers a cycle to run time; it does not remove it.
- Node: the require/import graph of bindings/node (index.js, index.mjs, lib/*.js), static
  and lazy (`require` inside a function, `import()`), relative paths only.
- Java: bindings/java/src/main/java at the package level (a class-level cycle inside one
  package is how Java is written; across packages it would tie two layers together).
- Go needs no check: its compiler refuses an import cycle between packages.

For each graph it prints the layering: layer 0 imports nothing of its own package, layer n
imports only from layers below n. Exit 1 on a cycle, naming the modules on it.

`--self-test` runs the same checks on small temporary trees, with and without a cycle, and
fails unless each cycle is found and each acyclic tree passes (the checker's negative control).
"""

import ast
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- graphs -------------------------------------------------------------------------------

def python_graph(pkg_dir):
    """{module: {module it imports}} for the package in pkg_dir ('__init__' is the package)."""
    mods = {f[:-3] for f in os.listdir(pkg_dir) if f.endswith(".py")}
    pkg = os.path.basename(os.path.normpath(pkg_dir))
    graph = {}
    for mod in sorted(mods):
        with open(os.path.join(pkg_dir, mod + ".py"), encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=mod + ".py")
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 or (node.level == 0 and node.module and
                                       node.module.split(".")[0] == pkg):
                    sub = node.module if node.level == 1 else node.module.partition(".")[2]
                    if sub:                                  # from .x import y
                        deps.add(sub.split(".")[0])
                    else:                                    # from . import x, y
                        for alias in node.names:
                            deps.add(alias.name if alias.name in mods else "__init__")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] == pkg:
                        deps.add(parts[1] if len(parts) > 1 and parts[1] in mods else "__init__")
        deps.discard(mod)
        graph[mod] = {d for d in deps if d in mods}
    return graph


JS_DEP = re.compile(r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|^\s*import\s+)(['"])(\.{1,2}/[^'"]+)\1""",
                    re.M)


def _strip_js_comments(src):
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    return re.sub(r"(^|[^:'\"\\])//[^\n]*", r"\1", src)


def node_graph(node_dir, files):
    """{file: {file it requires}} over the given files (paths relative to node_dir)."""
    known = set(files)
    graph = {}
    for rel in files:
        with open(os.path.join(node_dir, rel), encoding="utf-8") as f:
            src = _strip_js_comments(f.read())
        deps = set()
        for m in JS_DEP.finditer(src):
            target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(2)))
            for cand in (target, target + ".js", target + ".mjs", os.path.join(target, "index.js")):
                if cand in known:
                    deps.add(cand)
                    break
        deps.discard(rel)
        graph[rel] = deps
    return graph


def node_files(node_dir):
    files = [f for f in ("index.js", "index.mjs") if os.path.exists(os.path.join(node_dir, f))]
    lib = os.path.join(node_dir, "lib")
    if os.path.isdir(lib):
        files += sorted(os.path.join("lib", f) for f in os.listdir(lib) if f.endswith(".js"))
    return files


JAVA_PKG = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)
JAVA_IMPORT = re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+)(?:\.\*)?\s*;", re.M)


def java_graph(src_dir):
    """{package: {package it imports}} over the packages declared under src_dir."""
    units = []
    for dirpath, _, names in os.walk(src_dir):
        for n in sorted(names):
            if n.endswith(".java"):
                with open(os.path.join(dirpath, n), encoding="utf-8") as f:
                    src = f.read()
                m = JAVA_PKG.search(src)
                units.append((m.group(1) if m else "", JAVA_IMPORT.findall(src)))
    pkgs = {p for p, _ in units}
    graph = {p: set() for p in pkgs}
    for pkg, imports in units:
        for imp in imports:
            # the longest declared package that prefixes the import (a class or the package itself)
            owner = max((p for p in pkgs if imp == p or imp.startswith(p + ".")), key=len, default=None)
            if owner and owner != pkg:
                graph[pkg].add(owner)
    return graph


# --- cycles and layers ------------------------------------------------------------------

def cycles(graph):
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def cycle_path(graph, comp):
    """One cycle through comp's first node, as a list that starts and ends with it."""
    start, members = comp[0], set(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path[::-1] + [start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def layers(graph):
    """[[nodes of layer 0], [layer 1], ...]; call only on an acyclic graph."""
    level = {}

    def depth(v):
        if v not in level:
            level[v] = 1 + max((depth(w) for w in graph[v]), default=-1)
        return level[v]

    for v in graph:
        depth(v)
    out = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for v in sorted(level):
        out[level[v]].append(v)
    return out


def check(name, graph, out=print):
    """Print graph's layering or its cycles; True when acyclic."""
    found = cycles(graph)
    if found:
        for comp in found:
            out(f"{name}: import cycle: {' -> '.join(cycle_path(graph, comp))} "
                f"(strongly connected: {', '.join(comp)})")
        return False
    out(f"{name}: no import cycle; {len(graph)} nodes in {len(layers(graph))} layers (layer n imports only from layers below n):")
    for i, layer in enumerate(layers(graph)):
        out(f"  {i}: {' '.join(layer)}")
    return True


def check_repo(root, out=print):
    ok = True
    py = os.path.join(root, "bindings", "python", "liblock")
    if os.path.isdir(py):
        ok &= check("python liblock", python_graph(py), out)
    nd = os.path.join(root, "bindings", "node")
    if os.path.isdir(nd):
        ok &= check("node", node_graph(nd, node_files(nd)), out)
    jv = os.path.join(root, "bindings", "java", "src", "main", "java")
    if os.path.isdir(jv):
        ok &= check("java packages", java_graph(jv), out)
    return ok


# --- the checker's own negative control ---------------------------------------------------

def _write(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def self_test():
    """Each fixture: (files, expected acyclic?). Cycles hidden in every way the real code hid one."""
    py = "bindings/python/liblock/"
    nd = "bindings/node/"
    jv = "bindings/java/src/main/java/"
    fixtures = {
        "acyclic tree": ({
            py + "__init__.py": "from ._client import Client\n",
            py + "_client.py": "from . import _host\nfrom ._args import ms\n",
            py + "_host.py": "from ._args import ms\ndef f():\n    from . import _args\n",
            py + "_args.py": "import os\n",
            nd + "index.js": "const h = require('./lib/host');\n// require('./index')\n",
            nd + "index.mjs": "import x from './index.js';\n",
            nd + "lib/host.js": "const p = require('./protocol');\n",
            nd + "lib/protocol.js": "const fs = require('node:fs');\n",
            jv + "a/b/A.java": "package a.b;\nimport a.c.C;\n",
            jv + "a/c/C.java": "package a.c;\nimport java.util.List;\n",
        }, True),
        "python top-level cycle": ({
            py + "__init__.py": "", py + "_a.py": "from ._b import x\n", py + "_b.py": "from . import _a\n",
        }, False),
        "python function-local cycle": ({
            py + "__init__.py": "",
            py + "_client.py": "def f():\n    from ._election import g\n",
            py + "_election.py": "def g():\n    from ._client import _ms\n",
        }, False),
        "python three-module cycle under TYPE_CHECKING": ({
            py + "__init__.py": "",
            py + "_host.py": "from . import _epoll\n",
            py + "_epoll.py": "from ._driver import d\n",
            py + "_driver.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._host import Host\n",
        }, False),
        "python cycle through the package": ({
            py + "__init__.py": "from ._a import x\n", py + "_a.py": "import liblock\n",
        }, False),
        "node lazy require cycle": ({
            nd + "index.js": "const h = require('./lib/host');\n",
            nd + "lib/host.js": "function f() { return require('../index'); }\n",
        }, False),
        "node esm cycle": ({
            nd + "index.mjs": "import x from './lib/a.js';\n",
            nd + "lib/a.js": "const m = import('../index.mjs');\n",
        }, False),
        "java package cycle": ({
            jv + "a/b/A.java": "package a.b;\nimport a.c.C;\n",
            jv + "a/c/C.java": "package a.c;\nimport static a.b.A.f;\n",
        }, False),
    }
    failures = 0
    for name, (files, acyclic) in fixtures.items():
        with tempfile.TemporaryDirectory() as tmp:
            _write(tmp, files)
            lines = []
            got = check_repo(tmp, lines.append)
        if got != acyclic:
            failures += 1
            print(f"self-test FAIL: {name}: expected {'no cycle' if acyclic else 'a cycle'}, got:")
            for line in lines:
                print("  " + line)
        else:
            print(f"self-test ok: {name}" + ("" if acyclic else f": {next(l for l in lines if 'cycle:' in l)}"))
    return failures == 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return 0 if self_test() else 1
    if argv[1:]:
        print("usage: check-cycles.py [--self-test]", file=sys.stderr)
        return 2
    return 0 if check_repo(ROOT) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
