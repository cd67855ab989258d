// Package hostabitest is a minimal engine host for tests: it carries out an
// engine's actions over net.Conn (no TLS) and one timer, the way every
// host of PROTOCOL.md does, and waits for operations to end.
//
// Layer: a test kit, beside the library, never under it: only tests import
// it. It imports core, core/engine and testify.
package hostabitest
