package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestFenceSurvivesDelayedEmptyRestarts: fences and election terms keep
// increasing when the nodes that hold the last one's counters restart
// without their data, after staying down longer than the ttl (the delayed
// restart the failure model asks for, which protects the locks but not
// counters that never expire). Five nodes: the first grant runs while
// nodes 0 and 1 are down, so its counters are on nodes 2-4; then nodes 1
// and 3 die, stay down past the ttl and come back empty, and nodes 2 and 4
// die, so the next grant's quorum is nodes 0, 1 and 3, none of which holds
// a counter. The counters alone gave that grant fence 1 again (the first
// grant's); the servers' clock floor gives it a larger one.
func TestFenceSurvivesDelayedEmptyRestarts(t *testing.T) {
	const ttl = 300 * time.Millisecond
	kinds := []struct {
		name  string
		grant func(t *testing.T, c *core.Client) int64 // acquires, releases, returns the fence
	}{
		{"mutex", func(t *testing.T, c *core.Client) int64 {
			return acquired(t, c)(c.Acquire(context.Background(), "res", ttl, core.Fence(), core.Wait(5*time.Second)))
		}},
		{"election", func(t *testing.T, c *core.Client) int64 {
			ld, err := c.Campaign(context.Background(), "e1", "replica", core.CampaignTTL(ttl), core.CampaignWait(5*time.Second))
			require.NoError(t, err)
			require.NoError(t, ld.Resign(context.Background()))
			return ld.Term()
		}},
		{"writer", func(t *testing.T, c *core.Client) int64 {
			return acquired(t, c)(c.Acquire(context.Background(), "res", ttl, core.Write(), core.Fence(), core.Wait(5*time.Second)))
		}},
		{"permit", func(t *testing.T, c *core.Client) int64 {
			return acquired(t, c)(c.Acquire(context.Background(), "res", ttl, core.Permits(2), core.Fence(), core.Wait(5*time.Second)))
		}},
		{"multi", func(t *testing.T, c *core.Client) int64 {
			return acquired(t, c)(c.AcquireAll(context.Background(), []string{"res", "other"}, ttl, core.Fence(), core.Wait(5*time.Second)))
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			c := redistest.Start(t, 5)
			n := c.Nodes
			client := newClient(t, c)
			require.NoError(t, n[0].Kill())
			require.NoError(t, n[1].Kill())
			first := k.grant(t, client) // granted by nodes 2, 3 and 4
			require.Positive(t, first)
			require.NoError(t, n[0].Restart())
			for _, i := range []int{1, 3} {
				require.NoError(t, n[i].Kill())
			}
			killed := time.Now()
			// The delayed restart: down for longer than the ttl.
			poll.Eventually(t, 10*ttl, "the ttl to pass", func() bool { return time.Since(killed) > ttl+50*time.Millisecond })
			for _, i := range []int{1, 3} {
				require.NoError(t, n[i].Restart())
			}
			require.NoError(t, n[2].Kill())
			require.NoError(t, n[4].Kill())
			// Control: the next grant's quorum holds no counter at all.
			for _, i := range []int{0, 1, 3} {
				keys, err := n[i].Keys()
				require.NoError(t, err)
				require.Empty(t, keys, "node %d", i)
			}
			next := k.grant(t, client) // granted by nodes 0, 1 and 3
			require.Greater(t, next, first, "the fence after the empty restarts is not above the one before")
		})
	}
}

// acquired releases the lock an acquire returned and answers its fence.
func acquired(t *testing.T, c *core.Client) func(*core.Lock, error) int64 {
	return func(l *core.Lock, err error) int64 {
		t.Helper()
		require.NoError(t, err)
		require.NoError(t, l.Release(context.Background()))
		return l.Fence()
	}
}
