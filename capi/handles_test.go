package main

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func errCanceledForTest() error { return context.Canceled }

func TestHandleTable(t *testing.T) {
	tb := &handleTable{m: map[uint64]any{}}
	op := &opObj{cancel: func() {}}
	lo := &lockObj{}
	h1, err := tb.add(op)
	require.NoError(t, err)
	require.Equal(t, uint64(1), h1, "first handle")
	h2, _ := tb.add(lo)
	require.Equal(t, uint64(2), h2, "second handle")
	_, ok := get[*lockObj](tb, h1)
	assert.False(t, ok, "wrong kind found")
	_, ok = take[*clientObj](tb, h2)
	assert.False(t, ok, "wrong kind taken")
	got, ok := get[*lockObj](tb, h2)
	require.True(t, ok, "lock not found")
	require.Same(t, lo, got, "the lock found")
	_, ok = take[*lockObj](tb, h2)
	require.True(t, ok, "take")
	_, ok = take[*lockObj](tb, h2)
	assert.False(t, ok, "double take")
	_, ok = get[*opObj](tb, 0)
	assert.False(t, ok, "handle 0")
	h3, _ := tb.add(lo)
	require.Equal(t, uint64(3), h3, "handles are never reused")
	// exhaustion below 2^53
	tb.next = maxHandle - 1
	h, err := tb.add(lo)
	require.NoError(t, err, "the last handle")
	require.Equal(t, uint64(maxHandle), h, "the last handle")
	_, err = tb.add(lo)
	require.Error(t, err, "handle beyond 2^53-1")
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
				if !assert.NoError(t, err) { // not require: another goroutine
					return
				}
				_, dup := seen.LoadOrStore(h, true)
				assert.False(t, dup, "handle %d handed out twice", h)
				if i%2 == 0 {
					take[*lockObj](tb, h)
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 4000, tb.len(), "live handles")
}

func TestOpCancelFinish(t *testing.T) {
	canceled := 0
	op := &opObj{cancel: func() { canceled++ }}
	require.True(t, op.tryCancel(), "cancel of a pending op")
	require.Equal(t, 1, canceled, "cancel functions run")
	require.True(t, op.finish(), "finish must report the cancel")
	require.False(t, op.tryCancel(), "cancel after finish")
	op2 := &opObj{cancel: func() { canceled++ }}
	require.False(t, op2.finish(), "finished first: not canceled")
	require.False(t, op2.tryCancel(), "cancel after finish")
}
