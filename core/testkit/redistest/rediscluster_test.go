package redistest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRedisClusterStarts(t *testing.T) {
	for _, shape := range []struct{ p, r int }{{3, 1}, {1, 0}} {
		c := StartRedisCluster(t, shape.p, shape.r)
		require.Len(t, c.Nodes, shape.p*(1+shape.r))
		p := c.PrimaryOfKey(t, "{x}a")
		require.NotNil(t, p)
		require.Len(t, c.ReplicasOf(p), shape.r)
		_, err := p.Do("SET", "{x}a", "1")
		require.NoError(t, err)
		require.Equal(t, []string{"{x}a"}, c.Keys(t))
		if shape.p > 1 {
			to := c.OtherPrimary(t, p)
			c.MigrateSlot(t, c.Slot(t, "{x}a"), to)
			v, err := to.Do("GET", "{x}a")
			require.NoError(t, err)
			require.Equal(t, "1", v)
		}
		_, err = c.PrimaryOfKey(t, "{x}a").Do("DEL", "{x}a")
		require.NoError(t, err)
		c.AssertNoKeys(t)
		c.Close()
	}
}

// A redis-cli --cluster create that never returns (it waits for the nodes
// to agree without a bound) fails the start with errClusterNeverJoined
// once clusterCreateTimeout passes, and leaves no node running.
func TestRedisClusterCreateThatNeverJoins(t *testing.T) {
	cli := filepath.Join(t.TempDir(), "redis-cli")
	require.NoError(t, os.WriteFile(cli, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755))
	t.Setenv("REDIS_CLI", cli)
	saved := clusterCreateTimeout
	clusterCreateTimeout = time.Second
	defer func() { clusterCreateTimeout = saved }()
	dir := t.TempDir()
	c, err := StartRedisClusterOpts(dir, RedisClusterOptions{Primaries: 3})
	require.ErrorIs(t, err, errClusterNeverJoined)
	require.Nil(t, c)
	// The nodes ran in dir's subdirectories: no process works there any more.
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && strings.HasPrefix(cwd, dir) {
			t.Errorf("%s: a process still runs in %s", p, cwd)
		}
	}
}
