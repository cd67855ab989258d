package main

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trampoline.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/hostabi"
)

func main() {}

// setErr stores msg in *err as a C string (the caller frees it with
// lock_string_free), when err is not NULL.
func setErr(err **C.char, msg string) {
	if err != nil {
		*err = C.CString(msg)
	}
}

// clearErr is the success case: *err = NULL.
func clearErr(err **C.char) {
	if err != nil {
		*err = nil
	}
}

// ret reports r (nil: LOCK_OK) through the status and *err.
func ret(err **C.char, r *result) C.int32_t {
	if r == nil {
		return statusOK
	}
	setErr(err, r.msg)
	return C.int32_t(r.code)
}

func retErr(err **C.char, e error) C.int32_t { return ret(err, errResult(e)) }

// stringAnswerCall checks the arguments of an export that takes a client
// handle and a string and answers a C string through out (lock_inspect,
// lock_leader): out is set to NULL first, so that a failed call leaves
// nothing to free; then the handle, the string (read by arg) and out
// itself are checked, in that order (outName names out in the error).
func stringAnswerCall(client C.uint64_t, s *C.char, arg func(*C.char) (string, error), out **C.char, outName string) (*clientObj, string, *result) {
	if out != nil {
		*out = nil
	}
	co, r := lookupClient(uint64(client))
	if r != nil {
		return nil, "", r
	}
	v, e := arg(s)
	if e != nil {
		return nil, "", errResult(e)
	}
	if out == nil {
		return nil, "", errResult(argErr(outName, "must not be NULL"))
	}
	return co, v, nil
}

// guard turns a panic into LOCK_INTERNAL. Use as: defer guard(err, &status).
func guard(err **C.char, status *C.int32_t) {
	if r := recover(); r != nil {
		if err != nil && *err != nil {
			C.free(unsafe.Pointer(*err))
			*err = nil
		}
		*status = ret(err, &result{statusInternal, fmt.Sprintf("liblock: internal error: %v", r)})
	}
}

// goStringMax copies a NUL-terminated C string of at most max bytes; longer
// strings are reported without being copied whole.
func goStringMax(s *C.char, max int) (string, bool) {
	n := int(C.strnlen(s, C.size_t(max+1)))
	if n > max {
		return "", false
	}
	return C.GoStringN(s, C.int(n)), true
}

// cNotify makes a notifyFunc that calls a C callback; the message is a C
// string valid only during the call.
func cNotify(cb C.lock_callback, ud C.uintptr_t) notifyFunc {
	return func(status int32, handle uint64, msg string) {
		var cmsg *C.char
		if msg != "" {
			cmsg = C.CString(msg)
			defer C.free(unsafe.Pointer(cmsg))
		}
		C.liblock_invoke(cb, ud, C.int32_t(status), C.uint64_t(handle), cmsg)
	}
}

// startAsync runs start, an _async export's start of its operation, and
// writes the operation's handle to *outOp (when outOp is not NULL). start's
// callback calls hold first: the operation may end, and call back, before
// start returns, and the caller's callback must find *out_op written.
func startAsync(outOp *C.uint64_t, start func(hold func()) (uint64, *result)) *result {
	ready := make(chan struct{})
	defer close(ready)
	id, r := start(func() { <-ready })
	if r == nil && outOp != nil {
		*outOp = C.uint64_t(id)
	}
	return r
}

// cNotifyOrNil is cNotify, or nil for a NULL cb (no callback: lock_on_lost
// and lock_client_on_lost remove the one set).
func cNotifyOrNil(cb C.lock_callback, ud C.uintptr_t) notifyFunc {
	if cb == nil {
		return nil
	}
	return cNotify(cb, ud)
}

// cInspectNotify makes an inspectNotifyFunc that calls a C
// lock_inspect_callback; the strings are C strings valid only during the
// call.
func cInspectNotify(cb C.lock_inspect_callback, ud C.uintptr_t) inspectNotifyFunc {
	return func(status int32, js string, msg string) {
		var cjs, cmsg *C.char
		if js != "" {
			cjs = C.CString(js)
			defer C.free(unsafe.Pointer(cjs))
		}
		if msg != "" {
			cmsg = C.CString(msg)
			defer C.free(unsafe.Pointer(cmsg))
		}
		C.liblock_invoke_inspect(cb, ud, C.int32_t(status), cjs, cmsg)
	}
}

// resourceArg checks a resource argument: not NULL, 1..MaxResourceLength
// bytes of UTF-8.
func resourceArg(resource *C.char) (string, error) {
	if resource == nil {
		return "", argErr("resource", "must not be NULL")
	}
	res, ok := goStringMax(resource, core.MaxResourceLength)
	if !ok {
		return "", argErr("resource", "longer than %d bytes", core.MaxResourceLength)
	}
	if e := engine.CheckResource(res); e != nil {
		return "", e
	}
	return res, nil
}

// acquireArgs checks the arguments shared by both acquire forms.
func acquireArgs(resource *C.char, ttlMs C.int64_t, optionsJSON *C.char) (string, time.Duration, acquireOptions, error) {
	var none acquireOptions
	if resource == nil {
		return "", 0, none, argErr("resource", "must not be NULL")
	}
	res, ok := goStringMax(resource, core.MaxResourceLength)
	if !ok {
		return "", 0, none, argErr("resource", "longer than %d bytes", core.MaxResourceLength)
	}
	if res == "" {
		return "", 0, none, argErr("resource", "must not be empty")
	}
	ttl, e := ttlFromMillis(int64(ttlMs))
	if e != nil {
		return "", 0, none, e
	}
	if optionsJSON == nil {
		return res, ttl, none, nil
	}
	js, ok := goStringMax(optionsJSON, maxJSONLength)
	if !ok {
		return "", 0, none, argErr("options", "longer than %d bytes", maxJSONLength)
	}
	opts, e := parseOptions(js, false)
	if e != nil {
		return "", 0, none, e
	}
	if e := checkMulti(res, opts); e != nil {
		return "", 0, none, e
	}
	return res, ttl, opts, nil
}

//export lock_abi_version
func lock_abi_version() C.int32_t { return abiVersion }

//export lock_engine_protocol_version
func lock_engine_protocol_version() C.int32_t { return engineProtocolVersion }

//export lock_string_free
func lock_string_free(s *C.char) {
	defer func() { _ = recover() }()
	if s != nil {
		C.free(unsafe.Pointer(s))
	}
}

//export lock_client_new
func lock_client_new(configJSON *C.char, outClient *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	if configJSON == nil {
		return retErr(err, argErr("config_json", "must not be NULL"))
	}
	if outClient == nil {
		return retErr(err, argErr("out_client", "must not be NULL"))
	}
	js, ok := goStringMax(configJSON, maxJSONLength)
	if !ok {
		return retErr(err, argErr("config", "longer than %d bytes", maxJSONLength))
	}
	id, r := clientNew(js)
	if r == nil {
		*outClient = C.uint64_t(id)
	}
	return ret(err, r)
}

//export lock_acquire
func lock_acquire(client C.uint64_t, resource *C.char, ttlMs C.int64_t, optionsJSON *C.char, outLock *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, r := lookupClient(uint64(client))
	if r != nil {
		return ret(err, r)
	}
	// From here on, freeing the client makes this call end CANCELED.
	blockingAcquires.Add(1)
	defer blockingAcquires.Add(-1)
	res, ttl, opts, e := acquireArgs(resource, ttlMs, optionsJSON)
	if e != nil {
		return retErr(err, e)
	}
	if outLock == nil {
		return retErr(err, argErr("out_lock", "must not be NULL"))
	}
	id, r := acquire(co, res, ttl, opts)
	if r == nil {
		*outLock = C.uint64_t(id)
	}
	return ret(err, r)
}

//export lock_extend
func lock_extend(lock C.uint64_t, ttlMs C.int64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, r := lookupLock(uint64(lock))
	if r != nil {
		return ret(err, r)
	}
	ttl, e := ttlFromMillis(int64(ttlMs))
	if e != nil {
		return retErr(err, e)
	}
	return ret(err, extend(lo, ttl))
}

//export lock_release
func lock_release(lock C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, r := lookupLock(uint64(lock))
	if r != nil {
		return ret(err, r)
	}
	return ret(err, release(lo))
}

//export lock_free
func lock_free(handle C.uint64_t) (status C.int32_t) {
	defer guard(nil, &status)
	return C.int32_t(freeHandle(uint64(handle)))
}

//export lock_acquire_async
func lock_acquire_async(client C.uint64_t, resource *C.char, ttlMs C.int64_t, optionsJSON *C.char, cb C.lock_callback, ud C.uintptr_t, outOp *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, r := lookupClient(uint64(client))
	if r != nil {
		return ret(err, r)
	}
	res, ttl, opts, e := acquireArgs(resource, ttlMs, optionsJSON)
	if e != nil {
		return retErr(err, e)
	}
	if cb == nil {
		return retErr(err, argErr("cb", "must not be NULL"))
	}
	notify := cNotify(cb, ud)
	return ret(err, startAsync(outOp, func(hold func()) (uint64, *result) {
		return acquireAsync(co, res, ttl, opts, func(st int32, h uint64, msg string) { hold(); notify(st, h, msg) })
	}))
}

//export lock_extend_async
func lock_extend_async(lock C.uint64_t, ttlMs C.int64_t, cb C.lock_callback, ud C.uintptr_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, r := lookupLock(uint64(lock))
	if r != nil {
		return ret(err, r)
	}
	ttl, e := ttlFromMillis(int64(ttlMs))
	if e != nil {
		return retErr(err, e)
	}
	if cb == nil {
		return retErr(err, argErr("cb", "must not be NULL"))
	}
	return ret(err, extendAsync(lo, ttl, cNotify(cb, ud)))
}

//export lock_release_async
func lock_release_async(lock C.uint64_t, cb C.lock_callback, ud C.uintptr_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, r := lookupLock(uint64(lock))
	if r != nil {
		return ret(err, r)
	}
	if cb == nil {
		return retErr(err, argErr("cb", "must not be NULL"))
	}
	return ret(err, releaseAsync(lo, cNotify(cb, ud)))
}

//export lock_cancel
func lock_cancel(op C.uint64_t) (status C.int32_t) {
	defer guard(nil, &status)
	return C.int32_t(cancelOp(uint64(op)))
}

//export lock_on_lost
func lock_on_lost(lock C.uint64_t, cb C.lock_callback, ud C.uintptr_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, r := lookupLock(uint64(lock))
	if r != nil {
		return ret(err, r)
	}
	onLost(lo, cNotifyOrNil(cb, ud))
	return statusOK
}

//export lock_client_on_lost
func lock_client_on_lost(client C.uint64_t, cb C.lock_callback, ud C.uintptr_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, r := lookupClient(uint64(client))
	if r != nil {
		return ret(err, r)
	}
	clientOnLost(co, cNotifyOrNil(cb, ud))
	return statusOK
}

//export lock_info
func lock_info(lock C.uint64_t, infoJSON **C.char, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, r := lookupLock(uint64(lock))
	if r != nil {
		return ret(err, r)
	}
	if infoJSON == nil {
		return retErr(err, argErr("info_json", "must not be NULL"))
	}
	js, r := info(lo)
	if r == nil {
		*infoJSON = C.CString(js)
	}
	return ret(err, r)
}

//export lock_inspect
func lock_inspect(client C.uint64_t, resource *C.char, inspectionJSON **C.char, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, res, r := stringAnswerCall(client, resource, resourceArg, inspectionJSON, "inspection_json")
	if r != nil {
		return ret(err, r)
	}
	js, r := inspect(co, res, false)
	if r == nil {
		*inspectionJSON = C.CString(js)
	}
	return ret(err, r)
}

//export lock_inspect_ex
func lock_inspect_ex(client C.uint64_t, resource *C.char, optionsJSON *C.char, inspectionJSON **C.char, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	if inspectionJSON != nil {
		*inspectionJSON = nil
	}
	co, r := lookupClient(uint64(client))
	if r != nil {
		return ret(err, r)
	}
	res, e := resourceArg(resource)
	if e != nil {
		return retErr(err, e)
	}
	var optStr string
	if optionsJSON != nil {
		optStr = C.GoString(optionsJSON)
	}
	permits, mode, e := hostabi.ParseInspectOptions(optStr, optionsJSON == nil)
	if e != nil {
		return retErr(err, e)
	}
	if inspectionJSON == nil {
		return retErr(err, argErr("inspection_json", "must not be NULL"))
	}
	var iopts []core.InspectOption
	if permits > 0 {
		iopts = append(iopts, core.InspectPermits(permits))
	}
	rw := mode != core.ModeExclusive
	if rw {
		iopts = append(iopts, core.InspectReadWrite())
	}
	js, r := inspect(co, res, rw, iopts...)
	if r == nil {
		*inspectionJSON = C.CString(js)
	}
	return ret(err, r)
}

//export lock_inspect_async
func lock_inspect_async(client C.uint64_t, resource *C.char, cb C.lock_inspect_callback, ud C.uintptr_t, outOp *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, r := lookupClient(uint64(client))
	if r != nil {
		return ret(err, r)
	}
	res, e := resourceArg(resource)
	if e != nil {
		return retErr(err, e)
	}
	if cb == nil {
		return retErr(err, argErr("cb", "must not be NULL"))
	}
	notify := cInspectNotify(cb, ud)
	return ret(err, startAsync(outOp, func(hold func()) (uint64, *result) {
		return inspectAsync(co, res, func(st int32, js string, msg string) { hold(); notify(st, js, msg) })
	}))
}

// Debug exports, for leak and panic tests; not part of the contract.

//export lock_debug_goroutines
func lock_debug_goroutines() C.int64_t { return C.int64_t(runtime.NumGoroutine()) }

//export lock_debug_handles
func lock_debug_handles() C.int64_t { return C.int64_t(handles.len()) }

// blockingAcquires counts the lock_acquire calls that have found their
// client and not yet returned.
var blockingAcquires atomic.Int64

// lock_debug_blocking tells a test when a blocking lock_acquire is under way
// (its client found), so that it can free the client under it without a
// sleep standing in for that condition.
//
//export lock_debug_blocking
func lock_debug_blocking() C.int64_t { return C.int64_t(blockingAcquires.Load()) }

// lock_debug_panic panics inside an export, to show that a panic becomes
// LOCK_INTERNAL and the process survives.
//
//export lock_debug_panic
func lock_debug_panic(err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	panic("lock_debug_panic called")
}
