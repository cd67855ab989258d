"""Runs every program snippet of the READMEs and docs/*.md against real redis-servers.

Run by .ci/snippets.sh (`make test-snippets`) under build/redisnodes, which puts
the three nodes' URLs in LIBLOCK_NODES. A fenced block is a program when the line
just before its fence is a marker:

    <!-- snippet: KIND -->

KIND is how it runs:

    go              a main package: gofmt-clean, go vet, go build inside the module, run
    c               a C program: cc -std=c99 -Wall -Wextra -Werror against build/liblock.h,
                    linked with build/liblock.so, run
    c-declarations  declarations that must agree with build/liblock.h (cc -fsyntax-only)
    python          python with bindings/python importable (the Python tests' venv)
    js              node, CommonJS (require('liblock') is bindings/node)
    mjs             node, an ES module (import ... from 'liblock'; top-level await)
    ts              tsc (ES module, lib esnext.disposable), then node
    none: REASON    not a program (the shape of a value): listed, not run

Every ```go, ```c, ```python, ```js or ```ts block must carry a marker (an
unmarked one fails), so that no README code goes untested by accident; other
blocks (```sh, ```json, plain ```) are prose and never run. The node URLs
redis://127.0.0.1:7001 .. 7003 in a snippet are rewritten to the nodes started
for the run, which are flushed before each snippet. One line per snippet
(file:line, kind, ok/FAILED), then "N passed, M failed"; exit 1 on any failure.

Usage: snippets.py [FILE.md ...]   (default: the READMEs below and docs/*.md, relative to the root)
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READMES = ["README.md", "bindings/node/README.md", "bindings/python/README.md",
           "capi/README.md", "wasm/README.md"]


def default_files():
    """The READMEs above, then every page of docs/ (sorted)."""
    docs = os.path.join(ROOT, "docs")
    pages = sorted(f"docs/{f}" for f in os.listdir(docs) if f.endswith(".md")) if os.path.isdir(docs) else []
    return READMES + pages
WORK = os.path.join(ROOT, "build", "_snippets")   # "_": go's ./... patterns skip it
BUILD = os.path.join(ROOT, "build")
NODE_DIR = os.path.join(ROOT, "bindings", "node")
PY = os.environ.get("SNIPPETS_PY", sys.executable)
TIMEOUT = 120
GO = os.environ.get("GO", "go")

# Fence languages whose blocks must be marked, and the kinds allowed for each.
PROGRAM_LANGS = {
    "go": {"go"},
    "c": {"c", "c-declarations"},
    "python": {"python"}, "py": {"python"},
    "js": {"js", "mjs", "ts"}, "javascript": {"js", "mjs", "ts"},
    "ts": {"ts"}, "typescript": {"ts"},
}
MARKER = re.compile(r"^<!--\s*snippet:\s*([\w-]+)(?::\s*(.*?))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")


class Snippet:
    def __init__(self, path, line, lang, kind, note, text):
        self.path, self.line, self.lang, self.kind, self.note, self.text = path, line, lang, kind, note, text

    @property
    def label(self):
        return f"{self.path}:{self.line}"

    @property
    def slug(self):
        return re.sub(r"[^A-Za-z0-9]+", "_", f"{self.path}_{self.line}").strip("_")


def extract(path, label):
    """The fenced blocks of one markdown file: (snippets, errors)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    snippets, errors = [], []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1   # the closing fence
        marker = MARKER.match(lines[start - 1].strip()) if start > 0 else None
        if marker is None:
            if lang in PROGRAM_LANGS:
                errors.append((f"{label}:{start + 1}", lang,
                               f"a ```{lang} block without a <!-- snippet: KIND --> marker on the line before it"))
            continue
        kind, note = marker.group(1), marker.group(2) or ""
        allowed = PROGRAM_LANGS.get(lang, set())
        if kind != "none" and kind not in allowed:
            errors.append((f"{label}:{start + 1}", lang,
                           f"marker kind {kind!r} does not fit a ```{lang} block (one of {sorted(allowed)})"))
            continue
        snippets.append(Snippet(label, start + 1, lang, kind, note, "\n".join(body) + "\n"))
    return snippets, errors


def node_urls():
    urls = [u for u in os.environ.get("LIBLOCK_NODES", "").split(",") if u]
    if len(urls) < 3:
        sys.exit("snippets: LIBLOCK_NODES must name 3 nodes (run under build/redisnodes -n 3)")
    return urls


def rewrite(text, urls):
    """127.0.0.1:7001..7003 -> the nodes of this run (URLs and bare addresses)."""
    for i, url in enumerate(urls[:3]):
        addr = url.split("://", 1)[1].rstrip("/")
        text = text.replace(f"127.0.0.1:{7001 + i}", addr)
    return text


def flushall(urls):
    for url in urls:
        host, port = url.split("://", 1)[1].rstrip("/").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(b"*1\r\n$8\r\nFLUSHALL\r\n")
            if not s.recv(64).startswith(b"+OK"):
                raise RuntimeError(f"FLUSHALL on {url} failed")


def run(cmd, cwd=ROOT, env=None, timeout=TIMEOUT):
    """(ok, output) of one command."""
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return False, f"$ {' '.join(cmd)}\n{out}\n(timed out after {timeout} s)"
    out = f"$ {' '.join(cmd)}\n{p.stdout}"
    if p.returncode != 0:
        return False, out + f"(exit status {p.returncode})"
    return True, out


def steps(sn, d):
    """The commands that build and run one snippet in directory d."""
    cc = os.environ.get("CC", "cc")
    if sn.kind == "go":
        src = os.path.join(d, "main.go")
        exe = os.path.join(d, "snippet")
        gofmt = shutil.which("gofmt") or os.path.join(
            subprocess.run([GO, "env", "GOROOT"], stdout=subprocess.PIPE, text=True).stdout.strip(), "bin", "gofmt")
        fmt_check = ["sh", "-c", 'd=$("$0" -d "$1" 2>&1); [ -z "$d" ] || { echo "not gofmt-ed:"; echo "$d"; exit 1; }',
                     gofmt, src]
        return {"main.go": sn.text}, [fmt_check, [GO, "vet", src], [GO, "build", "-o", exe, src], [exe]]
    if sn.kind == "c":
        exe = os.path.join(d, "snippet")
        return {"snippet.c": sn.text}, [
            [cc, "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{BUILD}", os.path.join(d, "snippet.c"),
             f"-L{BUILD}", "-llock", f"-Wl,-rpath,{BUILD}", "-o", exe], [exe]]
    if sn.kind == "c-declarations":
        return {"decls.c": sn.text}, [
            [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{BUILD}",
             "-include", "liblock.h", os.path.join(d, "decls.c")]]
    if sn.kind == "python":
        return {"snippet.py": sn.text}, [[PY, os.path.join(d, "snippet.py")]]
    if sn.kind == "js":
        return {"snippet.cjs": sn.text}, [["node", os.path.join(d, "snippet.cjs")]]
    if sn.kind == "mjs":
        return {"snippet.mjs": sn.text}, [["node", os.path.join(d, "snippet.mjs")]]
    if sn.kind == "ts":
        tsc = os.path.join(NODE_DIR, "node_modules", ".bin", "tsc")
        return {"snippet.mts": sn.text}, [
            [tsc, "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext",
             "--lib", "es2022,esnext.disposable", "--types", "node",
             "--typeRoots", os.path.join(NODE_DIR, "node_modules", "@types"),
             "--outDir", d, os.path.join(d, "snippet.mts")],
            ["node", os.path.join(d, "snippet.mjs")]]
    raise ValueError(sn.kind)


def run_snippet(sn, urls, env):
    d = os.path.join(WORK, sn.slug)
    os.makedirs(d, exist_ok=True)
    files, cmds = steps(sn, d)
    for name, text in files.items():
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(rewrite(text, urls))
    flushall(urls)
    log = []
    for cmd in cmds:
        ok, out = run(cmd, env=env)
        log.append(out)
        if not ok:
            return False, "\n".join(log)
    return True, "\n".join(log)


def main(argv):
    urls = node_urls()
    os.makedirs(os.path.join(WORK, "node_modules"), exist_ok=True)
    link = os.path.join(WORK, "node_modules", "liblock")   # require('liblock') / import 'liblock'
    if not os.path.islink(link):
        os.symlink(NODE_DIR, link)
    env = dict(os.environ)
    env["NODE_PATH"] = os.path.join(NODE_DIR, "node_modules")   # a CommonJS snippet's require('koffi')
    env["PYTHONPATH"] = os.path.join(ROOT, "bindings", "python")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("LIBLOCK_PATH", os.path.join(BUILD, "liblock.so"))

    files = argv or default_files()
    passed = failed = 0
    for path in files:
        full = path if os.path.isabs(path) else os.path.join(ROOT, path)
        label = os.path.relpath(full, ROOT) if not os.path.isabs(path) else path
        snippets, errors = extract(full, label)
        for where, lang, why in errors:
            failed += 1
            print(f"{where} {lang} FAILED ({why})", flush=True)
        for sn in snippets:
            if sn.kind == "none":
                print(f"{sn.label} {sn.lang} not a program ({sn.note or 'no reason given'}): not run", flush=True)
                continue
            t0 = time.monotonic()
            ok, out = run_snippet(sn, urls, env)
            took = time.monotonic() - t0
            if ok:
                passed += 1
                print(f"{sn.label} {sn.kind} ok ({took:.1f} s)", flush=True)
            else:
                failed += 1
                print(f"{sn.label} {sn.kind} FAILED ({took:.1f} s)", flush=True)
                tail = out.rstrip("\n").split("\n")[-40:]
                print("\n".join("    " + l for l in tail), flush=True)
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
