package core_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/core/testkit/redistest/hostile"
)

// hostileCause is the cause each misbehaviour gives its node. A node that
// sends an endless reply fails when the decoder's bound is crossed or at
// the node timeout, whichever comes first on a loaded machine.
//
// hostileTimeout is long enough that a loaded machine answers every
// handshake within it: the causes that do not come from the timeout are
// then the misbehaviour's own.
const hostileTimeout = 2 * time.Second

var hostileCause = map[hostile.Behavior]string{
	hostile.Garbage:       `redis protocol error: malformed reply line|redis protocol error: unexpected reply type`,
	hostile.WrongType:     `redis protocol error: SET answered an array of 2, not OK`,
	hostile.EndlessBulk:   `redis protocol error: bulk string of 2147483647 bytes`,
	hostile.MaxBulk:       `within the node timeout|redis protocol error: bulk string not followed by CRLF`,
	hostile.DeepNesting:   `redis protocol error: arrays nested too deep`,
	hostile.EndlessArray:  `within the node timeout|redis protocol error: a reply longer than|redis protocol error: a reply of more than \d+ values`,
	hostile.Silent:        `within the node timeout`,
	hostile.CloseMidReply: `EOF|connection reset|closed`,
}

func startHostile(t *testing.T, b hostile.Behavior) *hostile.Server {
	t.Helper()
	s, err := hostile.Start(b)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// TestHostileNode puts a node that passes the handshake and then
// misbehaves beside real redis-servers: with two honest nodes of three the
// lock is granted and released by them, the hostile node's failure named;
// with two hostile nodes of three the acquire fails, each hostile node
// with its own clear cause, and the honest node keeps no key. Nothing
// hangs: every call returns once the node timeout has passed.
func TestHostileNode(t *testing.T) {
	real := redistest.Start(t, 2)
	for _, b := range hostile.Behaviors {
		t.Run(string(b), func(t *testing.T) {
			leakCheck(t)
			cause := regexp.MustCompile(hostileCause[b])
			h1, h2 := startHostile(t, b), startHostile(t, b)
			ctx := context.Background()

			// Two honest nodes of three decide.
			cl, err := core.New(core.Config{Nodes: []string{real.Nodes[0].URL(), real.Nodes[1].URL(), "redis://" + h1.Addr()}, NodeTimeout: hostileTimeout})
			require.NoError(t, err)
			l, err := cl.Acquire(ctx, "hostile:"+string(b), 10*time.Second)
			require.NoError(t, err, "the honest quorum grants")
			require.NoError(t, l.Release(ctx), "the honest quorum releases")
			require.NoError(t, cl.Close())
			assert.Positive(t, h1.Hostile.Load(), "the hostile node was asked")

			// Two hostile nodes of three: unavailable, each cause named.
			cl, err = core.New(core.Config{Nodes: []string{real.Nodes[0].URL(), "redis://" + h1.Addr(), "redis://" + h2.Addr()}, NodeTimeout: hostileTimeout})
			require.NoError(t, err)
			_, err = cl.Acquire(ctx, "hostile2:"+string(b), 10*time.Second)
			require.ErrorIs(t, err, core.ErrUnavailable)
			var ue *core.UnavailableError
			require.True(t, errors.As(err, &ue), "%v", err)
			t.Logf("%v", err)
			causes := map[int]string{}
			for _, ne := range ue.Nodes {
				causes[ne.Node] = ne.Err.Error()
			}
			assert.NotContains(t, causes, 0, "the honest node granted: %v", err)
			for _, i := range []int{1, 2} {
				assert.Regexp(t, cause, causes[i], "node %d's cause in %v", i, err)
			}
			require.NoError(t, cl.Close())
			// The honest node's grant was cleaned up.
			poll.Eventually(t, 10*time.Second, "no key left on the honest nodes", func() bool {
				for _, n := range real.Nodes {
					if keys, err := n.Keys(); err != nil || len(keys) > 0 {
						return false
					}
				}
				return true
			})
			// The client closed its connections to the hostile nodes.
			poll.Eventually(t, 10*time.Second, "no connection left to the hostile nodes", func() bool {
				return h1.Conns() == 0 && h2.Conns() == 0
			})
		})
	}
}
