package main

import (
	"context"
	"sync"
	"testing"
)

func errCanceledForTest() error { return context.Canceled }

func TestHandleTable(t *testing.T) {
	tb := &handleTable{m: map[uint64]any{}}
	op := &opObj{cancel: func() {}}
	lo := &lockObj{}
	h1, err := tb.add(op)
	if err != nil || h1 != 1 {
		t.Fatalf("first handle %d %v", h1, err)
	}
	h2, _ := tb.add(lo)
	if h2 != 2 {
		t.Fatalf("second handle %d", h2)
	}
	if _, ok := get[*lockObj](tb, h1); ok {
		t.Fatal("wrong kind found")
	}
	if _, ok := take[*clientObj](tb, h2); ok {
		t.Fatal("wrong kind taken")
	}
	if got, ok := get[*lockObj](tb, h2); !ok || got != lo {
		t.Fatal("lock not found")
	}
	if _, ok := take[*lockObj](tb, h2); !ok {
		t.Fatal("take")
	}
	if _, ok := take[*lockObj](tb, h2); ok {
		t.Fatal("double take")
	}
	if _, ok := get[*opObj](tb, 0); ok {
		t.Fatal("handle 0")
	}
	h3, _ := tb.add(lo)
	if h3 != 3 {
		t.Fatalf("handles are never reused: got %d", h3)
	}
	// exhaustion below 2^53
	tb.next = maxHandle - 1
	h, err := tb.add(lo)
	if err != nil || h != maxHandle {
		t.Fatalf("last handle %d %v", h, err)
	}
	if _, err := tb.add(lo); err == nil {
		t.Fatal("handle beyond 2^53-1")
	}
}

func TestHandleTableConcurrent(t *testing.T) {
	tb := &handleTable{m: map[uint64]any{}}
	var wg sync.WaitGroup
	seen := sync.Map{}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				h, err := tb.add(&lockObj{})
				if err != nil {
					t.Error(err)
					return
				}
				if _, dup := seen.LoadOrStore(h, true); dup {
					t.Errorf("handle %d handed out twice", h)
				}
				if i%2 == 0 {
					take[*lockObj](tb, h)
				}
			}
		}()
	}
	wg.Wait()
	if tb.len() != 4000 {
		t.Fatalf("live handles %d", tb.len())
	}
}

func TestOpCancelFinish(t *testing.T) {
	canceled := 0
	op := &opObj{cancel: func() { canceled++ }}
	if !op.tryCancel() || canceled != 1 {
		t.Fatal("cancel of a pending op")
	}
	if !op.finish() {
		t.Fatal("finish must report the cancel")
	}
	if op.tryCancel() {
		t.Fatal("cancel after finish")
	}
	op2 := &opObj{cancel: func() { canceled++ }}
	if op2.finish() || op2.tryCancel() {
		t.Fatal("finished first: not canceled")
	}
}
