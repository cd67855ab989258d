//go:build wasip1

package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
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

// handles maps every live handle to a *clientEntry or *lockEntry. Handles
// count up from 1 and are never reused (kept below 2^53).
var (
	handles    = map[uint64]any{}
	nextHandle uint64
)

type clientEntry struct {
	c     *core.Client
	locks map[uint64]struct{}
}

type lockEntry struct {
	l        *core.Lock
	client   uint64
	released bool
}

func newHandle(v any) uint64 {
	nextHandle++
	handles[nextHandle] = v
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
		setErr(errOut, fmt.Errorf("liblock: internal error: %v", r))
	}
}

// setErr writes a JSON error record's pointer and length (2 × uint32) at
// out, or two zeros when err is nil.
func setErr(out unsafe.Pointer, err error) int32 {
	if out == nil {
		return abi.StatusOf(err)
	}
	if err == nil {
		putPair(out, nil, 0)
		return abi.OK
	}
	rec := abi.EncodeError(err)
	b := alloc(len(rec))
	copy(b, rec)
	putPair(out, unsafe.Pointer(unsafe.SliceData(b)), len(b))
	return abi.StatusOf(err)
}

func putPair(out, p unsafe.Pointer, n int) {
	o := unsafe.Slice((*byte)(out), 8)
	binary.LittleEndian.PutUint32(o[0:], uint32(uintptr(p)))
	binary.LittleEndian.PutUint32(o[4:], uint32(n))
}

func putU64(out unsafe.Pointer, v uint64) {
	if out != nil {
		binary.LittleEndian.PutUint64(unsafe.Slice((*byte)(out), 8), v)
	}
}

// str copies a host string out of module memory; nil means NULL.
func str(p unsafe.Pointer, n uint32) (string, bool) {
	if p == nil {
		return "", false
	}
	return string(unsafe.Slice((*byte)(p), n)), true
}

var errInvalidHandle = errors.New("liblock: invalid handle")

func invalidHandle(errOut unsafe.Pointer, what string) int32 {
	setErr(errOut, fmt.Errorf("%w: not a live %s handle", errInvalidHandle, what))
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
	h := newHandle(&clientEntry{c: c, locks: map[uint64]struct{}{}})
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
	ce, ok := handles[client].(*clientEntry)
	if !ok {
		return invalidHandle(errOut, "client")
	}
	resource, ok := str(resPtr, resLen)
	if !ok {
		return setErr(errOut, &core.ArgumentError{Arg: "resource", Reason: "must not be NULL"})
	}
	ttl, err := abi.TTLFromMillis(ttlMS)
	if err != nil {
		return setErr(errOut, err)
	}
	optJSON, hasOpts := str(optPtr, optLen)
	o, err := abi.ParseOptions(optJSON, !hasOpts)
	if err != nil {
		return setErr(errOut, err)
	}
	ctx := context.Background()
	var stopPoll func()
	if o.Wait > 0 {
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
	l, err := ce.c.Acquire(ctx, resource, ttl, o.CoreOptions()...)
	if stopPoll != nil {
		stopPoll()
	}
	if err != nil {
		return setErr(errOut, err)
	}
	h := newHandle(&lockEntry{l: l, client: client})
	ce.locks[h] = struct{}{}
	putU64(outLock, h)
	return setErr(errOut, nil)
}

//go:wasmexport lock_extend
func lockExtend(lock uint64, ttlMS int64, errOut unsafe.Pointer) (status int32) {
	defer guard(&status, errOut)
	le, ok := handles[lock].(*lockEntry)
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
	le, ok := handles[lock].(*lockEntry)
	if !ok {
		return invalidHandle(errOut, "lock")
	}
	err := le.l.Release(context.Background())
	if err == nil || errors.Is(err, core.ErrLost) {
		le.released = true
	}
	return setErr(errOut, err)
}

// lock_free frees a client (closing it: its locks are released and freed)
// or a lock (released first if still held).
//
//go:wasmexport lock_free
func lockFree(h uint64) (status int32) {
	defer guard(&status, nil)
	switch e := handles[h].(type) {
	case *clientEntry:
		delete(handles, h)
		for lh := range e.locks {
			delete(handles, lh)
		}
		_ = e.c.Close()
	case *lockEntry:
		delete(handles, h)
		if ce, ok := handles[e.client].(*clientEntry); ok {
			delete(ce.locks, h)
		}
		if !e.released {
			_ = e.l.Release(context.Background())
		}
	default:
		return abi.InvalidHandle
	}
	return abi.OK
}

// lock_info writes the pointer and length of a JSON object describing the
// lock at out (2 × uint32); free it with lock_buf_free.
//
//go:wasmexport lock_info
func lockInfo(lock uint64, out, errOut unsafe.Pointer) (status int32) {
	defer guard(&status, errOut)
	le, ok := handles[lock].(*lockEntry)
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
	le, ok := handles[lock].(*lockEntry)
	if !ok {
		return abi.InvalidHandle
	}
	// Each yield lets the scheduler run expired timers; their callbacks
	// (core's tick and expire) start goroutines that run to their end: the
	// host call inside them is synchronous, and nothing preempts.
	runtime.Gosched()
	for i := 0; i < pollYields && runtime.NumGoroutine() > 1; i++ {
		runtime.Gosched()
	}
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
	case l.AutoExtend():
		s.NextPollMS = min(max(l.TTL()/10, time.Millisecond), maxPollInterval, l.Validity()+time.Millisecond).Milliseconds()
	default:
		// The expiry timer fires when the validity ends.
		s.NextPollMS = (l.Validity() + time.Millisecond).Milliseconds()
	}
	if l.AutoExtend() {
		s.Flags |= abi.FlagAutoExtend
	}
	if out != nil {
		abi.PutState(unsafe.Slice((*byte)(out), abi.StateSize), s)
	}
	return abi.OK
}
