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
	"github.com/stretchr/testify/require"
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
// Here the first holder is paused past its lease (its ttl is short), a second
// client acquires and writes, and the first holder's late write is refused.
func ExampleFence() {
	nodes, err := redistest.StartCluster(3, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nodes.Close()
	a, err := core.New(core.Config{Nodes: nodes.URLs()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	b, err := core.New(core.Config{Nodes: nodes.URLs()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	store := &fencedStore{}
	ctx := context.Background()

	first, err := a.Acquire(ctx, "report", 300*time.Millisecond, core.Fence())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("first write:", store.Write(first.Fence(), "draft"))
	// ... a long GC pause here outlives the lease; b waits for it to expire ...
	second, err := b.Acquire(ctx, "report", 10*time.Second, core.Fence(), core.Wait(10*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer second.Release(ctx)
	fmt.Println("second write:", store.Write(second.Fence(), "totals"))
	fmt.Println("late write refused:", errors.Is(store.Write(first.Fence(), "draft, late"), errStaleFence))
	// Output:
	// first write: <nil>
	// second write: <nil>
	// late write refused: true
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
	require.NoError(t, err)
	// A is paused until its lease is gone (B's acquire waits for it).
	lb, err := b.Acquire(ctx, "res", 10*time.Second, core.Fence(), core.Wait(10*time.Second))
	require.NoError(t, err)
	require.Greater(t, lb.Fence(), la.Fence(), "B's fence is not above A's")
	require.NoError(t, store.Write(lb.Fence(), "B"))
	require.ErrorIs(t, store.Write(la.Fence(), "A, late"), errStaleFence, "the stale write was accepted")
	// Negative control: without the fence check the late write would win.
	require.Equal(t, "B", store.value, "the store")
	require.NoError(t, lb.Release(ctx))
}
