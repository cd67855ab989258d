package core

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/liblock/liblock/core/engine"
)

// Lock is a held lock. Its methods are safe for concurrent use: Extend,
// Release and the background auto-extension are serialized by the engine.
type Lock struct {
	c          *Client
	id         engine.LockID
	resource   string
	key        string
	token      string
	autoExtend bool
	fence      int64
	reentered  bool
	permits    int // a semaphore's permit count (semaphore.go), 0 for a mutex
	slot       int
	mode       engine.LockMode
	lost       chan struct{} // closed on loss

	// Guarded by c.mu.
	ttl      time.Duration
	released bool
	lostErr  error
	onLost   func(error)

	// resources: a multi-resource lock's set (AcquireAll), nil for a
	// mutex.
	resources []string
}

// Resource returns the resource name the lock was acquired for.
func (l *Lock) Resource() string { return l.resource }

// Key returns the Redis key: the client's key prefix + resource (wrapped in
// a hash tag, "{prefix+resource}", on a client with a Redis Cluster node,
// unless it has one).
func (l *Lock) Key() string { return l.key }

// Token returns the random value stored in the key: a version-4 UUID (122
// random bits).
func (l *Lock) Token() string { return l.token }

// TTL returns the ttl of the last successful acquire or extend.
func (l *Lock) TTL() time.Duration {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	if info, ok := l.c.eng.Lock(l.id); ok {
		l.ttl = info.TTL
	}
	return l.ttl
}

// Fence returns the lock's fencing token (acquired with Fence), else 0.
func (l *Lock) Fence() int64 { return l.fence }

// Reentered reports whether the acquire (WithToken) re-entered a lock that
// already held its token.
func (l *Lock) Reentered() bool { return l.reentered }

// AutoExtend reports whether the lock is extended in the background.
func (l *Lock) AutoExtend() bool { return l.autoExtend }

// Validity returns how long the lock is still certainly held, by the local
// monotonic clock; 0 once it has expired, been lost or been released.
func (l *Lock) Validity() time.Duration {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	if l.released || l.lostErr != nil {
		return 0
	}
	info, _ := l.c.eng.Lock(l.id)
	return info.Validity
}

// Lost returns a channel that is closed when the library learns that the
// lock is no longer held: a background extension could not keep a quorum,
// an Extend found it gone, or its validity ran out. It is not closed by a
// Release.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// IsLost reports whether Lost is closed.
func (l *Lock) IsLost() bool {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	return l.lostErr != nil
}

// Err returns why the lock was lost (errors.Is(err, ErrLost)), or nil.
func (l *Lock) Err() error {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	return l.lostErr
}

// OnLost registers fn to be called once, on a library goroutine, when the
// lock is lost; it replaces any earlier fn, and nil removes it. If the lock
// is already lost, fn is called at once. It is never called after a Release.
func (l *Lock) OnLost(fn func(error)) {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	l.onLost = fn
	if fn != nil && l.lostErr != nil && !l.released {
		l.onLost = nil
		go fn(l.lostErr)
	}
}

// lostBy records the engine's report of a loss; c.mu is held. It reports
// whether it recorded it (false: the lock was lost or released already).
func (l *Lock) lostBy(err error) bool {
	if l.lostErr != nil || l.released {
		return false
	}
	l.lostErr = err
	close(l.lost)
	if fn := l.onLost; fn != nil {
		l.onLost = nil
		go fn(err)
	}
	return true
}

// Extend makes the lock's keys live at least ttl from now on every node
// where this token still holds them (a key that already lives longer — a
// hand-over's receiver asked for more — keeps its expiry; the lock's own
// validity becomes ttl from now either way). It succeeds only if a quorum did so within the
// current validity; it never re-acquires an expired lock. ErrLost means the
// lock is gone (Lost closes); ErrUnavailable means too many nodes failed to
// tell, and the lock stays held until its current validity ends. When ctx
// ends first, Extend returns its error and the extension finishes in the
// background.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) (err error) {
	if ctx == nil {
		return invalidArg("ctx", "must not be nil")
	}
	if err := engine.CheckTTL(ttl); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return wrap("liblock: extend "+strconv.Quote(l.resource), err)
	}
	begin := l.c.tagged(ctx, func() (engine.OpID, error) { return l.c.eng.Extend(l.id, ttl) })
	if t := l.c.tel; t != nil {
		var span trace.Span
		begin, span = t.start(ctx, "extend", l.resource, l.id, begin)
		defer func() { failedIf(span, err) }()
	}
	err, ended := l.c.await(ctx, true, begin)
	switch {
	case errors.Is(err, engine.ErrUnknownLock):
		return l.gone("extend")
	case !ended && ctx.Err() != nil:
		return wrap("liblock: extend "+strconv.Quote(l.resource), err)
	case err == nil:
		l.c.mu.Lock()
		l.ttl = ttl
		l.c.mu.Unlock()
	}
	return err
}

// gone is the error of an operation on a lock the engine no longer has.
func (l *Lock) gone(op string) error {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	if l.c.closing {
		return ErrClosed
	}
	if l.lostErr != nil && !l.released {
		return l.lostErr
	}
	return errLost(op, l.resource, "already released")
}

// Release deletes the key on every node where this token holds it. It
// returns nil when the lock was still held on a quorum, an ErrLost error
// when it was not (another owner's key is never touched), and an
// ErrUnavailable error when too many nodes failed to tell — then the lock is
// not marked released and Release may be called again. Releasing twice
// returns ErrLost the second time, without I/O.
//
// Release cleans up even when ctx is already canceled (a deferred Release
// after a canceled request must not leave the key for its whole ttl): it
// always sends, and returns within about one node timeout. ctx must not be
// nil.
func (l *Lock) Release(ctx context.Context) (err error) {
	if ctx == nil {
		return invalidArg("ctx", "must not be nil")
	}
	l.c.mu.Lock()
	released, closed := l.released, l.c.closing
	l.c.mu.Unlock()
	if closed {
		return ErrClosed // Close released it, or is releasing it
	}
	if released {
		return errLost("release", l.resource, "already released")
	}
	begin := l.c.tagged(ctx, func() (engine.OpID, error) { return l.c.eng.Release(l.id) })
	if t := l.c.tel; t != nil {
		var span trace.Span
		begin, span = t.start(ctx, "release", l.resource, l.id, begin)
		defer func() { failedIf(span, err) }()
	}
	err, _ = l.c.await(ctx, false, begin) // not canceled by ctx
	if errors.Is(err, engine.ErrUnknownLock) {
		return l.gone("release")
	}
	if !errors.Is(err, ErrUnavailable) {
		l.c.mu.Lock()
		l.released = true
		delete(l.c.locks, l.id)
		l.c.mu.Unlock()
	}
	return err
}
