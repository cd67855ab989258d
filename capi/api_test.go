package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liblock/liblock/core/ownthread"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests drive the ABI's logic (api.go) against real redis-servers,
// under the race detector, with Go callbacks in place of C ones.

func configFor(c *redistest.Cluster) string {
	b, _ := json.Marshal(map[string]any{"nodes": c.URLs(), "node_timeout_ms": 200})
	return string(b)
}

// waitingFor returns once an acquire of the client waits for key: the
// client listens for the key's releases on every node, which it does only
// once an attempt was refused or an acquire queued behind another.
func waitingFor(t *testing.T, c *redistest.Cluster, key string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second) // one for all: the nodes work at the same time
	for _, n := range c.Nodes {
		var v string
		ok := poll.Wait(time.Until(deadline), func() bool {
			var err error
			v, err = n.Do("PUBSUB", "NUMSUB", "liblock:released:"+key)
			require.NoError(t, err)
			return strings.HasSuffix(v, "\n1")
		})
		require.True(t, ok, "node %d: no acquire waits for %s within 5 s (PUBSUB NUMSUB: %q)", n.Index, key, v)
	}
}

type outcome struct {
	status int32
	handle uint64
	msg    string
}

// recorder is a notifyFunc that counts its calls.
type recorder struct {
	calls atomic.Int32
	ch    chan outcome
}

func newRecorder() *recorder { return &recorder{ch: make(chan outcome, 4)} }

func (r *recorder) notify(status int32, handle uint64, msg string) {
	r.calls.Add(1)
	r.ch <- outcome{status, handle, msg}
}

func (r *recorder) wait(t *testing.T) outcome {
	t.Helper()
	select {
	case o := <-r.ch:
		return o
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no callback within 10 s")
	}
	return outcome{}
}

// requireStatus fails the test unless r is a failure with status want.
func requireStatus(t *testing.T, want int32, r *result, what string) {
	t.Helper()
	require.NotNil(t, r, "%s: succeeded, want status %d", what, want)
	require.Equal(t, want, r.code, "%s: %+v", what, r)
}

// assertFailure checks that r is a failure with status want whose message
// contains every one of parts; it reports whether it is.
func assertFailure(t *testing.T, want int32, r *result, what string, parts ...string) bool {
	t.Helper()
	if !assert.NotNil(t, r, "%s: succeeded, want status %d", what, want) || !assert.Equal(t, want, r.code, "%s: %+v", what, r) {
		return false
	}
	ok := true
	for _, p := range parts {
		ok = assert.Contains(t, r.msg, p, what) && ok
	}
	return ok
}

func mustClient(t *testing.T, js string) *clientObj {
	t.Helper()
	id, r := clientNew(js)
	require.Nil(t, r, "clientNew")
	co, lr := lookupClient(id)
	require.Nil(t, lr, "lookup")
	return co
}

func TestAPILifecycle(t *testing.T) {
	cl := redistest.Start(t, 3)
	h0 := handles.len()
	co := mustClient(t, configFor(cl))
	id, r := acquire(co, "res", 5*time.Second, acquireOptions{})
	require.Nil(t, r, "acquire")
	_, r = acquire(co, "res", 5*time.Second, acquireOptions{})
	requireStatus(t, statusNotAcquired, r, "second acquire")
	lo, _ := lookupLock(id)
	js, r := info(lo)
	require.Nil(t, r, "info")
	assert.Contains(t, js, `"resource":"res"`)
	assert.Contains(t, js, `"lost":false`)
	require.Nil(t, extend(lo, 10*time.Second), "extend")
	require.Nil(t, release(lo), "release")
	requireStatus(t, statusLost, release(lo), "second release")
	assert.Equal(t, int32(statusOK), freeHandle(id), "free lock")
	assert.Equal(t, int32(statusInvalidHandle), freeHandle(id), "free lock twice")
	assert.Equal(t, int32(statusOK), freeHandle(co.id), "free client")
	assert.Equal(t, int32(statusInvalidHandle), freeHandle(co.id), "free client twice")
	cl.AssertNoKeys(t)
	assert.Equal(t, h0, handles.len(), "handles left")
}

func TestAPIAsyncCancelAndClientFree(t *testing.T) {
	cl := redistest.Start(t, 3)
	co := mustClient(t, configFor(cl))
	held, r := acquire(co, "busy", 30*time.Second, acquireOptions{})
	require.Nil(t, r)
	// cancel one waiter
	rec := newRecorder()
	op, r := acquireAsync(co, "busy", time.Second, acquireOptions{Wait: time.Minute}, rec.notify)
	require.Nil(t, r)
	waitingFor(t, cl, "busy")
	require.Equal(t, int32(statusOK), cancelOp(op), "cancel")
	o := rec.wait(t)
	require.Equal(t, int32(statusCanceled), o.status, "canceled: %+v", o)
	require.Zero(t, o.handle, "canceled: %+v", o)
	require.Equal(t, int32(statusInvalidHandle), cancelOp(op), "cancel after the callback")
	// free the client with many waiters, async releases and a sync waiter
	var recs []*recorder
	for i := 0; i < 50; i++ {
		rec := newRecorder()
		_, r := acquireAsync(co, "busy", time.Second, acquireOptions{Wait: time.Minute}, rec.notify)
		require.Nil(t, r)
		recs = append(recs, rec)
	}
	syncDone := make(chan *result)
	go func() {
		_, r := acquire(co, "busy", time.Second, acquireOptions{Wait: time.Minute})
		syncDone <- r
	}()
	waitingFor(t, cl, "busy")
	require.Equal(t, int32(statusOK), freeHandle(co.id), "free client")
	for i, rec := range recs {
		o := rec.wait(t)
		require.Equal(t, int32(statusCanceled), o.status, "pending op %d: %+v", i, o)
	}
	requireStatus(t, statusCanceled, <-syncDone, "sync waiter")
	require.Equal(t, int32(statusInvalidHandle), freeHandle(held), "lock handle survived its client")
	// Deliberate: the check is that no callback comes twice, so it lets
	// time pass in which a second one would arrive (each came once above).
	time.Sleep(50 * time.Millisecond)
	for i, rec := range recs {
		assert.Equal(t, int32(1), rec.calls.Load(), "callback %d calls", i)
	}
	cl.AssertNoKeys(t)
}

// TestAPIRaces hammers one client from many goroutines: acquires (sync and
// async), cancels, extends racing releases, double frees and info, while
// the client is finally freed under them. Run with -race.
func TestAPIRaces(t *testing.T) {
	cl := redistest.Start(t, 3)
	co := mustClient(t, configFor(cl))
	var wg sync.WaitGroup
	var holders, overlaps atomic.Int32
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				id, r := acquire(co, "hot", 5*time.Second, acquireOptions{Wait: 20 * time.Second})
				if !assert.Nil(t, r, "acquire") { // not require: another goroutine
					return
				}
				if holders.Add(1) != 1 {
					overlaps.Add(1)
				}
				lo, _ := lookupLock(id)
				onLost(lo, func(int32, uint64, string) {})
				_, _ = info(lo)
				holders.Add(-1)
				var inner sync.WaitGroup
				inner.Add(2)
				go func() { defer inner.Done(); extend(lo, 5*time.Second) }()
				go func() { defer inner.Done(); release(lo) }()
				inner.Wait()
				inner.Add(2)
				res := make([]int32, 2)
				go func() { defer inner.Done(); res[0] = freeHandle(id) }()
				go func() { defer inner.Done(); res[1] = freeHandle(id) }()
				inner.Wait()
				assert.Equal(t, int32(statusInvalidHandle), res[0]+res[1], "two frees: %v", res)
			}
		}()
	}
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				rec := newRecorder()
				op, r := acquireAsync(co, fmt.Sprintf("c%d-%d", g, i), time.Second, acquireOptions{}, rec.notify)
				if !assert.Nil(t, r, "acquireAsync") {
					return
				}
				cst := cancelOp(op)
				o := rec.wait(t)
				switch {
				case o.status == statusCanceled && cst == statusOK:
				case o.status == statusOK && cst == statusInvalidHandle:
					freeHandle(o.handle)
				default:
					assert.Fail(t, "cancel and outcome disagree", "cancel %d, outcome %+v", cst, o)
				}
			}
		}()
	}
	wg.Wait()
	require.Zero(t, overlaps.Load(), "overlaps")
	require.Equal(t, int32(statusOK), freeHandle(co.id), "free")
	cl.AssertNoKeys(t)
}

func TestAPIOnLost(t *testing.T) {
	cl := redistest.Start(t, 3)
	co := mustClient(t, configFor(cl))
	defer freeHandle(co.id)
	id, r := acquire(co, "lost", 300*time.Millisecond, acquireOptions{AutoExtend: true})
	require.Nil(t, r)
	lo, _ := lookupLock(id)
	rec := newRecorder()
	onLost(lo, rec.notify)
	for _, n := range cl.Nodes {
		_, err := n.Do("SET", "lost", "other")
		require.NoError(t, err)
	}
	o := rec.wait(t)
	require.Equal(t, int32(statusLost), o.status, "on lost: %+v", o)
	require.Equal(t, id, o.handle, "on lost: %+v", o)
	requireStatus(t, statusLost, release(lo), "release of a lost lock")
	for _, n := range cl.Nodes {
		v, _ := n.Do("GET", "lost")
		assert.Equal(t, "other", v, "node %d: another owner's key touched", n.Index)
	}
	freeHandle(id)
	cl.FlushAll()
}

func configWithOwner(c *redistest.Cluster, owner string) string {
	b, _ := json.Marshal(map[string]any{"nodes": c.URLs(), "node_timeout_ms": 200, "owner": owner})
	return string(b)
}

// TestAPIInspectTokenFence: inspect (free, held with an owner), re-entry by
// token from another client, fences over sequential acquires, and inspect's
// async form with lock_cancel and a client freed under it.
func TestAPIInspectTokenFence(t *testing.T) {
	cl := redistest.Start(t, 3)
	a := mustClient(t, configWithOwner(cl, "worker-7"))
	b := mustClient(t, configFor(cl))
	defer freeHandle(b.id)
	var in inspectionJSON
	js, r := inspect(a, "res", false)
	require.Nil(t, r, "inspect")
	require.NoError(t, json.Unmarshal([]byte(js), &in), js)
	assert.False(t, in.Held, "free: %s", js)
	assert.Zero(t, in.ValidityMs, "free: %s", js)
	require.Len(t, in.Nodes, 3, "free: %s", js)
	for i, n := range in.Nodes {
		assert.Equal(t, i, n.Node, "free node %+v", n)
		assert.False(t, n.Locked, "free node %+v", n)
		assert.Nil(t, n.Error, "free node %+v", n)
		assert.EqualValues(t, -1, n.TTLMs, "free node %+v", n)
		assert.NotEmpty(t, n.Addr, "free node %+v", n)
	}
	id, r := acquire(a, "res", 10*time.Second, acquireOptions{})
	require.Nil(t, r)
	lo, _ := lookupLock(id)
	js, r = inspect(b, "res", false)
	require.Nil(t, r, "inspect")
	require.NoError(t, json.Unmarshal([]byte(js), &in), js)
	assert.True(t, in.Held, "held: %s", js)
	assert.Equal(t, "worker-7", in.Owner, "held: %s", js)
	assert.GreaterOrEqual(t, in.ValidityMs, int64(9000), "held: %s", js)
	// b re-enters a's lock with its token.
	hid, r := acquire(b, "res", 20*time.Second, acquireOptions{Token: lo.l.Token()})
	require.Nil(t, r)
	ho, _ := lookupLock(hid)
	js, _ = info(ho)
	assert.Contains(t, js, `"reentered":true`, "re-entry info")
	assert.Contains(t, js, `"fence":0`, "re-entry info")
	js, _ = info(lo)
	assert.Contains(t, js, `"reentered":false`, "first lock info")
	require.Nil(t, release(ho))
	requireStatus(t, statusLost, release(lo), "second release of one lock")
	freeHandle(hid)
	freeHandle(id)
	cl.AssertNoKeys(t)
	// fences strictly increase
	var last int64
	for i := 0; i < 3; i++ {
		id, r := acquire(a, "f", 5*time.Second, acquireOptions{Fence: true})
		require.Nil(t, r)
		lo, _ := lookupLock(id)
		f := lo.l.Fence()
		require.Greater(t, f, last, "fence after %d", last)
		last = f
		freeHandle(id)
	}
	// async: a result, then a cancel, then a client freed under one
	type got struct {
		st      int32
		js, msg string
	}
	ch := make(chan got, 4)
	note := func(st int32, js, msg string) { ch <- got{st, js, msg} }
	_, r = inspectAsync(b, "res", note)
	require.Nil(t, r)
	g := <-ch
	require.EqualValues(t, statusOK, g.st, "async: %+v", g)
	assert.Contains(t, g.js, `"held":false`, "async")
	assert.Empty(t, g.msg, "async")
	op, r := inspectAsync(b, "res", note)
	require.Nil(t, r)
	cst := cancelOp(op)
	g = <-ch
	if !(cst == statusOK && g.st == statusCanceled && g.js == "") && !(cst == statusInvalidHandle && g.st == statusOK) {
		require.FailNow(t, "cancel and outcome disagree", "cancel %d: %+v", cst, g)
	}
	_, r = inspectAsync(a, "res", note)
	require.Nil(t, r)
	freeHandle(a.id)
	g = <-ch
	assert.Contains(t, []int32{statusOK, statusCanceled}, g.st, "client freed: %+v", g)
	_, r = inspect(a, "res", false)
	assert.Same(t, badHandle, r, "inspect on a freed client: %+v", r)
}

// The blocking calls wait in poll(2) on their caller's thread unless
// LIBLOCK_BLOCKING_WAIT=netpoller; any other value keeps poll(2).
func TestBlockingWaitSwitch(t *testing.T) {
	assert.Equal(t, os.Getenv("LIBLOCK_BLOCKING_WAIT") != "netpoller", ownthread.Is(blockingCtx), "the wait chosen at load")
	for wait, own := range map[string]bool{"": true, "poll": true, "netpoller": false, "NETPOLLER": true, "x": true} {
		assert.Equal(t, own, ownthread.Is(blockingContext(wait)), "LIBLOCK_BLOCKING_WAIT=%q", wait)
	}
}
