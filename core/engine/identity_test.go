package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	time "github.com/liblock/liblock/core/internal/xtime"
)

func infoOf(runID string, cluster bool, replicas int) string {
	c := "0"
	if cluster {
		c = "1"
	}
	return "# Server\r\nredis_version:7.0.15\r\nrun_id:" + runID + "\r\n# Replication\r\nrole:master\r\nconnected_slaves:" +
		itoa(replicas) + "\r\n# Cluster\r\ncluster_enabled:" + c + "\r\n"
}

func itoa(n int) string { return string(rune('0' + n)) }

// Two nodes answering one run_id are one server: the one found second is
// refused before anything is written to it, and every acquire of the
// engine fails with the configuration check's error, naming both. Its
// control: distinct run_ids lock.
func TestIdentityOneServerTwoNames(t *testing.T) {
	for _, alias := range []bool{true, false} {
		t.Run(map[bool]string{true: "alias", false: "control"}[alias], func(t *testing.T) {
			b := &fakeServer{role: "master", info: infoOf("bbbb", false, 0)}
			if alias {
				b.info = infoOf("aaaa", false, 0)
			}
			f := newFakeNodes(t, []string{"redis://a:1", "redis://b:1", "redis://c:1"}, nil, map[string]*fakeServer{
				"a:1": {role: "master", info: infoOf("aaaa", false, 0)},
				"b:1": b,
				"c:1": {role: "master", down: true},
			})
			d := f.acquire("r")
			if !alias {
				require.NoError(t, d.Err)
				return
			}
			require.Error(t, d.Err)
			assert.ErrorIs(t, d.Err, ErrInvalidArgument)
			assert.Contains(t, d.Err.Error(), "nodes[1]: the same server as nodes[0] (b:1 and a:1 answer with one run_id)")
			assert.Empty(t, f.sent("b:1", "SET"), "nothing written through the second name")
			_, err := f.e.Acquire(AcquireRequest{Resource: "r2", TTL: time.Second})
			assert.ErrorIs(t, err, ErrInvalidArgument, "every later acquire")
		})
	}
}

// A plain URL at a cluster-enabled server is refused at connect, naming
// cluster=yes; a server that refuses INFO (an ACL) is not checked.
func TestIdentityClusterEnabled(t *testing.T) {
	f := newFake(t, "redis://a:1", nil, map[string]*fakeServer{"a:1": {role: "master", info: infoOf("aaaa", true, 0)}})
	d := f.acquire("r")
	require.Error(t, d.Err)
	assert.ErrorIs(t, d.Err, ErrInvalidArgument)
	assert.Contains(t, d.Err.Error(), "nodes[0]: a:1 is a Redis Cluster node (cluster_enabled:1): add cluster=yes")
	assert.Empty(t, f.sent("a:1", "SET"))

	f = newFake(t, "redis://a:1", nil, map[string]*fakeServer{"a:1": {role: "master", errs: map[string]string{"INFO": "NOPERM no INFO"}}})
	require.NoError(t, f.acquire("r").Err, "INFO refused: nothing to check")
}

// A Sentinel primary with no replica, under the default wait_replicas:
// refused at connect naming the fix; an explicit wait_replicas keeps the
// WAIT's own verdict, and wait_replicas=0 locks.
func TestIdentityNoReplicaByDefault(t *testing.T) {
	servers := func() map[string]*fakeServer {
		return map[string]*fakeServer{
			"s1:1": {master: []string{"p", "1"}},
			"p:1":  {role: "master", acks: 0, info: infoOf("pppp", false, 0)},
		}
	}
	f := newFake(t, "redis://s1:1?master_name=m", nil, servers())
	d := f.acquire("r")
	require.Error(t, d.Err)
	assert.ErrorIs(t, d.Err, ErrUnavailable)
	assert.Contains(t, d.Err.Error(), "the primary has no replica")
	assert.Contains(t, d.Err.Error(), "wait_replicas=0")
	assert.Empty(t, f.sent("p:1", "SET"))

	one := 1
	f = newFake(t, "redis://s1:1?master_name=m", &one, servers())
	d = f.acquire("r")
	require.Error(t, d.Err)
	assert.Contains(t, d.Err.Error(), "WAIT: 0 of the 1 replicas", "explicit: the WAIT decides")

	zero := 0
	f = newFake(t, "redis://s1:1?master_name=m", &zero, servers())
	require.NoError(t, f.acquire("r").Err)

	// The control: with a replica the default WAIT 1 goes on.
	s := servers()
	s["p:1"].info, s["p:1"].acks = infoOf("pppp", false, 1), 1
	f = newFake(t, "redis://s1:1?master_name=m", nil, s)
	require.NoError(t, f.acquire("r").Err)
	assert.Len(t, f.sent("p:1", "WAIT 1"), 1)
}
