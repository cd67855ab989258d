#!/usr/bin/env bash
# Installs bindings/node's locked dependencies (npm ci) unless the same
# package-lock.json is installed already, under a lock: make test's lanes run
# Node's suites, the wasm suites, the cross-runtime suites and the packaging
# tests at the same time, and an `npm ci` deletes node_modules while another
# suite loads from it.
set -euo pipefail
pkg="$(cd "$(dirname "$0")/.." && pwd)"
lockdir="$pkg/../../build"
mkdir -p "$lockdir"
(
  flock 9
  stamp="$pkg/node_modules/.liblock-npm-ci-$(cksum < "$pkg/package-lock.json" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ]; then
    (cd "$pkg" && npm ci --include=dev --no-audit --no-fund --loglevel=error)
    touch "$stamp"
  fi
) 9>"$lockdir/.npm-ci.lock"
