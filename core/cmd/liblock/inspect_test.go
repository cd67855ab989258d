package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInspect: a held and a free resource, as a table and as JSON lines.
func TestInspect(t *testing.T) {
	c := redistest.Start(t, 3)
	// A node timeout above a loaded machine's stalls: this holder is the
	// setting, not what is tested.
	client, err := core.New(core.Config{Nodes: c.URLs(), Owner: "worker-7", NodeTimeout: 2e9})
	require.NoError(t, err)
	defer client.Close()
	lock, err := client.Acquire(t.Context(), "job", 30e9)
	require.NoError(t, err)
	defer lock.Release(t.Context())
	eventually(t, 5e9, "the key on every node", func() bool {
		for _, n := range c.Nodes {
			if v, _ := n.Do("GET", "job"); v != lock.Token() {
				return false
			}
		}
		return true
	})
	r := mainOut("inspect", "--nodes", nodesOf(c), "--json", "job", "free")
	require.Zero(t, r.code, "exit: %s", r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 2, "want 2 JSON lines:\n%s", r.stdout)
	var held, free inspectJSON
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &held), lines[0])
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &free), lines[1])
	assert.True(t, held.Held, "held: %s", lines[0])
	assert.Equal(t, "worker-7", held.Owner, "held: %s", lines[0])
	if assert.NotNil(t, held.ValidityMS, "held: %s", lines[0]) {
		assert.GreaterOrEqual(t, *held.ValidityMS, int64(20000), "held: %s", lines[0])
	}
	require.Len(t, held.Nodes, 3, "held: %s", lines[0])
	assert.True(t, held.Nodes[0].Holder, "held: %s", lines[0])
	assert.False(t, free.Held, "free: %s", lines[1])
	require.Len(t, free.Nodes, 3, "free: %s", lines[1])
	assert.False(t, free.Nodes[1].Locked, "free: %s", lines[1])
	assert.Equal(t, "free", free.Resource, "free: %s", lines[1])
	r = mainOut("inspect", "--nodes", nodesOf(c), "job")
	require.Zero(t, r.code, "table: exit\n%s", r.stdout)
	assert.Contains(t, r.stdout, "worker-7", "table")
	assert.Contains(t, r.stdout, "holder", "table")
	// Two of three nodes down: it cannot tell.
	for _, n := range c.Nodes[:2] {
		_ = n.Kill()
	}
	r = mainOut("inspect", "--nodes", nodesOf(c), "job")
	require.Equal(t, exitUnavailable, r.code, "2 nodes down: exit")
}

// TestRelease: a wrong token changes nothing (held: 65, the key intact;
// free: 65, nothing left); the right token releases.
func TestRelease(t *testing.T) {
	c := redistest.Start(t, 3)
	lock := holder(t, c, "job")
	nodes := nodesOf(c)
	keyIs := func(want string) {
		t.Helper()
		for _, n := range c.Nodes {
			eventually(t, 5e9, "the key is "+want, func() bool { v, _ := n.Do("GET", "job"); return v == want })
		}
	}
	keyIs(lock.Token())
	r := mainOut("release", "--nodes", nodes, "--token", "not-the-token-0123456789", "job")
	require.Equal(t, exitNotAcquired, r.code, "wrong token: exit; stderr %q", r.stderr)
	require.Contains(t, r.stderr, "does not hold", "wrong token")
	keyIs(lock.Token())
	r = mainOut("release", "--nodes", nodes, "--token", "not-the-token-0123456789", "free")
	require.Equal(t, exitNotAcquired, r.code, "wrong token on a free lock: exit; stderr %q", r.stderr)
	require.Contains(t, r.stderr, "not held", "wrong token on a free lock")
	keyIs(lock.Token())
	for _, n := range c.Nodes {
		eventually(t, 5e9, "nothing left of free", func() bool { v, _ := n.Do("EXISTS", "free"); return v == "0" })
	}
	r = mainOut("release", "--token", lock.Token(), "--nodes", nodes, "job")
	require.Zero(t, r.code, "right token: exit; stderr %q", r.stderr)
	c.AssertNoKeys(t)
}
