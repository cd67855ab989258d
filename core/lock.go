package core

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// Lock is a held lock. Its methods are safe for concurrent use: Extend,
// Release and the background auto-extension are serialized.
type Lock struct {
	c          *Client
	resource   string
	key        string
	token      string
	ttl        time.Duration
	autoExtend bool

	opMu sync.Mutex // held across Extend/Release I/O

	mu         sync.Mutex
	validUntil time.Time // monotonic; the lock is ours strictly before it
	released   bool
	lostErr    error
	lost       chan struct{} // closed on loss
	onLost     func(error)
	timer      *time.Timer // auto-extension or expiry
	gen        uint64      // invalidates timers that fire late
}

// Resource returns the resource name the lock was acquired for.
func (l *Lock) Resource() string { return l.resource }

// Key returns the Redis key: the client's key prefix + resource.
func (l *Lock) Key() string { return l.key }

// Token returns the random value stored in the key (128 random bits).
func (l *Lock) Token() string { return l.token }

// TTL returns the ttl of the last successful acquire or extend.
func (l *Lock) TTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

// AutoExtend reports whether the lock is extended in the background.
func (l *Lock) AutoExtend() bool { return l.autoExtend }

// Validity returns how long the lock is still certainly held, by the local
// monotonic clock; 0 once it has expired, been lost or been released.
func (l *Lock) Validity() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released || l.lostErr != nil {
		return 0
	}
	return max(0, time.Until(l.validUntil))
}

// Lost returns a channel that is closed when the library learns that the
// lock is no longer held: a background extension could not keep a quorum,
// an Extend found it gone, or its validity ran out. It is not closed by a
// Release.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// IsLost reports whether Lost is closed.
func (l *Lock) IsLost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErr != nil
}

// Err returns why the lock was lost (errors.Is(err, ErrLost)), or nil.
func (l *Lock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErr
}

// OnLost registers fn to be called once, on a library goroutine, when the
// lock is lost; it replaces any earlier fn, and nil removes it. If the lock
// is already lost, fn is called at once. It is never called after a Release.
func (l *Lock) OnLost(fn func(error)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onLost = fn
	if fn != nil && l.lostErr != nil && !l.released {
		l.onLost = nil
		go fn(l.lostErr)
	}
}

// Extend sets the lock's expiry to ttl from now on every node where this
// token still holds it. It succeeds only if a quorum did so within the
// current validity; it never re-acquires an expired lock. ErrLost means the
// lock is gone (Lost closes); ErrUnavailable means too many nodes failed to
// tell, and the lock stays held until its current validity ends.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	if ctx == nil {
		return invalidArg("ctx", "must not be nil")
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return wrap("liblock: extend "+strconv.Quote(l.resource), err)
	}
	l.opMu.Lock()
	defer l.opMu.Unlock()
	return l.extendLocked(ctx, ttl)
}

func (l *Lock) extendLocked(ctx context.Context, ttl time.Duration) error {
	l.mu.Lock()
	released, lostErr, validUntil := l.released, l.lostErr, l.validUntil
	l.mu.Unlock()
	switch {
	case released:
		return l.errLost("extend", "already released")
	case lostErr != nil:
		return lostErr
	}
	start := time.Now()
	if !start.Before(validUntil) {
		return l.markLost(l.errLost("extend", "validity ran out before the extension"))
	}
	all := l.allNodes()
	replies := extendScript.run(ctx, l.c.t, all, l.key, l.token, strconv.FormatInt(ttl.Milliseconds(), 10))
	end := time.Now()
	held, failed := l.count(replies)
	validity := l.c.validity(ttl, end.Sub(start))
	n := len(replies)
	switch {
	case held >= l.c.quorum && end.Before(validUntil) && validity > 0:
		l.mu.Lock()
		l.validUntil = end.Add(validity)
		l.ttl = ttl
		l.scheduleLocked(end)
		l.mu.Unlock()
		return nil
	case held >= l.c.quorum && !end.Before(validUntil):
		// Our keys outlived our validity; do not pretend we held the lock
		// throughout. Drop them so others need not wait for the new ttl.
		l.dropKeys()
		return l.markLost(l.errLost("extend", "validity ran out during the extension"))
	case held+len(failed) < l.c.quorum:
		l.dropKeys()
		return l.markLost(l.errLost("extend", "held on only "+strconv.Itoa(held)+" of "+strconv.Itoa(n)+" nodes, quorum is "+strconv.Itoa(l.c.quorum)))
	case held >= l.c.quorum:
		return &UnavailableError{Op: "extend", Reason: "extended too slowly for a " + ttl.String() + " ttl", Nodes: failed}
	}
	return &UnavailableError{Op: "extend", Reason: strconv.Itoa(len(failed)) + " of " + strconv.Itoa(n) + " nodes failed, quorum is " + strconv.Itoa(l.c.quorum) + "; the lock stays held until its current validity ends", Nodes: failed}
}

// Release deletes the key on every node where this token holds it. It
// returns nil when the lock was still held on a quorum, an ErrLost error
// when it was not (another owner's key is never touched), and an
// ErrUnavailable error when too many nodes failed to tell — then the lock is
// not marked released and Release may be called again. Releasing twice
// returns ErrLost the second time, without I/O.
func (l *Lock) Release(ctx context.Context) error {
	if ctx == nil {
		return invalidArg("ctx", "must not be nil")
	}
	if err := ctx.Err(); err != nil {
		return wrap("liblock: release "+strconv.Quote(l.resource), err)
	}
	l.opMu.Lock()
	defer l.opMu.Unlock()

	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return l.errLost("release", "already released")
	}
	lostErr, validUntil := l.lostErr, l.validUntil
	l.stopTimerLocked()
	l.mu.Unlock()

	start := time.Now()
	replies := releaseScript.run(ctx, l.c.t, l.allNodes(), l.key, l.token)
	deleted, failed := l.count(replies)

	var err error
	switch {
	case lostErr != nil:
		err = lostErr
	case deleted >= l.c.quorum && start.Before(validUntil):
		err = nil
	case deleted+len(failed) < l.c.quorum || deleted >= l.c.quorum:
		err = l.errLost("release", "held on only "+strconv.Itoa(deleted)+" of "+strconv.Itoa(len(replies))+" nodes when released")
	default:
		l.mu.Lock()
		l.scheduleLocked(time.Now()) // still ours until validUntil: keep watching
		l.mu.Unlock()
		return &UnavailableError{Op: "release", Reason: strconv.Itoa(len(failed)) + " of " + strconv.Itoa(len(replies)) + " nodes failed, cannot tell whether it was still held; call Release again", Nodes: failed}
	}
	l.mu.Lock()
	l.released = true
	l.mu.Unlock()
	l.c.forget(l)
	l.c.wake(l.key)
	return err
}

func (l *Lock) allNodes() []bool {
	all := make([]bool, len(l.c.t.Nodes()))
	for i := range all {
		all[i] = true
	}
	return all
}

// count returns how many nodes answered 1 (the script matched our token)
// and which failed.
func (l *Lock) count(replies []Reply) (ok int, failed []*NodeError) {
	nodes := l.c.t.Nodes()
	for i, r := range replies {
		switch {
		case r.Err != nil:
			failed = append(failed, &NodeError{Node: i, Addr: nodes[i], Err: r.Err})
		case r.Int == 1:
			ok++
		}
	}
	return ok, failed
}

// dropKeys deletes our token wherever it still is, bounded by the node
// timeout; used when a lock is found lost, so others need not wait.
func (l *Lock) dropKeys() {
	ctx, cancel := context.WithTimeout(context.Background(), l.c.nodeTimout)
	defer cancel()
	releaseScript.run(ctx, l.c.t, l.allNodes(), l.key, l.token)
}

func (l *Lock) errLost(op, detail string) error {
	return &opError{op: op, resource: l.resource, kind: ErrLost, detail: detail}
}

// markLost records the loss once, closes Lost and calls the OnLost
// function. It returns the error that is recorded.
func (l *Lock) markLost(err error) error {
	l.mu.Lock()
	if l.released || l.lostErr != nil {
		defer l.mu.Unlock()
		if l.lostErr != nil {
			return l.lostErr
		}
		return err
	}
	l.lostErr = err
	close(l.lost)
	l.stopTimerLocked()
	fn := l.onLost
	l.onLost = nil
	l.mu.Unlock()
	l.c.wake(l.key)
	if fn != nil {
		go fn(err)
	}
	return err
}

func (l *Lock) stopTimerLocked() {
	l.gen++
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}

// scheduleLocked arms the one timer a lock has: the next auto-extension, or
// the moment its validity runs out.
func (l *Lock) scheduleLocked(now time.Time) {
	l.stopTimerLocked()
	if l.released || l.lostErr != nil {
		return
	}
	gen := l.gen
	remaining := l.validUntil.Sub(now)
	if !l.autoExtend {
		l.timer = time.AfterFunc(max(remaining, 0), func() { l.expire(gen) })
		return
	}
	// Extend at a third of the ttl, and never later than halfway through
	// what is left, so a slow round still lands inside the validity.
	at := min(l.ttl/3, remaining/2)
	l.timer = time.AfterFunc(max(at, 0), func() { l.tick(gen) })
}

// expire marks the lock lost when its validity has run out.
func (l *Lock) expire(gen uint64) {
	l.mu.Lock()
	stale := gen != l.gen
	l.mu.Unlock()
	if !stale {
		l.markLost(l.errLost("hold", "validity ran out"))
	}
}

// tick is one background extension.
func (l *Lock) tick(gen uint64) {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	l.mu.Lock()
	if gen != l.gen || l.released || l.lostErr != nil {
		l.mu.Unlock()
		return
	}
	ttl := l.ttl
	l.mu.Unlock()

	err := l.extendLocked(context.Background(), ttl)
	if err == nil || l.IsLost() {
		return // rescheduled, or lost and reported
	}
	// Too many nodes failed, but the lock is still ours until validUntil:
	// try again soon, and give it up when the validity runs out.
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released || l.lostErr != nil {
		return
	}
	l.stopTimerLocked()
	gen = l.gen
	remaining := time.Until(l.validUntil)
	if remaining <= 0 {
		go l.expire(gen)
		return
	}
	retry := min(remaining, max(l.c.nodeTimout, minRetryDelay))
	l.timer = time.AfterFunc(retry, func() { l.tick(gen) })
}
