package host

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/redistest"
)

// TestInstantiationsDoNotOverlap: concurrent acquires that each need a new
// instance instantiate one after the other. Overlapping instantiations (CPU
// bursts the Go scheduler could not spread) starved the goroutines doing
// other calls' Redis I/O on a loaded 2-core machine for 100-200 ms; their
// node timeouts fired, and a release that lost a node that way left its key
// there (SeedContention: "node 0 still holds keys").
func TestInstantiationsDoNotOverlap(t *testing.T) {
	m := loadTestModule(t)
	c := redistest.Start(t, 1)

	var inFlight, most atomic.Int32
	beforeInstantiate = func() {
		n := inFlight.Add(1)
		for old := most.Load(); n > old && !most.CompareAndSwap(old, n); old = most.Load() {
		}
		// Stay inside a moment, so that an overlapping instantiation
		// would be counted.
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
	}
	defer func() { beforeInstantiate = nil }()

	cl, err := m.NewClient(core.Config{Nodes: c.URLs()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Each held lock keeps its instance, so every acquire but the first
	// instantiates.
	const n = 4
	locks := make([]*Lock, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := cl.Acquire(context.Background(), fmt.Sprint("r", i), 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			locks[i] = l
		}()
	}
	wg.Wait()
	for _, l := range locks {
		if l != nil {
			if err := l.Release(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}
	if got := most.Load(); got != 1 {
		t.Fatalf("%d instantiations ran at the same time, want 1", got)
	}
	c.AssertNoKeys(t)
}
