package main

import (
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/require"
)

// TestDoctorCluster: a cluster=yes node gets its topology rows (each seed,
// the cluster state, one row per shard, wait_replicas) and the data checks
// on every shard primary, and one lock cycle through the cluster URL. A
// killed replica turns its seed row and its shard row to warn and the
// default wait_replicas (1) to fail; the same cluster given twice through
// other seeds is not independent.
func TestDoctorCluster(t *testing.T) {
	c := redistest.StartRedisCluster(t, 3, 1)
	url := c.URL()
	code, rows, r := doctor(t, []string{url})
	require.NotEqual(t, exitDoctorFail, code, "healthy cluster: exit; %s", r.stdout)
	host := c.Nodes[0].Addr()
	want(t, rows, host, "cluster state", statusOK, "16384 of 16384")
	want(t, rows, host, "wait_replicas", statusOK, "the default on Cluster nodes")
	want(t, rows, host, "lock", statusOK, "")
	var primaries []*redistest.Node
	for _, slot := range []int{0, 8000, 16383} {
		primaries = append(primaries, c.PrimaryOf(slot))
	}
	for _, p := range primaries {
		want(t, rows, host, "shard "+p.Addr(), statusOK, "1 replica(s) online")
		want(t, rows, "shard "+p.Addr(), "reachable", statusOK, "PING")
		want(t, rows, "shard "+p.Addr(), "version", statusOK, "cluster mode")
	}
	for _, rw := range rows {
		require.NotEqual(t, statusFail, rw.Status, "healthy cluster: %+v", rw)
		require.NotEqual(t, "cluster", rw.Check, "a cluster=yes node is not told to use the cluster URL: %+v", rw)
	}

	// The same cluster twice, the second URL through other seeds.
	other := "redis://" + c.Nodes[len(c.Nodes)-1].Addr() + "?cluster=yes"
	code, rows, _ = doctor(t, []string{url, other})
	require.Equal(t, exitDoctorFail, code, "one cluster twice: exit")
	want(t, rows, host, "independent", statusFail, "the same server")

	// A replica killed: its seed warns, its shard has none online (warn),
	// and WAIT 1 cannot be acknowledged there (fail).
	p := primaries[0]
	replica := c.ReplicasOf(p)[0]
	require.NoError(t, replica.Kill())
	var last []row
	eventually(t, 30*time.Second, "the shard shows no online replica", func() bool {
		_, last, _ = doctor(t, []string{url})
		for _, rw := range last {
			if rw.Check == "shard "+p.Addr() && rw.Status == statusWarn {
				return true
			}
		}
		return false
	})
	want(t, last, host, "seed "+replica.Addr(), statusWarn, "no answer")
	want(t, last, host, "shard "+p.Addr(), statusWarn, "no online replica")
	want(t, last, host, "wait_replicas", statusFail, "0 replica(s) connected")

	// No seed answers: one fail row, no hang.
	dead := strings.Replace(url, host, "127.0.0.1:1", 1)
	dead = dead[:strings.Index(dead, "?")] + "?cluster=yes"
	code, rows, _ = doctor(t, []string{dead})
	require.Equal(t, exitDoctorFail, code, "no seed: exit")
	want(t, rows, "127.0.0.1:1", "cluster", statusFail, "no seed gave the slot map")
}
