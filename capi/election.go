package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "trampoline.h"
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/hostabi"
	"golang.org/x/sys/unix"
)

// Leader election in the C ABI (liblock.h, "LEADER ELECTION"): lock_campaign
// and lock_campaign_async give a lock handle (lock_release resigns,
// lock_on_lost signals loss, lock_info says the term); lock_leader reads the
// leader; lock_observe calls back on every change until lock_free stops it.

// campaignOptions is lock_campaign's options JSON.
type campaignOptions struct {
	WaitMS *int64 `json:"wait_ms"`
}

// observeOptions is lock_observe's options JSON.
type observeOptions struct {
	PollMS int64 `json:"poll_ms"`
}

// decodeOptions reads an options JSON object strictly (an unknown key or a
// wrong type names the key).
func decodeOptions(opts *C.char, into any) error {
	if opts == nil {
		return nil
	}
	js, ok := goStringMax(opts, maxJSONLength)
	if !ok {
		return argErr("options", "longer than %d bytes", maxJSONLength)
	}
	d := json.NewDecoder(bytes.NewReader([]byte(js)))
	d.DisallowUnknownFields()
	if err := d.Decode(into); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return argErr("options", "%q must be a number of milliseconds", te.Field)
		}
		return argErr("options", "%v", err)
	}
	return nil
}

// nameArg and valueArg check an election's name and a campaign's value.
func nameArg(name *C.char) (string, error) {
	if name == nil {
		return "", argErr("name", "must not be NULL")
	}
	s, ok := goStringMax(name, core.MaxResourceLength)
	if !ok {
		return "", argErr("name", "longer than %d bytes", core.MaxResourceLength)
	}
	return s, engine.CheckElectionName(s)
}

func valueArg(value *C.char) (string, error) {
	if value == nil {
		return "", argErr("value", "must not be NULL")
	}
	s, ok := goStringMax(value, core.MaxElectionValue)
	if !ok {
		return "", argErr("value", "longer than %d bytes", core.MaxElectionValue)
	}
	return s, engine.CheckElectionValue(s)
}

// campaignArgs checks lock_campaign's arguments.
func campaignArgs(name, value *C.char, ttlMs C.int64_t, options *C.char) (string, string, []core.CampaignOption, error) {
	n, err := nameArg(name)
	if err != nil {
		return "", "", nil, err
	}
	v, err := valueArg(value)
	if err != nil {
		return "", "", nil, err
	}
	ttl, err := ttlFromMillis(int64(ttlMs))
	if err != nil {
		return "", "", nil, err
	}
	var o campaignOptions
	if err := decodeOptions(options, &o); err != nil {
		return "", "", nil, err
	}
	opts := []core.CampaignOption{core.CampaignTTL(ttl)}
	if o.WaitMS != nil {
		wait, err := hostabi.WaitFromMillis(*o.WaitMS)
		if err != nil {
			return "", "", nil, err
		}
		opts = append(opts, core.CampaignWait(wait))
	}
	return n, v, opts, nil
}

//export lock_campaign
func lock_campaign(client C.uint64_t, name, value *C.char, ttlMs C.int64_t, optionsJSON *C.char, outLock *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, r := lookupClient(uint64(client))
	if r != nil {
		return ret(err, r)
	}
	n, v, opts, e := campaignArgs(name, value, ttlMs, optionsJSON)
	if e != nil {
		return retErr(err, e)
	}
	if outLock == nil {
		return retErr(err, argErr("out_lock", "must not be NULL"))
	}
	ctx, op, r := co.newOp(blockingCtx)
	if r != nil {
		return ret(err, r)
	}
	defer co.endOp(op)
	ld, e := co.c.Campaign(ctx, n, v, opts...)
	if e != nil {
		if ctx.Err() != nil {
			return ret(err, &result{statusCanceled, msgCanceled})
		}
		return retErr(err, e)
	}
	id, e := addLeadership(co, ld)
	if e != nil {
		return retErr(err, e)
	}
	*outLock = C.uint64_t(id)
	return statusOK
}

//export lock_campaign_async
func lock_campaign_async(client C.uint64_t, name, value *C.char, ttlMs C.int64_t, optionsJSON *C.char, cb C.lock_callback, ud C.uintptr_t, outOp *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, r := lookupClient(uint64(client))
	if r != nil {
		return ret(err, r)
	}
	n, v, opts, e := campaignArgs(name, value, ttlMs, optionsJSON)
	if e != nil {
		return retErr(err, e)
	}
	if cb == nil {
		return retErr(err, argErr("cb", "must not be NULL"))
	}
	notify := cNotify(cb, ud)
	return ret(err, startAsync(outOp, func(hold func()) (uint64, *result) {
		ctx, op, id, r := newHandleOp(co)
		if r != nil {
			return 0, r
		}
		runAsync(ctx, co, op, func(st int32, h uint64, msg string) { hold(); notify(st, h, msg) }, func(ctx context.Context) (uint64, error) {
			ld, e := co.c.Campaign(ctx, n, v, opts...)
			if e != nil {
				return 0, e
			}
			if op.finish() { // canceled just as it succeeded: resign
				_ = ld.Resign(context.Background())
				return 0, nil
			}
			return addLeadership(co, ld)
		})
		return id, nil
	}))
}

// addLeadership gives a leadership a lock handle, which lock_info shows as
// the election's.
func addLeadership(co *clientObj, ld *core.Leadership) (uint64, error) {
	id, err := co.addLock(ld.Lock())
	if err != nil {
		return 0, err
	}
	if lo, ok := get[*lockObj](handles, id); ok {
		lo.mu.Lock()
		lo.election, lo.value = ld.Name(), ld.Value()
		lo.mu.Unlock()
	}
	return id, nil
}

// leaderJSON is lock_leader's and lock_observe's JSON.
type leaderJSON struct {
	Leader     bool   `json:"leader"`
	Name       string `json:"name"`
	Value      string `json:"value"`
	Term       int64  `json:"term"`
	Owner      string `json:"owner"`
	ValidityMs int64  `json:"validity_ms"`
}

func marshalLeader(name string, l *core.Leader) string {
	j := leaderJSON{Name: name}
	if l != nil && l.Term != 0 {
		j = leaderJSON{Leader: true, Name: name, Value: l.Value, Term: l.Term, Owner: l.Owner, ValidityMs: l.Validity.Milliseconds()}
	}
	b, _ := json.Marshal(j)
	return string(b)
}

//export lock_leader
func lock_leader(client C.uint64_t, name *C.char, leaderOut **C.char, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, n, r := stringAnswerCall(client, name, nameArg, leaderOut, "leader_json")
	if r != nil {
		return ret(err, r)
	}
	ctx, op, r := co.newOp(blockingCtx)
	if r != nil {
		return ret(err, r)
	}
	defer co.endOp(op)
	l, e := co.c.Leader(ctx, n)
	switch {
	case errors.Is(e, core.ErrNoLeader):
		l = nil
	case e != nil && ctx.Err() != nil:
		return ret(err, &result{statusCanceled, msgCanceled})
	case e != nil:
		return retErr(err, e)
	}
	*leaderOut = C.CString(marshalLeader(n, l))
	return statusOK
}

// watchObj is an observe handle's object.
type watchObj struct {
	id     uint64
	cancel context.CancelFunc
	done   chan struct{} // closed when its goroutine has ended
	mu     sync.Mutex
	tid    int // the thread running the callback, 0 when none runs
}

func (w *watchObj) setID(id uint64) { w.id = id }

// stop ends the watch: when it returns, no callback runs or will start,
// unless it is called from the callback itself (then that call finishes,
// and none follows).
func (w *watchObj) stop() {
	w.cancel()
	w.mu.Lock()
	inCallback := w.tid != 0 && w.tid == unix.Gettid()
	w.mu.Unlock()
	if !inCallback {
		<-w.done
	}
}

//export lock_observe
func lock_observe(client C.uint64_t, name *C.char, optionsJSON *C.char, cb C.lock_inspect_callback, ud C.uintptr_t, outWatch *C.uint64_t, err **C.char) (status C.int32_t) {
	defer guard(err, &status)
	clearErr(err)
	co, r := lookupClient(uint64(client))
	if r != nil {
		return ret(err, r)
	}
	n, e := nameArg(name)
	if e != nil {
		return retErr(err, e)
	}
	var o observeOptions
	if e := decodeOptions(optionsJSON, &o); e != nil {
		return retErr(err, e)
	}
	if _, e := hostabi.PollFromMillis(o.PollMS); e != nil {
		return retErr(err, e)
	}
	if cb == nil {
		return retErr(err, argErr("cb", "must not be NULL"))
	}
	if outWatch == nil {
		return retErr(err, argErr("out_watch", "must not be NULL"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var opts []core.ObserveOption
	if o.PollMS > 0 {
		opts = append(opts, core.ObservePoll(time.Duration(o.PollMS)*time.Millisecond))
	}
	ch, e := co.c.Observe(ctx, n, opts...)
	if e != nil {
		cancel()
		return retErr(err, e)
	}
	w := &watchObj{cancel: cancel, done: make(chan struct{})}
	id, e := handles.add(w)
	if e != nil {
		cancel()
		return retErr(err, e)
	}
	*outWatch = C.uint64_t(id)
	notify := cInspectNotify(cb, ud)
	go func() {
		defer close(w.done)
		// One thread for the callbacks, so that stop can tell a call from
		// inside one.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		call := func(st int32, js, msg string) {
			w.mu.Lock()
			if ctx.Err() != nil && st == statusOK {
				w.mu.Unlock()
				return
			}
			w.tid = unix.Gettid()
			w.mu.Unlock()
			func() {
				defer func() { _ = recover() }()
				notify(st, js, msg)
			}()
			w.mu.Lock()
			w.tid = 0
			w.mu.Unlock()
		}
		for l := range ch {
			call(statusOK, marshalLeader(n, &l), "")
		}
		if ctx.Err() == nil { // the client was freed: say the watch ended
			call(statusCanceled, "", fmt.Sprintf("liblock: observe %q: the client was freed", n))
		}
	}()
	return statusOK
}
