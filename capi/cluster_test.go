package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ABI on a Redis Cluster node (a URL with cluster=yes: the engine
// routes by slot): lock_client_new's JSON takes the URL as any other, the
// lock's key (lock_info) is the engine's, wrapped in a hash tag; bad
// cluster URLs are refused naming the parameter. Migrations and failovers
// are tested in core/cluster_test.go, on the same engine.
func TestAPIClusterNode(t *testing.T) {
	rc := redistest.StartRedisCluster(t, 3, 1)
	h0 := handles.len()
	b, _ := json.Marshal(map[string]any{"nodes": []string{rc.URL()}, "node_timeout_ms": 3000})
	co := mustClient(t, string(b))
	id, r := acquire(co, "c:res", 5*time.Second, acquireOptions{})
	require.Nil(t, r, "acquire")
	_, r = acquire(co, "c:res", 5*time.Second, acquireOptions{})
	requireStatus(t, statusNotAcquired, r, "second acquire")
	lo, _ := lookupLock(id)
	js, r := info(lo)
	require.Nil(t, r, "info")
	assert.Contains(t, js, `"key":"{c:res}"`)
	require.Nil(t, extend(lo, 10*time.Second), "extend")
	require.Nil(t, release(lo), "release")
	assert.Equal(t, int32(statusOK), freeHandle(id), "free lock")
	assert.Equal(t, int32(statusOK), freeHandle(co.id), "free client")
	rc.AssertNoKeys(t)
	assert.Equal(t, h0, handles.len(), "handles left")

	for js, param := range map[string]string{
		`{"nodes":["redis://a:1?cluster=yes&master_name=m"]}`: "master_name",
		`{"nodes":["redis://a:1/2?cluster=yes"]}`:             "db",
		`{"nodes":["redis://a:1?cluster=perhaps"]}`:           "cluster",
	} {
		_, err := parseConfig(js)
		require.Error(t, err, js)
		assert.EqualValues(t, statusInvalidArgument, statusOf(err), js)
		assert.Contains(t, err.Error(), param, js)
	}
}
