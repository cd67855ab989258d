// Package hostile is a TCP server that passes for a Redis node through the
// connection handshake (INFO, PING, AUTH, SELECT, CLIENT SETNAME, ROLE) and then
// answers every other command with one misbehaviour: garbage, a reply of
// another type, an endless bulk string, an array nested too deep, an
// endless array, nothing at all, or half a reply and a closed connection.
// Tests put it among real redis-servers to show that such a node fails
// with a clear cause within the node timeout, that the decoder's bounds
// hold, and that the other nodes' answers decide.
//
// The Node and Python suites have twins of it in their own languages
// (bindings/node/test/hostile.test.mjs, bindings/python/tests/test_hostile.py).
//
// Layer: a test kit, beside the library, never under it: only tests import
// it. It imports only the standard library.
package hostile
