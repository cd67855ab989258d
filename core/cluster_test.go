package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/clustertest"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestCluster runs the Redis Cluster suite (real clusters, slots migrated
// and primaries failed over for real) against the native core.
func TestCluster(t *testing.T) {
	clustertest.Run(t, core.New)
}

// TestClusterFromUniversalClients: a go-redis *ClusterClient is a cluster
// node (its Addrs the seeds), beside a *Client's standalone master.
func TestClusterFromUniversalClients(t *testing.T) {
	rc := redistest.StartRedisCluster(t, 3, 1)
	single := redistest.Start(t, 1)
	var addrs []string
	for _, n := range rc.Nodes {
		addrs = append(addrs, n.Addr())
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer cc.Close()
	sc := redis.NewClient(&redis.Options{Addr: single.Nodes[0].Addr()})
	defer sc.Close()
	c, err := core.NewFromUniversalClients(core.Config{NodeTimeout: time.Second}, cc, sc)
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	l, err := c.Acquire(ctx, "uc", 10*time.Second, core.Fence())
	require.NoError(t, err)
	assert.Equal(t, "{uc}", l.Key(), "a client with a cluster node wraps its keys")
	v, err := cc.Get(ctx, "{uc}").Result()
	require.NoError(t, err)
	assert.Equal(t, l.Token(), v, "on the cluster")
	v, err = sc.Get(ctx, "{uc}").Result()
	require.NoError(t, err)
	assert.Equal(t, l.Token(), v, "and on the standalone master")
	require.NoError(t, l.Release(ctx))

	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": single.Nodes[0].Addr()}})
	defer ring.Close()
	ro := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadOnly: true})
	defer ro.Close()
	for _, bad := range []redis.UniversalClient{ring, ro, redis.NewClusterClient(&redis.ClusterOptions{})} {
		_, err := core.NewFromUniversalClients(core.Config{}, sc, bad)
		require.Error(t, err)
		assert.ErrorIs(t, err, core.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "clients[1]")
	}
}
