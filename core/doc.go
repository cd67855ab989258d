// Package core is liblock's Redlock client: one distributed lock over N
// independent Redis masters, in pure Go.
//
// A lock is a Redis key holding a random token. To acquire it, a Client
// sends SET key token NX PX ttl to every node at once, each request bounded
// by the node timeout, and holds the lock only if a majority (N/2+1) granted
// it and time is left: validity = ttl − elapsed − (ttl × drift + 2 ms),
// measured on the monotonic clock from the start of the winning attempt. A
// failed attempt deletes its token from every node that may hold it, then
// retries after a randomized delay while the wait budget lasts. Extend and
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
// Every node request (acquire, extend, release, cleanup) ends within the
// node timeout, whatever the node does: a frozen node costs one node timeout,
// not go-redis's 3 s read timeout. Acquire returns within wait + 2 × node
// timeout plus scheduling noise; Extend and Release within one node timeout.
//
// # I/O boundary
//
// The algorithm talks to Redis only through a Transport, which runs one
// command per node, all in parallel. New builds liblock's own minimal RESP2
// transport: it writes the request to every node first, then reads the
// replies one node after the other in the calling goroutine (the nodes work
// in parallel, with no goroutine per node), all under one deadline, min(node
// timeout, ctx's deadline); canceling ctx interrupts it at once. A
// connection that failed, timed out or was interrupted is closed, never
// reused, so a late reply cannot be taken for the answer to a later
// command. A new connection (one dial attempt) carries a command only after
// the node has answered AUTH, SELECT or PING, so a frozen node does not
// collect commands it would run when thawed. Each node keeps at most 16
// connections; a burst beyond waits for one within its deadline. On 5 local
// nodes it costs about half the CPU per acquire+release of the go-redis
// transport (make bench-go). NewFromClients runs over go-redis clients; the
// wasm module supplies a transport made of host calls, so it never links
// go-redis.
//
// # What Redlock does not promise
//
// A process paused longer than its validity (GC, swap, SIGSTOP) can still
// believe it holds the lock; only a fencing check in the protected resource
// closes that gap. A node that restarts without persistence forgets its
// keys: keep it out for longer than the largest ttl, or run it with
// appendfsync always. Redis expires keys by wall clock, so a clock jump on a
// node can free a lock early.
package core
