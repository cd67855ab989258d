package host

import (
	"context"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/redistest"
)

// TestPrimedLockAgreesWithModule: a lock the host sets up without asking
// the module (primeLocked) has the module's token and never more validity
// than the module gives it, also after waiting through retries.
func TestPrimedLockAgreesWithModule(t *testing.T) {
	m := loadTestModule(t)
	c := redistest.Start(t, 3)
	drift := 0.05
	cl, err := m.NewClient(core.Config{Nodes: c.URLs(), NodeTimeout: 100 * time.Millisecond, DriftFactor: &drift})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	check := func(l *Lock) {
		t.Helper()
		l.in.mu.Lock()
		defer l.in.mu.Unlock()
		l.mu.Lock()
		token, hostUntil := l.token, l.validUntil
		l.mu.Unlock()
		l.refreshLocked() // the module's view
		l.mu.Lock()
		defer l.mu.Unlock()
		if token != l.token {
			t.Fatalf("primed token %q, module's %q", token, l.token)
		}
		// The module reports whole milliseconds, rounded down.
		if hostUntil.After(l.validUntil.Add(time.Millisecond)) {
			t.Fatalf("primed validity ends %v after the module's", hostUntil.Sub(l.validUntil))
		}
		for _, n := range c.Nodes {
			if got, _ := n.Do("GET", "r"); got != token {
				t.Fatalf("node %d holds %q, want %q", n.Index, got, token)
			}
		}
	}
	first, err := cl.Acquire(ctx, "r", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	check(first)
	// A waiting acquire that wins after retries.
	done := make(chan *Lock)
	go func() {
		l, err := cl.Acquire(ctx, "r", 2*time.Second, core.Wait(5*time.Second))
		if err != nil {
			t.Error(err)
		}
		done <- l
	}()
	time.Sleep(30 * time.Millisecond) // let it retry a few times
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	second := <-done
	if second == nil {
		return
	}
	check(second)
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
	c.AssertNoKeys(t)
}
