package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lock_client_new's wait_replicas and Sentinel node URLs.
func TestParseConfigWaitReplicas(t *testing.T) {
	cfg, err := parseConfig(`{"nodes":["redis://127.0.0.1:1"],"wait_replicas":2}`)
	require.NoError(t, err)
	require.NotNil(t, cfg.WaitReplicas)
	assert.Equal(t, 2, *cfg.WaitReplicas)
	cfg, err = parseConfig(`{"nodes":["redis://s:1?master_name=m&addr=s2:2&password=p"]}`)
	require.NoError(t, err)
	assert.Nil(t, cfg.WaitReplicas, "the default: 1 on the Sentinel node")
	for js, param := range map[string]string{
		`{"nodes":["redis://127.0.0.1:1"],"wait_replicas":-1}`:       "wait_replicas",
		`{"nodes":["redis://127.0.0.1:1"],"wait_replicas":null}`:     "wait_replicas",
		`{"nodes":["redis://s:1?master_name=m&replica_only=true"]}`:  "replica_only",
		`{"nodes":["redis://u:secret@s:1?master_name=m&addr=nope"]}`: "addr",
	} {
		_, err := parseConfig(js)
		require.Error(t, err, js)
		assert.EqualValues(t, statusInvalidArgument, statusOf(err), js)
		assert.Contains(t, err.Error(), param, js)
		assert.False(t, strings.Contains(err.Error(), "secret"), js)
	}
}
