package core_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// fencedStore is the resource a lock protects, made safe against a holder
// that was paused past its lease (Kleppmann's GC-pause story): it refuses a
// write whose fence is lower than one it has already seen.
type fencedStore struct {
	mu    sync.Mutex
	fence int64
	value string
}

var errStaleFence = errors.New("stale fence: a later holder has written")

func (s *fencedStore) Write(fence int64, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fence < s.fence {
		return errStaleFence
	}
	s.fence, s.value = fence, value
	return nil
}

// A lock acquired with core.Fence carries a fencing token that increases
// with every acquisition of the resource; the protected resource checks it.
func ExampleFence() {
	client, err := core.New(core.Config{Nodes: []string{"redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7003"}})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	store := &fencedStore{}
	ctx := context.Background()
	lock, err := client.Acquire(ctx, "report:2026-11", 10*time.Second, core.Fence(), core.Wait(5*time.Second))
	if err != nil {
		panic(err)
	}
	defer lock.Release(ctx)
	// ... a long GC pause here could outlive the lease ...
	if err := store.Write(lock.Fence(), "totals"); errors.Is(err, errStaleFence) {
		fmt.Println("someone else holds the lock now; our write was refused")
	}
}

// TestFencedStoreRejectsStaleHolder plays the GC-pause story against real
// redis-servers: A's lease runs out while it is "paused"; B acquires and
// writes; A wakes up and writes with its old fence, and the store refuses.
func TestFencedStoreRejectsStaleHolder(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := newClient(t, c), newClient(t, c)
	ctx := context.Background()
	store := &fencedStore{}
	la, err := a.Acquire(ctx, "res", 150*time.Millisecond, core.Fence())
	if err != nil {
		t.Fatal(err)
	}
	// A is paused until its lease is gone (B's acquire waits for it).
	lb, err := b.Acquire(ctx, "res", 10*time.Second, core.Fence(), core.Wait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if lb.Fence() <= la.Fence() {
		t.Fatalf("B's fence %d is not above A's %d", lb.Fence(), la.Fence())
	}
	if err := store.Write(lb.Fence(), "B"); err != nil {
		t.Fatal(err)
	}
	if err := store.Write(la.Fence(), "A, late"); !errors.Is(err, errStaleFence) {
		t.Fatalf("the stale write was accepted: %v", err)
	}
	// Negative control: without the fence check the late write would win.
	if store.value != "B" {
		t.Fatalf("store holds %q", store.value)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
