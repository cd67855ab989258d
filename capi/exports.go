// Command capi is liblock's C ABI, built with -buildmode=c-shared into
// liblock.so. The contract is liblock.h (and ../shared/spec/c-abi.md): every
// export here takes and returns plain C values, keeps objects behind handles
// (handles.go), turns panics into LOCK_INTERNAL and reports errors through
// the err out-parameter as C-heap strings.
package main

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trampoline.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/liblock/liblock/core"
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

// fail reports status with msg.
func fail(err **C.char, status int32, msg string) C.int32_t {
	setErr(err, msg)
	return C.int32_t(status)
}

// failErr reports a core error.
func failErr(err **C.char, e error) C.int32_t {
	return fail(err, statusOf(e), e.Error())
}

// guard turns a panic into LOCK_INTERNAL. Use as: defer guard(err, &status).
func guard(err **C.char, status *C.int32_t) {
	if r := recover(); r != nil {
		if err != nil {
			if *err != nil {
				C.free(unsafe.Pointer(*err))
				*err = nil
			}
		}
		*status = fail(err, statusInternal, fmt.Sprintf("liblock: internal error: %v", r))
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

// callback calls a C callback once; msg "" means NULL.
func callback(cb C.lock_callback, ud unsafe.Pointer, status int32, handle uint64, msg string) {
	var cmsg *C.char
	if msg != "" {
		cmsg = C.CString(msg)
		defer C.free(unsafe.Pointer(cmsg))
	}
	C.liblock_invoke(cb, ud, C.int32_t(status), C.uint64_t(handle), cmsg)
}

//export lock_abi_version
func lock_abi_version() C.int32_t { return abiVersion }

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
		return fail(err, statusInvalidArgument, "liblock: invalid argument: config_json: must not be NULL")
	}
	if outClient == nil {
		return fail(err, statusInvalidArgument, "liblock: invalid argument: out_client: must not be NULL")
	}
	js, ok := goStringMax(configJSON, maxJSONLength)
	if !ok {
		return failErr(err, argErr("config", "longer than %d bytes", maxJSONLength))
	}
	cfg, e := parseConfig(js)
	if e != nil {
		return failErr(err, e)
	}
	c, e := core.New(cfg)
	if e != nil {
		return failErr(err, e)
	}
	co := &clientObj{c: c, locks: map[uint64]*lockObj{}, ops: map[*opObj]struct{}{}}
	id, e := handles.add(co)
	if e != nil {
		_ = c.Close()
		return fail(err, statusInternal, e.Error())
	}
	co.id = id
	*outClient = C.uint64_t(id)
	return statusOK
}

// acquireArgs checks the arguments shared by both acquire forms.
func acquireArgs(resource *C.char, ttlMs C.int64_t, optionsJSON *C.char) (string, time.Duration, acquireOptions, error) {
	if resource == nil {
		return "", 0, acquireOptions{}, argErr("resource", "must not be NULL")
	}
	res, ok := goStringMax(resource, core.MaxResourceLength)
	if !ok {
		return "", 0, acquireOptions{}, argErr("resource", "longer than %d bytes", core.MaxResourceLength)
	}
	if res == "" {
		return "", 0, acquireOptions{}, argErr("resource", "must not be empty")
	}
	ttl, e := ttlFromMillis(int64(ttlMs))
	if e != nil {
		return "", 0, acquireOptions{}, e
	}
	var opts acquireOptions
	if optionsJSON != nil {
		js, ok := goStringMax(optionsJSON, maxJSONLength)
		if !ok {
			return "", 0, acquireOptions{}, argErr("options", "longer than %d bytes", maxJSONLength)
		}
		opts, e = parseOptions(js, false)
		if e != nil {
			return "", 0, acquireOptions{}, e
		}
	}
	return res, ttl, opts, nil
}

//export lock_acquire
func lock_acquire(client C.uint64_t, resource *C.char, ttlMs C.int64_t, optionsJSON *C.char, outLock *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, ok := get[*clientObj](handles, uint64(client))
	if !ok {
		return fail(err, statusInvalidHandle, msgInvalidHandle)
	}
	res, ttl, opts, e := acquireArgs(resource, ttlMs, optionsJSON)
	if e != nil {
		return failErr(err, e)
	}
	if outLock == nil {
		return failErr(err, argErr("out_lock", "must not be NULL"))
	}
	l, e := co.c.Acquire(context.Background(), res, ttl, opts.coreOptions()...)
	if e != nil {
		return failErr(err, e)
	}
	id, e := co.addLock(l)
	if e != nil {
		return failErr(err, e)
	}
	*outLock = C.uint64_t(id)
	return statusOK
}

//export lock_extend
func lock_extend(lock C.uint64_t, ttlMs C.int64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, ok := get[*lockObj](handles, uint64(lock))
	if !ok {
		return fail(err, statusInvalidHandle, msgInvalidHandle)
	}
	ttl, e := ttlFromMillis(int64(ttlMs))
	if e != nil {
		return failErr(err, e)
	}
	if e := lo.l.Extend(context.Background(), ttl); e != nil {
		return failErr(err, e)
	}
	return statusOK
}

// noteReleased stops on-lost callbacks after a successful release.
func (lo *lockObj) noteReleased(e error) {
	if e == nil {
		lo.mu.Lock()
		lo.released = true
		lo.mu.Unlock()
	}
}

//export lock_release
func lock_release(lock C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, ok := get[*lockObj](handles, uint64(lock))
	if !ok {
		return fail(err, statusInvalidHandle, msgInvalidHandle)
	}
	e := lo.l.Release(context.Background())
	lo.noteReleased(e)
	if e != nil {
		return failErr(err, e)
	}
	return statusOK
}

//export lock_free
func lock_free(handle C.uint64_t) (status C.int32_t) {
	defer guard(nil, &status)
	h := uint64(handle)
	if co, ok := take[*clientObj](handles, h); ok {
		co.free()
		return statusOK
	}
	if lo, ok := take[*lockObj](handles, h); ok {
		lo.free()
		return statusOK
	}
	return C.int32_t(statusInvalidHandle)
}

// runAsync starts fn on a library goroutine for an accepted async call and
// makes sure cb is called exactly once with its outcome, even if fn panics.
// The op must already be registered with its client.
func runAsync(co *clientObj, op *opObj, cb C.lock_callback, ud unsafe.Pointer, fn func(ctx context.Context) (handle uint64, e error, onCanceled func(handle uint64)), ctx context.Context) {
	go func() {
		called := false
		defer func() {
			if r := recover(); r != nil && !called {
				called = true
				op.finish()
				co.removeOp(op)
				if op.id != 0 {
					take[*opObj](handles, op.id)
				}
				callback(cb, ud, statusInternal, 0, fmt.Sprintf("liblock: internal error: %v", r))
			}
		}()
		h, e, onCanceled := fn(ctx)
		canceled := op.finish()
		op.cancel()
		co.removeOp(op)
		if op.id != 0 {
			take[*opObj](handles, op.id)
		}
		called = true
		switch {
		case canceled:
			if onCanceled != nil {
				onCanceled(h)
			}
			callback(cb, ud, statusCanceled, 0, msgCanceled)
		case e != nil:
			callback(cb, ud, statusOf(e), h, e.Error())
		default:
			callback(cb, ud, statusOK, h, "")
		}
	}()
}

//export lock_acquire_async
func lock_acquire_async(client C.uint64_t, resource *C.char, ttlMs C.int64_t, optionsJSON *C.char, cb C.lock_callback, ud unsafe.Pointer, outOp *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, ok := get[*clientObj](handles, uint64(client))
	if !ok {
		return fail(err, statusInvalidHandle, msgInvalidHandle)
	}
	res, ttl, opts, e := acquireArgs(resource, ttlMs, optionsJSON)
	if e != nil {
		return failErr(err, e)
	}
	if cb == nil {
		return failErr(err, argErr("cb", "must not be NULL"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	op := &opObj{cancel: cancel}
	id, e := handles.add(op)
	if e != nil {
		cancel()
		return fail(err, statusInternal, e.Error())
	}
	op.id = id
	if !co.addOp(op) {
		take[*opObj](handles, id)
		cancel()
		return fail(err, statusInvalidHandle, msgInvalidHandle) // freed meanwhile
	}
	if outOp != nil {
		*outOp = C.uint64_t(id)
	}
	runAsync(co, op, cb, ud, func(ctx context.Context) (uint64, error, func(uint64)) {
		l, e := co.c.Acquire(ctx, res, ttl, opts.coreOptions()...)
		if e != nil {
			return 0, e, nil
		}
		if op.finish() { // canceled just as it succeeded: give it back
			_ = l.Release(context.Background())
			return 0, nil, nil
		}
		h, e := co.addLock(l)
		return h, e, nil
	}, ctx)
	return statusOK
}

// lockOp is the shared body of extend/release async.
func lockOp(lock C.uint64_t, cb C.lock_callback, ud unsafe.Pointer, err **C.char, check func() error, fn func(ctx context.Context, lo *lockObj) error) C.int32_t {
	lo, ok := get[*lockObj](handles, uint64(lock))
	if !ok {
		return fail(err, statusInvalidHandle, msgInvalidHandle)
	}
	if e := check(); e != nil {
		return failErr(err, e)
	}
	if cb == nil {
		return failErr(err, argErr("cb", "must not be NULL"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	op := &opObj{cancel: cancel}
	if !lo.client.addOp(op) {
		cancel()
		return fail(err, statusInvalidHandle, msgInvalidHandle)
	}
	runAsync(lo.client, op, cb, ud, func(ctx context.Context) (uint64, error, func(uint64)) {
		return lo.id, fn(ctx, lo), nil
	}, ctx)
	return statusOK
}

//export lock_extend_async
func lock_extend_async(lock C.uint64_t, ttlMs C.int64_t, cb C.lock_callback, ud unsafe.Pointer, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	var ttl time.Duration
	return lockOp(lock, cb, ud, err, func() (e error) {
		ttl, e = ttlFromMillis(int64(ttlMs))
		return e
	}, func(ctx context.Context, lo *lockObj) error {
		return lo.l.Extend(ctx, ttl)
	})
}

//export lock_release_async
func lock_release_async(lock C.uint64_t, cb C.lock_callback, ud unsafe.Pointer, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	return lockOp(lock, cb, ud, err, func() error { return nil }, func(ctx context.Context, lo *lockObj) error {
		e := lo.l.Release(ctx)
		lo.noteReleased(e)
		return e
	})
}

//export lock_cancel
func lock_cancel(op C.uint64_t) (status C.int32_t) {
	defer guard(nil, &status)
	o, ok := get[*opObj](handles, uint64(op))
	if !ok || !o.tryCancel() {
		return C.int32_t(statusInvalidHandle)
	}
	return statusOK
}

//export lock_on_lost
func lock_on_lost(lock C.uint64_t, cb C.lock_callback, ud unsafe.Pointer, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, ok := get[*lockObj](handles, uint64(lock))
	if !ok {
		return fail(err, statusInvalidHandle, msgInvalidHandle)
	}
	lo.mu.Lock()
	lo.lostGen++
	gen := lo.lostGen
	lo.mu.Unlock()
	if cb == nil {
		lo.l.OnLost(nil)
		return statusOK
	}
	lo.l.OnLost(func(e error) {
		defer func() { _ = recover() }()
		lo.mu.Lock()
		skip := lo.freed || lo.released || lo.lostGen != gen
		lo.mu.Unlock()
		if skip {
			return
		}
		msg := "liblock: lock lost"
		if e != nil {
			msg = e.Error()
		}
		callback(cb, ud, statusLost, lo.id, msg)
	})
	return statusOK
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
}

//export lock_info
func lock_info(lock C.uint64_t, infoJSON **C.char, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	lo, ok := get[*lockObj](handles, uint64(lock))
	if !ok {
		return fail(err, statusInvalidHandle, msgInvalidHandle)
	}
	if infoJSON == nil {
		return failErr(err, argErr("info_json", "must not be NULL"))
	}
	lo.mu.Lock()
	released := lo.released
	lo.mu.Unlock()
	info := lockInfo{
		Handle: lo.id, Client: lo.client.id,
		Resource: lo.l.Resource(), Key: lo.l.Key(), Token: lo.l.Token(),
		TTLMs: lo.l.TTL().Milliseconds(), ValidityMs: lo.l.Validity().Milliseconds(),
		AutoExtend: lo.l.AutoExtend(), Lost: lo.l.IsLost(), Released: released,
	}
	b, e := json.Marshal(info)
	if e != nil {
		return fail(err, statusInternal, e.Error())
	}
	*infoJSON = C.CString(string(b))
	return statusOK
}

// Debug exports, for leak tests; not part of the contract.

//export lock_debug_goroutines
func lock_debug_goroutines() C.int64_t { return C.int64_t(runtime.NumGoroutine()) }

// lock_debug_panic panics inside an export, to show that a panic becomes
// LOCK_INTERNAL and the process survives.
//
//export lock_debug_panic
func lock_debug_panic(err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	panic("lock_debug_panic called")
}

//export lock_debug_handles
func lock_debug_handles() C.int64_t { return C.int64_t(handles.len()) }
