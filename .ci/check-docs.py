"""The documentation's hygiene, checked by `make test-docs` (.ci/check-docs.sh).

1. No tracked file is larger than 1 MB unless .ci/large-files.txt lists it (a fixture).
2. Every relative link in README.md, docs/*.md and the package READMEs resolves: the file
   (or directory) exists, and an anchor (#section) names a heading of the target page. The
   package READMEs (what npm and PyPI show) link into the repository by absolute URL
   (https://github.com/liblock/liblock/blob/main/PATH): those are checked as PATH.
3. No dated line (20YY-MM-DD) and no reference to this project's issues (#NN) in those
   files. A peer's issue is cited fully qualified (owner/repo#NN), which is allowed. One
   line is exempt: the benchmarks page's measurement date, the line that starts with
   "**Measured:**" in docs/benchmarks.md (the date of the run its tables come from).
4. The LICENSE copies shipped in the packages are the root LICENSE.
5. Every folder says its layer and what it may import, in a paragraph that starts with
   "Layer:": every Go package in its doc.go, every folder of LAYER_READMES in its README.md
   (whose links and dates are checked as in 2 and 3).
6. No tracked source file (code, scripts, tests) names one of this project's issues (the
   word issue and its number) or carries a date, except the test data listed in CODE_DATES (a resource
   name, a fixed module time). Comments say why the code is as it is; history is git's.

Exit 1 with one line per problem (file:line: what).
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 1_000_000
DATE = re.compile(r"20[0-9]{2}-[01][0-9]-[0-3][0-9]")
ISSUE = re.compile(r"(?<![\w/.-])#[0-9]{1,4}\b|\b[Ii]ssues? [0-9]+\b")   # #12, issue 12; not owner/repo#12
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")
EXEMPT = {("docs/benchmarks.md", "**Measured:**")}
REPO_BLOB = "https://github.com/liblock/liblock/blob/main/"   # checked as the path after it
LICENSE_COPIES = ["bindings/node/LICENSE", "bindings/python/LICENSE"]
# The folders without Go whose README.md says their layer (a Go package's doc.go does).
LAYER_READMES = [".ci", ".ci/dist", "bindings/interop/children", "bindings/java", "bindings/node/bench",
                 "bindings/node/cli", "bindings/node/lib", "bindings/node/scripts", "bindings/node/test",
                 "bindings/python/liblock", "bindings/python/scripts", "bindings/python/tests", "capi/bench", "capi/test",
                 "core/hostabi/spec", "node-example", "python-example", "wasm", "wasm/scripts"]
CODE_SUFFIXES = (".go", ".js", ".mjs", ".cjs", ".ts", ".py", ".c", ".h", ".java", ".sh", ".lua", ".toml", ".json")
CODE_ISSUE = re.compile(r"\b[Ii]ssues? ?#?[0-9]+\b|\b[Ii]ssue_?[0-9]+")
CODE_DATES = {".ci/dist/goproxy_module.py", "node-example/02_cron_once.js", "python-example/02_nightly_report.py"}


def doc_files():
    files = ["README.md", "bindings/node/README.md", "bindings/python/README.md"]
    docs = os.path.join(ROOT, "docs")
    if os.path.isdir(docs):
        files += sorted(f"docs/{f}" for f in os.listdir(docs) if f.endswith(".md"))
    files += [f"{d}/README.md" for d in LAYER_READMES]
    return [f for f in files if os.path.isfile(os.path.join(ROOT, f))]


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    h = re.sub(r"`|\*\*|__", "", heading.strip().lower())
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    h = re.sub(r"[^\w\- ]", "", h, flags=re.UNICODE)
    return h.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, seen, fence = set(), {}, False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.lstrip().startswith(("```", "~~~")):
                    fence = not fence
                m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    s = slug(m.group(1))
                    n = seen.get(s, 0)
                    seen[s] = n + 1
                    found.add(s if n == 0 else f"{s}-{n}")
        cache[path] = found
    return cache[path]


def check_sizes(problems):
    allowed = set()
    listed = os.path.join(ROOT, ".ci", "large-files.txt")
    if os.path.isfile(listed):
        with open(listed, encoding="utf-8") as f:
            allowed = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, stdout=subprocess.PIPE, check=True).stdout
    for name in filter(None, out.decode().split("\0")):
        p = os.path.join(ROOT, name)
        if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) > LIMIT and name not in allowed:
            problems.append(f"{name}: {os.path.getsize(p)} bytes, over 1 MB (a fixture? list it in .ci/large-files.txt)")


def check_doc(rel, problems):
    path = os.path.join(ROOT, rel)
    fence = False
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        exempt = any(rel == f and line.startswith(p) for f, p in EXEMPT)
        if DATE.search(line) and not exempt:
            problems.append(f"{rel}:{i}: a dated line ({DATE.search(line).group(0)}): history belongs in git and CHANGELOG.md")
        if not fence and ISSUE.search(line):
            problems.append(f"{rel}:{i}: an issue reference ({ISSUE.search(line).group(0)}): say what and why instead")
        if fence:
            continue
        for m in LINK.finditer(line):
            target = m.group(1) or m.group(2)
            if target.startswith(REPO_BLOB):   # a package README's link into this repository
                target = os.path.relpath(os.path.join(ROOT, target[len(REPO_BLOB):]), os.path.dirname(path))
            elif re.match(r"^[a-z][a-z0-9+.-]*:", target):   # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                problems.append(f"{rel}:{i}: link to {target}: {os.path.relpath(dest, ROOT)} does not exist")
                continue
            if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append(f"{rel}:{i}: link to {target}: no heading #{anchor} in {os.path.relpath(dest, ROOT)}")


def check_licenses(problems):
    with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
        root = f.read()
    for copy in LICENSE_COPIES:
        p = os.path.join(ROOT, copy)
        if not os.path.isfile(p):
            problems.append(f"{copy}: missing (the package would ship without its licence)")
        else:
            with open(p, "rb") as f:
                if f.read() != root:
                    problems.append(f"{copy}: differs from LICENSE")


def check_layers(problems):
    out = subprocess.run(["git", "ls-files", "-z", "--", "*.go"], cwd=ROOT, stdout=subprocess.PIPE, check=True).stdout
    for d in sorted({os.path.dirname(n) for n in filter(None, out.decode().split("\0"))}):
        doc = os.path.join(ROOT, d, "doc.go")
        if not os.path.isfile(doc):
            problems.append(f"{d}: a Go package without doc.go (its package comment, with a Layer: paragraph)")
            continue
        with open(doc, encoding="utf-8") as f:
            if "\n// Layer: " not in "\n" + f.read():
                problems.append(f"{d}/doc.go: no paragraph starting 'Layer:' (its layer and what it may import)")
    for d in LAYER_READMES:
        readme = os.path.join(ROOT, d, "README.md")
        if not os.path.isfile(readme):
            problems.append(f"{d}/README.md: missing (its layer and what it may import)")
            continue
        with open(readme, encoding="utf-8") as f:
            if "Layer:" not in f.read():
                problems.append(f"{d}/README.md: no 'Layer:' (its layer and what it may import)")


def check_code(problems):
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in tracked.decode().split("\0"):
        if not rel.endswith(CODE_SUFFIXES) or rel.endswith("package-lock.json"):
            continue
        path = os.path.join(ROOT, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for i, line in enumerate(f, 1):
                m = CODE_ISSUE.search(line)
                if m and not re.search(r"[\w.-]+/[\w.-]+#[0-9]+", line):
                    problems.append(f"{rel}:{i}: an issue reference ({m.group(0)}): say what and why instead")
                m = DATE.search(line)
                if m and rel not in CODE_DATES:
                    problems.append(f"{rel}:{i}: a dated line ({m.group(0)}): history belongs in git and CHANGELOG.md")


def main(argv):
    problems = []
    check_sizes(problems)
    files = argv or doc_files()
    for rel in files:
        check_doc(rel, problems)
    check_licenses(problems)
    if not argv:
        check_layers(problems)
        check_code(problems)
    for p in problems:
        print(p)
    print(f"check-docs: {len(files)} files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
