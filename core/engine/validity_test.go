package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lock is held until start + ttl − (ttl × drift + 2 ms): the elapsed time
// of the winning round is counted once (the key was set no earlier than the
// round's start), not subtracted again from what is left.
func TestValidityCountedOnce(t *testing.T) {
	zero := 0.0
	for _, tc := range []struct {
		drift    *float64
		ttl      time.Duration
		elapsed  time.Duration
		validity time.Duration // left when the acquire completes
	}{
		{nil, time.Second, 16 * time.Millisecond, time.Second - 16*time.Millisecond - 10*time.Millisecond - ClockPrecision},
		{nil, 10 * time.Second, 3 * time.Second, 7*time.Second - 102*time.Millisecond},
		{&zero, 10 * time.Second, time.Second, 9*time.Second - ClockPrecision},
	} {
		env := &fakeEnv{}
		e, err := New(Config{Nodes: []Node{{Network: "tcp", Addr: "n:1"}}, NodeTimeout: MaxNodeTimeout, DriftFactor: tc.drift}, env)
		require.NoError(t, err)
		_, err = e.Acquire(AcquireRequest{Resource: "r", TTL: tc.ttl})
		require.NoError(t, err)
		env.now += tc.elapsed // the replies take this long
		h := &instantHost{e: e}
		lock, err := h.run(t)
		require.NoError(t, err)
		info, ok := e.Lock(lock)
		require.True(t, ok)
		assert.Equal(t, tc.validity, info.Validity, "ttl %v after %v", tc.ttl, tc.elapsed)
	}
}

// A quorum that answers after the validity has run out is no lock.
func TestTooSlowIsNoLock(t *testing.T) {
	env := &fakeEnv{}
	e, err := New(Config{Nodes: []Node{{Network: "tcp", Addr: "n:1"}}, NodeTimeout: MaxNodeTimeout}, env)
	require.NoError(t, err)
	_, err = e.Acquire(AcquireRequest{Resource: "r", TTL: 10 * time.Millisecond})
	require.NoError(t, err)
	env.now += 9 * time.Millisecond // more than ttl − drift (10 − 2.1 ms)
	lock, err := (&instantHost{e: e}).run(t)
	assert.Zero(t, lock)
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "too slowly")
}

// A round that outlives the validity its ttl could give says so in the
// caller's terms: the ttl, the round's time, the drift allowance and the
// node timeout, for an acquire and for an extension to a shorter ttl.
func TestTooSlowNamesTheTTLAndTheNodeTimeout(t *testing.T) {
	env := &fakeEnv{}
	e, err := New(Config{Nodes: []Node{{Network: "tcp", Addr: "n:1"}}, NodeTimeout: 80 * time.Millisecond}, env)
	require.NoError(t, err)
	_, err = e.Acquire(AcquireRequest{Resource: "r", TTL: 10 * time.Millisecond})
	require.NoError(t, err)
	env.now += 9 * time.Millisecond
	h := &instantHost{e: e}
	_, err = h.run(t)
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.EqualError(t, err, "liblock: acquire: unavailable: granted by a quorum but too slowly for the ttl: the round took 9ms and a 10ms ttl, "+
		"less its clock-drift allowance (2.1ms), left no validity; a ttl must outlast the round trip to the nodes, "+
		"which may take up to the node timeout (80ms): give a longer ttl")

	_, err = e.Acquire(AcquireRequest{Resource: "r", TTL: time.Second})
	require.NoError(t, err)
	lock, err := h.run(t)
	require.NoError(t, err)
	_, err = e.Extend(lock, 10*time.Millisecond)
	require.NoError(t, err)
	env.now += 9 * time.Millisecond
	_, err = h.run(t)
	assert.ErrorIs(t, err, ErrLost)
	assert.Contains(t, err.Error(), "extended by a quorum but too slowly for the ttl: the round took 9ms and a 10ms ttl")
	assert.Contains(t, err.Error(), "node timeout (80ms)")
}
