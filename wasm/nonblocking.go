//go:build wasip1

package main

import (
	"context"
	"runtime"
	"time"
	"unsafe"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/wasm/internal/abi"
)

// The non-blocking acquire (lock_acquire_start, lock_run, lock_op_result,
// lock_cancel) lets one instance serve any number of concurrent acquires:
// each runs in its own goroutine, which the module's scheduler runs only
// while an export runs, so the host drives time with one timer calling
// lock_run. PROTOCOL.md §8a describes it for hosts.

// opEntry is one lock_acquire_start operation.
type opEntry struct {
	client uint64
	cancel context.CancelFunc
	done   chan struct{} // closed when the acquire returned
	lock   uint64        // the lock's handle when it succeeded
	err    error
}

// stop cancels the operation if it is pending and waits for its goroutine:
// the cleanup of its attempt runs now, inside the calling export.
func (op *opEntry) stop() {
	op.cancel()
	<-op.done
}

func (op *opEntry) finished() bool {
	select {
	case <-op.done:
		return true
	default:
		return false
	}
}

// event is one lock_run event (16 bytes on the wire).
type event struct {
	handle uint64
	kind   uint32
	status int32
}

const (
	eventOpDone = 1 // an acquire operation finished
	eventLost   = 2 // a lock of the non-blocking path was lost

	eventSize = 16
	// runInterval bounds next_run_ms while an acquire is pending: its
	// retries (2–50 ms backoff) and the local wake-ups happen on module
	// timers that only fire inside an export.
	runInterval = 5 * time.Millisecond
)

var (
	queued  []event // events not yet reported by lock_run
	pending int     // operations whose goroutine has not returned
)

//go:wasmexport lock_acquire_start
func lockAcquireStart(client uint64, resPtr unsafe.Pointer, resLen uint32, ttlMS int64, optPtr unsafe.Pointer, optLen uint32, outOp, errOut unsafe.Pointer) (status int32) {
	defer guard(&status, errOut)
	putU64(outOp, 0)
	req, err := parseAcquire(client, resPtr, resLen, ttlMS, optPtr, optLen)
	if err != nil {
		return setErr(errOut, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	op := &opEntry{client: client, cancel: cancel, done: make(chan struct{})}
	h := newHandle(op)
	pending++
	go func() {
		defer close(op.done)
		defer func() { pending-- }()
		defer cancel()
		defer func() {
			if r := recover(); r != nil {
				op.err = internalError(r)
				queued = append(queued, event{handle: h, kind: eventOpDone, status: abi.Internal})
			}
		}()
		l, err := req.ce.c.Acquire(ctx, req.resource, req.ttl, req.opts.CoreOptions()...)
		if handles.get(h) != op {
			// Freed while pending (lock_free of the op or its client):
			// nobody will take the lock, so it must not stay held.
			if err == nil {
				_ = l.Release(context.Background())
			}
			return
		}
		if err == nil {
			op.lock = addLock(client, l, true)
		}
		op.err = err
		queued = append(queued, event{handle: h, kind: eventOpDone, status: statusOf(err)})
	}()
	runDue() // the first attempt runs now
	putU64(outOp, h)
	return setErr(errOut, nil)
}

//go:wasmexport lock_op_result
func lockOpResult(h uint64, outLock, errOut unsafe.Pointer) (status int32) {
	defer guard(&status, errOut)
	putU64(outLock, 0)
	op, ok := handles.get(h).(*opEntry)
	if !ok {
		return invalidHandle(errOut, "operation")
	}
	if !op.finished() {
		setErr(errOut, nil)
		return abi.Pending
	}
	handles.remove(h)
	if op.err == nil {
		putU64(outLock, op.lock)
	}
	return setErr(errOut, op.err)
}

//go:wasmexport lock_cancel
func lockCancel(h uint64) (status int32) {
	defer guard(&status, nil)
	op, ok := handles.get(h).(*opEntry)
	if !ok || op.finished() {
		return abi.InvalidHandle
	}
	op.stop()
	return abi.OK
}

//go:wasmexport lock_run
func lockRun(out unsafe.Pointer, capacity uint32) (n int32) {
	defer func() {
		if r := recover(); r != nil {
			n = -1
		}
	}()
	if out == nil || capacity < 8 {
		return -1
	}
	runDue()
	buf := unsafe.Slice((*byte)(out), capacity)
	room := int(capacity-8) / eventSize
	for len(queued) > 0 && int(n) < room {
		e := queued[0]
		queued = queued[1:]
		if e.kind == eventLost {
			if _, live := handles.get(e.handle).(*lockEntry); !live {
				continue // freed since: nobody to tell
			}
		}
		b := buf[8+int(n)*eventSize:]
		abi.PutLE64(b[0:], e.handle)
		abi.PutLE32(b[8:], e.kind)
		abi.PutLE32(b[12:], uint32(e.status))
		n++
	}
	if len(queued) == 0 {
		queued = nil // let the backing array go
	}
	abi.PutLE64(buf[0:], uint64(nextRunMS()))
	return n
}

// nextRunMS is when lock_run must run again, in ms: at once while events
// wait, within runInterval while an acquire is pending, else when the first
// held lock needs its extension or expiry timer; -1 when nothing is
// scheduled.
func nextRunMS() int64 {
	if len(queued) > 0 {
		return 0
	}
	next, scheduled := time.Duration(0), false
	earlier := func(d time.Duration) {
		if !scheduled || d < next {
			next, scheduled = d, true
		}
	}
	if pending > 0 {
		earlier(runInterval)
	}
	handles.each(func(_ uint64, v any) {
		if le, ok := v.(*lockEntry); ok && !le.released && !le.l.IsLost() {
			earlier(nextPoll(le.l))
		}
	})
	if !scheduled {
		return -1
	}
	return max(next.Milliseconds(), 0)
}

// nextPoll is when a held lock's timer needs an export to fire in: its
// auto-extension (checked every ttl/10, at most 100 ms) or its expiry.
func nextPoll(l *core.Lock) time.Duration {
	if l.AutoExtend() {
		return min(max(l.TTL()/10, time.Millisecond), maxPollInterval, l.Validity()+time.Millisecond)
	}
	return l.Validity() + time.Millisecond
}

// runDue lets every goroutine that is runnable or whose timer is due run
// until it blocks: each yield lets the scheduler fire expired timers, and the
// goroutines they wake run to their next wait (host calls are synchronous and
// nothing preempts).
func runDue() {
	runtime.Gosched()
	for i := 0; i < pollYields && runtime.NumGoroutine() > 1; i++ {
		runtime.Gosched()
	}
}
