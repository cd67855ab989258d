package host

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/wasm/internal/abi"
	"github.com/tetratelabs/wazero/api"
)

// Lock is a held lock. Its methods are safe for concurrent use; they, and
// the auto-extension, are serialized on the lock's instance.
//
// Auto-extension and expiry run on the module's own timers, which only fire
// while the instance runs a call: the host calls lock_poll when the module
// asks (next_poll_ms), from a time.AfterFunc timer, and learns the lock's
// validity and loss from it.
type Lock struct {
	c        *Client
	in       *instance
	h        uint64
	resource string
	lost     chan struct{}

	// Lock order: in.mu, then mu.
	mu         sync.Mutex
	done       bool // the guest handle is freed and the instance given back
	released   bool
	isLost     bool
	validUntil time.Time
	nextPoll   time.Duration // -1: no more polls
	token      string
	timer      *time.Timer
}

// Resource returns the resource name the lock was acquired for.
func (l *Lock) Resource() string { return l.resource }

// Key returns the Redis key: the client's key prefix + resource.
func (l *Lock) Key() string { return l.c.prefix + l.resource }

// Token returns the random value stored in the key.
func (l *Lock) Token() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.token
}

// Validity returns how long the lock is still certainly held, by the local
// monotonic clock; 0 once it has expired, been lost or been released.
func (l *Lock) Validity() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released || l.isLost {
		return 0
	}
	return max(0, time.Until(l.validUntil))
}

// Lost returns a channel that is closed when the lock is known lost: an
// auto-extension could not keep it, an Extend found it gone, or its
// validity ran out. A Release does not close it.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

func (l *Lock) ctx() context.Context { return l.in.lockCtx }

// refreshLocked runs lock_poll (due timers of the module, then the state)
// and records the state. in.mu must be held.
func (l *Lock) refreshLocked() {
	in := l.in
	if in.closed {
		return
	}
	st := in.stack[:]
	st[0], st[1] = l.h, uint64(in.scratch+offState)
	if err := in.poll.CallWithStack(l.ctx(), st); err != nil {
		in.close()
		return
	}
	if api.DecodeI32(st[0]) != abi.OK {
		return
	}
	b, _ := in.mem.Read(in.scratch+offState, abi.StateSize)
	s := abi.ReadState(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.token == "" {
		l.token = s.Token
	}
	l.validUntil = time.Now().Add(time.Duration(s.ValidityMS) * time.Millisecond)
	l.nextPoll = time.Duration(s.NextPollMS) * time.Millisecond
	if s.Flags&abi.FlagReleased != 0 {
		l.released = true
	}
	if s.Flags&abi.FlagLost != 0 && !l.isLost {
		l.isLost = true
		if !l.released {
			close(l.lost)
		}
	}
}

// primeLocked sets up a lock that lock_acquire just granted (without
// auto-extension) from what the host saw of the call, sparing a lock_poll
// round (≈ 12 µs of a ≈ 170 µs pair): the token is the one of the last
// attempt's SET, and the validity is the module's formula with the attempt
// start and end the host saw, which enclose the module's own: never more
// than the module's validity. It reports false when it cannot (then ask
// the module). in.mu must be held.
func (l *Lock) primeLocked(seen *callState, ttl time.Duration, end time.Time) bool {
	if seen == nil || seen.token == "" || seen.attempt.IsZero() {
		return false
	}
	drift := time.Duration(float64(ttl)*l.c.drift) + 2*time.Millisecond
	validity := ttl - end.Sub(seen.attempt) - drift
	if validity <= 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.token = seen.token
	l.validUntil = seen.attempt.Add(validity)
	// As lock_poll says for a lock without auto-extension: come back when
	// the validity has ended, to learn the expiry.
	l.nextPoll = time.Until(l.validUntil) + time.Millisecond
	return true
}

// scheduleLocked arms the poll timer. mu must be held.
func (l *Lock) scheduleLocked() {
	l.stopTimerLocked()
	if l.done || l.nextPoll < 0 {
		return
	}
	l.timer = time.AfterFunc(l.nextPoll, l.tick)
}

func (l *Lock) stopTimerLocked() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}

// tick is one poll: it lets the module extend or expire the lock.
func (l *Lock) tick() {
	l.in.mu.Lock()
	defer l.in.mu.Unlock()
	l.mu.Lock()
	done := l.done
	l.mu.Unlock()
	if done {
		return
	}
	l.refreshLocked()
	l.mu.Lock()
	l.scheduleLocked()
	l.mu.Unlock()
}

func (l *Lock) errReleased(op string) error {
	return &kindError{msg: fmt.Sprintf("%v: already released (%s %q)", core.ErrLost, op, l.resource), kind: core.ErrLost}
}

// Extend sets the lock's expiry to ttl from now on every node where this
// token still holds it, as core.Lock.Extend does.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	if ctx == nil {
		return &core.ArgumentError{Arg: "ctx", Reason: "must not be nil"}
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("liblock: extend %q: %w", l.resource, err)
	}
	in := l.in
	in.mu.Lock()
	defer in.mu.Unlock()
	l.mu.Lock()
	done := l.done
	l.mu.Unlock()
	if done || in.closed {
		return l.errReleased("extend")
	}
	st := in.stack[:]
	st[0], st[1], st[2] = l.h, uint64(ttl.Milliseconds()), uint64(in.scratch+offErr)
	if err := in.extend.CallWithStack(l.ctx(), st); err != nil {
		in.close()
		return fmt.Errorf("liblock: wasm lock_extend: %w", err)
	}
	status := api.DecodeI32(st[0])
	var rec []byte
	if status != abi.OK {
		rec = in.takeBuf(offErr)
	}
	l.refreshLocked()
	l.mu.Lock()
	l.scheduleLocked()
	l.mu.Unlock()
	return decodeError(status, rec)
}

// Release deletes the key on every node where this token holds it, as
// core.Lock.Release does: nil when it was still held on a quorum, ErrLost
// when not, ErrUnavailable (and the lock stays) when too many nodes failed.
func (l *Lock) Release(ctx context.Context) error {
	if ctx == nil {
		return &core.ArgumentError{Arg: "ctx", Reason: "must not be nil"}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("liblock: release %q: %w", l.resource, err)
	}
	in := l.in
	in.mu.Lock()
	l.mu.Lock()
	done := l.done
	l.mu.Unlock()
	if done || in.closed {
		in.mu.Unlock()
		return l.errReleased("release")
	}
	st := in.stack[:]
	st[0], st[1] = l.h, uint64(in.scratch+offErr)
	if err := in.release.CallWithStack(l.ctx(), st); err != nil {
		in.close()
		in.mu.Unlock()
		return fmt.Errorf("liblock: wasm lock_release: %w", err)
	}
	status := api.DecodeI32(st[0])
	var rec []byte
	if status != abi.OK {
		rec = in.takeBuf(offErr)
	}
	if status != abi.OK && status != abi.Lost {
		// Too many nodes failed to tell: still held, keep watching.
		l.refreshLocked()
		l.mu.Lock()
		l.scheduleLocked()
		l.mu.Unlock()
		in.mu.Unlock()
		return decodeError(status, rec)
	}
	st[0] = l.h
	_ = in.free.CallWithStack(l.ctx(), st)
	l.mu.Lock()
	l.done, l.released = true, true
	l.stopTimerLocked()
	l.mu.Unlock()
	in.mu.Unlock()

	l.c.mu.Lock()
	if l.c.locks != nil {
		delete(l.c.locks, l)
	}
	l.c.mu.Unlock()
	l.c.put(in)
	return decodeError(status, rec)
}
