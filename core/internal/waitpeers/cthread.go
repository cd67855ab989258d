package waitpeers

/*
#include <stdlib.h>
#include "cthread.h"
*/
import "C"

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/liblock/liblock/core"
)

// CThread runs acquire+release pairs on a thread of its own that Go did not
// create, each call entering Go from C as the C ABI's blocking calls do.
// One per process.
type CThread struct {
	done *os.File
	lat  *C.int64_t
	cap  int
}

var (
	cthreadOnce sync.Once
	cthread     *CThread
	cthreadErr  error

	// The client and lock of the pair in progress (one C thread).
	cClient *core.Client
	cLock   *core.Lock
	cCtx    context.Context
)

// StartCThread starts the process's C thread.
func StartCThread() (*CThread, error) {
	cthreadOnce.Do(func() {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
			cthreadErr = err
			return
		}
		if C.cthread_start(C.int(p[1])) != 0 {
			cthreadErr = errors.New("pthread_create failed")
			return
		}
		// The burst's end is read on Go's netpoller: no goroutine sits in a
		// cgo call while the C thread runs its pairs.
		cthread = &CThread{done: os.NewFile(uintptr(p[0]), "cthread-done")}
	})
	return cthread, cthreadErr
}

// Burst runs n pairs on c from the C thread, each call with ctx, and
// returns each one's latency.
func (t *CThread) Burst(c *core.Client, ctx context.Context, n int) ([]time.Duration, error) {
	if n > t.cap {
		if t.lat != nil {
			C.free(unsafe.Pointer(t.lat))
		}
		t.lat = (*C.int64_t)(C.malloc(C.size_t(n) * 8))
		t.cap = n
	}
	cClient, cCtx = c, ctx
	C.cthread_burst(t.lat, C.int(n))
	var b [1]byte
	if _, err := t.done.Read(b[:]); err != nil {
		return nil, err
	}
	if C.cthread_failed() != 0 {
		return nil, errors.New("a pair on the C thread failed")
	}
	out := make([]time.Duration, n)
	for i, v := range unsafe.Slice(t.lat, n) {
		out[i] = time.Duration(v)
	}
	return out, nil
}

//export goAcquire
func goAcquire() C.int {
	l, err := cClient.Acquire(cCtx, "bench-c", 10*time.Second)
	if err != nil {
		return 1
	}
	cLock = l
	return 0
}

//export goRelease
func goRelease() C.int {
	if err := cLock.Release(cCtx); err != nil {
		return 1
	}
	return 0
}
