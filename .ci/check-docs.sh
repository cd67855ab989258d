#!/usr/bin/env bash
# make test-docs: the documentation's hygiene (see .ci/check-docs.py): no tracked file over
# 1 MB unless listed in .ci/large-files.txt, every relative link of README.md, docs/ and the
# package READMEs resolves (anchors included), no dated line or issue reference in them, and
# the packages' LICENSE copies equal the root LICENSE, and every folder says its layer (a Go
# package in its doc.go, the other folders of the list in their README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 .ci/check-docs.py "$@"
