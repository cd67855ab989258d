// Package faultproxy is a TCP proxy in front of redis-server processes that
// fails a node at an exact point of the protocol: when the bytes a client
// sends to a node contain one of the given patterns, the proxy signals that
// node's process (SIGSTOP or SIGKILL) before it forwards those bytes. The
// node thus freezes or dies with the matching command on its way to it.
//
// Its use here is the second round of a fenced acquire: with the patterns of
// FencePatterns, the node freezes or dies as the fence script (fence.lua,
// sent as EVALSHA or as EVAL with its body) reaches it, after it granted the
// first round (acquire_fence.lua, which does not match).
//
// One Proxy serves several nodes (routes), one listener each, and shares one
// budget of faults among them: with Faults 1, only the first node that is
// sent a matching command is signalled, whichever it is. A test need not
// guess which nodes the client picks for a round; it asks Fired afterwards.
//
// Command faultproxy (./cmd/faultproxy, built by make to build/faultproxy)
// offers the same to tests in other languages.
//
// Layer: a test kit, beside the library, never under it: only tests and its
// command import it. It imports only the standard library.
package faultproxy
