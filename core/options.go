package core

import (
	"time"

	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/internal/acquireopt"
)

// AcquireOption configures one Acquire call.
type AcquireOption func(*acquireOptions)

// acquireOptions live in core/internal/acquireopt so that core's test kits can
// read a list of options (acquireopt.Apply) without an exported reader here.
type acquireOptions = acquireopt.Settings

// Wait keeps retrying, with randomized backoff, for at most d while another
// owner holds the resource or too few nodes answer. Zero (the default) means
// a single attempt. A release by another Lock of the same Client wakes the
// waiters at once instead of at their next retry.
func Wait(d time.Duration) AcquireOption {
	return func(o *acquireOptions) { o.Wait = d }
}

// AutoExtend extends the lock in the background, about every ttl/3, until it
// is released. If it can no longer be kept on a quorum before its validity
// ends, the lock is marked lost and Lock.Lost closes.
func AutoExtend() AcquireOption {
	return func(o *acquireOptions) { o.AutoExtend = true }
}

// WithToken acquires with the caller's token instead of a random one. If
// that token already holds the resource on a quorum, the acquire re-enters
// that lock — a scheduler handing a held lock to a worker, a process
// re-attaching after a restart, a reentrant lock — and its ttl becomes at
// least the one asked for; otherwise it is an ordinary acquire with that
// token. The holders of one token share its keys: a release (or the drop of
// a lock found lost) by any of them ends the lock for all (a re-entry is
// not counted); an extension never shortens it for the others. A failed attempt with a caller's token deletes
// nothing: what it set expires with its ttl. 16 to 512 bytes.
func WithToken(token string) AcquireOption {
	return func(o *acquireOptions) { o.Token = token }
}

// Fence asks for a fencing token (Lock.Fence): an integer strictly greater
// than the fence of every lock on the resource acquired before. Pass it to
// the resource you protect and have it refuse a request whose fence is
// lower than one it has seen: a holder paused past its validity (a GC
// pause) is then refused instead of overwriting its successor's work. It
// costs a second round trip; each node keeps a counter per resource (a key
// that does not expire), which never falls below the Redis server's clock
// in microseconds: fences are large numbers (about 1.8e15, exact in an
// int64 and in a JavaScript number) and keep increasing across nodes that
// restart without their data, provided such a node stays down longer than
// the longest ttl (as exclusion already asks) and the servers' clocks
// differ by less than that. Not with WithToken.
func Fence() AcquireOption {
	return func(o *acquireOptions) { o.Fence = true }
}

// checkAcquireOptions checks the values o holds.
func checkAcquireOptions(o acquireOptions) error {
	if o.Wait < 0 || o.Wait > MaxWait {
		return invalidArg("wait", "must be between 0 and "+MaxWait.String()+", got "+o.Wait.String())
	}
	if o.PermitsSet {
		return engine.CheckPermits(o.Permits)
	}
	return nil
}

func acquireSettings(opts []AcquireOption) (acquireOptions, error) {
	o, err := acquireopt.Apply(acquireopt.Settings{Wait: defaultWait}, opts) // defaults_gen.go
	if err != nil {
		return acquireOptions{}, err
	}
	if err := checkAcquireOptions(o); err != nil {
		return acquireOptions{}, err
	}
	return o, nil
}
