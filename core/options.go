package core

import (
	"time"

	"github.com/liblock/liblock/core/engine"
)

// AcquireOption configures one Acquire call.
type AcquireOption func(*acquireOptions)

type acquireOptions struct {
	wait       time.Duration
	autoExtend bool
	token      string
	fence      bool
	permits    int             // Permits (semaphore.go)
	permitsSet bool            // Permits was given: 0 is then refused, not the mutex
	mode       engine.LockMode // Read, Write (rwlock.go)
}

// Wait keeps retrying, with randomized backoff, for at most d while another
// owner holds the resource or too few nodes answer. Zero (the default) means
// a single attempt. A release by another Lock of the same Client wakes the
// waiters at once instead of at their next retry.
func Wait(d time.Duration) AcquireOption {
	return func(o *acquireOptions) { o.wait = d }
}

// AutoExtend extends the lock in the background, about every ttl/3, until it
// is released. If it can no longer be kept on a quorum before its validity
// ends, the lock is marked lost and Lock.Lost closes.
func AutoExtend() AcquireOption {
	return func(o *acquireOptions) { o.autoExtend = true }
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
	return func(o *acquireOptions) { o.token = token }
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
	return func(o *acquireOptions) { o.fence = true }
}

func (o acquireOptions) validate() error {
	if o.wait < 0 || o.wait > MaxWait {
		return invalidArg("wait", "must be between 0 and "+MaxWait.String()+", got "+o.wait.String())
	}
	if o.permitsSet {
		return engine.CheckPermits(o.permits)
	}
	return nil
}

func acquireSettings(opts []AcquireOption) (acquireOptions, error) {
	o := acquireOptions{wait: defaultWait} // defaults_gen.go
	for _, opt := range opts {
		if opt == nil {
			return acquireOptions{}, invalidArg("opts", "nil AcquireOption")
		}
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return acquireOptions{}, err
	}
	return o, nil
}

// AcquireSettings is what a list of AcquireOptions asks for: what a backend
// that carries an Acquire to another runtime (locktest's remote hosts)
// sends there, to be checked by that runtime's own binding.
type AcquireSettings struct {
	Wait       time.Duration
	AutoExtend bool
	Token      string
	Fence      bool
	// Permits: a semaphore's permit count (Permits), 0 for the mutex.
	Permits int
	Mode    engine.LockMode
}

// ReadAcquireOptions applies opts as Acquire does, without checking the
// values: only a nil option is refused (ArgumentError for "opts").
func ReadAcquireOptions(opts ...AcquireOption) (AcquireSettings, error) {
	o := acquireOptions{wait: defaultWait} // defaults_gen.go
	for _, opt := range opts {
		if opt == nil {
			return AcquireSettings{}, invalidArg("opts", "nil AcquireOption")
		}
		opt(&o)
	}
	return AcquireSettings{Wait: o.wait, AutoExtend: o.autoExtend, Token: o.token, Fence: o.fence, Permits: o.permits, Mode: o.mode}, nil
}
