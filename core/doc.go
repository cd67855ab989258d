// Package core is liblock's Redlock client: one distributed lock over N
// independent Redis masters, in pure Go.
//
// A lock is a Redis key holding a random token. To acquire it, a Client
// sends SET key token NX PX ttl to every node at once, each request bounded
// by the node timeout, and holds the lock only if a majority (N/2+1) granted
// it in time: the lock is held until start + ttl − (ttl × drift + 2 ms), on
// the monotonic clock, start being the moment the winning attempt began
// (no node can have set the key earlier). Each attempt has its own random
// token. A failed attempt deletes its token from every node that may hold
// it, then retries after a randomized delay while the wait budget lasts. Extend and
// Release are compare-and-set Lua scripts, so they never touch a key another
// owner holds, and an expired lock is never silently re-acquired.
//
//	client, err := core.New(core.Config{Nodes: []string{
//		"redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7003",
//	}})
//	lock, err := client.Acquire(ctx, "orders:42", 10*time.Second, core.Wait(5*time.Second))
//	if errors.Is(err, core.ErrNotAcquired) { /* someone else has it */ }
//	defer lock.Release(ctx)
//
// With AutoExtend the lock is extended in the background about every ttl/3
// until released; if it can no longer be kept, Lock.Lost closes.
//
// # Errors
//
// Every failure can be told apart with errors.Is: ErrNotAcquired (another
// owner holds it), ErrUnavailable (too many nodes failed for a quorum; an
// *UnavailableError carries each node's cause), ErrLost (no longer held),
// ErrInvalidArgument (an *ArgumentError names the argument; nothing was
// sent to Redis), ErrClosed, and the context's own context.Canceled or
// context.DeadlineExceeded.
//
// # Timing guarantees
//
// Every node exchange (acquire, extend, release, cleanup) is bounded by the
// node timeout, whatever the node does: a frozen node costs at most one
// node timeout, not go-redis's 3 s read timeout. Each operation is decided
// as soon as its outcome is certain — a quorum granted, or a quorum became
// impossible — so a frozen or slow minority costs no latency at all; the
// commands to the nodes that have not answered still go out, and a failed
// attempt's cleanup finishes in the background. Acquire returns within
// wait + one node timeout plus scheduling noise; Extend and Release within
// one node timeout.
//
// # Architecture: one engine, thin drivers
//
// Every decision and the Redis wire live in package core/engine, which does
// no I/O: it is driven by events (requests; a connection opened, bytes
// received, a connection failed; the time) and answers with actions (open a
// connection to node i, write these bytes, close it, an operation is done,
// a lock is lost, wake me at t). A Client is the Go driver of that engine:
// it dials (TCP, unix sockets, TLS), writes what the engine says, feeds it
// what arrives (read by a goroutine per connection, or, on one node, by the
// caller waiting for the reply, as go-redis does), keeps one timer,
// and turns the engine's results into return values, channels and
// callbacks. The C ABI's blocking and callback functions run this driver
// inside liblock.so; the Node and Python bindings run their own drivers on
// their event loops over the same engine, natively (liblock.so) or from
// liblock.wasm, through the byte protocol of core/hostabi.
//
// Connections: one per node, commands pipelined and answered in order. A
// new connection carries commands only after the node answered its
// handshake (AUTH, SELECT, CLIENT SETNAME, or PING), so a frozen node does
// not collect commands it would run when thawed; a connection whose request
// timed out is closed and replaced, so a late reply can never be taken for
// the answer to a later command. NewFromClients dials with each go-redis
// client's own dialer.
//
// # What Redlock does not promise
//
// A process paused longer than its validity (GC, swap, SIGSTOP) can still
// believe it holds the lock; only a fencing check in the protected resource
// closes that gap. A node that restarts without persistence forgets its
// keys: keep it out for longer than the largest ttl, or run it with
// appendfsync always. Redis expires keys by wall clock, so a clock jump on a
// node can free a lock early.
//
// Layer: the Go driver, over the engine and under the artifacts (capi,
// wasm/host) and the commands (core/cmd/...). It imports core/engine,
// core/engine/nodeurl, core/internal/acquireopt, go-redis, OpenTelemetry's
// API and golang.org/x/sys/unix; never core/hostabi, wasm/... or a test
// kit.
package core
