package tlstest

import (
	"context"
	"crypto/tls"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
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
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		lock, err := cl.Acquire(ctx, "tls:nodetls", 10*time.Second)
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		defer lock.Release(ctx)
		in, err := cl.Inspect(ctx, "tls:nodetls")
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	t.Run("node 1 its own CA", func(t *testing.T) {
		for i, n := range inspect(t, map[int]*tls.Config{1: {RootCAs: Pool(t, c.OtherCA)}}).Nodes {
			if n.Err != nil || !n.Holder {
				t.Fatalf("node %d: %+v, want the holder's key", i, n)
			}
		}
	})
	t.Run("the client's CA only", func(t *testing.T) {
		for i, n := range inspect(t, nil).Nodes {
			if i == 1 {
				if n.Err == nil || !strings.Contains(n.Err.Error(), "certificate signed by unknown authority") {
					t.Fatalf("node 1: err %v, want its verification failure", n.Err)
				}
			} else if n.Err != nil || !n.Holder {
				t.Fatalf("node %d: %+v, want the holder's key", i, n)
			}
		}
	})
	t.Run("an index that is not a node", func(t *testing.T) {
		_, err := newClient(core.Config{Nodes: nodes, NodeTLS: map[int]*tls.Config{3: {}}})
		var ae *core.ArgumentError
		if !errors.As(err, &ae) || ae.Arg != "nodetls" {
			t.Fatalf("got %v, want an ArgumentError for nodetls", err)
		}
	})
}
