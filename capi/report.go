package main

/*
#include <stdint.h>
#include "report.h"
*/
import "C"

import (
	"context"
	"sync"

	"github.com/liblock/liblock/core"
)

// The report stream (liblock.h, "REPORTS"): the engine's reports, as the
// hosts of Node and Python get them (REPORT actions), handed to a C
// callback so that a C or JVM program maps them onto its own metrics,
// traces and logs. core.Client.SetReports does the work: the callback runs
// on the client's driver, in the engine's order, and replacing it waits for
// a call in progress.

// opTag and lockTag are the report tags of the calls the ABI starts: an
// acquire (or campaign) with an op handle is known by it (a synchronous
// one by opTag 0), an extension or a release by its lock's handle. A
// report with a tag is a call's ("call" 1); without, the library's own.
type (
	opTag   uint64
	lockTag uint64
)

// tagOp and tagLock tag a call of co's only while co has a report callback:
// a tag costs two allocations.
func tagOp(co *clientObj, ctx context.Context, id uint64) context.Context {
	if !co.reporting.Load() {
		return ctx
	}
	return core.ReportTag(ctx, opTag(id))
}

func tagLock(co *clientObj, ctx context.Context, id uint64) context.Context {
	if !co.reporting.Load() {
		return ctx
	}
	return core.ReportTag(ctx, lockTag(id))
}

// lockHandles maps the core locks that have a handle to it (addLock to
// markFreed): the lock of a report that names one (a loss, a holding's end).
// Only the locks acquired while their client had a report callback are in
// it (a store costs allocations).
var lockHandles sync.Map // *core.Lock -> uint64

// setReport sets (cb non-nil) or clears the client's report callback.
func setReport(co *clientObj, fn func(r core.Report)) {
	co.reporting.Store(fn != nil)
	co.c.SetReports(fn)
}

// reportFunc is the core report function that calls cb.
func reportFunc(cb C.lock_report_callback, ud C.uintptr_t) func(core.Report) {
	return func(r core.Report) {
		var op, lock uint64
		var call C.uint8_t
		if r.Tag != nil {
			call = 1
		}
		switch t := r.Tag.(type) {
		case opTag:
			op = uint64(t)
		case lockTag:
			lock = uint64(t)
		}
		if lock == 0 && r.Lock != nil {
			if h, ok := lockHandles.Load(r.Lock); ok {
				lock = h.(uint64)
			}
		}
		C.liblock_invoke_report(cb, ud, C.uint8_t(r.What), C.uint8_t(r.Outcome), C.uint16_t(r.Node),
			C.uint32_t(r.Attempts), C.int64_t(r.Duration.Microseconds()), C.uint64_t(op), C.uint64_t(lock), call)
	}
}

//export lock_client_set_report
func lock_client_set_report(client C.uint64_t, cb C.lock_report_callback, ud C.uintptr_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, r := lookupClient(uint64(client))
	if r != nil {
		return ret(err, r)
	}
	if cb == nil {
		setReport(co, nil)
	} else {
		setReport(co, reportFunc(cb, ud))
	}
	return statusOK
}
