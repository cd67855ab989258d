package hostabi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wait_replicas in the configuration JSON (lock_client_new, lock_engine_new,
// liblock.wasm): a count 0..100, anything else refused naming the key.
func TestConfigWaitReplicas(t *testing.T) {
	c, err := ParseConfig(`{"nodes":["redis://h:1"],"wait_replicas":2}`)
	require.NoError(t, err)
	require.NotNil(t, c.WaitReplicas)
	assert.Equal(t, 2, *c.WaitReplicas)
	ec, err := c.Engine()
	require.NoError(t, err)
	assert.Equal(t, 2, *ec.WaitReplicas)

	c, err = ParseConfig(`{"nodes":["redis://h:1"]}`)
	require.NoError(t, err)
	assert.Nil(t, c.WaitReplicas, "absent: the default")

	for _, bad := range []string{`-1`, `101`, `1.5`, `"1"`, `true`, `1e1`} {
		_, err := ParseConfig(`{"nodes":["redis://h:1"],"wait_replicas":` + bad + `}`)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "wait_replicas", bad)
	}
	// A Sentinel node URL goes through the engine's parser.
	c, err = ParseConfig(`{"nodes":["redis://s:1?master_name=m&replica_only=true"]}`)
	require.NoError(t, err)
	_, err = c.Engine()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nodes[0]: redis: replica_only")
}
