// Package remote runs locktest's scenarios against a binding in another
// runtime (Node, Python): a Factory whose Clients and Locks are proxies for
// a child process that drives the binding, speaking JSON lines on its stdin
// and stdout. The children are bindings/interop/children/suite.js and
// suite.py; the protocol, one object a line:
//
// Requests (Go → child), each with a fresh "id"; durations are milliseconds
// (a JSON number, fractional where the Go duration is):
//
//	{"id":1,"op":"client","nodes":[...],"nodeTimeout":100,"keyPrefix":"","owner":"","driftFactor":0.01}
//	  → {"id":1,"client":C}
//	{"id":2,"op":"acquire","client":C,"resource":"r","ttl":1000,"wait":0,"autoExtend":false,"fence":false,"token":""}
//	  → {"id":2,"lock":L,"key":...,"token":...,"ttl":ms,"validity":ms,"fence":n,"reentered":false}
//	{"id":3,"op":"extend","lock":L,"ttl":1000}   → {"id":3,"validity":ms}
//	{"id":4,"op":"release","lock":L}             → {"id":4}
//	{"id":5,"op":"validity","lock":L}            → {"id":5,"validity":ms}
//	{"id":6,"op":"inspect","client":C,"resource":"r"}
//	  → {"id":6,"held":...,"validity":ms|null,"owner":...,"nodes":[{"node","addr","locked","holder","owner","ttl","error"}]}
//	{"id":7,"op":"close","client":C}             → {"id":7}
//	{"op":"cancel","id":2}                       (no answer: the acquire 2 answers CANCELED)
//
// The primitives beyond the mutex (locktest's optional capabilities):
//
//	acquire with "permits":N (a semaphore's permit; the answer may carry
//	  "slot"), "mode":"read"|"write", or "resources":[...] instead of
//	  "resource" (a multi-resource lock)
//	inspect with "permits":N → adds "holders":[{"slot","owner","validity"}]
//	{"id":8,"op":"campaign","client":C,"name":"e","value":"v","ttl":1000,"wait":0}
//	  ("wait" left out: until it leads) → {"id":8,"lock":L,"term":n,"value":"v"};
//	  L is a lock: "release" resigns it
//	{"id":9,"op":"observe","client":C,"name":"e","observer":O} → {"id":9}, then
//	  {"event":"leader","observer":O,"term":n,"value":...,"owner":...} per
//	  change (term 0: no leader) and {"event":"observed","observer":O} at its end
//	{"id":10,"op":"unobserve","observer":O} → {"id":10}
//
// A child that does not know an op answers PROTOCOL; the host's Skip names
// the scenarios it cannot run.
//
// A request that fails answers {"id":N,"error":{"code":CODE,"message":...}}
// with CODE one of NOT_ACQUIRED, UNAVAILABLE (with "nodes":[{"node","addr",
// "cause"}]), LOST, INVALID_ARGUMENT (with "arg": the argument's name as
// the engine spells it: ttl, wait, node_timeout, nodes[1]...), CLOSED,
// CANCELED. The child pushes {"event":"lost","lock":L} when the binding
// reports lock L lost (before the answer that reports the loss, if any).
//
// Layer: a test kit, beside the library, never under it: only tests import
// it. It imports core, core/internal/acquireopt (to read a list of acquire
// options), core/testkit/locktest and testify.
package remote
