package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/redistest"
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
	deadline := time.Now().Add(5 * time.Second)
	for _, n := range c.Nodes {
		for {
			v, err := n.Do("PUBSUB", "NUMSUB", "liblock:released:"+key)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(v, "\n1") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: no acquire waits for %s within 5 s (PUBSUB NUMSUB: %q)", n.Index, key, v)
			}
			time.Sleep(2 * time.Millisecond)
		}
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
		t.Fatal("no callback")
	}
	return outcome{}
}

func mustClient(t *testing.T, js string) *clientObj {
	t.Helper()
	id, r := clientNew(js)
	if r != nil {
		t.Fatalf("clientNew: %+v", r)
	}
	co, lr := lookupClient(id)
	if lr != nil {
		t.Fatal("lookup")
	}
	return co
}

func TestAPILifecycle(t *testing.T) {
	cl := redistest.Start(t, 3)
	h0 := handles.len()
	co := mustClient(t, configFor(cl))
	id, r := acquire(co, "res", 5*time.Second, acquireOptions{})
	if r != nil {
		t.Fatalf("acquire: %+v", r)
	}
	if _, r := acquire(co, "res", 5*time.Second, acquireOptions{}); r == nil || r.code != statusNotAcquired {
		t.Fatalf("second acquire: %+v", r)
	}
	lo, _ := lookupLock(id)
	js, r := info(lo)
	if r != nil || !strings.Contains(js, `"resource":"res"`) || !strings.Contains(js, `"lost":false`) {
		t.Fatalf("info %s %+v", js, r)
	}
	if r := extend(lo, 10*time.Second); r != nil {
		t.Fatalf("extend %+v", r)
	}
	if r := release(lo); r != nil {
		t.Fatalf("release %+v", r)
	}
	if r := release(lo); r == nil || r.code != statusLost {
		t.Fatalf("second release %+v", r)
	}
	if freeHandle(id) != statusOK || freeHandle(id) != statusInvalidHandle {
		t.Fatal("free lock")
	}
	if freeHandle(co.id) != statusOK || freeHandle(co.id) != statusInvalidHandle {
		t.Fatal("free client")
	}
	cl.AssertNoKeys(t)
	if handles.len() != h0 {
		t.Fatalf("handles %d -> %d", h0, handles.len())
	}
}

func TestAPIAsyncCancelAndClientFree(t *testing.T) {
	cl := redistest.Start(t, 3)
	co := mustClient(t, configFor(cl))
	held, r := acquire(co, "busy", 30*time.Second, acquireOptions{})
	if r != nil {
		t.Fatal(r)
	}
	// cancel one waiter
	rec := newRecorder()
	op, r := acquireAsync(co, "busy", time.Second, acquireOptions{Wait: time.Minute}, rec.notify)
	if r != nil {
		t.Fatal(r)
	}
	waitingFor(t, cl, "busy")
	if cancelOp(op) != statusOK {
		t.Fatal("cancel")
	}
	if o := rec.wait(t); o.status != statusCanceled || o.handle != 0 {
		t.Fatalf("canceled: %+v", o)
	}
	if cancelOp(op) != statusInvalidHandle {
		t.Fatal("cancel after the callback")
	}
	// free the client with many waiters, async releases and a sync waiter
	var recs []*recorder
	for i := 0; i < 50; i++ {
		rec := newRecorder()
		if _, r := acquireAsync(co, "busy", time.Second, acquireOptions{Wait: time.Minute}, rec.notify); r != nil {
			t.Fatal(r)
		}
		recs = append(recs, rec)
	}
	syncDone := make(chan *result)
	go func() {
		_, r := acquire(co, "busy", time.Second, acquireOptions{Wait: time.Minute})
		syncDone <- r
	}()
	waitingFor(t, cl, "busy")
	if freeHandle(co.id) != statusOK {
		t.Fatal("free client")
	}
	for _, rec := range recs {
		if o := rec.wait(t); o.status != statusCanceled {
			t.Fatalf("pending op: %+v", o)
		}
	}
	if r := <-syncDone; r == nil || r.code != statusCanceled {
		t.Fatalf("sync waiter: %+v", r)
	}
	if freeHandle(held) != statusInvalidHandle {
		t.Fatal("lock handle survived its client")
	}
	time.Sleep(50 * time.Millisecond)
	for _, rec := range recs {
		if n := rec.calls.Load(); n != 1 {
			t.Fatalf("callback called %d times", n)
		}
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
				if r != nil {
					t.Errorf("acquire: %+v", r)
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
				if res[0]+res[1] != statusInvalidHandle {
					t.Errorf("two frees: %v", res)
				}
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
				if r != nil {
					t.Errorf("acquireAsync: %+v", r)
					return
				}
				cst := cancelOp(op)
				o := rec.wait(t)
				switch {
				case o.status == statusCanceled && cst == statusOK:
				case o.status == statusOK && cst == statusInvalidHandle:
					freeHandle(o.handle)
				default:
					t.Errorf("cancel %d, outcome %+v", cst, o)
				}
			}
		}()
	}
	wg.Wait()
	if overlaps.Load() != 0 {
		t.Fatalf("%d overlaps", overlaps.Load())
	}
	if freeHandle(co.id) != statusOK {
		t.Fatal("free")
	}
	cl.AssertNoKeys(t)
}

func TestAPIOnLost(t *testing.T) {
	cl := redistest.Start(t, 3)
	co := mustClient(t, configFor(cl))
	defer freeHandle(co.id)
	id, r := acquire(co, "lost", 300*time.Millisecond, acquireOptions{AutoExtend: true})
	if r != nil {
		t.Fatal(r)
	}
	lo, _ := lookupLock(id)
	rec := newRecorder()
	onLost(lo, rec.notify)
	for _, n := range cl.Nodes {
		if _, err := n.Do("SET", "lost", "other"); err != nil {
			t.Fatal(err)
		}
	}
	if o := rec.wait(t); o.status != statusLost || o.handle != id {
		t.Fatalf("on lost: %+v", o)
	}
	if r := release(lo); r == nil || r.code != statusLost {
		t.Fatalf("release of a lost lock: %+v", r)
	}
	for _, n := range cl.Nodes {
		if v, _ := n.Do("GET", "lost"); v != "other" {
			t.Fatalf("another owner's key touched: %q", v)
		}
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
	js, r := inspect(a, "res")
	if r != nil || json.Unmarshal([]byte(js), &in) != nil || in.Held || in.ValidityMs != 0 || len(in.Nodes) != 3 {
		t.Fatalf("free: %s %+v", js, r)
	}
	for i, n := range in.Nodes {
		if n.Node != i || n.Locked || n.Error != nil || n.TTLMs != -1 || n.Addr == "" {
			t.Fatalf("free node %+v", n)
		}
	}
	id, r := acquire(a, "res", 10*time.Second, acquireOptions{})
	if r != nil {
		t.Fatal(r)
	}
	lo, _ := lookupLock(id)
	js, r = inspect(b, "res")
	if r != nil || json.Unmarshal([]byte(js), &in) != nil || !in.Held || in.Owner != "worker-7" || in.ValidityMs < 9000 {
		t.Fatalf("held: %s %+v", js, r)
	}
	// b re-enters a's lock with its token.
	hid, r := acquire(b, "res", 20*time.Second, acquireOptions{Token: lo.l.Token()})
	if r != nil {
		t.Fatal(r)
	}
	ho, _ := lookupLock(hid)
	js, _ = info(ho)
	if !strings.Contains(js, `"reentered":true`) || !strings.Contains(js, `"fence":0`) {
		t.Fatalf("re-entry info %s", js)
	}
	if js, _ = info(lo); !strings.Contains(js, `"reentered":false`) {
		t.Fatalf("first lock info %s", js)
	}
	if r := release(ho); r != nil {
		t.Fatal(r)
	}
	if r := release(lo); r == nil || r.code != statusLost {
		t.Fatalf("second release of one lock: %+v", r)
	}
	freeHandle(hid)
	freeHandle(id)
	cl.AssertNoKeys(t)
	// fences strictly increase
	var last int64
	for i := 0; i < 3; i++ {
		id, r := acquire(a, "f", 5*time.Second, acquireOptions{Fence: true})
		if r != nil {
			t.Fatal(r)
		}
		lo, _ := lookupLock(id)
		if f := lo.l.Fence(); f <= last {
			t.Fatalf("fence %d after %d", f, last)
		} else {
			last = f
		}
		freeHandle(id)
	}
	// async: a result, then a cancel, then a client freed under one
	type got struct {
		st      int32
		js, msg string
	}
	ch := make(chan got, 4)
	note := func(st int32, js, msg string) { ch <- got{st, js, msg} }
	if _, r := inspectAsync(b, "res", note); r != nil {
		t.Fatal(r)
	}
	if g := <-ch; g.st != statusOK || !strings.Contains(g.js, `"held":false`) || g.msg != "" {
		t.Fatalf("async: %+v", g)
	}
	op, r := inspectAsync(b, "res", note)
	if r != nil {
		t.Fatal(r)
	}
	cst := cancelOp(op)
	g := <-ch
	if !(cst == statusOK && g.st == statusCanceled && g.js == "") && !(cst == statusInvalidHandle && g.st == statusOK) {
		t.Fatalf("cancel %d: %+v", cst, g)
	}
	if _, r := inspectAsync(a, "res", note); r != nil {
		t.Fatal(r)
	}
	freeHandle(a.id)
	if g := <-ch; g.st != statusOK && g.st != statusCanceled {
		t.Fatalf("client freed: %+v", g)
	}
	if _, r := inspect(a, "res"); r != badHandle {
		t.Fatalf("inspect on a freed client: %+v", r)
	}
}
