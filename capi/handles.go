package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/liblock/liblock/core"
)

// maxHandle keeps handles exact in a JavaScript number (below 2^53).
const maxHandle = 1<<53 - 1

var errHandlesExhausted = errors.New("liblock: no handles left in this process")

// handleTable maps handles to typed objects. Handles count up from 1 and are
// never reused; they are not pointers, so a made-up handle can only miss.
type handleTable struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]any // *clientObj, *lockObj or *opObj
}

var handles = &handleTable{m: map[uint64]any{}}

func (t *handleTable) add(obj any) (uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.next >= maxHandle {
		return 0, errHandlesExhausted
	}
	t.next++
	if o, ok := obj.(interface{ setID(uint64) }); ok {
		o.setID(t.next) // before the object is published
	}
	t.m[t.next] = obj
	return t.next, nil
}

func (c *clientObj) setID(id uint64) { c.id = id }
func (lo *lockObj) setID(id uint64)  { lo.id = id }
func (o *opObj) setID(id uint64)     { o.id = id }

func (t *handleTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// get returns the object of handle h if it is a T.
func get[T any](t *handleTable, h uint64) (T, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	obj, ok := t.m[h].(T)
	return obj, ok
}

// take removes handle h and returns its object if it is a T; a handle of
// another kind is left alone.
func take[T any](t *handleTable, h uint64) (T, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	obj, ok := t.m[h].(T)
	if ok {
		delete(t.m, h)
	}
	return obj, ok
}

// clientObj is a client handle's object.
type clientObj struct {
	id uint64
	c  *core.Client

	mu     sync.Mutex
	closed bool
	locks  map[uint64]*lockObj
	ops    map[*opObj]struct{}
	// lostAll: lock_client_on_lost's callback, told of each of the client's
	// locks that is lost (besides the lock's own lock_on_lost callback).
	lostAll notifyFunc
	// reporting: a report callback is set (report.go): the client's calls
	// tag their operations.
	reporting atomic.Bool
}

// lockObj is a lock handle's object.
type lockObj struct {
	id     uint64
	client *clientObj
	l      *core.Lock

	mu       sync.Mutex
	freed    bool       // lock_free ran: no more on-lost callbacks
	released bool       // a release returned LOCK_OK: no more on-lost callbacks
	lostFn   notifyFunc // lock_on_lost's callback, until it runs or is replaced
	lostSeen bool       // the loss was dispatched: the client's callback is not told twice
	// election and value: a leadership's (lock_campaign), for lock_info.
	election, value string
}

// opObj is one pending asynchronous operation. Acquires have a handle (for
// lock_cancel); every op is listed in its client so that freeing the client
// cancels it.
type opObj struct {
	id     uint64 // 0 when the op has no handle
	cancel context.CancelFunc

	mu       sync.Mutex
	done     bool
	canceled bool
}

// tryCancel cancels the op unless its result is already decided.
func (o *opObj) tryCancel() bool {
	o.mu.Lock()
	if o.done {
		o.mu.Unlock()
		return false
	}
	o.canceled = true
	o.mu.Unlock()
	o.cancel()
	return true
}

// finish decides the op's result: after it, lock_cancel cannot touch it. It
// reports whether the op was canceled first.
func (o *opObj) finish() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done = true
	return o.canceled
}

// addOp registers op with the client, or reports that the client is closed.
func (c *clientObj) addOp(op *opObj) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.ops[op] = struct{}{}
	return true
}

func (c *clientObj) removeOp(op *opObj) {
	c.mu.Lock()
	delete(c.ops, op)
	c.mu.Unlock()
}

// newOp makes an operation registered with c, its ctx derived from parent
// (blockingCtx for a blocking call): freeing the client cancels its ctx
// (the call then reports LOCK_CANCELED). badHandle: the client was freed
// meanwhile. endOp ends it.
func (c *clientObj) newOp(parent context.Context) (context.Context, *opObj, *result) {
	ctx, cancel := context.WithCancel(parent)
	op := &opObj{cancel: cancel}
	if !c.addOp(op) {
		cancel()
		return nil, nil, badHandle
	}
	return ctx, op, nil
}

// endOp unregisters op (newOp's) and releases its context.
func (c *clientObj) endOp(op *opObj) {
	c.removeOp(op)
	op.cancel()
}

// addLock gives a freshly acquired lock a handle, unless the client has been
// freed meanwhile: then the lock is released and ErrClosed returned.
func (c *clientObj) addLock(l *core.Lock) (uint64, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = l.Release(context.Background())
		return 0, core.ErrClosed
	}
	lo := &lockObj{client: c, l: l}
	id, err := handles.add(lo)
	if err != nil {
		c.mu.Unlock()
		_ = l.Release(context.Background())
		return 0, err
	}
	c.locks[id] = lo
	c.mu.Unlock()
	if c.reporting.Load() {
		lockHandles.Store(l, id) // report.go
	}
	// Every lock's loss goes through lostDispatch, so that the client's callback
	// needs no per-lock registration (a host watching every lock for a log line
	// would pay a call per acquire).
	l.OnLost(lo.lostDispatch)
	return id, nil
}

// lostDispatch is every lock's core loss callback: it calls the lock's own
// lock_on_lost callback (once: it is dropped) and, for the first loss
// dispatched, the client's lock_client_on_lost callback.
func (lo *lockObj) lostDispatch(e error) {
	defer func() { _ = recover() }()
	lo.mu.Lock()
	if lo.freed || lo.released {
		lo.mu.Unlock()
		return
	}
	own := lo.lostFn
	lo.lostFn = nil
	first := !lo.lostSeen
	lo.lostSeen = true
	lo.mu.Unlock()
	msg := "liblock: lock lost"
	if e != nil {
		msg = e.Error()
	}
	if own != nil {
		own(statusLost, lo.id, msg)
	}
	if first {
		lo.client.mu.Lock()
		all := lo.client.lostAll
		lo.client.mu.Unlock()
		if all != nil {
			all(statusLost, lo.id, msg)
		}
	}
}

// free closes the client: its lock handles go away, its pending operations
// are canceled, and core's Close releases the locks still held. The client's
// handle must already have been taken out of the table.
func (c *clientObj) free() {
	c.mu.Lock()
	c.closed = true
	locks := c.locks
	ops := c.ops
	c.locks = map[uint64]*lockObj{}
	c.ops = map[*opObj]struct{}{}
	c.mu.Unlock()
	for id, lo := range locks {
		if _, ok := take[*lockObj](handles, id); ok {
			lo.markFreed()
		}
	}
	for op := range ops {
		op.tryCancel()
	}
	_ = c.c.Close() // releases every lock still held, waits for acquires in flight
}

// markFreed stops on-lost callbacks for good.
func (lo *lockObj) markFreed() {
	lo.mu.Lock()
	lo.freed = true
	lo.mu.Unlock()
	lo.l.OnLost(nil)
	lockHandles.Delete(lo.l)
}

// free releases the lock if still held and forgets it. The handle must
// already have been taken out of the table.
func (lo *lockObj) free() {
	lo.client.mu.Lock()
	delete(lo.client.locks, lo.id)
	lo.client.mu.Unlock()
	lo.markFreed()
	// If the nodes cannot be reached, core keeps the lock in its client and
	// the client's Close tries again; otherwise the keys expire by their ttl.
	_ = lo.l.Release(tagLock(lo.client, context.Background(), lo.id))
}
