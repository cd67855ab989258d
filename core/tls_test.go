package core_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/core/testkit/tlstest"
	"github.com/stretchr/testify/require"
)

// TestTLS: Config.TLS (private CA, mutual TLS, ServerName) on rediss://
// nodes, against TLS-only redis-servers.
func TestTLS(t *testing.T) { tlstest.Run(t, core.New) }

// TestTLSCluster: a rediss:// cluster=yes node on a Redis Cluster that
// runs over TLS (MOVED names TLS ports).
func TestTLSCluster(t *testing.T) { tlstest.RunCluster(t, core.New) }

// NewFromClients takes each go-redis client's TLSConfig: a Config.TLS
// beside them is refused rather than silently ignored.
func TestTLSWithClientsRefused(t *testing.T) {
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rc.Close()
	_, err := core.NewFromClients(core.Config{TLS: &tls.Config{}}, rc)
	var ae *core.ArgumentError
	require.ErrorAs(t, err, &ae, "want an ArgumentError for tls")
	require.Equal(t, "tls", ae.Arg, "the argument named by %v", err)
}

// TestTLSPerNodeFromClients: NewFromClients dials each rediss node with its
// own go-redis client's TLSConfig, so nodes whose certificates come from
// different private CAs sit in one Client beside a plain node.
func TestTLSPerNodeFromClients(t *testing.T) {
	c := tlstest.Make(t)
	a := c.Start(t, c.Server, c.ServerKey, false) // from CA
	b := c.Start(t, c.Other, c.OtherKey, false)   // from OtherCA
	plain := redistest.Start(t, 1).Nodes[0]
	ca, other := tlstest.Pool(t, c.CA), tlstest.Pool(t, c.OtherCA)
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	clients := func(caA, caB *x509.CertPool) []*redis.Client {
		rs := []*redis.Client{
			redis.NewClient(&redis.Options{Addr: addr(a), TLSConfig: &tls.Config{RootCAs: caA}}),
			redis.NewClient(&redis.Options{Addr: addr(b), TLSConfig: &tls.Config{RootCAs: caB}}),
			redis.NewClient(&redis.Options{Addr: plain.Addr()}),
		}
		t.Cleanup(func() {
			for _, r := range rs {
				r.Close()
			}
		})
		return rs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("each node its own CA", func(t *testing.T) {
		rs := clients(ca, other)
		cl, err := core.NewFromClients(core.Config{NodeTimeout: 2 * time.Second}, rs...)
		require.NoError(t, err)
		defer cl.Close()
		lock, err := cl.Acquire(ctx, "tls:pernode", 10*time.Second)
		require.NoError(t, err, "Acquire")
		// Acquire returns at a quorum, so the third grant may still be on
		// its way: every node, each reached through its own CA, holds the
		// key once its reply is in.
		for i, r := range rs {
			poll.Eventually(t, 10*time.Second, fmt.Sprintf("node %d holds %s", i, lock.Key()), func() bool {
				n, err := r.Exists(ctx, lock.Key()).Result()
				require.NoError(t, err, "node %d: EXISTS", i)
				return n == 1
			})
		}
		require.NoError(t, lock.Release(ctx))
	})
	t.Run("one CA for both TLS nodes", func(t *testing.T) {
		cl, err := core.NewFromClients(core.Config{NodeTimeout: 2 * time.Second}, clients(ca, ca)...)
		require.NoError(t, err)
		defer cl.Close()
		lock, err := cl.Acquire(ctx, "tls:onece", 10*time.Second) // 2 of 3: a quorum
		require.NoError(t, err, "Acquire")
		defer lock.Release(ctx)
		in, err := cl.Inspect(ctx, "tls:onece")
		require.NoError(t, err)
		for i, n := range in.Nodes {
			if i == 1 {
				require.ErrorContains(t, n.Err, "certificate signed by unknown authority", "node 1: want its verification failure")
			} else {
				require.NoError(t, n.Err, "node %d", i)
				require.True(t, n.Holder, "node %d: %+v, want the holder's key", i, n)
			}
		}
	})
	t.Run("the CAs swapped", func(t *testing.T) {
		cl, err := core.NewFromClients(core.Config{NodeTimeout: 2 * time.Second}, clients(other, ca)...)
		require.NoError(t, err)
		defer cl.Close()
		_, err = cl.Acquire(ctx, "tls:swapped", 10*time.Second)
		var ue *core.UnavailableError
		require.ErrorAs(t, err, &ue, "Acquire: want ErrUnavailable from the two TLS nodes")
		require.Len(t, ue.Nodes, 2, "Acquire: want ErrUnavailable from the two TLS nodes, got %v", err)
		for _, ne := range ue.Nodes {
			require.ErrorContains(t, ne, "certificate signed by unknown authority", "want a verification failure")
		}
	})
}

// TestTLSNodeTLS: Config.NodeTLS replaces Config.TLS for the nodes it names
// (two private CAs and a plain node in one Client).
func TestTLSNodeTLS(t *testing.T) { tlstest.RunNodeTLS(t, core.New) }
