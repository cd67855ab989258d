package tlstest

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/require"
)

// RunCluster runs Config.TLS against a real Redis Cluster whose nodes
// listen with TLS (and run their bus and replication over it; a replica
// each, so the cluster default WAIT 1 is met over TLS replication): a
// rediss:// cluster URL verified with the private CA takes and releases a
// lock on the key's shard; a -MOVED met over TLS (the key's slot migrated
// while held) names the new owner's TLS port and the release follows it;
// without the CA nothing is taken and the cause is the certificate.
func RunCluster(t *testing.T, newClient NewClient) {
	c := Make(t)
	cl := redistest.StartRedisClusterWith(t, redistest.RedisClusterOptions{Primaries: 3, ReplicasEach: 1, TLS: &redistest.ClusterTLS{
		Cert: c.Server, Key: c.ServerKey, ClientCert: c.Client, ClientKey: c.ClientKey, CA: c.CA}})
	ca := Pool(t, c.CA)
	url := cl.TLSURL()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("private CA verifies; MOVED over TLS is followed", func(t *testing.T) {
		client, err := newClient(core.Config{Nodes: []string{url}, NodeTimeout: 3 * time.Second, TLS: &tls.Config{RootCAs: ca}})
		require.NoError(t, err)
		defer client.Close()
		lock, err := client.Acquire(ctx, "tls-cluster", 10*time.Second)
		require.NoError(t, err, "Acquire over rediss:// cluster=yes")
		keys := cl.Keys(t)
		require.Len(t, keys, 1, "the lock's key, on one shard: %v", keys)
		from := cl.PrimaryOfKey(t, keys[0])
		requireKey(t, from, keys[0], "the key is on its slot's primary")

		// Move the held key's slot: the client's slot map is now stale, so
		// its release meets -MOVED, which must name a TLS port (a plain
		// port would fail the TLS handshake and the release).
		to := cl.OtherPrimary(t, from)
		cl.MigrateSlot(t, cl.Slot(t, keys[0]), to)
		requireKey(t, to, keys[0], "the key moved with its slot")
		require.NoError(t, lock.Release(ctx), "Release after the slot moved")
		stats, err := from.Do("INFO", "errorstats")
		require.NoError(t, err)
		require.Contains(t, stats, "errorstat_MOVED:count=", "the release met -MOVED at the old owner (else this tests nothing)")
		cl.AssertNoKeys(t)

		lock, err = client.Acquire(ctx, "tls-cluster", 10*time.Second)
		require.NoError(t, err, "Acquire again, on the new owner")
		requireKey(t, to, keys[0], "the new lock is on the new owner")
		require.NoError(t, lock.Release(ctx))
		cl.AssertNoKeys(t)
	})

	t.Run("without the CA nothing is taken", func(t *testing.T) {
		client, err := newClient(core.Config{Nodes: []string{url}, NodeTimeout: 3 * time.Second})
		require.NoError(t, err)
		defer client.Close()
		_, err = client.Acquire(ctx, "tls-cluster", 10*time.Second)
		var ue *core.UnavailableError
		require.ErrorIs(t, err, core.ErrUnavailable)
		require.ErrorAs(t, err, &ue)
		require.Len(t, ue.Nodes, 1)
		require.Contains(t, ue.Nodes[0].Error(), "certificate signed by unknown authority", "the node's cause")
		cl.AssertNoKeys(t)
	})
}

// requireKey fails unless node n holds key.
func requireKey(t *testing.T, n *redistest.Node, key, msg string) {
	t.Helper()
	out, err := n.Do("EXISTS", key)
	require.NoError(t, err, msg)
	require.Equal(t, "1", out, msg)
}
