package tlstest

import (
	"context"
	"crypto/tls"
	"strconv"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/require"
)

// RunNodeTLS runs the cases of Config.NodeTLS, which replaces Config.TLS for
// the nodes it names: two TLS nodes whose certificates come from two private
// CAs and a plain node in one Client.
func RunNodeTLS(t *testing.T, newClient NewClient) {
	c := Make(t)
	a := c.Start(t, c.Server, c.ServerKey, false) // from CA
	b := c.Start(t, c.Other, c.OtherKey, false)   // from OtherCA
	plain := redistest.Start(t, 1).Nodes[0]
	nodes := []string{"rediss://127.0.0.1:" + strconv.Itoa(a), "rediss://127.0.0.1:" + strconv.Itoa(b), plain.URL()}
	base := &tls.Config{RootCAs: Pool(t, c.CA)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	inspect := func(t *testing.T, nodeTLS map[int]*tls.Config) *core.Inspection {
		cl, err := newClient(core.Config{Nodes: nodes, NodeTimeout: 2 * time.Second, TLS: base, NodeTLS: nodeTLS})
		require.NoError(t, err)
		defer cl.Close()
		lock, err := cl.Acquire(ctx, "tls:nodetls", 10*time.Second)
		require.NoError(t, err, "Acquire")
		defer lock.Release(ctx)
		in, err := cl.Inspect(ctx, "tls:nodetls")
		require.NoError(t, err)
		return in
	}
	t.Run("node 1 its own CA", func(t *testing.T) {
		for i, n := range inspect(t, map[int]*tls.Config{1: {RootCAs: Pool(t, c.OtherCA)}}).Nodes {
			require.NoError(t, n.Err, "node %d", i)
			require.True(t, n.Holder, "node %d: %+v, want the holder's key", i, n)
		}
	})
	t.Run("the client's CA only", func(t *testing.T) {
		for i, n := range inspect(t, nil).Nodes {
			if i == 1 {
				require.ErrorContains(t, n.Err, "certificate signed by unknown authority", "node 1: want its verification failure")
			} else {
				require.NoError(t, n.Err, "node %d", i)
				require.True(t, n.Holder, "node %d: %+v, want the holder's key", i, n)
			}
		}
	})
	t.Run("an index that is not a node", func(t *testing.T) {
		_, err := newClient(core.Config{Nodes: nodes, NodeTLS: map[int]*tls.Config{3: {}}})
		var ae *core.ArgumentError
		require.ErrorAs(t, err, &ae, "want an ArgumentError for nodetls")
		require.Equal(t, "nodetls", ae.Arg, "the argument named by %v", err)
	})
}
