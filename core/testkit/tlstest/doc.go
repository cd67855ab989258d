// Package tlstest makes the certificates of liblock's TLS tests (a private
// CA, an unrelated CA, server certificates for 127.0.0.1 and for
// redis.internal, a client certificate: mkcerts.sh, which the Node and
// Python tests run too) and starts TLS-only redis-servers on them.
//
// Layer: a test kit, beside the library, never under it: only tests import
// it. It imports core, the other test kits (poll, redistest) and testify.
package tlstest
