package main

/*
#include <stdint.h>
#include <stddef.h>
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/liblock/liblock/core/hostabi"
)

// The engine interface (liblock.h, "THE ENGINE"): thin shims over package
// hostabi, which liblock.wasm exports too. No call blocks.

// maxOutCap bounds the output buffer we look at; more is never needed.
const maxOutCap = 1 << 30

//export lock_engine_new
func lock_engine_new(configJSON *C.char, outEngine *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	if configJSON == nil {
		return retErr(err, argErr("config_json", "must not be NULL"))
	}
	if outEngine == nil {
		return retErr(err, argErr("out_engine", "must not be NULL"))
	}
	js, ok := goStringMax(configJSON, maxJSONLength)
	if !ok {
		return retErr(err, argErr("config", "longer than %d bytes", maxJSONLength))
	}
	h, e := hostabi.New(js)
	if e != nil {
		return retErr(err, e)
	}
	*outEngine = C.uint64_t(h)
	return statusOK
}

//export lock_engine_step
func lock_engine_step(eng C.uint64_t, in *C.uint8_t, inLen C.size_t, out *C.uint8_t, outCap C.size_t) (n C.int64_t) {
	defer func() {
		if r := recover(); r != nil {
			n = -statusInternal
		}
	}()
	h := uint64(eng)
	if !hostabi.Exists(h) {
		return -statusInvalidHandle
	}
	if (in == nil && inLen > 0) || out == nil || inLen > hostabi.MaxEvent {
		return -statusInvalidArgument
	}
	// Views of the caller's memory, valid during the call: hostabi keeps
	// no reference to in and writes at most outCap bytes of out.
	var inb []byte
	if inLen > 0 {
		inb = unsafe.Slice((*byte)(unsafe.Pointer(in)), int(inLen))
	}
	outb := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(min(outCap, maxOutCap)))
	w, e := hostabi.Step(h, inb, outb)
	yieldNow()
	if e != nil {
		return -C.int64_t(statusOf(e))
	}
	return C.int64_t(w)
}

// lastYield is when a step last let the scheduler run (yieldNow), as
// nanotime from time.Now's monotonic clock.
var lastYield atomic.Int64

// yieldNow calls runtime.Gosched at most every yieldEvery. A host that
// steps the engine from its own thread (Node's event loop) never lets the
// Go scheduler run between its calls: the goroutine of the callbacks looks
// to sysmon like one that has run for more than 10 ms, which it preempts,
// retaking the P and waking threads, and then polls every 20 µs for a
// while. A yield now and then keeps the scheduler's tick moving.
func yieldNow() {
	now := time.Since(processStart).Nanoseconds()
	if now-lastYield.Load() >= int64(yieldEvery) {
		lastYield.Store(now)
		runtime.Gosched()
	}
}

const yieldEvery = 2 * time.Millisecond

var processStart = time.Now()

//export lock_engine_free
func lock_engine_free(eng C.uint64_t) (status C.int32_t) {
	defer func() {
		if r := recover(); r != nil {
			status = statusInternal
		}
	}()
	if hostabi.Free(uint64(eng)) != nil {
		return statusInvalidHandle
	}
	return statusOK
}
