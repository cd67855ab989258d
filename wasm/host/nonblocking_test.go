package host

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core/redistest"
	"github.com/liblock/liblock/wasm/internal/abi"
	"github.com/tetratelabs/wazero/api"
)

// nbEvent is one lock_run event.
type nbEvent struct {
	handle uint64
	kind   uint32
	status int32
}

// nbHarness drives one instance through the non-blocking exports the way
// a single-threaded host (Node's worker, Python's driver) does.
type nbHarness struct {
	t       *testing.T
	in      *instance
	runBuf  uint32
	runCap  uint32
	client  uint64
	events  []nbEvent // reported and not yet consumed by the test
	nextRun int64
}

func newNBHarness(t *testing.T, nodes []string, cfg string) *nbHarness {
	t.Helper()
	m := loadTestModule(t)
	in := newTestInstance(t, m)
	var err error
	if rawClient.nodes, err = newNodeSet(nodes, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rawClient.nodes.close() })
	h := &nbHarness{t: t, in: in, runCap: 8 + 4*16}
	if h.runBuf, err = in.alloc(h.runCap); err != nil {
		t.Fatal(err)
	}
	p, n := h.str(cfg)
	if status, rec := rawCall(t, in, "lock_client_new", p, n, h.out(), h.errOut()); status != abi.OK {
		t.Fatalf("client_new: %d %+v", status, rec)
	}
	h.client = in.u64(offHandle)
	return h
}

func (h *nbHarness) out() uint64    { return uint64(h.in.scratch + offHandle) }
func (h *nbHarness) errOut() uint64 { return uint64(h.in.scratch + offErr) }

func (h *nbHarness) str(s string) (uint64, uint64) {
	h.t.Helper()
	p, err := h.in.input(s)
	if err != nil {
		h.t.Fatal(err)
	}
	return uint64(p[0][0]), uint64(p[0][1])
}

// call runs an export that returns a plain i32.
func (h *nbHarness) call(name string, args ...uint64) int32 {
	h.t.Helper()
	st := make([]uint64, max(len(args), 1))
	copy(st, args)
	ctx := withState(context.Background(), &callState{client: rawClient, inst: h.in})
	if err := h.in.mod.ExportedFunction(name).CallWithStack(ctx, st); err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	return api.DecodeI32(st[0])
}

// start begins an acquire and returns its operation handle.
func (h *nbHarness) start(resource string, ttlMS int64, opts string) uint64 {
	h.t.Helper()
	p, _ := h.str(resource + opts)
	var op, ol uint64
	if opts != "" {
		op, ol = p+uint64(len(resource)), uint64(len(opts))
	}
	if status, rec := rawCall(h.t, h.in, "lock_acquire_start", h.client, p, uint64(len(resource)), uint64(ttlMS), op, ol, h.out(), h.errOut()); status != abi.OK {
		h.t.Fatalf("acquire_start %s: %d %+v", resource, status, rec)
	}
	return h.in.u64(offHandle)
}

// run calls lock_run once and appends its events.
func (h *nbHarness) run() int32 {
	h.t.Helper()
	n := h.call("lock_run", uint64(h.runBuf), uint64(h.runCap))
	if n < 0 {
		h.t.Fatalf("lock_run: %d", n)
	}
	b, _ := h.in.mem.Read(h.runBuf, h.runCap)
	h.nextRun = int64(binary.LittleEndian.Uint64(b))
	for i := 0; i < int(n); i++ {
		e := b[8+16*i:]
		h.events = append(h.events, nbEvent{binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint32(e[8:]), int32(binary.LittleEndian.Uint32(e[12:]))})
	}
	return n
}

// await drives lock_run as a host timer would (sleeping next_run_ms
// between runs) until the event for handle arrives, and returns it.
func (h *nbHarness) await(handle uint64, within time.Duration) nbEvent {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for {
		for i, e := range h.events {
			if e.handle == handle {
				h.events = append(h.events[:i], h.events[i+1:]...)
				return e
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no event for handle %d within %v (events %+v)", handle, within, h.events)
		}
		h.run()
		if h.nextRun > 0 && len(h.events) == 0 {
			time.Sleep(time.Duration(h.nextRun) * time.Millisecond)
		} else if h.nextRun < 0 {
			time.Sleep(time.Millisecond) // nothing scheduled: only a new call changes that
		}
	}
}

// result takes an operation's result.
func (h *nbHarness) result(op uint64) (int32, uint64, abi.ErrorRecord) {
	h.t.Helper()
	status, rec := rawCall(h.t, h.in, "lock_op_result", op, h.out(), h.errOut())
	return status, h.in.u64(offHandle), rec
}

// TestNonBlockingAcquire drives lock_acquire_start, lock_run,
// lock_op_result and lock_cancel as PROTOCOL.md §8a describes them: one
// instance, many concurrent operations, events reported once.
func TestNonBlockingAcquire(t *testing.T) {
	c := redistest.Start(t, 3)
	urls := c.URLs()
	h := newNBHarness(t, urls, fmt.Sprintf(`{"nodes":["%s"],"node_timeout_ms":200}`, strings.Join(urls, `","`)))

	if h.run(); h.nextRun != -1 {
		t.Fatalf("next_run_ms with nothing scheduled: %d", h.nextRun)
	}

	// An uncontended acquire finishes inside lock_acquire_start.
	op1 := h.start("r", 10000, "")
	if e := h.await(op1, time.Second); e.kind != 1 || e.status != abi.OK {
		t.Fatalf("op1 event %+v", e)
	}
	status, lock1, _ := h.result(op1)
	if status != abi.OK || lock1 == 0 {
		t.Fatalf("op1 result %d, lock %d", status, lock1)
	}
	if status, _, _ := h.result(op1); status != abi.InvalidHandle {
		t.Fatalf("op1 result taken twice: %d", status)
	}
	if h.run(); h.nextRun <= 0 || h.nextRun > 10001 {
		t.Fatalf("next_run_ms with one held lock: %d", h.nextRun)
	}

	// A waiting acquire stays pending, polls at most every 5 ms, and is
	// woken by the release of the holder in the same instance.
	op2 := h.start("r", 10000, `{"wait_ms":30000}`)
	if status, lock, _ := h.result(op2); status != abi.Pending || lock != 0 {
		t.Fatalf("op2 while held: %d %d", status, lock)
	}
	if h.run(); h.nextRun < 0 || h.nextRun > 5 {
		t.Fatalf("next_run_ms while an acquire is pending: %d", h.nextRun)
	}
	if status, _ := rawCall(t, h.in, "lock_release", lock1, h.errOut()); status != abi.OK {
		t.Fatalf("release lock1: %d", status)
	}
	if e := h.await(op2, 5*time.Second); e.kind != 1 || e.status != abi.OK {
		t.Fatalf("op2 event %+v", e)
	}
	status, lock2, _ := h.result(op2)
	if status != abi.OK || lock2 == 0 || lock2 == lock1 {
		t.Fatalf("op2 result %d, lock %d", status, lock2)
	}

	// Canceling a waiting acquire ends it with CANCELED and leaves no key
	// of its own; a second cancel is refused.
	op3 := h.start("r", 10000, `{"wait_ms":30000}`)
	if status := h.call("lock_cancel", op3); status != abi.OK {
		t.Fatalf("cancel op3: %d", status)
	}
	if status := h.call("lock_cancel", op3); status != abi.InvalidHandle {
		t.Fatalf("cancel op3 twice: %d", status)
	}
	if e := h.await(op3, time.Second); e.status != abi.Canceled {
		t.Fatalf("op3 event %+v", e)
	}
	if status, _, rec := h.result(op3); status != abi.Canceled || rec.Message == "" {
		t.Fatalf("op3 result %d %+v", status, rec)
	}

	// A wait that runs out reports NOT_ACQUIRED.
	op4 := h.start("r", 10000, `{"wait_ms":100}`)
	if e := h.await(op4, 5*time.Second); e.status != abi.NotAcquired {
		t.Fatalf("op4 event %+v", e)
	}
	if status, _, rec := h.result(op4); status != abi.NotAcquired || !strings.Contains(rec.Message, "not acquired") {
		t.Fatalf("op4 result %d %+v", status, rec)
	}

	// Only lock2's token is on the nodes.
	info := h.info(lock2)
	for i, n := range c.Nodes {
		if v, err := n.Do("GET", "r"); err != nil || v != info.Token {
			t.Fatalf("node %d holds %v (%v), want lock2's token", i, v, err)
		}
	}
	if status, _ := rawCall(t, h.in, "lock_release", lock2, h.errOut()); status != abi.OK {
		t.Fatalf("release lock2: %d", status)
	}
	for _, l := range []uint64{lock1, lock2} {
		if status := h.call("lock_free", l); status != abi.OK {
			t.Fatalf("free lock %d: %d", l, status)
		}
	}
	if h.run(); h.nextRun != -1 || len(h.events) != 0 {
		t.Fatalf("after everything was freed: next %d, events %+v", h.nextRun, h.events)
	}
	c.AssertNoKeys(t)
}

func (h *nbHarness) info(lock uint64) abi.Info {
	h.t.Helper()
	if status, _ := rawCall(h.t, h.in, "lock_info", lock, uint64(h.in.scratch+offInfo), h.errOut()); status != abi.OK {
		h.t.Fatalf("info: %d", status)
	}
	var info abi.Info
	if err := json.Unmarshal(h.in.takeBuf(offInfo), &info); err != nil {
		h.t.Fatal(err)
	}
	return info
}

// TestNonBlockingManyWaiters: 200 acquires of one resource wait in one
// instance at once; each gets the lock in turn, exactly once, and the
// events arrive through a small event buffer (4 per lock_run).
func TestNonBlockingManyWaiters(t *testing.T) {
	c := redistest.Start(t, 1)
	h := newNBHarness(t, c.URLs(), `{"nodes":["`+c.URLs()[0]+`"],"node_timeout_ms":200}`)
	const n = 200
	ops := map[uint64]bool{}
	for i := 0; i < n; i++ {
		ops[h.start("hot", 10000, `{"wait_ms":60000}`)] = true
	}
	got := 0
	deadline := time.Now().Add(60 * time.Second)
	for got < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d acquired", got, n)
		}
		h.run()
		for _, e := range h.events {
			if !ops[e.handle] || e.kind != 1 || e.status != abi.OK {
				t.Fatalf("event %+v", e)
			}
			delete(ops, e.handle)
			status, lock, _ := h.result(e.handle)
			if status != abi.OK {
				t.Fatalf("result %d", status)
			}
			// Held by exactly this lock: nobody else may have been
			// granted it meanwhile.
			if v, err := c.Nodes[0].Do("GET", "hot"); err != nil || v != h.info(lock).Token {
				t.Fatalf("key holds %v, not the new holder's token %s (acquired #%d, batch %+v)", v, h.info(lock).Token, got, h.events)
			}
			if status := h.call("lock_free", lock); status != abi.OK {
				t.Fatalf("free: %d", status)
			}
			got++
		}
		h.events = h.events[:0]
		if h.nextRun > 0 && got < n {
			time.Sleep(time.Duration(h.nextRun) * time.Millisecond)
		}
	}
	if h.run(); h.nextRun != -1 {
		t.Fatalf("next_run_ms after all: %d", h.nextRun)
	}
	c.AssertNoKeys(t)
}

// TestNonBlockingLossAndFree: a lock of the non-blocking path reports its
// loss once as an event; freeing a pending operation, a finished untaken
// one, or the client leaves no key; bad handles and buffers are refused.
func TestNonBlockingLossAndFree(t *testing.T) {
	c := redistest.Start(t, 1)
	h := newNBHarness(t, c.URLs(), `{"nodes":["`+c.URLs()[0]+`"],"node_timeout_ms":200}`)

	// Auto-extended lock whose key disappears: the next extension finds
	// it gone and the loss is an event.
	op := h.start("ext", 600, `{"auto_extend":true}`)
	h.await(op, time.Second)
	_, lock, _ := h.result(op)
	if _, err := c.Nodes[0].Do("DEL", "ext"); err != nil {
		t.Fatal(err)
	}
	if e := h.await(lock, 5*time.Second); e.kind != 2 || e.status != abi.Lost {
		t.Fatalf("loss event %+v", e)
	}
	// Expiry of a lock that is not extended is a loss too.
	op = h.start("short", 50, "")
	h.await(op, time.Second)
	_, short, _ := h.result(op)
	if e := h.await(short, 5*time.Second); e.kind != 2 {
		t.Fatalf("expiry event %+v", e)
	}
	for _, l := range []uint64{lock, short} {
		if status, _ := rawCall(t, h.in, "lock_release", l, h.errOut()); status != abi.Lost {
			t.Fatalf("release of a lost lock: %d", status)
		}
		h.call("lock_free", l)
	}

	// Finished but never taken: freeing the operation releases its lock.
	op = h.start("untaken", 10000, "")
	if keys, err := c.Nodes[0].Keys(); err != nil || len(keys) != 1 {
		t.Fatalf("keys after the acquire: %v", keys)
	}
	if status := h.call("lock_free", op); status != abi.OK {
		t.Fatalf("free untaken op: %d", status)
	}
	// Pending: freeing it cancels it; the holder is unaffected.
	holder := h.start("held", 10000, "")
	h.await(holder, time.Second)
	_, held, _ := h.result(holder)
	op = h.start("held", 10000, `{"wait_ms":30000}`)
	if status := h.call("lock_free", op); status != abi.OK {
		t.Fatalf("free pending op: %d", status)
	}
	if status, _, _ := h.result(op); status != abi.InvalidHandle {
		t.Fatalf("result of a freed op: %d", status)
	}
	// A freed operation is never reported.
	h.run()
	for _, e := range h.events {
		if e.handle == op {
			t.Fatalf("event for a freed op: %+v", e)
		}
	}

	// Wrong kinds and bad buffers.
	if status, _, _ := h.result(h.client); status != abi.InvalidHandle {
		t.Fatalf("client handle as an op: %d", status)
	}
	if status := h.call("lock_cancel", held); status != abi.InvalidHandle {
		t.Fatalf("cancel a lock handle: %d", status)
	}
	if n := h.call("lock_run", uint64(h.runBuf), 7); n != -1 {
		t.Fatalf("lock_run with a 7-byte buffer: %d", n)
	}
	if n := h.call("lock_run", 0, 64); n != -1 {
		t.Fatalf("lock_run with a NULL buffer: %d", n)
	}
	p, n := h.str("x")
	if status, rec := rawCall(t, h.in, "lock_acquire_start", h.client, p, n, 0, 0, 0, h.out(), h.errOut()); status != abi.InvalidArgument || rec.Arg != "ttl_ms" || h.in.u64(offHandle) != 0 {
		t.Fatalf("ttl 0: %d %+v", status, rec)
	}
	if status, _ := rawCall(t, h.in, "lock_acquire_start", held, p, n, 1000, 0, 0, h.out(), h.errOut()); status != abi.InvalidHandle {
		t.Fatalf("a lock handle as a client: %d", status)
	}

	// Freeing the client cancels its pending operations and releases its
	// locks.
	op = h.start("held", 10000, `{"wait_ms":30000}`)
	if status := h.call("lock_free", h.client); status != abi.OK {
		t.Fatalf("free client: %d", status)
	}
	if status, _, _ := h.result(op); status != abi.InvalidHandle {
		t.Fatalf("op of a freed client: %d", status)
	}
	if h.run(); h.nextRun != -1 {
		t.Fatalf("next_run_ms after the client was freed: %d", h.nextRun)
	}
	c.AssertNoKeys(t)
}
