//go:build wasip1

package main

import (
	"context"
	"errors"
	"time"
	"unsafe"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/wasm/internal/abi"
)

// The module is single-threaded: one export runs at a time, and goroutines
// run only inside an export. So the tables below need no locks.

// buffers pins the memory handed to the host (lock_buf_alloc, error records,
// info JSON) until lock_buf_free.
var buffers = map[unsafe.Pointer][]byte{}

// handles maps every live handle to a *clientEntry, *lockEntry or
// *opEntry. Handles count up from 1 and are never reused (kept below 2^53).
var (
	handles    handleTable
	nextHandle uint64
)

// clientEntry is a client. Its locks and operations are found by a scan of
// handles when it is freed (rare), so that an acquire and a release need
// not keep a per-client set too.
type clientEntry struct {
	c *core.Client
}

type lockEntry struct {
	l        *core.Lock
	client   uint64
	released bool
	events   bool // acquired by lock_acquire_start: its loss is a lock_run event
}

func newHandle(v any) uint64 {
	nextHandle++
	handles.put(nextHandle, v)
	return nextHandle
}

func alloc(n int) []byte {
	b := make([]byte, max(n, 1))
	buffers[unsafe.Pointer(&b[0])] = b
	return b[:n]
}

//go:wasmexport lock_abi_version
func lockABIVersion() int32 { return abi.Version }

// lock_buf_alloc returns size bytes of module memory for the host to fill
// (strings going in) or 0 when size is too large; free with lock_buf_free.
//
//go:wasmexport lock_buf_alloc
func lockBufAlloc(size uint32) unsafe.Pointer {
	if size > 64<<20 {
		return nil
	}
	b := alloc(int(size))
	return unsafe.Pointer(unsafe.SliceData(b[:max(len(b), 1)]))
}

// lock_buf_free frees a buffer from lock_buf_alloc, an error record or an
// info JSON. 0 and unknown pointers are ignored.
//
//go:wasmexport lock_buf_free
func lockBufFree(p unsafe.Pointer) { delete(buffers, p) }

// guard turns a panic into INTERNAL.
func guard(status *int32, errOut unsafe.Pointer) {
	if r := recover(); r != nil {
		*status = abi.Internal
		setErr(errOut, internalError(r))
	}
}

// setErr writes a JSON error record's pointer and length (2 × uint32) at
// out, or two zeros when err is nil.
func setErr(out unsafe.Pointer, err error) int32 {
	if out == nil {
		return statusOf(err)
	}
	if err == nil {
		putPair(out, nil, 0)
		return abi.OK
	}
	rec := abi.EncodeError(err)
	b := alloc(len(rec))
	copy(b, rec)
	putPair(out, unsafe.Pointer(unsafe.SliceData(b)), len(b))
	return statusOf(err)
}

// statusOf is abi.StatusOf plus the module's own invalid-handle error.
func statusOf(err error) int32 {
	if errors.Is(err, errInvalidHandle) {
		return abi.InvalidHandle
	}
	return abi.StatusOf(err)
}

func putPair(out, p unsafe.Pointer, n int) {
	o := unsafe.Slice((*byte)(out), 8)
	abi.PutLE32(o[0:], uint32(uintptr(p)))
	abi.PutLE32(o[4:], uint32(n))
}

func putU64(out unsafe.Pointer, v uint64) {
	if out != nil {
		abi.PutLE64(unsafe.Slice((*byte)(out), 8), v)
	}
}

// str copies a host string out of module memory; nil means NULL.
func str(p unsafe.Pointer, n uint32) (string, bool) {
	if p == nil {
		return "", false
	}
	return string(unsafe.Slice((*byte)(p), n)), true
}

func invalidHandle(errOut unsafe.Pointer, what string) int32 {
	setErr(errOut, &handleError{what: what})
	return abi.InvalidHandle
}

//go:wasmexport lock_client_new
func lockClientNew(cfgPtr unsafe.Pointer, cfgLen uint32, outClient, errOut unsafe.Pointer) (status int32) {
	defer guard(&status, errOut)
	putU64(outClient, 0)
	s, ok := str(cfgPtr, cfgLen)
	if !ok {
		return setErr(errOut, &core.ArgumentError{Arg: "config_json", Reason: "must not be NULL"})
	}
	cfg, err := abi.ParseConfig(s)
	if err != nil {
		return setErr(errOut, err)
	}
	t := newTransport(cfg)
	c, err := core.NewWithTransport(t, cfg)
	if err != nil {
		return setErr(errOut, err)
	}
	h := newHandle(&clientEntry{c: c})
	t.client = h
	putU64(outClient, h)
	return setErr(errOut, nil)
}

// pollInterval is how often a waiting acquire asks the host whether to stop.
const pollInterval = 5 * time.Millisecond

//go:wasmexport lock_acquire
func lockAcquire(client uint64, resPtr unsafe.Pointer, resLen uint32, ttlMS int64, optPtr unsafe.Pointer, optLen uint32, outLock, errOut unsafe.Pointer) (status int32) {
	defer guard(&status, errOut)
	putU64(outLock, 0)
	req, err := parseAcquire(client, resPtr, resLen, ttlMS, optPtr, optLen)
	if err != nil {
		return setErr(errOut, err)
	}
	ctx := context.Background()
	var stopPoll func()
	if req.opts.Wait > 0 {
		// Waits sleep inside this call; a goroutine asks the host every
		// pollInterval whether to give up.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(pollInterval)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if hostInterrupted() != 0 {
						cancel()
						return
					}
				}
			}
		}()
		stopPoll = func() { close(stop); <-done; cancel() }
	}
	l, err := req.ce.c.Acquire(ctx, req.resource, req.ttl, req.opts.CoreOptions()...)
	if stopPoll != nil {
		stopPoll()
	}
	if err != nil {
		return setErr(errOut, err)
	}
	putU64(outLock, addLock(client, l, false))
	return setErr(errOut, nil)
}

// acquireRequest is a validated lock_acquire or lock_acquire_start call.
type acquireRequest struct {
	ce       *clientEntry
	resource string
	ttl      time.Duration
	opts     abi.AcquireOptions
}

// parseAcquire validates an acquire's arguments the same way for the
// blocking and the non-blocking export.
func parseAcquire(client uint64, resPtr unsafe.Pointer, resLen uint32, ttlMS int64, optPtr unsafe.Pointer, optLen uint32) (acquireRequest, error) {
	ce, ok := handles.get(client).(*clientEntry)
	if !ok {
		return acquireRequest{}, &handleError{what: "client"}
	}
	resource, ok := str(resPtr, resLen)
	if !ok {
		return acquireRequest{}, &core.ArgumentError{Arg: "resource", Reason: "must not be NULL"}
	}
	ttl, err := abi.TTLFromMillis(ttlMS)
	if err != nil {
		return acquireRequest{}, err
	}
	optJSON, hasOpts := str(optPtr, optLen)
	o, err := abi.ParseOptions(optJSON, !hasOpts)
	if err != nil {
		return acquireRequest{}, err
	}
	return acquireRequest{ce: ce, resource: resource, ttl: ttl, opts: o}, nil
}

// addLock gives an acquired lock its handle. Locks of the non-blocking
// path (events) report their loss as a lock_run event.
func addLock(client uint64, l *core.Lock, events bool) uint64 {
	le := &lockEntry{l: l, client: client, events: events}
	h := newHandle(le)
	if events {
		l.OnLost(func(error) {
			if handles.get(h) == le {
				queued = append(queued, event{handle: h, kind: eventLost, status: abi.Lost})
			}
		})
	}
	return h
}

//go:wasmexport lock_extend
func lockExtend(lock uint64, ttlMS int64, errOut unsafe.Pointer) (status int32) {
	defer guard(&status, errOut)
	le, ok := handles.get(lock).(*lockEntry)
	if !ok {
		return invalidHandle(errOut, "lock")
	}
	ttl, err := abi.TTLFromMillis(ttlMS)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, le.l.Extend(context.Background(), ttl))
}

//go:wasmexport lock_release
func lockRelease(lock uint64, errOut unsafe.Pointer) (status int32) {
	defer guard(&status, errOut)
	le, ok := handles.get(lock).(*lockEntry)
	if !ok {
		return invalidHandle(errOut, "lock")
	}
	err := le.l.Release(context.Background())
	if err == nil || errors.Is(err, core.ErrLost) {
		le.released = true
	}
	return setErr(errOut, err)
}

// lock_free frees a client (closing it: its pending operations are
// canceled, its locks released and freed), a lock (released first if still
// held) or an acquire operation (canceled if pending; its lock released if it
// succeeded and was never taken).
//
//go:wasmexport lock_free
func lockFree(h uint64) (status int32) {
	defer guard(&status, nil)
	switch e := handles.get(h).(type) {
	case *clientEntry:
		// Pending acquires stop first (their cleanup needs the client),
		// then the client's locks are released by Close.
		for _, oh := range clientHandles(h, false) {
			op, ok := handles.get(oh).(*opEntry)
			handles.remove(oh) // first: a freed operation reports nothing
			if ok {
				op.stop()
			}
		}
		handles.remove(h)
		for _, lh := range clientHandles(h, true) {
			handles.remove(lh)
		}
		_ = e.c.Close()
	case *opEntry:
		handles.remove(h) // first: a freed operation reports nothing
		e.stop()
		if e.err == nil && e.lock != 0 {
			lockFree(e.lock) // acquired but never taken: release it
		}
	case *lockEntry:
		handles.remove(h)
		if !e.released {
			_ = e.l.Release(context.Background())
		}
	default:
		return abi.InvalidHandle
	}
	return abi.OK
}

// clientHandles returns the handles of the client's locks (locks) or
// operations (!locks).
func clientHandles(client uint64, locks bool) []uint64 {
	var hs []uint64
	handles.each(func(h uint64, v any) {
		switch e := v.(type) {
		case *lockEntry:
			if locks && e.client == client {
				hs = append(hs, h)
			}
		case *opEntry:
			if !locks && e.client == client {
				hs = append(hs, h)
			}
		}
	})
	return hs
}

// lock_info writes the pointer and length of a JSON object describing the
// lock at out (2 × uint32); free it with lock_buf_free.
//
//go:wasmexport lock_info
func lockInfo(lock uint64, out, errOut unsafe.Pointer) (status int32) {
	defer guard(&status, errOut)
	le, ok := handles.get(lock).(*lockEntry)
	if !ok {
		return invalidHandle(errOut, "lock")
	}
	l := le.l
	b := abi.EncodeInfo(abi.Info{
		Resource: l.Resource(), Key: l.Key(), Token: l.Token(),
		ValidityMS: l.Validity().Milliseconds(), TTLMS: l.TTL().Milliseconds(),
		AutoExtend: l.AutoExtend(), Lost: l.IsLost(), Released: le.released,
	})
	buf := alloc(len(b))
	copy(buf, b)
	putPair(out, unsafe.Pointer(unsafe.SliceData(buf)), len(buf))
	return setErr(errOut, nil)
}

// Auto-extension and expiry run on the core's timers, which fire only while
// an export runs. lock_poll lets every due timer of the module run (an
// extension round trip included), then writes the lock's state (64 bytes,
// see abi.State) at out: the host calls it again after next_poll_ms.
const (
	maxPollInterval = 100 * time.Millisecond
	pollYields      = 64
)

//go:wasmexport lock_poll
func lockPoll(lock uint64, out unsafe.Pointer) (status int32) {
	defer guard(&status, nil)
	le, ok := handles.get(lock).(*lockEntry)
	if !ok {
		return abi.InvalidHandle
	}
	runDue()
	l := le.l
	s := abi.State{Token: l.Token()}
	s.ValidityMS = l.Validity().Milliseconds()
	switch {
	case le.released:
		s.Flags |= abi.FlagReleased
		s.NextPollMS = -1
	case l.IsLost():
		s.Flags |= abi.FlagLost
		s.NextPollMS = -1
	default:
		s.NextPollMS = nextPoll(l).Milliseconds()
	}
	if l.AutoExtend() {
		s.Flags |= abi.FlagAutoExtend
	}
	if out != nil {
		abi.PutState(unsafe.Slice((*byte)(out), abi.StateSize), s)
	}
	return abi.OK
}
