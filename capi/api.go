package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/ownthread"
)

// blockingCtx is the context of the blocking calls: their caller waits on
// its own thread (a C program's, Python's), which waits for a one-node
// reply in poll(2) rather than on Go's netpoller (ownthread).
// LIBLOCK_BLOCKING_WAIT=netpoller makes them wait on the netpoller, as Go
// callers do: the benchmarks' switch between the two (docs/c-abi.md).
var blockingCtx = blockingContext(os.Getenv("LIBLOCK_BLOCKING_WAIT"))

func blockingContext(wait string) context.Context {
	if wait == "netpoller" {
		return context.Background()
	}
	return ownthread.With(context.Background())
}

// This file is the ABI's logic in plain Go: the exports (exports.go) only
// convert C arguments, call these functions and write the results back. The
// Go tests drive these functions directly, under the race detector.

// result is a failed call's status and message; nil means LOCK_OK.
type result struct {
	code int32
	msg  string
}

func errResult(e error) *result { return &result{statusOf(e), e.Error()} }

var badHandle = &result{statusInvalidHandle, msgInvalidHandle}

// notifyFunc receives the outcome of an async call (msg "" on success).
type notifyFunc func(status int32, handle uint64, msg string)

func lookupClient(h uint64) (*clientObj, *result) {
	co, ok := get[*clientObj](handles, h)
	if !ok {
		return nil, badHandle
	}
	return co, nil
}

func lookupLock(h uint64) (*lockObj, *result) {
	lo, ok := get[*lockObj](handles, h)
	if !ok {
		return nil, badHandle
	}
	return lo, nil
}

// clientNew parses config JSON and makes a client handle.
func clientNew(js string) (uint64, *result) {
	cfg, e := parseConfig(js)
	if e != nil {
		return 0, errResult(e)
	}
	c, e := core.New(cfg)
	if e != nil {
		return 0, errResult(e)
	}
	co := &clientObj{c: c, locks: map[uint64]*lockObj{}, ops: map[*opObj]struct{}{}}
	id, e := handles.add(co)
	if e != nil {
		_ = c.Close()
		return 0, &result{statusInternal, e.Error()}
	}
	return id, nil
}

// acquire blocks until the lock is taken or the attempt fails.
func acquire(co *clientObj, res string, ttl time.Duration, opts acquireOptions) (uint64, *result) {
	l, e := coreAcquire(tagOp(co, blockingCtx, 0), co.c, res, ttl, opts)
	if e != nil {
		return 0, errResult(e)
	}
	id, e := co.addLock(l)
	if e != nil {
		return 0, errResult(e)
	}
	return id, nil
}

func extend(lo *lockObj, ttl time.Duration) *result {
	if e := lo.l.Extend(tagLock(lo.client, blockingCtx, lo.id), ttl); e != nil {
		return errResult(e)
	}
	return nil
}

// noteReleased stops on-lost callbacks after a successful release.
func (lo *lockObj) noteReleased(e error) {
	if e == nil {
		lo.mu.Lock()
		lo.released = true
		lo.mu.Unlock()
	}
}

func release(lo *lockObj) *result {
	e := lo.l.Release(tagLock(lo.client, blockingCtx, lo.id))
	lo.noteReleased(e)
	if e != nil {
		return errResult(e)
	}
	return nil
}

// freeHandle frees a client or a lock handle.
func freeHandle(h uint64) int32 {
	if co, ok := take[*clientObj](handles, h); ok {
		co.free()
		return statusOK
	}
	if lo, ok := take[*lockObj](handles, h); ok {
		lo.free()
		return statusOK
	}
	if w, ok := take[*watchObj](handles, h); ok {
		w.stop() // election.go
		return statusOK
	}
	return statusInvalidHandle
}

// runAsync runs fn on a library goroutine (a reused worker, workers.go) for
// an accepted async call and calls notify exactly once with the outcome, even
// if fn panics. The op must already be registered with its client.
func runAsync(ctx context.Context, co *clientObj, op *opObj, notify notifyFunc, fn func(ctx context.Context) (uint64, error)) {
	spawn(func() {
		var h uint64
		var e error
		func() {
			defer func() {
				if r := recover(); r != nil {
					h, e = 0, fmt.Errorf("liblock: internal error: %v", r)
				}
			}()
			h, e = fn(ctx)
		}()
		canceled := op.finish()
		co.endOp(op)
		if op.id != 0 {
			take[*opObj](handles, op.id)
		}
		switch {
		case canceled:
			notify(statusCanceled, 0, msgCanceled)
		case e != nil:
			notify(statusOf(e), h, e.Error())
		default:
			notify(statusOK, h, "")
		}
	})
}

// newHandleOp makes a pending operation with a handle (for lock_cancel),
// registered with its client.
func newHandleOp(co *clientObj) (context.Context, *opObj, uint64, *result) {
	ctx, op, r := co.newOp(context.Background())
	if r != nil {
		return nil, nil, 0, r
	}
	id, e := handles.add(op)
	if e != nil {
		co.endOp(op)
		return nil, nil, 0, &result{statusInternal, e.Error()}
	}
	return tagOp(co, ctx, id), op, id, nil
}

// acquireAsync starts an acquire and returns its op handle.
func acquireAsync(co *clientObj, res string, ttl time.Duration, opts acquireOptions, notify notifyFunc) (uint64, *result) {
	ctx, op, id, r := newHandleOp(co)
	if r != nil {
		return 0, r
	}
	runAsync(ctx, co, op, notify, func(ctx context.Context) (uint64, error) {
		l, e := coreAcquire(ctx, co.c, res, ttl, opts)
		if e != nil {
			return 0, e
		}
		if op.finish() { // canceled just as it succeeded: give it back
			_ = l.Release(context.Background())
			return 0, nil
		}
		return co.addLock(l)
	})
	return id, nil
}

// lockAsync starts fn (an extend or a release) on lo.
func lockAsync(lo *lockObj, notify notifyFunc, fn func(ctx context.Context) error) *result {
	ctx, op, r := lo.client.newOp(context.Background())
	if r != nil {
		return r
	}
	runAsync(tagLock(lo.client, ctx, lo.id), lo.client, op, notify, func(ctx context.Context) (uint64, error) {
		return lo.id, fn(ctx)
	})
	return nil
}

func extendAsync(lo *lockObj, ttl time.Duration, notify notifyFunc) *result {
	return lockAsync(lo, notify, func(ctx context.Context) error { return lo.l.Extend(ctx, ttl) })
}

func releaseAsync(lo *lockObj, notify notifyFunc) *result {
	return lockAsync(lo, notify, func(ctx context.Context) error {
		e := lo.l.Release(ctx)
		lo.noteReleased(e)
		return e
	})
}

// cancelOp cancels a pending acquire.
func cancelOp(h uint64) int32 {
	o, ok := get[*opObj](handles, h)
	if !ok || !o.tryCancel() {
		return statusInvalidHandle
	}
	return statusOK
}

// onLost registers (or, with nil, removes) the lock's loss callback. One
// registered after the loss runs at once: core runs a callback registered
// after the loss, and lostDispatch (registered by addLock) took the lost one.
func onLost(lo *lockObj, notify notifyFunc) {
	lo.mu.Lock()
	lo.lostFn = notify
	lo.mu.Unlock()
	if notify != nil && lo.l.IsLost() {
		lo.l.OnLost(lo.lostDispatch)
	}
}

// clientOnLost registers (or, with nil, removes) the client's loss callback.
func clientOnLost(co *clientObj, notify notifyFunc) {
	co.mu.Lock()
	co.lostAll = notify
	co.mu.Unlock()
}

// lockInfo is the JSON written by lock_info.
type lockInfo struct {
	Handle     uint64 `json:"handle"`
	Client     uint64 `json:"client"`
	Resource   string `json:"resource"`
	Key        string `json:"key"`
	Token      string `json:"token"`
	TTLMs      int64  `json:"ttl_ms"`
	ValidityMs int64  `json:"validity_ms"`
	AutoExtend bool   `json:"auto_extend"`
	Lost       bool   `json:"lost"`
	Released   bool   `json:"released"`
	Fence      int64  `json:"fence"`     // 0 unless acquired with "fence"
	Reentered  bool   `json:"reentered"` // acquired with "token" by re-entering a held lock
	Mode       string `json:"mode"`      // "exclusive" (the mutex), "read" or "write"
	// Resources: a multi-resource lock's set (the resource, then options
	// "resources"); left out for a one-resource lock.
	Resources []string `json:"resources,omitempty"`
	// Election and Value: a campaign's leadership (lock_campaign), its
	// term being Fence; left out for a lock.
	Election string `json:"election,omitempty"`
	Value    string `json:"value,omitempty"`
}

func info(lo *lockObj) (string, *result) {
	lo.mu.Lock()
	released, election, value := lo.released, lo.election, lo.value
	lo.mu.Unlock()
	b, e := json.Marshal(lockInfo{
		Handle: lo.id, Client: lo.client.id,
		Resource: lo.l.Resource(), Key: lo.l.Key(), Token: lo.l.Token(),
		TTLMs: lo.l.TTL().Milliseconds(), ValidityMs: lo.l.Validity().Milliseconds(),
		AutoExtend: lo.l.AutoExtend(), Lost: lo.l.IsLost(), Released: released,
		Fence: lo.l.Fence(), Reentered: lo.l.Reentered(), Resources: multiInfo(lo.l), Mode: lo.l.Mode().String(),
		Election: election, Value: value,
	})
	if e != nil {
		return "", &result{statusInternal, e.Error()}
	}
	return string(b), nil
}

// inspectionJSON is the JSON of lock_inspect.
type inspectionJSON struct {
	Held       bool            `json:"held"`
	ValidityMs int64           `json:"validity_ms"` // -1: no expiry
	Owner      string          `json:"owner"`
	Nodes      []nodeStateJSON `json:"nodes"`
	// A semaphore's inspection (lock_inspect_ex with "permits") only.
	Permits int           `json:"permits,omitempty"`
	InUse   *int          `json:"in_use,omitempty"`
	Holders *[]holderJSON `json:"holders,omitempty"`
	// A read-write lock's inspection (lock_inspect_ex with "mode") only:
	// held, validity_ms and owner are its writer's.
	Readers *[]readerJSON `json:"readers,omitempty"`
}

// readerJSON is one reader of a read-write lock held on a quorum.
type readerJSON struct {
	Owner      string `json:"owner"`
	ValidityMs int64  `json:"validity_ms"` // -1: no expiry
}

// holderJSON is one held permit of a semaphore.
type holderJSON struct {
	Slot       int    `json:"slot"`
	Owner      string `json:"owner"`
	ValidityMs int64  `json:"validity_ms"` // -1: no expiry
}

type nodeStateJSON struct {
	Node   int     `json:"node"`
	Addr   string  `json:"addr"`
	Locked bool    `json:"locked"`
	Holder bool    `json:"holder"`
	Owner  string  `json:"owner"`
	TTLMs  int64   `json:"ttl_ms"` // -1: none (no expiry, or no key)
	Error  *string `json:"error"`  // null: the node answered
}

func millisOrNone(d time.Duration) int64 {
	if d == core.NoExpiry {
		return -1
	}
	return d.Milliseconds()
}

func marshalInspection(in *core.Inspection, rw bool) (string, error) {
	j := inspectionJSON{Held: in.Held, ValidityMs: millisOrNone(in.Validity), Owner: in.Owner, Nodes: make([]nodeStateJSON, len(in.Nodes))}
	for i, n := range in.Nodes {
		s := nodeStateJSON{Node: n.Node, Addr: n.Addr, Locked: n.Locked, Holder: n.Holder, Owner: n.Owner, TTLMs: millisOrNone(n.TTL)}
		if n.Err != nil {
			msg := n.Err.Error()
			s.Error = &msg
		}
		j.Nodes[i] = s
	}
	if in.Permits > 0 {
		inUse := in.InUse
		holders := []holderJSON{}
		for _, h := range in.Holders {
			holders = append(holders, holderJSON{Slot: h.Slot, Owner: h.Owner, ValidityMs: millisOrNone(h.Validity)})
		}
		j.Permits, j.InUse, j.Holders = in.Permits, &inUse, &holders
	}
	if rw {
		readers := []readerJSON{}
		for _, r := range in.Readers {
			readers = append(readers, readerJSON{Owner: r.Owner, ValidityMs: millisOrNone(r.Validity)})
		}
		j.Readers = &readers
	}
	b, e := json.Marshal(j)
	return string(b), e
}

// inspect blocks for one inspection round (bounded by the node timeout).
// Freeing the client meanwhile ends it with LOCK_CANCELED.
func inspect(co *clientObj, res string, rw bool, iopts ...core.InspectOption) (string, *result) {
	ctx, op, r := co.newOp(blockingCtx)
	if r != nil {
		return "", r
	}
	in, e := co.c.Inspect(ctx, res, iopts...)
	canceled := op.finish()
	co.endOp(op)
	switch {
	case canceled:
		return "", &result{statusCanceled, msgCanceled}
	case e != nil:
		return "", errResult(e)
	}
	js, e := marshalInspection(in, rw)
	if e != nil {
		return "", &result{statusInternal, e.Error()}
	}
	return js, nil
}

// inspectNotifyFunc receives the outcome of lock_inspect_async: the JSON on
// LOCK_OK ("" otherwise), the message otherwise ("" on LOCK_OK).
type inspectNotifyFunc func(status int32, js string, msg string)

// inspectAsync starts an inspection and returns its op handle.
func inspectAsync(co *clientObj, res string, notify inspectNotifyFunc) (uint64, *result) {
	ctx, op, id, r := newHandleOp(co)
	if r != nil {
		return 0, r
	}
	var js string // written by fn, read by the notify after it, on one goroutine
	runAsync(ctx, co, op, func(st int32, _ uint64, msg string) {
		if st != statusOK {
			js = ""
		}
		notify(st, js, msg)
	}, func(ctx context.Context) (uint64, error) {
		in, e := co.c.Inspect(ctx, res)
		if e != nil {
			return 0, e
		}
		js, e = marshalInspection(in, false)
		return 0, e
	})
	return id, nil
}
