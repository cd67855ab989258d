package core_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/core/testkit/redistest/faultproxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// No ttl is refused for being short next to the node timeout: a grant
// whose validity (ttl − elapsed − drift) is not positive is no lock, and
// the error says why in the caller's terms, naming the ttl and the node
// timeout. Against a real node: one frozen as the acquire reaches it and
// thawed once the ttl has passed, and a ttl shorter than the clock-drift
// allowance itself.
func TestTTLTooShortForTheRoundTrip(t *testing.T) {
	ctx := context.Background()
	tooShort := func(t *testing.T, err error, ttl string) {
		t.Helper()
		require.ErrorIs(t, err, core.ErrUnavailable)
		assert.Contains(t, err.Error(), "too slowly for the ttl")
		assert.Contains(t, err.Error(), "a "+ttl+" ttl")
		assert.Contains(t, err.Error(), "node timeout (10s)")
	}

	t.Run("frozen then slow", func(t *testing.T) {
		c := redistest.Start(t, 1)
		n := c.Nodes[0]
		const resource = "ttl-outlived-by-the-round"
		p, err := faultproxy.Start(faultproxy.Config{
			Routes:   []faultproxy.Route{{Target: n.Addr(), PID: n.PID()}},
			Patterns: [][]byte{[]byte(resource)},
			Signal:   syscall.SIGSTOP,
		})
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		t.Cleanup(func() { _ = n.Thaw() })
		cl, err := core.New(core.Config{Nodes: []string{"redis://" + p.Addrs()[0]}, NodeTimeout: 10 * time.Second})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		const ttl = 30 * time.Millisecond
		thawed := make(chan error, 1)
		go func() {
			ok := poll.Wait(10*time.Second, func() bool { return len(p.Fired()) == 1 })
			if !ok {
				thawed <- errors.New("the proxy never froze the node")
				return
			}
			time.Sleep(2 * ttl) // time that must pass: the ttl outlived while the node is frozen
			thawed <- n.Thaw()
		}()
		_, err = cl.Acquire(ctx, resource, ttl)
		require.NoError(t, <-thawed)
		tooShort(t, err, "30ms")
		c.AssertNoKeys(t)
	})

	t.Run("shorter than the drift allowance", func(t *testing.T) {
		c := redistest.Start(t, 3)
		cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: 10 * time.Second})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		// 2 ms less its allowance (2 ms of clock precision and 1% of drift)
		// leaves nothing, however fast the nodes answer.
		_, err = cl.Acquire(ctx, "ttl-below-its-allowance", 2*time.Millisecond)
		tooShort(t, err, "2ms")
		_, err = cl.Acquire(ctx, "ttl-below-its-allowance", 2*time.Millisecond, core.Fence())
		tooShort(t, err, "2ms")
		_, err = cl.Acquire(ctx, "ttl-below-its-allowance", 2*time.Millisecond, core.Permits(2))
		tooShort(t, err, "2ms")
		c.AssertNoKeys(t)
	})
}
