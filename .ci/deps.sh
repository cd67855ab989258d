#!/usr/bin/env bash
# Installs what liblock's build and tests need and a fresh machine may lack.
# Idempotent: does nothing when everything is present.
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
# redis-sentinel: the Sentinel deployments of core/testkit/redistest (sentinel.go).
command -v redis-sentinel >/dev/null 2>&1 || need+=(redis-sentinel)
command -v wasm-opt >/dev/null 2>&1 || need+=(binaryen)   # wasm-opt, for build/liblock.wasm
command -v openssl >/dev/null 2>&1 || need+=(openssl)     # self-signed certificates for the TLS tests
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)  # bindings/java
command -v mvn >/dev/null 2>&1 || need+=(maven)                      # bindings/java's build
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
cmd="apt-get update && apt-get install -y ${need[*]}"
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "liblock: missing ${need[*]}; install with: sudo $cmd" >&2
  exit 1
fi
echo "liblock: installing ${need[*]} ($cmd)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" >/dev/null
# The package may start a system-wide server on 6379; tests never use it.
command -v redis-server >/dev/null
command -v redis-sentinel >/dev/null
command -v wasm-opt >/dev/null
command -v openssl >/dev/null
command -v javac >/dev/null
command -v mvn >/dev/null
