package redistest

import (
	"testing"

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
